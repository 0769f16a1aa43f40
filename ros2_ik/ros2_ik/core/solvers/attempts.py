"""The attempts of the Levenberg-Marquardt solver, and the one place a solve picks one.

:func:`choose_attempt` returns, per solve, one :class:`Attempt` object:
``run(q0, budget)`` makes one attempt from group vector ``q0``, ``first(starts, budget)``
the first one of a problem with costs, and ``cheap`` tells the driver whether an attempt
costs less than ranking the seed library.  The first that applies:

1. for a whole-body group (a floating or planar base): :class:`CompiledConstraints`
   when the kernel computes every term (the base is a joint kind of the compiled
   kinematics), else :class:`StackedAttempt`;
2. the pose-only attempts: :class:`CompiledPose` (:mod:`chain_kernel`) when the chain
   allows, else :class:`PythonPose` (:func:`lm_loop.run` on :class:`PoseState`);
3. :class:`PoseFirst`: a pose target whose constraints are all usually inactive at a pose
   solution (the clearance): the pose attempt, then a value-only test (module ``lm``);
4. :class:`ClearanceLast`: no pose target, a clearance and other constraints
   (:mod:`clearance_last`), its first stage compiled when the kernel takes it;
5. :class:`CompiledConstraints` when the kernel computes every constraint
   (:mod:`constraint_kernel`, costs polished by :mod:`polish_kernel`);
6. :class:`StackedAttempt`: the Python loop on the stacked residuals (any term).

Each iteration is one of two loops: :func:`lm_loop.run` in Python (given the pose rows
or the stacked rows) or a compiled kernel.  An attempt reads the solver's constants (its
``damping_scale``, ``bias``, ...) through ``lm``; it is made per solve and is not kept by
the solver (no reference cycle).
"""
from __future__ import annotations

from typing import List, Optional, Tuple

import numpy as np
import pinocchio as pin

from ros2_ik.core.problem import Problem
from ros2_ik.core.solvers import active_set, chain_kernel, clearance_last, \
    constraint_kernel, lm_loop, polish, polish_kernel
from ros2_ik.core.solvers.options import LocalResult
from ros2_ik.core.solvers.budget import Budget
from ros2_ik.core.solvers.pose_state import PoseState
from ros2_ik.core.solvers.residuals import Residuals

_Attempt = Tuple[np.ndarray, int, bool, float]  # (q, iterations, converged, merit)


class Attempt:
    """One solve's attempt: ``run`` from a start, ``first`` with costs (default: ``run``)."""

    __slots__ = ()
    #: Whether one attempt costs less than ranking the library (the driver then tries the
    #: seed first on problems without a pose target).
    cheap = False

    def run(self, q0: np.ndarray, budget: Budget) -> LocalResult:
        """One attempt from group vector ``q0``."""
        raise NotImplementedError

    def first(self, starts: List[np.ndarray], budget: Budget) -> LocalResult:
        """Make the first attempt of a problem with costs, from one of ``starts``."""
        return self.run(starts[0], budget)


def choose_attempt(lm, problem: Problem) -> Attempt:
    """Return ``problem``'s attempt for solver ``lm`` (the order: module docstring)."""
    if problem.group.has_base:  # the compiled constraint attempt, else the Python loop
        return compiled_constraints(lm, problem) or StackedAttempt(
            lm, Residuals(problem, exact=False, tolerance=lm.options.constraint_tolerance))
    if problem.pose_only:
        return pose_attempt(lm, problem)
    if _pose_first(lm, problem):
        return PoseFirst(lm, problem)
    if clearance_last.ClearanceLastState.applies(problem, lm.pose_first_constraints):
        return ClearanceLast(lm, problem)
    compiled = compiled_constraints(lm, problem)
    if compiled is not None:
        return compiled
    return StackedAttempt(lm, Residuals(problem, exact=False,
                                        tolerance=lm.options.constraint_tolerance))


def pose_attempt(lm, problem: Problem) -> Attempt:
    """Return the pose-only attempt: compiled when the chain allows, else the Python loop."""
    state = PoseState(problem)
    if state.chain is not None and lm.compiled:
        return CompiledPose(state, chain_settings(type(lm)))
    return PythonPose(state, pose_rule(type(lm)))


def compiled_constraints(lm, problem: Problem) -> Optional["CompiledConstraints"]:
    """Return ``problem``'s compiled constraint attempt, or None (the kernel cannot)."""
    if not lm.compiled_constraints:
        return None
    tolerance = lm.options.constraint_tolerance
    compiled = constraint_kernel.compile_problem(problem, tolerance)
    if compiled is None:
        return None
    return CompiledConstraints(lm, compiled, problem, tolerance)


def _pose_first(lm, problem: Problem) -> bool:
    return problem.pose is not None and not problem.costs and all(
        getattr(c, "name", None) in lm.pose_first_constraints for c in problem.constraints)


def _cached(cls, name: str, key: tuple, make):
    """Return a value made from ``cls``'s constants ``key``, cached on the class."""
    cached = cls.__dict__.get(name)
    if cached is None or cached[0] != key:
        cached = (key, make())
        setattr(cls, name, cached)
    return cached[1]


def pose_rule(cls) -> lm_loop.Rule:
    """Return the pose loop's constants of solver class ``cls`` (its progress schedule)."""
    key = (cls.damping_scale, cls.bias, cls.stall_ratio, cls.progress_schedule,
           cls.max_iterations, cls.active_set)
    return _cached(cls, "_pose_rule", key, lambda: lm_loop.Rule(
        cls.damping_scale, cls.bias, cls.stall_ratio,
        lm_loop.bounds(cls.progress_schedule, cls.max_iterations), bool(cls.active_set)))


def stacked_rule(cls, iterations: int) -> lm_loop.Rule:
    """Return the stacked loop's constants of ``cls`` for ``iterations`` at most."""
    return lm_loop.Rule(cls.damping_scale, cls.bias, cls.stall_ratio,
                        lm_loop.bounds((), iterations), bool(cls.active_set))


def chain_settings(cls) -> chain_kernel.Settings:
    """Return the compiled pose attempt's constants of ``cls`` (:func:`pose_rule`'s)."""
    key = (cls.damping_scale, cls.bias, cls.stall_ratio, cls.progress_schedule,
           cls.max_iterations, cls.active_set)
    return _cached(cls, "_chain_settings", key, lambda: chain_kernel.Settings(
        cls.damping_scale, cls.bias, cls.stall_ratio,
        np.array(lm_loop.bounds(cls.progress_schedule, cls.max_iterations)),
        bool(cls.active_set)))


def kernel_settings(cls) -> constraint_kernel.Settings:
    """Return the compiled constraint attempt's constants of ``cls``."""
    return constraint_kernel.Settings(cls.damping_scale, cls.bias, cls.stall_ratio,
                                      bool(cls.active_set))


class PoseAttempt(Attempt):
    """A pose-only attempt on :class:`PoseState`'s target, run by one of the two loops.

    ``how``: the loop's constants: :class:`chain_kernel.Settings` for
    :class:`CompiledPose`, an :class:`lm_loop.Rule` for :class:`PythonPose`.
    """

    __slots__ = ("state", "how")

    def __init__(self, state: PoseState, how):
        """Run on ``state`` (the chain or the loop's model, the target) with ``how``."""
        self.state, self.how = state, how


class CompiledPose(PoseAttempt):
    """The pose attempt compiled (:mod:`chain_kernel`): :class:`PythonPose`'s iteration."""

    __slots__ = ()

    def run(self, q0: np.ndarray, budget: Budget) -> LocalResult:
        """One compiled attempt from group vector ``q0``."""
        s = self.state
        chain, lower, upper = s.chain
        return LocalResult(*chain_kernel.attempt(
            chain, q0, s.T_target_inv_h, lower, upper, s.bounded, float(s.sqrt_w[0]),
            s.pos_tol2, s.ori_tol2, s.near2, self.how))


class PythonPose(PoseAttempt):
    """The pose attempt in Python: :func:`lm_loop.run` on :class:`PoseState`'s rows."""

    __slots__ = ()

    def run(self, q0: np.ndarray, budget: Budget) -> LocalResult:
        """One attempt from group vector ``q0`` on the loop's model."""
        s = self.state
        q, it, done, merit = lm_loop.run(s, s.begin(s.to_q(q0)), budget, self.how)
        return LocalResult(s.from_q(q), it, done, merit)


class StackedAttempt(Attempt):
    """:func:`lm_loop.run` on the stacked Python residuals (any group, any term).

    With costs, a feasible end point is then polished (:mod:`polish`: SQP steps on the
    costs that keep the pose and every constraint).
    """

    __slots__ = ("lm", "res", "rows")

    def __init__(self, lm, res: Residuals):
        """Run on ``res`` with ``lm``'s constants."""
        self.lm, self.res, self.rows = lm, res, active_set.StackedRows(res)

    def project(self, q: np.ndarray, budget: Budget, iterations: int = 0) -> _Attempt:
        """Run the loop alone from ``q`` (``iterations``, else ``max_iterations_constrained``)."""
        lm = self.lm
        rule = stacked_rule(type(lm), iterations or lm.max_iterations_constrained)
        return lm_loop.run(self.rows, q, budget, rule)

    def attempt(self, q: np.ndarray, budget: Budget) -> _Attempt:
        """:meth:`project`, then polishing when there are costs."""
        q, it, done, merit = self.project(q, budget)
        if done and self.res.problem.costs:
            q, steps = polish.polish(polish.ResidualsModel(self.res), q, budget,
                                     lambda x: self.restore(x, budget))
            it += steps
        return q, it, done, merit

    def run(self, q0: np.ndarray, budget: Budget) -> LocalResult:
        """One attempt from group vector ``q0``."""
        return LocalResult(*self.attempt(q0, budget))

    def first(self, starts: List[np.ndarray], budget: Budget) -> LocalResult:
        """Project every start (no polishing), polish the feasible one of lowest costs."""
        model = polish.ResidualsModel(self.res)
        return LocalResult(*polish.from_best_start(
            model, starts, lambda q: self.project(q, budget),
            lambda q: polish.polish(model, q, budget, lambda x: self.restore(x, budget)),
            budget))

    def restore(self, q: np.ndarray, budget: Budget):
        """Run a few iterations back onto the constraints: ``(q, feasible)``."""
        q, _, done, _ = self.project(q, budget, self.lm.restore_iterations)
        return q, done


class CompiledConstraints(constraint_kernel.KernelState, Attempt):
    """The constraint attempt compiled (:mod:`constraint_kernel`); costs then polished."""

    __slots__ = ("lm",)
    cheap = True

    def __init__(self, lm, compiled: constraint_kernel.Compiled, problem: Problem,
                 tolerance):
        """Run ``compiled`` (of ``problem``) with ``lm``'s constants."""
        super().__init__(compiled, problem, tolerance)
        self.lm = lm

    def project(self, q: np.ndarray, iterations: int = 0) -> _Attempt:
        """One compiled attempt from ``q``, without polishing."""
        lm = self.lm
        return constraint_kernel.attempt(self.compiled, q, self.lower, self.upper,
                                         kernel_settings(type(lm)),
                                         iterations or lm.max_iterations_constrained)

    def attempt(self, q: np.ndarray, budget: Budget) -> _Attempt:
        """:meth:`project`, then polishing when there are costs."""
        q, it, done, merit = self.project(q)
        if done and self.problem.costs:
            q, steps = self.polish(q, budget)
            it += steps
        return q, it, done, merit

    def run(self, q0: np.ndarray, budget: Budget) -> LocalResult:
        """One attempt from group vector ``q0``."""
        return LocalResult(*self.attempt(q0, budget))

    def first(self, starts: List[np.ndarray], budget: Budget) -> LocalResult:
        """Compiled projections of ``starts``; the lowest-cost one polished."""
        return LocalResult(*polish.from_best_start(
            self.polishing_model(), starts, self.project, lambda q: self.polish(q, budget),
            budget))

    def polish(self, q: np.ndarray, budget: Budget) -> Tuple[np.ndarray, int]:
        """Polish from feasible ``q``: the compiled loop on the compiled model, else Python."""
        model, lm = self.polishing_model(), self.lm
        if lm.compiled_polish and type(model) is polish_kernel.CompiledModel:
            return model.polish(q, budget, kernel_settings(type(lm)), lm.restore_iterations)
        return polish.polish(model, q, budget, self.restore)

    def polishing_model(self):
        """Polishing's model of the problem (compiled when it applies), made once per solve."""
        if self.polish_model is None:
            self.polish_model = polish_kernel.model_for(self)
        return self.polish_model

    def restore(self, q: np.ndarray):
        """Bring ``q`` back onto the constraints, compiled: ``(q, feasible)``."""
        q, _, done, _ = self.project(q, self.lm.restore_iterations)
        return q, done


def _push_every(lm) -> int:
    """Which colliding solutions are pushed out: every n-th of the solve.

    A solve limited to fewer attempts than ``clearance_push_every`` pushes out each one
    (a local repair near the seed is then what was asked for).
    """
    return 1 if _few_attempts(lm) else lm.clearance_push_every


def _few_attempts(lm) -> bool:
    """Whether the solve may make fewer attempts than ``clearance_push_every``."""
    limit = lm.options.max_attempts
    return bool(limit) and limit < lm.clearance_push_every


def push_out(lm, stacked: StackedAttempt, q: np.ndarray, q0: np.ndarray,
             budget: Budget) -> _Attempt:
    """Run the stacked loop from colliding ``q`` to move it clear, holding the rest.

    ``clearance_push_iterations`` at most.  A solve limited to fewer attempts than
    ``clearance_push_every`` has no restart to leave a deep collision to: a whole
    attempt from ``q``, then, if that stalls, one from the attempt's start ``q0``.
    """
    if not _few_attempts(lm):
        return stacked.project(q, budget, lm.clearance_push_iterations)
    q, it, done, merit = stacked.attempt(q, budget)
    if done or budget.expired():
        return q, it, done, merit
    q, more, done, merit = stacked.attempt(q0, budget)
    return q, it + more, done, merit


class PoseFirst(Attempt):
    """A constrained problem solved pose first: the pose attempt, then the stacked one."""

    __slots__ = ("lm", "pose", "problem", "model", "data", "_stacked", "rejected")

    def __init__(self, lm, problem: Problem):
        """Cheap: the stacked residuals are built by the first attempt that needs them."""
        self.lm, self.problem = lm, problem
        self.pose = pose_attempt(lm, problem)
        self.model = problem.group.robot.model
        self.data = clearance_last.check_data(problem.group)
        self._stacked = None
        #: Pose solutions of this solve that the constraints' test rejected.
        self.rejected = 0

    @property
    def stacked(self) -> StackedAttempt:
        """The stacked attempt on the full model (own Data, built on first use)."""
        if self._stacked is None:
            self._stacked = StackedAttempt(self.lm, Residuals(
                self.problem, exact=False, tolerance=self.lm.options.constraint_tolerance))
        return self._stacked

    def holds(self, q: np.ndarray) -> bool:
        """Whether every constraint holds at group vector ``q`` (no constraint Jacobian)."""
        q_full = self.problem.group.to_full_q(q)
        pin.computeJointJacobians(self.model, self.data, q_full)  # what terms expect
        pin.updateFramePlacements(self.model, self.data)
        return all(c.holds(self.model, self.data, q_full) for c in self.problem.constraints)

    def run(self, q0: np.ndarray, budget: Budget) -> LocalResult:
        """Pose alone; a colliding answer restarts or, every few, is pushed out."""
        pose = self.pose.run(q0, budget)
        if not pose.converged or self.holds(pose.q):
            return pose  # clear: no Jacobians, no gradients, no pairs out to the influence
        if not clearance_last.push_now(self, _push_every(self.lm)):
            return LocalResult(pose.q, pose.iterations, False, pose.merit)
        q, it, done, merit = push_out(self.lm, self.stacked, pose.q, q0, budget)
        return LocalResult(q, it + pose.iterations, done, merit)


class ClearanceLast(Attempt):
    """Other constraints, then the clearance (:mod:`clearance_last`)."""

    __slots__ = ("lm", "state", "first_stage", "cheap", "_full")

    def __init__(self, lm, problem: Problem):
        """Split ``problem``; its first stage compiled when the kernel takes it."""
        self.lm = lm
        self.state = clearance_last.ClearanceLastState(problem, lm.pose_first_constraints,
                                                       lm.options.constraint_tolerance)
        self.first_stage = compiled_constraints(lm, self.state.first_problem)
        #: Compiled first stage: an attempt is that and a value-only clearance test.
        self.cheap = self.first_stage is not None
        self._full = None

    def _push(self, q: np.ndarray, q0: np.ndarray, budget: Budget) -> _Attempt:
        if self._full is None:
            self._full = StackedAttempt(self.lm, self.state.full)
        return push_out(self.lm, self._full, q, q0, budget)

    def run(self, q0: np.ndarray, budget: Budget) -> LocalResult:
        """Run the first stage, then the clearance test and, every few, the push-out."""
        if self.first_stage is None:  # the Python first stage, built on first use
            self.first_stage = StackedAttempt(self.lm, self.state.first)
        return LocalResult(*clearance_last.attempt(
            self.state, q0, budget, self.first_stage.attempt, self._push,
            _push_every(self.lm)))
