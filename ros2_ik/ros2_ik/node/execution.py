"""Sending a solution to a ros2_control controller, only when it is safe.

``refusal()`` says why a solution must not be executed (or '' when it may be): it is
checked on the exact values that would be sent, against fresh ``joint_states``.
The message builders time a trajectory from the joints' velocity and acceleration limits.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Mapping, Optional, Sequence, Tuple

import numpy as np
from builtin_interfaces.msg import Duration
from std_msgs.msg import Float64MultiArray
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from ros2_ik.core.collision import motion


#: Why an execute is refused when the group's joint_states are older than
#: ``joint_state_timeout`` or never came.
STALE_JOINTS = "joint_states are stale or missing for the group's joints"
#: Peak over mean velocity of the move a one-point trajectory makes: its point has
#: positions and zero velocities, which a JointTrajectoryController interpolates from the
#: arm's state at rest by a cubic, ``3 tau^2 - 2 tau^3`` of the distance at ``tau = t / T``,
#: whose velocity peaks at mid-time at 1.5 times the mean.
CUBIC_PEAK = 1.5
#: Longest time from start [s] a trajectory point holds (builtin_interfaces/Duration: int32 s).
MAX_DURATION_S = 2 ** 31 - 1


def refusal(succeeded: bool, names: Sequence[str], q: np.ndarray, lower: np.ndarray,
            upper: np.ndarray, current: Optional[Mapping[str, float]],
            max_jump: float, collides: bool = False) -> str:
    """Why executing ``q`` (joint ``names``) is refused; '' when it is safe to send."""
    if not succeeded:
        return "the solution is not a SUCCESS"
    if collides:
        return "the solution is in collision"
    if not np.all(np.isfinite(q)):
        return "the solution has non-finite values"
    outside = [n for n, v, lo, hi in zip(names, q, lower, upper) if not lo <= v <= hi]
    if outside:
        return f"joints {outside} are outside their limits"
    if current is None:
        return STALE_JOINTS
    jumps = {n: abs(v - current[n]) for n, v in zip(names, q)}
    worst = max(jumps, key=jumps.get)
    if jumps[worst] > max_jump:
        return (f"joint {worst} would move {jumps[worst]:.3f} from the current state, more "
                f"than execute_max_joint_jump={max_jump}")
    return ""


def duration_refusal(seconds: float) -> str:
    """Why a move lasting ``seconds`` [s] cannot be sent ('' when it can: a Duration holds it)."""
    if seconds <= MAX_DURATION_S:
        return ""
    return (f"the move would last {seconds:.3g} s at velocity_scaling and acceleration_scaling; "
            f"a time_from_start holds at most {MAX_DURATION_S} s")


def move_refusal(checker, group, current: Mapping[str, float], q: np.ndarray,
                 clearance_m: float) -> str:
    """Why the joint-linear move from ``current`` to ``q`` must not be made, or ''.

    The move a one-point trajectory makes, sampled against the collision model
    (:func:`ros2_ik.core.collision.motion.first_contact`): an end that keeps its
    clearance is refused when the way there passes closer.
    """
    q_from = np.array([current[n] for n in group.joint_names])
    contact = motion.first_contact(checker, group, q_from, q, clearance_m)
    if contact is None:
        return ""
    report = contact.report
    return (f"the move from the current state passes {report.pair[0]} and {report.pair[1]} "
            f"{report.distance_m:.4f} m apart, {contact.fraction:.0%} of the way (required "
            f"{clearance_m:g} m)")


def note_outcome(response, reason: str, succeeded: bool, refused_code: int) -> None:
    """Write an execution's outcome into a reply's ``message`` (and ``error_code.val``).

    ``refused_code`` replaces the code of a success that was refused.
    """
    if reason:
        response.message += f"; not executed: {reason}"
        if succeeded:
            response.error_code.val = refused_code
    else:
        response.message += "; sent to the controller"


def duration_s(names: Sequence[str], q: np.ndarray, current: Mapping[str, float],
               velocity_limits: np.ndarray, scaling: float, minimum_s: float,
               acceleration_limits: Optional[np.ndarray] = None,
               acceleration_scaling: float = 1.0) -> float:
    """Time [s] to reach ``q`` with each joint's peak velocity at most ``scaling`` x its limit.

    A path of one step from ``current`` (:func:`path_times`: the controller's cubic from
    rest peaks at :data:`CUBIC_PEAK` times the mean velocity, its acceleration at 6 times
    the move over the duration squared), at least ``minimum_s``.
    """
    start = np.array([current[name] for name in names], dtype=float)
    step = np.asarray(q, dtype=float)[None, :]
    return float(path_times(step, start, np.asarray(velocity_limits, dtype=float), scaling,
                            acceleration_limits, acceleration_scaling, minimum_s)[-1])


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
    v = _scaled(velocity_limits, scaling / CUBIC_PEAK)
    previous = q_path[:1] if start is None else np.asarray(start, dtype=float)[None, :]
    steps = np.diff(np.vstack([previous, q_path]), axis=0)
    with np.errstate(over="ignore"):  # a scaling of 1e-300: inf, which the callers refuse
        spans = np.max(np.abs(steps) / v, axis=1, initial=0.0)
    if acceleration_limits is not None:
        a = _scaled(np.asarray(acceleration_limits, dtype=float), acceleration_scaling)
        if np.any(np.isfinite(a)):
            spans = _within_accelerations(steps, spans, a)
    total = float(np.sum(spans))
    if total < minimum_s:
        spans = spans * (minimum_s / total) if total > 0.0 else \
            np.concatenate([[minimum_s], spans[1:]])
    return np.cumsum(spans)


def _scaled(limits: np.ndarray, scaling: float) -> np.ndarray:
    """``limits`` x ``scaling`` where finite and positive, else inf (no limit)."""
    return np.where((limits > 0) & np.isfinite(limits), limits * scaling, np.inf)


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
    """(m, n) twice: each joint's |acceleration| at each step's ends (:func:`_cubic_ends`).

    The cubics through ``steps`` (m, n) lasting ``spans`` (m,) [s] between the velocities
    of :func:`point_velocities` (the start at rest).
    """
    v = np.vstack([np.zeros((1, steps.shape[1])), _velocities(steps, spans)])
    return _cubic_ends(steps, spans, v[:-1], v[1:])


def _cubic_ends(d: np.ndarray, spans: np.ndarray, v0: np.ndarray, v1: np.ndarray
                ) -> Tuple[np.ndarray, np.ndarray]:
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
    first = q_path[:1] if start is None else np.asarray(start, dtype=float)[None, :]
    steps = np.diff(np.vstack([first, q_path]), axis=0)
    return _velocities(steps, np.diff(np.concatenate([[0.0], times_s])))


@dataclass(frozen=True)
class Move:
    """A timed move as a JointTrajectoryController draws it: cubic Hermites from ``start``.

    ``start`` (n,) [rad or m] with ``start_velocity`` (n,) at 0 s, then each point of
    ``q_path`` (m, n) at ``times_s`` (m,) [s] with ``velocities`` (m, n).
    """

    names: Tuple[str, ...]
    start: np.ndarray
    start_velocity: np.ndarray
    q_path: np.ndarray
    velocities: np.ndarray
    times_s: np.ndarray

    @classmethod
    def of(cls, trajectory: JointTrajectory, start: np.ndarray) -> "Move":
        """Return the move a timed ``trajectory`` makes from ``start`` (n,), at rest."""
        n = len(trajectory.joint_names)
        points = trajectory.points
        return cls(tuple(trajectory.joint_names), np.asarray(start, dtype=float), np.zeros(n),
                   np.array([p.positions for p in points], dtype=float).reshape(-1, n),
                   np.array([list(p.velocities) or [0.0] * n for p in points],
                            dtype=float).reshape(-1, n),
                   np.array([p.time_from_start.sec + 1e-9 * p.time_from_start.nanosec
                             for p in points]))

    @property
    def duration_s(self) -> float:
        """When the move ends [s]."""
        return float(self.times_s[-1])

    def state_at(self, t: float) -> Tuple[np.ndarray, np.ndarray]:
        """Return the configuration (n,) and velocity (n,) at ``t`` [s] (held after the end)."""
        stamps = np.concatenate([[0.0], self.times_s])
        if t >= stamps[-1]:
            return self.q_path[-1].copy(), np.zeros(len(self.names))
        if t <= 0.0:
            return self.start.copy(), self.start_velocity.copy()
        k = int(np.searchsorted(stamps, t, side="right")) - 1  # stamps[k] <= t < stamps[k+1]
        span = stamps[k + 1] - stamps[k]
        p0, v0 = (self.start, self.start_velocity) if k == 0 else \
            (self.q_path[k - 1], self.velocities[k - 1])
        p1, v1 = self.q_path[k], self.velocities[k]
        s = (t - stamps[k]) / span
        h = (2 * s ** 3 - 3 * s ** 2 + 1, s ** 3 - 2 * s ** 2 + s, -2 * s ** 3 + 3 * s ** 2,
             s ** 3 - s ** 2)
        dh = (6 * s ** 2 - 6 * s, 3 * s ** 2 - 4 * s + 1, -6 * s ** 2 + 6 * s, 3 * s ** 2 - 2 * s)
        q = h[0] * p0 + h[1] * span * v0 + h[2] * p1 + h[3] * span * v1
        qd = (dh[0] * p0 + dh[1] * span * v0 + dh[2] * p1 + dh[3] * span * v1) / span
        return q, qd

    def braking(self, t: float, deceleration: np.ndarray) -> "Move":
        """Return the move to rest from this one's state at ``t`` [s].

        Each joint slows at most ``deceleration`` (n,) [rad/s^2 or m/s^2], in the time the
        slowest to stop needs (at least 1 ms).  A cubic from ``(q, v)`` to rest at
        ``q + v T / 2`` after ``T`` decelerates uniformly, ``v / T``.  Joints without a
        finite positive deceleration do not set T.
        """
        q, v = self.state_at(t)
        with np.errstate(divide="ignore", invalid="ignore"):
            need = np.where((deceleration > 0) & np.isfinite(deceleration),
                            np.abs(v) / deceleration, 0.0)
        seconds = max(float(np.max(need, initial=0.0)), 1e-3)
        return Move(self.names, q, v, (q + 0.5 * seconds * v)[None, :],
                    np.zeros((1, len(self.names))), np.array([seconds]))

    def peak_accelerations(self) -> np.ndarray:
        """Each joint's largest |acceleration| (n,) [rad/s^2 or m/s^2] on the move's cubics."""
        speeds = np.vstack([self.start_velocity, self.velocities])
        first, last = _cubic_ends(np.diff(np.vstack([self.start, self.q_path]), axis=0),
                                  np.diff(np.concatenate([[0.0], self.times_s])),
                                  speeds[:-1], speeds[1:])
        return np.max(np.maximum(first, last), axis=0)

    def trajectory(self) -> JointTrajectory:
        """Return the move's points as a JointTrajectory (its start is where the arm is)."""
        msg = JointTrajectory()
        msg.joint_names = list(self.names)
        for q, qd, t in zip(self.q_path, self.velocities, self.times_s):
            msg.points.append(JointTrajectoryPoint(
                positions=[float(x) for x in q], velocities=[float(x) for x in qd],
                time_from_start=duration_msg(t)))
        return msg


def _velocities(steps: np.ndarray, spans: np.ndarray) -> np.ndarray:
    """(m, n) :func:`point_velocities` at the ends of ``steps`` (m, n) lasting ``spans`` (m,)."""
    spans = spans[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = np.where(spans > 0, steps / spans, 0.0)
        left, right = mean[:-1], mean[1:]
        inner = np.where(left * right > 0, 2 * left * right / (left + right), 0.0)
    return np.vstack([inner, np.zeros((1, steps.shape[1]))])


def trajectory(names: Sequence[str], q: np.ndarray, seconds: float) -> JointTrajectory:
    """Return a one-point JointTrajectory (the controller interpolates from its current state)."""
    msg = JointTrajectory()
    msg.joint_names = list(names)
    point = JointTrajectoryPoint()
    point.positions = [float(v) for v in q]
    point.velocities = [0.0] * len(names)
    point.time_from_start = duration_msg(seconds)
    msg.points = [point]
    return msg


def duration_msg(seconds: float) -> Duration:
    """``seconds`` [s] as a builtin_interfaces Duration (a time_from_start)."""
    whole = int(seconds)
    return Duration(sec=whole, nanosec=int((seconds - whole) * 1e9))


def position_command(order: Sequence[str], names: Sequence[str], q: np.ndarray,
                     current: Mapping[str, float]) -> Float64MultiArray:
    """Float64MultiArray in the controller's joint ``order``; others keep their state."""
    values: Dict[str, float] = dict(current)
    values.update(zip(names, (float(v) for v in q)))
    missing = [n for n in order if n not in values]
    if missing:
        raise KeyError(f"no position known for controller joints {missing}")
    return Float64MultiArray(data=[values[n] for n in order])
