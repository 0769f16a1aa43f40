"""Levenberg-Marquardt with Chan's damping (Sugihara 2011) and random restarts.

Step: ``(J^T J + (E + bias) I) dq = -J^T e`` with ``E = e^T e`` the weighted
squared error, every step accepted, the iterate clamped into the joint limits.
Short attempts (``max_iterations``) restarted from uniform random configurations
until the budget runs out: restarts matter more than the local method.

Pose-only problems run on the group's reduced model with one pinocchio call per
iteration (``computeFrameJacobian``) and a direct LAPACK ``dposv``; problems with
constraints stack their hinge rows (:mod:`residuals`) on the full model.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Tuple

import numpy as np
import pinocchio as pin
from scipy.linalg.lapack import dposv

from ros2_ik.core import errors
from ros2_ik.core.problem import Problem
from ros2_ik.core.solvers.base import Solver
from ros2_ik.core.solvers.budget import Budget
from ros2_ik.core.solvers.residuals import Residuals

LWA = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED


def damped_step(J: np.ndarray, e: np.ndarray, damping: float) -> np.ndarray:
    """``dq`` minimising ``|J dq + e|^2 + damping |dq|^2`` (smaller normal system)."""
    m, n = J.shape
    if n <= m:
        A = J.T @ J
        A.flat[::n + 1] += damping
        return -dposv(A.T, J.T @ e, overwrite_a=1, overwrite_b=1)[1]
    A = J @ J.T
    A.flat[::m + 1] += damping
    return -(J.T @ dposv(A.T, e, overwrite_a=1)[1])


@dataclass
class _FastState:
    model: pin.Model
    data: pin.Data
    fid: int
    p_t: np.ndarray
    R_tT: np.ndarray
    R6: np.ndarray
    rotate: bool
    sqrt_w: np.ndarray
    weighted: bool
    inv_tol: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    continuous: bool
    group: Any


class LevenbergMarquardt(Solver):
    """Default pose solver: Chan-damped LM, clamped to limits, many short restarts."""

    name = "lm"
    #: Iterations of one attempt before a restart.
    max_iterations = 30
    #: Constant added to the damping ``E`` (keeps steps finite at singularities).
    bias = 1e-3
    #: Damping = damping_scale * E + bias (Chan & Lawrence: scale 1).
    damping_scale = 1.0
    #: Give up an attempt when the error shrank by less than this factor 3 times in a row.
    stall_ratio = 0.995

    def setup(self, problem: Problem) -> Any:
        """Reduced-model state for pose-only problems, stacked residuals otherwise."""
        if problem.costs and not self.supports_costs:
            raise errors.InvalidArgument(
                f"solver '{self.name}' does not minimise costs; use 'sqp' or 'bfgs'")
        if problem.pose_only:
            return self._fast_state(problem)
        return Residuals(problem)

    @staticmethod
    def _fast_state(problem: Problem) -> _FastState:
        group, pose = problem.group, problem.pose
        model = group.reduced_model
        return _FastState(
            model=model, data=group.reduced_data(), fid=pose.reduced_frame_id,
            p_t=pose.p_t, R_tT=pose.R_tT, R6=pose.R6, rotate=not pose.isotropic,
            sqrt_w=pose.sqrt_w, weighted=not pose.unit_weights, inv_tol=pose.inv_tol,
            lower=group.reduced_lower, upper=group.reduced_upper,
            continuous=bool(group.continuous.any()), group=group)

    def local_solve(self, state: Any, q0: np.ndarray, budget: Budget) -> Tuple[np.ndarray, int]:
        """One attempt from ``q0``."""
        if isinstance(state, _FastState):
            q_red, it = self._attempt_fast(state, state.group.to_reduced_q(q0), budget)
            return state.group.from_reduced_q(q_red), it
        return self._attempt_generic(state, q0, budget)

    def _attempt_fast(self, s: _FastState, q: np.ndarray, budget: Budget) -> Tuple[np.ndarray, int]:
        cfj, log3, bias, stall = pin.computeFrameJacobian, pin.log3, self.bias, self.stall_ratio
        scale = self.damping_scale
        model, data, fid, lower, upper = s.model, s.data, s.fid, s.lower, s.upper
        sq = s.sqrt_w[:, None]
        E_prev, stalls = np.inf, 0
        for it in range(1, self.max_iterations + 1):
            J = cfj(model, data, q, fid, LWA)
            M = data.oMf[fid]
            e = np.concatenate((M.translation - s.p_t, log3(M.rotation @ s.R_tT)))
            if s.rotate:
                e, J = s.R6 @ e, s.R6 @ J
            es = e * s.inv_tol
            if es @ es <= 1.0:
                return q, it
            if s.weighted:
                e, J = e * s.sqrt_w, J * sq
            E = e @ e
            stalls = stalls + 1 if E > stall * E_prev else 0
            if stalls >= 3 or budget.expired():
                return q, it
            E_prev = E
            dq = damped_step(J, e, scale * E + bias)
            q = pin.integrate(model, q, dq) if s.continuous else q + dq
            q = np.minimum(np.maximum(q, lower), upper)
        return q, self.max_iterations

    def _attempt_generic(self, res: Residuals, q: np.ndarray,
                         budget: Budget) -> Tuple[np.ndarray, int]:
        lower, upper = res.group.lower, res.group.upper
        E_prev, stalls = np.inf, 0
        for it in range(1, self.max_iterations + 1):
            e, J, done = res.evaluate(q)
            if done:
                return q, it
            E = e @ e
            stalls = stalls + 1 if E > self.stall_ratio * E_prev else 0
            if stalls >= 3 or budget.expired():
                return q, it
            E_prev = E
            q = np.minimum(np.maximum(q + damped_step(J, e, self.damping_scale * E + self.bias), lower), upper)
        return q, self.max_iterations

