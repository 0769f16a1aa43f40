"""Minimise the costs from a feasible configuration: SQP steps with a QP solver (daqp).

Once an attempt has found a configuration where the pose (if any) and every constraint
hold, each polishing step solves the quadratic program::

    min_dq  1/2 dq^T (H + mu I) dq + grad^T dq
    s.t.    lower' - g(q) <= J(q) dq <= upper' - g(q)      every physical constraint row
            e_pose(q) + J_pose(q) dq = 0                    the pose target, when any
            max(q_min - q, -radius) <= dq <= min(q_max - q, radius)

(``g`` the constraints' physical rows [m or rad] within bounds shrunk by a quarter of the
tolerance, ``H`` the costs' Gauss-Newton curvature) with daqp, a dual active-set solver
for small dense QPs (~5 us here).  A step is kept only when the re-evaluated costs
decrease and every constraint still holds in physical units; otherwise the trust radius
shrinks.  Stops when a step no longer changes the costs by more than ``RELATIVE_DECREASE``.
"""
from __future__ import annotations

import math
from ctypes import c_int
from typing import Callable, Tuple

import daqp
import numpy as np

from ros2_ik.core.solvers.budget import Budget
from ros2_ik.core.solvers.residuals import DONE_FRACTION, Residuals

#: Polishing steps at most per attempt.
MAX_STEPS = 30
#: Initial and smallest trust radius (infinity norm of the step) [rad or m].
RADIUS, MIN_RADIUS = 1.5, 1e-6
#: Stop when a kept step, or the QP's predicted decrease, lowers the costs by less than
#: this fraction of them (plus 1e-12 absolute).
RELATIVE_DECREASE = 1e-6
#: Damping added to the curvature model (keeps the QP strictly convex).
MU = 1e-6
_EQUALITY = 5  # daqp's sense flag of an equality row


def polish(res: Residuals, q: np.ndarray, budget: Budget,
           restore: Callable[[np.ndarray], Tuple[np.ndarray, bool]]) -> Tuple[np.ndarray, int]:
    """Lower the costs from feasible group vector ``q``; returns ``(q, steps)``.

    ``restore(q)`` brings a configuration that a step carried just outside the
    constraints back onto them (``(q, feasible)``): the linearised constraints are only
    right to first order, so along a curved feasible set (a pose held within millimetres
    while the arm's self-motion lowers a posture cost) nearly every full step ends outside.
    """
    cost, state = _evaluate(res, q)
    if state is None:  # not feasible after all (the attempt's test is its own)
        return q, 0
    radius = RADIUS
    for step in range(1, MAX_STEPS + 1):
        if budget.expired() or radius < MIN_RADIUS:
            return q, step
        dq = _qp_step(res, q, state, radius)
        if dq is None:
            radius *= 0.25
            continue
        grad, hessian = state[3], state[4]
        predicted = -(grad @ dq + 0.5 * dq @ hessian @ dq)
        if predicted <= RELATIVE_DECREASE * abs(cost) + 1e-12:
            return q, step  # first-order optimal within the linearisation
        q_new = np.minimum(np.maximum(q + dq, res.group.search_lower), res.group.search_upper)
        cost_new, state_new = _evaluate(res, q_new)
        if state_new is None:
            q_new, feasible = restore(q_new)
            if feasible:
                cost_new, state_new = _evaluate(res, q_new)
        if state_new is None or not cost_new < cost:
            radius = 0.25 * float(np.max(np.abs(dq), initial=radius))
            continue
        decrease = cost - cost_new
        q, cost, state = q_new, cost_new, state_new
        if decrease <= RELATIVE_DECREASE * abs(cost) + 1e-12:
            return q, step
        radius = min(2.0 * radius, RADIUS)
    return q, MAX_STEPS


def _evaluate(res: Residuals, q: np.ndarray):
    """Costs at ``q`` and the linearisation there, or (inf, None) when ``q`` is infeasible."""
    q_full = res.update(q)
    pe = pJ = None
    if res.pose is not None:
        pe, pJ, scaled = res.pose_rows()
        if scaled > 1.0:
            return math.inf, None
    g, J = res.physical_rows(q_full)
    lo, hi = res.physical_lower, res.physical_upper
    outside = np.maximum(np.maximum(lo - g, g - hi), 0.0)  # beyond the shrunk bounds
    if outside.size and not np.all(outside <= (1.0 + 4.0 * DONE_FRACTION) * res.physical_margin):
        return math.inf, None
    cost, grad, hessian = res.cost_model(q_full)
    return cost, (res.linearised_rows(q_full), pe, pJ, grad, hessian)


def _qp_step(res: Residuals, q: np.ndarray, state, radius: float):
    """Return the QP step (see the module docstring), or None when daqp finds none."""
    (g, J, g_lower, g_upper), pe, pJ, grad, hessian = state
    n = q.shape[0]
    H = hessian + MU * np.eye(n)
    upper = np.minimum(res.group.search_upper - q, radius)
    lower = np.maximum(res.group.search_lower - q, -radius)
    rows, row_hi, row_lo = [J], [g_upper - g], [g_lower - g]
    sense = [np.zeros(n + g.shape[0], dtype=c_int)]
    if pe is not None:
        mask = res.pose.mask
        rows.append(pJ[mask])
        row_hi.append(-pe[mask])
        row_lo.append(-pe[mask])
        sense.append(np.full(int(mask.sum()), _EQUALITY, dtype=c_int))
    A = np.vstack(rows)
    b_hi = np.concatenate([upper] + row_hi)
    b_lo = np.concatenate([lower] + row_lo)
    b_lo = np.minimum(b_lo, b_hi)  # a row already outside its shrunk bound: no worse
    dq, _, flag, _ = daqp.solve(H, grad, A, b_hi, b_lo, np.concatenate(sense))
    if flag < 1 or not np.all(np.isfinite(dq)):
        return None
    return np.asarray(dq)
