"""One Levenberg-Marquardt attempt on pose rows and constraint rows, with an active set.

The constraint rows are the constraints' physical rows ([m] or [rad],
``Constraint.evaluate_physical``) against their bounds shrunk by a quarter of the
tolerance (:class:`~ros2_ik.core.solvers.residuals.Residuals`).  A row outside its bound
is a least-squares residual ``g - bound``; a row inside is left out, unless the step would
carry it outside: then it joins as an equality at its bound and the step is solved again
(at most ``PREDICTIONS`` times).  Without that prediction a hinge row leaves the system as
soon as it is satisfied, the next step pushes it back out, and the iterates zig-zag
(many iterations, and attempts that never settle).  Joints on a limit that the step
pushes outward are dropped and the step solved again, as in the pose loops.
"""
from __future__ import annotations

import math
from typing import Tuple

import numpy as np

from ros2_ik.core.solvers.budget import Budget
from ros2_ik.core.solvers.residuals import DONE_FRACTION, Residuals, hinge_rows

#: Re-solves per iteration for rows the step would carry outside their bounds.
PREDICTIONS = 2
_Attempt = Tuple[np.ndarray, int, bool, float]  # (q, iterations, converged, merit)
_EMPTY = np.zeros(0)


def attempt(res: Residuals, q: np.ndarray, budget: Budget, step, params,
            max_iterations: int = 0) -> _Attempt:
    """One attempt from group vector ``q``: ``(q, iterations, converged, merit)``.

    ``step(J, e, damping)`` returns the damped least-squares step (minimising
    ``|J dq + e|^2 + damping |dq|^2``); ``params`` has the LM's ``damping_scale``,
    ``bias``, ``stall_ratio``, ``max_iterations_constrained`` and ``active_set``;
    ``max_iterations`` > 0 overrides the last.
    """
    lower, upper = res.lower, res.upper
    lo, hi, margin = res.row_lower, res.row_upper, res.row_margin
    # Python floats: a handful of rows and joints, where numpy calls cost more.
    lo_list, hi_list, margin_list = lo.tolist(), hi.tolist(), margin.tolist()
    group = res.group
    lower_list, upper_list = group.tangent_bounds(lower, upper)
    E_prev, stalls = math.inf, 0
    last = max_iterations or params.max_iterations_constrained
    pose_done = True
    for it in range(1, last + 1):
        pe, pJ = _EMPTY, res.empty_jacobian
        q_full = res.update(q)
        if res.pose is not None:
            pe, pJ, scaled = res.pose_rows()
            pose_done = scaled <= 1.0
        xe, xJ, x_worst = res.excess_rows(q_full)  # always in the system, like the pose
        if xe.size:
            pe, pJ = np.concatenate((pe, xe)), np.vstack((pJ, xJ))
        g, J = res.all_rows(q_full)
        r, rr, worst_rows = hinge_rows(g.tolist(), lo_list, hi_list, margin_list)
        worst = max(0.25 * worst_rows - 0.25, x_worst)
        E = float(pe @ pe) + rr
        if pose_done and worst <= DONE_FRACTION:
            return q, it, True, E
        stalls = stalls + 1 if E > params.stall_ratio * E_prev else 0
        if it == last or stalls >= 3 or budget.expired() or not math.isfinite(E):
            return q, it, False, E
        E_prev = E
        damping = params.damping_scale * E + params.bias
        dq = _predicted_step(step, pe, pJ, g, J, np.array(r), lo, hi, damping)
        if params.active_set:
            out = _pushed_out(group.tangent_list(q), dq.tolist(), lower_list, upper_list)
            if out is not None:
                dq = _predicted_step(step, pe, pJ * ~out, g, J * ~out, np.array(r), lo, hi,
                                     damping)
        q = group.project(res.integrate(q, dq), lower, upper)
    raise AssertionError("unreachable")


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
