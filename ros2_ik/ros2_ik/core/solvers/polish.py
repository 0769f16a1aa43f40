"""Minimise the costs from a feasible configuration: SQP steps with a QP solver (daqp).

Once an attempt has found a configuration where the pose (if any) and every constraint
hold, each polishing step solves the quadratic program::

    min_dq  1/2 dq^T (H + mu I) dq + grad^T dq
    s.t.    lower' - g(q) <= J(q) dq <= upper' - g(q)      every physical constraint row
            e_pose(q) + J_pose(q) dq = 0                    the pose target, when any
            max(q_min - q, -radius) <= dq <= min(q_max - q, radius)

(``g`` the constraints' linearisation rows [m or rad] within bounds shrunk by a quarter of
the tolerance) with daqp, a dual active-set solver for small dense QPs (cheap at these sizes).
``H`` models the curvature of the Lagrangian: it starts as the costs' Gauss-Newton
curvature and learns the constraints' from each kept step by a damped BFGS update (as
SLSQP does, with the QP's multipliers): without it, steps along a curved boundary (an
angle bound is a sphere in rotation space) leave the set at every step and the polishing
crawls.  A step that ends outside the constraints is brought back onto them; it is kept
only when the costs decrease and every constraint holds in physical units, otherwise
the trust radius shrinks.  Stops when a step, or the QP's prediction, no longer lowers the
costs by more than ``RELATIVE_DECREASE`` of them.

The costs and rows at each configuration come from a :class:`Model`: the Python
:class:`ResidualsModel` (any problem), or for problems the constraint kernel takes the
compiled one of :mod:`polish_kernel` (the same figures in one call).
"""
from __future__ import annotations

import math
import time
from ctypes import c_int
from typing import Any, Callable, NamedTuple, Optional, Protocol, Sequence, Tuple

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
RELATIVE_DECREASE = 1e-4
#: Damping added to the curvature model: this fraction of the costs' largest Gauss-Newton
#: curvature, plus ``MU_FLOOR`` (keeps the QP strictly convex).  Directions the costs do not
#: curve (an arm that moves while a base-motion cost pulls the base) would otherwise step
#: to the trust radius, overshoot the constraints' curvature, and be rejected.
MU, MU_FLOOR = 0.05, 1e-6
EQUALITY = 5  # daqp's sense flag of an equality row
_SENSE = np.dtype(c_int)  # resolved once, not per array
#: A trial point is feasible when every physical row lies within this many of its margins
#: beyond its shrunk bound (the restoration's done test, with room for rounding).
FEASIBLE_SLACK = 1.0 + 4.0 * DONE_FRACTION
_Attempt = Tuple[np.ndarray, int, bool, float]  # (q, iterations, converged, merit)


def polish(model: "Model", q: np.ndarray, budget: Budget,
           restore: Callable[[np.ndarray], Tuple[np.ndarray, bool]]) -> Tuple[np.ndarray, int]:
    """Lower the costs from feasible group vector ``q``; returns ``(q, steps)``.

    ``model``: the problem's model (:class:`ResidualsModel`, or the compiled one of
    :mod:`polish_kernel`).  ``restore(q)`` brings a configuration that a step carried just
    outside the constraints back onto them (``(q, feasible)``): the linearised
    constraints are only right to first order.
    """
    if budget.expired():  # the feasible answer in hand now, not a polished one too late
        return q, 0
    cost, state = model.evaluate(q)
    if state is None:  # not feasible after all (the attempt's test is its own)
        return q, 0
    B = damped(state.hessian)
    group = model.group
    radius, started = RADIUS, time.perf_counter()
    for step in range(1, MAX_STEPS + 1):
        now = time.perf_counter()
        # Stop while a step of the mean length still ends before the deadline: the
        # answer in hand is feasible, a late one is no answer.
        if budget.expired() or radius < MIN_RADIUS or \
                now + 1.5 * (now - started) / step > budget.deadline:
            return q, step
        found = _qp_step(model, q, state, B, radius)
        if found is None:
            radius *= 0.25
            continue
        dq, lam, predicted = found
        if predicted <= RELATIVE_DECREASE * abs(cost) + 1e-12:
            return q, step  # first-order optimal within the linearisation
        q_new, cost_new, state_new = _try(model, group.integrate(q, dq), restore)
        if state_new is None or not cost_new < cost:
            radius = 0.25 * min(radius, float(np.abs(dq).max()))
            continue
        B = _bfgs(B, group.difference(q, q_new), state_new.lagrangian_change(state, lam))
        decrease = cost - cost_new
        q, cost, state = q_new, cost_new, state_new
        if decrease <= RELATIVE_DECREASE * abs(cost) + 1e-12:
            return q, step
        radius = min(2.0 * radius, RADIUS)
    return q, MAX_STEPS


def from_best_start(model: "Model", starts: Sequence[np.ndarray],
                    project: Callable[[np.ndarray], _Attempt],
                    polish_from: Callable[[np.ndarray], Tuple[np.ndarray, int]],
                    budget: Budget) -> _Attempt:
    """Project every start onto the constraints, polish the feasible one of lowest costs.

    ``project(q0)``: an attempt without polishing, ``(q, iterations, converged, merit)``;
    ``polish_from(q)``: :func:`polish` from feasible ``q``.  Polishing stays in the basin
    of its start, so the start decides which local optimum is reached; a projection
    costs a few per cent of a polish.  (Polishing every projection instead, the lowest
    answer kept, reached the same objectives on the benchmark at twice the time.)  With
    no feasible projection, the end point of lowest merit is returned unconverged.
    """
    best, fallback, iterations = None, None, 0
    for q0 in starts:
        q, it, done, merit = project(q0)
        iterations += it
        if done:
            cost = model.cost(q)
            if best is None or cost < best[0]:
                best = (cost, q, merit)
        elif fallback is None or merit < fallback[1]:
            fallback = (q, merit)
        if budget.expired():
            break
    if best is None:
        return fallback[0], iterations, False, fallback[1]
    q, steps = polish_from(best[1])
    return q, iterations + steps, True, best[2]


class State(NamedTuple):
    """The linearisation at one feasible configuration."""

    rows: np.ndarray      # (k, n): constraint linearisation rows, then the pose rows
    values: np.ndarray    # (k,)
    lower: np.ndarray     # (k,) bounds of ``rows @ dq``, shifted by the values
    upper: np.ndarray
    equalities: int       # how many of the last rows are pose equalities
    grad: np.ndarray      # (n,) of the costs
    hessian: np.ndarray   # (n, n) the costs' Gauss-Newton curvature

    def lagrangian_change(self, before: "State", lam: np.ndarray) -> np.ndarray:
        """Change (n,) of ``grad + rows^T lam`` from ``before`` to here, at fixed ``lam``.

        ``lam``: the multipliers of ``before``'s rows, as daqp signs them.  Only the
        costs' gradients when a linearisation changed its row count.
        """
        if lam.shape[0] != self.rows.shape[0]:
            return self.grad - before.grad
        return self.grad - before.grad + lam @ (self.rows - before.rows)


class Model(Protocol):
    """What :func:`polish` asks of a problem: :class:`ResidualsModel` or the compiled one.

    ``lower``/``upper``: the search limits (n,); :meth:`evaluate` as
    :meth:`ResidualsModel.evaluate`; :meth:`cost` the costs' sum at a group vector.
    """

    lower: np.ndarray
    upper: np.ndarray
    #: The group: its ``integrate``, ``difference`` and ``project`` step the polishing.
    group: Any

    def evaluate(self, q: np.ndarray, restored: bool = False
                 ) -> Tuple[float, Optional[State]]:
        """Costs and linearisation at ``q`` (see :meth:`ResidualsModel.evaluate`)."""

    def cost(self, q: np.ndarray) -> float:
        """Sum of the costs at group vector ``q``."""


def _try(model: "Model", q_new: np.ndarray, restore):
    """Clamp, restore onto the constraints (a no-op when inside) and evaluate.

    Returns ``(q, cost, state)``, state None when the restoration failed.
    """
    q_new = model.group.project(q_new, model.lower, model.upper)
    q_new, feasible = restore(q_new)
    if not feasible:
        return q_new, math.inf, None
    cost_new, state_new = model.evaluate(q_new, restored=True)
    return q_new, cost_new, state_new


def damped(H: np.ndarray) -> np.ndarray:
    """Return ``H + (MU max diag(H) + MU_FLOOR) I``: the first curvature model."""
    B = H.copy()
    B.flat[::H.shape[0] + 1] += MU * max(float(np.max(np.diag(H))), 0.0) + MU_FLOOR
    return B


def _bfgs(B: np.ndarray, s: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Powell-damped BFGS update of ``B`` with step ``s`` and gradient change ``y``."""
    Bs = B @ s
    sBs = float(s @ Bs)
    if sBs <= 1e-16:
        return B
    sy = float(s @ y)
    if sy < 0.2 * sBs:  # keep B positive definite
        theta = 0.8 * sBs / (sBs - sy)
        y = theta * y + (1.0 - theta) * Bs
        sy = float(s @ y)
    return B + (y / sy)[:, None] * y - (Bs / sBs)[:, None] * Bs  # outer products


class ResidualsModel:
    """Polishing's model on Python residuals: any constraint, cost and pose target.

    What :func:`polish` asks of a model: the search limits ``lower``/``upper`` (n,),
    :meth:`evaluate` and :meth:`cost` (the compiled one: :mod:`polish_kernel`).
    """

    def __init__(self, res: Residuals):
        """Evaluate on ``res`` (its own ``pin.Data``)."""
        self.res = res
        self.group = res.group
        self.lower, self.upper = res.lower, res.upper

    def evaluate(self, q: np.ndarray, restored: bool = False):
        """Costs at ``q`` and the linearisation there, or (inf, None) when ``q`` is infeasible.

        ``restored``: ``q`` is a restoration's end that met its done test, the same bounds
        as the test here (every row within ``DONE_FRACTION`` of the margin beyond the
        shrunk bounds, the pose within tolerance): not tested again.
        """
        res = self.res
        q_full = res.update(q)
        pe = pJ = None
        if res.pose is not None:
            pe, pJ, scaled = res.pose_rows()
            if scaled > 1.0 and not restored:
                return math.inf, None
        if not restored and not _feasible(res, q_full):
            return math.inf, None
        cost, grad, hessian = res.cost_model(q_full)
        values, rows, lower, upper = res.linearised_rows(q_full)
        equalities = 0
        if pe is not None:
            mask = res.pose.mask
            equalities = int(mask.sum())
            rows = np.vstack((rows, pJ[mask]))
            values = np.concatenate((values, pe[mask]))
            lower = np.concatenate((lower, np.zeros(equalities)))
            upper = np.concatenate((upper, np.zeros(equalities)))
        return cost, State(rows, values, lower, upper, equalities, grad, hessian)

    def cost(self, q: np.ndarray) -> float:
        """Sum of the costs at group vector ``q``."""
        return self.res.costs(self.res.update(q))[0]


def _feasible(res: Residuals, q_full: np.ndarray) -> bool:
    """Whether every physical row lies within the polishing's bounds (kinematics updated)."""
    g, _ = res.physical_rows(q_full)
    lo, hi = res.physical_lower, res.physical_upper
    outside = np.maximum(np.maximum(lo - g, g - hi), 0.0)  # beyond the shrunk bounds
    return not outside.size or bool(
        np.all(outside <= FEASIBLE_SLACK * res.physical_margin))


def _qp_step(model: "Model", q: np.ndarray, state: State, B: np.ndarray, radius: float):
    """Return the QP step, the rows' multipliers and the decrease the QP predicts, or None.

    The predicted decrease ``-(grad^T dq + 1/2 dq^T B dq)`` is daqp's objective value negated.
    """
    n, k = state.grad.shape[0], state.values.shape[0]
    sense = np.zeros(n + k, dtype=_SENSE)
    if state.equalities:
        sense[n + k - state.equalities:] = EQUALITY
    lower, upper, q_v = model.lower, model.upper, q
    if model.group.has_base:  # bounds per tangent coordinate (the base's: none)
        lower, upper = (np.array(b) for b in model.group.tangent_bounds(lower, upper))
        q_v = np.array(model.group.tangent_list(q))
    b_hi = np.concatenate((np.minimum(upper - q_v, radius),
                           state.upper - state.values))
    b_lo = np.concatenate((np.maximum(lower - q_v, -radius),
                           state.lower - state.values))
    b_lo = np.minimum(b_lo, b_hi)  # a row already outside its shrunk bound: no worse
    dq, objective, flag, info = daqp.solve(B, state.grad, state.rows, b_hi, b_lo, sense)
    if flag < 1 or not math.isfinite(sum(dq.tolist())):  # NaN or inf anywhere
        return None
    return np.asarray(dq), np.asarray(info["lam"])[n:], -objective
