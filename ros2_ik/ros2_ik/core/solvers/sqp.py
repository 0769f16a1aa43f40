"""General nonlinear solve over all constraints and costs (Drake-style), scipy SLSQP.

Variables: the group vector, bounded by the joint limits.  The pose target (when
any) is the least-squares objective ``1/2 |e_w(q)|^2`` when the problem has no costs
(more targets solved within a budget than as equalities), else a set of equality
constraints ``e_i(q) = 0`` on its weighted axes (so costs cannot trade pose
accuracy away); every
:class:`terms.Constraint` row with a finite bound is an inequality with its
analytic Jacobian (``lower == upper`` rows become equalities).  The objective is
the sum of the costs plus a tiny pull towards the attempt's start (so a problem
without costs is well posed).  Restarts from random configurations.
"""
from __future__ import annotations

from typing import Any, Dict, List

import numpy as np
from scipy.optimize import minimize

from ros2_ik.core.problem import Problem
from ros2_ik.core.solvers.options import LocalResult
from ros2_ik.core.solvers.budget import Budget
from ros2_ik.core.solvers.residuals import Residuals
from ros2_ik.core.solvers.scipy_solver import Chart, ScipySolver, Stop, bounds_of

#: Weight of the pull towards the start configuration [1/rad^2].
REGULARISATION = 1e-6


class _Evaluation:
    """All values and Jacobians at one ``q``, cached (SLSQP asks them separately)."""

    def __init__(self, res: Residuals):
        self.res = res
        self.key = None
        self.values: Dict[str, Any] = {}

    def at(self, q: np.ndarray) -> Dict[str, Any]:
        key = q.tobytes()
        if key != self.key:
            self.values = self._evaluate(q)
            self.key = key
        return self.values

    def _evaluate(self, q: np.ndarray) -> Dict[str, Any]:
        res = self.res
        q_full = res.update(q)
        out: Dict[str, Any] = {"eq": [], "eq_J": [], "ineq": [], "ineq_J": [], "done": True}
        out["pose"], out["pose_grad"] = 0.0, 0.0
        if res.pose is not None:
            r, J, scaled = res.pose_rows()
            if not res.problem.costs:
                out["pose"], out["pose_grad"] = 0.5 * float(r @ r), J.T @ r
            else:
                mask = res.pose.mask
                out["eq"].append(r[mask])
                out["eq_J"].append(J[mask])
            out["done"] = scaled <= 1.0
        for c in res.problem.row_constraints:  # joint windows: the bounds instead
            g, Jg = c.evaluate(res.model, res.data, q_full)
            g, Jg = np.asarray(g, float), np.asarray(Jg)[:, res.iv]
            lo, hi = c.lower_bound, c.upper_bound
            eq = lo == hi
            out["eq"].append((g - lo)[eq])
            out["eq_J"].append(Jg[eq])
            for sign, bound, finite in ((1.0, lo, np.isfinite(lo) & ~eq),
                                        (-1.0, hi, np.isfinite(hi) & ~eq)):
                out["ineq"].append(sign * (g - bound)[finite])
                out["ineq_J"].append(sign * Jg[finite])
            if np.max(c.violation(g), initial=0.0) > 1e-5:
                out["done"] = False
        out["cost"], out["cost_grad"] = res.costs(q_full)
        return out


def _stack(parts: List[np.ndarray], n: int, rows: bool) -> np.ndarray:
    if not parts:
        return np.zeros((0, n)) if rows else np.zeros(0)
    return np.vstack(parts) if rows else np.concatenate(parts)


class SQP(ScipySolver):
    """SLSQP over pose equalities, constraint inequalities and costs, with restarts."""

    name = "sqp"
    supports_costs = True
    #: SLSQP iterations of one attempt.
    max_iterations = 60

    def setup(self, problem: Problem) -> Any:
        """Return cached evaluator on the full model and scipy bounds."""
        res = Residuals(problem, tolerance=self.options.constraint_tolerance)
        return _Evaluation(res), bounds_of(res)

    def local_solve(self, state: Any, q0: np.ndarray, budget: Budget) -> LocalResult:
        """One SLSQP run from ``q0``."""
        ev, bounds = state
        n = q0.shape[0]
        calls = [0]

        def values(q: np.ndarray) -> Dict[str, Any]:
            if budget.expired():
                raise Stop(q.copy(), False)
            return ev.at(q)

        group = ev.res.group

        def objective(q: np.ndarray) -> float:
            calls[0] += 1
            d = group.difference(q0, q)
            v = values(q)
            if v["done"] and not ev.res.problem.costs:
                raise Stop(q.copy(), True)
            return v["cost"] + v["pose"] + 0.5 * REGULARISATION * float(d @ d)

        def gradient(q: np.ndarray) -> np.ndarray:
            v = values(q)
            return v["cost_grad"] + v["pose_grad"] + REGULARISATION * group.difference(q0, q)

        x0, to_q, rows, f, df = q0, None, values, objective, gradient
        if group.has_base:  # scipy's variables: the tangent offset from q0 (a chart)
            chart = Chart(group, q0, ev.res.lower, ev.res.upper)
            x0, to_q, bounds, n = chart.x0, chart.q, chart.bounds, group.nv
            rows, f, df = chart.rows(values), chart.value(objective), chart.derivative(gradient)
        constraints = self._constraints(rows, n)
        try:
            out = minimize(f, x0, jac=df, method="SLSQP", bounds=bounds,
                           constraints=constraints,
                           options={"maxiter": self.max_iterations, "ftol": 1e-12})
            q = out.x if to_q is None else to_q(out.x)
        except Stop as stop:
            q = stop.q
        return LocalResult(q, calls[0], True, np.inf)

    @staticmethod
    def _constraints(values, n: int) -> List[Dict[str, Any]]:
        out = []
        for kind in ("eq", "ineq"):
            out.append({
                "type": kind,
                "fun": lambda q, k=kind: _stack(values(q)[k], n, rows=False),
                "jac": lambda q, k=kind: _stack(values(q)[k + "_J"], n, rows=True),
            })
        return out
