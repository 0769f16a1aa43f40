"""The value types of one solve: its options, an attempt's end, a solve begun early.

Read by the solvers, the restart search (:mod:`.search`), the lean paths
(:mod:`.pose_request`, :mod:`.seed_request`) and batch IK.
"""
from __future__ import annotations

import math
from typing import Any, Callable, NamedTuple, Optional

import numpy as np

from ros2_ik.core.result import Progress
from ros2_ik.core.verify import DEFAULT_TOLERANCE, ConstraintTolerance


#: Two solutions are distinct when some joint differs by more than this [rad or m].
DISTINCT_TOLERANCE = 1e-2


class SolveOptions(NamedTuple):
    """Knobs of one solve (see :func:`ros2_ik.core.solve.solve`).

    Immutable; a named tuple rather than a frozen dataclass: made once per request, and
    cheaper to make (a frozen dataclass sets each field through ``object.__setattr__``).
    """

    timeout_s: float = 0.005
    max_attempts: int = 0
    random_seed: int = 0
    max_joint_jump_rad: float = math.inf
    num_solutions: int = 1
    cancel: Optional[Callable[[], bool]] = None
    feedback: Optional[Callable[[Progress], None]] = None
    constraint_tolerance: ConstraintTolerance = DEFAULT_TOLERANCE
    library_starts: int = 32


class Begun(NamedTuple):
    """A solve whose first attempt, from the seed, was made before the driver started.

    ``start``: when the solve began (``time.perf_counter()``); ``state``: the solver's
    :meth:`~ros2_ik.core.solvers.base.Solver.setup` state; ``local``: the attempt's end.
    The driver counts the attempt and goes on from the next start.
    """

    start: float
    state: Any
    local: "LocalResult"


class LocalResult(NamedTuple):
    """End of one attempt: group vector ``q`` (n,), iterations, and the solver's view.

    ``converged`` False lets the driver skip the independent check (the candidate is
    only kept as best available, ranked by ``merit``, lower is better); True asks
    for the check.  ``merit`` is the solver's own error measure (any unit).
    """

    q: np.ndarray
    iterations: int
    converged: bool = True
    merit: float = math.inf
