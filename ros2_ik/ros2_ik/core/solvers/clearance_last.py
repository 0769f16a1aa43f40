"""Constraint problems with a clearance constraint: the other constraints first.

The pose-first idea of :mod:`lm` for problems without a pose target: a stacked iteration
with a minimum-distance constraint costs several times one without it (the checker's
distances and witness-point gradients), and at most solutions of the other constraints the
arm is clear anyway.  So an attempt first solves every constraint but the clearance; when
the end point is feasible, a value-only clearance test (``Constraint.holds``: only the pairs
whose lower bound is under the bound) returns it.  A colliding end point is a rejection: the
driver restarts from its next start (a first stage and the test cost little).  Every
``push_every``-th rejection of a solve is pushed out instead: a short stacked attempt from
there keeps the other constraints while it moves the arm clear.  A stacked iteration is
dear (distances, witness gradients), and a push-out that has not cleared the arm within a
few iterations rarely does: deep in an obstacle the arm needs another null-space posture,
which the next start finds sooner.  This cut the tail of solve times against pushing out
every rejection (docs/design.md).  Pushing out the first rejection and every third after
it was slower; rejections alone did about as well on the benchmark's scenes, but an arm
whose every posture grazes an obstacle needs the push-out.  A solve limited to fewer attempts than
``push_every`` pushes out each rejection, as far as it can (the solver's choice).
"""
from __future__ import annotations

from typing import Callable, Tuple

import numpy as np
import pinocchio as pin

from ros2_ik.core.problem import Problem
from ros2_ik.core.runtime.thread_data import PerThreadData
from ros2_ik.core.solvers.budget import Budget
from ros2_ik.core.solvers.residuals import Residuals
from ros2_ik.core.verify import ConstraintTolerance

_Attempt = Tuple[np.ndarray, int, bool, float]  # (q, iterations, converged, merit)
_CHECK_DATA = PerThreadData()


def check_data(group) -> pin.Data:
    """Return this thread's full-model Data for the clearance test (not the verify Data)."""
    return _CHECK_DATA(group.robot.model)


class ClearanceLastState:
    """Residuals without and with the clearance constraints of one problem."""

    def __init__(self, problem: Problem, clearance_names, tolerance: ConstraintTolerance):
        """Split ``problem``'s constraints by name (``clearance_names``).

        Cheap: the residuals are built by the first attempt that needs them (the
        compiled first stage and the clearance test need neither).
        """
        self.problem, self.tolerance = problem, tolerance
        self.clearance = [c for c in problem.constraints
                          if getattr(c, "name", None) in clearance_names]
        others = [c for c in problem.constraints if c not in self.clearance]
        #: The first stage's problem: every constraint but the clearance.
        self.first_problem = Problem(problem.group, problem.target, others)
        self._first = self._full = None
        #: First-stage solutions of this solve that the clearance test rejected.
        self.rejected = 0

    @property
    def first(self) -> Residuals:
        """Residuals of :attr:`first_problem` (own Data)."""
        if self._first is None:
            self._first = Residuals(self.first_problem, exact=False, tolerance=self.tolerance)
        return self._first

    @property
    def full(self) -> Residuals:
        """Residuals of the whole problem, clearance included (own Data)."""
        if self._full is None:
            self._full = Residuals(self.problem, exact=False, tolerance=self.tolerance)
        return self._full

    @staticmethod
    def applies(problem: Problem, clearance_names) -> bool:
        """Whether ``problem`` has clearance constraints, other constraints and no costs."""
        names = [getattr(c, "name", None) in clearance_names for c in problem.constraints]
        return problem.pose is None and not problem.costs and any(names) and not all(names)

    def clear(self, q: np.ndarray) -> bool:
        """Whether every clearance constraint holds at group vector ``q`` (values only)."""
        group = self.problem.group
        model, data = group.robot.model, check_data(group)
        q_full = group.to_full_q(q)
        pin.computeJointJacobians(model, data, q_full)  # what terms expect
        pin.updateFramePlacements(model, data)
        return all(c.holds(model, data, q_full) for c in self.clearance)


def attempt(state: ClearanceLastState, q0: np.ndarray, budget: Budget,
            first: Callable[[np.ndarray, Budget], _Attempt],
            push: Callable[[np.ndarray, np.ndarray, Budget], _Attempt],
            push_every: int = 1) -> _Attempt:
    """Other constraints, then clearance (see the module docstring).

    ``first(q0, budget)`` is the first stage (on :attr:`ClearanceLastState.first`, or a
    faster form of it); ``push(q, q0, budget)`` the push-out (on
    :attr:`ClearanceLastState.full`) from the first stage's ``q``, run on every
    ``push_every``-th rejected first-stage solution.
    """
    q, it, done, merit = first(q0, budget)
    if not done or state.clear(q):
        return q, it, done, merit
    if not push_now(state, push_every):
        return q, it, False, merit  # rejected: the driver's next start
    q, more, done, merit = push(q, q0, budget)
    return q, it + more, done, merit


def push_now(state, push_every: int) -> bool:
    """Count a rejected colliding solution on ``state``: True for every ``push_every``-th.

    ``state``: anything with a ``rejected`` count of its solve (this module's state, lm's
    pose-first one).  The others restart at once.
    """
    state.rejected += 1
    return state.rejected % max(int(push_every), 1) == 0
