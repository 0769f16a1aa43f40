"""Frozen results of a solve: status, configuration, errors, ranked solutions."""
from __future__ import annotations

import enum
import math
from dataclasses import dataclass
from typing import Optional, Tuple

import numpy as np


class IKStatus(enum.Enum):
    """Outcome of a solve.  Bad input never gets a status: it raises (errors.py).

    SUCCESS: ``q`` meets the pose tolerances, every constraint and the joint limits
    (checked independently after any wrap or clamp).
    NO_SOLUTION: the search ended (timeout or ``max_attempts``) without success, or a
    proof showed before the search that none exists (a target beyond the reach bound,
    :mod:`ros2_ik.core.solvers.proofs`: the message gives the reason, after one attempt
    from the seed); ``q`` is the best available candidate (inside limits, errors
    reported).
    TIMED_OUT: the budget ran out before any candidate was evaluated; ``q`` is the seed.
    CANCELLED: the ``cancel`` callback asked to stop; ``q`` is the best so far.
    JUMP_TOO_LARGE: solutions were found but all move a joint farther from the seed
    than ``max_joint_jump_rad``; ``q`` is the nearest of them.
    INVALID: a solver plugin returned a non-finite or malformed configuration.
    """

    SUCCESS = "success"
    NO_SOLUTION = "no_solution"
    TIMED_OUT = "timed_out"
    CANCELLED = "cancelled"
    JUMP_TOO_LARGE = "jump_too_large"
    INVALID = "invalid"


_F64 = np.dtype(float)


def _frozen(values) -> np.ndarray:
    if type(values) is np.ndarray and values.dtype is _F64 and not values.flags.writeable:
        return values  # read-only already: nobody can change it (a solution's q)
    arr = np.array(values, dtype=float)
    arr.setflags(write=False)
    return arr


@dataclass(frozen=True, init=False)
class Solution:
    """One verified solution: group vector ``q`` and its pose errors (nan: no pose target)."""

    q: np.ndarray
    position_error_m: float
    orientation_error_rad: float
    distance_to_seed: float

    def __init__(self, q: np.ndarray, position_error_m: float, orientation_error_rad: float,
                 distance_to_seed: float):
        """Store a read-only copy of ``q`` and the figures.

        One update of the instance's dict: the frozen dataclass's own ``__init__`` calls
        ``object.__setattr__`` per field, dearer on every solve.
        """
        self.__dict__.update(q=_frozen(q), position_error_m=position_error_m,
                             orientation_error_rad=orientation_error_rad,
                             distance_to_seed=distance_to_seed)


@dataclass(frozen=True)
class Progress:
    """Feedback during a solve (passed to the ``feedback`` callback)."""

    elapsed_s: float
    restarts: int
    iterations: int
    best_position_error_m: float
    best_orientation_error_rad: float
    solutions_found: int
    #: The best candidate so far (group vector, read-only) or None before the first.
    best_q: Optional[np.ndarray] = None
    #: Its largest constraint violation (constraint units; 0 when it meets them all) and
    #: the problem's costs summed there (0 without costs).
    best_violation: float = math.nan
    best_cost: float = math.nan


@dataclass(frozen=True, init=False)
class IKResult:
    """What a solve returns.  ``q`` is a read-only group vector in ``joint_names`` order.

    ``position_error_m`` / ``orientation_error_rad`` are nan for a problem without a pose
    target (constraints only); ``violations`` then says what is wrong with ``q``.
    """

    q: np.ndarray
    joint_names: Tuple[str, ...]
    status: IKStatus
    iterations: int
    restarts: int
    position_error_m: float
    orientation_error_rad: float
    solve_time_s: float
    random_seed: int
    #: (name, amount, unit) of each violated constraint, amount in [m] or [rad].
    violations: Tuple[Tuple[str, float, str], ...] = ()
    solutions: Tuple[Solution, ...] = ()
    message: str = ""
    solver: str = ""

    def __init__(self, q: np.ndarray, joint_names: Tuple[str, ...], status: IKStatus,
                 iterations: int, restarts: int, position_error_m: float,
                 orientation_error_rad: float, solve_time_s: float, random_seed: int,
                 violations: Tuple[Tuple[str, float, str], ...] = (),
                 solutions: Tuple[Solution, ...] = (), message: str = "", solver: str = ""):
        """Store a read-only copy of ``q`` and the rest (one dict update, as Solution's).

        The first solution's ``q`` (a SUCCESS's) is read-only already: kept as it is.
        """
        self.__dict__.update(
            q=q if solutions and type(solutions[0]) is Solution and q is solutions[0].q
            else _frozen(q), joint_names=joint_names, status=status, iterations=iterations,
            restarts=restarts, position_error_m=position_error_m,
            orientation_error_rad=orientation_error_rad, solve_time_s=solve_time_s,
            random_seed=random_seed, violations=violations, solutions=solutions,
            message=message, solver=solver)

    @property
    def success(self) -> bool:
        """True when ``status`` is SUCCESS."""
        return self.status is IKStatus.SUCCESS
