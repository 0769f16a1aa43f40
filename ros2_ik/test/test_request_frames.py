"""Targets in MoveIt's planning frame and in frames outside the model (node/request_frames.py).

A MoveIt user's pose in ``world`` (the SRDF's fixed virtual joint's parent frame, in no
URDF) or in a camera's frame (a TF frame move_group lists in the monitored planning
scene's ``fixed_frame_transforms``) is solved as move_group's ``/compute_ik`` solves it.
Each answer is checked by pinocchio's FK of its solution against the target composed here.
"""
import math

import numpy as np
import pinocchio as pin
import pytest

pytest.importorskip("rclpy")

from ros2_ik.core.model.robots import urdf_text  # noqa: E402
from ros2_ik.node.compute_ik import compute_ik  # noqa: E402
from ros2_ik.node.compute_ik_path import compute_ik_path  # noqa: E402
from ros2_ik.node.constrained_ik import solve_goal  # noqa: E402
from ros2_ik.node.conversions import se3_to_pose  # noqa: E402
from ros2_ik.node.request_frames import OutsideFrame, OutsideFrames, moveit_frames, \
    resolve  # noqa: E402
from ros2_ik.node.robot_source import JointStateCache  # noqa: E402
from ros2_ik_interfaces.action import ConstrainedIK  # noqa: E402
from ros2_ik_interfaces.msg import IKErrorCode, PoseGoal  # noqa: E402
from ros2_ik_interfaces.srv import ComputeIK, ComputeIKPath  # noqa: E402
from node_inputs import config, snapshot, transform_stamped  # noqa: E402

#: MoveIt's SRDF of a fixed arm: the model hangs from ``world`` at the origin.
SRDF = """<robot name="panda"><virtual_joint name="virtual_joint" type="fixed"
parent_frame="world" child_link="panda_link0"/></robot>"""
#: The camera's pose in MoveIt's model frame (``world``) [m].
T_WORLD_CAMERA = pin.SE3(pin.rpy.rpyToMatrix(0.3, -2.5, 1.2), np.array([0.9, -0.4, 1.1]))


@pytest.fixture(scope="module")
def panda():
    """The node's snapshot of the panda with MoveIt's SRDF, and the full pinocchio model."""
    urdf = urdf_text("panda")
    return snapshot(urdf, SRDF), pin.buildModelFromXML(urdf)


def _reachable_q(model) -> np.ndarray:
    """A configuration inside the limits."""
    q = pin.neutral(model)
    q[:7] = (0.3, -0.4, 0.2, -2.0, 0.1, 1.8, 0.5)
    return q


def _reachable(model) -> pin.SE3:
    """``T_world_hand`` of :func:`_reachable_q`."""
    return _fk(model, _reachable_q(model))


def _fk(model, q, frame: str = "panda_hand") -> pin.SE3:
    data = model.createData()
    pin.framesForwardKinematics(model, data, q)
    return data.oMf[model.getFrameId(frame)]


def _q(model, names, positions) -> np.ndarray:
    q = pin.neutral(model)
    for name, value in zip(names, positions):
        q[model.joints[model.getJointId(name)].idx_q] = value
    return q


def _solved_hand(model, names, positions) -> pin.SE3:
    return _fk(model, _q(model, names, positions))


def _close(T_a: pin.SE3, T_b: pin.SE3) -> bool:
    """Within 1e-4 m and 1e-3 rad (the default tolerances are tighter)."""
    return (np.linalg.norm(T_a.translation - T_b.translation) < 1e-4
            and np.linalg.norm(pin.log3(T_a.rotation.T @ T_b.rotation)) < 1e-3)


def _request(frame: str, T_frame_target: pin.SE3) -> ComputeIK.Request:
    req = ComputeIK.Request(base_link="panda_link0", tip_link="panda_hand", timeout=1.0)
    req.target.header.frame_id = frame
    req.target.pose = se3_to_pose(T_frame_target)
    return req


def _camera(child: str = "world", T: pin.SE3 = T_WORLD_CAMERA, name: str = "camera"):
    """A ``fixed_frame_transforms`` entry as move_group writes it (MoveIt's convention:
    header.frame_id the outside frame, child_frame_id the model frame, T_model_outside)."""
    return transform_stamped(name, child, T)


def _ask(snap, req) -> ComputeIK.Response:
    return compute_ik(snap, "", config(), JointStateCache(), req).response


def test_moveit_planning_frame_world_stands_for_the_model_world(panda):
    snap, model = panda
    T_world_target = _reachable(model)
    r = _ask(snap, _request("world", T_world_target))
    assert r.error_code.val == IKErrorCode.SUCCESS, r.message
    assert _close(_solved_hand(model, r.solution.name, r.solution.position), T_world_target)
    # Without the SRDF "world" is no frame of this model: refused, the message names it.
    bare = snapshot(urdf_text("panda"), "")
    r = _ask(bare, _request("world", T_world_target))
    assert r.error_code.val == IKErrorCode.FRAME_NOT_FOUND and "'world'" in r.message


@pytest.mark.parametrize("child", ["world", "panda_link0"])
def test_a_target_in_an_outside_frame_is_solved_where_that_frame_is(panda, child):
    """The camera given against MoveIt's model frame, or against the model's root link."""
    snap, model = panda
    frames, problems = moveit_frames([_camera(child)])
    assert not problems
    snap.outside_frames.update(frames, replace=True)
    try:
        T_world_target = _reachable(model)
        T_camera_target = T_WORLD_CAMERA.actInv(T_world_target)
        r = _ask(snap, _request("camera", T_camera_target))
        assert r.error_code.val == IKErrorCode.SUCCESS, r.message
        assert _close(_solved_hand(model, r.solution.name, r.solution.position),
                      T_world_target)
    finally:
        snap.outside_frames.update({}, replace=True)
    r = _ask(snap, _request("camera", T_camera_target))
    assert r.error_code.val == IKErrorCode.FRAME_NOT_FOUND and "'camera'" in r.message


def test_the_action_and_the_path_take_outside_frames_too(panda):
    snap, model = panda
    snap.outside_frames.update(moveit_frames([_camera()])[0], replace=True)
    try:
        T_world_target = _reachable(model)
        target = _request("camera", T_WORLD_CAMERA.actInv(T_world_target)).target
        goal = ConstrainedIK.Goal(base_link="panda_link0", tip_link="panda_hand", timeout=1.0)
        goal.pose_goals = [PoseGoal(tip_link="panda_hand", target=target)]
        result = solve_goal(snap, "", config(), JointStateCache(), goal, lambda: False)
        assert result.error_code.val == IKErrorCode.SUCCESS, result.message
        joints = result.solutions[0].joint_state
        assert _close(_solved_hand(model, joints.name, joints.position), T_world_target)
        req = ComputeIKPath.Request(base_link="panda_link0", tip_link="panda_hand",
                                    max_joint_step=[0.5], timeout=1.0)
        req.header.frame_id = "camera"
        req.waypoints = [target.pose]
        path = compute_ik_path(snap, "", config(), JointStateCache(), req).response
        assert path.error_code.val == IKErrorCode.SUCCESS, path.message
        last = path.trajectory.points[-1]
        assert _close(_solved_hand(model, path.trajectory.joint_names, last.positions),
                      T_world_target)
    finally:
        snap.outside_frames.update({}, replace=True)


def test_a_frame_hung_from_a_moving_link_is_not_taken(panda):
    """Only frames that stand still in the world place a target: not one given against a link."""
    snap, _ = panda
    frames = {"camera": OutsideFrame("panda_link3", T_WORLD_CAMERA)}
    table = OutsideFrames()
    table.update(frames, replace=True)
    snap_frames, snap.outside_frames = snap.outside_frames, table
    try:
        assert resolve(snap, "camera", pin.SE3.Identity(), False)[0] == "camera"
    finally:
        snap.outside_frames = snap_frames


def test_moveit_frames_names_each_bad_entry():
    nan = _camera(name="nan")
    nan.transform.translation.y = math.nan
    tilted = _camera(name="tilted")
    tilted.transform.rotation.w = 3.0
    frames, problems = moveit_frames([_camera(), nan, tilted, _camera(child="", name="lost")])
    assert list(frames) == ["camera"]
    assert len(problems) == 3
    assert "fixed_frame_transforms[1] ('nan')" in problems[0] and "NaN" in problems[0]
    assert "fixed_frame_transforms[2] ('tilted')" in problems[1] and "norm" in problems[1]
    assert "fixed_frame_transforms[3] ('lost')" in problems[2]


def test_a_diff_updates_and_a_full_scene_replaces():
    table = OutsideFrames()
    table.update(moveit_frames([_camera(name="a"), _camera(name="b")])[0], replace=True)
    moved = pin.SE3(np.eye(3), np.array([1.0, 2.0, 3.0]))
    table.update(moveit_frames([_camera(name="b", T=moved)])[0], replace=False)
    assert table.names() == ("a", "b")
    assert np.allclose(table.get("b").T_reference_frame.translation, (1.0, 2.0, 3.0))
    table.update(moveit_frames([_camera(name="c")])[0], replace=True)
    assert table.names() == ("c",)


def test_ik_node_takes_the_frames_of_the_monitored_planning_scene(ros_context):
    """Over DDS: move_group's scene (a PlanningScene with the camera) on
    /monitored_planning_scene, then ComputeIK in the camera's frame and in ``world``."""
    scene_msgs = pytest.importorskip("moveit_msgs.msg")
    from ros2_ik.node.harness import Client, NodeProcess, wait_for, with_frame_known
    urdf, model = urdf_text("panda"), pin.buildModelFromXML(urdf_text("panda"))
    node = NodeProcess()
    client = Client("frames_client")
    scene_pub = client.node.create_publisher(scene_msgs.PlanningScene,
                                             "/monitored_planning_scene", 5)
    scene = scene_msgs.PlanningScene(is_diff=False, fixed_frame_transforms=[_camera()])
    T_world_target = _reachable(model)
    in_camera = _request("camera", T_WORLD_CAMERA.actInv(T_world_target))
    try:
        client.publish_description(urdf, SRDF)
        client.wait_for_service()
        first = client.wait_for_model(_request("world", T_world_target))
        assert first.error_code.val == IKErrorCode.SUCCESS, first.message
        r = with_frame_known(client, in_camera, lambda: scene_pub.publish(scene))
        assert r.error_code.val == IKErrorCode.SUCCESS, r.message
        assert _close(_solved_hand(model, r.solution.name, r.solution.position),
                      T_world_target)
        # A full scene without the camera: the frame is gone, the node says so.
        scene_pub.publish(scene_msgs.PlanningScene(is_diff=False))
        wait_for(lambda: client.call(in_camera).error_code.val
                 == IKErrorCode.FRAME_NOT_FOUND, 20.0, "the camera gone", client.spin)
    finally:
        client.close()
        assert node.stop() == 0, node.output()


def test_get_position_ik_with_a_camera_pose_and_a_constraint_in_world(panda):
    """GetPositionIK as MoveIt sends it: the pose in a TF frame, a position constraint in
    MoveIt's planning frame (``world``): solved, and the hand inside the region."""
    moveit = pytest.importorskip("moveit_msgs.msg")
    srv = pytest.importorskip("moveit_msgs.srv")
    from builtin_interfaces.msg import Duration
    from shape_msgs.msg import SolidPrimitive
    from ros2_ik.node.moveit_bridge import answer
    from ros2_ik.node.parameters import GroupConfig
    snap, model = panda
    snap.outside_frames.update(moveit_frames([_camera()])[0], replace=True)
    try:
        T_world_target = _reachable(model)
        request = srv.GetPositionIK.Request()
        ik = request.ik_request
        ik.group_name, ik.timeout = "arm", Duration(sec=1)
        ik.pose_stamped = _request("camera", T_WORLD_CAMERA.actInv(T_world_target)).target
        # The elbow within 5 cm of where the configuration behind the target puts it.
        p_world_elbow = _fk(model, _reachable_q(model), "panda_link4").translation
        ball = moveit.PositionConstraint(link_name="panda_link4", weight=1.0)
        ball.header.frame_id = "world"
        ball.constraint_region.primitives = [SolidPrimitive(type=SolidPrimitive.SPHERE,
                                                            dimensions=[0.05])]
        ball.constraint_region.primitive_poses = [
            se3_to_pose(pin.SE3(np.eye(3), p_world_elbow))]
        ik.constraints.position_constraints = [ball]
        cfg = config({"arm": GroupConfig("arm", "panda_link0", "panda_hand")},
                     group_names=["arm"], default_group="arm")
        r = answer(snap, "", cfg, JointStateCache(), request, srv.GetPositionIK.Response())
        assert r.error_code.val == moveit.MoveItErrorCodes.SUCCESS, r.error_code
        state = r.solution.joint_state
        assert _close(_solved_hand(model, state.name, state.position), T_world_target)
        q = _q(model, state.name, state.position)
        assert np.linalg.norm(_fk(model, q, "panda_link4").translation - p_world_elbow) \
            < 0.05 + 1e-4
    finally:
        snap.outside_frames.update({}, replace=True)


def test_a_collision_object_in_an_outside_frame_is_placed_in_the_world(panda):
    """A box in the camera's frame (as a perception node publishes it) and one in MoveIt's
    planning frame land in the scene where those frames put them."""
    from shape_msgs.msg import SolidPrimitive
    from ros2_ik.core.collision import PlanningScene
    from ros2_ik.node.scene_io import apply_batch
    from ros2_ik.node.scene_server import in_world
    from ros2_ik_interfaces.msg import CollisionObject
    snap, model = panda
    snap.outside_frames.update(moveit_frames([_camera()])[0], replace=True)
    T_frame_box = pin.SE3(pin.rpy.rpyToMatrix(0.1, 0.2, 0.3), np.array([0.2, 0.1, 0.7]))
    try:
        scene = PlanningScene.for_model(model)
        msgs = []
        for name, frame in (("seen", "camera"), ("planned", "world")):
            msg = CollisionObject(id=name, operation=CollisionObject.ADD,
                                  pose=se3_to_pose(T_frame_box))
            msg.header.frame_id = frame
            msg.primitives = [SolidPrimitive(type=SolidPrimitive.BOX, dimensions=[0.1] * 3)]
            msg.primitive_poses = [se3_to_pose(pin.SE3.Identity())]
            msgs.append(in_world(snap, msg))
        apply_batch(scene, msgs, 1000, model)
        objects = scene.snapshot().objects
        assert objects["seen"].frame_id == objects["planned"].frame_id == "world"
        assert np.allclose(objects["seen"].T_frame_object,
                           (T_WORLD_CAMERA * T_frame_box).homogeneous, atol=1e-9)
        assert np.allclose(objects["planned"].T_frame_object, T_frame_box.homogeneous,
                           atol=1e-9)
        # A model frame is the scene's own business: left as it came.
        msg = CollisionObject(id="held", operation=CollisionObject.ADD)
        msg.header.frame_id = "panda_link0"
        assert in_world(snap, msg) is msg
    finally:
        snap.outside_frames.update({}, replace=True)


def test_an_action_constraint_in_world_is_in_the_root(panda):
    """The action's Drake-style frames take MoveIt's planning frame as the root too: the
    elbow held in a 4 cm box around where the target's configuration puts it."""
    from geometry_msgs.msg import Point, Vector3
    from ros2_ik_interfaces.msg import PositionConstraint
    snap, model = panda
    T_world_target = _reachable(model)
    p_elbow = _fk(model, _reachable_q(model), "panda_link4").translation
    goal = ConstrainedIK.Goal(base_link="panda_link0", tip_link="panda_hand", timeout=1.0)
    goal.pose_goals = [PoseGoal(tip_link="panda_hand",
                                target=_request("world", T_world_target).target)]
    box = PositionConstraint(frame_a="world", frame_b="panda_link4", p_bq=Point())
    box.x_abar_a.orientation.w = 1.0
    box.lower = Vector3(x=p_elbow[0] - 0.02, y=p_elbow[1] - 0.02, z=p_elbow[2] - 0.02)
    box.upper = Vector3(x=p_elbow[0] + 0.02, y=p_elbow[1] + 0.02, z=p_elbow[2] + 0.02)
    goal.position_constraints = [box]
    result = solve_goal(snap, "", config(), JointStateCache(), goal, lambda: False)
    assert result.error_code.val == IKErrorCode.SUCCESS, result.message
    joints = result.solutions[0].joint_state
    q = _q(model, joints.name, joints.position)
    assert _close(_fk(model, q), T_world_target)
    assert np.all(np.abs(_fk(model, q, "panda_link4").translation - p_elbow) <= 0.02 + 1e-4)
