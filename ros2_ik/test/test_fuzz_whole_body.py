"""Fuzzing whole-body ConstrainedIK goals (talos on a free-flyer) with hypothesis.

The node's goal handler (``solve_goal``, as the action server calls it) gets sensible
whole-body goals, a third of them with one or two fields broken: contacts (held where the
seed puts them, or at a target), support polygons, CoM boxes, the base seed, the
base-motion weight, pose goals.  Every answer is a SUCCESS that passes our own check on a
pinocchio model built here, or a non-success code with a message; an exception or
INTERNAL_ERROR is a crash.  A base seed beyond the world is refused, not searched for
(neither SUCCESS nor NO_SOLUTION nor TIMED_OUT).  ``FUZZ_WHOLE_BODY_EXAMPLES`` sets the
count (bench/fuzz.py runs more).
"""
import functools
import math
from collections import Counter

import numpy as np
import pinocchio as pin
import pytest
from hypothesis import given
from hypothesis import strategies as st

pytest.importorskip("rclpy")

from geometry_msgs.msg import Point, PoseStamped, Transform, Vector3  # noqa: E402
from sensor_msgs.msg import MultiDOFJointState  # noqa: E402

from ros2_ik.core import robots  # noqa: E402
from ros2_ik.core.model.world import MAX_COORDINATE_M  # noqa: E402
from ros2_ik.node.constrained_ik import solve_goal  # noqa: E402
from ros2_ik.node.parameters import GroupConfig  # noqa: E402
from ros2_ik.node.robot_source import JointStateCache  # noqa: E402
from ros2_ik_interfaces.action import ConstrainedIK  # noqa: E402
from fuzz_answers import counted, drawn, examples, lie, sendable  # noqa: E402
from node_inputs import config, snapshot  # noqa: E402
from ros2_ik_interfaces.msg import (  # noqa: E402
    CenterOfMassConstraint, ContactConstraint, IKErrorCode, PoseGoal,
    SupportPolygonConstraint)
from whole_body_checks import SOLE, full_q, inside_by  # noqa: E402

SOLES = ["left_sole_link", "right_sole_link"]
HANDS = ["gripper_left_base_link", "gripper_right_base_link"]
STANDING_Z = 1.02  # the base seed's height [m]: the soles on the ground
#: The node's default tolerances (ros2_ik.yaml), which the goals here leave at 0: a pose
#: target's [m], and how far a constraint may end outside its bounds [m] and [rad]
#: (``ConstrainedIK.Goal.position_tolerance`` / ``orientation_tolerance``).
POS_TOL, CTOL_M, CTOL_RAD, SLACK = 1e-4, 1e-4, 1e-3, 1e-9
STATS: Counter = Counter()

BAD_NUMBERS = st.sampled_from([math.nan, math.inf, -math.inf, -1.0, 0.0, 1e300, -1e-300])
_number = functools.partial(drawn, bad=BAD_NUMBERS)  # a number, or a broken one
NAMES = st.sampled_from(["", "nowhere", "universe", "root_joint", "torso_2_link",
                         "arm_left_7_joint"] + SOLES + HANDS)


class Talos:
    """The node's snapshot (free-flyer under the URDF root) and our own model."""

    snapshot = model = None

    @classmethod
    def load(cls):
        if cls.model is None:
            urdf = (robots.data_dir() / "talos_data/robots/talos_full_v2.urdf").read_text()
            srdf = (robots.data_dir() / "talos_data/srdf/talos.srdf").read_text()
            cls.snapshot = snapshot(urdf, srdf, "floating")
            cls.model = pin.buildModelFromXML(urdf, pin.JointModelFreeFlyer())
        return cls


def _cfg():
    return config({"whole_body": GroupConfig(
        "whole_body", "", "gripper_left_base_link", ("root_joint",))},
        timeout=0.2, max_timeout=0.3)


def _base_seed(draw, broken: bool) -> MultiDOFJointState:
    tf = Transform()
    tf.translation.z, tf.rotation.w = STANDING_Z, 1.0
    msg = MultiDOFJointState(joint_names=["root_joint"], transforms=[tf])
    if broken:
        how = draw(st.sampled_from(["name", "nan", "far", "quaternion", "count"]))
        if how == "name":
            msg.joint_names = [draw(NAMES)]
        elif how == "nan":
            tf.translation.x = math.nan
        elif how == "far":  # beyond the world (MAX_COORDINATE_M): refused, not searched
            tf.translation.x = draw(st.sampled_from([1e300, -1e300, 2e4]))
        elif how == "quaternion":
            tf.rotation.w = 0.0
        else:
            msg.transforms = []
    return msg


def _pose_goal(draw, broken: bool) -> PoseGoal:
    target = PoseStamped()
    target.header.frame_id = draw(NAMES) if broken and draw(st.booleans()) else "universe"
    p = target.pose.position
    p.x, p.y, p.z = (draw(st.floats(0.1, 0.5)), draw(st.floats(-0.4, 0.4)),
                     draw(st.floats(0.7, 1.2)))
    if broken and draw(st.booleans()):
        p.y = draw(BAD_NUMBERS)
    target.pose.orientation.w = 1.0
    tip = draw(NAMES) if broken and draw(st.booleans()) else draw(st.sampled_from(HANDS))
    return PoseGoal(tip_link=tip, target=target, position_only=True,
                    position_tolerance=_number(draw, st.sampled_from([0.0, 1e-3]),
                                               broken and draw(st.booleans())))


def _contact(draw, frame: str, broken: bool) -> ContactConstraint:
    c = ContactConstraint(frame=draw(NAMES) if broken and draw(st.booleans()) else frame,
                          hold_current=draw(st.booleans()) or not broken)
    if not c.hold_current:  # a target anywhere near the ground (a broken goal's)
        c.target.header.frame_id = draw(st.sampled_from(["universe", "", "nowhere"]))
        c.target.pose.position.x = draw(st.one_of(st.floats(-0.3, 0.3), BAD_NUMBERS))
        c.target.pose.orientation.w = draw(st.sampled_from([1.0, 0.0, math.nan]))
    c.position_tolerance = _number(draw, st.sampled_from([0.0, 1e-3]),
                                   broken and draw(st.booleans()))
    c.angle_tolerance = _number(draw, st.sampled_from([0.0, 1e-2]),
                                broken and draw(st.booleans()))
    return c


def _polygon(draw, broken: bool) -> SupportPolygonConstraint:
    frames = list(SOLES)
    points = [Point(x=x, y=y) for x, y in SOLE]
    margin = draw(st.sampled_from([0.0, 0.01, 0.02]))
    normal = Vector3()
    if broken:
        how = draw(st.sampled_from(["frames", "points", "margin", "normal", "one_frame"]))
        if how == "frames":
            frames = draw(st.lists(NAMES, max_size=3))
        elif how == "points":
            points = draw(st.sampled_from([[], [Point(x=math.nan)], points[:2]]))
        elif how == "margin":
            margin = draw(st.one_of(BAD_NUMBERS, st.sampled_from([0.3, 1.0])))
        elif how == "normal":
            normal = Vector3(x=draw(BAD_NUMBERS), z=draw(st.sampled_from([0.0, 1.0])))
        else:
            frames = frames[:1]
    return SupportPolygonConstraint(frames=frames, local_points=points, margin=margin,
                                    normal=normal)


def _com_box(draw, broken: bool) -> CenterOfMassConstraint:
    lo = Vector3(x=-5.0, y=-5.0, z=draw(st.floats(0.0, 0.9)))
    hi = Vector3(x=5.0, y=5.0, z=draw(st.floats(0.9, 2.0)))
    if broken:
        value = draw(st.one_of(BAD_NUMBERS, st.just(9.0)))  # 9: above the upper bound
        setattr(lo, draw(st.sampled_from("xyz")), value)
    return CenterOfMassConstraint(lower=lo, upper=hi)


@st.composite
def whole_body_goals(draw):
    """A talos goal: soles held, CoM in their polygon, a hand; a third with broken fields."""
    broken = set(draw(st.lists(st.sampled_from(
        ["group", "base", "pose", "contact", "polygon", "com", "weight"]),
        max_size=2, unique=True))) if draw(st.integers(0, 2)) == 0 else set()
    goal = ConstrainedIK.Goal(
        group_name=draw(NAMES) if "group" in broken else "whole_body", timeout=0.2,
        random_seed=draw(st.integers(0, 2 ** 31)),
        num_solutions=draw(st.sampled_from([0, 1, 2])))
    goal.seed_base = _base_seed(draw, "base" in broken)
    goal.pose_goals = [_pose_goal(draw, "pose" in broken)
                       for _ in range(draw(st.integers(0, 2)))]
    goal.contact_constraints = [_contact(draw, f, "contact" in broken)
                                for f in SOLES if draw(st.integers(0, 3))]
    if draw(st.booleans()) or "polygon" in broken:
        goal.support_polygon_constraints = [_polygon(draw, "polygon" in broken)]
    if draw(st.integers(0, 3)) == 0 or "com" in broken:
        goal.com_constraints = [_com_box(draw, "com" in broken)]
    goal.base_motion_weight = (_number(draw, st.just(1.0), True) if "weight" in broken
                               else draw(st.sampled_from([0.0, 0.0, 1.0])))
    return goal


# --- our own check of a SUCCESS ----------------------------------------------------------
def _placement(model, data, frame: str) -> pin.SE3:
    return data.oMf[model.getFrameId(frame)]


def _seed_q(model, goal) -> np.ndarray:
    """The node's seed without joint_states: the base seed, every joint mid-range."""
    q = full_q(model, [], [], goal.seed_base.transforms[0])
    q[7:] = 0.5 * (model.lowerPositionLimit[7:] + model.upperPositionLimit[7:])
    return q


def _plane_axes(normal) -> np.ndarray:
    """Two orthonormal rows spanning the plane of ``normal`` (zero: the ground, +z)."""
    n = np.array([normal.x, normal.y, normal.z], dtype=float)
    n = np.array([0.0, 0.0, 1.0]) if not n.any() else n / np.max(np.abs(n))
    return np.linalg.svd(n[None, :] / np.linalg.norm(n))[2][1:]


def _tol(value: float, default: float) -> float:
    """A tolerance of the goal: the node's default unless it is > 0."""
    return value if value > 0 else default


def violation(goal, names, positions, base_tf) -> str:
    """What our own FK says the solution misses ('' when it meets every term)."""
    model = Talos.model
    q = full_q(model, names, positions, base_tf)
    data, seed = model.createData(), model.createData()
    pin.framesForwardKinematics(model, data, q)
    pin.framesForwardKinematics(model, seed, _seed_q(model, goal))
    for i, pg in enumerate(goal.pose_goals):
        # the first is the pose target; the others are boxes inside the ball of their
        # tolerance, each row met within the constraint tolerance (core.problem)
        tol = _tol(pg.position_tolerance, POS_TOL) + (math.sqrt(3.0) * CTOL_M if i else 0.0)
        tol += SLACK
        p = pg.target.pose.position
        ref = pg.target.header.frame_id  # '' and universe: the root frame
        p_W = np.array([p.x, p.y, p.z]) if ref in ("", "universe") else \
            _placement(model, data, ref).act(np.array([p.x, p.y, p.z]))
        err = np.linalg.norm(_placement(model, data, pg.tip_link).translation - p_W)
        if err > tol:
            return f"{pg.tip_link} {err:.2e} m from its target (tolerance {tol:.1e})"
    for c in goal.contact_constraints:
        if c.hold_current:
            T_target = _placement(model, seed, c.frame)
        else:
            pos, quat = c.target.pose.position, c.target.pose.orientation
            T_target = pin.XYZQUATToSE3(np.array([pos.x, pos.y, pos.z, quat.x, quat.y,
                                                  quat.z, quat.w]))
        X = _placement(model, data, c.frame)
        dp = np.linalg.norm(X.translation - T_target.translation)
        da = np.linalg.norm(pin.log3(T_target.rotation.T @ X.rotation))
        if dp > max(c.position_tolerance, 0.0) + CTOL_M + SLACK or \
                da > max(c.angle_tolerance, 0.0) + CTOL_RAD + SLACK:
            return f"contact {c.frame} off by {dp:.2e} m / {da:.2e} rad"
    com = pin.centerOfMass(model, model.createData(), q)
    for poly in goal.support_polygon_constraints:
        plane = _plane_axes(poly.normal)  # (2, 3): points on the plane, along the normal
        corners = np.array([plane @ _placement(model, seed, f).act(np.array([p.x, p.y, p.z]))
                            for f in poly.frames for p in poly.local_points])
        depth = inside_by(plane @ com, corners)
        if depth < poly.margin - CTOL_M - SLACK:
            return f"CoM {depth:.4f} m inside its polygon, margin {poly.margin}"
    for box in goal.com_constraints:
        lo = np.array([box.lower.x, box.lower.y, box.lower.z]) - CTOL_M - SLACK
        hi = np.array([box.upper.x, box.upper.y, box.upper.z]) + CTOL_M + SLACK
        if not (np.all(com >= lo) and np.all(com <= hi)):
            return f"CoM {com} outside its box"
    return ""


def check_goal(goal) -> int:
    """Solve ``goal`` as the action server does; assert what every answer must be."""
    talos = Talos.load()
    try:
        res = solve_goal(talos.snapshot, "", _cfg(), JointStateCache(), goal, lambda: False)
    except Exception as exc:  # the handler must answer, not raise
        STATS["crash"] += 1
        raise AssertionError(f"{type(exc).__name__}: {exc}; goal={goal!r}") from exc
    code = res.error_code.val
    counted(STATS, code, res.message, goal)
    if any(abs(tf.translation.x) > MAX_COORDINATE_M for tf in goal.seed_base.transforms):
        assert code not in (IKErrorCode.SUCCESS, IKErrorCode.NO_SOLUTION,
                            IKErrorCode.TIMED_OUT), f"{res.message}; goal={goal!r}"
    sendable(STATS, res, goal)
    for sol in res.solutions if code == IKErrorCode.SUCCESS else ():
        if sol.error_code.val != IKErrorCode.SUCCESS:
            continue
        assert list(sol.base.joint_names) == ["root_joint"], sol.base.joint_names
        why = violation(goal, sol.joint_state.name, sol.joint_state.position,
                        sol.base.transforms[0])
        lie(STATS, why, goal)
    return code


@examples("FUZZ_WHOLE_BODY_EXAMPLES", 40)
@given(goal=whole_body_goals())
def test_whole_body_goal_fuzz(goal):
    check_goal(goal)


def test_the_unbroken_goal_is_solved():
    """The strategy's sensible goal (soles held, polygon, a hand) is answered SUCCESS."""
    goal = ConstrainedIK.Goal(group_name="whole_body", timeout=1.0, random_seed=1)
    tf = Transform()
    tf.translation.z, tf.rotation.w = STANDING_Z, 1.0
    goal.seed_base = MultiDOFJointState(joint_names=["root_joint"], transforms=[tf])
    target = PoseStamped()
    target.header.frame_id = "universe"
    target.pose.position.x, target.pose.position.y, target.pose.position.z = 0.3, 0.3, 0.8
    target.pose.orientation.w = 1.0
    goal.pose_goals = [PoseGoal(tip_link=HANDS[0], target=target, position_only=True)]
    goal.contact_constraints = [ContactConstraint(frame=f, hold_current=True) for f in SOLES]
    goal.support_polygon_constraints = [SupportPolygonConstraint(
        frames=SOLES, margin=0.02, local_points=[Point(x=x, y=y) for x, y in SOLE])]
    assert check_goal(goal) == IKErrorCode.SUCCESS
