"""Polishing's compiled model against the Python one (``polish.ResidualsModel``).

At random configurations, on arms with revolute, continuous, unaligned, prismatic and
locked joints: the QP rows (every frame-based constraint's ``linearisation``), their
bounds, the feasibility verdict, the costs (posture with per-joint weights, position
with a full PSD matrix, orientation, angle between vectors), their gradient and
curvature; the costs' gradient against finite differences; with and without a pose
target; problems it cannot take get the Python model; whole solves reach the same
objectives.
"""
import dataclasses
import sys
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

from ros2_ik.core import costs as K
from ros2_ik.core import robots
from ros2_ik.core.costs import posture as posture_cost
from ros2_ik.core.pose import PoseTarget
from ros2_ik.core.problem import Problem
from ros2_ik.core.solvers import chain_kernel, constraint_kernel as ck, polish, polish_kernel
from ros2_ik.core.solvers.residuals import Residuals

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))
import constrained_problems as fam  # noqa: E402
from constrained_ours import build, solve_spec  # noqa: E402
from constrained_random import RandomProblems  # noqa: E402
from test_constraint_kernel import FRAME_KINDS, GROUPS, TOL  # noqa: E402

pytestmark = pytest.mark.skipif(not chain_kernel.available(), reason="numba not installed")


def _costs(gen: RandomProblems, rng, q):
    """Some of: posture (a weight per joint), position (a full PSD matrix), orientation, angle."""
    group = gen.group
    model = group.robot.model
    lo = np.where(group.continuous, -np.pi, group.lower)
    hi = np.where(group.continuous, np.pi, group.upper)
    nominal = group.to_full_q(lo + (hi - lo) * rng.random(group.n))
    posture = K.PostureCost(model, nominal, rng.uniform(0.0, 2.0, model.nv))
    A, B, _ = gen._frames(rng, q)
    M = rng.normal(size=(3, 3))
    position = K.PositionCost(model, A, rng.normal(scale=0.3, size=3), B,
                              rng.normal(scale=0.05, size=3), M @ M.T)
    A, B, _ = gen._frames(rng, q)
    orientation = K.OrientationCost(model, A, pin.exp3(rng.normal(size=3)), B,
                                    pin.exp3(rng.normal(size=3)), rng.uniform(0.0, 3.0))
    A, B, _ = gen._frames(rng, q)
    angle = K.AngleBetweenVectorsCost(model, A, rng.normal(size=3), B, rng.normal(size=3),
                                      rng.uniform(0.0, 3.0))
    costs = [posture, position, orientation, angle]
    return [costs[i] for i in rng.permutation(4)[:int(rng.integers(1, 5))]]


#: Pose weights of the problems with a target: full, position only, some axes free.
WEIGHTS = ((1.0,) * 6, (1.0, 1.0, 1.0, 0.0, 0.0, 0.0), (1.0, 0.0, 1.0, 0.3, 0.3, 0.0))


def _problems(name, group, count, seed):
    """(problem, q_star) of frame-based constraints and costs on random links of ``group``.

    Every third has a pose target too: the tip where it is at ``q_star``.
    """
    gen, rng, out = RandomProblems(name, group), np.random.default_rng(seed), []
    while len(out) < count:
        spec = gen.problem(rng, len(out))
        terms = tuple(t for t in spec.constraints if t.kind in FRAME_KINDS)
        if not terms:
            continue
        problem = build(dataclasses.replace(spec, constraints=terms, costs=()), group)
        costs = _costs(gen, rng, spec.q_star)
        target = None
        if len(out) % 3 == 2:
            target = PoseTarget(group.tip, group.fk(spec.q_star, group.tip),
                                weights=WEIGHTS[len(out) % len(WEIGHTS)])
        out.append((Problem(group, target, problem.constraints, costs), spec.q_star))
    return out


def _models(problem):
    state = ck.KernelState(ck.compile_problem(problem, TOL), problem, TOL)
    compiled = polish_kernel.model_for(state)
    assert isinstance(compiled, polish_kernel.CompiledModel)
    return compiled, polish.ResidualsModel(Residuals(problem, exact=False, tolerance=TOL))


@pytest.mark.parametrize("name,group", GROUPS, ids=[g[0] for g in GROUPS])
def test_rows_costs_and_verdicts_equal_the_python_model(name, group):
    rng = np.random.default_rng(7)
    for problem, q_star in _problems(name, group, 30, seed=3):
        compiled, python = _models(problem)
        for q in (q_star, group.random_configuration(rng), group.random_configuration(rng)):
            (c1, s1), (c2, s2) = compiled.evaluate(q, True), python.evaluate(q, True)
            np.testing.assert_allclose(c1, c2, rtol=1e-12, atol=1e-12)
            for field in ("grad", "hessian", "values", "rows", "lower", "upper"):
                a, b = getattr(s1, field), getattr(s2, field)
                np.testing.assert_allclose(a, b, rtol=0, atol=1e-9, err_msg=field)
            assert s1.equalities == s2.equalities
            assert (compiled.evaluate(q)[1] is None) == (python.evaluate(q)[1] is None)
            assert compiled.cost(q) == pytest.approx(python.cost(q), rel=1e-12, abs=1e-12)


def test_feasible_verdicts_are_both_kinds():
    """Feasible and infeasible configurations both met (else the verdict test is idle)."""
    name, group = GROUPS[0]
    verdicts = set()
    rng = np.random.default_rng(1)
    for problem, q_star in _problems(name, group, 30, seed=4):
        compiled, _ = _models(problem)
        for q in (q_star, group.random_configuration(rng)):
            verdicts.add(compiled.evaluate(q)[1] is None)
    assert verdicts == {True, False}


def test_verdict_does_not_read_the_output_buffers_before_writing_them():
    """The pose rows' entries hold anything on entry (``np.empty``): the verdict is the same.

    It was not: the physical rows' test ran before the pose rows were written, and read
    their margins from whatever memory the buffers had.
    """
    name, group = GROUPS[0]
    seen = 0
    for problem, q_star in _problems(name, group, 30, seed=3):
        if problem.pose is None:
            continue
        compiled, python = _models(problem)
        c, k, n = compiled._compiled, compiled._k, group.n
        verdicts = set()
        for value, bound, margin in ((0.0, 0.0, 0.0), (1.0, 0.0, 1e-9), (np.nan, 1.0, 1.0)):
            g, J, lo, hi, gm = (np.full(k, value), np.full((k, n), value), np.full(k, bound),
                                np.full(k, bound), np.full(k, margin))
            t = c.tree
            ok, _ = polish_kernel._JIT.model(
                t.parents, t.placements, t.kinds, t.axes, t.columns, c.fparent, c.fplace,
                c.ctype, c.cfa, c.cfb, c.coff, c.params, compiled._cube, c.lo, c.hi,
                c.margin, c.x_margin, c.pose, compiled._pose_rows,
                *polish_kernel._unpacked(compiled._costs),
                np.array(q_star, dtype=float), polish.FEASIBLE_SLACK, g, J, lo, hi, gm,
                np.empty(n), np.empty((n, n)))
            verdicts.add(ok)
        assert verdicts == {python.evaluate(q_star)[1] is not None}
        seen += 1
    assert seen >= 5


@pytest.mark.parametrize("name,group", GROUPS[:3], ids=[g[0] for g in GROUPS[:3]])
def test_cost_gradient_matches_finite_differences(name, group):
    rng = np.random.default_rng(9)
    h = 1e-6
    for problem, _ in _problems(name, group, 10, seed=5):
        compiled, _ = _models(problem)
        q = group.random_configuration(rng)
        grad = compiled.evaluate(q, True)[1].grad
        for k in range(group.n):
            dq = np.zeros(group.n)
            dq[k] = h
            fd = (compiled.cost(q + dq) - compiled.cost(q - dq)) / (2 * h)
            assert abs(fd - grad[k]) < 1e-5 * max(1.0, abs(fd)), (k, fd, grad[k])


def test_problems_it_cannot_take_get_the_python_model():
    group = robots.load_group("panda")[1]
    spec = fam.generate("g", "panda", group, 1, seed=0)[0]
    problem = build(spec, group)
    model = group.robot.model

    class OwnPosture(K.PostureCost):  # a subclass may compute another cost
        pass

    other_cost = Problem(group, None, problem.constraints,
                         [OwnPosture(model, group.to_full_q(spec.q_star))])
    state = ck.KernelState(ck.compile_problem(other_cost, TOL), other_cost, TOL)
    assert isinstance(polish_kernel.model_for(state), polish.ResidualsModel)


def compiled_then_python(monkeypatch, objectives):
    """``objectives()`` polished compiled, then by the Python model: ``(a, b, loops run)``.

    ``loops run``: how many compiled polishing loops the first call ran.
    """
    calls = []
    run = polish_kernel.CompiledModel.polish
    monkeypatch.setattr(polish_kernel.CompiledModel, "polish",
                        lambda self, *a, **k: calls.append(1) or run(self, *a, **k))
    compiled = objectives()
    monkeypatch.setattr(polish_kernel, "model_for",
                        lambda state: polish.ResidualsModel(state.residuals))
    return compiled, objectives(), len(calls)


@pytest.mark.parametrize("with_pose", [False, True])
def test_solves_reach_the_python_models_objectives(monkeypatch, with_pose):
    """Family g (+ a pose target), compiled model and loop or Python: objectives within 1e-6."""
    group = robots.load_group("panda")[1]
    specs = fam.generate("g", "panda", group, 12, seed=2)

    def objectives():
        out = []
        for spec in specs:
            problem = build(spec, group)
            if with_pose:  # the hand where it is at q_star, turning about its axis free
                target = PoseTarget(group.tip, group.fk(spec.q_star, group.tip),
                                    weights=(1.0, 1.0, 1.0, 1.0, 1.0, 0.0))
                problem = Problem(group, target, problem.constraints, problem.costs)
            result = solve_spec(group, problem, spec.seed, "lm", 1.0, spec.index,
                                max_attempts=1)
            assert result.success
            res = Residuals(problem, exact=False, tolerance=TOL)
            out.append(res.costs(res.update(result.q))[0])
        return np.array(out)

    compiled, python, calls = compiled_then_python(monkeypatch, objectives)
    assert calls >= len(specs)  # the compiled model and loop polished them
    close = np.abs(compiled - python) <= 1e-6 * np.maximum(1.0, np.abs(python))
    assert close.mean() >= 0.9, (compiled, python)


@pytest.mark.parametrize("tip", ["tool", "l2"])
def test_posture_constant_of_the_locked_joints_is_pinocchios(tip):
    """The locked joints' posture cost, as floats (one-number joints) or by pin.difference.

    To ``tool`` only a revolute joint is locked (the float sum); to ``l2`` a continuous
    one is too (pinocchio's difference on its (cos, sin)).
    """
    from ros2_ik.core.model.robot import Robot
    from test_chain_kernel import MIXED_URDF
    group = Robot.from_urdf(MIXED_URDF).group("base", tip)
    model = group.robot.model
    assert (posture_cost.posture_columns(group)[5] is None) == (tip == "l2")
    rng = np.random.default_rng(5)
    outside = np.ones(model.nv, dtype=bool)
    outside[group.iv_full] = False
    for _ in range(20):
        nominal = pin.neutral(model)
        for j in range(1, model.njoints):
            i = model.idx_qs[j]
            if model.nqs[j] == 2:
                a = rng.uniform(-np.pi, np.pi)
                nominal[i:i + 2] = np.cos(a), np.sin(a)
            else:
                nominal[i] = rng.uniform(-1.0, 1.0)
        weights = rng.uniform(0.0, 2.0, model.nv)
        d = pin.difference(model, nominal, group.q_full_locked)
        expected = 0.5 * float(np.sum((weights * d * d)[outside]))
        constant = posture_cost.encode_posture(K.PostureCost(model, nominal, weights), group)[1]
        assert constant == pytest.approx(expected, rel=1e-12, abs=1e-15)
