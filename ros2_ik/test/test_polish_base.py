"""Polishing a group with a base, compiled: the base-motion cost and the loop's Lie steps.

A mobile manipulator's problem (pr2's planar base, a hand target beyond the arm's reach,
``BaseMotionCost``) runs the compiled attempt and the compiled polishing: the cost's
compiled value (``costs/base_motion.py``) against its Python ``gauss_newton`` and finite
differences along the compiled ``integrate`` (a planar and a free-flyer base: the
tangent has one column less than the group vector there), and the compiled loop's end
points against the Python loop's (:func:`polish.polish` stepping with the group's own
``integrate``/``difference``), each verified again on the full model.
"""
import math

import numpy as np
import pinocchio as pin
import pytest

import wholebody_groups
from ros2_ik.core import constraints as C
from ros2_ik.core import costs as K
from ros2_ik.core.pose import PoseTarget
from ros2_ik.core.problem import Problem
from ros2_ik.core.solve import solve
from ros2_ik.core.solvers import attempts, chain_kernel, constraint_kernel as ck, polish, \
    polish_kernel
from ros2_ik.core.solvers.budget import Budget
from ros2_ik.core.solvers.lm import LevenbergMarquardt
from ros2_ik.core.verify import ConstraintTolerance, check
from test_polish_kernel import compiled_then_python

pytestmark = pytest.mark.skipif(not chain_kernel.available(), reason="numba not installed")
TOL = ConstraintTolerance()
WEIGHTS = ((1.0, 1.0), (1.0, 0.1), (2.0, 0.5), (0.5, 0.0))


@pytest.fixture(scope="module")
def pr2():
    return wholebody_groups.pr2()


@pytest.fixture(scope="module")
def solo():
    return wholebody_groups.solo()


def _mobile(group, rng, k):
    """A hand target where ``q*`` (base 0.5-2 m away) puts it; the cost toward the seed's base."""
    seed = group.mid_configuration()
    q_star = group.random_configuration(rng)
    heading = rng.uniform(-math.pi, math.pi)
    q_star[:3] = [*(rng.uniform(0.5, 2.0) * np.array([math.cos(heading), math.sin(heading)])),
                  rng.uniform(-math.pi, math.pi)]
    wp, wr = WEIGHTS[k % len(WEIGHTS)]
    cost = K.BaseMotionCost(group.robot.model, group.base_joint, group.base_placement(seed),
                            wp, wr)
    return Problem(group, PoseTarget(group.tip, group.fk(q_star, group.tip)), costs=[cost]), seed


def _solo_problem(group, rng):
    """Solo's feet held where they are, a foot target, the cost toward a moved base."""
    q = group.mid_configuration()
    q[2] = 0.3
    model = group.robot.model
    data = model.createData()
    pin.framesForwardKinematics(model, data, wholebody_groups.full_q(group, q))
    held = []
    for f in ("FL_FOOT", "FR_FOOT", "HL_FOOT"):
        p = data.oMf[model.getFrameId(f)].translation
        held.append(C.PositionConstraint(model, "universe", p, p, f, [0.0, 0.0, 0.0]))
    T = pin.SE3(pin.rpy.rpyToMatrix(*rng.uniform(-0.3, 0.3, 3)), rng.uniform(-0.2, 0.2, 3))
    cost = K.BaseMotionCost(model, group.base_joint, T, 1.0, 0.3)
    target = PoseTarget("HR_FOOT", data.oMf[model.getFrameId("HR_FOOT")],
                        weights=(1.0, 1.0, 1.0, 0.0, 0.0, 0.0))  # a point foot
    return Problem(group, target, held, [cost])


def _models(problem):
    state = ck.KernelState(ck.compile_problem(problem, TOL), problem, TOL)
    compiled = polish_kernel.model_for(state)
    assert isinstance(compiled, polish_kernel.CompiledModel)
    return compiled, polish.ResidualsModel(state.residuals)


def _near(group, q, rng, scale):
    """``q`` moved by a random tangent step (the group's own integrate)."""
    return group.project(group.integrate(q, rng.normal(0.0, scale, group.nv)), group.lower,
                         group.upper)


@pytest.mark.parametrize("which", ["pr2", "solo"])
def test_base_motion_cost_and_rows_equal_the_python_model(which, request):
    group = request.getfixturevalue(which)
    rng = np.random.default_rng(1)
    for k in range(6):
        problem = _mobile(group, rng, k)[0] if which == "pr2" else _solo_problem(group, rng)
        compiled, python = _models(problem)
        for q in (group.mid_configuration(), group.random_configuration(rng),
                  _near(group, group.mid_configuration(), rng, 0.5)):
            (c1, s1), (c2, s2) = compiled.evaluate(q, True), python.evaluate(q, True)
            assert s1.grad.shape == (group.nv,) and s1.rows.shape[1] == group.nv
            np.testing.assert_allclose(c1, c2, rtol=1e-12, atol=1e-12)
            for field in ("grad", "hessian", "values", "rows", "lower", "upper"):
                np.testing.assert_allclose(getattr(s1, field), getattr(s2, field), rtol=0,
                                           atol=1e-9, err_msg=field)
            assert compiled.cost(q) == pytest.approx(python.cost(q), rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("which", ["pr2", "solo"])
def test_base_motion_gradient_matches_finite_differences_along_integrate(which, request):
    group = request.getfixturevalue(which)
    rng = np.random.default_rng(2)
    h = 1e-6
    for k in range(3):
        problem = _mobile(group, rng, k)[0] if which == "pr2" else _solo_problem(group, rng)
        compiled, _ = _models(problem)
        q = _near(group, group.mid_configuration(), rng, 0.4)
        grad = compiled.evaluate(q, True)[1].grad
        assert np.abs(grad[:group.base_nv]).max() > 1e-3  # the base's columns are exercised
        for c in range(group.nv):
            step = np.zeros(group.nv)
            step[c] = h
            fd = (compiled.cost(group.integrate(q, step))
                  - compiled.cost(group.integrate(q, -step))) / (2 * h)
            assert abs(fd - grad[c]) < 1e-5 * max(1.0, abs(fd)), (c, fd, grad[c])


def test_a_mobile_problem_runs_the_compiled_attempt_and_polishing(pr2):
    problem = _mobile(pr2, np.random.default_rng(3), 0)[0]
    state = LevenbergMarquardt().setup(problem)
    assert isinstance(state, attempts.CompiledConstraints)
    assert isinstance(state.polishing_model(), polish_kernel.CompiledModel)
    # A posture cost's compiled value knows 1-DoF columns only: the Python model polishes.
    posture = K.PostureCost(pr2.robot.model, pr2.to_full_q(pr2.mid_configuration()))
    state = LevenbergMarquardt().setup(problem.with_terms(costs=[posture]))
    assert isinstance(state, attempts.CompiledConstraints)
    assert isinstance(state.polishing_model(), polish.ResidualsModel)
    # The pose alone on a base group: the compiled attempt too.
    alone = Problem(pr2, problem.target)
    assert isinstance(LevenbergMarquardt().setup(alone), attempts.CompiledConstraints)


def _verified(group, problem, q):
    """SUCCESS's test on the full model, and the hand placed by pinocchio from ``q``."""
    model = group.robot.model
    ok = check(group, problem.pose, q, [], model.createData(), TOL)[0]
    data = model.createData()
    pin.framesForwardKinematics(model, data, wholebody_groups.full_q(group, q))
    error = pin.log6(problem.pose.T_world_target.actInv(
        data.oMf[model.getFrameId(group.tip)])).vector
    return ok and np.abs(error).max() < 1e-3


def test_compiled_loop_reaches_the_python_loops_end_points(pr2):
    """The same feasible start, both loops: the same optimum, each answer verified.

    The arm's joints are redundant once the hand is held: not compared.
    """
    lm = LevenbergMarquardt()
    rng = np.random.default_rng(4)
    compared = moved = 0
    for k in range(12):
        problem, seed = _mobile(pr2, rng, k)
        state = lm.setup(problem)
        q, _, done, _ = state.project(seed)
        if not done:
            continue
        model = state.polishing_model()
        python = polish.ResidualsModel(state.residuals)
        q_py, steps_py = polish.polish(python, q, Budget(10.0), state.restore)
        q_c, steps_c = model.polish(q, Budget(10.0), attempts.kernel_settings(type(lm)),
                                    lm.restore_iterations)
        assert _verified(pr2, problem, q_py) and _verified(pr2, problem, q_c)
        cost_py, cost_c, cost_0 = python.cost(q_py), python.cost(q_c), python.cost(q)
        # The same optimum: each loop stops once a step gains less than 1e-4 of the costs,
        # and the base's optimum is flat (first order) along the hand-holding directions,
        # where rounding (pinocchio's integrate here, the compiled one there) moves it.
        assert cost_c == pytest.approx(cost_py, rel=1e-3, abs=1e-8), (k, steps_c, steps_py)
        np.testing.assert_allclose(q_c[:2], q_py[:2], atol=1e-2)  # the base ends alike [m]
        moved += cost_c < 0.9 * cost_0
        compared += 1
    assert compared >= 8 and moved >= 4  # polishes that lowered the costs, compared


def test_compiled_loop_on_a_free_flyer_reaches_the_python_loops_costs(solo):
    """Solo's feet held, the base pulled toward a pose: nq = nv + 1 in the compiled loop."""
    lm = LevenbergMarquardt()
    rng = np.random.default_rng(6)
    lowered = 0
    for k in range(4):
        problem = _solo_problem(solo, rng)
        state = lm.setup(problem)
        assert isinstance(state, attempts.CompiledConstraints)
        start = solo.mid_configuration()
        start[2] = 0.3
        q, _, done, _ = state.project(start)
        assert done
        model, python = state.polishing_model(), polish.ResidualsModel(state.residuals)
        assert isinstance(model, polish_kernel.CompiledModel)
        q_py, _ = polish.polish(python, q, Budget(10.0), state.restore)
        q_c, _ = model.polish(q, Budget(10.0), attempts.kernel_settings(type(lm)),
                              lm.restore_iterations)
        assert abs(np.linalg.norm(q_c[3:7]) - 1.0) < 1e-12
        for q_end in (q_py, q_c):
            ok = check(solo, problem.pose, q_end, problem.constraints,
                       solo.robot.model.createData(), TOL)[0]
            assert ok
        cost_py, cost_c = python.cost(q_py), python.cost(q_c)
        assert cost_c == pytest.approx(cost_py, rel=1e-3, abs=1e-8)
        lowered += cost_c < 0.9 * python.cost(q)
    assert lowered >= 3


def test_solves_reach_the_python_polishings_objectives(pr2, monkeypatch):
    """Through the driver, compiled or Python polishing: verified, the same least motion."""
    problems = [_mobile(pr2, np.random.default_rng(5), k) for k in range(8)]

    def objectives():
        out = []
        for k, (problem, seed) in enumerate(problems):
            res = solve(pr2, problem, seed, timeout_s=2.0, random_seed=k, max_attempts=1)
            assert res.status.name == "SUCCESS", res.message
            assert _verified(pr2, problem, np.asarray(res.q))
            out.append(polish.ResidualsModel(ck.KernelState(
                ck.compile_problem(problem, TOL), problem, TOL).residuals).cost(res.q))
        return np.array(out)

    compiled, python, calls = compiled_then_python(monkeypatch, objectives)
    assert calls >= len(problems)  # the compiled loop polished each
    close = np.abs(compiled - python) <= 1e-3 * np.maximum(1e-3, np.abs(python))
    assert close.mean() >= 0.75, (compiled, python)
