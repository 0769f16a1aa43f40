"""The solver plugin interface, and the proofs that end a failed first attempt.

A solver subclasses :class:`Solver` and implements ``setup`` (per-problem state,
its own ``pin.Data``) and ``local_solve`` (one attempt from a start configuration);
:meth:`Solver.solve` runs the restart search (:class:`~ros2_ik.core.solvers.search.Search`)
with them.  Its options and an attempt's end: :mod:`.options`.
"""
from __future__ import annotations

import math
import time
from abc import ABC, abstractmethod
from typing import Any, List, Optional

import numpy as np

from ros2_ik.core import errors
from ros2_ik.core.problem import Problem
from ros2_ik.core.result import IKResult, IKStatus
from ros2_ik.core.solvers import before_iterating
from ros2_ik.core.solvers.budget import Budget
from ros2_ik.core.solvers.options import DISTINCT_TOLERANCE, Begun, LocalResult, SolveOptions
from ros2_ik.core.solvers.search import Search


def proven(result: IKResult, reason: str, start: float) -> IKResult:
    """Return ``result`` of one attempt on a problem :mod:`proofs` showed has no solution.

    NO_SOLUTION, its message the proof's ``reason`` and the best available
    configuration's errors; ``start``: when the solve began (``time.perf_counter()``).
    A SUCCESS (verified: the proof was wrong) is returned as it is.
    """
    if result.status is IKStatus.SUCCESS:
        return result
    if math.isnan(result.position_error_m) and result.violations:
        worst = max(result.violations, key=lambda v: v.amount)
        best = f"violates {worst}"
    else:
        best = f"has {result.position_error_m:.3g} m / {result.orientation_error_rad:.3g} rad"
    return IKResult(
        q=result.q, joint_names=result.joint_names, status=IKStatus.NO_SOLUTION,
        iterations=result.iterations, restarts=0, position_error_m=result.position_error_m,
        orientation_error_rad=result.orientation_error_rad,
        solve_time_s=time.perf_counter() - start, random_seed=result.random_seed,
        violations=result.violations,
        message=f"no solution: {reason}; best available (one attempt from the seed) {best}",
        solver=result.solver)


def _no_solution(problem: Problem, options: SolveOptions, start: float) -> Optional[str]:
    """Return :func:`proofs.no_solution`: imported at the first failed attempt, not before.

    Unless :func:`prepare_proofs` imported it (``prepare`` does).  ``start``: when the
    solve began; the proofs build bounds for later solves within the first
    :data:`PROOF_BUILD_SHARE` of its ``timeout_s`` only.
    """
    from ros2_ik.core.solvers import proofs
    return proofs.no_solution(problem, options,
                              start + PROOF_BUILD_SHARE * options.timeout_s)


#: Share of a solve's ``timeout_s`` in which its proofs may build the bounds they cache
#: (:mod:`proofs`): a first whole-body solve with four contacts spent ~10 ms there.
PROOF_BUILD_SHARE = 0.5


def prepare_proofs() -> None:
    """Import the proofs every solver's failed attempt runs (:func:`_no_solution`) now.

    Outside any budget: otherwise ~3 ms inside the first unreachable request's (Python
    compiling the module from source).
    """
    from ros2_ik.core.solvers import proofs  # noqa: F401


def proven_or(result: IKResult, problem: Problem, options: SolveOptions,
              start: float) -> IKResult:
    """Return ``result``, or :func:`proven` when it has no solution and a proof applies."""
    if result.status is IKStatus.SUCCESS:
        return result
    reason = _no_solution(problem, options, start)
    return result if reason is None else proven(result, reason, start)


class Solver(ABC):
    """Base class of solver plugins (registered under entry-point group ros2_ik.solvers)."""

    #: Name used in results and logs.
    name: str = "solver"
    #: Whether the solver minimises ``terms.Cost`` objects (LM and DLS do not).
    supports_costs: bool = False
    #: Whether the solver takes whole-body groups (a floating or planar base).
    supports_base: bool = False

    #: The options of the solve in progress (set by :meth:`solve` before ``setup``).
    options: SolveOptions = SolveOptions()
    #: Whether pose targets on chains with a closed form are answered from it
    #: (:mod:`before_iterating`): exactly when pose-only, else from its branches.
    closed_form: bool = False

    @classmethod
    def warm_up(cls, constrained: bool = False) -> None:
        """Load now what the solver would compile or load in its first solve (default: none).

        :func:`ros2_ik.core.solve.prepare` calls it outside any solve's time budget;
        ``constrained``: also what problems with constraints need.  Cheap once done.
        """

    @classmethod
    def prepare_frame(cls, group, frame: str) -> None:
        """Do the one-time work of solves for ``frame`` on ``group`` (outside any budget).

        Default: with :attr:`closed_form`, detect the chain's closed form and load its
        compiled step (:func:`before_iterating.prepare`).
        """
        if cls.closed_form:
            before_iterating.prepare(cls, group, frame)

    def solve(self, problem: Problem, seed: np.ndarray, options: SolveOptions,
              begun: Optional[Begun] = None) -> IKResult:
        """Run the driver: one path for every solve.

        1. :func:`before_iterating.answer`: a result before any iteration (a closed
           form's exact answer or proof), or the exact branches to start from after the
           seed;
        2. :meth:`seed_answer`: the solver may answer from the seed's attempt alone (its
           result), or make that attempt and hand it on (a :class:`Begun`); then
           :func:`before_iterating.after_seed`: a 7R sweep left for after that attempt
           (a result, or the branches to start from);
        3. :meth:`setup` (unless begun): the problem's state, its one local step chosen;
        4. restarts (:class:`Search`: starts, budget, independent verification of every
           candidate): ``local_solve`` from each start (with costs, the first attempt is
           :meth:`first_attempt`) until the budget, attempts or solutions run out.

        Once the first attempt (or step 1's answer) has no solution,
        :func:`proofs.no_solution`: a problem proven to have no solution (a target beyond
        the reach bound) answers NO_SOLUTION with the reason at once, the attempt's end
        point its best available configuration.  A solved problem needs no proof.

        ``begun``: the seed's attempt made already, counted as the first attempt (no
        proofs then).
        """
        start = time.perf_counter()
        self.options = options
        if problem.group.has_base and not self.supports_base:
            raise errors.InvalidArgument(
                f"solver '{self.name}' does not take whole-body groups (a floating or planar "
                "base) yet; use 'lm'")
        if begun is not None:
            return self.resume(problem, seed, options, begun, None, False, start)
        early = before_iterating.answer(self, problem, seed, options, DISTINCT_TOLERANCE)
        if isinstance(early, IKResult):
            return proven_or(early, problem, options, start)
        return self.from_seed(problem, seed, options, early, start)

    def from_seed(self, problem: Problem, seed: np.ndarray, options: SolveOptions,
                  first_starts: Optional[List[np.ndarray]], start: float) -> IKResult:
        """Run steps 2-4 of :meth:`solve`: the seed's answer, then the restarts.

        ``first_starts``: step 1's exact branches (None: none); ``start``: when the solve
        began (``time.perf_counter()``).  :mod:`pose_request` goes on here when a closed
        form's branches did not answer a plain pose request.
        """
        self.options = options
        answer = self.seed_answer(problem, seed, options)
        if isinstance(answer, IKResult):
            return proven_or(answer, problem, options, start)
        if first_starts is None:
            late = before_iterating.after_seed(
                self, problem, seed, options, DISTINCT_TOLERANCE,
                answer.local.iterations if answer is not None else 0, start)
            if isinstance(late, IKResult):
                return late  # a SUCCESS: the sweep never answers otherwise
            first_starts = late
        return self.resume(problem, seed, options, answer, first_starts, True, start)

    def resume(self, problem: Problem, seed: np.ndarray, options: SolveOptions,
               begun: Optional[Begun], first_starts: Optional[List[np.ndarray]] = None,
               prove: bool = True, start: Optional[float] = None) -> IKResult:
        """Run steps 3-4 of :meth:`solve`: the restarts, after the seed's attempt ``begun``.

        ``first_starts``: step 1's exact branches (None: none); ``prove``: the proofs are
        still due once the first attempt has failed; ``start``: when the solve began
        (``time.perf_counter()``; now when None).  :mod:`pose_request` resumes here when
        the seed's attempt of a plain pose request was not verified.
        """
        if start is None:
            start = time.perf_counter()
        self.options = options
        search = Search(problem, seed, options, begun.start if begun else None)
        if first_starts:
            search.first_starts = first_starts
        state = begun.state if begun else self.setup(problem)
        search.seed_first = self.cheap_attempts(state)
        if begun is not None:
            search.consider(begun.local)  # the seed's attempt
        while True:
            if prove and search.attempts:  # the first attempt made: proofs if it failed
                prove = False
                if not search.solutions:
                    reason = _no_solution(problem, options, search.budget.start)
                    if reason is not None:
                        return proven(search.result(self.name), reason, start)
            if search.finished():
                break
            q0 = search.next_start()
            if search.attempts == 0 and problem.costs:
                search.consider(self.first_attempt(state, [q0] + search.cost_starts(),
                                                   search.budget))
            else:
                search.consider(self.local_solve(state, q0, search.budget))
        result = search.result(self.name)  # proofs still due: no attempt was made
        return proven_or(result, problem, options, start) if prove else result

    def seed_answer(self, problem: Problem, seed: np.ndarray, options: SolveOptions
                    ) -> Optional[Any]:
        """Step 1 of :meth:`solve`: the result, the seed's attempt begun, or None (default).

        An :class:`IKResult` when the attempt from ``seed`` alone is verified; a
        :class:`Begun` when it was made but not verified (the driver goes on from the
        next start); None to leave the seed to the driver.
        """
        return None

    @abstractmethod
    def setup(self, problem: Problem) -> Any:
        """Per-solve state (own ``pin.Data``, compiled targets); called once per solve."""

    def cheap_attempts(self, state: Any) -> bool:
        """Return True when one attempt costs less than ranking the library.

        Problems without a pose target then try the seed before ranking (the default:
        False, rank first).
        """
        return False

    def first_attempt(self, state: Any, starts: List[np.ndarray], budget: Budget
                      ) -> LocalResult:
        """Make the first attempt of a problem with costs, from one of ``starts``.

        ``starts``: the seed, then the costs' preferred configurations
        (:meth:`Search.cost_starts`).  A solver that can tell cheaply which start leads
        lower may choose; the default attempts from the seed alone.
        """
        return self.local_solve(state, starts[0], budget)

    @abstractmethod
    def local_solve(self, state: Any, q0: np.ndarray, budget: Budget) -> LocalResult:
        """One attempt from group vector ``q0``.

        Must return promptly once ``budget.expired()`` is True.
        """
