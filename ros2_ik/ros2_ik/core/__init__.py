"""ROS-free IK core on pinocchio: robots, groups, targets, solve() and its result.

Typical use::

    from ros2_ik.core import Robot, PoseTarget, solve
    robot = Robot.from_urdf(urdf_xml)
    group = robot.group(base="panda_link0", tip="panda_hand")
    result = solve(group, PoseTarget("panda_hand", T_ref_target), group.mid_configuration())

The API is this package's root (solve, problem, pose, terms, verify, result, errors);
its parts are packages named for what they hold, imported one way:
``runtime`` <- ``model`` <- ``kinematics``, ``collision`` <- the terms (``constraints``,
``costs``) <- ``solvers``, ``servo`` <- ``path``, ``maps`` (``test_import_graph.py``).
"""
from ros2_ik.core.errors import (IKError, InvalidArgument, InvalidFrame, InvalidGeometry,
                                 InvalidGoal, InvalidGroup, InvalidJoint, InvalidSeed,
                                 RobotModelError, UnknownSolver)
from ros2_ik.core.model import robots
from ros2_ik.core.model.group import Group
from ros2_ik.core.model.robot import Robot
from ros2_ik.core.pose import PoseTarget
from ros2_ik.core.problem import Problem
from ros2_ik.core.result import IKResult, IKStatus, Progress, Solution
from ros2_ik.core.runtime.memory import settle_memory
from ros2_ik.core.solve import prepare, solve
from ros2_ik.core.solvers.registry import available as available_solvers
from ros2_ik.core.verify import verify_pose

__all__ = [
    "Group", "IKError", "IKResult", "IKStatus", "InvalidArgument", "InvalidFrame",
    "InvalidGeometry", "InvalidGoal", "InvalidGroup", "InvalidJoint", "InvalidSeed",
    "PoseTarget", "Problem", "Progress", "Robot", "RobotModelError", "Solution",
    "UnknownSolver", "available_solvers", "prepare", "robots", "settle_memory", "solve",
    "verify_pose",
]
