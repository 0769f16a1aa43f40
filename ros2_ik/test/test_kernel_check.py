"""The compiled check of candidates against the constraints' own ``measure`` and ``check``.

Each constraint's violation [m or rad] by :class:`kernel_check.KernelCheck` against the
Python class's ``measure`` (largest row), on random problems of every frame-based
constraint type over arms with revolute, continuous, prismatic and locked joints, at
random configurations and at configurations where the constraints are tight; its
yes/no against :func:`verify.check`; and a solve that uses it still reports only
answers the independent check accepts.
"""
import dataclasses
import math

import numpy as np
import pytest

from ros2_ik.core import constraints as C
from ros2_ik.core import robots
from ros2_ik.core.problem import Problem
from ros2_ik.core.solve import solve
from ros2_ik.core.solvers import chain_kernel, constraint_kernel as ck
from ros2_ik.core.solvers import kernel_check
from ros2_ik.core.verify import ConstraintTolerance, check
from test_constraint_kernel import (FRAME_KINDS, GROUPS, RandomProblems,  # noqa: F401
                                    _random_specs, build)

pytestmark = pytest.mark.skipif(not chain_kernel.available(), reason="numba not installed")
TOL = ConstraintTolerance(1e-4, 1e-4)


def _check_of(problem):
    compiled = ck.compile_problem(problem, TOL)
    assert compiled is not None
    state = ck.KernelState(compiled, problem, TOL)
    checker = kernel_check.KernelCheck.of(state)
    assert checker is not None
    return checker


def _python_amounts(problem, q):
    group = problem.group
    model = group.robot.model
    data = model.createData()
    q_full = group.to_full_q(q)
    import pinocchio as pin
    pin.framesForwardKinematics(model, data, q_full)
    return np.array([np.max(np.asarray(c.measure(model, data, q_full))) for c in
                     problem.constraints])


def test_units_are_those_of_the_classes():
    from ros2_ik.core.constraints import registry
    from ros2_ik.core.solvers import _dispatch_jit
    by_code = {0: C.PositionConstraint, 1: C.OrientationConstraint, 2: C.GazeTargetConstraint,
               3: C.AngleBetweenVectorsConstraint, 4: C.PointToPointDistanceConstraint,
               5: C.PointToLineDistanceConstraint, 6: C.ComInSupportPolygonConstraint,
               7: C.CenterOfMassConstraint, 8: C.PolyhedronConstraint}
    assert {k.code: k.cls for k in registry.kinds()} == by_code
    for code, kind in by_code.items():
        assert ("rad" if _dispatch_jit.RADIANS[code] else "m") == kind.unit, kind


@pytest.mark.parametrize("name,group", GROUPS, ids=[n for n, _ in GROUPS])
def test_amounts_match_the_classes_measure(name, group):
    rng = np.random.default_rng(7)
    seen = set()
    for spec in _random_specs(name, group, 40, seed=5):
        problem = build(spec, group)
        checker = _check_of(problem)
        seen.update(type(c).__name__ for c in problem.constraints)
        for _ in range(5):
            q = group.random_configuration(rng)
            np.testing.assert_allclose(checker.measure(q), _python_amounts(problem, q),
                                       rtol=1e-9, atol=1e-12)
    assert len(seen) == 7, seen  # every type the kernel encodes was compared


@pytest.mark.parametrize("name", ["pr2_right", "unaligned"])
def test_amounts_off_the_chain_match_the_full_models(name):
    """The check moves the group's angle model; the measures match the full model's.

    pr2: a whole robot (locked joints, continuous ones), constraints on frames the group
    does not move (the other arm, the head, the world) too; unaligned: a continuous
    joint about an unaligned axis, whose one-angle twin is an unaligned revolute joint.
    """
    group = robots.load_group(name)[1] if name == "pr2_right" else dict(GROUPS)[name]
    rng = np.random.default_rng(11)
    gen = RandomProblems(name, group)
    import pinocchio as pin
    names = [f.name for f in group.robot.model.frames if f.type == pin.FrameType.BODY]
    gen.links = gen.links + [str(n) for n in rng.choice(names, size=min(8, len(names)),
                                                        replace=False)]
    assert group.angle_q
    for _ in range(30):
        spec = gen.problem(rng, 0)
        terms = tuple(t for t in spec.constraints if t.kind in FRAME_KINDS)
        if not terms:
            continue
        problem = build(dataclasses.replace(spec, constraints=terms, costs=()), group)
        checker = _check_of(problem)
        for _ in range(3):
            q = group.random_configuration(rng)
            np.testing.assert_allclose(checker.measure(q), _python_amounts(problem, q),
                                       rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name,group", GROUPS[:2], ids=[n for n, _ in GROUPS[:2]])
def test_yes_and_no_agree_with_check_at_tight_configurations(name, group):
    """Bounds placed at the measured values +-0.5 and +-2 tolerances: the verdict flips."""
    rng = np.random.default_rng(3)
    verdicts = set()
    for spec in _random_specs(name, group, 30, seed=9):
        problem = build(spec, group)
        q = group.random_configuration(rng)
        tight = _tightened(problem, q, rng)
        if tight is None:
            continue
        checker = _check_of(tight)
        data = group.robot.model.createData()
        expected = check(group, None, q, tight.constraints, data, TOL)[0]
        assert checker.holds(q) == expected
        verdicts.add(expected)
    assert verdicts == {True, False}


def _tightened(problem, q, rng):
    """Distance constraints of ``problem`` rebuilt with bounds just around their value at q."""
    group, model = problem.group, problem.group.robot.model
    import pinocchio as pin
    data = model.createData()
    pin.framesForwardKinematics(model, data, group.to_full_q(q))
    out = []
    for c in problem.constraints:
        if type(c) is not C.PointToPointDistanceConstraint:
            continue
        p1 = data.oMf[c._fid_1].act(c._p_B1P1)
        p2 = data.oMf[c._fid_2].act(c._p_B2P2)
        d = float(np.linalg.norm(p1 - p2))
        off = float(rng.choice([-2.0, -0.5, 0.5, 2.0])) * TOL.m
        lower = max(d - off, 0.0) if off > 0 else d + abs(off)  # +: holds, -: violated
        out.append(C.PointToPointDistanceConstraint(
            model, model.frames[c._fid_1].name, c._p_B1P1, model.frames[c._fid_2].name,
            c._p_B2P2, lower, max(lower, d + max(off, 0.0))))
    return Problem(group, None, out) if out else None


def test_nan_configurations_are_not_accepted():
    name, group = GROUPS[0]
    problem = build(_random_specs(name, group, 1, seed=1)[0], group)
    checker = _check_of(problem)
    q = group.mid_configuration()
    q[0] = math.nan
    assert not checker.holds(q)


def test_solve_with_the_compiled_check_reports_only_verified_answers():
    """Every SUCCESS passes verify.check; a NO_SOLUTION still names its violations."""
    name, group = GROUPS[0]
    for spec in _random_specs(name, group, 60, seed=21):
        problem = build(spec, group)
        result = solve(group, problem, np.asarray(spec.seed), timeout_s=1.0, max_attempts=4,
                       random_seed=1, constraint_tolerance_m=1e-4,
                       constraint_tolerance_rad=1e-4)
        ok = check(group, None, result.q, problem.constraints,
                   group.robot.model.createData(), TOL)[0]
        assert ok == (result.status.name == "SUCCESS")
        if not ok:
            assert result.violations


def test_frames_the_group_does_not_move_are_placed_once():
    """pr2's torso (its joint locked) seen from the base: no frame moves, no FK per check.

    Such frames' placements are the angle model's, read once per layout; the figures still
    match the full model's, for a box that holds and one that does not.
    """
    group = robots.load_group("pr2_right")[1]
    model = group.robot.model
    data = model.createData()
    import pinocchio as pin
    pin.framesForwardKinematics(model, data, group.to_full_q(group.mid_configuration()))
    base, torso = model.getFrameId("base_link"), model.getFrameId("torso_lift_link")
    p = data.oMf[base].actInv(data.oMf[torso].translation)
    q = group.random_configuration(np.random.default_rng(2))
    for shift, holds in ((0.0, True), (0.03, False)):
        box = C.PositionConstraint(model, "base_link", p - 0.01 + shift, p + 0.01 + shift,
                                   "torso_lift_link", [0.0, 0.0, 0.0])
        problem = Problem(group, None, [box])
        checker = _check_of(problem)
        assert checker.moving == ()
        assert checker.holds(q) is holds
        np.testing.assert_allclose(checker.measure(q), _python_amounts(problem, q),
                                   rtol=1e-9, atol=1e-12)
    arm = C.PositionConstraint(model, "base_link", p - 9.0, p + 9.0, "r_gripper_tool_frame",
                               [0.0, 0.0, 0.0])
    checker = _check_of(Problem(group, None, [box, arm]))
    assert [row for row, _ in checker.moving] == [2]  # base, torso fixed; the gripper moves


def test_joint_windows_are_checked_as_verify_checks_them():
    """Windows are no kernel rows: the check measures them by their class, as verify does."""
    group = robots.load_group("ur5")[1]
    model = group.robot.model
    rng = np.random.default_rng(4)
    for _ in range(40):
        q_star = group.random_configuration(rng)
        p = group.fk(q_star, group.tip).translation
        box = C.PositionConstraint(model, "universe", p - 0.3, p + 0.3, group.tip, np.zeros(3))
        window = C.JointBoundsConstraint(model, {group.joint_names[0]: (q_star[0] - 0.05,
                                                                        q_star[0] + 0.05)})
        problem = Problem(group, None, [box, window])
        holds = _check_of(problem).holds
        for q in (q_star, group.clamp(q_star + rng.uniform(-0.2, 0.2, group.n))):
            expected = check(group, None, q, problem.constraints, group.full_data(), TOL)[0]
            assert holds(q) == expected
