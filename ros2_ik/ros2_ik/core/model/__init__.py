"""The robot model: URDF/SRDF loading, the example robots, SRDF groups, the planning group.

:class:`~ros2_ik.core.model.robot.Robot` (a pinocchio model and its frames),
:mod:`~ros2_ik.core.model.robots` (example-robot-data arms by name),
:mod:`~ros2_ik.core.model.srdf_groups` (MoveIt groups from an SRDF) and
:class:`~ros2_ik.core.model.group.Group` (the joints IK moves, between a base and tips).
"""
