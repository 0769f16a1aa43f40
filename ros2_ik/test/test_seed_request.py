"""The seed's attempt answered without the driver (seed_request) gives the driver's answer.

Same problems, same options: ``lm``'s ``solve`` (which tries :mod:`seed_request` first)
against the restart driver alone (``Solver.solve``), for requests the seed answers and
for requests it does not (the driver then goes on, the attempt counted once); every
SUCCESS verified by :func:`verify.check`.
"""
import math
import time

import numpy as np
import pytest

from ros2_ik.core import costs as K
from ros2_ik.core.problem import Problem
from ros2_ik.core.pose import PoseTarget
from ros2_ik.core.solve import prepare
from ros2_ik.core.solvers import chain_kernel, registry, seed_request
from ros2_ik.core.solvers.lm import LevenbergMarquardt
from ros2_ik.core.solvers import proofs
from ros2_ik.core.solvers.options import SolveOptions
from ros2_ik.core.solvers.budget import Budget
from ros2_ik.core.verify import ConstraintTolerance, check
from test_constraint_kernel import GROUPS, _random_specs, build  # noqa: F401

pytestmark = pytest.mark.skipif(not chain_kernel.available(), reason="numba not installed")
TOL = ConstraintTolerance(1e-4, 1e-4)


class DriverOnly(LevenbergMarquardt):
    """lm without its step 1: the driver makes the seed's attempt itself."""

    def seed_answer(self, problem, seed, options):
        return None


def _both(problem, seed, max_attempts, tolerance=TOL):
    options = SolveOptions(timeout_s=10.0, max_attempts=max_attempts, random_seed=4,
                           constraint_tolerance=tolerance)
    shortcut = registry.create("lm").solve(problem, seed, options)
    driver = DriverOnly().solve(problem, seed, options)
    return shortcut, driver


@pytest.mark.parametrize("name,group", GROUPS[:3], ids=[n for n, _ in GROUPS[:3]])
def test_answers_are_the_drivers(name, group):
    prepare(group, None, constrained=True)
    kinds = set()
    for spec in _random_specs(name, group, 60, seed=13):
        problem, seed = build(spec, group), np.asarray(spec.seed, dtype=float)
        shortcut, driver = _both(problem, seed, max_attempts=3)
        assert shortcut.status == driver.status
        np.testing.assert_array_equal(shortcut.q, driver.q)
        assert (shortcut.restarts, shortcut.iterations) == (driver.restarts, driver.iterations)
        assert shortcut.message == driver.message
        assert [v.name for v in shortcut.violations] == [v.name for v in driver.violations]
        ok = check(group, None, shortcut.q, problem.constraints,
                   group.robot.model.createData(), TOL)[0]
        assert ok == shortcut.success
        kinds.add((shortcut.success, shortcut.restarts))
    assert (True, 0) in kinds  # answered from the seed
    assert any(r > 0 for _, r in kinds)  # and went on to the driver


@pytest.mark.parametrize("arm", ["panda", "ur5"])
def test_answers_with_costs_are_the_drivers(arm):
    """Family g of the benchmark (bounds + posture and position costs): same answers."""
    import constrained_problems as fam
    from ros2_ik.core import robots
    group = robots.load_group(arm)[1]
    prepare(group, None, constrained=True)
    restarts = set()
    for spec in fam.generate("g", arm, group, 40, 3):
        problem, seed = build(spec, group), np.asarray(spec.seed, dtype=float)
        shortcut, driver = _both(problem, seed, max_attempts=3)
        assert shortcut.status == driver.status
        np.testing.assert_array_equal(shortcut.q, driver.q)
        assert (shortcut.restarts, shortcut.iterations) == (driver.restarts, driver.iterations)
        ok = check(group, None, shortcut.q, problem.constraints,
                   group.robot.model.createData(), TOL)[0]
        assert ok == shortcut.success
        restarts.add(shortcut.restarts)
    assert 0 in restarts


def test_seed_answer_is_one_attempt_and_reports_its_time():
    name, group = GROUPS[0]
    prepare(group, None, constrained=True)
    for spec in _random_specs(name, group, 40, seed=2):
        problem, seed = build(spec, group), np.asarray(spec.seed, dtype=float)
        t0 = time.perf_counter()
        result = registry.create("lm").solve(problem, seed, SolveOptions(
            timeout_s=1.0, random_seed=1, constraint_tolerance=TOL))
        wall = time.perf_counter() - t0
        if result.success and result.restarts == 0:
            assert result.message == "1 solution(s) after 1 attempt(s)"
            assert len(result.solutions) == 1 and result.solutions[0].q is result.q
            assert math.isnan(result.position_error_m) and not result.q.flags.writeable
            assert result.solutions[0].distance_to_seed == pytest.approx(
                float(np.linalg.norm(result.q - seed)))
            assert 0 < result.solve_time_s <= wall
            return
    pytest.fail("no request was answered from its seed")


def test_applies_only_where_the_driver_would_stop_at_the_seed():
    name, group = GROUPS[0]
    problem = build(_random_specs(name, group, 1, seed=1)[0], group)
    base = SolveOptions(constraint_tolerance=TOL)
    assert seed_request.applies(problem, base)
    assert not seed_request.applies(problem, SolveOptions(num_solutions=2))
    assert not seed_request.applies(problem, SolveOptions(max_joint_jump_rad=0.5))
    model = group.robot.model
    with_cost = Problem(group, None, problem.constraints,
                        [K.PostureCost(model, group.to_full_q(group.mid_configuration()))])
    assert seed_request.applies(with_cost, base)
    assert not seed_request.applies(with_cost, SolveOptions(feedback=lambda progress: None))
    assert seed_request.applies(problem, SolveOptions(feedback=lambda progress: None))
    target = PoseTarget(group.tip, group.fk(group.mid_configuration(), group.tip))
    assert seed_request.applies(Problem(group, target, problem.constraints), base)
    assert seed_request.applies(Problem(group, target), base)
    assert not seed_request.applies(Problem(group, target), SolveOptions(num_solutions=3))


@pytest.mark.parametrize("arm", ["panda", "ur5", "kinova"])
def test_pose_answers_are_the_drivers(arm):
    """Pose targets (full, position only, a free axis; ur5 and kinova with a closed form):
    the seed's attempt answered as the driver answers, from the same attempt object."""
    from ros2_ik.core import robots
    group = robots.load_group(arm)[1]
    prepare(group, group.tip)
    rng, restarts = np.random.default_rng(7), set()
    for k in range(30):
        T = group.fk(group.random_configuration(rng), group.tip)
        kind = k % 3
        target = PoseTarget(group.tip, T, position_only=kind == 1,
                            weights=(1, 1, 1, 1, 1, 0) if kind == 2 else (1,) * 6)
        problem, seed = Problem(group, target), group.mid_configuration()
        shortcut, driver = _both(problem, seed, 3)
        assert shortcut.status == driver.status
        np.testing.assert_array_equal(shortcut.q, driver.q)
        assert (shortcut.restarts, shortcut.iterations) == (driver.restarts, driver.iterations)
        assert shortcut.message == driver.message
        ok = check(group, problem.pose, shortcut.q, (), group.robot.model.createData(),
                   TOL)[0]
        assert ok == shortcut.success
        restarts.add(shortcut.restarts)
    assert 0 in restarts and len(restarts) > 1


def test_a_seed_outside_a_joint_window_starts_inside_it_as_the_drivers():
    """A joint window (a folded joint-bounds constraint) the seed is outside: the seed's
    attempt starts projected into it, as the driver's first start does (the same answer)."""
    from ros2_ik.core import constraints as C
    from ros2_ik.core import robots
    group = robots.load_group("panda")[1]
    prepare(group, None, constrained=True)
    model, rng = group.robot.model, np.random.default_rng(3)
    name = group.joint_names[0]
    answered = 0
    for _ in range(12):
        q = group.random_configuration(rng)
        T = group.fk(q, group.tip)
        box = C.PositionConstraint(model, "universe", T.translation - 0.005,
                                   T.translation + 0.005, group.tip, np.zeros(3))
        window = C.JointBoundsConstraint(model, {name: (q[0] - 0.1, q[0] + 0.1)})
        problem = Problem(group, None, [box, window])
        assert problem.folded
        seed = group.mid_configuration()
        seed[0] = q[0] + 0.5  # outside the window
        shortcut, driver = _both(problem, seed, 3)
        assert shortcut.status == driver.status
        np.testing.assert_array_equal(shortcut.q, driver.q)
        assert (shortcut.restarts, shortcut.iterations) == (driver.restarts, driver.iterations)
        if shortcut.success:
            assert q[0] - 0.1 - 1e-9 <= shortcut.q[0] <= q[0] + 0.1 + 1e-9
            answered += shortcut.restarts == 0
    assert answered


@pytest.mark.parametrize("robot", ["solo12", "pr2"])
def test_whole_body_answers_with_a_pose_target_are_the_drivers(robot):
    """Contacts, the CoM and a pose target (the whole-body benchmark's): same answers.

    The problems the CoM cannot meet too (NO_SOLUTION naming the term, after the one
    attempt): the proofs run once the seed's attempt has failed, in both.
    """
    import wholebody_problems as wb
    from wholebody_ours import TOL_M, TOL_RAD, OursWholeBody
    ours = OursWholeBody(robot)
    tolerance = ConstraintTolerance(TOL_M, TOL_RAD)
    outcomes = set()
    for p in wb.problems(robot, 6, seed=5):
        for variant in (p, wb.with_impossible_com(p)):
            if variant is None:
                continue
            problem = ours.problem(variant)
            seed = ours.group.from_full_q(ours.to_ours(variant.seed))
            shortcut, driver = _both(problem, seed, 3, tolerance)
            assert shortcut.status == driver.status
            np.testing.assert_array_equal(shortcut.q, driver.q)
            assert (shortcut.restarts, shortcut.iterations) == \
                (driver.restarts, driver.iterations)
            assert shortcut.message == driver.message
            ok = check(ours.group, problem.pose, shortcut.q, problem.constraints,
                       ours.group.full_data(), tolerance)[0]
            assert ok == shortcut.success
            outcomes.add((shortcut.status.name, shortcut.restarts))
    assert ("SUCCESS", 0) in outcomes  # answered from the seed


def test_proofs_run_only_once_the_first_attempt_failed():
    """A solved problem pays no proof; an unsolved one is proven after one attempt."""
    name, group = GROUPS[0]
    prepare(group, None, constrained=True)
    calls = []

    def never(problem, options, deadline):  # a registered proof that proves nothing
        calls.append(problem)
        return None

    proofs.register(never)
    try:
        solved = unsolved = 0
        for spec in _random_specs(name, group, 30, seed=2):
            problem, seed = build(spec, group), np.asarray(spec.seed, dtype=float)
            before = len(calls)
            result = registry.create("lm").solve(problem, seed, SolveOptions(
                timeout_s=1.0, max_attempts=2, random_seed=1, constraint_tolerance=TOL))
            if result.success and result.restarts == 0:
                solved += 1
                assert len(calls) == before
            elif result.restarts > 0:
                unsolved += 1
                assert len(calls) == before + 1
        assert solved and unsolved
    finally:
        proofs.unregister(never)
    # A target beyond reach: NO_SOLUTION after one attempt, the reach bound's reason.
    T = group.fk(group.mid_configuration(), group.tip)
    T.translation += np.array([10.0, 0.0, 0.0])
    problem = Problem(group, PoseTarget(group.tip, T), spec_constraints(name, group))
    result = registry.create("lm").solve(problem, group.mid_configuration(), SolveOptions(
        timeout_s=1.0, random_seed=1, constraint_tolerance=TOL))
    assert result.status.name == "NO_SOLUTION" and result.restarts == 0
    assert "reach" in result.message and "one attempt from the seed" in result.message


def spec_constraints(name, group):
    """The constraints of one random problem on ``group``."""
    return build(_random_specs(name, group, 1, seed=1)[0], group).constraints


def test_a_budget_started_earlier_counts_the_time_before():
    earlier = time.perf_counter() - 0.5
    budget = Budget(1.0, start=earlier)
    assert budget.elapsed() >= 0.5
    assert not budget.expired()
    assert Budget(0.2, start=earlier).expired()
