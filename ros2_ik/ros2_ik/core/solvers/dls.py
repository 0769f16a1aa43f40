"""Damped least squares: pinocchio's CLIK example (seed 003) with restarts and limits.

``v = -J^T (J J^T + damping I)^-1 e`` and ``q <- q + dt v`` with a *fixed* damping
and step, the method of pinocchio's inverse-kinematics example, kept as the
baseline.  Differences from the example: joint limits are enforced (clamp), an
attempt stops after ``max_iterations`` and restarts from a random configuration,
constraint hinge rows are stacked under the pose rows when the problem has any.
"""
from __future__ import annotations

from typing import Any, Tuple

import numpy as np
import pinocchio as pin
from scipy.linalg.lapack import dposv

from ros2_ik.core import errors
from ros2_ik.core.pose import twist_error
from ros2_ik.core.problem import Problem
from ros2_ik.core.solvers.base import Solver
from ros2_ik.core.solvers.options import LocalResult
from ros2_ik.core.solvers.budget import Budget
from ros2_ik.core.solvers.pose_state import PoseState
from ros2_ik.core.solvers.residuals import LWA, Residuals


def clik_step(J: np.ndarray, e: np.ndarray, damping: float) -> np.ndarray:
    """``-J^T (J J^T + damping I)^-1 e`` (the example's damped pseudo-inverse)."""
    A = J @ J.T
    A.flat[::A.shape[0] + 1] += damping
    return -(J.T @ dposv(A, e, overwrite_a=1)[1])


class DampedLeastSquares(Solver):
    """Closed-loop IK with a fixed damping and step (baseline)."""

    name = "dls"
    #: Whole-body groups run the stacked loop, stepping with ``group.integrate``.
    supports_base = True
    #: Damping of the pseudo-inverse (the example uses 1e-12; 1e-6 survives singularities).
    damping = 1e-6
    #: Step scale ``dt`` (the example uses 0.1; 0.5 converges in fewer iterations here).
    dt = 0.5
    #: Iterations of one attempt.
    max_iterations = 60

    def setup(self, problem: Problem) -> Any:
        """Reduced-model state for full-pose problems, stacked residuals otherwise.

        :meth:`local_solve` runs the loop of its type.
        """
        if problem.costs:
            raise errors.InvalidArgument(
                f"solver '{self.name}' does not minimise costs; use 'sqp' or 'bfgs'")
        if problem.pose_only and problem.pose.full_pose and not problem.group.has_base:
            return PoseState(problem)
        return Residuals(problem, exact=False, tolerance=self.options.constraint_tolerance)

    def local_solve(self, state: Any, q0: np.ndarray, budget: Budget) -> LocalResult:
        """One CLIK run from ``q0``: on the reduced model or the stacked residuals."""
        if type(state) is PoseState:
            return self._run_pose(state, q0, budget)
        return self._run_stacked(state, q0, budget)

    def _run_pose(self, state: PoseState, q0: np.ndarray, budget: Budget) -> LocalResult:
        """Run the CLIK loop on the reduced model's configuration of group vector ``q0``."""
        q, it, done, merit = self._run_fast(state, state.to_q(q0), budget)
        return LocalResult(state.from_q(q), it, done, merit)

    def _run_stacked(self, res: Residuals, q0: np.ndarray, budget: Budget) -> LocalResult:
        """Run the CLIK loop on the stacked residuals (pose and constraint rows)."""
        return LocalResult(*self._run_generic(res, q0, budget))

    def _run_fast(self, s: PoseState, q: np.ndarray, budget: Budget) -> Tuple:
        cfj = pin.computeFrameJacobian
        sw = s.sqrt_w[:, None]
        for it in range(1, self.max_iterations + 1):
            J = cfj(s.model, s.data, q, s.fid, LWA).reshape(6, -1) * sw  # (6,) when nv = 1
            M = s.data.oMf[s.fid]
            Terr = s.T_target_inv * M
            e = twist_error(Terr)  # the example's error, rotated to world axes below
            E = e @ e
            if E <= s.near2 and s.within(Terr):
                return q, it, True, E
            if it == self.max_iterations or budget.expired():
                return q, it, False, E
            e = (e.reshape(2, 3) @ M.rotation.T).reshape(6) * s.sqrt_w
            v = clik_step(J, e, self.damping) * self.dt
            q = s.integrate(q, v)
            if s.bounded:
                q = np.minimum(np.maximum(q, s.lower), s.upper)
        raise AssertionError("unreachable")

    def _run_generic(self, res: Residuals, q: np.ndarray, budget: Budget) -> Tuple:
        lower, upper = res.lower, res.upper
        for it in range(1, self.max_iterations + 1):
            e, J, done = res.evaluate(q)
            E = e @ e
            if done:
                return q, it, True, E
            if it == self.max_iterations or budget.expired():
                return q, it, False, E
            q = res.group.project(
                res.integrate(q, self.dt * clik_step(J, e, self.damping)), lower, upper)
        raise AssertionError("unreachable")
