"""The rows and step of an LM attempt on pose and constraint rows, with an active set.

The constraint rows are the constraints' physical rows ([m] or [rad],
``Constraint.evaluate_physical``) against their bounds shrunk by a quarter of the
tolerance (:class:`~ros2_ik.core.solvers.residuals.Residuals`).  A row outside its bound
is a least-squares residual ``g - bound``; a row inside is left out, unless the step would
carry it outside: then it joins as an equality at its bound and the step is solved again
(at most ``PREDICTIONS`` times).  Without that prediction a hinge row leaves the system as
soon as it is satisfied, the next step pushes it back out, and the iterates zig-zag
(many iterations, and attempts that never settle).  Joints on a limit that the step
pushes outward are dropped and the step solved again, as in the pose rows.  The iteration
itself is :func:`lm_loop.run`'s.
"""
from __future__ import annotations

from functools import partial
from typing import Tuple

import numpy as np
from scipy.linalg.lapack import dposv

from ros2_ik.core.solvers.lm_loop import damped_step
from ros2_ik.core.solvers.residuals import DONE_FRACTION, Residuals, hinge_rows

#: Re-solves per iteration for rows the step would carry outside their bounds.
PREDICTIONS = 2
_EMPTY = np.zeros(0)


class StackedRows:
    """Pose, excess and hinge rows of :class:`Residuals` for :func:`lm_loop.run`.

    One per :class:`Residuals` (per solve); holds the rows of its last evaluation.
    """

    __slots__ = ("res", "lo", "hi", "lo_list", "hi_list", "margin_list", "lower_list",
                 "upper_list", "q_full", "pe", "pJ", "g", "J", "r", "E")

    def __init__(self, res: Residuals):
        """Read ``res``'s bounds once (Python floats: a handful of rows and joints)."""
        self.res = res
        self.lo, self.hi = res.row_lower, res.row_upper
        self.lo_list, self.hi_list = self.lo.tolist(), self.hi.tolist()
        self.margin_list = res.row_margin.tolist()
        self.lower_list, self.upper_list = res.group.tangent_bounds(res.lower, res.upper)
        self.q_full = self.pe = self.pJ = self.g = self.J = self.r = None
        self.E = 0.0

    def begin(self, q: np.ndarray) -> np.ndarray:
        """Start an attempt from group vector ``q``."""
        return q

    def evaluate(self, q: np.ndarray) -> Tuple[bool, float, float]:
        """Rows at group vector ``q``: ``(converged, E, E)``.

        The pose rows (when there is a target) and the vector excesses are always in the
        system; a hinge row only outside its shrunk bound.  Converged: the pose within
        tolerance and every row within ``DONE_FRACTION`` of its margin.
        """
        res = self.res
        pe, pJ, pose_done = _EMPTY, res.empty_jacobian, True
        q_full = self.q_full = res.update(q)
        if res.pose is not None:
            pe, pJ, scaled = res.pose_rows()
            pose_done = scaled <= 1.0
        xe, xJ, x_worst = res.excess_rows(q_full)
        if xe.size:
            pe, pJ = np.concatenate((pe, xe)), np.vstack((pJ, xJ))
        g, J = res.all_rows(q_full)
        r, rr, worst_rows = hinge_rows(g.tolist(), self.lo_list, self.hi_list,
                                       self.margin_list)
        E = self.E = float(pe @ pe) + rr
        self.pe, self.pJ, self.g, self.J, self.r = pe, pJ, g, J, r
        return pose_done and max(0.25 * worst_rows - 0.25, x_worst) <= DONE_FRACTION, E, E

    def step(self, q: np.ndarray, scale: float, bias: float, active_set: bool) -> np.ndarray:
        """Return the predicted-active-set step's end from ``q``, projected into the limits."""
        res, pe, pJ, g, J, lo, hi = self.res, self.pe, self.pJ, self.g, self.J, self.lo, \
            self.hi
        damping = scale * self.E + bias
        C = res.curvature(self.r, self.q_full) if res.bends else None  # norm rows' curvature
        solve = damped_step if C is None else partial(_curved_step, C)
        dq = _predicted_step(solve, pe, pJ, g, J, np.array(self.r), lo, hi, damping)
        if active_set:
            out = _pushed_out(res.group.tangent_list(q), dq.tolist(), self.lower_list,
                              self.upper_list)
            if out is not None:
                if C is not None:
                    solve = partial(_curved_step, C * np.outer(~out, ~out))
                dq = _predicted_step(solve, pe, pJ * ~out, g, J * ~out, np.array(self.r), lo,
                                     hi, damping)
        return res.group.project(res.integrate(q, dq), res.lower, res.upper)


def _curved_step(C: np.ndarray, J: np.ndarray, e: np.ndarray,
                 damping: float) -> np.ndarray:
    """``dq`` minimising ``|J dq + e|^2 + dq^T C dq + damping |dq|^2`` (joint space).

    ``C``: the norm rows' curvature (``Residuals.curvature``).
    """
    A = J.T @ J + C
    A.flat[::A.shape[0] + 1] += damping
    return -dposv(A, J.T @ e, overwrite_a=1, overwrite_b=1)[1]


def _pushed_out(q, dq, lower, upper):
    """Mask of the joints on a limit that the step ``dq`` pushes outward, or None."""
    hit = [(x <= lo and d < 0.0) or (x >= hi and d > 0.0)
           for x, d, lo, hi in zip(q, dq, lower, upper)]
    return np.array(hit) if any(hit) else None


def _predicted_step(step, pe, pJ, g, J, r, lo, hi, damping: float) -> np.ndarray:
    """Return the step on the violated rows, re-solved with the rows it would carry outside."""
    active = r != 0.0
    k = pe.shape[0]
    if k:  # pose and excess rows first, always in the system
        M, e = np.vstack((pJ, J)), np.concatenate((pe, r))
        rows = np.concatenate((np.ones(k, dtype=bool), active))
    else:
        M, e, rows = J, r, active
    for _ in range(PREDICTIONS + 1):
        dq = step(M[rows], e[rows], damping)
        predicted = g + J @ dq
        below, above = predicted < lo, predicted > hi
        new = ~active & (below | above)
        if not new.any():
            return dq
        e[k:] = np.where(new, np.where(below, g - lo, g - hi), e[k:])
        active |= new
        rows[k:] = active
    return dq
