"""Timing a joint path within velocity and acceleration limits, as a controller draws it.

A JointTrajectoryController joins the points of a JointTrajectory by cubic Hermites
through their positions and velocities.  :func:`path_times` times the points (and
:func:`point_velocities` gives their velocities: Fritsch-Carlson, no overshoot) so that on
those cubics no joint passes its scaled velocity and acceleration limits; the cubics' own
accelerations are :func:`cubic_end_accelerations`.  Points that carry accelerations too are
joined by quintics: one step from rest to rest is timed by :func:`rest_to_rest_s`.  Joint
units: [rad] or [m], times [s].
"""
from __future__ import annotations

from typing import Optional, Tuple

import numpy as np

#: Peak over mean velocity of the move a one-point trajectory makes: its point has
#: positions and zero velocities, which a JointTrajectoryController interpolates from the
#: arm's state at rest by a cubic, ``3 tau^2 - 2 tau^3`` of the distance at ``tau = t / T``,
#: whose velocity peaks at mid-time at 1.5 times the mean.
CUBIC_PEAK = 1.5
#: Peak acceleration of that cubic over its move / T^2 (at its ends).
CUBIC_PEAK_ACCELERATION = 6.0
#: Peak over mean velocity of a quintic from rest to rest (positions, zero velocities and
#: accelerations at both ends: ``10 tau^3 - 15 tau^4 + 6 tau^5``), at mid-time.
QUINTIC_PEAK = 1.875


def rest_to_rest_s(step: np.ndarray, velocity_limits: np.ndarray, scaling: float,
                   acceleration_limits: Optional[np.ndarray] = None,
                   acceleration_scaling: float = 1.0, minimum_s: float = 0.0) -> float:
    """Duration [s] of one ``step`` (n,) from rest to rest within the scaled limits.

    Drawn as the quintic (its point carries zero accelerations: continuous acceleration
    at both ends), or as the cubic by a controller whose state holds no accelerations and
    that does not take them as zero: no joint's peak velocity passes ``scaling`` x its
    limit on the quintic (the faster: 1.875 x the mean), nor its acceleration
    ``acceleration_scaling`` x its limit on the cubic (the harder: 6 x the step / T^2, the
    quintic's 10 / sqrt(3)).
    Joints without a finite, positive limit do not slow it; at least ``minimum_s``.
    """
    d = np.abs(np.asarray(step, dtype=float))
    with np.errstate(over="ignore"):  # a scaling of 1e-300: inf, which the callers refuse
        seconds = float(np.max(QUINTIC_PEAK * d / scaled_limits(velocity_limits, scaling),
                               initial=0.0))
        if acceleration_limits is not None:
            a = scaled_limits(acceleration_limits, acceleration_scaling)
            seconds = max(seconds, float(np.max(np.sqrt(CUBIC_PEAK_ACCELERATION * d / a),
                                                initial=0.0)))
    return max(seconds, minimum_s)


def path_times(q_path: np.ndarray, start: Optional[np.ndarray], velocity_limits: np.ndarray,
               scaling: float, acceleration_limits: Optional[np.ndarray] = None,
               acceleration_scaling: float = 1.0, minimum_s: float = 0.0) -> np.ndarray:
    """Time from start [s] of each point, within the scaled velocity and acceleration limits.

    Each step's mean velocity is held to ``scaling`` / 1.5 of the limit: the cubics through
    the points (:func:`point_velocities`) peak at 1.5 times it at most.  With
    ``acceleration_limits`` (n,) [rad/s^2 or m/s^2], the steps whose cubics accelerate a
    joint beyond ``acceleration_scaling`` x its limit are then slowed
    (:func:`_within_accelerations`).  ``start`` (n,): where the arm is, at rest, before the
    first point (None: the first point is at 0 s).  Joints without a finite, positive limit
    do not slow a step.  A move shorter than ``minimum_s`` [s] is slowed to it as a whole
    (every velocity and acceleration scaled down; a move of nothing waits until then).
    """
    v = scaled_limits(velocity_limits, scaling / CUBIC_PEAK)
    steps = _steps(q_path, start)
    with np.errstate(over="ignore"):  # a scaling of 1e-300: inf, which the callers refuse
        spans = np.max(np.abs(steps) / v, axis=1, initial=0.0)
    if acceleration_limits is not None:
        a = scaled_limits(acceleration_limits, acceleration_scaling)
        if np.any(np.isfinite(a)):
            spans = _within_accelerations(steps, spans, a)
    total = float(np.sum(spans))
    if total < minimum_s:
        spans = spans * (minimum_s / total) if total > 0.0 else \
            np.concatenate([[minimum_s], spans[1:]])
    return np.cumsum(spans)


def scaled_limits(limits: np.ndarray, scaling: float) -> np.ndarray:
    """Return ``limits`` x ``scaling`` where finite and positive, else inf (no limit)."""
    limits = np.asarray(limits, dtype=float)
    return np.where((limits > 0) & np.isfinite(limits), limits * scaling, np.inf)


def _steps(q_path: np.ndarray, start: Optional[np.ndarray]) -> np.ndarray:
    """(m, n) each point's step from the one before, the first from ``start`` (None: 0)."""
    first = q_path[:1] if start is None else np.asarray(start, dtype=float)[None, :]
    return np.diff(np.vstack([first, q_path]), axis=0)


#: Share of each joint's acceleration limit :func:`_ramped` plans with: the cubics through
#: the points accelerate more than the plan's mean changes of velocity (about twice), which
#: :func:`_lengthened` then trims where they still exceed the limits.
RAMP_SHARE = 0.5
#: Largest lengthening of a step in one round of :func:`_lengthened`: small, so that a
#: change of speed spreads over many steps instead of one step absorbing it.
STRETCH = 1.02
#: Rounds of :func:`_lengthened` before it slows the whole path instead.
ACCELERATION_ROUNDS = 2000


def _within_accelerations(steps: np.ndarray, spans: np.ndarray, limits: np.ndarray
                          ) -> np.ndarray:
    """Return ``spans`` (m,) [s] lengthened until no cubic accelerates beyond ``limits`` (n,).

    ``spans``: each step's time at the velocity limits (0: no joint of it has one; it
    starts from the time of a move from rest to rest).  A speed profile along the path
    (:func:`_ramped`), trimmed step by step where a cubic still accelerates too much
    (:func:`_lengthened`), then sped up as a whole while no velocity or acceleration
    reaches its limit (accelerations scale with the square of the speed).
    """
    rest = np.max(np.sqrt(6.0 * np.abs(steps) / limits), axis=1)
    timed = _lengthened(steps, _ramped(steps, np.where(spans > 0, spans, rest), limits),
                        limits)
    worst = float(np.max(_point_ratios(steps, timed, limits), initial=0.0))
    if 0.0 < worst < 1.0:
        with np.errstate(divide="ignore", invalid="ignore"):
            slowest = float(np.max(np.where(timed > 0, spans / timed, 0.0), initial=0.0))
        timed = timed * max(np.sqrt(worst), slowest) * (1 + 1e-9)
    return timed


def _ramped(steps: np.ndarray, spans: np.ndarray, limits: np.ndarray) -> np.ndarray:
    """Return the steps' times [s] of a speed profile along the path, from rest to rest.

    The path at its fastest (each step in ``spans``) is traversed at a fraction ``r`` of
    that speed: 0 at both ends, at most 1, at most the speed whose change of direction at
    a point the limits allow, and changing along the path as a trapezoid (``r^2`` by at
    most ``2 alpha`` per second of the fastest traversal, ``alpha``: the step's joints'
    :data:`RAMP_SHARE` of their limits over their velocity at full speed), as a forward
    and a backward pass find it.  Each step then takes the time of its trapezoid.
    """
    m = len(spans)
    moving = spans > 0
    share = RAMP_SHARE * limits
    with np.errstate(divide="ignore", invalid="ignore"):
        full = np.where(moving[:, None], steps / spans[:, None], 0.0)  # [rad/s] at r = 1
        alpha = np.min(np.where(full != 0, share / np.abs(full), np.inf), axis=1)
        turn = np.abs(np.diff(full, axis=0))
        between = 0.5 * (spans[:-1] + spans[1:])[:, None]
        corner = np.min(np.where(turn > 0, np.sqrt(share * between / turn), np.inf), axis=1)
    r = np.concatenate([[0.0], np.minimum(1.0, corner), [0.0]])
    with np.errstate(invalid="ignore"):  # inf x 0: a step of nothing gains nothing
        gain = np.where(moving, 2.0 * alpha * spans, 0.0)
    for k in range(m):
        r[k + 1] = min(r[k + 1], np.sqrt(r[k] ** 2 + gain[k]))
    for k in range(m - 1, -1, -1):
        r[k] = min(r[k], np.sqrt(r[k + 1] ** 2 + gain[k]))
    r0, r1 = r[:-1], r[1:]
    with np.errstate(divide="ignore", invalid="ignore"):
        peak = np.minimum(1.0, np.sqrt(0.5 * (r0 ** 2 + r1 ** 2) + alpha * spans))
        cruise = np.maximum(spans - (2 * peak ** 2 - r0 ** 2 - r1 ** 2) / (2 * alpha), 0.0)
        ramps = np.where(np.isfinite(alpha), (2 * peak - r0 - r1) / alpha, 0.0)
        return np.where(moving, ramps + cruise / peak, 0.0)


def _lengthened(steps: np.ndarray, spans: np.ndarray, limits: np.ndarray) -> np.ndarray:
    """Return ``spans`` lengthened where a cubic accelerates beyond ``limits``.

    A cubic's acceleration is linear in time, so its largest is at an end
    (:func:`_end_accelerations`).  At each point where a joint accelerates too much (on
    the step before it or after it), the step on which that joint is faster is lengthened
    (as Iterative Parabolic Time Parameterization does: speeding up slows the step after,
    slowing down the step before), by the square root of the excess (exact for a step
    alone) but at most :data:`STRETCH`, and rounds repeat.  After
    :data:`ACCELERATION_ROUNDS` the whole path is slowed by the worst ratio left, so the
    answer always keeps the limits; lengthening only lowers the velocities.
    """
    m = len(spans)
    stretch = np.inf if m == 1 else STRETCH
    for _ in range(ACCELERATION_ROUNDS):
        at_points = _point_ratios(steps, spans, limits)
        worst = np.max(at_points, axis=1)
        points = np.flatnonzero(worst > 1.0)
        if points.size == 0:
            return spans
        joint = np.argmax(at_points[points], axis=1)
        before, after = np.maximum(points - 1, 0), np.minimum(points, m - 1)
        with np.errstate(divide="ignore", invalid="ignore"):
            speed = np.abs(steps) / spans[:, None]  # 0 / 0 (no step) compares False
        faster = np.where(speed[before, joint] >= speed[after, joint], before, after)
        step = np.where(points == 0, 0, np.where(points == m, m - 1, faster))
        factor = np.ones(m)
        np.maximum.at(factor, step, np.minimum(np.sqrt(worst[points]), stretch))
        spans = spans * factor * (1 + 1e-9)
    worst = float(np.max(_point_ratios(steps, spans, limits), initial=0.0))
    return spans * np.sqrt(max(worst, 1.0)) * (1 + 1e-9)


def _point_ratios(steps: np.ndarray, spans: np.ndarray, limits: np.ndarray) -> np.ndarray:
    """(m + 1, n) at each point (the start first), |acceleration| / limit on either side."""
    first, last = _end_accelerations(steps, spans)
    ratios = np.zeros((len(spans) + 1, steps.shape[1]))
    ratios[:-1] = first / limits
    ratios[1:] = np.maximum(ratios[1:], last / limits)
    return ratios


def _end_accelerations(steps: np.ndarray, spans: np.ndarray
                       ) -> Tuple[np.ndarray, np.ndarray]:
    """(m, n) twice: each joint's |acceleration| at each step's ends.

    :func:`cubic_end_accelerations` of the cubics through ``steps`` (m, n) lasting
    ``spans`` (m,) [s] between the velocities of :func:`point_velocities` (the start at
    rest).
    """
    v = np.vstack([np.zeros((1, steps.shape[1])), _velocities(steps, spans)])
    return cubic_end_accelerations(steps, spans, v[:-1], v[1:])


def cubic_end_accelerations(d: np.ndarray, spans: np.ndarray, v0: np.ndarray,
                            v1: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """(m, n) twice: |acceleration| [rad/s^2 or m/s^2] at the start and end of cubics.

    The cubic Hermite a controller draws through a step ``d`` of ``T`` seconds
    (``spans`` (m,)) between the velocities ``v0``, ``v1`` accelerates by
    ``(6 d - T (4 v0 + 2 v1)) / T^2`` at its start and ``(-6 d + T (2 v0 + 4 v1)) / T^2``
    at its end, and linearly between.  0 on a step of no time.
    """
    t = spans[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        first = (6 * d - t * (4 * v0 + 2 * v1)) / t ** 2
        last = (-6 * d + t * (2 * v0 + 4 * v1)) / t ** 2
    timed = t > 0
    return np.where(timed, np.abs(first), 0.0), np.where(timed, np.abs(last), 0.0)


def point_velocities(q_path: np.ndarray, times_s: np.ndarray,
                     start: Optional[np.ndarray] = None) -> np.ndarray:
    """(m, n) velocities [rad/s or m/s] at the points of ``q_path`` (m, n) at ``times_s``.

    With them a JointTrajectoryController joins the points by cubics (velocity continuous)
    instead of straight segments (its velocity jumping at every point).  Each joint's
    velocity at a point is the harmonic mean of its two steps' mean velocities when they
    have one sign, else 0 (Fritsch-Carlson: no overshoot of a point), and 0 at the last
    point; from ``start`` (n,) at 0 s (None: the first point is the start, at rest).  On
    each step a joint then moves one way at most 1.5 times (:data:`CUBIC_PEAK`) the
    largest mean velocity of that step and its neighbours: timing each step at
    ``scaling`` / 1.5 of the limits keeps the whole move within ``scaling`` of them.
    """
    return _velocities(_steps(q_path, start), np.diff(np.concatenate([[0.0], times_s])))


def _velocities(steps: np.ndarray, spans: np.ndarray) -> np.ndarray:
    """(m, n) :func:`point_velocities` at the ends of ``steps`` (m, n) lasting ``spans`` (m,)."""
    spans = spans[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = np.where(spans > 0, steps / spans, 0.0)
        left, right = mean[:-1], mean[1:]
        inner = np.where(left * right > 0, 2 * left * right / (left + right), 0.0)
    return np.vstack([inner, np.zeros((1, steps.shape[1]))])
