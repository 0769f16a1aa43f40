"""The one entry point: ``solve(group, target_or_problem, seed, ...) -> IKResult``."""
from __future__ import annotations

import logging
import math
import os
import random
import time
from typing import Callable, Iterable, Optional, Union

import numpy as np

from ros2_ik.core import errors, terms
from ros2_ik.core.constraints.joints import joint_table
from ros2_ik.core.kinematics import reach
from ros2_ik.core.kinematics.frames import frame_table
from ros2_ik.core.kinematics.model import tree_of
from ros2_ik.core.model.group import Group
from ros2_ik.core.pose import UNIT_WEIGHTS, PoseTarget
from ros2_ik.core.problem import Problem
from ros2_ik.core.result import IKResult, Progress
from ros2_ik.core.runtime.per_object import PerObject
from ros2_ik.core.solvers import registry, seed_library
from ros2_ik.core.solvers.base import prepare_proofs
from ros2_ik.core.solvers.options import SolveOptions
from ros2_ik.core.verify import CONSTRAINT_TOLERANCE_M, CONSTRAINT_TOLERANCE_RAD, \
    DEFAULT_TOLERANCE, ConstraintTolerance

_LOG = logging.getLogger(__name__)


def solve(group: Group, target_or_problem: Union[PoseTarget, Problem], seed: np.ndarray,
          solver: str = "lm", timeout_s: float = 0.005, max_attempts: int = 0,
          random_seed: Optional[int] = None,
          constraints: Iterable[terms.Constraint] = (), costs: Iterable[terms.Cost] = (),
          max_joint_jump_rad: float = math.inf, num_solutions: int = 1,
          cancel: Optional[Callable[[], bool]] = None,
          feedback: Optional[Callable[[Progress], None]] = None,
          constraint_tolerance_m: float = CONSTRAINT_TOLERANCE_M,
          constraint_tolerance_rad: float = CONSTRAINT_TOLERANCE_RAD,
          library_starts: int = seed_library.LIBRARY_STARTS) -> IKResult:
    """Solve for group vector ``q`` (shape ``(n,)``, group joint order) from ``seed``.

    Restarts (the seed first, then up to ``library_starts`` configurations of the
    group's sample library whose frame lies nearest to the target (:mod:`seed_library`;
    0: none), then uniform random in the limits) run until
    ``timeout_s`` [s], ``max_attempts`` (0: unlimited) or ``num_solutions`` distinct
    verified solutions.  The same ``random_seed`` gives the same answer (as long as
    the deadline does not cut the search at a different point: fix ``max_attempts``
    for strict reproducibility).  Expected outcomes are statuses; bad input raises
    :mod:`errors`.

    A SUCCESS meets the pose tolerances of the target, the joint limits, and every
    constraint within ``constraint_tolerance_m`` [m] (positions, distances, polyhedra,
    prismatic joint bounds) or ``constraint_tolerance_rad`` [rad] (orientation, gaze and
    angle bounds, revolute joint bounds), measured independently after any wrap or clamp;
    ``IKResult.violations`` reports the figures in those units.

    ``timeout_s`` bounds the search, not the one-time work of a process's first solve
    on a group, frame and solver (loading the compiled kernels, ~0.3-2 s once per
    process; building the seed library, ~25 ms per group and frame): call
    :func:`prepare` at start-up for it.  Without it, ``solve`` does that work first,
    before its clock starts, and logs a warning once when it took longer than
    ``timeout_s``.
    """
    if type(target_or_problem) is PoseTarget and not constraints and not costs \
            and type(constraints) in _EMPTY_OK and type(costs) in _EMPTY_OK \
            and type(num_solutions) is int and num_solutions == 1 \
            and type(max_joint_jump_rad) is float and max_joint_jump_rad == math.inf \
            and target_or_problem.weights is UNIT_WEIGHTS \
            and not target_or_problem.position_only:
        # A plain pose request on a prepared frame: the lean path (:mod:`pose_request`).
        done = _PREPARED.get(group)
        plan = done.get((target_or_problem.frame, False, solver)) if done else None
        # A solver class whose switches changed since prepare(): the driver's path.
        if plan is not None and plan.solver.compiled and plan.solver.closed_form:
            pose = target_or_problem.compile(group)  # its errors, as Problem's
            timeout_s = _positive("timeout_s", timeout_s)
            seed_q = group.clamped_seed(seed)
            options = _options(timeout_s, max_attempts, random_seed, max_joint_jump_rad,
                               num_solutions, cancel, feedback, constraint_tolerance_m,
                               constraint_tolerance_rad, library_starts)
            return _logged(_LEAN.answer(plan, group, pose, seed_q, options), solver)
    problem = _problem(group, target_or_problem, constraints, costs)
    timeout_s = _positive("timeout_s", timeout_s)
    pose = problem.pose
    spent = prepare(group, pose.target.frame if pose is not None else None,
                    bool(problem.constraints), solver)
    if spent > timeout_s:
        _warn_unprepared(group, spent, timeout_s)
    group.full_data()  # this thread's Data of the full model, made once: not on the clock
    seed_q = group.clamped_seed(seed)
    options = _options(timeout_s, max_attempts, random_seed, max_joint_jump_rad, num_solutions,
                       cancel, feedback, constraint_tolerance_m, constraint_tolerance_rad,
                       library_starts)
    return _logged(registry.create(solver).solve(problem, seed_q, options), solver)


#: Types of an empty ``constraints`` or ``costs`` the lean path takes (the node's list).
_EMPTY_OK = (tuple, list)


def _logged(result: IKResult, solver: str) -> IKResult:
    """Return ``result``, logged at debug level."""
    if _LOG.isEnabledFor(logging.DEBUG):
        _LOG.debug("%s: %s in %.3f ms (%d restarts)", solver, result.status.name,
                   result.solve_time_s * 1e3, result.restarts)
    return result


def prepare(group: Group, frame: Optional[str] = None, constrained: bool = False,
            solver: str = "lm") -> float:
    """Do now the one-time work of a first solve, outside any solve's time budget.

    Builds ``group``'s seed library (for ``frame``'s placements when given) and the reach
    bound of ``frame`` (the tip when None; other frames' bounds are built by the first
    solve that needs them), and lets
    ``solver`` load what it compiles (:meth:`~ros2_ik.core.solvers.base.Solver.warm_up`;
    with ``constrained``, what problems with constraints need too: for ``lm``, the
    compiled constraint attempt and polishing model; the model's tables of joints and
    frames that constraints read, :func:`~ros2_ik.core.constraints.joints.joint_table`,
    :func:`~ros2_ik.core.kinematics.frames.frame_table`); with a ``frame``, what solves
    for that frame need (:meth:`~ros2_ik.core.solvers.base.Solver.prepare_frame`: a
    closed form's detection).  Compiling happens once per machine
    (numba's on-disk cache), loading once per process.  Call it at start-up, before the
    first solve whose ``timeout_s`` must hold (the node does, for its default group and
    each configured one); ``solve`` calls it too, before starting its clock, so an unprepared first
    solve is slow but not cut short.  Cheap once done: one lookup, as a solve calls it
    every time.  Returns the time it took [s] (0 when done already).
    """
    done = _PREPARED.get(group)
    key = (frame, constrained, solver)
    if done is not None and key in done:
        return 0.0
    started = time.perf_counter()
    if group.has_base:  # no library for whole-body groups (random starts)
        pass
    elif frame is None:
        seed_library.library(group)
    else:
        seed_library.prepare(group, frame)
    _build_reach_bound(group, frame)
    prepare_proofs()  # the proofs read the bound and the placements
    group.locked_data()  # the proofs read its placements: one forward kinematics
    if constrained:
        tree_of(group)  # the constraint kernels' tree of the model: one Data too
        joint_table(group.robot.model)  # what joint bounds and locks read of each joint
        frame_table(group.robot.model)  # the frame names constraints are given
    solver_class = registry.solver_class(solver)
    solver_class.warm_up(constrained)
    if frame is not None:
        solver_class.prepare_frame(group, frame)
    if done is None:
        done = _PREPARED[group] = {}
    done[key] = _lean().plan(group, frame, solver_class) \
        if frame is not None and not constrained else None
    return time.perf_counter() - started


def _lean():
    """:mod:`pose_request` (the lean path), imported by the first :func:`prepare`.

    Not at ``import ros2_ik.core``: it imports lm and its kernels.  A plan exists only
    once it is imported, so the lean path reads :data:`_LEAN` as it is.
    """
    global _LEAN
    if _LEAN is None:
        from ros2_ik.core.solvers import pose_request
        _LEAN = pose_request
    return _LEAN


_LEAN = None


def _build_reach_bound(group: Group, frame: Optional[str]) -> None:
    """Build the reach bound of ``frame`` (the group's tip when None) [m].

    Every solve's proof (:func:`~ros2_ik.core.solvers.proofs.reach_proof`) reads it;
    unbuilt, it is one-time work inside the first solve's budget.  A whole-body group
    has none: its frame's bound from the base instead (:func:`reach.base_distance_bound`,
    which its pose targets and restarts read).
    """
    try:
        frame_id = group.robot.frame_id(group.tip if frame is None else frame)
    except errors.InvalidFrame:
        return  # the solve answers FRAME_NOT_FOUND
    if group.has_base:
        reach.base_distance_bound(group, frame_id)
    else:
        reach.reach_bound(group, frame_id)


def _warn_unprepared(group: Group, spent_s: float, timeout_s: float) -> None:
    """Log once per process that a solve did its one-time work, beyond its ``timeout_s``."""
    global _WARNED
    if not _WARNED:
        _WARNED = True
        _LOG.warning(
            "the first solve on %r spent %.3f s on one-time work (compiled kernels, seed "
            "library) beyond its timeout_s=%.3g s: call ros2_ik.core.prepare(group, frame, "
            "constrained=..., solver=...) at start-up", group, spent_s, timeout_s)


#: Whether :func:`_warn_unprepared` has warned (once per process).
_WARNED = False


#: Per group, the ``(frame, constrained, solver)`` that :func:`prepare` has done, each
#: with the :class:`~ros2_ik.core.solvers.pose_request.Plan` of plain pose requests on
#: it (None: not lean) (libraries are kept as long as their group, the compiled code as
#: long as the process).
_PREPARED: PerObject = PerObject()


def _problem(group, target_or_problem, constraints, costs) -> Problem:
    if isinstance(target_or_problem, Problem):
        if target_or_problem.group is not group:
            raise errors.InvalidArgument("problem was built for another group")
        if type(constraints) is tuple and not constraints and type(costs) is tuple \
                and not costs:  # the defaults add nothing: no copy, no call
            return target_or_problem
        return target_or_problem.with_terms(constraints, costs)
    if isinstance(target_or_problem, PoseTarget):
        return Problem(group, target_or_problem, constraints, costs)
    raise errors.InvalidGoal(
        f"expected a PoseTarget or a Problem, got {type(target_or_problem).__name__}")


def _options(timeout_s: float, max_attempts: int, random_seed: Optional[int],
             max_joint_jump_rad: float, num_solutions: int, cancel, feedback,
             constraint_tolerance_m: float, constraint_tolerance_rad: float,
             library_starts: int) -> SolveOptions:
    """Return the validated :class:`SolveOptions` (``timeout_s`` validated already).

    Bad values raise :class:`errors.InvalidArgument` naming the argument.
    """
    if type(max_attempts) is int and type(num_solutions) is int \
            and type(library_starts) is int and type(max_joint_jump_rad) is float \
            and max_attempts >= 0 and num_solutions >= 1 and library_starts >= 0 \
            and max_joint_jump_rad > 0.0:  # the usual case: each value as the checks return it
        return SolveOptions(timeout_s, max_attempts, _random_seed(random_seed),
                            max_joint_jump_rad, num_solutions, cancel, feedback,
                            _tolerance(constraint_tolerance_m, constraint_tolerance_rad),
                            library_starts)
    return SolveOptions(
        timeout_s,
        _count("max_attempts", max_attempts, minimum=0),
        _random_seed(random_seed),
        _positive("max_joint_jump_rad", max_joint_jump_rad, allow_inf=True),
        _count("num_solutions", num_solutions, minimum=1),
        cancel, feedback,
        _tolerance(constraint_tolerance_m, constraint_tolerance_rad),
        _count("library_starts", library_starts, minimum=0))


def _positive(name: str, value: float, allow_inf: bool = False) -> float:
    if type(value) is float and 0.0 < value < math.inf:  # the usual case: one comparison
        return value
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise errors.InvalidArgument(f"{name} must be a number, got {value!r}") from None
    if not v > 0 or math.isnan(v) or (math.isinf(v) and not allow_inf):
        raise errors.InvalidArgument(f"{name} must be > 0 and finite, got {value!r}")
    return v


def _tolerance(m: float, rad: float) -> ConstraintTolerance:
    """Return the validated :class:`ConstraintTolerance` of ``m`` [m] and ``rad`` [rad]."""
    if m == CONSTRAINT_TOLERANCE_M and rad == CONSTRAINT_TOLERANCE_RAD \
            and type(m) is float and type(rad) is float:  # the usual case: no new tuple
        return DEFAULT_TOLERANCE
    return ConstraintTolerance(_positive("constraint_tolerance_m", m),
                               _positive("constraint_tolerance_rad", rad))


def _count(name: str, value: int, minimum: int) -> int:
    if type(value) is int and value >= minimum:  # the usual case (bool is not int here)
        return value
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise errors.InvalidArgument(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def _random_seed(value: Optional[int]) -> int:
    if value is None:  # a fresh seed per solve: not a secret, so no system call each time
        return _SEEDS.getrandbits(31)
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise errors.InvalidArgument(f"random_seed must be an integer >= 0, got {value!r}")
    return int(value)


#: Where solves without a ``random_seed`` draw theirs: seeded from the system's entropy,
#: again in every forked child (workers of one pool draw different seeds).
_SEEDS = random.Random()
os.register_at_fork(after_in_child=_SEEDS.seed)
