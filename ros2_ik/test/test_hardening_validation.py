"""Input validation over the real service and action (issue 6).

ik_node runs as a process; every bad request gets a specific error code and a message
naming the offending field, and the node answers a good request right after each bad
one.  Solutions are checked with our own pinocchio forward kinematics.
"""
import math
import os
import re
import time

import numpy as np
import pinocchio as pin
import pytest

pytest.importorskip("rclpy")

from ament_index_python.packages import get_package_share_directory  # noqa: E402
from panda_node import ARM, READY, T_frame, stop  # noqa: E402
from ros2_ik.core import robots  # noqa: E402
from ros2_ik.node.conversions import se3_to_pose  # noqa: E402
from ros2_ik.node.harness import Client, NodeProcess, wait_for  # noqa: E402
from ros2_ik_interfaces.action import ConstrainedIK  # noqa: E402
from ros2_ik_interfaces.msg import (  # noqa: E402
    IKErrorCode, OrientationConstraint, PoseGoal, PositionConstraint)
from ros2_ik_interfaces.srv import ComputeIK  # noqa: E402

C = IKErrorCode
#: Caps the node under test runs with (checked to be applied and reported).
CAPS = {"max_timeout": 0.5, "max_attempts_cap": 50, "max_constraints": 100,
        "joint_state_timeout": 0.5}


def config_file():
    return os.path.join(get_package_share_directory("ros2_ik"), "config", "panda.yaml")


@pytest.fixture(scope="module")
def model():
    return pin.buildModelFromXML(robots.urdf_text("panda"))


def start(namespace, params=None):
    """An ik_node on panda.yaml plus ``params``, in ``namespace``, and a client."""
    node = NodeProcess(params=params, extra_args=["--params-file", config_file(),
                                                  "-r", f"__ns:=/{namespace}"])
    client = Client(f"{namespace}_client", namespace=f"/{namespace}")
    return node, client


@pytest.fixture(scope="module")
def served(ros_context, model):
    node, client = start("hv", CAPS)
    try:
        client.publish_description(robots.urdf_text("panda"), robots.srdf_text("panda"))
        client.wait_for_service()
        assert client.action.wait_for_server(timeout_sec=30)
        client.wait_for_model(good_request(model))
        yield client, node
    finally:
        stop(node, client)


def good_request(model, **fields):
    """A reachable target, seeded near its answer: solves in a few milliseconds."""
    q = np.array(READY) + 0.1
    req = ComputeIK.Request()
    req.target.header.frame_id = "panda_link0"
    req.target.pose = se3_to_pose(T_frame(model, ARM, q, "panda_hand"))
    req.seed.name, req.seed.position = list(ARM), [float(v) for v in READY]
    req.timeout = 0.3
    req.random_seed = 1
    for name, value in fields.items():
        setattr(req, name, value)
    return req


def below_the_base(req) -> None:
    """Aim ``req`` 0.5 m below the base: out of reach, yet no reach proof answers it early.

    (A target 3 m away is answered after one attempt: the search would not use its budget.)
    """
    p = req.target.pose.position
    p.x, p.y, p.z = 0.0, 0.0, -0.5


def assert_verified(model, req, res, pos_tol=1e-4, ori_tol=1e-3):
    """Our own FK on exactly the returned values: tolerance and limits."""
    assert res.error_code.val == C.SUCCESS, res.message
    T_target = T_frame(model, [], [], req.target.header.frame_id or "universe").act(
        pin.XYZQUATToSE3(np.array(_xyzquat(req.target.pose))))
    T = T_frame(model, res.solution.name, res.solution.position, "panda_hand")
    assert np.linalg.norm(T.translation - T_target.translation) <= pos_tol
    if not req.position_only:
        assert np.linalg.norm(pin.log3(T_target.rotation.T @ T.rotation)) <= ori_tol
    for name, value in zip(res.solution.name, res.solution.position):
        iq = model.joints[model.getJointId(name)].idx_q
        assert model.lowerPositionLimit[iq] <= value <= model.upperPositionLimit[iq]


def _xyzquat(pose):
    o = pose.orientation
    q = np.array([o.x, o.y, o.z, o.w])
    q = q / np.linalg.norm(q)
    return [pose.position.x, pose.position.y, pose.position.z, *q]


def assert_rejected(res, code, *words):
    assert res.error_code.val == code, f"{res.error_code.val}: {res.message}"
    assert res.message.strip()
    for word in words:
        assert word in res.message, f"{word!r} not in {res.message!r}"


def call_many(client, requests, window=8, timeout_s=120.0):
    """Answers of ``requests``, at most ``window`` in flight (the service queue is 10)."""
    futures, pending = [], list(requests)
    deadline = time.monotonic() + timeout_s
    while pending or not all(f.done() for f in futures):
        while pending and sum(not f.done() for f in futures) < window:
            futures.append(client.ik.call_async(pending.pop(0)))
        client.spin(0.005)
        assert time.monotonic() < deadline, "answers missing"
    return [f.result() for f in futures]


def assert_still_serving(client, node, model):
    assert node.alive(), node.output()[-2000:]
    req = good_request(model)
    assert_verified(model, req, client.call(req))


# --- ComputeIK: one bad field at a time -------------------------------------------------
def _set_pose(attr, value):
    def mutate(req):
        obj_name, field = attr.split(".")
        setattr(getattr(req.target.pose, obj_name), field, value)
    return mutate


def _set(**fields):
    def mutate(req):
        for name, value in fields.items():
            setattr(req, name, value)
    return mutate


def _seed(names, positions):
    def mutate(req):
        req.seed.name, req.seed.position = list(names), [float(v) for v in positions]
    return mutate


def _quat(x, y, z, w):
    def mutate(req):
        o = req.target.pose.orientation
        o.x, o.y, o.z, o.w = x, y, z, w
    return mutate


BAD_REQUESTS = {
    "nan_position": (_set_pose("position.x", math.nan), C.INVALID_GOAL, "position"),
    "inf_position": (_set_pose("position.z", math.inf), C.INVALID_GOAL, "position"),
    "nan_quaternion": (_set_pose("orientation.y", math.nan), C.INVALID_GOAL, "orientation"),
    "inf_quaternion": (_set_pose("orientation.w", -math.inf), C.INVALID_GOAL, "orientation"),
    "zero_quaternion": (_quat(0.0, 0.0, 0.0, 0.0), C.INVALID_GOAL, "quaternion", "norm"),
    "long_quaternion": (_quat(0.0, 0.0, 0.0, 1.5), C.INVALID_GOAL, "quaternion", "1.5"),
    "short_quaternion": (_quat(0.0, 0.0, 0.0, 0.99), C.INVALID_GOAL, "quaternion"),
    "unknown_header_frame": (lambda r: setattr(r.target.header, "frame_id", "nowhere"),
                             C.FRAME_NOT_FOUND, "nowhere", "panda_link0"),
    "unknown_tip": (_set(tip_link="no_tip"), C.FRAME_NOT_FOUND, "no_tip"),
    "unknown_base": (_set(group_name="", base_link="no_base", tip_link="panda_hand"),
                     C.FRAME_NOT_FOUND, "no_base"),
    "base_not_ancestor": (_set(group_name="", base_link="panda_hand",
                               tip_link="panda_link0"), C.INVALID_GROUP, "panda_hand"),
    "base_without_tip": (_set(base_link="panda_link0", group_name="", tip_link=""),
                         C.INVALID_GROUP, "tip_link"),
    "unknown_group": (_set(group_name="legs"), C.INVALID_GROUP, "legs", "arm"),
    "one_joint_group": (_set(tip_link="panda_joint1"), C.NO_SOLUTION, "no solution"),
    "unknown_solver": (_set(solver="magic"), C.INVALID_SOLVER, "magic", "lm"),
    "nan_seed": (_seed(ARM, READY[:6] + [math.nan]), C.INVALID_SEED, "panda_joint7"),
    "inf_seed": (_seed(ARM, [math.inf] + READY[1:]), C.INVALID_SEED, "panda_joint1"),
    "seed_missing_joint": (_seed(ARM[:6], READY[:6]), C.INVALID_SEED, "panda_joint7"),
    "seed_unknown_joint": (_seed(ARM + ["elbow_x"], READY + [0.0]), C.INVALID_SEED,
                           "elbow_x"),
    "seed_duplicated_joint": (_seed(ARM + ["panda_joint3"], READY + [0.1]),
                              C.INVALID_SEED, "panda_joint3", "duplicated"),
    "seed_length_mismatch": (_seed(ARM, READY[:5]), C.INVALID_SEED, "seed", "7 names"),
    "seed_out_of_limits": (_seed(ARM, READY[:3] + [1.0] + READY[4:]), C.INVALID_SEED,
                           "panda_joint4", "limits"),
    "seed_in_degrees": (_seed(ARM, np.degrees(READY)), C.INVALID_SEED, "limits"),
    "nan_position_tolerance": (_set(position_tolerance=math.nan), C.INVALID_GOAL,
                               "position_tolerance"),
    "inf_orientation_tolerance": (_set(orientation_tolerance=math.inf), C.INVALID_GOAL,
                                  "orientation_tolerance"),
    "nan_timeout": (_set(timeout=math.nan), C.INVALID_GOAL, "timeout"),
    "weights_wrong_length": (_set(weights=[1.0] * 5), C.INVALID_GOAL, "weights"),
    "weights_huge": (_set(weights=[1.0] * 100000), C.INVALID_GOAL, "weights"),
    "weights_nan": (_set(weights=[1.0] * 5 + [math.nan]), C.INVALID_GOAL, "weights"),
    "weights_negative": (_set(weights=[1.0] * 5 + [-1.0]), C.INVALID_GOAL, "weights"),
    "weights_zero": (_set(weights=[0.0] * 6), C.INVALID_GOAL, "weights"),
    "seed_huge": (_seed([f"j{i}" for i in range(5000)], [0.0] * 5000), C.INVALID_SEED,
                  "seed"),
}


@pytest.mark.parametrize("case", sorted(BAD_REQUESTS))
def test_bad_compute_ik_request(served, model, case):
    client, node = served
    mutate, code, *words = BAD_REQUESTS[case]
    req = good_request(model)
    mutate(req)
    res = client.call(req)
    assert_rejected(res, code, *words)
    assert res.solve_time >= 0.0
    assert_still_serving(client, node, model)


def test_near_unit_quaternion_is_normalised(served, model):
    client, _ = served
    req = good_request(model)
    o = req.target.pose.orientation
    o.x, o.y, o.z, o.w = (v * (1 + 9e-4) for v in (o.x, o.y, o.z, o.w))
    assert_verified(model, req, client.call(req))


def test_seed_a_hair_outside_limits_is_clamped(served, model):
    """Within 1e-3 of a limit (a driver's rounding) the seed is clamped, not refused."""
    client, _ = served
    req = good_request(model)
    upper4 = model.upperPositionLimit[model.joints[model.getJointId("panda_joint4")].idx_q]
    req.seed.position = READY[:3] + [float(upper4) + 5e-4] + READY[4:]
    assert_verified(model, req, client.call(req))


def test_seed_joints_outside_the_group_are_ignored(served, model):
    client, _ = served
    req = good_request(model)
    req.seed.name = list(req.seed.name) + ["panda_finger_joint1"]
    req.seed.position = list(req.seed.position) + [0.01]
    assert_verified(model, req, client.call(req))


def test_negative_numbers_mean_defaults(served, model):
    """<= 0 tolerances and timeout are documented as "use the node default"."""
    client, _ = served
    req = good_request(model, position_tolerance=-1.0, orientation_tolerance=-5.0,
                       timeout=-3.0)
    assert_verified(model, req, client.call(req))


def test_absurd_timeout_is_capped_and_reported(served, model):
    client, _ = served
    req = good_request(model, timeout=1e9)
    res = client.call(req)
    assert_verified(model, req, res)
    assert "max_timeout" in res.message and "0.5" in res.message
    req = good_request(model, timeout=math.inf)
    assert "max_timeout" in client.call(req).message
    unreachable = good_request(model, timeout=1e6)
    below_the_base(unreachable)
    started = time.monotonic()
    res = client.call(unreachable)
    assert res.error_code.val == C.NO_SOLUTION, res.message
    assert time.monotonic() - started < CAPS["max_timeout"] + 1.0


def test_absurd_attempt_count_is_capped_and_reported(served, model):
    client, _ = served
    req = good_request(model, max_attempts=2**32 - 1)
    res = client.call(req)
    assert_verified(model, req, res)
    assert "max_attempts_cap" in res.message and "50" in res.message
    unreachable = good_request(model, max_attempts=2**32 - 1, timeout=10.0)
    below_the_base(unreachable)
    res = client.call(unreachable)
    assert res.error_code.val == C.NO_SOLUTION, res.message
    assert res.restarts <= CAPS["max_attempts_cap"]


# --- ConstrainedIK ----------------------------------------------------------------------
def run_goal(client, goal, timeout_s=30.0):
    send = client.action.send_goal_async(goal)
    wait_for(send.done, timeout_s, "goal acceptance", client.spin)
    handle = send.result()
    assert handle.accepted
    result = handle.get_result_async()
    wait_for(result.done, timeout_s, "the action result", client.spin)
    return result.result().result


def pose_goal(model, q=None):
    q = np.array(READY) + 0.1 if q is None else q
    goal = ConstrainedIK.Goal()
    goal.group_name = "arm"
    goal.timeout = 0.3
    goal.random_seed = 2
    goal.seed.name, goal.seed.position = list(ARM), [float(v) for v in READY]
    pose = PoseGoal(tip_link="panda_hand")
    pose.target.header.frame_id = "panda_link0"
    pose.target.pose = se3_to_pose(T_frame(model, ARM, q, "panda_hand"))
    goal.pose_goals = [pose]
    return goal


def box(lower=(0.3, -0.2, 0.2), upper=(0.6, 0.2, 0.6), frame_b="panda_hand"):
    c = PositionConstraint(frame_a="panda_link0", frame_b=frame_b)
    c.lower.x, c.lower.y, c.lower.z = lower
    c.upper.x, c.upper.y, c.upper.z = upper
    c.x_abar_a.orientation.w = 1.0
    return c


def _goal_pose(attr, value):
    def mutate(goal):
        obj_name, field = attr.split(".")
        setattr(getattr(goal.pose_goals[0].target.pose, obj_name), field, value)
    return mutate


def _goal_zero_quaternion(goal):
    o = goal.pose_goals[0].target.pose.orientation
    o.x = o.y = o.z = o.w = 0.0


def _add(field, item):
    def mutate(goal):
        setattr(goal, field, list(getattr(goal, field)) + [item])
    return mutate


def _orientation(theta_bound=0.1, frame="panda_hand", w=1.0):
    c = OrientationConstraint(frame_abar="panda_link0", frame_bbar=frame,
                              theta_bound=theta_bound)
    c.r_abar_a.w, c.r_bbar_b.w = w, 1.0
    return c


def _goal_seed(names, positions):
    def mutate(goal):
        goal.seed.name, goal.seed.position = list(names), [float(v) for v in positions]
    return mutate


def _locked(names, positions):
    def mutate(goal):
        goal.locked_joints.name = list(names)
        goal.locked_joints.position = [float(v) for v in positions]
    return mutate


BAD_GOALS = {
    "nan_pose_goal": (_goal_pose("position.y", math.nan), C.INVALID_GOAL,
                      "pose_goals[0]"),
    "zero_quaternion_pose_goal": (_goal_zero_quaternion, C.INVALID_GOAL,
                                  "quaternion"),
    "nan_box": (_add("position_constraints", box(lower=(math.nan, 0.0, 0.0))),
                C.INVALID_GOAL, "NaN"),
    "inf_box_offset": (_add("position_constraints", box()), None, None),
    "unknown_constraint_frame": (_add("position_constraints", box(frame_b="nowhere")),
                                 C.FRAME_NOT_FOUND, "nowhere"),
    "negative_theta_bound": (_add("orientation_constraints", _orientation(-1.0)),
                             C.INVALID_GOAL, "theta_bound"),
    "nan_theta_bound": (_add("orientation_constraints", _orientation(math.nan)),
                        C.INVALID_GOAL, "theta_bound"),
    "zero_quaternion_constraint": (_add("orientation_constraints", _orientation(w=0.0)),
                                   C.INVALID_GOAL, "r_abar_a"),
    "unknown_group": (lambda g: setattr(g, "group_name", "legs"), C.INVALID_GROUP, "legs"),
    "unknown_solver": (lambda g: setattr(g, "solver", "magic"), C.INVALID_SOLVER, "magic"),
    "seed_out_of_limits": (_goal_seed(ARM, [3.5] + READY[1:]), C.INVALID_SEED,
                           "panda_joint1"),
    "seed_duplicated": (_goal_seed(ARM + ["panda_joint1"], READY + [0.0]), C.INVALID_SEED,
                        "panda_joint1"),
    "locked_unknown_joint": (_locked(["elbow_x"], [0.0]), C.INVALID_GOAL, "elbow_x"),
    "locked_nan": (_locked(["panda_joint1"], [math.nan]), C.INVALID_GOAL, "panda_joint1"),
    # make fuzz: a SUCCESS reported panda_joint5 at 2.94, past its limit of 2.8973
    "locked_out_of_limits": (_locked(["panda_joint5"], [2.9423]), C.INVALID_GOAL,
                             "locked_joints", "panda_joint5"),
    "too_many_constraints": (lambda g: setattr(g, "position_constraints", [box()] * 2000),
                             C.REQUEST_TOO_LARGE, "max_constraints", "100"),
}


def _inf_offset(goal):
    c = box()
    c.x_abar_a.position.x = math.inf
    goal.position_constraints = [c]


BAD_GOALS["inf_box_offset"] = (_inf_offset, C.INVALID_GOAL, "x_abar_a")


@pytest.mark.parametrize("case", sorted(BAD_GOALS))
def test_bad_constrained_ik_goal(served, model, case):
    client, node = served
    mutate, code, *words = BAD_GOALS[case]
    goal = pose_goal(model)
    mutate(goal)
    res = run_goal(client, goal)
    assert_rejected(res, code, *words)
    assert node.alive()
    res = run_goal(client, pose_goal(model))
    assert res.error_code.val == C.SUCCESS, res.message
    sol = res.solutions[0].joint_state
    target = T_frame(model, ARM, np.array(READY) + 0.1, "panda_hand")
    assert np.linalg.norm(T_frame(model, sol.name, sol.position, "panda_hand").translation
                          - target.translation) <= 1e-4


# --- joint_states -------------------------------------------------------------------------
def test_garbage_joint_states_are_ignored(served, model):
    client, node = served
    client.publish_joints(ARM, [math.nan] * 7)
    client.publish_joints(ARM + ["nobody"], READY + [1.0])
    msg_pub = client.joint_pub
    from sensor_msgs.msg import JointState
    msg_pub.publish(JointState(name=ARM, position=[0.0] * 3))  # partial lengths
    assert_still_serving(client, node, model)


def test_stale_and_partial_joint_states_still_seed(served, model):
    """Without a seed, joint_states seed the solve however old; the message says how old.

    The target is the hand at the joint_states: the answer is them, fresh or not (a
    stale reading seeded mid-limits before 2026-11-28).
    """
    client, _ = served
    q_state = np.array(READY) + 0.2
    req = good_request(model)
    req.seed.name, req.seed.position = [], []
    req.target.pose = se3_to_pose(T_frame(model, ARM, q_state, "panda_hand"))
    client.publish_joints(ARM, q_state)
    wait_for(lambda: "joint_states" not in client.call(req).message, 10,
             "the node to use the fresh joint_states", client.spin)
    res = client.call(req)
    np.testing.assert_allclose(res.solution.position, q_state, atol=1e-6)
    wait_for(lambda: "seed: the last joint_states" in client.call(req).message, 10,
             "joint_states to go stale", client.spin)
    res = client.call(req)
    assert_verified(model, req, res)
    np.testing.assert_allclose(res.solution.position, q_state, atol=1e-6)
    assert "joint_state_timeout" in res.message
    client.publish_joints(ARM[:5], q_state[:5])  # joints 6 and 7 stay stale
    wait_for(lambda: "of ['panda_joint6', 'panda_joint7']" in client.call(req).message, 10,
             "the node to name the stale joints alone", client.spin)


# --- logs -----------------------------------------------------------------------------
def test_repeated_bad_requests_do_not_flood_the_log(served, model):
    client, node = served
    before = len(node.output())
    req = good_request(model)
    req.target.pose.position.x = math.nan
    answers = call_many(client, [req] * 1000)
    assert all(res.error_code.val == C.INVALID_GOAL for res in answers)
    grown = len(node.output()) - before
    assert grown < 20000, f"log grew by {grown} bytes after 1000 bad requests"


# --- robot_description ------------------------------------------------------------------
def variant_urdf(dz):
    """The Panda with link 4 offset by ``dz`` [m] (same joints, different kinematics)."""
    urdf = robots.urdf_text("panda")
    pattern = r'(<joint name="panda_joint4".*?<origin [^>]*xyz=")([^"]+)(")'
    match = re.search(pattern, urdf, re.S)
    x, y, z = (float(v) for v in match.group(2).split())
    return urdf[:match.start(2)] + f"{x} {y} {z + dz}" + urdf[match.end(2):]


@pytest.fixture(scope="module")
def spare(ros_context, model):
    """A second node whose model the tests replace and break."""
    node, client = start("hv_model")
    try:
        client.publish_description(robots.urdf_text("panda"), robots.srdf_text("panda"))
        client.wait_for_service()
        client.wait_for_model(good_request(model))
        yield client, node
    finally:
        stop(node, client)


def test_empty_malformed_and_missing_mesh_descriptions(spare, model):
    client, node = spare
    for bad, words in (("", "empty"), ("<robot name='x'><link name=", "parse"),
                       ("<robot name='nojoints'><link name='a'/></robot>", "URDF")):
        client.publish_description(bad)
        res = client.wait_for_model(good_request(model), no_model_code=C.SUCCESS)
        assert_rejected(res, C.NO_ROBOT_MODEL, "robot_description", words)
        assert node.alive()
    no_meshes = re.sub(r'filename="[^"]*"', 'filename="package://gone/none.dae"',
                       robots.urdf_text("panda"))
    client.publish_description(no_meshes)
    req = good_request(model)
    assert_verified(model, req, client.wait_for_model(req, no_model_code=C.NO_ROBOT_MODEL))
    # Said when the model arrives (the collision model is built then), before any request
    # that checks collisions; such a request answers NO_ROBOT_MODEL with the same reason.
    wait_for(lambda: "collision checks unavailable" in node.output()
             and "package://gone/none.dae" in node.output(), 20,
             "the start-up warning of the missing mesh", client.spin)
    req.avoid_collisions = True
    assert_rejected(client.call(req), C.NO_ROBOT_MODEL, "package://gone/none.dae")
    client.semantic_pub.publish(type(client.semantic_pub.msg_type())(data="<robot><grr"))
    wait_for(lambda: "robot_description_semantic rejected" in node.output(), 20,
             "the node to reject the malformed SRDF", client.spin)
    assert_still_serving(client, node, model)


def test_description_replaced_while_solving_never_mixes_models(spare, model):
    """Every answer is consistent with exactly one of the two models."""
    client, node = spare
    other = pin.buildModelFromXML(variant_urdf(0.05))
    q = np.array(READY) + 0.1
    futures = []
    for i in range(40):
        req = good_request(model, timeout=0.2, random_seed=i)
        req.seed.name, req.seed.position = [], []
        req.target.pose.position.z += 0.02 * (i % 3)
        wait_for(lambda: sum(not f.done() for _, f in futures) < 4, 30, "a free slot",
                 client.spin)
        futures.append((req, client.ik.call_async(req)))
        if i % 10 == 5:
            client.publish_description(variant_urdf(0.05 if i % 20 == 5 else 0.0))
    wait_for(lambda: all(f.done() for _, f in futures), 60, "every answer", client.spin)
    seen = set()
    for req, future in futures:
        res = future.result()
        assert res.error_code.val in (C.SUCCESS, C.NO_SOLUTION), res.message
        errors = []
        for name, m in (("panda", model), ("variant", other)):
            T_target = pin.XYZQUATToSE3(np.array(_xyzquat(req.target.pose)))
            T = T_frame(m, res.solution.name, res.solution.position, "panda_hand")
            errors.append((np.linalg.norm(T.translation - T_target.translation), name))
        err, name = min(errors)
        assert abs(err - res.position_error) < 1e-9, (errors, res.position_error)
        seen.add(name)
    assert seen == {"panda", "variant"}, seen
    assert node.alive()
    del q


def test_diagnostics_count_joint_states_and_their_worst_gap(served):
    """~/diagnostics (read by make load) reports joint_states callbacks once a second."""
    import json
    from std_msgs.msg import String
    client, _ = served
    seen = []
    sub = client.node.create_subscription(
        String, "/hv/ik_node/diagnostics",
        lambda msg: seen.append(json.loads(msg.data)["joint_states"]), 10)
    try:
        def streamed():  # ~50 Hz; a window's first gap may reach back to older states
            client.publish_joints(ARM, READY)
            return any(d["messages"] >= 5 and d["max_gap_s"] < 0.5 for d in seen)
        wait_for(streamed, 15, "a diagnostics window of a steady stream", client.spin)
        assert all(d["max_gap_s"] >= 0.0 for d in seen)
    finally:
        client.node.destroy_subscription(sub)
