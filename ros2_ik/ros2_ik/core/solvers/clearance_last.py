"""Constraint problems with a clearance constraint: the other constraints first.

The pose-first idea of :mod:`lm` for problems without a pose target: a stacked iteration
with a minimum-distance constraint costs several times one without it (the checker's
distances and witness-point gradients), and at most solutions of the other constraints the
arm is clear anyway.  So an attempt first solves every constraint but the clearance; when
the end point is feasible, a value-only clearance test (``Constraint.holds``: only the pairs
whose lower bound is under the bound) returns it; otherwise the full stacked attempt starts
from there and pushes the arm out while keeping the other constraints, and, if that stalls,
runs from the attempt's start.
"""
from __future__ import annotations

from typing import Callable, Tuple

import numpy as np
import pinocchio as pin

from ros2_ik.core.problem import Problem
from ros2_ik.core.solvers.budget import Budget
from ros2_ik.core.solvers.residuals import Residuals
from ros2_ik.core.verify import ConstraintTolerance

_Attempt = Tuple[np.ndarray, int, bool, float]  # (q, iterations, converged, merit)


class ClearanceLastState:
    """Residuals without and with the clearance constraints of one problem."""

    def __init__(self, problem: Problem, clearance_names, tolerance: ConstraintTolerance):
        """Split ``problem``'s constraints by name (``clearance_names``)."""
        self.clearance = [c for c in problem.constraints
                          if getattr(c, "name", None) in clearance_names]
        others = [c for c in problem.constraints if c not in self.clearance]
        self.first = Residuals(Problem(problem.group, problem.target, others),
                               exact=False, tolerance=tolerance)
        self.full = Residuals(problem, exact=False, tolerance=tolerance)
        #: The first stage as one call ``(q0, budget) -> (q, iterations, done, merit)``
        #: when the solver has a faster form of it (lm: the compiled attempt), else None.
        self.run_first = None

    @staticmethod
    def applies(problem: Problem, clearance_names) -> bool:
        """Whether ``problem`` has clearance constraints, other constraints and no costs."""
        names = [getattr(c, "name", None) in clearance_names for c in problem.constraints]
        return problem.pose is None and not problem.costs and any(names) and not all(names)

    def clear(self, q: np.ndarray) -> bool:
        """Whether every clearance constraint holds at group vector ``q`` (values only)."""
        res = self.full
        q_full = res.group.to_full_q(q)
        pin.computeJointJacobians(res.model, res.data, q_full)
        pin.updateFramePlacements(res.model, res.data)
        return all(c.holds(res.model, res.data, q_full) for c in self.clearance)


def attempt(state: ClearanceLastState, q0: np.ndarray, budget: Budget,
            run: Callable[[Residuals, np.ndarray, Budget], _Attempt]) -> _Attempt:
    """Other constraints, then clearance (see the module docstring); ``run`` is one attempt."""
    if state.run_first is not None:
        q, it, done, merit = state.run_first(q0, budget)
    else:
        q, it, done, merit = run(state.first, q0, budget)
    if not done or state.clear(q):
        return q, it, done, merit
    q, more, done, merit = run(state.full, q, budget)
    it += more
    if done or budget.expired():
        return q, it, done, merit
    q, more, done, merit = run(state.full, q0, budget)
    return q, it + more, done, merit
