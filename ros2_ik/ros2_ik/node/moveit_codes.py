"""MoveIt's error codes as ik_node's GetPositionIK answers them, and the refusal they carry.

Plain values (checked against ``moveit_msgs`` by the tests where it is installed), so that
the mapping modules import no ``moveit_msgs``.
"""
from __future__ import annotations


class MoveItCode:
    """The ``moveit_msgs/msg/MoveItErrorCodes`` values used here (checked by the tests)."""

    SUCCESS = 1
    FAILURE = 99999
    TIMED_OUT = -6
    PREEMPTED = -7
    GOAL_IN_COLLISION = -12
    INVALID_GROUP_NAME = -15
    INVALID_GOAL_CONSTRAINTS = -16
    INVALID_ROBOT_STATE = -17
    INVALID_LINK_NAME = -18
    FRAME_TRANSFORM_FAILURE = -21
    NO_IK_SOLUTION = -31


class MoveItRequestError(Exception):
    """A GetPositionIK request we refuse before solving, with the MoveIt code."""

    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code = code
