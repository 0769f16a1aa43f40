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

1. the seed's answer (:meth:`seed_answer`, :mod:`seed_request`): constraints without a pose
   target, one solution asked: the compiled attempt from the seed, returned when verified,
   else handed on as the driver's first attempt;
2. :meth:`setup` picks the problem's state and its one attempt, ``state.attempt``, the first
   of: the pose-only state (compiled :meth:`_attempt_chain`, else the Python loop on log6
   or in target axes), the pose-first state (:meth:`_attempt_pose_first`), the
   clearance-last state (:meth:`_attempt_clearance_last`), the compiled constraint state
   (``lm_compiled``), the stacked Python residuals (:meth:`_attempt_residuals`);
3. the driver's restarts (:class:`base.Search`) call :meth:`local_solve`, which runs
   ``state.attempt`` from each start (with costs, the first attempt is
   :meth:`first_attempt`), and verify every candidate independently.

Pose-only problems run on the group's reduced model (three pinocchio calls per
iteration, ``dsyrk`` + ``dposv`` for the 6x6 normal system); problems with constraints
stack their hinge rows (:mod:`residuals`) on the full model, compiled
(:mod:`constraint_kernel`, :mod:`lm_compiled`) when the kernel computes every constraint;
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

from functools import lru_cache, partial
from typing import Any, List, Tuple

import numpy as np
import pinocchio as pin
from scipy.linalg.blas import dsyrk
from scipy.linalg.lapack import dposv

from ros2_ik.core import errors
from ros2_ik.core.pose import split_error, twist_error
from ros2_ik.core.problem import Problem
from ros2_ik.core.solvers import active_set, chain_kernel, clearance_last, polish
from ros2_ik.core.solvers.base import LocalResult, Solver
from ros2_ik.core.solvers.budget import Budget
from ros2_ik.core.solvers.lm_compiled import CompiledConstraints
from ros2_ik.core.solvers.pose_state import PoseState
from ros2_ik.core.solvers.residuals import LWA, Residuals

_EYE6 = np.eye(6)
_Attempt = Tuple[np.ndarray, int, bool, float]  # (q, iterations, converged, merit)


def damped_step(J: np.ndarray, e: np.ndarray, damping: float) -> np.ndarray:
    """``dq`` minimising ``|J dq + e|^2 + damping |dq|^2`` (smaller normal system)."""
    m, n = J.shape
    if n <= m:
        A = J.T @ J
        A.flat[::n + 1] += damping
        return -dposv(A.T, J.T @ e, overwrite_a=1, overwrite_b=1)[1]
    A = J @ J.T
    A.flat[::m + 1] += damping
    return -(J.T @ dposv(A.T, e, overwrite_a=1)[1])


def _lm_step(J: np.ndarray, e: np.ndarray, damping: float) -> np.ndarray:
    """``dq`` minimising ``|J dq + e|^2 + damping |dq|^2`` (a zero step without rows)."""
    if J.shape[0] == 0:
        return np.zeros(J.shape[1])
    return damped_step(J, e, damping)


@lru_cache(maxsize=16)
def _bounds(schedule: Tuple[Tuple[int, float], ...], last: int) -> Tuple[float, ...]:
    """Largest squared error allowed at each iteration 0..last (index = iteration)."""
    return tuple(min((bound for k, bound in schedule if k <= it), default=np.inf)
                 for it in range(last + 1))


class _PoseFirstState:
    """A constrained problem solved pose first: the pose-only loop, then the stacked one."""

    __slots__ = ("fast", "problem", "tolerance", "model", "data", "_stacked", "rejected",
                 "attempt")

    def __init__(self, fast: PoseState, problem: Problem, tolerance):
        """Cheap: the stacked residuals are built by the first attempt that needs them."""
        self.fast, self.problem, self.tolerance = fast, problem, tolerance
        self.model = problem.group.robot.model
        self.data = clearance_last.check_data(problem.group)
        self._stacked = None
        #: Pose solutions of this solve that the constraints' test rejected.
        self.rejected = 0
        #: The attempt ``(state, q0, budget) -> LocalResult`` (set by ``setup``).
        self.attempt = None

    @property
    def stacked(self) -> Residuals:
        """Stacked residuals on the full model (own Data, built on first use)."""
        if self._stacked is None:
            self._stacked = Residuals(self.problem, exact=False, tolerance=self.tolerance)
        return self._stacked

    def holds(self, q: np.ndarray) -> bool:
        """Whether every constraint holds at group vector ``q`` (no constraint Jacobian)."""
        q_full = self.problem.group.to_full_q(q)
        pin.computeJointJacobians(self.model, self.data, q_full)  # what terms expect
        pin.updateFramePlacements(self.model, self.data)
        return all(c.holds(self.model, self.data, q_full) for c in self.problem.constraints)


class LevenbergMarquardt(CompiledConstraints, Solver):
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
    #: attempt's start (:meth:`_push_out`).
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

    @classmethod
    def warm_up(cls, constrained: bool = False) -> None:
        """Load the compiled pose attempt; with ``constrained``, the constraint kernels too."""
        chain_kernel.warm_up()
        super().warm_up(constrained)

    def setup(self, problem: Problem) -> Any:
        """Return the state of ``problem`` with its one attempt, ``state.attempt``.

        ``state.attempt(state, q0, budget) -> LocalResult`` is a method of this solver
        (the state does not hold itself: no reference cycle to collect per solve).

        The first that applies (module docstring): the reduced-model pose state, the
        pose-first state, the clearance-last state, the compiled constraint state, the
        stacked Python residuals.
        """
        if problem.costs and not self.supports_costs:
            raise errors.InvalidArgument(
                f"solver '{self.name}' does not minimise costs; use 'sqp' or 'bfgs'")
        if problem.group.has_base:  # the compiled constraint kernel or the Python loop
            return self.kernel_state(problem) or self._residuals_state(problem)
        if problem.pose_only:
            return self._pose_state(problem)
        if self._pose_first(problem):
            state = _PoseFirstState(self._pose_state(problem), problem,
                                    self.options.constraint_tolerance)
            state.attempt = self._attempt_pose_first
            return state
        if clearance_last.ClearanceLastState.applies(problem, self.pose_first_constraints):
            state = self._clearance_last(problem)
            state.attempt = self._attempt_clearance_last
            return state
        kernel = self.kernel_state(problem)
        if kernel is not None:
            return kernel
        return self._residuals_state(problem)

    def _residuals_state(self, problem: Problem) -> Residuals:
        """Return the stacked Python residuals with their attempts (any group, any term)."""
        state = Residuals(problem, exact=False, tolerance=self.options.constraint_tolerance)
        state.attempt, state.first_attempt = self._attempt_residuals, self._first_residuals
        return state

    @classmethod
    def _kernel_settings(cls) -> chain_kernel.Settings:
        """Return the compiled attempt's constants (cached per class: class attributes)."""
        key = (cls.damping_scale, cls.bias, cls.stall_ratio, cls.progress_schedule,
               cls.max_iterations, cls.active_set)
        cached = cls.__dict__.get("_kernel_cache")
        if cached is None or cached[0] != key:
            bounds = np.array(_bounds(cls.progress_schedule, cls.max_iterations))
            cached = (key, chain_kernel.Settings(cls.damping_scale, cls.bias, cls.stall_ratio,
                                                 bounds, bool(cls.active_set)))
            cls._kernel_cache = cached
        return cached[1]

    def _pose_first(self, problem: Problem) -> bool:
        return problem.pose is not None and not problem.costs and all(
            getattr(c, "name", None) in self.pose_first_constraints
            for c in problem.constraints)

    def _pose_state(self, problem: Problem) -> PoseState:
        """Pose-only state; its attempt compiled when the chain allows, else one Python loop.

        The Python loop by the target: a full isotropic pose on ``log6``
        (:meth:`_attempt_log6`), a weighted or partial one in target axes
        (:meth:`_attempt_world`).
        """
        state = PoseState(problem)
        if state.chain is not None and self.compiled:
            state.attempt = self._attempt_chain
        else:
            state.attempt = partial(self._attempt_reduced,
                                    self._attempt_log6 if state.log6 else self._attempt_world)
        return state

    def local_solve(self, state: Any, q0: np.ndarray, budget: Budget) -> LocalResult:
        """One attempt from group vector ``q0``: the one ``setup`` chose for ``state``."""
        return state.attempt(state, q0, budget)

    def _attempt_chain(self, state: PoseState, q0: np.ndarray, budget: Budget) -> LocalResult:
        """Run the compiled pose attempt (:mod:`chain_kernel`): :meth:`_attempt_log6`'s steps."""
        chain, lower, upper = state.chain
        return LocalResult(*chain_kernel.attempt(
            chain, q0, state.T_target_inv_h, lower, upper, state.bounded,
            float(state.sqrt_w[0]), state.pos_tol2, state.ori_tol2, state.near2,
            self._kernel_settings()))

    @staticmethod
    def _attempt_reduced(loop, state: PoseState, q0: np.ndarray, budget: Budget
                         ) -> LocalResult:
        """Python pose ``loop`` on the reduced model's configuration of group vector ``q0``."""
        q_red, it, done, merit = loop(state, state.to_q(q0), budget)
        return LocalResult(state.from_q(q_red), it, done, merit)

    def _attempt_pose_first(self, state: _PoseFirstState, q0: np.ndarray,
                            budget: Budget) -> LocalResult:
        """Pose alone; a colliding answer restarts or, every few, is pushed out (module doc)."""
        pose = state.fast.attempt(state.fast, q0, budget)
        if not pose.converged or state.holds(pose.q):
            return pose  # clear: no Jacobians, no gradients, no pairs out to the influence
        if not clearance_last.push_now(state, self._push_every()):
            return LocalResult(pose.q, pose.iterations, False, pose.merit)
        q, it, done, merit = self._push_out(state.stacked, pose.q, q0, budget)
        return LocalResult(q, it + pose.iterations, done, merit)

    def _attempt_clearance_last(self, state: clearance_last.ClearanceLastState,
                                q0: np.ndarray, budget: Budget) -> LocalResult:
        """Other constraints, then the clearance (:mod:`clearance_last`)."""
        return LocalResult(*clearance_last.attempt(
            state, q0, budget, self._attempt_generic, self._push_out, self._push_every()))

    def _attempt_residuals(self, res: Residuals, q0: np.ndarray, budget: Budget
                           ) -> LocalResult:
        """Run the stacked Python attempt (:meth:`_attempt_generic`)."""
        return LocalResult(*self._attempt_generic(res, q0, budget))

    def _attempt_log6(self, s: PoseState, q: np.ndarray, budget: Budget) -> _Attempt:
        """Full isotropic pose: e = log6(T_target^-1 T) and the LOCAL frame Jacobian.

        Three pinocchio calls per iteration (joint Jacobians, one frame placement, its
        local Jacobian): cheaper than computeFrameJacobian + rotating the error.
        """
        cjj, ufp, gfj = pin.computeJointJacobians, pin.updateFramePlacement, \
            pin.getFrameJacobian
        LOCAL = pin.ReferenceFrame.LOCAL
        minimum, maximum, expired = np.minimum, np.maximum, budget.expired
        model, data, fid, lower, upper = s.model, s.data, s.fid, s.lower, s.upper
        Tti, near, eye, sw = s.T_target_inv, s.near2, _EYE6, s.sqrt_w[0]
        scale, bias, stall, last = self.damping_scale, self.bias, self.stall_ratio, \
            self.max_iterations
        bounds = _bounds(self.progress_schedule, last)
        E_prev, stalls, big, one = np.inf, 0, model.nv >= 6, model.nv == 1
        active = s.bounded and self.active_set
        limited = active and s.on_limit(q)
        for it in range(1, last + 1):
            cjj(model, data, q)
            Terr = Tti * ufp(model, data, fid)
            J = gfj(model, data, fid, LOCAL)
            if one:  # pinocchio hands a 1-DoF Jacobian back as (6,)
                J = J.reshape(6, 1)
            e = twist_error(Terr)  # pairs with the LOCAL Jacobian (core.pose)
            E = e.dot(e)
            if E <= near and s.within(Terr):
                return q, it, True, E
            stalls = stalls + 1 if E > stall * E_prev else 0
            if it == last or stalls >= 3 or expired() or E > bounds[it]:
                return q, it, False, E
            E_prev = E
            if sw != 1.0:
                e, J, E = e * sw, J * sw, E * sw * sw
            lam = scale * E + bias
            if big:  # J J^T + lam I in one BLAS call (upper triangle, what dposv reads)
                dq = dposv(dsyrk(1.0, J, beta=lam, c=eye), e, overwrite_a=1)[1] @ J
            else:
                dq = -damped_step(J, e, lam)
            if limited:
                # Joints resting on a limit and pushed outward: drop their columns and
                # re-solve, so the other joints compensate instead of assuming they move.
                out = s.pushed_out(q, dq)
                if out is not None:
                    J = J * ~out
                    dq = dposv(dsyrk(1.0, J, beta=lam, c=eye), e, overwrite_a=1)[1] @ J
            q = s.integrate(q, -dq)
            if s.bounded:
                free = q
                q = minimum(maximum(q, lower), upper)
                # Byte comparison: cheaper than (q != free).any() on a few floats.
                limited = active and q.tobytes() != free.tobytes()
        raise AssertionError("unreachable")

    def _attempt_world(self, s: PoseState, q: np.ndarray, budget: Budget) -> _Attempt:
        """Weighted / partial targets: error in target axes, world-aligned Jacobian."""
        cfj = pin.computeFrameJacobian
        model, data, fid, lower, upper = s.model, s.data, s.fid, s.lower, s.upper
        scale, bias, stall, last = self.damping_scale, self.bias, self.stall_ratio, \
            self.max_iterations
        sq = s.sqrt_w[:, None]
        bounds = _bounds(self.progress_schedule, last)
        E_prev, stalls = np.inf, 0
        for it in range(1, last + 1):
            J = s.R6 @ cfj(model, data, q, fid, LWA).reshape(6, -1)  # (6,) when nv = 1
            T = s.T_target_inv * data.oMf[fid]
            e = np.concatenate(split_error(T))  # target axes: weights, tolerances
            es = e * s.inv_tol
            merit = es @ es
            if merit <= 1.0:
                return q, it, True, merit
            e, J = e * s.sqrt_w, J * sq
            E = e @ e
            stalls = stalls + 1 if E > stall * E_prev else 0
            if it == last or stalls >= 3 or budget.expired() or E > bounds[it]:
                return q, it, False, merit
            E_prev = E
            dq = damped_step(J, e, scale * E + bias)
            if s.bounded and self.active_set:
                out = s.pushed_out(q, -dq)
                if out is not None:
                    dq = damped_step(J * ~out, e, scale * E + bias)
            q = s.integrate(q, dq)
            if s.bounded:
                q = np.minimum(np.maximum(q, lower), upper)
        raise AssertionError("unreachable")

    def first_attempt(self, state: Any, starts: List[np.ndarray], budget: Budget
                      ) -> LocalResult:
        """Project every start (no polishing), polish the feasible one of lowest costs.

        ``state.first_attempt(state, starts, budget)``, set by ``setup`` on the states a
        problem with costs gets (compiled or stacked); one start: the attempt itself.
        """
        if len(starts) > 1:
            return state.first_attempt(state, starts, budget)
        return self.local_solve(state, starts[0], budget)

    def _first_residuals(self, res: Residuals, starts: List[np.ndarray], budget: Budget
                         ) -> LocalResult:
        """Run :meth:`first_attempt` on the stacked Python residuals."""
        model = polish.ResidualsModel(res)
        return LocalResult(*polish.from_best_start(
            model, starts, lambda q: active_set.attempt(res, q, budget, _lm_step, self),
            lambda q: polish.polish(model, q, budget, lambda x: self._restore(res, x, budget)),
            budget))

    def _attempt_generic(self, res: Residuals, q: np.ndarray, budget: Budget) -> _Attempt:
        """Pose rows + constraint rows on the full model, with a predicted active set.

        With costs, a feasible end point is then polished (:mod:`polish`: SQP steps on
        the costs that keep the pose and every constraint).
        """
        q, it, done, merit = active_set.attempt(res, q, budget, _lm_step, self)
        if done and res.problem.costs:
            q, steps = polish.polish(polish.ResidualsModel(res), q, budget,
                                     lambda x: self._restore(res, x, budget))
            it += steps
        return q, it, done, merit

    def _push_every(self) -> int:
        """Return which colliding solutions are pushed out: every n-th of the solve.

        A solve limited to fewer attempts than ``clearance_push_every`` pushes out each one
        (a local repair near the seed is then what was asked for).
        """
        return 1 if self._few_attempts() else self.clearance_push_every

    def _few_attempts(self) -> bool:
        """Return whether the solve may make fewer attempts than ``clearance_push_every``."""
        limit = self.options.max_attempts
        return bool(limit) and limit < self.clearance_push_every

    def _push_out(self, res: Residuals, q: np.ndarray, q0: np.ndarray,
                  budget: Budget) -> _Attempt:
        """Run the stacked loop from colliding ``q`` to move it clear, holding the rest.

        ``clearance_push_iterations`` at most.  A solve limited to fewer attempts than
        ``clearance_push_every`` has no restart to leave a deep collision to: a whole
        attempt from ``q``, then, if that stalls, one from the attempt's start ``q0``.
        """
        if not self._few_attempts():
            return active_set.attempt(res, q, budget, _lm_step, self,
                                      self.clearance_push_iterations)
        q, it, done, merit = self._attempt_generic(res, q, budget)
        if done or budget.expired():
            return q, it, done, merit
        q, more, done, merit = self._attempt_generic(res, q0, budget)
        return q, it + more, done, merit

    def _restore(self, res: Residuals, q: np.ndarray, budget: Budget):
        """Run a few active-set iterations back onto the constraints: ``(q, feasible)``."""
        q, _, done, _ = active_set.attempt(res, q, budget, _lm_step, self,
                                           self.restore_iterations)
        return q, done
