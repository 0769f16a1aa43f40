"""The Levenberg-Marquardt solver's compiled constraint attempts (:mod:`constraint_kernel`).

A mixin of :class:`~ros2_ik.core.solvers.lm.LevenbergMarquardt`: it reads the solver's
``damping_scale``, ``bias``, ``stall_ratio``, ``active_set``,
``max_iterations_constrained``, ``restore_iterations`` and ``options``.  Problems (with
or without a pose target) whose constraints the kernel computes run their attempts
compiled (costs are then polished in Python, :mod:`polish`, restored compiled); a
clearance-last problem runs its first stage compiled.
"""
from __future__ import annotations

from typing import Any, List, Optional, Tuple, Union

import numpy as np

from ros2_ik.core.problem import Problem
from ros2_ik.core.result import IKResult
from ros2_ik.core.solvers import clearance_last, constraint_kernel, kernel_check, polish, \
    polish_kernel, seed_request
from ros2_ik.core.solvers.base import Begun, LocalResult, SolveOptions
from ros2_ik.core.solvers.budget import Budget

_Attempt = Tuple[np.ndarray, int, bool, float]  # (q, iterations, converged, merit)


class _KernelAttempt(constraint_kernel.KernelState):
    """A compiled constraint state with the solver's attempt chosen at setup."""

    __slots__ = ("attempt", "first_attempt")


class CompiledConstraints:
    """Compiled attempts for constraint problems (see the module docstring)."""

    #: Run constraint attempts compiled (:mod:`constraint_kernel`) when numba is installed
    #: and every constraint is one the kernel computes: the same iterations, without the
    #: interpreter.
    compiled_constraints = True
    #: Polish with the compiled loop (:meth:`polish_kernel.CompiledModel.polish`) when the
    #: compiled model applies: the same steps as :func:`polish.polish`, in one call.
    compiled_polish = True

    @classmethod
    def warm_up(cls, constrained: bool = False) -> None:
        """With ``constrained``: load the compiled attempt, candidate check and polishing."""
        super().warm_up(constrained)
        if constrained:
            constraint_kernel.warm_up()
            kernel_check.warm_up()
            polish_kernel.warm_up()

    def kernel_state(self, problem: Problem) -> Optional[constraint_kernel.KernelState]:
        """Return the compiled form of ``problem`` with its attempt, or None (Python runs).

        ``state.attempt(state, q0, budget)``: :meth:`_attempt_kernel_step`;
        ``state.first_attempt(state, starts, budget)``: :meth:`_first_kernel_step`.
        """
        if not self.compiled_constraints:
            return None
        tolerance = self.options.constraint_tolerance
        compiled = constraint_kernel.compile_problem(problem, tolerance)
        if compiled is None:
            return None
        state = _KernelAttempt(compiled, problem, tolerance)
        state.attempt, state.first_attempt = self._attempt_kernel_step, self._first_kernel_step
        return state

    def _clearance_last(self, problem: Problem) -> clearance_last.ClearanceLastState:
        """Clearance-last state; its first stage compiled when the kernel takes it."""
        state = clearance_last.ClearanceLastState(problem, self.pose_first_constraints,
                                                  self.options.constraint_tolerance)
        kernel = self.kernel_state(state.first_problem)
        if kernel is not None:
            state.run_first = lambda q, budget: self._attempt_kernel(kernel, q, budget)
        return state

    def seed_answer(self, problem: Problem, seed: np.ndarray, options: SolveOptions
                    ) -> Union[IKResult, Begun, None]:
        """Run the driver's step 1 (:meth:`Solver.solve`): :mod:`seed_request` if it applies."""
        if self.compiled_constraints and seed_request.applies(problem, options):
            return seed_request.answer(self, problem, seed, options)
        return None

    def cheap_attempts(self, state: Any) -> bool:
        """Return True for the compiled constraint attempt (cheaper than the ranking).

        Also for a clearance-last state whose first stage runs compiled: an attempt is
        then that stage and a value-only clearance test.
        """
        if isinstance(state, clearance_last.ClearanceLastState):
            return state.run_first is not None
        return isinstance(state, constraint_kernel.KernelState)

    def _attempt_kernel_step(self, state, q0: np.ndarray, budget: Budget) -> LocalResult:
        """Run the driver's step on a compiled state: :meth:`_attempt_kernel`."""
        return LocalResult(*self._attempt_kernel(state, q0, budget))

    def _attempt_kernel(self, state, q: np.ndarray, budget: Budget) -> _Attempt:
        """One compiled attempt from ``q``, then polishing when there are costs."""
        q, it, done, merit = self._kernel(state, q, self.max_iterations_constrained)
        if done and state.problem.costs:
            q, steps = self._polish_kernel(state, q, budget)
            it += steps
        return q, it, done, merit

    def _first_kernel_step(self, state, starts: List[np.ndarray], budget: Budget
                           ) -> LocalResult:
        """Run the first attempt with costs on a compiled state (:meth:`_first_kernel`)."""
        return LocalResult(*self._first_kernel(state, starts, budget))

    def _first_kernel(self, state, starts: List[np.ndarray], budget: Budget) -> _Attempt:
        """Compiled projections of ``starts``; the lowest-cost one polished."""
        return polish.from_best_start(
            self._polish_model(state), starts,
            lambda q: self._kernel(state, q, self.max_iterations_constrained),
            lambda q: self._polish_kernel(state, q, budget), budget)

    def _polish_kernel(self, state, q: np.ndarray, budget: Budget) -> Tuple[np.ndarray, int]:
        """Polish from feasible ``q``: the compiled loop on the compiled model, else Python."""
        model = self._polish_model(state)
        if self.compiled_polish and type(model) is polish_kernel.CompiledModel:
            return model.polish(q, budget, self._settings(), self.restore_iterations)
        return polish.polish(model, q, budget, lambda x: self._kernel_restore(state, x))

    @staticmethod
    def _polish_model(state):
        """Polishing's model of ``state`` (compiled when it applies), made once per solve."""
        if state.polish_model is None:
            state.polish_model = polish_kernel.model_for(state)
        return state.polish_model

    def _settings(self) -> constraint_kernel.Settings:
        return constraint_kernel.Settings(self.damping_scale, self.bias, self.stall_ratio,
                                          bool(self.active_set))

    def _kernel(self, state, q: np.ndarray, iterations: int) -> _Attempt:
        return constraint_kernel.attempt(state.compiled, q, state.lower, state.upper,
                                         self._settings(), iterations)

    def _kernel_restore(self, state, q: np.ndarray):
        """Bring ``q`` back onto the constraints, compiled: ``(q, feasible)``."""
        q, _, done, _ = self._kernel(state, q, self.restore_iterations)
        return q, done
