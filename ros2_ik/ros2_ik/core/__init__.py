"""ROS-free IK core on pinocchio: robots, groups, targets, solve() and its result.

Typical use::

    from ros2_ik.core import Robot, PoseTarget, solve
    robot = Robot.from_urdf(urdf_xml)
    group = robot.group(base="panda_link0", tip="panda_hand")
    result = solve(group, PoseTarget("panda_hand", T_ref_target), group.mid_configuration())
"""
from ros2_ik.core.errors import (IKError, InvalidArgument, InvalidFrame, InvalidGeometry,
                                 InvalidGoal, InvalidGroup, InvalidJoint, InvalidSeed,
                                 RobotModelError, UnknownSolver)
from ros2_ik.core.group import Group
from ros2_ik.core.pose import PoseTarget
from ros2_ik.core.problem import Problem
from ros2_ik.core.result import IKResult, IKStatus, Progress, Solution
from ros2_ik.core.robot import Robot
from ros2_ik.core.solve import prepare, solve
from ros2_ik.core.solvers.registry import available as available_solvers
from ros2_ik.core.verify import verify_pose

__all__ = [
    "Group", "IKError", "IKResult", "IKStatus", "InvalidArgument", "InvalidFrame",
    "InvalidGeometry", "InvalidGoal", "InvalidGroup", "InvalidJoint", "InvalidSeed",
    "PoseTarget", "Problem", "Progress", "Robot", "RobotModelError", "Solution",
    "UnknownSolver", "available_solvers", "prepare", "solve", "verify_pose",
]
