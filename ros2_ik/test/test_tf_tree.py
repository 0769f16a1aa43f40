"""TF's frames (node/tf_tree.py) and requests that name them (node/request_frames.py).

Lookups are checked against the products of the transforms composed here; answers by
pinocchio's FK of their solution.  The subscription itself needs tf2_msgs (skipped
without it, with the reason).
"""
import math

import numpy as np
import pinocchio as pin
import pytest

pytest.importorskip("rclpy")

from ros2_ik.core.model.robots import urdf_text  # noqa: E402
from ros2_ik.node.compute_ik import compute_ik  # noqa: E402
from ros2_ik.node.conversions import se3_to_pose  # noqa: E402
from ros2_ik.node.robot_source import JointStateCache  # noqa: E402
from ros2_ik.node.tf_tree import TfTree  # noqa: E402
from ros2_ik_interfaces.msg import IKErrorCode  # noqa: E402
from ros2_ik_interfaces.srv import ComputeIK  # noqa: E402
from node_inputs import config, snapshot, transform_stamped  # noqa: E402

SRDF = """<robot name="panda"><virtual_joint name="virtual_joint" type="fixed"
parent_frame="world" child_link="panda_link0"/></robot>"""


def _se3(rpy, xyz) -> pin.SE3:
    return pin.SE3(pin.rpy.rpyToMatrix(*rpy), np.array(xyz, dtype=float))


T_WORLD_TABLE = _se3((0.0, 0.0, 0.7), (0.8, 0.1, 0.0))
T_TABLE_MARKER = _se3((0.2, -0.3, 1.1), (0.1, -0.2, 0.75))
T_LINK0_CAMERA = _se3((-2.0, 0.1, 0.4), (0.3, 0.5, 1.2))


def _edge(parent: str, child: str, T: pin.SE3):
    """A TF edge as tf2 publishes it: header.frame_id the parent, T_parent_child."""
    return transform_stamped(parent, child, T)


def _tree(*edges) -> TfTree:
    tree = TfTree()
    tree.add(edges)
    return tree


def _same(T_a: pin.SE3, T_b: pin.SE3) -> bool:
    return np.allclose(T_a.homogeneous, T_b.homogeneous, atol=1e-9)


def test_lookup_composes_through_the_common_ancestor():
    tree = _tree(_edge("world", "table", T_WORLD_TABLE), _edge("table", "marker", T_TABLE_MARKER),
                 _edge("panda_link0", "camera", T_LINK0_CAMERA),
                 _edge("world", "panda_link0", pin.SE3.Identity()))
    assert _same(tree.lookup("world", "marker"), T_WORLD_TABLE * T_TABLE_MARKER)
    assert _same(tree.lookup("marker", "world"), (T_WORLD_TABLE * T_TABLE_MARKER).inverse())
    assert _same(tree.lookup("table", "camera"), T_WORLD_TABLE.actInv(T_LINK0_CAMERA))
    assert _same(tree.lookup("camera", "camera"), pin.SE3.Identity())
    # A newer transform of an edge replaces the older.
    moved = _se3((0.0, 0.0, 0.0), (1.0, 2.0, 3.0))
    tree.add([_edge("world", "table", moved)])
    assert _same(tree.lookup("world", "marker"), moved * T_TABLE_MARKER)


def test_unconnected_bad_and_looping_edges_give_none():
    bad = _edge("world", "nan_frame", T_WORLD_TABLE)
    bad.transform.translation.x = math.nan
    tilted = _edge("world", "tilted", T_WORLD_TABLE)
    tilted.transform.rotation.w = 5.0
    tree = _tree(bad, tilted, _edge("a", "b", T_WORLD_TABLE), _edge("b", "a", T_WORLD_TABLE),
                 _edge("elsewhere", "island", T_WORLD_TABLE))
    for frame in ("nan_frame", "tilted", "a", "island", "nowhere"):
        assert tree.lookup("world", frame) is None


def _request(frame: str, T: pin.SE3) -> ComputeIK.Request:
    req = ComputeIK.Request(base_link="panda_link0", tip_link="panda_hand", timeout=1.0)
    req.target.header.frame_id = frame
    req.target.pose = se3_to_pose(T)
    return req


def _hand(model, names, positions) -> pin.SE3:
    q = pin.neutral(model)
    for name, value in zip(names, positions):
        q[model.joints[model.getJointId(name)].idx_q] = value
    data = model.createData()
    pin.framesForwardKinematics(model, data, q)
    return data.oMf[model.getFrameId("panda_hand")]


def _reachable(model) -> pin.SE3:
    q = pin.neutral(model)
    q[:7] = (0.3, -0.4, 0.2, -2.0, 0.1, 1.8, 0.5)
    data = model.createData()
    pin.framesForwardKinematics(model, data, q)
    return data.oMf[model.getFrameId("panda_hand")]


@pytest.mark.parametrize("srdf", [SRDF, ""])
def test_a_target_in_a_tf_frame_is_solved_where_tf_puts_it(srdf):
    """Through MoveIt's planning frame ('world', with the SRDF) or the model's root link
    (without: the camera hangs from panda_link0 in TF)."""
    urdf = urdf_text("panda")
    model, snap = pin.buildModelFromXML(urdf), snapshot(urdf, srdf)
    snap.tf.add([_edge("world", "table", T_WORLD_TABLE), _edge("table", "marker", T_TABLE_MARKER),
                 _edge("panda_link0", "camera", T_LINK0_CAMERA)])
    T_world_target = _reachable(model)
    for frame, T_world_frame in (("marker", T_WORLD_TABLE * T_TABLE_MARKER),
                                 ("camera", T_LINK0_CAMERA)):
        if not srdf and frame == "marker":
            continue  # 'world' is no frame of this model: the table is not connected to it
        r = compute_ik(snap, "", config(), JointStateCache(),
                       _request(frame, T_world_frame.actInv(T_world_target))).response
        assert r.error_code.val == IKErrorCode.SUCCESS, r.message
        T = _hand(model, r.solution.name, r.solution.position)
        assert np.linalg.norm(T.translation - T_world_target.translation) < 1e-4
        assert np.linalg.norm(pin.log3(T.rotation.T @ T_world_target.rotation)) < 1e-3
    r = compute_ik(snap, "", config(), JointStateCache(),
                   _request("nowhere", T_world_target)).response
    assert r.error_code.val == IKErrorCode.FRAME_NOT_FOUND and "'nowhere'" in r.message


@pytest.mark.parametrize("tf_frames, topic", [("static", "/tf_static"), ("all", "/tf")])
def test_ik_node_follows_tf(ros_context, tf_frames, topic):
    """Over DDS: an edge on /tf_static (latched: the default) or on /tf (``tf_frames:
    all``), then ComputeIK in its child frame."""
    tf2 = pytest.importorskip("tf2_msgs.msg", reason="tf2_msgs is not installed")
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
    from ros2_ik.node.harness import Client, NodeProcess, with_frame_known
    urdf = urdf_text("panda")
    model = pin.buildModelFromXML(urdf)
    node = NodeProcess(params={"tf_frames": tf_frames})
    client = Client("tf_client")
    qos = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.TRANSIENT_LOCAL if topic == "/tf_static"
                     else DurabilityPolicy.VOLATILE)
    pub = client.node.create_publisher(tf2.TFMessage, topic, qos)
    edge = tf2.TFMessage(transforms=[_edge("panda_link0", "camera", T_LINK0_CAMERA)])
    pub.publish(edge)
    T_world_target = _reachable(model)
    request = _request("camera", T_LINK0_CAMERA.actInv(T_world_target))
    try:
        client.publish_description(urdf, "")
        client.wait_for_service()
        first = client.wait_for_model(_request("panda_link0", T_world_target))
        assert first.error_code.val == IKErrorCode.SUCCESS, first.message
        r = with_frame_known(client, request, lambda: pub.publish(edge))
        assert r.error_code.val == IKErrorCode.SUCCESS, r.message
        T = _hand(model, r.solution.name, r.solution.position)
        assert np.linalg.norm(T.translation - T_world_target.translation) < 1e-4
    finally:
        client.close()
        assert node.stop() == 0, node.output()
