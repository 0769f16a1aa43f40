"""ComputeIK over DDS on a palletizer whose parallelogram is a URDF <mimic> (test_mimic.py).

The node moves the mimic joint with its leader: answers name the leaders only (the robot's
controllers and robot_state_publisher set the mimic joint), and each one, set on
pinocchio's own mimic model, reaches the target.
"""
import numpy as np
import pinocchio as pin
import pytest

pytest.importorskip("rclpy")

from ros2_ik.node.conversions import se3_to_pose  # noqa: E402
from ros2_ik_interfaces.msg import IKErrorCode  # noqa: E402
from ros2_ik_interfaces.srv import ComputeIK  # noqa: E402
from panda_node import serve, stop  # noqa: E402
from test_mimic import PALLETIZER, _reference_tip  # noqa: E402

LEADERS = ["j1", "j2", "j4", "j5"]


@pytest.fixture(scope="module")
def served(ros_context):
    node, client = serve("mimic", PALLETIZER, "", joints=(LEADERS, [0.0] * 4))
    yield client
    stop(node, client)


def test_a_palletizer_is_solved_with_its_parallelogram(served):
    rng = np.random.default_rng(8)
    for k in range(6):
        values = dict(zip(LEADERS, rng.uniform(-1.5, 1.5, 4)))
        T = _reference_tip(PALLETIZER, values, "tip")
        req = ComputeIK.Request()
        req.base_link, req.tip_link = "base", "tip"
        req.target.header.frame_id = "base"
        req.target.pose = se3_to_pose(T)
        req.weights = [1.0, 1.0, 1.0, 0.0, 1.0, 1.0]  # the level forearm fixes one angle
        req.timeout, req.random_seed = 0.2, k
        res = served.call(req)
        assert res.error_code.val == IKErrorCode.SUCCESS, res.message
        assert list(res.solution.name) == LEADERS
        reached = _reference_tip(PALLETIZER, dict(zip(res.solution.name,
                                                      res.solution.position)), "tip")
        error = T.actInv(reached)
        assert np.linalg.norm(error.translation) <= 1.01e-4
        assert abs(pin.log3(error.rotation)[1:]).max() <= 1.01e-3
