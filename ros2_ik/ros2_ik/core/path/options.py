"""The knobs of :func:`ros2_ik.core.path.solve_path`, validated into one frozen record.

Bad values raise :class:`ros2_ik.core.errors.InvalidArgument` (or ``InvalidGoal`` for the
waypoints) naming the field.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import List, Sequence, Tuple

import numpy as np

from ros2_ik.core import errors
from ros2_ik.core.model.group import Group
from ros2_ik.core.pose import PoseTarget
from ros2_ik.core.problem import Problem
from ros2_ik.core.verify import ConstraintTolerance

#: Distinct branches sampled at the first waypoint (``num_solutions``).
DEFAULT_BRANCHES = 8
#: Branches followed at once: the cheapest ``BEAM`` first, the next ones only when those
#: do not reach the end.
BEAM = 4


@dataclass(frozen=True)
class PathOptions:
    """Knobs of :func:`solve_path` (see there); validated by :func:`path_options`."""

    step: np.ndarray
    start_at_seed: bool = False
    path_tolerance_m: float = 1e-3
    path_tolerance_rad: float = 1e-2
    check_step_m: float = 5e-3
    check_step_rad: float = 5e-2
    num_solutions: int = DEFAULT_BRANCHES
    beam: int = BEAM
    recovery_attempts: int = 16
    bridges: int = 2
    #: Restarts that sample a waypoint anywhere in the limits (layer 0) when fewer than
    #: ``num_solutions`` distinct solutions exist.  Counts, not a clock: a path's answer
    #: must not depend on the machine's load (``timeout_s`` is the path's only clock).
    start_attempts: int = 400
    timeout_s: float = math.inf
    solver: str = "lm"
    random_seed: int = 0
    tolerance: ConstraintTolerance = ConstraintTolerance()


def path_options(group: Group, seed, max_joint_step, start_at_seed, path_tolerance_m,
                 path_tolerance_rad, check_step_m, check_step_rad, num_solutions, timeout_s,
                 solver, random_seed, constraint_tolerance_m, constraint_tolerance_rad
                 ) -> PathOptions:
    """Validate the knobs (raises :class:`errors.InvalidArgument` naming the field)."""
    group.check_vector(seed, "seed")
    for name, value in (("path_tolerance_m", path_tolerance_m),
                        ("path_tolerance_rad", path_tolerance_rad),
                        ("check_step_m", check_step_m), ("check_step_rad", check_step_rad),
                        ("constraint_tolerance_m", constraint_tolerance_m),
                        ("constraint_tolerance_rad", constraint_tolerance_rad)):
        _positive(name, value)
    if not (timeout_s == math.inf or _positive("timeout_s", timeout_s)):
        raise errors.InvalidArgument(f"timeout_s must be > 0, got {timeout_s!r}")
    if isinstance(num_solutions, bool) or not isinstance(num_solutions, int) \
            or num_solutions < 1:
        raise errors.InvalidArgument(f"num_solutions must be an integer >= 1, "
                                     f"got {num_solutions!r}")
    return PathOptions(
        step=joint_steps(group, max_joint_step), start_at_seed=bool(start_at_seed),
        path_tolerance_m=float(path_tolerance_m), path_tolerance_rad=float(path_tolerance_rad),
        check_step_m=float(check_step_m), check_step_rad=float(check_step_rad),
        num_solutions=num_solutions, beam=min(num_solutions, BEAM), timeout_s=float(timeout_s),
        solver=solver, random_seed=int(random_seed),
        tolerance=ConstraintTolerance(float(constraint_tolerance_m),
                                      float(constraint_tolerance_rad)))


def joint_steps(group: Group, max_joint_step) -> np.ndarray:
    """``max_joint_step`` as (n,) [rad or m]: one value for all joints or one per joint."""
    try:
        step = np.array(max_joint_step, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise errors.InvalidArgument(
            f"max_joint_step must be numbers, got {max_joint_step!r}") from None
    if step.size == 1:
        step = np.full(group.n, step[0])
    if step.shape != (group.n,) or not np.all(np.isfinite(step)) or not np.all(step > 0):
        raise errors.InvalidArgument(
            f"max_joint_step must be one value or {group.n} (one per joint "
            f"{list(group.joint_names)}), each > 0 and finite [rad or m], got "
            f"{np.asarray(max_joint_step).tolist()}")
    step.setflags(write=False)
    return step


def _positive(name: str, value) -> bool:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating)) \
            or not 0 < value < math.inf:
        raise errors.InvalidArgument(f"{name} must be > 0 and finite, got {value!r}")
    return True


def waypoint_targets(waypoints: Sequence[PoseTarget]) -> Tuple[PoseTarget, ...]:
    """Return the waypoints as a tuple of pose targets (at least one)."""
    targets = tuple(waypoints)
    if not targets:
        raise errors.InvalidGoal("waypoints: empty path (give at least one pose)")
    for k, target in enumerate(targets):
        if not isinstance(target, PoseTarget):
            raise errors.InvalidGoal(f"waypoints[{k}] must be a PoseTarget, got "
                                     f"{type(target).__name__}")
    return targets


def waypoint_problems(group: Group, targets: Sequence[PoseTarget], constraints
                      ) -> List[Problem]:
    """One :class:`Problem` per waypoint; an unknown frame is named by its field.

    Raises :class:`errors.InvalidFrame` with the argument ``waypoints[k].frame`` or
    ``waypoints[k].reference_frame``.
    """
    problems = []
    for k, target in enumerate(targets):
        try:
            problems.append(Problem(group, target, constraints))
        except errors.InvalidFrame as e:
            field = "frame" if e.name == target.frame else "reference_frame"
            raise errors.InvalidFrame(e.name, e.valid, f"waypoints[{k}].{field}") from None
    return problems
