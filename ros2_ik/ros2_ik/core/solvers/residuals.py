"""Stacked residuals on the full model: weighted pose error rows + constraint hinges.

``r(q)`` (shape ``(m,)``) and ``J(q)`` (shape ``(m, n)``, group columns) for the
least-squares solvers (LM, DLS) and the objective of BFGS.  Constraint rows are the
constraints' physical rows (``Constraint.evaluate_physical``: [m] or [rad], so that a
residual of 1e-4 is 1e-4 m or 1e-4 rad, as the verification measures it).  A row
contributes ``penalty * (g - upper)`` above its upper bound, ``penalty * (g - lower)``
below its lower bound and nothing inside (bounds shrunk by a quarter of the row's
tolerance), so a zero residual means the pose is reached *and* every constraint holds:
collision avoidance happens in-solve.
"""
from __future__ import annotations

import math
from typing import List, Optional, Tuple

import numpy as np
import pinocchio as pin

from ros2_ik.core.pose import split_error
from ros2_ik.core.problem import Problem
from ros2_ik.core.verify import DEFAULT_TOLERANCE, ConstraintTolerance

LWA = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED

#: Scale of constraint hinge rows relative to pose rows (1 m of violation ~ 1 m error).
PENALTY_WEIGHT = 1.0
_EMPTY = np.zeros(0)
#: An attempt is done when no row is outside its bound by more than this fraction of its
#: tolerance (the independent check then has room for rounding).
DONE_FRACTION = 0.5


def hinge_rows(g, lower, upper, margin) -> Tuple[List[float], float, float]:
    """Return the signed distance of each row outside its bounds, on lists of floats.

    A constraint has a handful of rows: numpy calls cost more than Python floats.
    Returns the rows (0 inside; a NaN row is as violated as it gets: inf), their squared
    sum and the largest ``|row| / margin``.
    """
    r, rr, worst = [], 0.0, 0.0
    for v, a, b, m in zip(g, lower, upper, margin):
        x = v - a if v < a else (v - b if v > b else (0.0 if v == v else math.inf))
        r.append(x)
        rr += x * x
        worst = max(worst, abs(x) / m)
    return r, rr, worst


def _shrunk(c, tolerance: ConstraintTolerance) -> tuple:
    """Return ``(c, lower, upper, margin)``: physical bounds moved inside by ``margin``.

    ``margin`` is a quarter of each row's tolerance; all are lists of floats.  A hinge row
    then pushes slightly inside the set instead of stopping on its edge.
    """
    lo, hi = (np.asarray(b, dtype=float) for b in c.physical_bounds)
    units = tuple(c.units)
    if len(units) != lo.shape[0]:  # a constraint whose measure has other rows
        units = units[:1] * lo.shape[0]
    margin = 0.25 * np.array([tolerance.of(u) for u in units])
    return c, (lo + margin).tolist(), (hi - margin).tolist(), margin.tolist()


class Residuals:
    """Evaluate the stacked residual of ``problem`` at group vectors (own ``pin.Data``)."""

    def __init__(self, problem: Problem, penalty: float = PENALTY_WEIGHT,
                 tolerance: ConstraintTolerance = DEFAULT_TOLERANCE, exact: bool = True):
        """Create this evaluator's Data; it belongs to the calling thread.

        ``exact`` False drops the ``Jlog3`` factor of the rotation rows (Gauss-Newton
        solvers converge as well with it, gradient solvers need it).
        """
        self.problem = problem
        self.exact = exact
        self.group = group = problem.group
        #: Bounds (n,) the solvers project group vectors into: the search limits,
        #: narrowed by joint windows (:attr:`Problem.search_bounds`).
        self.lower, self.upper = problem.search_bounds
        self.pose = problem.pose
        self.penalty = penalty
        self.R6 = self.pose.R6 if self.pose is not None else None
        # Pose alone: the reduced model (only the group's joints) is enough and cheaper.
        self.reduced = not problem.constraints and not problem.costs and not group.has_base
        if self.reduced:
            self.model, self.iv = group.reduced_model, np.arange(group.n)
            self.fid = self.pose.reduced_frame_id
            self._to_q = group.to_reduced_q
        else:
            self.model, self.iv = group.robot.model, group.iv_full
            self.fid = self.pose.frame_id if self.pose is not None else -1
            self._to_q = group.to_full_q
        iv = self.iv
        if iv.size and np.array_equal(iv, np.arange(iv[0], iv[0] + iv.size)):
            self.iv = slice(int(iv[0]), int(iv[0]) + iv.size)  # a view, not a copy
        # Coupled mimic joints: the group's own map (:meth:`columns`); a bound method of
        # this object kept on it would make a reference cycle only the collector frees.
        self._coupled_columns = group.group_columns if group.coupled and not self.reduced \
            else None
        # This thread's Data of the model, reused: createData scales with the whole robot,
        # not the chain (~90 ms on a 102-joint model under load), and each evaluation
        # writes all it reads.
        self.data = group.residuals_data(self.reduced)
        # Constraints with a vector excess (an orientation bound) stack it instead of rows.
        self._excess = [(c, c.physical_bounds[1][0] - 0.25 * tolerance.rad)
                        for c in problem.row_constraints if hasattr(c, "evaluate_excess")]
        self._excess_margin = 0.25 * tolerance.rad
        shrunk = [_shrunk(c, tolerance) for c in problem.row_constraints]
        self._bounds = [b for b in shrunk if not hasattr(b[0], "evaluate_excess")]
        self._row_constraints = [b[0] for b in self._bounds]
        self.empty_jacobian = np.zeros((0, group.nv))
        self._qp_margins = [0.25 * tolerance.of(c.units[0]) if len(c.units) else 0.0
                            for c in problem.row_constraints]
        #: Every constraint's physical rows stacked (:meth:`physical_rows`): shrunk bounds.
        self.physical_lower = np.array([v for b in shrunk for v in b[1]])
        self.physical_upper = np.array([v for b in shrunk for v in b[2]])
        self.physical_margin = np.array([v for b in shrunk for v in b[3]])
        #: The row constraints' rows stacked (:meth:`all_rows`): shrunk bounds and margins.
        self.row_lower = np.array([v for b in self._bounds for v in b[1]])
        self.row_upper = np.array([v for b in self._bounds for v in b[2]])
        self.row_margin = np.array([v for b in self._bounds for v in b[3]])
        self._row_lower_list, self._row_upper_list, self._row_margin_list = (
            self.row_lower.tolist(), self.row_upper.tolist(), self.row_margin.tolist())
        starts = np.cumsum([0] + [len(b[1]) for b in self._bounds])
        #: (row, constraint) of the one-row constraints whose row is a norm (``bend``).
        self.bends = [(int(starts[k]), c) for k, c in enumerate(self._row_constraints)
                      if hasattr(c, "bend") and starts[k + 1] - starts[k] == 1]

    def columns(self, J: np.ndarray) -> np.ndarray:
        """Map the full model's derivative ``J`` (..., nv) to the group's (..., n).

        Its columns ``iv``; coupled mimic joints' added into their leaders'
        (:meth:`Group.group_columns`).
        """
        coupled = self._coupled_columns
        return J[..., self.iv] if coupled is None else coupled(J)

    def integrate(self, q: np.ndarray, dq: np.ndarray) -> np.ndarray:
        """Return group vector ``q`` (nq,) moved by tangent step ``dq`` (nv,).

        The one place the stacked loop's step meets the configuration: the group's own
        ``integrate`` (plain addition [rad, m] on fixed-base groups, whose continuous
        joints are plain angles; pinocchio's Lie-group integrate on a floating or planar
        base).  The caller projects into the limits (``group.project``).
        """
        return self.group.integrate(q, dq)

    def update(self, q: np.ndarray) -> np.ndarray:
        """Kinematics at group vector ``q``; returns the model configuration used."""
        q_full = self._to_q(q)
        pin.computeJointJacobians(self.model, self.data, q_full)
        pin.updateFramePlacements(self.model, self.data)
        return q_full

    def pose_rows(self) -> Tuple[np.ndarray, np.ndarray, float]:
        """Weighted pose residual (6,), its exact Jacobian (6, n), scaled squared error.

        ``e = [R_t^T (p - p_t), log3(R_t^T R)]``; the rotation rows use ``Jlog3`` so
        that gradient-based solvers (BFGS, SLSQP) see the true derivative.
        """
        pose = self.pose
        T = pose.T_target_world * self.data.oMf[self.fid]
        e = np.concatenate(split_error(T))  # the verifier's: weights, tolerances apply
        J = self.columns(
            pin.getFrameJacobian(self.model, self.data, self.fid, LWA).reshape(6, -1))
        if self.exact:
            R_tT = self.R6[:3, :3]
            Jr = pin.Jlog3(T.rotation) @ (T.rotation.T @ (R_tT @ J[3:]))
            J = np.vstack((R_tT @ J[:3], Jr))
        else:
            J = self.R6 @ J
        es = e * pose.inv_tol
        return e * pose.sqrt_w, J * pose.sqrt_w[:, None], float(es @ es)

    def constraint_rows(self, q_full: np.ndarray) -> Tuple[np.ndarray, np.ndarray, float]:
        """Hinge rows of the violated constraints, their Jacobian, the largest violation.

        The violation is relative to each row's tolerance (1: a row exactly one
        tolerance outside its bound).  Satisfied rows are left out: a zero residual with
        a zero Jacobian row adds nothing to the normal equations or the gradient.
        """
        g, J = self.all_rows(q_full)
        r, _, worst = hinge_rows(g.tolist(), self._row_lower_list, self._row_upper_list,
                                 self._row_margin_list)
        active = [k for k, x in enumerate(r) if x != 0.0]
        if not active:
            return _EMPTY, self.empty_jacobian, 0.0
        r, J = np.array(r)[active], J[active]
        if self.penalty != 1.0:
            r, J = r * self.penalty, J * self.penalty
        return r, J, 0.25 * worst - 0.25

    def all_rows(self, q_full: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
        """Every constraint's physical rows ``g`` (m,) [m or rad] and Jacobian ``(m, n)``.

        In the order of :attr:`row_lower`; kinematics must be updated (:meth:`update`).
        """
        return self._stacked_physical(self._row_constraints, q_full)

    def curvature(self, r, q_full: np.ndarray) -> Optional[np.ndarray]:
        """``sum r_i^2 T_i^T T_i`` (n, n) over the norm rows above their upper bound, or None.

        ``r``: the hinge rows of :meth:`all_rows` (positive above the upper bound);
        ``T_i``: the row's ``bend`` (kinematics updated).  The Gauss-Newton curvature of
        each such row written as its vector excess (``PointToPointDistanceConstraint.bend``).
        """
        C = None
        for row, c in self.bends:
            if r[row] > 0.0:
                T = c.bend(self.model, self.data, q_full)
                if T is not None:
                    T = self.columns(T)
                    C = r[row] ** 2 * (T.T @ T) + (0.0 if C is None else C)
        return C

    def physical_rows(self, q_full: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
        """Every constraint's ``evaluate_physical`` rows (k,) and Jacobian ``(k, n)``.

        In the order of :attr:`physical_lower`; kinematics must be updated.
        """
        return self._stacked_physical(self.problem.row_constraints, q_full)

    def _stacked_physical(self, constraints, q_full: np.ndarray):
        values, jacobians = [], []
        for c in constraints:
            g, Jg = c.evaluate_physical(self.model, self.data, q_full)
            values.append(g)
            jacobians.append(Jg)
        if not values:
            return _EMPTY, self.empty_jacobian
        return np.concatenate(values), self.columns(np.vstack(jacobians))

    def linearised_rows(self, q_full: np.ndarray):
        """Return every constraint's ``linearisation`` stacked: ``(g, J (k, n), lower, upper)``.

        The margin is a quarter of each constraint's tolerance.
        """
        parts = [c.linearisation(self.model, self.data, q_full, margin)
                 for c, margin in zip(self.problem.row_constraints, self._qp_margins)]
        if not parts:
            return _EMPTY, self.empty_jacobian, _EMPTY, _EMPTY
        g, J, lower, upper = (np.concatenate([p[k] for p in parts]) if k != 1 else
                              np.vstack([p[1] for p in parts]) for k in range(4))
        return g, self.columns(J), lower, upper

    def cost_model(self, q_full: np.ndarray) -> Tuple[float, np.ndarray, np.ndarray]:
        """Sum of costs, gradient (n,) and a curvature model (n, n) (kinematics updated).

        Costs with a Gauss-Newton form add ``J_r^T J_r``; the others add nothing (the
        caller's trust region and damping bound their steps).
        """
        n = self.group.nv
        total, grad, hessian = 0.0, np.zeros(n), np.zeros((n, n))
        for c in self.problem.costs:
            gn = c.gauss_newton(self.model, self.data, q_full)
            if gn is None:
                value, g = c.evaluate(self.model, self.data, q_full)
                total += float(value)
                grad += self.columns(np.asarray(g))
                continue
            r, Jr = gn
            Jr = self.columns(np.asarray(Jr))
            total += 0.5 * float(r @ r)
            grad += Jr.T @ r
            hessian += Jr.T @ Jr
        return total, grad, hessian

    def excess_rows(self, q_full: np.ndarray) -> Tuple[np.ndarray, np.ndarray, float]:
        """Vector excesses of the constraints that have one, Jacobian, worst violation.

        The worst violation is relative to the tolerance, as in :meth:`constraint_rows`.
        """
        if not self._excess:
            return _EMPTY, self.empty_jacobian, 0.0
        values, jacobians, worst = [], [], 0.0
        for c, bound in self._excess:
            e, Je = c.evaluate_excess(self.model, self.data, q_full, bound)
            values.append(e)
            jacobians.append(Je)
            worst = max(worst, math.sqrt(float(e @ e)) / self._excess_margin)
        return (np.concatenate(values), self.columns(np.vstack(jacobians)),
                0.25 * worst - 0.25)

    def evaluate(self, q: np.ndarray) -> Tuple[np.ndarray, np.ndarray, bool]:
        """(r (m,), J (m, n), done) at group vector ``q``; done = in tolerance and feasible."""
        q_full = self.update(q)
        parts_r, parts_J, done = [], [], True
        if self.pose is not None:
            r, J, scaled = self.pose_rows()
            parts_r.append(r)
            parts_J.append(J)
            done = scaled <= 1.0
        for r, J, worst in (self.constraint_rows(q_full), self.excess_rows(q_full)):
            if r.size:
                parts_r.append(r)
                parts_J.append(J)
                done = done and worst <= DONE_FRACTION
        if not parts_r:  # no pose and every constraint holds
            return _EMPTY, self.empty_jacobian, done
        return np.concatenate(parts_r), np.vstack(parts_J), done

    def costs(self, q_full: np.ndarray) -> Tuple[float, np.ndarray]:
        """Sum of costs and its gradient (n,) (kinematics must be updated)."""
        total, grad = 0.0, np.zeros(self.group.nv)
        for c in self.problem.costs:
            value, g = c.evaluate(self.model, self.data, q_full)
            total += float(value)
            grad += self.columns(np.asarray(g))
        return total, grad
