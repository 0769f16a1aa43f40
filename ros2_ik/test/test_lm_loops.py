"""The one Python LM loop (:func:`lm_loop.run`) against the compiled one, on both kinds of rows.

The Python loop is the no-numba fallback and the oracle of the compiled kernels: from the
same starts, the pose rows (:class:`PoseState`, ``log6``) and the stacked rows
(:class:`active_set.StackedRows`) must take the same steps as :mod:`chain_kernel` and
:mod:`constraint_kernel` (same iterations, verdict and end point, to rounding), and every
converged end point of either must pass the independent check (:func:`verify.verify_pose`:
pinocchio on the full model, in metres and radians).  The compiled loops are generated
from one skeleton (:mod:`lm_source`): the checked-in file must be the generator's, and
the skeleton with a toy family's rows must end where :func:`lm_loop.run` ends.
"""
import ast
import math

import numpy as np
import pytest

from ros2_ik.core import robots
from ros2_ik.core.pose import PoseTarget
from ros2_ik.core.problem import Problem
from ros2_ik.core.solvers import attempts, chain_kernel, lm_loop, lm_source
from ros2_ik.core.solvers.options import SolveOptions
from ros2_ik.core.solvers.budget import Budget
from ros2_ik.core.solvers.lm import LevenbergMarquardt
from ros2_ik.core.verify import verify_pose
from test_constraint_kernel import TOL, build, fam  # noqa: E402

pytestmark = pytest.mark.skipif(not chain_kernel.available(), reason="numba not installed")


def _lm():
    lm = LevenbergMarquardt()
    lm.options = SolveOptions(constraint_tolerance=TOL)
    return lm


def _agree(a, b) -> bool:
    return a[1] == b[1] and a[2] == b[2] and np.abs(a[0] - b[0]).max() < 1e-6


def test_pose_loops_take_the_same_steps_and_verify():
    group = robots.load_group("panda")[1]
    lm, rng = _lm(), np.random.default_rng(7)
    same = converged = 0
    for i in range(20):
        target = PoseTarget(group.tip, group.fk(group.random_configuration(rng), group.tip))
        problem = Problem(group, target)
        compiled = attempts.pose_attempt(lm, problem)
        assert isinstance(compiled, attempts.CompiledPose)
        python = attempts.PythonPose(compiled.state, attempts.pose_rule(type(lm)))
        q0 = group.random_configuration(rng) if i % 2 else group.mid_configuration()
        a, b = python.run(q0, Budget(10.0)), compiled.run(q0, Budget(10.0))
        same += _agree(a, b)
        for end in (a, b):
            if end.converged:
                converged += 1
                assert verify_pose(group, target, end.q)[0]
    assert same >= 18 and converged >= 10, (same, converged)


def test_stacked_loops_take_the_same_steps_and_verify():
    group = robots.load_group("panda")[1]
    lm = _lm()
    same = total = converged = 0
    for family in "abdf":
        for spec in fam.generate(family, "panda", group, 4, seed=11):
            problem = build(spec, group)
            compiled = attempts.compiled_constraints(lm, problem)
            assert compiled is not None
            python = attempts.StackedAttempt(lm, compiled.residuals)
            a, b = python.project(spec.seed, Budget(10.0)), compiled.project(spec.seed)
            total += 1
            same += _agree(a, b)
            for q, _, done, _ in (a, b):
                if done:
                    converged += 1
                    assert verify_pose(group, None, q, problem.constraints, TOL)[0], family
    assert same >= 0.9 * total and converged >= total, (same, total, converged)


def test_the_loop_stops_on_a_progress_bound_and_a_non_finite_error():
    """:func:`lm_loop.run`'s own tests, on rows that report a fixed error."""
    class Rows:
        def __init__(self, E):
            self.E, self.steps = E, 0

        def evaluate(self, q):
            return False, self.E, self.E

        def step(self, q, scale, bias, active_set):
            self.steps += 1
            return q

    rule = lm_loop.Rule(0.01, 1e-6, 0.995, lm_loop.bounds(((3, 1.0),), 10), True)
    for E, last in ((2.0, 3), (np.inf, 1), (np.nan, 1), (0.5, 3)):
        rows = Rows(E)
        q, it, done, merit = lm_loop.run(rows, np.zeros(2), Budget(10.0), rule)
        # 0.5: the bound holds, the error never shrinks: three stalls end it at iteration 4
        assert not done and it == (4 if E == 0.5 else last) and rows.steps == it - 1


def test_the_checked_in_loops_are_the_generators():
    assert lm_source.stale() == [], "run `make dispatch` and commit the result"


#: A toy family: rows ``e = M q - t`` (``M``, ``t`` arguments), the plain LM step.
_LINEAR = lm_source.Family(
    name="linear_attempt", doc="Toy rows ``M q - t``.",
    args="M, t, q, tol, scale, bias, stall, bounds", imports=(),
    setup="e = np.empty(t.shape[0])\nlast, W = bounds.shape[0] - 1, 1.0",
    evaluate="e[:] = M @ q - t\nE = float(e @ e)\ndone = E <= tol",
    diverged="not E <= bounds[it]",
    step="A = M.T @ M + lam * np.eye(q.shape[0])\nq -= np.linalg.solve(A, M.T @ e)")

#: A toy family whose error never changes: each step adds 1 to ``q[0]`` (the step count).
_FIXED = lm_source.Family(
    name="fixed_attempt", doc="Toy rows of error ``E0``.", args="E0, q, scale, bias, stall, "
    "bounds", imports=(), setup="last, W = bounds.shape[0] - 1, 1.0",
    evaluate="E, done = E0, False", diverged="not E <= bounds[it] or E == math.inf",
    step="q[0] += 1.0")


def _generated(family):
    """``family``'s loop from the skeleton, as a Python function (``jit`` as no-op)."""
    source = lm_source.render(lm_source.FAMILIES + (family,))
    tree = ast.parse(source)
    node = next(n for n in tree.body if isinstance(n, ast.FunctionDef)
                and n.name == family.name)
    space = {"np": np, "math": math, "jit": lambda f: f}
    exec(compile(ast.Module([node], []), "<lm_source>", "exec"), space)
    return space[family.name]


def test_every_family_is_the_one_skeleton():
    source = lm_source.render()
    skeleton = lm_source.TEMPLATE.read_text().split("\n@jit\n", 1)[1]
    fixed = [line.strip() for line in skeleton.splitlines()
             if line.strip() and "{" not in line]
    for family in lm_source.FAMILIES:
        lines = iter(line.strip() for line in source.split(f"def {family.name}(")[1]
                     .split("\n@jit\n")[0].splitlines())
        assert all(any(line == x for x in lines) for line in fixed), family.name
        assert source.count(family.step.splitlines()[-1]) == 1  # each hook once


def test_the_skeleton_ends_where_the_python_loop_ends():
    """A toy family's generated loop against :func:`lm_loop.run` on the same rows."""
    class Linear:
        def __init__(self, M, t, tol):
            self.M, self.t, self.tol = M, t, tol

        def evaluate(self, q):
            self.e = self.M @ q - self.t
            E = float(self.e @ self.e)
            return E <= self.tol, E, E

        def step(self, q, scale, bias, active_set):
            lam = scale * float(self.e @ self.e) + bias
            A = self.M.T @ self.M + lam * np.eye(q.shape[0])
            return q - np.linalg.solve(A, self.M.T @ self.e)

    linear, rng = _generated(_LINEAR), np.random.default_rng(3)
    for _ in range(10):
        M, t, q0 = rng.normal(size=(4, 3)), rng.normal(size=4), rng.normal(size=3)
        t = M @ rng.normal(size=3) if rng.random() < 0.5 else t  # solvable or least squares
        rule = lm_loop.Rule(0.01, 1e-6, 0.995, lm_loop.bounds(((1, 1e3),), 30), True)
        q, it, done, E = lm_loop.run(Linear(M, t, 1e-12), q0.copy(), Budget(10.0), rule)
        q_gen = q0.copy()
        it_gen, done_gen, E_gen = linear(M, t, q_gen, 1e-12, 0.01, 1e-6, 0.995,
                                         np.array(rule.bounds))
        assert (it_gen, done_gen) == (it, done) and np.allclose(q_gen, q, atol=1e-12)
        assert done or it < rule.last  # the least-squares ones stall
    fixed = _generated(_FIXED)
    bounds = np.array(lm_loop.bounds(((3, 1.0),), 10))
    for E0, last in ((2.0, 3), (np.inf, 1), (np.nan, 1), (0.5, 4)):
        q = np.zeros(1)
        it, done, _ = fixed(E0, q, 0.01, 1e-6, 0.995, bounds)
        assert not done and it == last and q[0] == it - 1
