"""Joints outside a group are held where the robot holds them (node/upstream.py).

TIAGo's arm group (``torso_lift_link`` -> ``arm_tool_link``) hangs from the torso lift, a
joint outside the group.  A target in ``base_footprint`` is reached on the robot only when
the solve holds the lift where the robot holds it: the request's seed, else fresh
joint_states.  Every answer is checked here by pinocchio's FK of the full model at the
robot's own lift height (not the node's), 1e-4 m.  PR2's right arm, checking collisions,
must keep clear of the left arm where joint_states put it, not where it would be at zero.
"""
import math
import time
from collections import Counter
from functools import lru_cache

import numpy as np
import pinocchio as pin
import pytest
from hypothesis import given
from hypothesis import strategies as st

import node_inputs
from fuzz_answers import counted, examples, lie, sendable
from panda_node import T_frame
from geometry_msgs.msg import Pose
from sensor_msgs.msg import JointState
from ros2_ik.core.model.robots import ARMS, data_dir
from ros2_ik.node import compute_ik as C
from ros2_ik.node import constrained_ik as CI
from ros2_ik.node.conversions import se3_to_pose
from ros2_ik.node.robot_source import JointStateCache
from ros2_ik.node.upstream import VARIANTS
from ros2_ik_interfaces.action import ConstrainedIK
from ros2_ik_interfaces.msg import IKErrorCode, PoseGoal, PositionConstraint
from ros2_ik_interfaces.srv import ComputeIK

LIFT = "torso_lift_joint"
SPEC = ARMS["tiago"]


@pytest.fixture(scope="module")
def tiago():
    return node_inputs.tiago_arm()


def _robot_tip(snapshot, names, values) -> pin.SE3:
    """``T_base_footprint_tool`` of the full model at ``names = values``, others at 0."""
    return T_frame(snapshot.robot.model, names, values, SPEC.tip)


def _request(T: pin.SE3, seed_names=(), seed_positions=()) -> ComputeIK.Request:
    request = ComputeIK.Request()
    request.group_name = "arm"
    request.target.header.frame_id = "base_footprint"
    request.target.pose = _pose(T)
    request.timeout = 0.5
    request.seed.name = list(seed_names)
    request.seed.position = [float(v) for v in seed_positions]
    return request


def _pose(T: pin.SE3) -> Pose:
    pose = Pose()
    pose.position.x, pose.position.y, pose.position.z = T.translation.tolist()
    q = pin.Quaternion(T.rotation)
    pose.orientation.x, pose.orientation.y, pose.orientation.z, pose.orientation.w = \
        q.x, q.y, q.z, q.w
    return pose


def _arm(snapshot, cfg, name="arm"):
    return C.resolve_group(snapshot, cfg, name, "", "")[0]


def _solve(snapshot, cfg, joints, request):
    return C.compute_ik(snapshot, "", cfg, joints, request).response


def _reached(snapshot, response, lift: float, T: pin.SE3) -> float:
    """Distance [m] of the tool, at the answer and lift height ``lift``, from ``T``."""
    names = list(response.solution.name) + [LIFT]
    values = list(response.solution.position) + [lift]
    return float(np.linalg.norm(_robot_tip(snapshot, names, values).translation
                                - T.translation))


def test_the_lift_carries_the_arm(tiago):
    snapshot, cfg = tiago
    assert _arm(snapshot, cfg).upstream == (LIFT,)


@pytest.mark.parametrize("lift", [0.0, 0.12, 0.3])
def test_joint_states_place_the_lift(tiago, lift):
    snapshot, cfg = tiago
    arm = _arm(snapshot, cfg)
    q = arm.mid_configuration() + 0.2
    T = _robot_tip(snapshot, list(arm.joint_names) + [LIFT], list(q) + [lift])
    joints = JointStateCache()
    joints.update([LIFT] + list(arm.joint_names), [lift] + list(arm.mid_configuration()))
    response = _solve(snapshot, cfg, joints, _request(T))
    assert response.error_code.val == IKErrorCode.SUCCESS, response.message
    assert _reached(snapshot, response, lift, T) < 1e-4


def test_the_request_seed_names_the_lift_over_joint_states(tiago):
    snapshot, cfg = tiago
    arm = _arm(snapshot, cfg)
    q = arm.mid_configuration() - 0.1
    T = _robot_tip(snapshot, list(arm.joint_names) + [LIFT], list(q) + [0.2])
    joints = JointStateCache()
    joints.update([LIFT], [0.05])
    names = list(arm.joint_names) + [LIFT]
    request = _request(T, names, list(arm.mid_configuration()) + [0.2])
    response = _solve(snapshot, cfg, joints, request)
    assert response.error_code.val == IKErrorCode.SUCCESS, response.message
    assert _reached(snapshot, response, 0.2, T) < 1e-4


def test_without_a_value_the_reply_says_where_the_lift_was_held(tiago):
    snapshot, cfg = tiago
    arm = _arm(snapshot, cfg)
    T = _robot_tip(snapshot, arm.joint_names, arm.mid_configuration() + 0.2)
    response = _solve(snapshot, cfg, JointStateCache(), _request(T))
    assert response.error_code.val == IKErrorCode.SUCCESS, response.message
    assert f"held at {LIFT}=0" in response.message


def _stale(joints: JointStateCache, names, values, cfg):
    """``cfg`` with a joint_state_timeout the readings of ``names`` in ``joints`` exceed."""
    joints.update(list(names), list(values))
    time.sleep(0.03)
    return node_inputs.config(cfg.groups, joint_state_timeout=0.01)


def test_a_lift_whose_joint_states_paused_is_held_at_its_last_reading(tiago):
    """Not at the group's 0: the robot's lift is where it was last seen (0.3 m; held at 0,
    the answer was 0.3 m off on the robot), and the reply says the reading was old."""
    snapshot, cfg = tiago
    arm = _arm(snapshot, cfg)
    T = _robot_tip(snapshot, list(arm.joint_names) + [LIFT],
                   list(arm.mid_configuration() + 0.2) + [0.3])
    joints = JointStateCache()
    stale = _stale(joints, [LIFT], [0.3], cfg)
    response = _solve(snapshot, stale, joints, _request(T))
    assert response.error_code.val == IKErrorCode.SUCCESS, response.message
    assert _reached(snapshot, response, 0.3, T) < 1e-4
    assert "held at their last joint_states" in response.message
    assert LIFT in response.message and "joint_state_timeout 0.01 s" in response.message


@pytest.mark.parametrize("lift", [float("nan"), float("inf"), 5.0, -0.01])
def test_a_lift_in_the_seed_outside_its_limits_is_refused(tiago, lift):
    snapshot, cfg = tiago
    arm = _arm(snapshot, cfg)
    T = _robot_tip(snapshot, arm.joint_names, arm.mid_configuration())
    response = _solve(snapshot, cfg, JointStateCache(), _request(T, [LIFT], [lift]))
    assert response.error_code.val == IKErrorCode.INVALID_SEED
    assert LIFT in response.message


def test_a_lift_just_past_its_limit_is_clamped(tiago):
    snapshot, cfg = tiago
    arm = _arm(snapshot, cfg)
    top = snapshot.robot.joint_limits(LIFT)[1]
    q = arm.mid_configuration() + 0.1
    T = _robot_tip(snapshot, list(arm.joint_names) + [LIFT], list(q) + [top])
    request = _request(T, list(arm.joint_names) + [LIFT],
                       list(arm.mid_configuration()) + [top + 5e-4])
    response = _solve(snapshot, cfg, JointStateCache(), request)
    assert response.error_code.val == IKErrorCode.SUCCESS, response.message
    assert _reached(snapshot, response, top, T) < 1e-4


def test_the_action_holds_the_lift_too(tiago):
    snapshot, cfg = tiago
    arm = _arm(snapshot, cfg)
    T = _robot_tip(snapshot, list(arm.joint_names) + [LIFT],
                   list(arm.mid_configuration() + 0.15) + [0.25])
    goal = ConstrainedIK.Goal()
    goal.group_name = "arm"
    pose_goal = PoseGoal()
    pose_goal.tip_link = SPEC.tip
    pose_goal.target.header.frame_id = "base_footprint"
    pose_goal.target.pose = _pose(T)
    goal.pose_goals = [pose_goal]
    goal.timeout = 0.5
    joints = JointStateCache()
    joints.update([LIFT], [0.25])
    result = CI.solve_goal(snapshot, "", cfg, joints, goal, lambda: False)
    assert result.error_code.val == IKErrorCode.SUCCESS, result.message
    solution = result.solutions[0].joint_state
    assert LIFT not in solution.name  # the group's joints: the lift is not sent
    tip = _robot_tip(snapshot, list(solution.name) + [LIFT], list(solution.position) + [0.25])
    assert np.linalg.norm(tip.translation - T.translation) < 1e-4


def test_held_groups_are_kept_per_lift_height_and_bounded(tiago):
    snapshot, cfg = tiago
    arm = _arm(snapshot, cfg)
    T = _robot_tip(snapshot, arm.joint_names, arm.mid_configuration())
    seen = []
    for k in range(VARIANTS + 2):
        request = _request(T, [LIFT], [0.01 * (k + 1)])
        group = C.held_group(snapshot, arm, request.seed.name, request.seed.position,
                             JointStateCache(), cfg)
        assert group.locked[LIFT] == pytest.approx(0.01 * (k + 1))
        seen.append(group)
    again = C.held_group(snapshot, arm, [LIFT], [0.01 * (VARIANTS + 2) + 1e-8],
                         JointStateCache(), cfg)
    assert again is seen[-1]  # within the rounding: the same group
    assert len(snapshot._variants[arm]) == VARIANTS
    assert C.held_group(snapshot, arm, [LIFT], [0.0], JointStateCache(), cfg) is arm


#: Codes a fuzzed request may get (counted: anything else, or INTERNAL_ERROR, fails).
STATS: Counter = Counter()
LIFTS = st.one_of(st.floats(-0.1, 0.45), st.sampled_from([math.nan, math.inf, -1e300, 1e300]))


@st.composite
def held_requests(draw):
    """A target made at one lift height, and the lift as the seed and joint_states give it."""
    q = draw(st.lists(st.floats(-1.0, 1.0), min_size=7, max_size=7))
    made_at = draw(st.floats(0.0, 0.35))
    in_seed = draw(st.one_of(st.none(), LIFTS))
    in_states = draw(st.one_of(st.none(), LIFTS))
    return np.array(q), made_at, in_seed, in_states


@examples("ROS2_IK_FUZZ_UPSTREAM", 30)
@given(held_requests())
def test_fuzz_the_lift_of_seeds_and_joint_states(tiago, case):
    check_held_request(case, tiago)


def check_held_request(case, tiago=None) -> None:
    """Every answer has a known code; a SUCCESS reaches the target at the lift it held.

    Held where the target was made, the answer is SUCCESS.  The lift held: the seed's
    when it names one within its limits (1e-3 past them: clamped), else joint_states'
    (clamped; a non-finite one is not stored), else 0.  ``tiago``: ``(snapshot, config)``
    (None: :func:`node_inputs.tiago_arm`'s, made once; ``make fuzz`` calls it so).
    """
    snapshot, cfg = tiago or _tiago_once()
    q, made_at, in_seed, in_states = case
    arm = _arm(snapshot, cfg)
    q = np.clip(arm.mid_configuration() + q, arm.lower, arm.upper)
    T = _robot_tip(snapshot, list(arm.joint_names) + [LIFT], list(q) + [made_at])
    joints = JointStateCache()
    if in_states is not None:
        joints.update([LIFT], [in_states])
    names, positions = list(arm.joint_names), list(arm.mid_configuration())
    if in_seed is not None:
        names, positions = names + [LIFT], positions + [in_seed]
    request = _request(T, names, positions)
    request.timeout = 0.05
    response = _solve(snapshot, cfg, joints, request)
    what = (q.tolist(), made_at, in_seed, in_states)
    counted(STATS, response.error_code.val, response.message, what)
    sendable(STATS, response, what)
    lo, hi = snapshot.robot.joint_limits(LIFT)
    if in_seed is not None and not lo - 1e-3 <= in_seed <= hi + 1e-3:
        assert response.error_code.val == IKErrorCode.INVALID_SEED, what
        return
    held = in_seed if in_seed is not None else (
        in_states if in_states is not None and math.isfinite(in_states) else 0.0)
    held = min(max(held, lo), hi)
    if abs(held - made_at) < 1e-9:  # held where the target was made: it has a solution
        assert response.error_code.val == IKErrorCode.SUCCESS, (response.message, what)
    if response.error_code.val != IKErrorCode.SUCCESS:
        return
    miss = _reached(snapshot, response, held, T)
    lie(STATS, f"the tool misses the target by {miss:.3g} m at lift {held}"
        if miss > 1e-4 + 1e-6 else "", what)


@lru_cache(maxsize=1)
def _tiago_once():
    return node_inputs.tiago_arm()


@pytest.fixture(scope="module")
def pr2():
    folder = data_dir() / "pr2_description"
    snapshot = node_inputs.snapshot((folder / "urdf/pr2.urdf").read_text(),
                                    (folder / "srdf/pr2.srdf").read_text())
    return snapshot, node_inputs.config()


def _right_hand_to(T: pin.SE3, avoid: bool) -> ComputeIK.Request:
    request = ComputeIK.Request()
    request.group_name = "right_arm"
    request.target.header.frame_id = "base_link"
    request.target.pose = se3_to_pose(T)
    request.weights = [1.0, 1.0, 1.0, 0.0, 0.0, 0.0]
    request.timeout = 0.3
    request.avoid_collisions = avoid
    return request


def test_collision_checks_see_the_other_arm_where_it_is(pr2):
    """The right wrist sent where the left wrist is: only the real left arm is in the way.

    With the left arm at zero (the group's own values), the answer is SUCCESS; with it
    where joint_states put it, that answer would collide on the robot (the checker at
    the answer and the real left arm), and the reply says IN_COLLISION.
    """
    snapshot, cfg = pr2
    left = _arm(snapshot, cfg, "left_arm")
    rng = np.random.default_rng(3)
    lo = np.where(np.isfinite(left.lower), left.lower, -3.0)
    hi = np.where(np.isfinite(left.upper), left.upper, 3.0)
    checker = C.collision_checker(snapshot, cfg)
    for _ in range(40):
        q_left = rng.uniform(lo, hi)
        T = left.fk(q_left, left.tip)
        at_zero = _solve(snapshot, cfg, JointStateCache(), _right_hand_to(T, True))
        if at_zero.error_code.val != IKErrorCode.SUCCESS:
            continue  # the left arm at zero is in the way too: not this case
        joints = JointStateCache()
        joints.update(list(left.joint_names), list(q_left))
        there = _solve(snapshot, cfg, joints, _right_hand_to(T, True))
        assert there.error_code.val == IKErrorCode.IN_COLLISION, there.message
        right = _arm(snapshot, cfg, "right_arm")
        robot = right.held_at(dict(zip(left.joint_names, q_left)))
        q_right = np.array(at_zero.solution.position)
        assert checker.in_collision(robot.to_full_q(q_right))  # at-zero's answer collides
        free = _solve(snapshot, cfg, joints, _right_hand_to(T, False))
        assert free.error_code.val == IKErrorCode.SUCCESS, free.message  # only collisions
        # joint_states that paused: the left arm where they last put it, not at zero.
        paused = JointStateCache()
        stale = _stale(paused, left.joint_names, q_left, cfg)
        late = _solve(snapshot, stale, paused, _right_hand_to(T, True))
        assert late.error_code.val == IKErrorCode.IN_COLLISION, late.message
        assert "held at their last joint_states" in late.message
        return
    pytest.fail("no left-arm configuration gave the case")


def test_joints_beside_the_chain_never_published_are_named(pr2):
    """A collision check that places a joint at its group value says so; a given one not.

    The left arm published but one joint: only that joint (and no mimic joint led by a
    published one) is named; nothing published at all names joints and counts the rest.
    """
    snapshot, cfg = pr2
    right = _arm(snapshot, cfg, "right_arm")
    left = _arm(snapshot, cfg, "left_arm")
    others = [n for n in right.locked if n not in right.upstream
              and n not in left.joint_names]
    joints = JointStateCache()
    joints.update(others + list(left.joint_names[1:]),
                  [0.0] * len(others) + [0.0] * (len(left.joint_names) - 1))
    notes: list = []
    C.held_group(snapshot, right, (), (), joints, cfg, notes, every=True)
    unseen = [n for n in notes if "never in joint_states" in n]
    assert len(unseen) == 1, notes
    assert f"{left.joint_names[0]}=" in unseen[0]
    assert not any(f"{n}=" in unseen[0] for n in left.joint_names[1:])
    notes = []
    C.held_group(snapshot, right, (), (), JointStateCache(), cfg, notes, every=True)
    beside = len([n for n in right.locked if n not in right.upstream])
    assert any(f"and {beside - 3} more" in n for n in notes), notes
    notes = []
    C.held_group(snapshot, right, (), (), JointStateCache(), cfg, notes, every=False)
    assert not any("never in joint_states" in n for n in notes), notes


def test_a_group_held_elsewhere_shares_its_chain_only_when_the_chain_is_the_same(pr2):
    """The 7R sweep found for the right arm serves it with the left arm moved, not lifted."""
    from ros2_ik.core.closed_form import sweep
    from ros2_ik.core.pose import PoseTarget
    from ros2_ik.core.result import IKStatus
    from ros2_ik.core.solve import solve
    snapshot, cfg = pr2
    right = _arm(snapshot, cfg, "right_arm")
    fid = right.robot.frame_id(right.tip)
    found = sweep.of(right, fid)
    assert found is not None, sweep.reason(right, fid)
    beside = right.held_at({"l_shoulder_pan_joint": 0.3}).held_at({"l_elbow_flex_joint": -1})
    lifted = right.held_at({LIFT: 0.2})
    assert beside.chain_owner(fid) is right and sweep.of(beside, fid) is found
    assert lifted.chain_owner(fid) is lifted and sweep.of(lifted, fid) is not found
    for group in (beside, lifted):
        q = group.mid_configuration() + 0.2
        T = group.fk(q, group.tip)
        result = solve(group, PoseTarget(group.tip, T), group.mid_configuration(), "analytic",
                       0.2, 0, 1)
        assert result.status is IKStatus.SUCCESS, result.message
        reached = group.fk(result.q, group.tip)
        assert np.linalg.norm(reached.translation - T.translation) < 1e-4


def test_a_constraint_in_the_head_frame_sees_the_head_where_it_is(pr2):
    """The right wrist within 2 cm of a point 0.6 m ahead of PR2's head, the head turned.

    Checked by our own FK of the full model at the head pan joint_states give.
    """
    snapshot, cfg = pr2
    model = snapshot.robot.model
    goal = ConstrainedIK.Goal()
    goal.group_name = "right_arm"
    goal.tip_link = "r_wrist_roll_link"
    box = PositionConstraint(frame_a="head_tilt_link", frame_b="r_wrist_roll_link")
    box.lower.x, box.lower.y, box.lower.z = 0.58, -0.02, -0.32
    box.upper.x, box.upper.y, box.upper.z = 0.62, 0.02, -0.28
    goal.position_constraints = [box]
    goal.timeout = 0.5
    joints = JointStateCache()
    joints.update(["head_pan_joint"], [-0.6])
    result = CI.solve_goal(snapshot, "", cfg, joints, goal, lambda: False)
    assert result.error_code.val == IKErrorCode.SUCCESS, result.message
    solution = result.solutions[0].joint_state
    names, values = list(solution.name) + ["head_pan_joint"], list(solution.position) + [-0.6]
    p = T_frame(model, names, values, "r_wrist_roll_link", "head_tilt_link").translation
    assert np.all(p >= [0.58 - 1e-4, -0.02 - 1e-4, -0.32 - 1e-4]), p
    assert np.all(p <= [0.62 + 1e-4, 0.02 + 1e-4, -0.28 + 1e-4]), p


def test_a_target_in_the_head_frame_sees_the_head_where_it_is(pr2):
    """A pose given in the turned head's frame (a camera's detection) is met on the robot."""
    snapshot, cfg = pr2
    model = snapshot.robot.model
    right = _arm(snapshot, cfg, "right_arm")
    head = {"head_pan_joint": -0.6, "head_tilt_joint": 0.3}
    names = list(head) + list(right.joint_names)
    T_head_wrist = T_frame(model, names, list(head.values()) + list(
        right.mid_configuration() + 0.2), right.tip, "head_tilt_link")
    request = ComputeIK.Request()
    request.group_name = "right_arm"
    request.target.header.frame_id = "head_tilt_link"
    request.target.pose = se3_to_pose(T_head_wrist)
    request.timeout = 0.5
    joints = JointStateCache()
    joints.update(list(head), list(head.values()))
    response = _solve(snapshot, cfg, joints, request)
    assert response.error_code.val == IKErrorCode.SUCCESS, response.message
    T = T_frame(model, list(head) + list(response.solution.name),
                list(head.values()) + list(response.solution.position), right.tip,
                "head_tilt_link")
    assert np.linalg.norm(T.translation - T_head_wrist.translation) < 1e-4


def test_a_seed_reads_joint_states_however_old(tiago):
    """Paused joint_states still seed a request: the robot was last seen there.

    Never given: mid-limits, and the note names the joints.  Older than
    joint_state_timeout: the last reading, and the note says how old.  The target is the
    tool at that reading, so the answer is the reading itself (mid-limits gave another
    configuration before 2026-11-28).
    """
    snapshot, cfg = tiago
    arm = _arm(snapshot, cfg)
    names = list(arm.joint_names)
    joints = JointStateCache()
    notes: list = []
    assert np.array_equal(C.seed_for(arm, JointState(), joints, cfg, notes),
                          arm.mid_configuration())
    assert notes == [f"seed: mid-limits (joint_states never gave {names})"]
    lo, hi = np.array(arm.lower), np.array(arm.upper)
    q = lo + 0.3 * (hi - lo)
    stale = _stale(joints, names, q, cfg)
    notes = []
    assert np.allclose(C.seed_for(arm, JointState(), joints, stale, notes), q)
    assert len(notes) == 1 and notes[0].startswith(f"seed: the last joint_states of {names}")
    assert "joint_state_timeout=0.01 s" in notes[0]
    T = _robot_tip(snapshot, names, q)
    response = _solve(snapshot, stale, joints, _request(T))
    assert response.error_code.val == IKErrorCode.SUCCESS, response.message
    answer = dict(zip(response.solution.name, response.solution.position))
    assert np.allclose([answer[n] for n in names], q, atol=1e-6)
    assert "seed: the last joint_states" in response.message
