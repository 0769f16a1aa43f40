"""Levenberg-Marquardt with Chan's damping (Sugihara 2011) and random restarts.

Step: ``(J^T J + (s E + bias) I) dq = -J^T e`` with ``E = e^T e`` the weighted
squared error (Chan's damping, scaled by ``s``), every step accepted, the iterate
clamped into the joint limits (joints whose range covers 2 pi are left free and
wrapped into their limits at the end).
Short attempts (``max_iterations``, cut earlier by ``progress_schedule`` once the
error shows a joint-limit trap) restarted until the budget runs out (the driver's starts:
the seed, the library samples nearest to the target, then uniform random): restarts matter
more than the local method.

The order a solve takes (one path, :meth:`base.Solver.solve`):

1. the seed's answer (:meth:`seed_answer`, :mod:`seed_request`): one solution asked, a pose
   target or compiled constraints: the attempt from the seed, returned when verified,
   else handed on as the driver's first attempt;
2. :meth:`setup` picks the problem's one attempt object (:func:`attempts.choose_attempt`);
3. the driver's restarts (:class:`search.Search`) call :meth:`local_solve`, which runs that
   attempt from each start (with costs, the first attempt is :meth:`first_attempt`), and
   verify every candidate independently.

Every iteration is one loop: :func:`lm_loop.run` in Python (the pose rows of
:class:`pose_state.PoseState` or the stacked rows of :class:`active_set.StackedRows`),
or compiled (:mod:`chain_kernel`, :mod:`constraint_kernel`).
Pose-only problems run on the group's reduced model (three pinocchio calls per
iteration, ``dsyrk`` + ``dposv`` for the 6x6 normal system); problems with constraints
stack their hinge rows (:mod:`residuals`) on the full model, compiled
(:mod:`constraint_kernel`, :mod:`attempts`) when the kernel computes every constraint;
without a pose target such a problem tries the seed before ranking the library.

Pose first, clearance second: when every constraint is usually inactive at a pose
solution (``pose_first_constraints``: the minimum-distance constraint), an attempt runs
the pose-only loop first; once it converges, a value-only test (``Constraint.holds``: for
the minimum distance, only the pairs whose lower bound is under ``min_distance_m``, no
Jacobians, no gradients) returns the pose solution when the constraints hold.  A colliding
pose solution is dropped for the next start, and every ``clearance_push_every``-th is pushed
out instead: at most ``clearance_push_iterations`` of the stacked loop from there, keeping
the pose, as :mod:`clearance_last` does without a pose target.  A stacked iteration
costs far more than a pose-only one (the checker's distances and gradients), so the clear
majority of attempts pay one clearance test, and a deep collision costs a restart, not
many stacked iterations (the figures: docs/design.md; the benchmark's own:
bench/results/collision.md).
"""
from __future__ import annotations

from typing import List, Union

import numpy as np

from ros2_ik.core import errors
from ros2_ik.core.problem import Problem
from ros2_ik.core.result import IKResult
from ros2_ik.core.solvers import attempts, chain_kernel, constraint_kernel, polish_kernel, \
    seed_request
from ros2_ik.core.solvers.base import Solver
from ros2_ik.core.solvers.options import Begun, LocalResult, SolveOptions
from ros2_ik.core.solvers.budget import Budget


class LevenbergMarquardt(Solver):
    """Default pose solver: Chan-damped LM, clamped to limits, many short restarts."""

    name = "lm"
    #: Pose targets on a chain with a closed form are answered from it (exactly when
    #: pose-only; otherwise its branches are the first starts): :mod:`before_iterating`.
    closed_form = True
    #: Costs are minimised after an attempt becomes feasible (:mod:`polish`).
    supports_costs = True
    #: Whole-body groups (a floating or planar base) run the stacked Python loop.
    supports_base = True
    #: Iterations of one pose-only attempt before a restart.  Long enough for the slow
    #: but steady attempts; the ones that will not converge are cut earlier by
    #: ``progress_schedule``.
    max_iterations = 20
    #: (iteration, E): give up an attempt whose squared pose error E [m^2 + rad^2] is
    #: still above E at that iteration.  Almost every failed attempt is a joint-limit
    #: trap that sits at E ~ 0.1-1 after 8 iterations, while a converging attempt is below
    #: 1e-2 there; E > 1 after 5 iterations is hopeless.  Cutting those attempts early
    #: leaves more restarts and shortens the tail of iterations to a first verified
    #: solution (docs/design.md).
    progress_schedule = ((5, 1.0), (8, 1e-2), (12, 1e-4))
    #: Iterations of one attempt with constraint rows.  An attempt that has not settled by
    #: then is mostly held by a joint limit near a feasible point: a restart pays more than
    #: more iterations (docs/design.md).
    max_iterations_constrained = 15
    #: Iterations that bring a polishing step back onto the constraints (:mod:`polish`).
    restore_iterations = 4
    #: Constraint problems with a clearance (:mod:`clearance_last`): of the attempts whose
    #: solution of the other constraints collides, every ``clearance_push_every``-th is
    #: pushed out for at most ``clearance_push_iterations``; the others restart at once.
    #: The figures: docs/design.md.  A solve limited to fewer attempts (``max_attempts``)
    #: pushes out each colliding solution, for a whole attempt and then from the
    #: attempt's start (:func:`attempts.push_out`).
    clearance_push_every = 3
    clearance_push_iterations = 4
    #: Constant added to the damping (keeps steps finite at singularities) [m^2].
    bias = 1e-6
    #: Damping = damping_scale * E + bias.  Chan & Lawrence use 1; with E in m^2 + rad^2,
    #: 0.01 needs fewer iterations per success (docs/design.md).
    damping_scale = 0.01
    #: Give up an attempt when the error shrank by less than this factor 3 times in a row.
    stall_ratio = 0.995
    #: Re-solve without the joints a step would push beyond their limits: fewer
    #: iterations per success, more attempts succeed alone (docs/design.md).
    active_set = True
    #: Run full-pose attempts compiled (:mod:`chain_kernel`) when numba is installed and
    #: the tip hangs on revolute and prismatic joints: the same iterations, without the
    #: interpreter around each pinocchio call.
    compiled = True
    #: Names of the constraints for which an attempt solves the pose alone first (see the
    #: module docstring); a problem with any other constraint uses the stacked loop only.
    pose_first_constraints = ("minimum_distance",)

    #: Run constraint attempts compiled (:mod:`constraint_kernel`) when numba is installed
    #: and every constraint is one the kernel computes: the same iterations, without the
    #: interpreter.
    compiled_constraints = True
    #: Polish with the compiled loop (:meth:`polish_kernel.CompiledModel.polish`) when the
    #: compiled model applies: the same steps as :func:`polish.polish`, in one call.
    compiled_polish = True

    @classmethod
    def warm_up(cls, constrained: bool = False) -> None:
        """Load the compiled pose attempt; with ``constrained``, the constraint kernels too."""
        chain_kernel.warm_up()
        if constrained:
            constraint_kernel.warm_up()
            polish_kernel.warm_up()

    def setup(self, problem: Problem) -> attempts.Attempt:
        """Return the problem's one attempt object (:func:`attempts.choose_attempt`)."""
        if problem.costs and not self.supports_costs:
            raise errors.InvalidArgument(
                f"solver '{self.name}' does not minimise costs; use 'sqp' or 'bfgs'")
        return attempts.choose_attempt(self, problem)

    def local_solve(self, state: attempts.Attempt, q0: np.ndarray, budget: Budget
                    ) -> LocalResult:
        """One attempt from group vector ``q0``: the one ``setup`` chose."""
        return state.run(q0, budget)

    def first_attempt(self, state: attempts.Attempt, starts: List[np.ndarray],
                      budget: Budget) -> LocalResult:
        """Project every start (no polishing), polish the feasible one of lowest costs.

        One start: the attempt itself.
        """
        if len(starts) > 1:
            return state.first(starts, budget)
        return state.run(starts[0], budget)

    def cheap_attempts(self, state: attempts.Attempt) -> bool:
        """Return True when one attempt costs less than ranking the library."""
        return state.cheap

    def seed_answer(self, problem: Problem, seed: np.ndarray, options: SolveOptions
                    ) -> Union[IKResult, Begun, None]:
        """Run the driver's step 1 (:meth:`Solver.solve`): :mod:`seed_request` if it applies."""
        if seed_request.applies(problem, options):
            return seed_request.answer(self, problem, seed, options)
        return None
