"""Only the full check accepts (issue 46): a SUCCESS of ``solve()`` is verified on the full model.

A check reading the compiled attempt's packed parameters would agree with the attempt
on a wrong packing (the compiled measure did, before it was removed).  Here a position
constraint's kernel form is packed with its point moved 5 cm: the kernel converges to
the moved point.
The answer must still be no SUCCESS that misses the real constraint, measured
independently (pinocchio's FK on the full model, in metres).  Before issue 46 the seed's
attempt was accepted on a compiled measure alone: this test failed.
"""
import numpy as np
import pinocchio as pin
import pytest

from ros2_ik.core import IKStatus, Problem, robots, solve
from ros2_ik.core.constraints import PositionConstraint, position, registry
from ros2_ik.core.solvers.options import SolveOptions

SHIFT_M = 0.05


def _shifted_encode(c, tolerance):
    fa, fb, prm = position.KIND.encode(c, tolerance)
    prm = list(prm)
    prm[16] += SHIFT_M  # p_BQ's x: the kernel's point is 5 cm off the constraint's
    return fa, fb, prm


@pytest.fixture
def wrong_packing(monkeypatch):
    """PositionConstraint's kind, its type code kept, with the wrong packing for one test."""
    kind = registry._KINDS[PositionConstraint]
    monkeypatch.setitem(registry._KINDS, PositionConstraint,
                        kind._replace(encode=_shifted_encode))


def _problems(group, count):
    """Boxes of +-5 mm around the hand's point at random configurations (base frame)."""
    model, data = group.robot.model, group.robot.model.createData()
    rng = np.random.default_rng(7)
    for _ in range(count):
        q = rng.uniform(group.lower, group.upper)
        pin.framesForwardKinematics(model, data, group.to_full_q(q))
        T_base_tip = data.oMf[model.getFrameId(group.base)].actInv(
            data.oMf[model.getFrameId(group.tip)])
        p = T_base_tip.translation
        yield PositionConstraint(model, group.base, p - 0.005, p + 0.005, group.tip, [0, 0, 0])


def _inside(group, constraint, q) -> bool:
    """The real box holds at ``q``: pinocchio FK on the full model [m]."""
    model, data = group.robot.model, group.robot.model.createData()
    pin.framesForwardKinematics(model, data, group.to_full_q(q))
    p = data.oMf[model.getFrameId(group.base)].actInv(
        data.oMf[model.getFrameId(group.tip)]).translation
    lower, upper = (np.asarray(b) for b in constraint.bound_lists())
    return bool(np.all(p >= lower - 1e-4) and np.all(p <= upper + 1e-4))


def test_a_wrong_kernel_packing_never_gives_a_false_success(wrong_packing):
    robot, group = robots.load_group("panda")
    for i, constraint in enumerate(_problems(group, 6)):
        result = solve(group, Problem(group, None, [constraint]), group.mid_configuration(),
                       solver="lm", timeout_s=0.05, random_seed=i)
        if result.status == IKStatus.SUCCESS:
            assert _inside(group, constraint, result.q)


def test_the_kernel_converges_on_the_wrong_packing(wrong_packing):
    """What an acceptance on the kernel's packing would take: its converged end point."""
    from ros2_ik.core.solvers import attempts
    from ros2_ik.core.solvers.registry import create
    robot, group = robots.load_group("panda")
    constraint = next(_problems(group, 1))
    problem = Problem(group, None, [constraint])
    solver = create("lm")
    solver.options = SolveOptions()
    state = attempts.compiled_constraints(solver, problem)
    seed = group.mid_configuration()
    q, _, converged = state.project(seed)[:3]
    assert converged
    assert not _inside(group, constraint, q)


def test_the_right_packing_solves_the_same_problems():
    """The same problems with the registered packing: solved and inside the real box."""
    robot, group = robots.load_group("panda")
    for i, constraint in enumerate(_problems(group, 6)):
        result = solve(group, Problem(group, None, [constraint]), group.mid_configuration(),
                       solver="lm", timeout_s=0.5, random_seed=i)
        assert result.status == IKStatus.SUCCESS
        assert _inside(group, constraint, result.q)
