"""ComputeIK over real DDS: ik_node runs as a process, we talk to it with rclpy.

Every SUCCESS is checked with our own pinocchio forward kinematics, not the reply's
error fields.
"""
import math
import os

import numpy as np
import pinocchio as pin
import pytest

pytest.importorskip("rclpy")

from ament_index_python.packages import get_package_share_directory  # noqa: E402
from ros2_ik.node.conversions import se3_to_pose  # noqa: E402
from ros2_ik.node.harness import Client, NodeProcess, wait_for  # noqa: E402
from ros2_ik_interfaces.msg import IKErrorCode  # noqa: E402
from ros2_ik_interfaces.srv import ComputeIK  # noqa: E402
from panda_node import (  # noqa: E402
    ARM, READY, T_frame, description, pose_errors, start, stop)


@pytest.fixture(scope="module")
def panda():
    return description()


@pytest.fixture(scope="module")
def served(ros_context, panda):
    """A Panda ik_node with its description and a joint state published."""
    node, client = start("ik")
    yield client, node
    stop(node, client)


def pose_request(T_base_target, frame="panda_link0", **fields):
    req = ComputeIK.Request()
    req.target.header.frame_id = frame
    req.target.pose = se3_to_pose(T_base_target)
    req.timeout = 0.2
    req.random_seed = 3
    for name, value in fields.items():
        setattr(req, name, value)
    return req


def reachable_targets(model, n, seed=1):
    rng = np.random.default_rng(seed)
    lo, hi = model.lowerPositionLimit, model.upperPositionLimit
    out = []
    for _ in range(n):
        q = lo + rng.random(model.nq) * (hi - lo)
        data = model.createData()
        pin.framesForwardKinematics(model, data, q)
        out.append(data.oMf[model.getFrameId("panda_hand")])
    return out


def test_reachable_poses_are_solved_and_match_our_fk(served, panda):
    client, _ = served
    model = panda[2]
    for T_target in reachable_targets(model, 8):
        res = client.call(pose_request(T_target))
        assert res.error_code.val == IKErrorCode.SUCCESS, res.message
        assert list(res.solution.name) == ARM
        T = T_frame(model, res.solution.name, res.solution.position, "panda_hand")
        position_error, orientation_error = pose_errors(T, T_target)
        assert position_error <= 1e-4 and orientation_error <= 1e-3
        for name, value in zip(res.solution.name, res.solution.position):
            jid = model.getJointId(name)
            iq = model.joints[jid].idx_q
            assert model.lowerPositionLimit[iq] <= value <= model.upperPositionLimit[iq]


def test_target_in_another_model_frame(served, panda):
    """header.frame_id is any model frame: the target is expressed in it."""
    client, _ = served
    model = panda[2]
    T_world_target = reachable_targets(model, 1, seed=5)[0]
    T_world_link0 = T_frame(model, [], [], "panda_link0")  # fixed to the world
    res = client.call(pose_request(T_world_link0.actInv(T_world_target)))
    assert res.error_code.val == IKErrorCode.SUCCESS, res.message
    T = T_frame(model, res.solution.name, res.solution.position, "panda_hand")
    assert pose_errors(T, T_world_target)[0] <= 1e-4


def test_unreachable_pose_returns_no_solution_with_best_effort(served):
    client, _ = served
    res = client.call(pose_request(pin.SE3(np.eye(3), np.array([2.0, 0.0, 0.5]))))
    assert res.error_code.val == IKErrorCode.NO_SOLUTION, res.message
    assert len(res.solution.position) == 7
    assert res.position_error > 0.5


@pytest.mark.parametrize("frame_field", ["header", "tip"])
def test_unknown_frame(served, frame_field):
    client, _ = served
    req = pose_request(pin.SE3.Identity())
    if frame_field == "header":
        req.target.header.frame_id = "no_such_frame"
    else:
        req.tip_link = "no_such_frame"
    res = client.call(req)
    assert res.error_code.val == IKErrorCode.FRAME_NOT_FOUND
    assert "no_such_frame" in res.message and "panda_link0" in res.message


def test_nan_and_bad_quaternion_are_invalid_goals(served):
    client, _ = served
    req = pose_request(pin.SE3.Identity())
    req.target.pose.position.y = math.nan
    res = client.call(req)
    assert res.error_code.val == IKErrorCode.INVALID_GOAL
    assert "position" in res.message
    req = pose_request(pin.SE3.Identity())
    req.target.pose.orientation.w = 0.0
    res = client.call(req)
    assert res.error_code.val == IKErrorCode.INVALID_GOAL
    assert "quaternion" in res.message


def test_seed_with_unknown_joint_is_invalid_seed(served):
    client, _ = served
    req = pose_request(pin.SE3.Identity())
    req.seed.name = ARM + ["elbow_of_someone_else"]
    req.seed.position = READY + [0.0]
    res = client.call(req)
    assert res.error_code.val == IKErrorCode.INVALID_SEED
    assert "elbow_of_someone_else" in res.message


def test_unknown_group_and_solver(served):
    client, _ = served
    res = client.call(pose_request(pin.SE3.Identity(), group_name="legs"))
    assert res.error_code.val == IKErrorCode.INVALID_GROUP and "arm" in res.message
    res = client.call(pose_request(pin.SE3.Identity(), solver="magic"))
    assert res.error_code.val == IKErrorCode.INVALID_SOLVER and "lm" in res.message


def test_node_keeps_serving_after_bad_requests(served, panda):
    client, node = served
    assert node.alive()
    T_target = reachable_targets(panda[2], 1, seed=9)[0]
    res = client.call(pose_request(T_target))
    assert res.error_code.val == IKErrorCode.SUCCESS, res.message


def test_same_random_seed_same_answer(served, panda):
    client, _ = served
    T_target = reachable_targets(panda[2], 1, seed=11)[0]
    a = client.call(pose_request(T_target, random_seed=42))
    b = client.call(pose_request(T_target, random_seed=42))
    assert a.error_code.val == IKErrorCode.SUCCESS
    assert a.random_seed == 42
    np.testing.assert_array_equal(a.solution.position, b.solution.position)


def test_no_robot_model_then_bad_then_good_description(ros_context, panda):
    """Before a model: NO_ROBOT_MODEL; a malformed URDF keeps it so; a good one fixes it."""
    config = os.path.join(get_package_share_directory("ros2_ik"), "config", "panda.yaml")
    node = NodeProcess(extra_args=["--params-file", config, "-r", "__ns:=/bare"])
    client = Client("no_model_test", namespace="/bare")
    try:
        client.wait_for_service()
        res = client.call(pose_request(pin.SE3.Identity()))
        assert res.error_code.val == IKErrorCode.NO_ROBOT_MODEL
        client.publish_description("<robot name='broken'><link name=")
        wait_for(lambda: "robot_description rejected" in node.output(), 20,
                 "the node to reject the malformed URDF", client.spin)
        assert node.alive()
        res = client.call(pose_request(pin.SE3.Identity()))
        assert res.error_code.val == IKErrorCode.NO_ROBOT_MODEL
        client.publish_description(panda[0])
        T_target = reachable_targets(panda[2], 1, seed=13)[0]
        res = client.wait_for_model(pose_request(T_target))
        assert res.error_code.val == IKErrorCode.SUCCESS, res.message
        assert node.alive()
    finally:
        client.close()
        assert node.stop() == 0, node.output()
