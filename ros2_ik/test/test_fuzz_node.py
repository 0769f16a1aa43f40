"""Fuzzing the running node with hypothesis: ComputeIK requests and ConstrainedIK goals.

Sensible messages, a third of them with one or two fields broken.  The node must stay
alive; every reply is a SUCCESS that passes our own forward-kinematics check, or a
non-success code with a non-empty message; INTERNAL_ERROR counts as a crash.
``bench/fuzz.py`` runs the same strategies for thousands of messages.
"""
import math
import os
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("rclpy")
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from ament_index_python.packages import get_package_share_directory  # noqa: E402
from panda_node import ARM, READY, at_rest, stop  # noqa: E402
from pose_checks import pose_miss  # noqa: E402
from ros2_ik.core import robots  # noqa: E402
from ros2_ik.node.conversions import se3_to_pose  # noqa: E402
from ros2_ik.node.error_codes import CODE_NAMES  # noqa: E402
from ros2_ik.node.harness import Client, NodeProcess, wait_for  # noqa: E402
from ros2_ik_interfaces.action import ConstrainedIK  # noqa: E402
from ros2_ik_interfaces.msg import (  # noqa: E402
    DistanceConstraint, IKErrorCode, MinimumDistanceUpperBoundConstraint, PoseGoal,
    PositionConstraint)
from ros2_ik_interfaces.srv import ComputeIK  # noqa: E402

#: Node defaults the check falls back to (ros2_ik.yaml) and the fuzz node's caps.
DEFAULT_POS_TOL, DEFAULT_ORI_TOL = 1e-4, 1e-3
PARAMS = {"max_timeout": 0.05, "max_attempts_cap": 5, "max_constraints": 20}
#: Outcomes seen: code names, "crash", "false_success".
STATS: Counter = Counter()

any_float = st.floats(allow_nan=True, allow_infinity=True, width=64)
BAD_NUMBERS = st.one_of(any_float, st.sampled_from(
    [0.0, -1.0, math.nan, math.inf, -math.inf, 1e300, -1e-300, 5e-324]))
NAMES = st.one_of(st.sampled_from(["", "nowhere", "panda_link0", "panda_hand", "panda_link3",
                                   "panda_joint1", "panda_finger_joint1", "universe"]),
                  st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126),
                          max_size=30))


SHAPES = ["panda_hand", "panda_link0", "panda_link2", "panda_link5", "panda_link7"]
GEOMETRY = st.one_of(st.sampled_from(SHAPES), NAMES)
DISTANCE = st.one_of(st.floats(-0.05, 0.6), BAD_NUMBERS)


class Panda:
    """The Panda model rebuilt from its URDF, for the independent check."""

    model = None
    checker = None

    @classmethod
    def get(cls):
        if cls.model is None:
            cls.model = pin.buildModelFromXML(robots.urdf_text("panda"))
        return cls.model

    @classmethod
    def collision(cls):
        """Its collision shapes (the core's hulls), measured by ``constrained_distances``."""
        if cls.checker is None:
            from ros2_ik.core.collision import CollisionChecker
            cls.checker = CollisionChecker.from_urdf(
                cls.get(), robots.urdf_text("panda"), robots.srdf_text("panda"))
        return cls.checker


def fk(names, positions):
    model = Panda.get()
    q = pin.neutral(model)
    for name, value in zip(names, positions):
        q[model.joints[model.getJointId(name)].idx_q] = value
    data = model.createData()
    pin.framesForwardKinematics(model, data, q)
    return data


def frame_T(data, name):
    model = Panda.get()
    return data.oMf[model.getFrameId(name or "universe")]


def check_pose(names, positions, tip, ref, pose_msg, pos_tol, ori_tol, weights,
               position_only) -> str:
    """'' when the returned joints reach the pose within tolerance and limits, else why."""
    model = Panda.get()
    values = np.asarray(positions, dtype=float)
    if len(names) != len(values) or not np.isfinite(values).all():
        return "malformed solution"
    for name, value in zip(names, values):
        iq = model.joints[model.getJointId(name)].idx_q
        if not model.lowerPositionLimit[iq] <= value <= model.upperPositionLimit[iq]:
            return f"{name}={value} outside its limits"
    data = fk(names, values)
    o = pose_msg.orientation
    quat = np.array([o.x, o.y, o.z, o.w]) / np.linalg.norm([o.x, o.y, o.z, o.w])
    p = pose_msg.position
    T_target = frame_T(data, ref) * pin.XYZQUATToSE3(np.array([p.x, p.y, p.z, *quat]))
    return pose_miss(frame_T(data, tip), T_target, weights if len(weights) == 6 else [1.0] * 6,
                     position_only, pos_tol, ori_tol)


# --- strategies ---------------------------------------------------------------------------
@st.composite
def reachable_pose(draw):
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    model = Panda.get()
    q = model.lowerPositionLimit[:7] + rng.random(7) * (
        model.upperPositionLimit[:7] - model.lowerPositionLimit[:7])
    data = fk(ARM, q)
    T = frame_T(data, "panda_link0").actInv(frame_T(data, "panda_hand"))
    return se3_to_pose(T), q


@st.composite
def near_pose(draw):
    """The hand's pose at READY moved by up to 0.2 rad per joint, within the limits."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    model = Panda.get()
    q = np.clip(np.array(READY) + rng.uniform(-0.2, 0.2, 7), model.lowerPositionLimit[:7],
                model.upperPositionLimit[:7])
    data = fk(ARM, q)
    return se3_to_pose(frame_T(data, "panda_link0").actInv(frame_T(data, "panda_hand")))


def _break_pose(draw, pose):
    part = draw(st.sampled_from(["position", "orientation"]))
    field = draw(st.sampled_from(["x", "y", "z"] + (["w"] if part == "orientation" else [])))
    setattr(getattr(pose, part), field, draw(BAD_NUMBERS))


def _break_seed(draw, seed):
    n = draw(st.integers(0, 9))
    seed.name = draw(st.lists(st.one_of(st.sampled_from(ARM), NAMES), min_size=n,
                              max_size=n))
    seed.position = draw(st.lists(st.one_of(st.floats(-4, 4), BAD_NUMBERS),
                                  min_size=max(n - 1, 0), max_size=n + 1))


@st.composite
def compute_ik_requests(draw):
    req = ComputeIK.Request()
    pose, _ = draw(reachable_pose())
    req.target.header.frame_id = "panda_link0"
    req.target.pose = pose
    if draw(st.booleans()):
        req.seed.name, req.seed.position = list(ARM), list(READY)
    req.position_tolerance = draw(st.sampled_from([0.0, 1e-5, 1e-4, 1e-3, 1e-2]))
    req.orientation_tolerance = draw(st.sampled_from([0.0, 1e-4, 1e-3, 1e-2]))
    req.position_only = draw(st.booleans())
    req.solver = draw(st.sampled_from(["", "lm", "dls", "bfgs", "sqp"]))
    req.timeout = draw(st.floats(0.0, 0.05))
    req.max_attempts = draw(st.integers(0, 3))
    req.random_seed = draw(st.integers(-1, 2**31))
    # Sent to the controller a quarter of the time (fresh joint_states at READY: near
    # targets are sent, each braking the move under way; far ones refused), half of those
    # with the move proven clear.
    req.execute = draw(st.sampled_from([False, False, False, True]))
    req.avoid_collisions = req.execute and draw(st.booleans())
    if req.execute and draw(st.booleans()):
        req.target.pose = draw(near_pose())
    # joint_states' velocities with those positions: none (at rest), or, a quarter of the
    # time, the arm moved by another source with no move of the node's under way (braked
    # from where the readings carry it, or refused): one joint at 0.05-0.5 rad/s, well
    # above the at-rest share of its scaled limit, so that each such execute brakes
    velocities = ()
    if req.execute and draw(st.sampled_from([False, False, False, True])):
        speeds = draw(st.lists(st.floats(-0.5, 0.5), min_size=len(ARM), max_size=len(ARM)))
        speeds[draw(st.integers(0, len(ARM) - 1))] = draw(st.sampled_from([-1, 1])) \
            * draw(st.floats(0.05, 0.5))
        velocities = tuple(speeds)
    for _ in range(draw(st.sampled_from([0, 0, 0, 0, 1, 1, 2]))):
        kind = draw(st.sampled_from(["pose", "frame", "seed", "numbers", "names",
                                     "weights"]))
        if kind == "pose":
            _break_pose(draw, req.target.pose)
        elif kind == "frame":
            req.target.header.frame_id = draw(NAMES)
        elif kind == "seed":
            _break_seed(draw, req.seed)
        elif kind == "numbers":
            field = draw(st.sampled_from(["position_tolerance", "orientation_tolerance",
                                          "timeout"]))
            setattr(req, field, draw(BAD_NUMBERS))
            req.max_attempts = draw(st.sampled_from([0, 1, 2**32 - 1]))
            req.random_seed = draw(st.sampled_from([-1, -2**63, 2**63 - 1, 7]))
        elif kind == "names":
            field = draw(st.sampled_from(["group_name", "base_link", "tip_link", "solver"]))
            setattr(req, field, draw(NAMES))
        else:
            req.weights = draw(st.lists(st.one_of(st.floats(0, 5), BAD_NUMBERS),
                                        max_size=8))
    return req, velocities


@st.composite
def constrained_goals(draw):
    goal = ConstrainedIK.Goal()
    goal.group_name = "arm"
    pose, q = draw(reachable_pose())
    pg = PoseGoal(tip_link="panda_hand")
    pg.target.header.frame_id = "panda_link0"
    pg.target.pose = pose
    pg.position_only = draw(st.booleans())
    goal.pose_goals = [pg]
    if draw(st.booleans()):  # a box around the target: feasible
        box = PositionConstraint(frame_a="panda_link0", frame_b="panda_hand")
        p = pose.position
        box.lower.x, box.lower.y, box.lower.z = p.x - 0.05, p.y - 0.05, p.z - 0.05
        box.upper.x, box.upper.y, box.upper.z = p.x + 0.05, p.y + 0.05, p.z + 0.05
        box.x_abar_a.orientation.w = 1.0
        goal.position_constraints = [box]
    goal.timeout = draw(st.floats(0.0, 0.05))
    goal.max_attempts = draw(st.integers(0, 3))
    goal.random_seed = draw(st.integers(-1, 2**31))
    goal.num_solutions = draw(st.integers(0, 2))
    goal.solver = draw(st.sampled_from(["", "lm", "sqp"]))
    for _ in range(draw(st.sampled_from([0, 0, 0, 1, 1, 2]))):
        kind = draw(st.sampled_from(["pose", "seed", "box", "locked", "names", "many",
                                     "distance"]))
        if kind == "pose":
            _break_pose(draw, pg.target.pose)
        elif kind == "seed":
            _break_seed(draw, goal.seed)
        elif kind == "box" and goal.position_constraints:
            box = goal.position_constraints[0]
            setattr(box.lower, draw(st.sampled_from("xyz")), draw(BAD_NUMBERS))
            box.frame_b = draw(st.one_of(st.just("panda_hand"), NAMES))
        elif kind == "locked":
            _break_seed(draw, goal.locked_joints)
        elif kind == "names":
            field = draw(st.sampled_from(["group_name", "base_link", "tip_link", "solver"]))
            setattr(goal, field, draw(NAMES))
        elif kind == "many":
            goal.pose_goals = [pg] * draw(st.integers(0, 40))
        elif kind == "distance":  # robot shapes (no scene here), names and numbers drawn
            goal.distance_constraints = [DistanceConstraint(
                geometry_a=draw(GEOMETRY), geometry_b=draw(GEOMETRY),
                distance_lower=draw(DISTANCE), distance_upper=draw(DISTANCE))]
            goal.minimum_distance_upper_bound_constraints = [
                MinimumDistanceUpperBoundConstraint(bound=draw(DISTANCE))] \
                if draw(st.booleans()) else []
    return goal


# --- checks -------------------------------------------------------------------------------
def check_reply(code: int, message: str, node, request=None) -> None:
    """Count the code; AssertionError on a dead node, INTERNAL_ERROR or an empty message."""
    STATS[CODE_NAMES.get(code, str(code))] += 1
    if not node.alive():
        STATS["crash"] += 1
        raise AssertionError("the node died:\n" + node.output()[-3000:])
    if code == IKErrorCode.INTERNAL_ERROR or code not in CODE_NAMES:
        STATS["crash"] += 1
        raise AssertionError(f"code {code}: {message}; request={request!r}")
    assert code == IKErrorCode.SUCCESS or message.strip(), f"code {code} without a message"


def _tol(value, default):
    return value if value > 0 else default


def check_compute_ik(client, node, drawn) -> int:
    """Call ComputeIK with ``drawn`` = (request, joint_states velocities when executed)."""
    req, velocities = drawn
    if velocities:  # no move of the node's under way: the measured motion counts
        at_rest(client, client.namespace.strip("/"))
    if req.execute:
        client.publish_joints(ARM, READY, velocities)
    res = client.call(req)
    check_reply(res.error_code.val, res.message, node, req)
    if "sent to the controller" in res.message:
        STATS["executed"] += 1
        STATS["executed_braking_a_measured_motion"] += any(velocities)
    if res.error_code.val == IKErrorCode.SUCCESS:
        why = check_pose(res.solution.name, res.solution.position,
                         req.tip_link or "panda_hand", req.target.header.frame_id,
                         req.target.pose, _tol(req.position_tolerance, DEFAULT_POS_TOL),
                         _tol(req.orientation_tolerance, DEFAULT_ORI_TOL), req.weights,
                         req.position_only)
        if why:
            STATS["false_success"] += 1
            raise AssertionError(f"false SUCCESS: {why}")
    return res.error_code.val


def run_goal(client, goal, timeout_s=30.0):
    send = client.action.send_goal_async(goal)
    wait_for(send.done, timeout_s, "goal acceptance", client.spin)
    result = send.result().get_result_async()
    wait_for(result.done, timeout_s, "the action result", client.spin)
    return result.result().result


def check_goal(client, node, goal) -> int:
    res = run_goal(client, goal)
    check_reply(res.error_code.val, res.message, node, goal)
    if res.error_code.val != IKErrorCode.SUCCESS:
        return res.error_code.val
    for sol in res.solutions:
        if sol.error_code.val != IKErrorCode.SUCCESS:
            continue
        js, why = sol.joint_state, ""
        for pg in goal.pose_goals:  # none: a constraint-only problem
            why = why or check_pose(
                js.name, js.position, pg.tip_link, pg.target.header.frame_id,
                pg.target.pose, _tol(pg.position_tolerance, DEFAULT_POS_TOL),
                _tol(pg.orientation_tolerance, DEFAULT_ORI_TOL), pg.weights,
                pg.position_only)
        for box in goal.position_constraints:
            data = fk(js.name, js.position)
            p = frame_T(data, box.frame_a).actInv(frame_T(data, box.frame_b)).translation
            lo = np.array([box.lower.x, box.lower.y, box.lower.z]) - 1e-4
            hi = np.array([box.upper.x, box.upper.y, box.upper.z]) + 1e-4
            if not (np.all(p >= lo) and np.all(p <= hi)):
                why = why or f"hand {p} outside the box"
        why = why or distance_violation(js.name, js.position, goal)
        if why:
            STATS["false_success"] += 1
            raise AssertionError(f"false SUCCESS (action): {why}")
    return res.error_code.val


def distance_violation(names, positions, goal) -> str:
    """Why the goal's distance constraints do not hold at the joint values, or ''."""
    if not (goal.distance_constraints or goal.minimum_distance_upper_bound_constraints):
        return ""
    from constrained_distances import named_distance, pair_distances
    checker, model = Panda.collision(), Panda.get()
    q = pin.neutral(model)
    for name, value in zip(names, positions):
        q[model.joints[model.getJointId(name)].idx_q] = value
    for m in goal.distance_constraints:
        d = named_distance(checker, q, m.geometry_a, m.geometry_b)
        if not m.distance_lower - 1e-4 <= d <= m.distance_upper + 1e-4:
            return f"{m.geometry_a}-{m.geometry_b} at {d} m"
    for m in goal.minimum_distance_upper_bound_constraints:
        nearest = float(pair_distances(checker, q).min())
        if not nearest <= m.bound + 1e-4:
            return f"nearest pair at {nearest} m > {m.bound}"
    return ""


def start_node(namespace="fuzz"):
    """A fuzz ik_node (short max_timeout) with the Panda, and its client."""
    config = os.path.join(get_package_share_directory("ros2_ik"), "config", "panda.yaml")
    node = NodeProcess(params=PARAMS, extra_args=["--params-file", config,
                                                  "-r", f"__ns:=/{namespace}"])
    client = Client(f"{namespace}_client", namespace=f"/{namespace}")
    client.publish_description(robots.urdf_text("panda"), robots.srdf_text("panda"))
    client.publish_joints(ARM, READY)
    client.wait_for_service()
    assert client.action.wait_for_server(timeout_sec=30)
    req = ComputeIK.Request()
    req.target.pose.orientation.w = 1.0
    client.wait_for_model(req)
    return node, client


@pytest.fixture(scope="module")
def served(ros_context):
    node, client = start_node()
    try:
        yield client, node
    finally:
        stop(node, client)


FAST = settings(max_examples=int(os.environ.get("FUZZ_NODE_EXAMPLES", "150")), deadline=None,
                database=None, suppress_health_check=list(HealthCheck))


@FAST
@given(drawn=compute_ik_requests())
def test_compute_ik_fuzz(served, drawn):
    client, node = served
    check_compute_ik(client, node, drawn)


@settings(FAST, max_examples=max(FAST.max_examples // 3, 1))
@given(goal=constrained_goals())
def test_constrained_ik_fuzz(served, goal):
    client, node = served
    check_goal(client, node, goal)
