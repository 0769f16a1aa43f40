"""The restart search every built-in solver's driver runs, and how its answers are returned.

:class:`Search` draws starts (the seed first, then the library samples nearest to the
pose target, then uniform random in the limits; with costs, the first attempt also gets
the costs' preferred configurations, :func:`cost_starts`), unwraps near the seed (not
with costs), clamps and independently verifies every candidate
(:func:`returned`, :func:`~ros2_ik.core.verify.check`), keeps distinct solutions and
builds the frozen :class:`~ros2_ik.core.result.IKResult` (:func:`solved`).
:class:`~ros2_ik.core.solvers.base.Solver` runs it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import List, NamedTuple, Optional, Tuple

import numpy as np
import pinocchio as pin

from ros2_ik.core.constraints.position import PositionConstraint
from ros2_ik.core.kinematics import reach
from ros2_ik.core.problem import Problem
from ros2_ik.core.result import IKResult, IKStatus, Progress, Solution
from ros2_ik.core.solvers import seed_library
from ros2_ik.core.solvers.budget import Budget
from ros2_ik.core.solvers.options import DISTINCT_TOLERANCE, LocalResult, SolveOptions
from ros2_ik.core.verify import Violation, check


@dataclass
class _Candidate:
    q: np.ndarray
    pos: float
    ori: float
    score: float
    violations: List[Violation]


class Search:
    """State of one solve: budget, random starts, best candidate, solutions."""

    def __init__(self, problem: Problem, seed: np.ndarray, options: SolveOptions,
                 start: Optional[float] = None):
        """Start the budget now, or at ``start`` (``time.perf_counter()``)."""
        if problem.group.has_base:  # the library samples a fixed base: random starts
            options = options._replace(library_starts=0)
        self.problem, self.group, self.options = problem, problem.group, options
        self.seed = seed
        self._rng: Optional[np.random.Generator] = None
        self._library: Optional[List[np.ndarray]] = None  # constraint problems' starts
        self._pose_library: Optional[seed_library.LibraryStarts] = None
        self.budget = Budget(options.timeout_s, options.cancel,
                             self._send_feedback if options.feedback else None, start)
        self.data = self.group.full_data()
        self.attempts = self.iterations = 0
        self.best: Optional[_Candidate] = None
        self._unchecked: Optional[Tuple[float, np.ndarray]] = None  # (merit, q)
        self.solutions: List[Solution] = []
        self.rejected_jump: Optional[_Candidate] = None
        self.invalid = False
        self._limit_jump = math.isfinite(options.max_joint_jump_rad)
        #: Constraint problems: the seed's attempt before ranking the library (the solver
        #: sets it, :meth:`~ros2_ik.core.solvers.base.Solver.cheap_attempts`).
        self.seed_first = False
        #: Starts tried right after the seed, before the library: a closed form's exact
        #: branches (:mod:`before_iterating`).
        self.first_starts: List[np.ndarray] = []
        self._carry = None  # see _carried_seed (decided at the first restart)

    # ---------------------------------------------------------------- starts
    def next_start(self) -> np.ndarray:
        """Return the seed, then the library samples nearest to the pose target, then random.

        Library samples: :mod:`ros2_ik.core.solvers.seed_library` (``options.library_starts`` of
        them, within the jump box when one is set); random: uniform in the limits, or in
        the jump box.  Each projected into the problem's joint windows, if it has any
        (:attr:`Problem.search_bounds`), a wrapping joint first shifted by 2 pi into its
        window when it has an equivalent there.
        """
        start = self._next_start()
        return in_windows(self.problem, start)

    def _next_start(self) -> np.ndarray:
        if self.problem.pose is None and self.problem.constraints:
            start = self._constraint_start()
            if start is not None:
                return start
        elif self.attempts == 0:
            return self.seed.copy()
        k = self.attempts - len(self.first_starts)  # library rank + 1
        if k <= 0 and self.first_starts:
            return self.first_starts[self.attempts - 1].copy()
        if k <= self.options.library_starts and self.problem.pose is not None:
            if self._pose_library is None:  # ranked when the seed's attempt has failed
                self._pose_library = seed_library.LibraryStarts(
                    self.group, self.problem.pose, self.options.library_starts, self.seed,
                    self.options.max_joint_jump_rad)
            start = self._pose_library.get(k - 1)
            if start is not None:
                return start
        if self._rng is None:  # created lazily: often not needed
            self._rng = np.random.default_rng(self.options.random_seed)
        carried = self._carried_seed()
        if carried is not None and self.attempts == 1:
            return carried.copy()
        return self.group.random_configuration(
            self._rng, self.seed if carried is None else carried,
            self.options.max_joint_jump_rad)

    def _carried_seed(self) -> Optional[np.ndarray]:
        """Return the seed carried to the goal (whole-body groups), or None (the base stays).

        When the pose target (or, without one, a world-fixed position box) lies farther
        from the base joint, where the seed puts it, than its point can reach from there
        (:func:`reach.base_distance_bound`), no start with the base at the seed's place
        can be a solution.  The seed is then moved as one body so that the point lands
        on the goal (:meth:`WholeBodyGroup.carried`): the first restart, and the base of
        every random restart after it (their joints drawn as always).  Decided once, at
        the first restart.
        """
        if self._carry is None:
            goal = self._far_goal()
            self._carry = False if goal is None else self.group.carried(
                self.seed, *_carried_point(self.group, self.seed, goal))
        return None if self._carry is False else self._carry

    def _far_goal(self) -> Optional["_Goal"]:
        group = self.group
        goal = _goal(group, self.problem) if group.has_base else None
        if goal is None:
            return None
        bound = reach.base_distance_bound(group, goal.frame_id)
        if bound is None:
            return None
        X = group.base_world_placement(self.seed)
        reach_m = bound + math.sqrt(sum(v * v for v in goal.p_FQ))
        far = float(np.linalg.norm(goal.T_world_goal.translation - X.translation))
        return goal if far > reach_m else None

    def _constraint_start(self) -> Optional[np.ndarray]:
        """Return the next start of a problem without a pose target, or None.

        The seed and the library samples ranked by their constraint violation
        (:func:`seed_library.constraint_starts`), then None (random starts).  The seed
        goes first on its own, the ranking only after its attempt, with costs (its basin
        is the local optimum a user expects, and Drake's) and when :attr:`seed_first`
        (the solver's attempts cost less than the ranking, as the compiled lm's do; the
        seed from mid-limits alone solves most of the benchmark's problems:
        docs/design.md).
        """
        first_alone = self.seed_first or bool(self.problem.costs)
        if self.attempts == 0 and (first_alone or not self.options.library_starts):
            return self.seed.copy()
        if self._library is None and self.options.library_starts:
            self._library = list(seed_library.constraint_starts(
                self.group, self.problem.constraints, self.options.library_starts,
                self.seed, self.options.max_joint_jump_rad, with_seed=not first_alone))
        k = self.attempts - (1 if first_alone else 0)  # after the seed's attempt
        if self._library is not None and k < len(self._library):
            return self._library[k].copy()
        return None

    def cost_starts(self) -> List[np.ndarray]:
        """:func:`cost_starts` of this search's problem, seed and jump limit."""
        return cost_starts(self.problem, self.seed, self.options.max_joint_jump_rad)

    def finished(self) -> bool:
        """Return True when enough solutions, attempts exhausted, timed out or cancelled."""
        opts = self.options
        if len(self.solutions) >= opts.num_solutions:
            return True
        if opts.max_attempts and self.attempts >= opts.max_attempts:
            return True
        return self.budget.expired()

    # ------------------------------------------------------------ candidates
    def consider(self, local: LocalResult) -> bool:
        """Record an attempt's end point; returns True when it became a solution."""
        self.attempts += 1
        self.iterations += int(local.iterations)
        q = np.asarray(local.q, dtype=float)
        # The sum is finite for almost every q: one cheap test before the exact one.
        if q.shape != (self.group.n,) or (
                not math.isfinite(sum(q.tolist())) and not np.isfinite(q).all()):
            self.invalid = True
            return False
        if not local.converged:
            if self._unchecked is None or local.merit < self._unchecked[0]:
                self._unchecked = (float(local.merit), q)
            return False
        return self._check(q)

    def _check_unchecked(self) -> None:
        """Verify the best unconverged candidate once, for the best-available answer."""
        if self._unchecked is not None:
            self._check(self._unchecked[1])
            self._unchecked = None

    def _check(self, q: np.ndarray) -> bool:
        group = self.group
        q = returned_q(self.problem, q, self.seed)
        # The one acceptance: the full model's check (it also names what a rejected
        # candidate violates, for the best answer).
        ok, pos, ori, _, viol = check(group, self.problem.pose, q, self.problem.constraints,
                                      self.data, self.options.constraint_tolerance)
        cand = _Candidate(q, pos, ori, self._score(pos, ori, viol), viol)
        if ok and self._limit_jump and self._jump(q) > self.options.max_joint_jump_rad:
            if self.rejected_jump is None or self._jump(q) < self._jump(self.rejected_jump.q):
                self.rejected_jump = cand
            ok = False
        if not ok:
            if self.best is None or cand.score < self.best.score:
                self.best = cand
            return False
        return self._add_solution(cand)

    def _score(self, pos: float, ori: float, viol) -> float:
        pose = self.problem.pose
        s = 0.0
        if pose is not None:
            a = pos / pose.target.position_tolerance_m  # x * x, not x ** 2: a target
            b = ori / pose.target.orientation_tolerance_rad  # 1e152 m away scores inf
            s = a * a + b * b
        tol = self.options.constraint_tolerance
        return s + sum(v.amount / tol.of(v.unit) for v in viol)

    def _jump(self, q: np.ndarray) -> float:
        return float(np.max(np.abs(q - self.seed), initial=0.0))

    def _add_solution(self, cand: _Candidate) -> bool:
        for sol in self.solutions:
            if np.abs(sol.q - cand.q).max() <= DISTINCT_TOLERANCE:
                return False
        dist = math.dist(cand.q.tolist(), self.seed.tolist())  # [rad or m], as floats
        self.solutions.append(Solution(cand.q, cand.pos, cand.ori, dist))
        return True

    def _send_feedback(self) -> None:
        best = self.best
        if best is None and self._unchecked is not None:  # measured, not recorded
            q = returned_q(self.problem, self._unchecked[1], self.seed)
            _, pos, ori, _, viol = check(self.group, self.problem.pose, q,
                                         self.problem.constraints, self.data,
                                         self.options.constraint_tolerance)
            best = _Candidate(q, pos, ori, math.nan, viol)
        best_q, violation, cost = None, math.nan, math.nan
        if best is not None:
            best_q = best.q.copy()
            best_q.setflags(write=False)
            violation = max((v.amount for v in best.violations), default=0.0)
            cost = self._cost(best.q)
        self.options.feedback(Progress(
            self.budget.elapsed(), max(self.attempts - 1, 0), self.iterations,
            best.pos if best else math.nan, best.ori if best else math.nan,
            len(self.solutions), best_q=best_q, best_violation=violation, best_cost=cost))

    def _cost(self, q: np.ndarray) -> float:
        """Return the problem's costs summed at group vector ``q`` (0 without costs)."""
        if not self.problem.costs:
            return 0.0
        q_full, model = self.group.to_full_q(q), self.group.robot.model
        return float(sum(c.evaluate(model, self.data, q_full)[0] for c in self.problem.costs))

    # ---------------------------------------------------------------- result
    def result(self, solver_name: str) -> IKResult:
        """Build the frozen IKResult, its status chosen as documented on IKStatus.

        Without a solution, the best unconverged end point is checked first: it may hold
        within the tolerances (the attempts' own test is stricter), and is then a solution.
        """
        if not self.solutions:
            self._check_unchecked()
        if self.solutions:
            return solved(self.group, tuple(sorted(self.solutions,
                                                   key=lambda s: s.distance_to_seed)),
                          self.attempts, self.iterations, self.budget.elapsed(),
                          self.options.random_seed, solver_name)
        status, cand, message = self._outcome()
        if cand is None:
            q, pos, ori, viol = self.seed, math.nan, math.nan, []
        else:
            q, pos, ori, viol = cand.q, cand.pos, cand.ori, cand.violations
        return IKResult(
            q=q, joint_names=self.group.joint_names, status=status,
            iterations=self.iterations, restarts=max(self.attempts - 1, 0),
            position_error_m=pos, orientation_error_rad=ori,
            solve_time_s=self.budget.elapsed(), random_seed=self.options.random_seed,
            violations=tuple(viol), message=message, solver=solver_name)

    def _outcome(self) -> Tuple[IKStatus, Optional[_Candidate], str]:
        """Status, candidate and message of a search without solutions."""
        n = self.attempts
        if self.budget.cancelled:
            return IKStatus.CANCELLED, self.best, f"cancelled after {n} attempt(s)"
        if self.rejected_jump is not None:
            jump = self._jump(self.rejected_jump.q)
            return IKStatus.JUMP_TOO_LARGE, self.rejected_jump, (
                f"nearest solution moves a joint {jump:.3g} rad/m from the seed, above "
                f"max_joint_jump_rad={self.options.max_joint_jump_rad:.3g}")
        if self.invalid and self.best is None:
            return IKStatus.INVALID, None, "solver returned a non-finite configuration"
        if self.best is None:
            return IKStatus.TIMED_OUT, None, "timed out before any candidate was evaluated"
        why = "timeout" if self.budget.timed_out else "max_attempts"
        return IKStatus.NO_SOLUTION, self.best, (
            f"no solution within tolerance after {n} attempt(s) ({why}); best available "
            f"{_describe(self.best, self.problem.pose is not None)}"
            f"{_at_windows(self.problem, self.best.q)}")


class _Goal(NamedTuple):
    """Where a restart carries a whole-body robot.

    Point ``p_FQ`` [m] of frame ``frame_id`` onto ``T_world_goal`` (its axes too with
    ``turn``).
    """

    frame_id: int
    p_FQ: Tuple[float, ...]
    T_world_goal: "pin.SE3"
    turn: bool


def _goal(group, problem: Problem) -> Optional[_Goal]:
    """Return the pose target (every position axis held), else the first world-fixed box."""
    pose = problem.pose
    if pose is not None:
        if not (pose.mask[0] and pose.mask[1] and pose.mask[2]):
            return None
        return _Goal(pose.frame_id, (0.0, 0.0, 0.0), pose.T_world_target, pose.full_rotation)
    for c in problem.constraints:
        goal = c.world_goal(group) if type(c) is PositionConstraint else None
        if goal is not None:
            fid, p_FQ, p_world = goal
            return _Goal(fid, tuple(p_FQ), pin.SE3(np.eye(3), np.asarray(p_world)), False)
    return None


def _carried_point(group, q: np.ndarray, goal: _Goal):
    """``(T_world_point, T_world_goal, turn)`` at ``q``: the rest of ``carried``'s arguments."""
    T = group.fk(q, group.robot.model.frames[goal.frame_id].name)
    return pin.SE3(T.rotation, T.act(np.asarray(goal.p_FQ))), goal.T_world_goal, goal.turn


def in_windows(problem: Problem, start: np.ndarray) -> np.ndarray:
    """``start`` projected into ``problem``'s joint windows (:attr:`Problem.search_bounds`).

    A wrapping joint is first shifted by 2 pi to its equivalent inside its window, when
    it has one.  ``start`` itself when the problem has no window.
    """
    if not problem.folded:
        return start
    if problem.group.has_wrapping:  # a window across +-pi: the equivalent inside it
        start = problem.group.unwrap_near(start, problem.window_centres, problem.windows)
    lower, upper = problem.search_bounds
    return np.minimum(np.maximum(start, lower), upper)


def cost_starts(problem: Problem, seed: np.ndarray, jump: float) -> List[np.ndarray]:
    """Group vectors where a cost is lowest (:meth:`Cost.preferred_configuration`).

    Clamped into the limits and the box of ``jump`` [rad or m] around ``seed``; the seed
    and repeats left out.
    """
    group = problem.group
    starts: List[np.ndarray] = []
    for cost in problem.costs:
        q_full = cost.preferred_configuration()
        if q_full is None:
            continue
        # Not unwrapped near the seed: 2 pi away, a posture cost is another.
        q = group.clamp(group.from_reduced_q(np.asarray(q_full)[group.iq_full]))
        if math.isfinite(jump):
            q = np.minimum(np.maximum(q, seed - jump), seed + jump)
        values = q.tolist()  # floats: numpy's max is a Python wrapper, dearer
        if all(max(abs(a - b) for a, b in zip(values, other.tolist())) > DISTINCT_TOLERANCE
               for other in starts + [seed]):
            starts.append(q)
    return starts


def returned_q(problem: Problem, q: np.ndarray, seed: np.ndarray) -> np.ndarray:
    """``q`` as the driver checks and returns it: :func:`unwrapped`, clamped, read-only.

    A fresh array (solvers clamp already: usually inside the limits); the Solution and
    the IKResult keep it as it is.
    """
    return returned(problem, q, seed, seed.tolist())[0]


def returned(problem: Problem, q: np.ndarray, seed: np.ndarray, seed_values: list
             ) -> Tuple[np.ndarray, list]:
    """:func:`returned_q` and its values as Python floats.

    ``seed_values``: ``seed.tolist()``, which the caller has already; the values serve
    the check (:func:`verify.check`'s ``values``) and the distance to the seed.
    """
    group = problem.group
    if not (group.has_wrapping and problem.costs):
        return returned_pose(group, problem.windows, q, seed_values)
    q = unwrapped(problem, q, seed)
    return _within_limits(group, q, q.tolist())


def returned_pose(group, windows: Tuple[list, list], q: np.ndarray, seed_values: list
                  ) -> Tuple[np.ndarray, list]:
    """:func:`returned` of a problem without costs, its :attr:`Problem.windows` given.

    Wrapping joints unwrapped near ``seed_values`` (on floats: one list each way), then
    clamped when outside the limits; read-only.
    """
    if group.has_wrapping:
        values = group.unwrap_values(q.tolist(), seed_values, windows)
        q = np.array(values)
    else:
        q = np.array(q, dtype=float)
        values = q.tolist()
    return _within_limits(group, q, values)


def _within_limits(group, q: np.ndarray, values: list) -> Tuple[np.ndarray, list]:
    """``q`` (and its ``values``) clamped when outside the limits, made read-only."""
    if not group.within_limits_values(values):
        q = group.clamp(q)
        values = q.tolist()
    q.setflags(write=False)
    return q, values


def unwrapped(problem: Problem, q: np.ndarray, seed: np.ndarray) -> np.ndarray:
    """``q`` with wrapping joints shifted by 2 pi to the equivalent nearest ``seed`` (a copy).

    The equivalent chosen keeps the joint limits and the problem's joint windows
    (:attr:`Problem.windows`).  With costs, a revolute joint already inside them keeps
    the value the solver minimised: 2 pi away a posture cost is another (a continuous
    joint's is the same).
    """
    group, windows = problem.group, problem.windows
    shifted = group.unwrap_near(q, seed, windows)
    if not problem.costs:
        return shifted
    lower, upper = np.array(windows[0]), np.array(windows[1])
    keep = ~group.continuous & (q >= lower) & (q <= upper)
    return np.where(keep, q, shifted)


def solved(group, solutions: Tuple[Solution, ...], attempts: int, iterations: int,
           elapsed_s: float, random_seed: int, solver_name: str) -> IKResult:
    """Return the SUCCESS result of verified ``solutions``, the nearest to the seed first."""
    best = solutions[0]
    return IKResult(  # positional: every solved request makes one
        best.q, group.joint_names, IKStatus.SUCCESS, iterations, max(attempts - 1, 0),
        best.position_error_m, best.orientation_error_rad, elapsed_s, random_seed, (),
        solutions, _ONE_FIRST_TIME if len(solutions) == attempts == 1 else
        f"{len(solutions)} solution(s) after {attempts} attempt(s)", solver_name)


#: :func:`solved`'s usual message, made once (not formatted on every solve).
_ONE_FIRST_TIME = "1 solution(s) after 1 attempt(s)"


def _at_windows(problem: Problem, q: np.ndarray) -> str:
    """Name the joint windows ``q`` stands at the edge of: ``'; at the bound of ...'`` or ''.

    Windows are the solvers' bounds (:attr:`Problem.folded`), never violated rows, so a
    failure they cause shows as a pose or constraint error; this says which held it back.
    """
    if not problem.folded:
        return ""
    lower, upper = problem.windows
    limits, index = problem.group.limit_lists, problem.group.joint_index
    held = []
    for c in problem.folded:
        for name in c.joint_names:
            i = index[name]
            if (abs(q[i] - lower[i]) < 1e-6 and lower[i] > limits[0][i]) or \
                    (abs(q[i] - upper[i]) < 1e-6 and upper[i] < limits[1][i]):
                held.append(f"{c.name} ({name})")
    return f"; at the bound of {', '.join(held)}" if held else ""


def _describe(cand: _Candidate, has_pose: bool) -> str:
    """Tell what is wrong with ``cand``: pose errors (with a pose target), largest violation."""
    parts = [f"has {cand.pos:.3g} m / {cand.ori:.3g} rad"] if has_pose else []
    if cand.violations:
        worst = max(cand.violations, key=lambda v: v.amount)
        parts.append(f"violates {worst} (largest of {len(cand.violations)} violated)")
    elif not has_pose:
        parts.append("violates no constraint")  # e.g. kept for the jump limit
    return "; ".join(parts)
