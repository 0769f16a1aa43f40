"""A ComputeIK with a long budget does not hold the node (node/long_solves.py).

Over real DDS: while an unreachable target uses its 1.5 s, a second client's request is
answered (our own FK check), and the joint_states the node gets meanwhile are used.
"""
import math
import time

import numpy as np
import pinocchio as pin
import pytest

pytest.importorskip("rclpy")

from ros2_ik.node.conversions import se3_to_pose  # noqa: E402
from ros2_ik.node.harness import wait_for  # noqa: E402
from ros2_ik.node.long_solves import INLINE_SOLVE_MAX_S, budget_s  # noqa: E402
from ros2_ik_interfaces.msg import IKErrorCode  # noqa: E402
from ros2_ik_interfaces.srv import ComputeIK  # noqa: E402
from panda_node import ARM, READY, T_frame, description, start, stop  # noqa: E402


def _request(T, timeout):
    req = ComputeIK.Request()
    req.target.header.frame_id = "panda_link0"
    req.target.pose = se3_to_pose(T)
    req.timeout = timeout
    return req


@pytest.mark.parametrize("asked,expected", [
    (0.0, 0.05), (-1.0, 0.05), (math.nan, 0.05), (math.inf, 0.05), (0.01, 0.01),
    (3.0, 3.0), (30.0, 10.0)])
def test_budget_is_the_request_timeout_or_the_default_capped(asked, expected):
    assert budget_s(asked, 0.05, 10.0) == expected


def test_a_short_request_is_answered_while_a_long_one_solves(ros_context):
    node, client = start("long_ik")
    try:
        model = description()[2]
        long_call = client.ik.call_async(_request(
            pin.SE3(np.eye(3), np.array([0.0, 0.0, -0.5])), 1.5))  # below the base: all 1.5 s
        client.spin(0.1)
        q_goal = np.array(READY) + 0.2
        T_goal = T_frame(model, ARM, q_goal, "panda_hand", "panda_link0")
        short = _request(T_goal, INLINE_SOLVE_MAX_S)
        sent = time.monotonic()
        reply = client.call(short, timeout_s=5.0)
        waited = time.monotonic() - sent
        assert not long_call.done()  # still solving, and we were answered
        assert waited < 0.5, waited
        assert reply.error_code.val == IKErrorCode.SUCCESS, reply.message
        reached = T_frame(model, reply.solution.name, reply.solution.position, "panda_hand",
                          "panda_link0")
        assert np.linalg.norm(reached.translation - T_goal.translation) < 1e-3
        wait_for(long_call.done, 10.0, "the long request", client.spin)
        assert long_call.result().error_code.val == IKErrorCode.NO_SOLUTION
        assert long_call.result().solve_time >= 1.4
    finally:
        stop(node, client)
