"""Polishing's compiled loop (``polish_kernel.CompiledModel.polish``) against the Python loop.

The Python loop (:func:`polish.polish`) on the same compiled model is the reference.  Its
two floating-point helpers (the BFGS update, the Lagrangian's gradient change) sum in
numpy's order, the compiled loop in its own: rounding apart they agree (checked
separately below), and with the Python loop's helpers summing in the compiled order
the two loops take the same steps to the last bit, on arms with revolute, continuous,
unaligned, prismatic and locked joints, with and without a pose target.  The QP is
daqp's own C entry, compared with ``daqp.solve``; the clock with ``time.perf_counter``.
"""
import ctypes
import sys
import time
from pathlib import Path

import daqp
import numpy as np
import pytest

from ros2_ik.core import robots
from ros2_ik.core.solvers import attempts, chain_kernel, constraint_kernel as ck, polish, \
    polish_kernel
from ros2_ik.core.solvers import registry
from ros2_ik.core.solvers.budget import Budget

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))
import constrained_problems as fam  # noqa: E402
from constrained_ours import build  # noqa: E402
from test_constraint_kernel import GROUPS, TOL  # noqa: E402
from test_polish_kernel import _problems  # noqa: E402

pytestmark = pytest.mark.skipif(not chain_kernel.available(), reason="numba not installed")


@pytest.fixture(scope="module")
def loop():
    assert polish_kernel.warm_up()
    return polish_kernel.loop()


def test_quadprog_is_daqp_solve(loop):
    rng = np.random.default_rng(0)
    flags = set()
    for trial in range(200):
        n, k = int(rng.integers(1, 9)), int(rng.integers(0, 12))
        M = rng.normal(size=(n, n))
        H, f, A = M @ M.T + 1e-3 * np.eye(n), rng.normal(size=n), rng.normal(size=(k, n))
        bu = np.concatenate((rng.uniform(0.0, 1.0, n), rng.uniform(-0.2, 1.0, k)))
        bl = np.concatenate((rng.uniform(-1.0, 0.0, n), rng.uniform(-1.0, 0.2, k)))
        sense = np.zeros(n + k, dtype=np.intc)
        equalities = int(rng.integers(0, min(k, n) + 1))
        if equalities:
            sense[n + k - equalities:] = 5
            bl[n + k - equalities:] = bu[n + k - equalities:]
        x_ref, fval_ref, flag_ref, info = daqp.solve(H, f, A, bu, bl, sense)
        x, lam = np.empty(n), np.empty(n + k)
        fval, flag = loop.quadprog(H, f, A, bu, bl, sense.astype(np.int32), x, lam,
                                   np.zeros(10, dtype=np.int64), np.zeros(8, dtype=np.int64),
                                   polish_kernel._DAQP_SETTINGS)
        assert flag == flag_ref
        flags.add(flag)
        if flag >= 1:
            np.testing.assert_array_equal(x, x_ref)
            np.testing.assert_array_equal(lam, info["lam"])
            assert fval == fval_ref
    assert 1 in flags and min(flags) < 1  # solved and infeasible problems both met


def test_daqp_settings_are_its_defaults(loop):
    settings = polish_kernel._DAQP_SETTINGS
    floats, ints = settings.view(np.float64), settings.view(np.int32)
    assert floats[0] == 1e-6 and floats[1] == 1e-12  # primal, dual tolerance
    assert ints[10] == 10 and ints[11] == 10000  # cycle tolerance, iteration limit
    assert ctypes.sizeof(ctypes.c_double) == 8 and ctypes.sizeof(ctypes.c_void_p) == 8


def test_clock_is_perf_counter(loop):
    ts = np.zeros(2, dtype=np.int64)
    for _ in range(20):
        before = time.perf_counter()
        now = loop.now(ts)
        after = time.perf_counter()
        assert before - 1e-6 <= now <= after + 1e-6


def test_bfgs_update_is_polish_bfgs(loop):
    rng = np.random.default_rng(3)
    branches = set()
    for trial in range(300):
        n = int(rng.integers(1, 9))
        M = rng.normal(size=(n, n))
        B = M @ M.T + 0.1 * np.eye(n)
        s = rng.normal(size=n) * (1e-9 if trial % 50 == 0 else 1.0)
        y = rng.normal(size=n) + (B @ s if trial % 2 else 0.0)
        expected = polish._bfgs(B, s, y.copy())
        got = B.copy()
        loop._bfgs(got, s, y.copy(), np.empty(n))
        np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12 * np.abs(B).max())
        sBs, sy = s @ B @ s, s @ y
        branches.add("skip" if sBs <= 1e-16 else ("damped" if sy < 0.2 * sBs else "plain"))
    assert branches == {"skip", "damped", "plain"}


def _bfgs_in_compiled_order(B, s, y):
    out = B.copy()
    polish_kernel.loop()._bfgs(out, np.array(s), np.array(y), np.empty(s.shape[0]))
    return out


def _lagrangian_change_in_compiled_order(self, before, lam):
    n = self.grad.shape[0]
    y = np.empty(n)
    for i in range(n):
        v = self.grad[i] - before.grad[i]
        for r in range(lam.shape[0]):
            v += lam[r] * (self.rows[r, i] - before.rows[r, i])
        y[i] = v
    return y


def _feasible(problem, start, lm):
    state = attempts.CompiledConstraints(lm, ck.compile_problem(problem, TOL), problem, TOL)
    q, _, done, _ = state.project(start)
    return state, q, done


def _same_steps(state, q, lm):
    model = polish_kernel.model_for(state)
    assert isinstance(model, polish_kernel.CompiledModel)
    q_py, steps_py = polish.polish(model, q, Budget(10.0), state.restore)
    q_c, steps_c = model.polish(q, Budget(10.0), attempts.kernel_settings(type(lm)),
                                lm.restore_iterations)
    np.testing.assert_array_equal(q_c, q_py)
    assert steps_c == steps_py
    return steps_c


@pytest.fixture
def python_in_compiled_order(monkeypatch):
    monkeypatch.setattr(polish, "_bfgs", _bfgs_in_compiled_order)
    monkeypatch.setattr(polish.State, "lagrangian_change", _lagrangian_change_in_compiled_order)


@pytest.mark.parametrize("name,group", GROUPS, ids=[g[0] for g in GROUPS])
def test_random_problems_take_the_python_loops_steps(loop, python_in_compiled_order, name,
                                                     group):
    lm = registry.create("lm")
    rng = np.random.default_rng(11)
    steps = []
    for problem, q_star in _problems(name, group, 15, seed=5):
        state, q, done = _feasible(problem, group.random_configuration(rng), lm)
        if done:
            steps.append(_same_steps(state, q, lm))
    assert len(steps) >= 5 and max(steps) >= 3  # several multi-step polishes compared


@pytest.mark.parametrize("arm", ["panda", "ur5"])
def test_cost_family_takes_the_python_loops_steps(loop, python_in_compiled_order, arm):
    robot, group = robots.load_group(arm)
    lm = registry.create("lm")
    steps = []
    for spec in fam.generate("g", arm, group, 20, 1):
        state, q, done = _feasible(build(spec, group), spec.seed, lm)
        if done:
            steps.append(_same_steps(state, q, lm))
    assert len(steps) >= 15 and np.median(steps) >= 3


def test_deadline_stops_the_loop(loop):
    robot, group = robots.load_group("panda")
    lm = registry.create("lm")
    for spec in fam.generate("g", "panda", group, 10, 2):
        state, q, done = _feasible(build(spec, group), spec.seed, lm)
        if done:
            break
    model = polish_kernel.model_for(state)
    q_out = q.copy()
    c = state.compiled
    steps = polish_kernel._polish(c, model._cube, model._pose_rows, model._costs,
                                  model._constant, (model.lower, model.upper), q_out, model._k,
                                  time.perf_counter(), attempts.kernel_settings(type(lm)),
                                  lm.restore_iterations)
    assert steps == 1 and np.array_equal(q_out, q)  # stopped before its first step
    budget = Budget(10.0)
    budget.deadline = time.perf_counter() - 1.0
    budget._next_poll = budget.deadline
    assert model.polish(q, budget, attempts.kernel_settings(type(lm)),
                        lm.restore_iterations)[1] == 0
