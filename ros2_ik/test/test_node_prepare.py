"""The node prepares every group it serves at start-up, not in each group's first request.

The default group and every one of ``group_names``: each one's seed library, reach bound
and closed-form detection (``core.solve.prepare``) would otherwise be done by that group's
first request (10 ms to ~1 s, beyond its budget).  Checked by the node's own account of it
(its log, which names each group and frame) and, independently, by the solve's prepared
set: a request on the second group then answers, its answer checked by our own FK.
"""
import numpy as np
import pytest

pytest.importorskip("rclpy")

from ros2_ik.node.compute_ik import served_groups  # noqa: E402
from ros2_ik.node.conversions import se3_to_pose  # noqa: E402
from ros2_ik.node.parameters import GroupConfig, NodeConfig  # noqa: E402
from ros2_ik_interfaces.msg import IKErrorCode  # noqa: E402
from ros2_ik_interfaces.srv import ComputeIK  # noqa: E402
from panda_node import ARM, READY, T_frame, description, pose_errors, start, stop  # noqa: E402

FLANGE = ("flange", "panda_link0", "panda_link8")


class _Snapshot:
    def __init__(self, names):
        self.srdf_groups = dict.fromkeys(names)


def _config(default: str, *names: str) -> NodeConfig:
    groups = {n: GroupConfig(n, "base", "tip") for n in names}
    return NodeConfig({"default_group": default}, groups)


def test_the_default_group_comes_first_then_the_configured_ones():
    assert served_groups(_config("", "arm", "flange"), None) == ("arm", "flange")
    assert served_groups(_config("flange", "arm", "flange"), None) == ("flange", "arm")
    assert served_groups(_config("hand", "arm"), None) == ("hand", "arm")
    # no group configured: a request naming none takes the SRDF's first group
    assert served_groups(_config(""), _Snapshot(["panda_arm", "hand"])) == ("panda_arm",)
    assert served_groups(_config(""), _Snapshot([])) == ()


@pytest.fixture(scope="module")
def two_groups(ros_context):
    name, base, tip = FLANGE
    node, client = start("prepare", f"group_names:=[arm,{name}]",
                         f"groups.{name}.base_link:={base}", f"groups.{name}.tip_link:={tip}")
    yield node, client
    stop(node, client)


def test_every_configured_group_is_prepared_at_start(two_groups):
    node, _ = two_groups
    log = node.output()
    # The warm-up of the model in use: the lines before its "robot model v<N>" line (an
    # SRDF after the URDF makes a second model, warmed up again).
    last = log[:log.rindex("robot model v")].rsplit("robot model v", 1)[-1]
    assert "group 'arm' prepared for frame 'panda_hand'" in last, log[-2000:]
    assert "group 'flange' prepared for frame 'panda_link8'" in last, log[-2000:]
    assert "not usable" not in log


def test_the_second_group_answers(two_groups):
    _, client = two_groups
    model = description()[2]
    q = np.array(READY) + 0.2
    T = T_frame(model, ARM, q, FLANGE[2])
    req = ComputeIK.Request()
    req.group_name = FLANGE[0]
    req.target.header.frame_id = FLANGE[1]
    req.target.pose = se3_to_pose(T)
    req.timeout = 0.05
    res = client.call(req)
    assert res.error_code.val == IKErrorCode.SUCCESS, res.message
    reached = T_frame(model, res.solution.name, res.solution.position, FLANGE[2])
    pos, ori = pose_errors(reached, T)
    assert pos <= 1.01e-4 and ori <= 1.01e-3
