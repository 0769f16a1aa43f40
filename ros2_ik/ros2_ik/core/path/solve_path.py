"""IK along a Cartesian path: one continuous joint path, chosen over every solution branch.

``solve_path(group, waypoints, seed, max_joint_step)`` samples several distinct solutions
of the first waypoint and follows each branch along the path (:mod:`path_ladder`),
bridges a waypoint that no followed branch reaches with solutions of it followed
backwards (:mod:`path_bridge`), joins the candidates with dynamic programming minimising
joint motion, picks for each wrapping joint the 2 pi equivalent that keeps the whole path
inside its limits without winding it, and checks the answer independently
(:func:`ros2_ik.core.verify.check` at every waypoint and every interior point,
:mod:`path_segments`; no joint moving more than its step).
Where no continuous path exists, the result is the longest feasible prefix, the fraction
reached and why it stops (the waypoint, the joint or the constraint).
"""
from __future__ import annotations

import enum
import math
import time
from dataclasses import dataclass
from typing import Iterable, Optional, Sequence, Tuple, Union

import numpy as np

from ros2_ik.core import terms
from ros2_ik.core.model.group import Group
from ros2_ik.core.path.bridge import bridge
from ros2_ik.core.path.ladder import Ladder
from ros2_ik.core.path.options import (DEFAULT_BRANCHES, PathOptions, path_options,
                                       waypoint_problems, waypoint_targets)
from ros2_ik.core.path.segments import Failure, Segments, unwind
from ros2_ik.core.pose import PoseTarget
from ros2_ik.core.result import IKResult
from ros2_ik.core.runtime.thread_data import PerThreadData
from ros2_ik.core.solve import prepare, solve
from ros2_ik.core.verify import CONSTRAINT_TOLERANCE_M, CONSTRAINT_TOLERANCE_RAD

#: The segments' and waypoints' checks: one ``Data`` per thread and model, not per path.
_PATH_DATA = PerThreadData()

#: A solve's time cap [s] when the path has no ``timeout_s``: only a safety net, since
#: attempt counts bound each solve (:func:`_solver_calls`).
SOLVE_CAP_S = 10.0


class PathStatus(enum.Enum):
    """Outcome of :func:`solve_path` (bad input raises instead, :mod:`errors`).

    COMPLETE: every waypoint reached.  PARTIAL: a prefix of at least one waypoint.
    NO_PATH: not even the first waypoint.  TIMED_OUT: ``timeout_s`` ended the search
    (the prefix found so far is returned).
    """

    COMPLETE = "complete"
    PARTIAL = "partial"
    NO_PATH = "no_path"
    TIMED_OUT = "timed_out"


@dataclass(frozen=True)
class PathResult:
    """What :func:`solve_path` returns.

    ``q_path`` (m, n), read-only: one group vector per reached waypoint, the first ``m``
    of them, in ``joint_names`` order ([rad] or [m]; wrapping joints continuous, possibly
    beyond +-pi).  ``position_errors_m`` / ``orientation_errors_rad`` (m,): each reached
    waypoint's pose error by forward kinematics.  ``fraction`` = m / waypoints.
    ``failed_waypoint``: index of the first waypoint not reached (-1: none), and
    ``failed_joint`` / ``failed_constraint`` the joint or constraint that stops the path
    there ('' when none is to blame); ``message`` says why in words.
    """

    q_path: np.ndarray
    joint_names: Tuple[str, ...]
    status: PathStatus
    fraction: float
    position_errors_m: np.ndarray
    orientation_errors_rad: np.ndarray
    waypoints: int
    failed_waypoint: int = -1
    failed_joint: str = ""
    failed_constraint: str = ""
    message: str = ""
    solve_time_s: float = 0.0

    @property
    def complete(self) -> bool:
        """True when every waypoint was reached."""
        return self.status is PathStatus.COMPLETE


def solve_path(group: Group, waypoints: Sequence[PoseTarget], seed: np.ndarray,
               max_joint_step: Union[float, Sequence[float]], *,
               constraints: Iterable[terms.Constraint] = (), start_at_seed: bool = False,
               path_tolerance_m: float = 1e-3, path_tolerance_rad: float = 1e-2,
               check_step_m: float = 5e-3, check_step_rad: float = 5e-2,
               num_solutions: int = DEFAULT_BRANCHES, timeout_s: float = math.inf,
               solver: str = "lm", random_seed: int = 0,
               constraint_tolerance_m: float = CONSTRAINT_TOLERANCE_M,
               constraint_tolerance_rad: float = CONSTRAINT_TOLERANCE_RAD) -> PathResult:
    """One continuous joint path through ``waypoints`` (pose targets, in order).

    ``seed`` (n,): the current configuration; the path nearest to it (joint motion from
    it counted in the cost) is preferred, and with ``start_at_seed`` the first waypoint
    must be one step from it.  ``max_joint_step`` [rad or m]: the largest move of any
    joint between consecutive waypoints, one value or one per group joint.  Between
    waypoints the joints move linearly and the tip must stay within
    ``path_tolerance_m`` [m] / ``path_tolerance_rad`` [rad] of the straight Cartesian
    segment, checked every ``check_step_m`` [m] / ``check_step_rad`` [rad] of it.
    ``constraints`` (joint windows, orientation bounds, a collision clearance, ...) hold at
    every waypoint and every check, within ``constraint_tolerance_m`` / ``_rad``.
    ``num_solutions``: distinct branches sampled at the first waypoint (and followed).
    ``timeout_s`` [s]: budget for the whole path (the one-time work of a first solve,
    :func:`ros2_ik.core.solve.prepare`, is done before its clock starts).
    """
    targets, constraints = waypoint_targets(waypoints), tuple(constraints)
    waypoint_problems(group, targets[:1], constraints)  # a bad frame named before prepare
    prepare(group, targets[0].frame, constrained=bool(constraints))
    started = time.perf_counter()  # after the one-time work, as solve() starts its clock
    opts = path_options(group, seed, max_joint_step, start_at_seed, path_tolerance_m,
                        path_tolerance_rad, check_step_m, check_step_rad, num_solutions,
                        timeout_s, solver, random_seed, constraint_tolerance_m,
                        constraint_tolerance_rad)
    seed_q = group.clamped_seed(seed)
    problems = waypoint_problems(group, targets, constraints)
    segments = Segments(group, [p.pose for p in problems], problems[0].constraints,
                        opts.tolerance, opts.path_tolerance_m, opts.path_tolerance_rad,
                        opts.check_step_m, opts.check_step_rad)
    data = _PATH_DATA(group.robot.model)
    ladder = Ladder(group, segments, opts.step, opts.beam,
                    _solver_calls(group, problems, opts), data)
    failure = _build(ladder, len(problems), seed_q, opts, started)
    q_path, ladder_failure = ladder.best_path()
    q_path, unwind_failure = unwind(group, q_path, seed_q, opts.start_at_seed)
    q_path, errors_m, errors_rad, check_failure = _verified(segments, q_path, seed_q, opts,
                                                            data)
    failure = check_failure if check_failure.reason else (
        unwind_failure if unwind_failure.reason else (failure or ladder_failure))
    return _result(group, q_path, errors_m, errors_rad, len(problems), failure,
                   time.perf_counter() - started)


def _solver_calls(group: Group, problems, opts: PathOptions):
    """Return the ladder's solve: layer 0 by restarts, later layers from their seeds.

    ``anywhere``: restarts anywhere in the limits, ``attempts`` of them (0:
    ``opts.start_attempts``; layer 0, and :func:`bridge`'s samples of an unreached
    waypoint).  Otherwise ``attempts`` 1 is one solve from the seed, more are restarts
    inside the step box around it.  Each solve is bounded by its attempts, never by a
    clock of its own: under load a per-solve deadline could end a solve before its first
    attempt and make the path depend on the machine.  The path's ``timeout_s`` still
    bounds each solve (``SOLVE_CAP_S`` when the path has none).
    """
    jump = float(np.max(opts.step))
    cap = opts.timeout_s if math.isfinite(opts.timeout_s) else SOLVE_CAP_S

    def solve_from(i: int, seed: np.ndarray, attempts: int, solutions: int,
                   anywhere: bool = False) -> IKResult:
        anywhere = anywhere or i == 0
        return solve(group, problems[i], seed, solver=opts.solver, timeout_s=cap,
                     max_attempts=attempts or opts.start_attempts,
                     random_seed=opts.random_seed + i,
                     max_joint_jump_rad=jump if attempts > 1 and not anywhere else math.inf,
                     num_solutions=solutions,
                     constraint_tolerance_m=opts.tolerance.m,
                     constraint_tolerance_rad=opts.tolerance.rad)
    return solve_from


def _build(ladder: Ladder, count: int, seed: np.ndarray, opts: PathOptions,
           started: float) -> Optional[Failure]:
    """Fill the ladder, following the first waypoint's candidates ``beam`` at a time.

    The cheapest group first; the next group only when the path is not complete (the
    layers of the group that reached farthest are kept).  A Failure on timeout.
    """
    ladder.start(seed, opts.num_solutions, opts.start_at_seed)
    best: Tuple[int, list, Optional[Failure]] = (-2, ladder.layers, None)
    for chosen in ladder.groups():
        failure = _follow(ladder, ladder.rewind(chosen), count, seed, opts, started)
        if ladder.reach() > best[0]:
            best = (ladder.reach(), ladder.layers, failure)
        if ladder.reach() == count - 1 or failure is not None:
            break
    ladder.layers = best[1]
    return best[2]


def _follow(ladder: Ladder, layer, count: int, seed: np.ndarray, opts: PathOptions,
            started: float) -> Optional[Failure]:
    """Extend the ladder from ``layer`` until no candidate is live; a Failure on timeout.

    A waypoint that no live branch reaches is bridged (:func:`bridge`: solutions of it
    followed backwards to the ladder), ``opts.bridges`` times at most.
    """
    bridges = opts.bridges

    def expired() -> bool:
        return time.perf_counter() - started > opts.timeout_s
    for i in range(1, count):
        if not len(layer.live):
            return None
        if expired():
            return Failure(f"waypoint {i}: timed out after {opts.timeout_s:g} s")
        layer = ladder.extend(i, opts.recovery_attempts)
        if not len(layer.live) and bridges:
            bridges -= 1
            bridge(ladder, i, seed, opts.start_at_seed, expired)
    return None


def _verified(segments: Segments, q_path: np.ndarray, seed: np.ndarray, opts: PathOptions,
              data) -> Tuple[np.ndarray, np.ndarray, np.ndarray, Failure]:
    """Check the path independently; cut it before the first waypoint that fails.

    Every waypoint by :meth:`Segments.waypoint`, every step against ``max_joint_step``
    (plain differences: exactly what is returned), every segment's interior points.
    """
    errors_m, errors_rad = [], []
    names = segments.group.joint_names
    for i, q in enumerate(q_path):
        previous = q_path[i - 1] if i else (seed if opts.start_at_seed else None)
        failure = Failure("")
        if previous is not None:
            over = np.flatnonzero(np.abs(q - previous) > opts.step)
            if len(over):
                failure = Failure(f"waypoint {i}: joint {names[over[0]]} moves "
                                  f"{abs(q[over[0]] - previous[over[0]]):.3g}, above "
                                  f"max_joint_step {opts.step[over[0]]:.3g}",
                                  joint=names[over[0]])
        if not failure.reason and i:
            failure = segments.segment(i, q_path[i - 1], q, data)
        if not failure.reason:
            pos, ori, failure = segments.waypoint(i, q, data)
            failure = failure._replace(reason=f"waypoint {i}: {failure.reason}") \
                if failure.reason else failure
        if failure.reason:
            return (q_path[:i], np.array(errors_m), np.array(errors_rad), failure)
        errors_m.append(pos)
        errors_rad.append(ori)
    return q_path, np.array(errors_m), np.array(errors_rad), Failure("")


def _result(group: Group, q_path: np.ndarray, errors_m: np.ndarray, errors_rad: np.ndarray,
            count: int, failure: Optional[Failure], elapsed_s: float) -> PathResult:
    m = len(q_path)
    for arr in (q_path, errors_m, errors_rad):
        arr.setflags(write=False)
    failure = failure if m < count and failure is not None else Failure("")
    if m == count:
        status = PathStatus.COMPLETE
    elif "timed out" in failure.reason:
        status = PathStatus.TIMED_OUT
    else:
        status = PathStatus.PARTIAL if m else PathStatus.NO_PATH
    reason = failure.reason or (f"waypoint {m}: not reached" if m < count else "")
    message = reason or f"all {count} waypoints reached"
    return PathResult(q_path=q_path.reshape(m, group.n), joint_names=group.joint_names,
                      status=status, fraction=m / count, position_errors_m=errors_m,
                      orientation_errors_rad=errors_rad, waypoints=count,
                      failed_waypoint=m if m < count else -1,
                      failed_joint=failure.joint, failed_constraint=failure.constraint,
                      message=message, solve_time_s=elapsed_s)
