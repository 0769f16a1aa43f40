"""A joint bound on a joint the group does not move is answered at once where it misses.

A joint of the model outside the group (the Panda's finger beside its arm) stays where the
group holds it: a bound or a lock on it holds at every configuration or at none.  Found by
``make fuzz`` (5,000 GetPositionIK requests): a joint constraint on ``panda_finger_joint1``
answered SUCCESS with the finger at 0.02 m outside its window, because the node held the
finger at 0 (the window's edge) rather than where the request put it; and where it
missed, every solve searched its whole timeout.  The node now holds such a joint where the
request puts it (test_node_action), and :func:`proofs.held_joint_proof` answers
NO_SOLUTION naming the joint.  Checked here against the interval itself, written out: the
answer is SUCCESS (verified by pinocchio) exactly when the held value lies in the window.
"""
import math

import numpy as np
import pinocchio as pin
import pytest

from ros2_ik.core import robots
from ros2_ik.core.constraints import JointBoundsConstraint, LockedJointConstraint
from ros2_ik.core.pose import PoseTarget
from ros2_ik.core.result import IKStatus
from ros2_ik.core.solve import solve

FINGER, HELD_AT = "panda_finger_joint1", 0.02  # [m]
TOL = 1e-4  # the solve's default constraint tolerance [m] and [rad]


@pytest.fixture(scope="module")
def panda():
    """(model, the arm with its finger held at HELD_AT, a reachable pose target)."""
    robot, group = robots.load_group("panda")
    held = group.held_at({FINGER: HELD_AT})
    q = held.mid_configuration() + 0.1
    return robot.model, held, PoseTarget(held.tip, held.fk(q, held.tip))


def _reached(model, group, q, target) -> float:
    """Distance [m] from the tip to the target by pinocchio on the full model."""
    data = model.createData()
    pin.framesForwardKinematics(model, data, group.to_full_q(q))
    return float(np.linalg.norm(data.oMf[model.getFrameId(target.frame)].translation
                                - target.T_ref_target.translation))


def test_an_answer_is_a_success_exactly_when_the_held_value_is_in_the_window(panda):
    model, group, target = panda
    rng = np.random.default_rng(4)
    seen = {True: 0, False: 0}
    for k in range(40):
        lo, hi = sorted(rng.uniform(-0.005, 0.045, 2))  # some beyond the limits [0, 0.04]
        lo, hi = max(lo, 0.0), min(hi, 0.04)
        if lo > hi:
            continue
        inside = lo - TOL <= HELD_AT <= hi + TOL
        c = JointBoundsConstraint(model, {FINGER: (lo, hi)})
        r = solve(group, target, group.mid_configuration(), "lm", 0.5, constraints=[c],
                  random_seed=k)
        assert (r.status is IKStatus.SUCCESS) == inside, (lo, hi, r.message)
        if inside:
            assert _reached(model, group, r.q, target) <= 1e-4
        else:
            assert FINGER in r.message and "not a joint of the group" in r.message
            assert r.restarts == 0, r.message  # proven after the first attempt, not searched
        seen[inside] += 1
    assert min(seen.values()) >= 8, seen


def test_a_lock_on_a_held_joint(panda):
    model, group, target = panda
    seed = group.mid_configuration()
    missed = solve(group, target, seed, "lm", 0.5,
                   constraints=[LockedJointConstraint(model, {FINGER: 0.03})])
    assert missed.status is IKStatus.NO_SOLUTION and "held at 0.02 m" in missed.message
    held = solve(group, target, seed, "lm", 0.5,
                 constraints=[LockedJointConstraint(model, {FINGER: HELD_AT})])
    assert held.status is IKStatus.SUCCESS, held.message


def test_a_window_on_the_circle_of_a_held_continuous_joint():
    """PR2's wrist roll (continuous) beside its arm, held at -3.0 rad: ``[2.9, 3.4]`` holds it."""
    robot, _ = robots.load_group("pr2_right")
    group = robot.group(base="torso_lift_link", tip="r_wrist_flex_link")
    held = group.held_at({"r_wrist_roll_joint": -3.0})
    target = PoseTarget(held.tip, held.fk(held.mid_configuration() + 0.1, held.tip),
                        position_only=True)
    for window, ok in (((2.9, 3.4), True), ((-2.9, 2.9), False), ((-3.1, -2.95), True),
                       ((3.4, 3.6), False)):
        c = JointBoundsConstraint(robot.model, {"r_wrist_roll_joint": window})
        r = solve(held, target, held.mid_configuration(), "lm", 0.5, constraints=[c],
                  random_seed=1)
        assert (r.status is IKStatus.SUCCESS) == ok, (window, r.message)
        # -3.0 on the circle against the window, written out: 3.283 = -3.0 + 2 pi
        angle = -3.0 + 2 * math.pi * round((sum(window) / 2 + 3.0) / (2 * math.pi))
        assert (window[0] - TOL <= angle <= window[1] + TOL) == ok


@pytest.mark.parametrize("window, solved", [((0.0, 0.01), False), ((0.015, 0.025), True)])
def test_the_node_holds_the_joint_where_the_request_puts_it(window, solved):
    """The goal's seed puts the finger at 0.02 m: a window holding 0 but not 0.02 misses.

    Before, the node held the finger at the group's value (0) for a goal whose only terms
    besides its pose were joint bounds: the first window answered SUCCESS.
    """
    pytest.importorskip("rclpy")
    import node_inputs
    from ros2_ik.node.constrained_ik import solve_goal
    from ros2_ik.node.conversions import se3_to_pose
    from ros2_ik.node.parameters import GroupConfig
    from ros2_ik.node.robot_source import JointStateCache
    from ros2_ik_interfaces.action import ConstrainedIK
    from ros2_ik_interfaces.msg import IKErrorCode, PoseGoal
    robot, group = robots.load_group("panda")
    snapshot = node_inputs.snapshot(robots.urdf_text("panda"), robots.srdf_text("panda"))
    cfg = node_inputs.config({"arm": GroupConfig("arm", group.base, group.tip)})
    q = group.mid_configuration() + 0.1
    goal = ConstrainedIK.Goal(group_name="arm", timeout=0.3, random_seed=2)
    goal.seed.name = list(group.joint_names) + [FINGER]
    goal.seed.position = [float(v) for v in group.mid_configuration()] + [HELD_AT]
    goal.pose_goals = [PoseGoal(tip_link=group.tip)]
    goal.pose_goals[0].target.header.frame_id = group.base
    goal.pose_goals[0].target.pose = se3_to_pose(group.fk(q, group.tip))
    goal.joint_bounds.joint_names, goal.joint_bounds.lower, goal.joint_bounds.upper = \
        [FINGER], [window[0]], [window[1]]
    result = solve_goal(snapshot, "", cfg, JointStateCache(), goal, lambda: False)
    if not solved:
        assert result.error_code.val == IKErrorCode.NO_SOLUTION, result.message
        assert FINGER in result.message and "held at 0.02" in result.message
        return
    assert result.error_code.val == IKErrorCode.SUCCESS, result.message
    state = result.solutions[0].joint_state
    assert dict(zip(state.name, state.position)).get(FINGER, HELD_AT) == HELD_AT
    reached = group.held_at({FINGER: HELD_AT})
    arm = [dict(zip(state.name, state.position))[n] for n in group.joint_names]
    assert _reached(robot.model, reached, np.array(arm),
                    PoseTarget(group.tip, group.fk(q, group.tip))) <= 1e-4
