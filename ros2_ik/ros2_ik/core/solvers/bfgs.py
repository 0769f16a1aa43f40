"""BFGS gradient projection inside the joint bounds (MATLAB's default IK algorithm).

scipy's L-BFGS-B on ``f(q) = 1/2 |r(q)|^2 + sum(costs)`` where ``r`` stacks the
weighted pose error and the constraint hinges (:mod:`residuals`), gradient
``J^T r + sum(grad costs)``, box bounds = joint limits; restarts from random
configurations until the budget runs out.
"""
from __future__ import annotations

from typing import Any, Tuple

import numpy as np
from scipy.optimize import minimize

from ros2_ik.core.problem import Problem
from ros2_ik.core.solvers.options import LocalResult
from ros2_ik.core.solvers.budget import Budget
from ros2_ik.core.solvers.residuals import Residuals
from ros2_ik.core.solvers.scipy_solver import Chart, ScipySolver, Stop, bounds_of


class BFGSProjection(ScipySolver):
    """L-BFGS-B on the weighted pose error, constraint penalties and costs."""

    name = "bfgs"
    supports_costs = True
    #: L-BFGS-B iterations of one attempt.
    max_iterations = 100

    def setup(self, problem: Problem) -> Any:
        """Stacked residuals on the full model, plus scipy bounds."""
        res = Residuals(problem, tolerance=self.options.constraint_tolerance)
        return res, bounds_of(res)

    def local_solve(self, state: Any, q0: np.ndarray, budget: Budget) -> LocalResult:
        """One L-BFGS-B run from ``q0``; stops early once in tolerance."""
        res, bounds = state
        calls = [0]
        best = [np.inf, q0]

        def fun(q: np.ndarray) -> Tuple[float, np.ndarray]:
            calls[0] += 1
            f, g, done = self._objective(res, q)
            if f < best[0]:
                best[0], best[1] = f, q.copy()
            if done:
                raise Stop(q.copy(), True)
            if budget.expired():
                raise Stop(best[1], False)
            return f, g

        x0, to_q, objective = q0, None, fun
        if res.group.has_base:  # scipy's variables: the tangent offset from q0
            chart = Chart(res.group, q0, res.lower, res.upper)
            x0, to_q, bounds = chart.x0, chart.q, chart.bounds
            objective = chart.value_and_gradient(fun)
        try:
            out = minimize(objective, x0, jac=True, method="L-BFGS-B", bounds=bounds,
                           options={"maxiter": self.max_iterations, "ftol": 0.0,
                                    "gtol": 0.0, "maxls": 20})
            q = out.x if to_q is None else to_q(out.x)
        except Stop as stop:
            q = stop.q
        # Attempts are expensive and the check is cheap: always ask for it.
        return LocalResult(q, calls[0], True, float(best[0]))

    @staticmethod
    def _objective(res: Residuals, q: np.ndarray) -> Tuple[float, np.ndarray, bool]:
        r, J, done = res.evaluate(q)
        f, g = 0.5 * float(r @ r), J.T @ r
        if res.problem.costs:
            c, gc = res.costs(res.group.to_full_q(q))
            f, g = f + c, g + gc
            done = done and not res.problem.costs
        return f, g, done
