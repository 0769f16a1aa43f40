"""Whether a joint-linear move keeps clear: the motion an executed solution makes.

A controller reaching one configuration from another (a one-point trajectory: every joint
on the same time law) moves the arm along the straight segment between them in joint
space, ``q(t) = q_from + t (q_to - q_from)``, ``t`` in [0, 1].  Allowed along it: the
clearance, or the distance at ``q_from`` less :data:`SLACK` when that is smaller (an arm
that starts close may move away, not closer).  :func:`first_contact` checks the segment
by conservative advancement: at ``t`` every pair's signed padded distance ``d_AB`` is
known (exactly, or by a lower bound when that suffices), and no pair can close faster
than its speed bound ``M_AB`` [m per move] (:mod:`.motion_speeds`), so pair AB stays
above ``allowed - TOLERANCE_M`` until ``t + (d_AB - allowed + TOLERANCE_M) / M_AB``; the
next check is at the smallest of those times, and the end, ``t = 1``, is checked too.

What is proven, for a move it lets through: at every check no pair is closer than
``allowed``, and between the checks no point of the arm comes closer than ``allowed -``
:data:`TOLERANCE_M` to the scene or the rest of the robot (padded geometry, coal's
distances to their GJK tolerance, 1e-8 m).  A move that dips below ``allowed`` by less
than the tolerance may pass; one that dips deeper never does.  Pairs that do not move
relative to each other (links above every moving joint, a world object near them)
impose no step, whatever their distance.

Cost: each step is at least ``TOLERANCE_M / M`` (M: the fastest pair's speed), so a
move grazing ``allowed`` all the way takes at most ``M / TOLERANCE_M`` checks (1,000 for a
point 1 m from a joint turning 0.5 rad); one keeping centimetres away takes a few tens
(docs/reference.md).  After :data:`MAX_EVALUATIONS` checks the move is refused (a
:class:`Contact` at the fraction reached, ``unproven``), never waited on.
"""
from __future__ import annotations

from typing import NamedTuple, Optional, Tuple

import numpy as np
import pinocchio as pin

from .checker import CollisionChecker, DistanceReport, PairDistances
from .compiled import CompiledScene
from .motion_speeds import motion_speeds

#: How much closer than ``allowed`` a move may come between two checks [m]: each step is
#: at least this over the fastest pair's speed, so grazing ``allowed`` cannot stall.
TOLERANCE_M = 5e-4
#: How much closer than it started an arm already inside its clearance may come [m]: the
#: distance queries' noise (a rigid motion of the whole arm moves self distances ~1e-17).
SLACK = 1e-4
#: Checks (configurations whose distances are computed) after which a move is refused.
MAX_EVALUATIONS = 2000
_BATCH = 8  # pairs computed exactly before the bounds prune the rest (as nearest_from_data)


class Contact(NamedTuple):
    """The first check of a move closer than allowed (or where too many checks stopped it)."""

    fraction: float  # of the move, in [0, 1]
    report: DistanceReport  # its closest pair, signed padded distance [m]
    #: True when the checks ran out (:data:`MAX_EVALUATIONS`) before the move was proven
    #: clear: the report is the closest pair where they stopped, not a contact.
    unproven: bool = False


class Sweep(NamedTuple):
    """A move's check: its first contact (None: clear) and what it cost."""

    contact: Optional[Contact]
    evaluations: int  # configurations whose distances were computed, the start included


def first_contact(checker: CollisionChecker, group, q_from: np.ndarray, q_to: np.ndarray,
                  clearance_m: float) -> Optional[Contact]:
    """Return the first check of ``q_from -> q_to`` (group vectors) nearer than allowed.

    Allowed: ``clearance_m`` [m], or the distance at ``q_from`` less :data:`SLACK` when
    that is smaller (an arm that starts close may move away, not closer).  None when the
    move is proven clear (module docstring); see :func:`sweep`.
    """
    return sweep(checker, group, q_from, q_to, clearance_m).contact


def sweep(checker: CollisionChecker, group, q_from: np.ndarray, q_to: np.ndarray,
          clearance_m: float, max_evaluations: int = MAX_EVALUATIONS) -> Sweep:
    """Check the move ``q_from -> q_to`` by conservative advancement (module docstring).

    After ``max_evaluations`` checks without an answer, the move is refused: a Contact at
    the fraction reached, with the closest pair there.  InvalidArgument for a whole-body
    group.
    """
    q_from, q_to = np.asarray(q_from, dtype=float), np.asarray(q_to, dtype=float)
    model = checker.model
    data = model.createData()
    pin.forwardKinematics(model, data, group.to_full_q(q_from))
    pairs, k = checker.nearest_from_data(data)
    if k < 0:  # no pair to check
        return Sweep(None, 1)
    allowed = min(clearance_m, float(pairs.distances_m[k]) - SLACK)
    speeds = _Speeds(model, data, group, q_from, q_to)
    t, evaluations = 0.0, 1
    while True:
        pairs, step = _check(checker, data, speeds, allowed, 1.0 - t)
        if not pairs.compiled.num_pairs:  # a scene version since the start, with none
            return Sweep(None, evaluations)
        k = int(np.argmin(pairs.distances_m))  # a NaN (coal failed) first
        if not pairs.distances_m[k] >= allowed:
            return Sweep(Contact(t, pairs.report(k)), evaluations)
        if t >= 1.0:
            return Sweep(None, evaluations)
        if evaluations >= max_evaluations:
            return Sweep(Contact(t, pairs.report(k), unproven=True), evaluations)
        t, evaluations = min(1.0, t + step), evaluations + 1
        pin.forwardKinematics(model, data, group.to_full_q(q_from + t * (q_to - q_from)))


class _Speeds:
    """Each pair's speed on one move (:func:`.motion_speeds.motion_speeds`), per scene version.

    Computed again when a check reads a newer version of the scene than the last.
    """

    def __init__(self, model: pin.Model, data: pin.Data, group, q_from: np.ndarray,
                 q_to: np.ndarray):
        self._move = (model, data, group, q_from, q_to)
        self._compiled: Optional[CompiledScene] = None
        self._pair_m = np.zeros(0)

    def of(self, compiled: CompiledScene) -> np.ndarray:
        """Return each pair's speed (P,) [m per move] in ``compiled``."""
        if compiled is not self._compiled:
            model, data, group, q_from, q_to = self._move
            self._pair_m = motion_speeds(model, data, compiled, group, q_from, q_to).pair_m
            self._compiled = compiled
        return self._pair_m


def _times(distances_m: np.ndarray, speeds_m: np.ndarray, barrier_m: float) -> np.ndarray:
    """Fractions of the move (k,) each pair needs to reach ``barrier_m``; inf when it is still."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(speeds_m > 0.0, (distances_m - barrier_m) / speeds_m, np.inf)


def _check(checker: CollisionChecker, data: pin.Data, speeds: _Speeds, allowed_m: float,
           horizon: float) -> Tuple[PairDistances, float]:
    """Distances at ``data`` and the step [fraction of the move] they prove safe.

    Every pair that may be nearer than ``allowed_m`` is computed exactly; then, soonest
    first by their lower bounds, the pairs that could limit the step below ``horizon``
    (the rest of the move).  Precondition: ``data.oMi`` (forward kinematics).
    """
    pairs = checker.distances_from_data(data, allowed_m)
    if horizon <= 0.0 or not pairs.compiled.num_pairs:
        return pairs, horizon
    rates = speeds.of(pairs.compiled)
    known = np.isfinite(pairs.distances_m)
    barrier = allowed_m - TOLERANCE_M
    times = _times(np.where(known, pairs.distances_m,
                            checker.padded_lower_bounds(pairs.compiled, data)), rates, barrier)
    step = min(horizon, float(times[known].min(initial=np.inf)))
    rest = np.flatnonzero(~known & (times < step))
    rest = rest[np.argsort(times[rest])]
    for batch in (rest[:_BATCH], rest[_BATCH:]):
        batch = batch[times[batch] < step]
        checker.compute_pairs(pairs, batch)
        times[batch] = _times(pairs.distances_m[batch], rates[batch], barrier)
        step = min(step, float(times[batch].min(initial=np.inf)))
    return pairs, step
