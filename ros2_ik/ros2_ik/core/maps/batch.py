"""Batch IK: many pose targets of one group, on one process or a pool of processes.

Each target ``i`` gets its own random seed derived from ``(batch_seed, i)`` only, so
the answers do not depend on the number of workers nor on the chunking.  With a
fixed ``max_attempts`` (and a timeout that does not cut the search) the results are
bit-identical whatever ``workers`` is; with a deadline only, a slower machine may
stop a search at another point, as for :func:`solve.solve`.

Worker processes are started with the 'spawn' context (no fork of a process that may
hold threads) and build the robot ONCE from a picklable :class:`GroupSpec`.
"""
from __future__ import annotations

import concurrent.futures as cf
import multiprocessing
import time
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np
import pinocchio as pin

from ros2_ik.core import errors
from ros2_ik.core.closed_form import chain, many
from ros2_ik.core.model import robots
from ros2_ik.core.model.group import Group
from ros2_ik.core.model.joint_limits_yaml import PlanningLimits
from ros2_ik.core.model.robot import Robot
from ros2_ik.core.pose import (ORIENTATION_TOLERANCE_RAD, POSITION_TOLERANCE_M, PoseTarget,
                               rotation_errors)
from ros2_ik.core.problem import Problem
from ros2_ik.core.result import IKResult, IKStatus
from ros2_ik.core.runtime import blas
from ros2_ik.core.solve import prepare, solve
from ros2_ik.core.solvers import before_iterating, registry
from ros2_ik.core.solvers.options import DISTINCT_TOLERANCE, SolveOptions
from ros2_ik.core.solvers.seed_library import LIBRARY_STARTS

#: Status codes of :attr:`BatchResult.status` (index into this tuple).
STATUS_CODES: Tuple[IKStatus, ...] = tuple(IKStatus)
SUCCESS_CODE = STATUS_CODES.index(IKStatus.SUCCESS)


@dataclass(frozen=True)
class GroupSpec:
    """A picklable description of a group: an example-robot-data arm, or URDF text.

    ``arm``: a name of :data:`robots.ARMS` (its usual base and tip unless given);
    else ``urdf`` (XML text, ``srdf`` optional) with ``base`` and ``tip`` frames.
    ``planning_limits``: ``(joint, PlanningLimits)`` pairs, the limits of MoveIt's
    joint_limits.yaml that replace the URDF's (``Robot.from_urdf``'s, on either robot).
    """

    arm: str = ""
    urdf: str = ""
    srdf: str = ""
    base: str = ""
    tip: str = ""
    planning_limits: Tuple[Tuple[str, PlanningLimits], ...] = ()

    def build(self) -> Tuple[Robot, Group]:
        """Return (robot, group); raises :mod:`errors` on an unknown arm or frame."""
        limits = dict(self.planning_limits)
        if self.arm:
            robot = robots.load_arm(self.arm, limits)
            spec = robots.ARMS[self.arm]
            return robot, robot.group(base=self.base or spec.base, tip=self.tip or spec.tip)
        if not self.urdf:
            raise errors.InvalidArgument("group_spec: give 'arm' or 'urdf' (both empty)")
        if not (self.base and self.tip):
            raise errors.InvalidArgument("group_spec: 'base' and 'tip' are required with 'urdf'")
        robot = Robot.from_urdf(self.urdf, self.srdf or None, planning_limits=limits)
        return robot, robot.group(base=self.base, tip=self.tip)


@dataclass(frozen=True)
class ProblemTemplate:
    """One problem per target row: ``build(group, row, **dict(options)) -> Problem``.

    ``build`` must be a module-level function (workers receive it pickled by reference)
    and ``options`` picklable (name, value) pairs; ``row`` is the target's row (k,) of
    the (N, k) array given to :func:`solve_batch` (e.g. a box centre and a direction).
    """

    build: Callable[..., Problem]
    options: Tuple[Tuple[str, Any], ...] = ()

    def problem(self, group: Group, row: np.ndarray) -> Problem:
        """Return the problem of ``row``; InvalidGoal unless ``build`` returns a Problem."""
        problem = self.build(group, row, **dict(self.options))
        if not isinstance(problem, Problem) or problem.group is not group:
            raise errors.InvalidGoal("template: build must return a Problem of the group")
        return problem


@dataclass(frozen=True)
class BatchOptions:
    """Per-target solve settings shared by the whole batch (units in the names)."""

    frame: str
    reference_frame: str
    position_tolerance_m: float = POSITION_TOLERANCE_M
    orientation_tolerance_rad: float = ORIENTATION_TOLERANCE_RAD
    position_only: bool = False
    solver: str = "lm"
    timeout_s: float = 0.005
    max_attempts: int = 0
    library_starts: int = LIBRARY_STARTS
    template: Optional[ProblemTemplate] = None


@dataclass(frozen=True)
class BatchResult:
    """Arrays of a batch, one row per target in input order (read-only).

    ``q`` (N, n) [rad or m] in ``joint_names`` order; ``status`` (N,) int8 indices
    into :data:`STATUS_CODES`; ``position_error_m``, ``orientation_error_rad``,
    ``solve_time_s`` (N,); ``random_seed`` (N,) uint64, the seed each target used;
    ``wall_time_s`` [s] the whole :func:`solve_batch` call (set-up and hand-overs too).
    """

    q: np.ndarray
    status: np.ndarray
    position_error_m: np.ndarray
    orientation_error_rad: np.ndarray
    solve_time_s: np.ndarray
    random_seed: np.ndarray
    joint_names: Tuple[str, ...]
    wall_time_s: float

    @property
    def success(self) -> np.ndarray:
        """(N,) bool: the solver's SUCCESS (verified independently inside solve())."""
        return self.status == SUCCESS_CODE


def _splitmix64(x: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser on uint64 arrays (wrapping arithmetic): a bijective mix."""
    with np.errstate(over="ignore"):
        z = x + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def target_seeds(batch_seed: int, indices: np.ndarray) -> np.ndarray:
    """(len(indices),) uint64 seeds below 2**63, each a function of (batch_seed, index) only.

    Vectorised (SplitMix64 of the index keyed by a mix of the batch seed): one
    ``SeedSequence`` per target cost the caller far more time.
    """
    key = _splitmix64(np.array([batch_seed], dtype=np.uint64))
    mixed = _splitmix64(key ^ _splitmix64(np.asarray(indices, dtype=np.uint64)))
    return mixed >> np.uint64(1)


def _as_poses(targets) -> np.ndarray:
    if isinstance(targets, np.ndarray) or (
            isinstance(targets, Sequence) and targets and not isinstance(targets[0],
                                                                         PoseTarget)):
        T = np.asarray(targets, dtype=float)
    elif isinstance(targets, Sequence) and targets:
        T = np.stack([t.T_ref_target.homogeneous for t in targets])
    else:
        raise errors.InvalidGoal("targets: empty (need at least one pose)")
    if T.ndim != 3 or T.shape[1:] != (4, 4):
        raise errors.InvalidGoal(f"targets: expected shape (N, 4, 4), got {T.shape}")
    if T.shape[0] == 0:
        raise errors.InvalidGoal("targets: empty (need at least one pose)")
    if not np.all(np.isfinite(T)):
        raise errors.InvalidGoal("targets: non-finite values")
    return T


def _options_from(targets, options: BatchOptions) -> BatchOptions:
    """Take frame and tolerances from PoseTarget inputs (they must all agree)."""
    if not (isinstance(targets, Sequence) and targets and isinstance(targets[0], PoseTarget)):
        return options
    first = targets[0]
    keys = ("frame", "reference_frame", "position_tolerance_m", "orientation_tolerance_rad",
            "position_only")
    for k, t in enumerate(targets):
        if not isinstance(t, PoseTarget):
            raise errors.InvalidGoal(f"targets[{k}]: expected a PoseTarget")
        for key in keys:
            if getattr(t, key) != getattr(first, key):
                raise errors.InvalidGoal(f"targets[{k}].{key}: differs from targets[0]")
    return BatchOptions(**{**options.__dict__, **{key: getattr(first, key) for key in keys}})


def _seeds(group: Group, seed: Optional[np.ndarray], count: int) -> np.ndarray:
    if seed is None:
        return np.tile(group.mid_configuration(), (count, 1))
    arr = np.asarray(seed, dtype=float)
    if arr.ndim == 1:
        return np.tile(group.check_vector(arr, "seed"), (count, 1))
    if arr.shape != (count, group.n):
        raise errors.InvalidSeed(f"seed: expected shape ({group.n},) or ({count}, {group.n}),"
                                 f" got {arr.shape}")
    return np.stack([group.check_vector(s, f"seed[{k}]") for k, s in enumerate(arr)])


_WORKER: Dict[GroupSpec, Group] = {}


def worker_group(spec: GroupSpec) -> Group:
    """Return the group of this process, built once per spec."""
    if spec not in _WORKER:
        _WORKER[spec] = spec.build()[1]
    return _WORKER[spec]


def solve_chunk(spec: GroupSpec, options: BatchOptions, T: np.ndarray, seeds: np.ndarray,
                random_seeds: np.ndarray) -> Tuple[np.ndarray, ...]:
    """Solve rows of one chunk; returns (q, status, pos_err, ori_err, time) arrays."""
    group = worker_group(spec)
    prepare(group, options.frame, options.template is not None, options.solver)
    count = len(T)
    q = np.empty((count, group.n))
    status = np.empty(count, dtype=np.int8)
    errs = np.empty((3, count))
    with blas.single_threaded():  # two workers' BLAS threads would fight for the cores
        rest = _closed_form_rows(group, options, T, seeds, q, status, errs)
        for k in rest:
            _solve_row(group, options, T[k], seeds[k], int(random_seeds[k]), q[k:k + 1],
                       status[k:k + 1], errs[:, k])
    return q, status, errs[0], errs[1], errs[2]


def _closed_form_rows(group: Group, options: BatchOptions, T: np.ndarray, seeds: np.ndarray,
                      q: np.ndarray, status: np.ndarray, errs: np.ndarray) -> List[int]:
    """Fill the rows a closed form answers at once (:mod:`closed_form.many`); the others.

    Pose targets on every axis, for a solver that takes closed forms, on a chain that has
    one: each row's answer is :func:`solve`'s (the verified branch nearest its seed);
    the rows it does not verify (and rows that are not rotations, which raise there) go
    through :func:`_solve_row`.  The answered rows share their pass's time equally.
    """
    everything = list(range(len(T)))
    solver = _closed_form_solver(options.solver)
    if options.template is not None or options.position_only or solver is None or \
            not solver.closed_form:
        return everything
    frame_id = group.robot.frame_id(options.frame)
    solver_form = chain.of(group, frame_id)
    if solver_form is None:
        return everything
    start = time.perf_counter()
    rotations = rotation_errors(T)
    fast = np.flatnonzero((rotations >= 0) & (rotations <= 1e-6))
    T_world = T[fast]
    if options.reference_frame:
        T_world = group.locked_placement(
            group.robot.frame_id(options.reference_frame)).homogeneous @ T_world
    lower, upper = group.lower, group.upper
    answers = many.solve_many(group, frame_id, solver_form, T_world,
                              np.minimum(np.maximum(seeds[fast], lower), upper),
                              options.position_tolerance_m, options.orientation_tolerance_rad)
    done = fast[answers.verified]
    q[done] = answers.q[answers.verified]
    status[done] = SUCCESS_CODE
    errs[0, done] = answers.position_error_m[answers.verified]
    errs[1, done] = answers.orientation_error_rad[answers.verified]
    errs[2, done] = (time.perf_counter() - start) / max(len(done), 1)
    answered = set(done.tolist())
    return [k for k in everything if k not in answered]


def _solve_row(group, options, T, seed, random_seed, q_out, status_out, errs_out) -> None:
    r = None
    if options.template is not None:
        target = options.template.problem(group, T)
    else:
        target = PoseTarget(options.frame, pin.SE3(T), options.reference_frame,
                            position_tolerance_m=options.position_tolerance_m,
                            orientation_tolerance_rad=options.orientation_tolerance_rad,
                            position_only=options.position_only)
        r = _answered(group, options, target, seed, random_seed)
    if r is None:
        r = solve(group, target, seed, solver=options.solver, timeout_s=options.timeout_s,
                  max_attempts=options.max_attempts, random_seed=random_seed,
                  library_starts=options.library_starts)
    q_out[0] = r.q
    status_out[0] = STATUS_CODES.index(r.status)
    errs_out[:] = (r.position_error_m, r.orientation_error_rad, r.solve_time_s)


def _answered(group: Group, options: BatchOptions, target: PoseTarget, seed: np.ndarray,
              random_seed: int) -> Optional[IKResult]:
    """Return the answer :func:`solve` would give before iterating, or None.

    A closed form's answer (exact, or a proof).

    Without :func:`solve`'s per-call set-up (done once per chunk): the result of
    :func:`before_iterating.answer`, verified there as in every solve; None when the
    solver takes no closed form or the answer needs the search (``solve`` then).
    """
    solver = _closed_form_solver(options.solver)
    if solver is None or not solver.closed_form or target.position_only:
        return None
    answer = before_iterating.answer(
        solver, Problem(group, target), group.clamped_seed(seed),
        SolveOptions(timeout_s=options.timeout_s, max_attempts=options.max_attempts,
                     random_seed=random_seed, library_starts=options.library_starts),
        DISTINCT_TOLERANCE)
    return answer if isinstance(answer, IKResult) else None


def _closed_form_solver(name: str):
    """Return an instance of solver ``name`` (cached) if it may take closed forms, else None."""
    if name not in _CLOSED_FORM_SOLVERS:
        cls = registry.solver_class(name)
        _CLOSED_FORM_SOLVERS[name] = cls() if hasattr(cls, "closed_form") else None
    return _CLOSED_FORM_SOLVERS[name]


_CLOSED_FORM_SOLVERS: Dict[str, Any] = {}


#: Smallest chunk of the guided schedule (the last chunks of a multi-worker batch).
MIN_CHUNK = 16


def _chunks(count: int, chunk_size: int, workers: int = 1) -> List[slice]:
    """Slices of ``count`` targets: ``chunk_size`` each, guided down at the end.

    With several workers a chunk holds at most a ``2 * workers``-th of what is left (not
    under ``MIN_CHUNK``), so the workers finish within a small chunk of each other instead
    of one waiting for the other's last full chunk.  Answers do not depend on it.
    """
    out, a = [], 0
    while a < count:
        size = chunk_size if workers == 1 else max(
            min(MIN_CHUNK, chunk_size), min(chunk_size, -(-(count - a) // (2 * workers))))
        out.append(slice(a, min(a + size, count)))
        a += size
    return out


def worker_pool(spec: GroupSpec, workers: int) -> cf.ProcessPoolExecutor:
    """Return a pool of ``workers`` spawned processes, each holding ``spec``'s group.

    Pass it as ``executor`` to several :func:`solve_batch` calls to start the
    processes once (use it as a context manager to shut it down).
    """
    return cf.ProcessPoolExecutor(max_workers=workers,
                                  mp_context=multiprocessing.get_context("spawn"),
                                  initializer=worker_group, initargs=(spec,))


def _run_local(spec, options, T, seeds, rseeds, workers, chunk_size, executor) -> List[Tuple]:
    # A caller's pool may hold more workers than ``workers`` says (its default is 1).
    pool_size = getattr(executor, "_max_workers", workers) if executor is not None else 1
    parts = _chunks(len(T), chunk_size, max(workers, pool_size))
    if workers == 1 and executor is None:
        return [solve_chunk(spec, options, T[s], seeds[s], rseeds[s]) for s in parts]
    if executor is not None:
        return _submit(executor, spec, options, T, seeds, rseeds, parts)
    with worker_pool(spec, workers) as pool:
        return _submit(pool, spec, options, T, seeds, rseeds, parts)


def _submit(pool, spec, options, T, seeds, rseeds, parts) -> List[Tuple]:
    futures = [pool.submit(solve_chunk, spec, options, T[s], seeds[s], rseeds[s])
               for s in parts]
    return [f.result() for f in futures]


def solve_batch(group_spec: GroupSpec, targets: Union[np.ndarray, Sequence[PoseTarget]],
                seed: Optional[np.ndarray] = None, timeout_s: float = 0.005,
                batch_seed: int = 0, workers: int = 1, chunk_size: int = 256,
                frame: str = "", reference_frame: Optional[str] = None,
                position_tolerance_m: float = POSITION_TOLERANCE_M,
                orientation_tolerance_rad: float = ORIENTATION_TOLERANCE_RAD,
                position_only: bool = False, solver: str = "lm", max_attempts: int = 0,
                library_starts: int = LIBRARY_STARTS, first_index: int = 0,
                executor: Optional[cf.Executor] = None, use_ray: bool = False,
                ray_address: Optional[str] = None,
                template: Optional[ProblemTemplate] = None) -> BatchResult:
    """Solve ``targets`` (``T_ref_target`` as (N, 4, 4), or PoseTargets of one frame).

    ``frame`` defaults to the group's tip, ``reference_frame`` to its base.  ``seed``
    (n,) for all targets or (N, n); None: mid-limits.  ``workers`` > 1 runs chunks of
    up to ``chunk_size`` targets on that many spawned processes (enough solves that the
    hand-offs cost little; the last chunks shrink so the workers finish together).
    Bad input raises :mod:`errors` naming the field; expected outcomes are per-target
    statuses.
    Target ``k`` uses the seed of index ``first_index + k`` (a caller splitting one
    batch into several calls passes the offset and gets the same answers).
    ``executor`` (e.g. :func:`worker_pool`) runs the chunks instead of a new pool.
    ``use_ray`` or a ``ray_address`` runs them on ``workers`` Ray actors instead
    (:mod:`batch_ray`; same chunks and seeds, so the same answers).  With a
    ``template`` (:class:`ProblemTemplate`), ``targets`` is an (N, k) array of rows, each
    made a constraint problem by the template (pose errors NaN without a pose target).
    """
    start = time.perf_counter()  # the caller's whole wait counts
    if not isinstance(workers, int) or workers < 1:
        raise errors.InvalidArgument(f"workers: must be an integer >= 1, got {workers!r}")
    if not isinstance(chunk_size, int) or chunk_size < 1:
        raise errors.InvalidArgument(f"chunk_size: must be an integer >= 1, got {chunk_size!r}")
    if isinstance(batch_seed, bool) or not isinstance(batch_seed, (int, np.integer)) or \
            not 0 <= batch_seed < 2 ** 64:
        raise errors.InvalidArgument(f"batch_seed: must be an integer in [0, 2**64), got "
                                     f"{batch_seed!r}")
    T = _as_poses(targets) if template is None else _as_rows(targets)
    group = worker_group(group_spec)
    options = _options_from(targets, BatchOptions(
        frame or group.tip, group.base if reference_frame is None else reference_frame,
        position_tolerance_m, orientation_tolerance_rad, position_only, solver, timeout_s,
        max_attempts, library_starts, template))
    prepare(group, options.frame, template is not None, solver)  # outside the first budget
    _validate_once(group, options, T[0])
    seeds = _seeds(group, seed, len(T))
    rseeds = target_seeds(batch_seed, first_index + np.arange(len(T)))
    if use_ray or ray_address:
        from ros2_ik.core.maps.batch_ray import run_ray
        parts = run_ray(group_spec, options, T, seeds, rseeds,
                        _chunks(len(T), chunk_size, workers), workers, ray_address,
                        (worker_group, solve_chunk))
    else:
        parts = _run_local(group_spec, options, T, seeds, rseeds, workers, chunk_size,
                           executor)
    wall = time.perf_counter() - start
    arrays = [np.concatenate([p[k] for p in parts]) for k in range(5)]
    for a in arrays:
        a.setflags(write=False)
    rseeds.setflags(write=False)
    return BatchResult(*arrays, rseeds, tuple(group.joint_names), wall)


def _as_rows(targets) -> np.ndarray:
    """Template rows as a finite (N, k) array (InvalidGoal naming ``targets``)."""
    try:
        rows = np.asarray(targets, dtype=float)
    except (TypeError, ValueError):
        raise errors.InvalidGoal("targets: expected an (N, k) array of template rows") from None
    if rows.ndim != 2 or rows.shape[0] == 0:
        raise errors.InvalidGoal(f"targets: expected a non-empty (N, k) array, got "
                                 f"shape {rows.shape}")
    if not np.all(np.isfinite(rows)):
        raise errors.InvalidGoal("targets: non-finite values")
    return rows


def _validate_once(group: Group, options: BatchOptions, T0: np.ndarray) -> None:
    """Raise in the caller (not in a worker) on a bad frame, solver, tolerance or template."""
    target = options.template.problem(group, T0) if options.template is not None else \
        PoseTarget(options.frame, pin.SE3(T0), options.reference_frame,
                   position_tolerance_m=options.position_tolerance_m,
                   orientation_tolerance_rad=options.orientation_tolerance_rad,
                   position_only=options.position_only)
    solve(group, target, group.mid_configuration(), solver=options.solver,
          timeout_s=options.timeout_s, max_attempts=1, random_seed=0, library_starts=0)
