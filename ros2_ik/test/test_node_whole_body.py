"""Whole-body groups in the node: ComputeIK, the action, GetPositionIK's mapping, over DDS.

pr2 (the SRDF's planar virtual joint ``world_joint``, group ``whole_body``) and talos (a
free-flyer under its URDF root).  Answers are checked by our own FK on a pinocchio model
built here from the URDF (base set from the reply's transform, joints by name), the CoM
with ``pin.centerOfMass``: never by the node's own figures.
"""
import math
import time
from dataclasses import dataclass, field

import numpy as np
import pinocchio as pin
import pytest
from geometry_msgs.msg import Point, Pose, PoseStamped, Transform
from sensor_msgs.msg import JointState, MultiDOFJointState

from ros2_ik.core import robots
from ros2_ik.node.constrained_ik import solve_goal
from ros2_ik.node import compute_ik as C
from ros2_ik.node.compute_ik import compute_ik
from ros2_ik.node.compute_ik_path import compute_ik_path
from ros2_ik.node.base_pose import joint_part
from ros2_ik.node.conversions import se3_to_pose
from ros2_ik.node.moveit_bridge import answer
from ros2_ik.node.parameters import GroupConfig
from ros2_ik.node.robot_source import JointStateCache
from ros2_ik_interfaces.action import ConstrainedIK
from ros2_ik_interfaces.msg import (
    ContactConstraint, IKErrorCode, PoseGoal, SupportPolygonConstraint)
from ros2_ik_interfaces.srv import ComputeIK, ComputeIKPath
from node_inputs import config, snapshot
from whole_body_checks import clearance_on_robot, full_q, path_tips

SOLE = [(0.1, 0.05), (0.1, -0.05), (-0.1, 0.05), (-0.1, -0.05)]
FAR = (2.0, -0.5, 0.9)  # beyond the pr2 arm's reach from the origin [m]


def _load(urdf_path, srdf_path, root_joint, ours):
    """The node's snapshot and our own model (root joint ``ours``), URDF and SRDF text."""
    urdf, srdf = (robots.data_dir() / p for p in (urdf_path, srdf_path))
    urdf, srdf = urdf.read_text(), srdf.read_text()
    return snapshot(urdf, srdf, root_joint), pin.buildModelFromXML(urdf, ours), urdf, srdf


@pytest.fixture(scope="module")
def pr2():
    return _load("pr2_description/urdf/pr2.urdf", "pr2_description/srdf/pr2.srdf", "srdf",
                 pin.JointModelPlanar())


@pytest.fixture(scope="module")
def talos():
    return _load("talos_data/robots/talos_full_v2.urdf", "talos_data/srdf/talos.srdf",
                 "floating", pin.JointModelFreeFlyer())[:2]


def _cfg(groups=None, **values):
    return config(groups, timeout=1.0, **values)


def _fk(model, q, frame):
    data = model.createData()
    pin.framesForwardKinematics(model, data, q)
    return data.oMf[model.getFrameId(frame)]


def _pr2_request(**fields):
    req = ComputeIK.Request()
    req.group_name, req.tip_link, req.position_only = "whole_body", "r_wrist_roll_link", True
    req.target.header.frame_id = "odom_combined"
    req.target.pose.position.x, req.target.pose.position.y, req.target.pose.position.z = FAR
    req.target.pose.orientation.w = 1.0
    for name, value in fields.items():
        setattr(req, name, value)
    return req


def _base(name="world_joint", frame="", xyz=(0.0, 0.0, 0.0), quat=(0.0, 0.0, 0.0, 1.0)):
    tf = Transform()
    tf.translation.x, tf.translation.y, tf.translation.z = xyz
    tf.rotation.x, tf.rotation.y, tf.rotation.z, tf.rotation.w = quat
    msg = MultiDOFJointState(joint_names=[name], transforms=[tf])
    msg.header.frame_id = frame
    return msg


def test_pr2_base_drives_to_a_far_target(pr2):
    snapshot, model, _, _ = pr2
    r = compute_ik(snapshot, "", _cfg(), JointStateCache(), _pr2_request()).response
    assert r.error_code.val == IKErrorCode.SUCCESS, r.message
    assert list(r.solution_base.joint_names) == ["world_joint"]
    assert r.solution_base.header.frame_id == "odom_combined"
    assert "world_joint" not in r.solution.name and len(r.solution.name) == 15
    q = full_q(model, r.solution.name, r.solution.position, r.solution_base.transforms[0])
    assert np.linalg.norm(_fk(model, q, "r_wrist_roll_link").translation - FAR) < 1e-3
    assert np.hypot(q[0], q[1]) > 0.5  # the base moved toward the target


def test_pr2_base_drives_to_a_target_150_m_away_and_refuses_one_beyond_the_world(pr2):
    """A target 150 m off: the base drives there (it answered NO_SOLUTION after the timeout).

    A target beyond the world (``MAX_COORDINATE_M`` plus the hand's reach from the base)
    is INVALID_GOAL naming the frame, at once; the node answers the next request.
    """
    snapshot, model, _, _ = pr2
    far = (150.0, -40.0, 0.9)
    r = compute_ik(snapshot, "", _cfg(), JointStateCache(),
                   _pr2_request(target=_pose_stamped(far))).response
    assert r.error_code.val == IKErrorCode.SUCCESS, r.message
    q = full_q(model, r.solution.name, r.solution.position, r.solution_base.transforms[0])
    assert np.linalg.norm(_fk(model, q, "r_wrist_roll_link").translation - far) < 1e-3
    started = time.perf_counter()
    r = compute_ik(snapshot, "", _cfg(), JointStateCache(),
                   _pr2_request(target=_pose_stamped((3e4, 0.0, 0.9)))).response
    assert r.error_code.val == IKErrorCode.INVALID_GOAL, r.message
    assert "frame 'r_wrist_roll_link'" in r.message and "10000 m" in r.message, r.message
    assert time.perf_counter() - started < 0.5
    r = compute_ik(snapshot, "", _cfg(), JointStateCache(), _pr2_request()).response
    assert r.error_code.val == IKErrorCode.SUCCESS, r.message


def _pose_stamped(xyz):
    target = PoseStamped()
    target.header.frame_id = "odom_combined"
    target.pose.position.x, target.pose.position.y, target.pose.position.z = xyz
    target.pose.orientation.w = 1.0
    return target


@pytest.mark.parametrize("base, field", [
    (_base(quat=(0.0, 0.0, 0.0, 2.0)), "seed_base.transforms[0].rotation"),
    (_base(name="no_such_joint"), "unknown virtual joint"),
    (_base(xyz=(math.nan, 0.0, 0.0)), "seed_base.transforms[0].translation"),
    (_base(frame="map"), "seed_base.header.frame_id"),
    (_base(xyz=(0.0, 0.0, 0.3)), "planar base"),
    (_base(xyz=(0.0, -2e4, 0.0)), "seed_base.transforms[0].translation: base position "
                                  "world_joint/y = -20000 m"),
])
def test_bad_base_seed_names_the_field(pr2, base, field):
    snapshot = pr2[0]
    r = compute_ik(snapshot, "", _cfg(), JointStateCache(),
                   _pr2_request(seed_base=base)).response
    assert r.error_code.val == IKErrorCode.INVALID_SEED and field in r.message, r.message


def test_base_seed_is_used_and_fixed_groups_refuse_one(pr2):
    snapshot = pr2[0]
    seeded = _pr2_request(seed_base=_base(frame="odom_combined", xyz=(1.4, -0.2, 0.0)),
                          max_attempts=1)
    r = compute_ik(snapshot, "", _cfg(), JointStateCache(), seeded).response
    assert r.error_code.val == IKErrorCode.SUCCESS, r.message
    assert abs(r.solution_base.transforms[0].translation.x - 1.4) < 0.5  # near its seed
    arm = _pr2_request(group_name="right_arm", seed_base=_base())
    r = compute_ik(snapshot, "", _cfg(), JointStateCache(), arm).response
    assert r.error_code.val == IKErrorCode.INVALID_SEED and "no floating or planar" in r.message
    # A fixed-base group's base is locked at the origin, not where the robot stands: a
    # target in the base's parent frame stays unknown to it (as before bases existed).
    r = compute_ik(snapshot, "", _cfg(), JointStateCache(),
                   _pr2_request(group_name="right_arm")).response
    assert r.error_code.val == IKErrorCode.FRAME_NOT_FOUND and "odom_combined" in r.message


def test_a_whole_body_seed_reads_joint_states_however_old(pr2):
    """The joints of a whole-body seed: the last joint_states, however old, as an arm's."""
    snapshot = pr2[0]
    group = C.resolve_group(snapshot, _cfg(), "whole_body", "", "")[0]
    names, part = joint_part(group)
    lower, upper = np.asarray(group.lower)[part], np.asarray(group.upper)[part]
    values = np.clip(np.asarray(group.mid_configuration())[part] + 0.1, lower, upper)
    joints = JointStateCache()
    joints.update(list(names), values.tolist())
    time.sleep(0.03)
    notes: list = []
    q = C.seed_for(group, JointState(), joints, _cfg(joint_state_timeout=0.01), notes,
                   None, snapshot.base_parent_frame)
    np.testing.assert_allclose(np.asarray(q)[part], values)
    assert len(notes) == 1 and notes[0].startswith("seed: the last joint_states of"), notes


@dataclass
class _IKRequest:  # the fields of moveit_msgs/PositionIKRequest the mapping reads
    group_name: str = "whole_body"
    robot_state: object = None
    constraints: object = None
    avoid_collisions: bool = False
    ik_link_name: str = "r_wrist_roll_link"
    pose_stamped: PoseStamped = field(default_factory=PoseStamped)
    ik_link_names: list = field(default_factory=list)
    pose_stamped_vector: list = field(default_factory=list)
    timeout: object = None


@dataclass
class _State:
    joint_state: JointState = field(default_factory=JointState)
    multi_dof_joint_state: MultiDOFJointState = field(default_factory=MultiDOFJointState)


@dataclass
class _Holder:
    ik_request: _IKRequest = None
    solution: _State = field(default_factory=_State)
    error_code: object = None


_R_ARM = ("r_shoulder_pan_joint", "r_shoulder_lift_joint", "r_upper_arm_roll_joint",
          "r_elbow_flex_joint", "r_forearm_roll_joint", "r_wrist_flex_joint",
          "r_wrist_roll_joint")


def test_collision_checks_of_a_whole_body_group_see_the_other_arm_where_it_is(pr2):
    """PR2's base, torso and right arm, the right wrist sent where the left wrist is.

    Collision-checked: every SUCCESS keeps clear of the left arm where joint_states put it,
    checked here by the collision checker at the reply (base from ``solution_base``) with
    the left arm there.  Before, each such request answered INTERNAL_ERROR (the re-check
    read the reply's joints as the group vector, without the base), and with that mended,
    the left arm stayed at zero: answers that collide on the robot were SUCCESS.
    """
    snap = pr2[0]
    cfg = _cfg({"right_body": GroupConfig("right_body", "base_footprint", "r_wrist_roll_link",
                                          ("world_joint", "torso_lift_joint") + _R_ARM)})
    group = C.resolve_group(snap, cfg, "right_body", "", "")[0]
    left = snap.robot.group(base="torso_lift_link", tip="l_wrist_roll_link")
    checker = C.collision_checker(snap, cfg)
    lo = np.where(np.isfinite(left.lower), left.lower, -3.0)
    hi = np.where(np.isfinite(left.upper), left.upper, 3.0)
    rng = np.random.default_rng(3)
    clear = hit_at_zero = 0
    for _ in range(30):
        q_left = rng.uniform(lo, hi)
        req = ComputeIK.Request()
        req.group_name, req.avoid_collisions, req.timeout = "right_body", True, 0.2
        req.target.header.frame_id = "odom_combined"
        req.target.pose = se3_to_pose(left.fk(q_left, left.tip))
        req.weights = [1.0, 1.0, 1.0, 0.0, 0.0, 0.0]
        joints = JointStateCache()
        joints.update(list(left.joint_names), list(q_left))
        held = dict(zip(left.joint_names, q_left))
        for known, count_as in ((joints, "there"), (JointStateCache(), "zero")):
            res = compute_ik(snap, "", cfg, known, req).response
            assert res.error_code.val in (IKErrorCode.SUCCESS, IKErrorCode.IN_COLLISION), \
                res.message
            if res.error_code.val != IKErrorCode.SUCCESS:
                continue
            distance = clearance_on_robot(checker, group, held, res)
            if count_as == "there":
                assert distance >= cfg.minimum_distance - 1e-9, distance
                clear += 1
            else:
                hit_at_zero += distance < 0.0
    assert clear >= 10 and hit_at_zero  # the left arm at zero would have been hit


def test_a_whole_body_path_takes_waypoints_in_the_base_parent_frame(pr2):
    """ComputeIKPath's waypoints in ``odom_combined``, as ComputeIK's targets are.

    The model's root frame stands for it; it was FRAME_NOT_FOUND.  Each point reaches its
    waypoint by our own FK (the base from ``world_joint/x``, ``/y``, ``/theta``).
    """
    snapshot, model, _, _ = pr2
    req = ComputeIKPath.Request()
    req.group_name, req.tip_link = "whole_body", "r_wrist_roll_link"
    req.header.frame_id = "odom_combined"
    goals = [(1.2, -0.4, 0.8), (1.3, -0.3, 0.85)]
    for x, y, z in goals:
        pose = Pose()
        pose.position.x, pose.position.y, pose.position.z = x, y, z
        pose.orientation.w = 1.0
        req.waypoints.append(pose)
    req.position_tolerance, req.orientation_tolerance = 1e-4, 1e-3
    req.max_joint_step, req.timeout = [0.5], 1.0
    res = compute_ik_path(snapshot, "", _cfg(), JointStateCache(), req).response
    assert res.error_code.val == IKErrorCode.SUCCESS, res.message
    names = list(res.trajectory.joint_names)
    assert names[:3] == ["world_joint/x", "world_joint/y", "world_joint/theta"]
    tips = path_tips(model, res.trajectory, "r_wrist_roll_link")
    assert np.abs(np.array(tips) - np.array(goals)).max() < 2e-4


def test_get_position_ik_answers_the_virtual_joint(pr2):
    """GetPositionIK's mapping: the multi-DoF entry seeds the base and carries the answer."""
    from builtin_interfaces.msg import Duration
    from types import SimpleNamespace
    snapshot, model, _, _ = pr2
    other = _base(name="caster_joint", xyz=(9.0, 9.0, 9.0))
    seed = _base(frame="odom_combined")
    seed.joint_names += other.joint_names
    seed.transforms = list(seed.transforms) + list(other.transforms)
    group = snapshot.robot.whole_body(tip="r_wrist_roll_link", joints=[
        n for n in snapshot.srdf_groups["whole_body"].joints if n != "world_joint"])
    mid = group.mid_configuration()[3:]
    state = _State(JointState(name=["head_pan_joint"] + list(group.joint_names[3:]),
                              position=[0.1] + list(mid)), seed)
    pose = _pr2_request().target
    empty = SimpleNamespace(joint_constraints=[], position_constraints=[],
                            orientation_constraints=[], visibility_constraints=[])
    ik = _IKRequest(robot_state=state, constraints=empty, pose_stamped=pose,
                    timeout=Duration(sec=1))
    response = _Holder(error_code=SimpleNamespace(val=0))
    out = answer(snapshot, "", _cfg(), JointStateCache(), _Holder(ik_request=ik), response)
    assert out.error_code.val == 1, out.error_code
    multi = out.solution.multi_dof_joint_state
    assert list(multi.joint_names) == ["world_joint", "caster_joint"]
    assert multi.transforms[1].translation.x == 9.0  # other entries unchanged
    js = out.solution.joint_state
    assert js.name[0] == "head_pan_joint" and js.position[0] == 0.1  # kept from the seed
    q = full_q(model, js.name, js.position, multi.transforms[0])
    assert np.linalg.norm(_fk(model, q, "r_wrist_roll_link").translation - FAR) < 1e-3


def _talos_hand_goal(base_xyz):
    """The talos whole-body group's configuration, and a goal: the left hand at (0.3, 0.3, 0.8)."""
    cfg = _cfg({"whole_body": GroupConfig("whole_body", "", "gripper_left_base_link",
                                          ("root_joint",))})
    goal = ConstrainedIK.Goal(group_name="whole_body", timeout=2.0)
    goal.seed_base = _base("root_joint", xyz=base_xyz)
    target = PoseStamped()
    target.header.frame_id = "universe"
    target.pose.position.x, target.pose.position.y, target.pose.position.z = 0.3, 0.3, 0.8
    target.pose.orientation.w = 1.0
    goal.pose_goals = [PoseGoal(tip_link="gripper_left_base_link", target=target,
                                position_only=True)]
    return cfg, goal


def test_talos_action_holds_the_soles_and_the_com(talos):
    snapshot, model = talos
    cfg, goal = _talos_hand_goal((0.0, 0.0, 1.02))
    soles = ["left_sole_link", "right_sole_link"]
    goal.contact_constraints = [ContactConstraint(frame=s, hold_current=True) for s in soles]
    goal.support_polygon_constraints = [SupportPolygonConstraint(
        frames=soles, margin=0.02, local_points=[Point(x=x, y=y) for x, y in SOLE])]
    result = solve_goal(snapshot, "", cfg, JointStateCache(), goal, lambda: False)
    assert result.error_code.val == IKErrorCode.SUCCESS, result.message
    sol = result.solutions[0]
    q = full_q(model, sol.joint_state.name, sol.joint_state.position, sol.base.transforms[0])
    seed = full_q(model, [], [], goal.seed_base.transforms[0])
    seed[7:] = 0.5 * (model.lowerPositionLimit[7:] + model.upperPositionLimit[7:])
    for sole in soles:  # held where the seed (base at 1.02 m, joints mid-range) put them
        err = pin.log6(_fk(model, seed, sole).actInv(_fk(model, q, sole))).vector
        assert np.linalg.norm(err) < 2e-3
    assert np.linalg.norm(_fk(model, q, "gripper_left_base_link").translation
                          - (0.3, 0.3, 0.8)) < 1e-3
    corners = np.array([_fk(model, seed, s).act(np.array([x, y, 0.0]))[:2]
                        for s in soles for x, y in SOLE])
    com = pin.centerOfMass(model, model.createData(), q)[:2]
    lo, hi = corners.min(axis=0), corners.max(axis=0)  # the soles sit side by side
    assert np.all(com > lo + 0.019) and np.all(com < hi - 0.019)


def test_talos_action_refuses_a_base_seed_beyond_the_world_at_once(talos):
    """A base seed 1e300 m away is INVALID_SEED naming the field, not a timeout.

    It ran the whole timeout and answered NO_SOLUTION ("best available has inf m").
    """
    cfg, goal = _talos_hand_goal((1e300, 0.0, 1.02))
    started = time.perf_counter()
    result = solve_goal(talos[0], "", cfg, JointStateCache(), goal, lambda: False)
    assert result.error_code.val == IKErrorCode.INVALID_SEED, result.message
    assert time.perf_counter() - started < 1.0
    assert "seed_base.transforms[0].translation" in result.message
    assert "root_joint/trans_x = 1e+300 m" in result.message, result.message


def test_over_dds_answers_then_keeps_serving_after_bad_input(ros_context, pr2):
    """ik_node with config/pr2_whole_body.yaml: a whole-body answer, a refusal, an answer."""
    import os
    from ament_index_python.packages import get_package_share_directory
    from ros2_ik.node.harness import Client, NodeProcess, act_until, wait_for
    _, model, urdf, srdf = pr2
    config = os.path.join(get_package_share_directory("ros2_ik"), "config",
                          "pr2_whole_body.yaml")
    node = NodeProcess(extra_args=["--params-file", config, "-r", "__ns:=/wb",
                                   "-p", "base_goal_topic:=base_goal"])
    client = Client("wb_client", namespace="/wb")
    goals = []
    client.node.create_subscription(PoseStamped, "/wb/base_goal", goals.append, 10)
    try:
        client.publish_description(urdf, srdf)
        client.wait_for_service()
        first = client.wait_for_model(_pr2_request())
        assert first.error_code.val == IKErrorCode.SUCCESS, first.message
        bad = client.call(_pr2_request(seed_base=_base(quat=(0.0, 0.0, 0.0, 0.5))))
        assert bad.error_code.val == IKErrorCode.INVALID_SEED
        assert "seed_base.transforms[0].rotation" in bad.message
        again = client.call(_pr2_request())
        assert again.error_code.val == IKErrorCode.SUCCESS, again.message
        q = full_q(model, again.solution.name, again.solution.position,
                   again.solution_base.transforms[0])
        assert np.linalg.norm(_fk(model, q, "r_wrist_roll_link").translation - FAR) < 1e-3
        # Executed from where the robot is (joint_states, the base as seed): the joints go
        # to the controller, the base pose to base_goal_topic.
        replies = []

        def executed() -> bool:  # until the node has the joint_states just published
            client.publish_joints(again.solution.name, again.solution.position)
            replies.append(client.call(_pr2_request(execute=True,
                                                    seed_base=again.solution_base)))
            return "sent to the controller" in replies[-1].message
        wait_for(executed, 20.0, "an executed answer", client.spin)
        done = replies[-1]
        assert done.error_code.val == IKErrorCode.SUCCESS, done.message
        act_until(executed, lambda: goals, 10.0, "the base goal", client.spin, acted=True)
        sent, solved = goals[-1], replies[-1].solution_base.transforms[0]
        assert sent.header.frame_id == "odom_combined"
        assert (sent.pose.position.x, sent.pose.position.y) == (solved.translation.x,
                                                                solved.translation.y)
    finally:
        client.close()
        assert node.stop() == 0, node.output()


def _pr2_goal(**fields):
    goal = ConstrainedIK.Goal(group_name="whole_body", tip_link="r_wrist_roll_link",
                              timeout=2.0, **fields)
    goal.pose_goals = [PoseGoal(tip_link="r_wrist_roll_link", target=_pr2_request().target,
                                position_only=True)]
    return goal


def test_action_maps_com_box_and_base_motion_cost(pr2):
    """A CoM box and the base-motion cost reach the core; the answer meets the box."""
    from ros2_ik_interfaces.msg import CenterOfMassConstraint
    from geometry_msgs.msg import Vector3
    snapshot, model, _, _ = pr2
    box = CenterOfMassConstraint(name="com_box", lower=Vector3(x=-5.0, y=-5.0, z=0.0),
                                 upper=Vector3(x=5.0, y=5.0, z=1.5))
    goal = _pr2_goal(com_constraints=[box], base_motion_weight=1.0)
    result = solve_goal(snapshot, "", _cfg(), JointStateCache(), goal, lambda: False)
    assert result.error_code.val == IKErrorCode.SUCCESS, result.message
    sol = result.solutions[0]
    q = full_q(model, sol.joint_state.name, sol.joint_state.position, sol.base.transforms[0])
    com = pin.centerOfMass(model, model.createData(), q)
    assert np.all(com >= (-5.0, -5.0, -1e-4)) and np.all(com <= (5.0, 5.0, 1.5 + 1e-4))
    assert np.linalg.norm(_fk(model, q, "r_wrist_roll_link").translation - FAR) < 1e-3


@pytest.mark.parametrize("fields, field", [
    ({"com_constraints": "nan"}, "com_constraints[0]"),
    ({"support_polygon_constraints": "no_frame"}, "support_polygon_constraints[0]"),
    ({"base_motion_weight": -1.0}, "base_motion_weight"),
])
def test_action_bad_whole_body_terms_name_the_field(pr2, fields, field):
    from ros2_ik_interfaces.msg import CenterOfMassConstraint
    from geometry_msgs.msg import Vector3
    values = dict(fields)
    if values.get("com_constraints") == "nan":
        values["com_constraints"] = [CenterOfMassConstraint(lower=Vector3(x=math.nan))]
    if values.get("support_polygon_constraints") == "no_frame":
        values["support_polygon_constraints"] = [SupportPolygonConstraint(
            frames=["no_such_frame"], margin=0.02)]
    result = solve_goal(pr2[0], "", _cfg(), JointStateCache(), _pr2_goal(**values),
                        lambda: False)
    assert result.error_code.val in (IKErrorCode.INVALID_GOAL, IKErrorCode.FRAME_NOT_FOUND)
    assert field in result.message, result.message
