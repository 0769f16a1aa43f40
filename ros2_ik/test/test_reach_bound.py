"""The reach bound and the proof built on it (issue 48): sound everywhere, and immediate.

Soundness is checked against pinocchio FK on the full model, outside the bound's code:
every placement of random configurations lies inside the sphere, on every chain of every
example-robot-data URDF (in test_every_chain.py, which builds them all), the vendor arms
(test_vendor_arms.py) and random arms (bench/random_arms.py, prismatic joints and
unaligned axes included); FK targets are never proven unreachable.  A target beyond the
bound answers NO_SOLUTION with the reason from every solver, after one attempt.
"""
import math
import sys
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

from ros2_ik.core import PoseTarget, Robot, robots, solve
from ros2_ik.core.constraints import PositionConstraint
from ros2_ik.core.kinematics.reach import reach_bound
from ros2_ik.core.problem import Problem
from ros2_ik.core.solvers import proofs
from ros2_ik.core.solvers.options import SolveOptions

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from random_arms import random_arm  # noqa: E402

SAMPLES = 30


def assert_bound_holds(group, frame: str, rng: np.random.Generator, samples: int = SAMPLES):
    """Every FK placement of ``frame`` lies in the bound; FK targets are never proven out."""
    model = group.robot.model
    fid = group.robot.frame_id(frame)  # a link's frame, when a joint shares its name
    bound = reach_bound(group, fid)
    assert bound is not None, (group, frame)
    centre = np.array(bound.centre)
    data = model.createData()
    for _ in range(samples):
        q = group.random_configuration(rng)
        pin.framesForwardKinematics(model, data, group.to_full_q(q))
        p = data.oMf[fid].translation
        assert np.linalg.norm(p - centre) <= bound.radius_m * (1 + 1e-9) + 1e-9, (
            group, frame, np.linalg.norm(p - centre), bound)
    problem = Problem(group, PoseTarget(frame, pin.SE3(data.oMf[fid])))
    assert proofs.no_solution(problem, SolveOptions()) is None
    return bound


@pytest.mark.parametrize("seed", range(100, 112))
@pytest.mark.parametrize("mixed", [False, True], ids=["revolute", "mixed"])
def test_the_bound_holds_on_random_arms(seed, mixed):
    """Random arms, with prismatic joints and unaligned axes when ``mixed``."""
    arm = random_arm(seed, mixed=mixed)
    group = Robot.from_urdf(arm.urdf).group(base=arm.base, tip=arm.tip)
    assert_bound_holds(group, arm.tip, np.random.default_rng(seed), samples=200)


def _ur5():
    return robots.load_group("ur5")[1]


def test_the_bound_is_not_loose_on_a_catalogue_arm():
    """The UR5's bound is at most 20 % above the farthest of many FK placements."""
    group = _ur5()
    bound = reach_bound(group, group.robot.model.getFrameId(group.tip))
    rng = np.random.default_rng(1)
    far = max(np.linalg.norm(group.fk(group.random_configuration(rng), group.tip).translation
                             - np.array(bound.centre)) for _ in range(3000))
    assert far <= bound.radius_m <= 1.2 * far, (far, bound)


def _beyond(group, distance_m: float) -> PoseTarget:
    bound = reach_bound(group, group.robot.model.getFrameId(group.tip))
    T = pin.SE3(np.eye(3), np.array(bound.centre) + np.array([distance_m, 0.0, 0.0]))
    return PoseTarget(group.tip, T)


@pytest.mark.parametrize("solver", ["lm", "dls", "bfgs", "sqp"])
def test_a_target_beyond_the_bound_answers_at_once_with_the_reason(solver):
    group = _ur5()
    bound = reach_bound(group, group.robot.model.getFrameId(group.tip))
    target = _beyond(group, bound.radius_m + 1.0)
    result = solve(group, target, group.mid_configuration(), solver=solver, timeout_s=1.0)
    assert result.status.name == "NO_SOLUTION" and result.restarts == 0
    assert "reach" in result.message and f"{bound.radius_m + 1:.2f} m" in result.message
    # The best available configuration (the one attempt's end), its error measured here.
    assert group.within_limits(result.q)
    reached = group.fk(result.q, group.tip).translation
    error = np.linalg.norm(reached - target.T_ref_target.translation)
    assert result.position_error_m == pytest.approx(error, abs=1e-9)
    assert error >= 1.0 - 1e-9  # the target lies 1 m beyond every reachable position


def test_just_inside_the_tolerance_is_not_proven():
    """A target beyond the radius by less than the position tolerance is left to the search."""
    group = _ur5()
    bound = reach_bound(group, group.robot.model.getFrameId(group.tip))
    target = _beyond(group, bound.radius_m + 0.5e-4)
    assert proofs.no_solution(Problem(group, target), SolveOptions()) is None
    far = _beyond(group, bound.radius_m + 2e-4)
    assert proofs.no_solution(Problem(group, far), SolveOptions()) is not None


def test_a_target_at_the_end_of_the_floats_gets_a_short_reason():
    """1e300 m away: proven at once, and the reason says 1e+300, not 300 digits."""
    group = _ur5()
    reason = proofs.no_solution(Problem(group, _beyond(group, 1e300)), SolveOptions())
    assert reason is not None and "1e+300 m from" in reason and len(reason) < 200, reason


def test_free_position_axes_measure_the_distance_to_a_line():
    """A free axis accepts a line of positions: far along it is not beyond the bound."""
    group = _ur5()
    bound = reach_bound(group, group.robot.model.getFrameId(group.tip))
    along_z = pin.SE3(np.eye(3), np.array(bound.centre) + [0.0, 0.0, 5.0])
    free_z = PoseTarget(group.tip, along_z, weights=(1, 1, 0, 0, 0, 0))
    assert proofs.no_solution(Problem(group, free_z), SolveOptions()) is None
    beside = pin.SE3(np.eye(3), np.array(bound.centre) + [bound.radius_m + 0.1, 0.0, 5.0])
    free_z = PoseTarget(group.tip, beside, weights=(1, 1, 0, 0, 0, 0))
    assert "reach" in proofs.no_solution(Problem(group, free_z), SolveOptions())


def test_a_position_box_beyond_the_bound_is_proven_out():
    group = _ur5()
    model = group.robot.model
    bound = reach_bound(group, model.getFrameId(group.tip))
    c = np.array(bound.centre)
    lower = c + [bound.radius_m + 0.5, -0.1, -0.1]  # a box 0.5 m beyond the bound along x
    upper = c + [bound.radius_m + 1.0, 0.1, 0.1]
    far = PositionConstraint(model, group.base, lower, upper, group.tip, [0.0, 0.0, 0.0])
    base = group.locked_placement(model.getFrameId(group.base))
    assert np.allclose(base.homogeneous, np.eye(4))  # the box's frame is the world here
    result = solve(group, Problem(group, None, [far]), group.mid_configuration(),
                   timeout_s=1.0)
    assert result.status.name == "NO_SOLUTION" and "position" in result.message, result
    # The point Q offset 1 m from the tip reaches the box: no proof.
    offset = PositionConstraint(model, group.base, lower, upper, group.tip, [0.0, 0.6, 0.0])
    assert proofs.no_solution(Problem(group, None, [offset]), SolveOptions()) is None
    # An open box (infinite bounds) is never proven out.
    open_box = PositionConstraint(model, group.base, [-math.inf] * 3, upper, group.tip,
                                  [0.0, 0.0, 0.0])
    assert proofs.no_solution(Problem(group, None, [open_box]), SolveOptions()) is None


def test_a_registered_proof_answers_and_can_be_removed():
    """The hook other proofs use (a closed-form solver's, say): called before any attempt.

    The Panda's hand below its base: out of reach, inside the bound (no reach proof).
    A proof's answer is still one attempt, whose verified SUCCESS would win over it.
    """
    group = robots.load_group("panda")[1]
    below = PoseTarget(group.tip, pin.SE3(np.eye(3), np.array([0.0, 0.0, -0.5])))
    reachable = PoseTarget(group.tip, group.fk(group.mid_configuration(), group.tip))
    assert proofs.no_solution(Problem(group, below), SolveOptions()) is None
    calls = []

    def never(problem, options, deadline):
        calls.append(problem)
        return "proven by the test"

    proofs.register(never)
    try:
        result = solve(group, below, group.mid_configuration(), timeout_s=1.0)
        assert result.status.name == "NO_SOLUTION" and "proven by the test" in result.message
        assert result.restarts == 0 and len(calls) == 1
        assert solve(group, reachable, group.mid_configuration()).status.name == "SUCCESS"
    finally:
        proofs.unregister(never)
    assert proofs.no_solution(Problem(group, below), SolveOptions()) is None


def test_a_locked_floating_base_keeps_the_bound_a_moving_one_has_none():
    """An arm group of a robot loaded with a free-flyer root: the same bound as without it.

    The group locks the base where it holds it, as any joint above its first moving one,
    so a target 50 m away is proven unreachable at once (there was no bound, and such a
    request ran its whole timeout).  A whole-body group moves the base: no finite
    sphere holds the hand, no bound, no proof.
    """
    fixed = Robot.from_urdf(robots.urdf_text("panda"))
    fixed = fixed.group(base="panda_link0", tip="panda_hand")
    model = pin.buildModelFromXML(robots.urdf_text("panda"), pin.JointModelFreeFlyer())
    robot = Robot(model)
    group = robot.group(base="panda_link0", tip="panda_hand")
    bound = reach_bound(group, robot.frame_id(group.tip))
    expected = reach_bound(fixed, fixed.robot.frame_id(fixed.tip))
    assert bound is not None and bound.radius_m == pytest.approx(expected.radius_m)
    np.testing.assert_allclose(bound.centre, expected.centre, atol=1e-12)
    far = PoseTarget(group.tip, pin.SE3(np.eye(3), np.array([50.0, 0.0, 0.0])))
    assert "50.00 m" in proofs.no_solution(Problem(group, far), SolveOptions())
    whole = robot.whole_body(tip="panda_hand")
    assert reach_bound(whole, robot.frame_id(whole.tip)) is None
    far = PoseTarget(whole.tip, pin.SE3(np.eye(3), np.array([50.0, 0.0, 0.0])))
    assert proofs.no_solution(Problem(whole, far), SolveOptions()) is None
