"""The one Python LM loop (:func:`lm_loop.run`) against the compiled one, on both kinds of rows.

The Python loop is the no-numba fallback and the oracle of the compiled kernels: from the
same starts, the pose rows (:class:`PoseState`, ``log6``) and the stacked rows
(:class:`active_set.StackedRows`) must take the same steps as :mod:`chain_kernel` and
:mod:`constraint_kernel` (same iterations, verdict and end point, to rounding), and every
converged end point of either must pass the independent check (:func:`verify.verify_pose`:
pinocchio on the full model, in metres and radians).
"""
import numpy as np
import pytest

from ros2_ik.core import robots
from ros2_ik.core.pose import PoseTarget
from ros2_ik.core.problem import Problem
from ros2_ik.core.solvers import attempts, chain_kernel, lm_loop
from ros2_ik.core.solvers.base import SolveOptions
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
