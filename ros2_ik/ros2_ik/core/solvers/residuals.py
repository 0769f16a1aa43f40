"""Stacked residuals on the full model: weighted pose error rows + constraint hinges.

``r(q)`` (shape ``(m,)``) and ``J(q)`` (shape ``(m, n)``, group columns) for the
least-squares solvers (LM, DLS) and the objective of BFGS.  A constraint row
contributes ``penalty * (g - upper)`` above its upper bound, ``penalty * (g -
lower)`` below its lower bound and nothing inside, so a zero residual means the
pose is reached *and* every constraint holds: collision avoidance happens in-solve.
"""
from __future__ import annotations

from typing import List, Tuple

import numpy as np
import pinocchio as pin

from ros2_ik.core.problem import Problem

LWA = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED

#: Scale of constraint hinge rows relative to pose rows (1 m of violation ~ 1 m error).
PENALTY_WEIGHT = 1.0
_EMPTY = np.zeros(0)


class Residuals:
    """Evaluate the stacked residual of ``problem`` at group vectors (own ``pin.Data``)."""

    def __init__(self, problem: Problem, penalty: float = PENALTY_WEIGHT,
                 constraint_tolerance: float = 1e-4, exact: bool = True):
        """Create this evaluator's Data; it belongs to the calling thread.

        ``exact`` False drops the ``Jlog3`` factor of the rotation rows (Gauss-Newton
        solvers converge as well with it, gradient solvers need it).
        """
        self.problem = problem
        self.exact = exact
        self.group = group = problem.group
        self.pose = problem.pose
        self.penalty = penalty
        self.margin = 0.25 * constraint_tolerance
        self.R6 = self.pose.R6 if self.pose is not None else None
        # Pose alone: the reduced model (only the group's joints) is enough and cheaper.
        self.reduced = not problem.constraints and not problem.costs
        if self.reduced:
            self.model, self.iv = group.reduced_model, np.arange(group.n)
            self.fid = self.pose.reduced_frame_id
            self._to_q = group.to_reduced_q
        else:
            self.model, self.iv = group.robot.model, group.iv_full
            self.fid = self.pose.frame_id if self.pose is not None else -1
            self._to_q = group.to_full_q
        self.data = self.model.createData()
        # Bounds shrunk by the margin, once (a hinge row pushes slightly inside).
        self._bounds = [(np.asarray(c.lower_bound, float) + self.margin,
                         np.asarray(c.upper_bound, float) - self.margin)
                        for c in problem.constraints]
        self._empty_J = np.zeros((0, group.n))

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
        w = pin.log3(T.rotation)
        e = np.concatenate((T.translation, w))
        J = pin.getFrameJacobian(self.model, self.data, self.fid, LWA).reshape(6, -1)[:, self.iv]
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

        Satisfied rows are left out: a zero residual with a zero Jacobian row adds
        nothing to the normal equations or the gradient.
        """
        rows: List[np.ndarray] = []
        jacs: List[np.ndarray] = []
        worst = 0.0
        for c, (lo, hi) in zip(self.problem.constraints, self._bounds):
            g, Jg = c.evaluate(self.model, self.data, q_full)
            r = np.minimum(g - lo, 0.0) + np.maximum(g - hi, 0.0)
            active = r != 0.0
            if not active.any():
                continue
            worst = max(worst, float(np.abs(r).max()) - self.margin)
            rows.append(r[active])
            jacs.append(np.asarray(Jg)[active][:, self.iv])
        if not rows:
            return _EMPTY, self._empty_J, 0.0
        r, J = np.concatenate(rows), np.vstack(jacs)
        if self.penalty != 1.0:
            r, J = r * self.penalty, J * self.penalty
        return r, J, worst

    def evaluate(self, q: np.ndarray) -> Tuple[np.ndarray, np.ndarray, bool]:
        """(r (m,), J (m, n), done) at group vector ``q``; done = in tolerance and feasible."""
        q_full = self.update(q)
        parts_r, parts_J, done = [], [], True
        if self.pose is not None:
            r, J, scaled = self.pose_rows()
            parts_r.append(r)
            parts_J.append(J)
            done = scaled <= 1.0
        r, J, worst = self.constraint_rows(q_full)
        if r.size:
            parts_r.append(r)
            parts_J.append(J)
            done = done and worst <= self.margin * 4.0
        return np.concatenate(parts_r), np.vstack(parts_J), done

    def costs(self, q_full: np.ndarray) -> Tuple[float, np.ndarray]:
        """Sum of costs and its gradient (n,) (kinematics must be updated)."""
        total, grad = 0.0, np.zeros(self.group.n)
        for c in self.problem.costs:
            value, g = c.evaluate(self.model, self.data, q_full)
            total += float(value)
            grad += np.asarray(g)[self.iv]
        return total, grad
