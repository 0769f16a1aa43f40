"""Sending a solution to a ros2_control controller, only when it is safe.

``refusal()`` says why a solution must not be executed (or '' when it may be): it is
checked on the exact values that would be sent, against fresh ``joint_states``.
The message builders time a trajectory from the joints' velocity and acceleration limits
(:mod:`ros2_ik.core.path.timing`); :class:`Move` is a sent move as the controller draws it,
:class:`Sent` the one under way.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Mapping, Optional, Sequence, Tuple

import numpy as np
from builtin_interfaces.msg import Duration
from std_msgs.msg import Float64MultiArray
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from ros2_ik.core.collision import motion
from ros2_ik.core.model.joint_values import outside_limits
from ros2_ik.core.path import timing


#: Why an execute is refused when the group's joint_states are older than
#: ``joint_state_timeout`` or never came.
STALE_JOINTS = "joint_states are stale or missing for the group's joints"
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
    outside = outside_limits(names, q, lower, upper)
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


def move_refusal(checker, group, waypoints: Sequence[np.ndarray], clearance_m: float) -> str:
    """Why the move through ``waypoints`` (group vectors) must not be made, or ''.

    Each step between consecutive waypoints is a straight segment in joint space (a
    one-point trajectory's cubic from rest, a braking to rest: every joint follows one
    time law), proven clear against the collision model or refused
    (:func:`ros2_ik.core.collision.motion.first_contact`): an end that keeps its
    clearance is refused when the way there passes closer.  The first waypoint is where
    the arm is (or is commanded to be, mid-move); a second segment starts where braking ends.
    """
    for k in range(len(waypoints) - 1):
        contact = motion.first_contact(checker, group, np.asarray(waypoints[k], dtype=float),
                                       np.asarray(waypoints[k + 1], dtype=float), clearance_m)
        if contact is not None:
            return _contact_refusal(contact, "the current state" if k == 0 and
                                    len(waypoints) == 2 else _SEGMENTS[min(k, 1)],
                                    clearance_m)
    return ""


#: How :func:`move_refusal` names the segments of a redirected move (braking, then on).
_SEGMENTS = ("the braking of the move under way", "where braking ends")


def _contact_refusal(contact, origin: str, clearance_m: float) -> str:
    """Return the refusal of a segment from ``origin`` that ``contact`` (motion.Contact) stops."""
    report = contact.report
    if contact.unproven:
        return (f"the move from {origin} could not be proven clear in "
                f"{motion.MAX_EVALUATIONS} checks ({report.pair[0]} and {report.pair[1]} "
                f"{report.distance_m:.4f} m apart {contact.fraction:.0%} of the way, "
                f"required {clearance_m:g} m): move nearer first")
    return (f"the move from {origin} passes {report.pair[0]} and {report.pair[1]} "
            f"{report.distance_m:.4f} m apart, {contact.fraction:.0%} of the way (required "
            f"{clearance_m:g} m)")


def note_outcome(response, reason: str, succeeded: bool, refused_code: int,
                 notes: Sequence[str] = ()) -> None:
    """Write an execution's outcome into a reply's ``message`` (and ``error_code.val``).

    ``refused_code`` replaces the code of a success that was refused; ``notes``: what the
    execution found on the way (the move under way taken as stopped), after the outcome.
    """
    if reason:
        response.message += f"; not executed: {reason}"
        if succeeded:
            response.error_code.val = refused_code
    else:
        response.message += "; sent to the controller"
    response.message += "".join(f" ({note})" for note in notes)


def duration_s(q: np.ndarray, start: np.ndarray, velocity_limits: np.ndarray,
               scaling: float, minimum_s: float,
               acceleration_limits: Optional[np.ndarray] = None,
               acceleration_scaling: float = 1.0) -> float:
    """Time [s] from rest at ``start`` to rest at ``q`` (:func:`.timing.rest_to_rest_s`)."""
    return timing.rest_to_rest_s(np.asarray(q, dtype=float) - np.asarray(start, dtype=float),
                                 velocity_limits, scaling, acceleration_limits,
                                 acceleration_scaling, minimum_s)


#: An arm whose joint_states velocities are all within this share of their scaled
#: velocity limits counts as at rest (a standing arm's velocity noise; a controller's
#: blend from such a speed is negligible): nothing of ours moving it, nothing is braked.
AT_REST_SHARE = 0.01


@dataclass(frozen=True)
class Move:
    """A timed move as a JointTrajectoryController draws it, from ``start``.

    ``start`` (n,) [rad or m] with ``start_velocity`` (n,) at 0 s, then each point of
    ``q_path`` (m, n) at ``times_s`` (m,) [s] with ``velocities`` (m, n): cubic Hermites;
    with ``accelerations`` (m, n) too (and ``start_acceleration``), quintic Hermites.
    """

    names: Tuple[str, ...]
    start: np.ndarray
    start_velocity: np.ndarray
    q_path: np.ndarray
    velocities: np.ndarray
    times_s: np.ndarray
    accelerations: Optional[np.ndarray] = None
    start_acceleration: Optional[np.ndarray] = None

    @classmethod
    def of(cls, trajectory: JointTrajectory, start: np.ndarray) -> "Move":
        """Return the move a timed ``trajectory`` makes from ``start``, at rest.

        Cubics; quintics when every point carries accelerations (as
        :meth:`trajectory` writes them, and a JointTrajectoryController draws them).
        """
        n = len(trajectory.joint_names)
        points = trajectory.points
        accelerations = [list(p.accelerations) for p in points]
        quintic = bool(points) and all(len(a) == n for a in accelerations)
        return cls(tuple(trajectory.joint_names), np.asarray(start, dtype=float), np.zeros(n),
                   np.array([p.positions for p in points], dtype=float).reshape(-1, n),
                   np.array([list(p.velocities) or [0.0] * n for p in points],
                            dtype=float).reshape(-1, n),
                   np.array([p.time_from_start.sec + 1e-9 * p.time_from_start.nanosec
                             for p in points]),
                   np.array(accelerations, dtype=float) if quintic else None,
                   np.zeros(n) if quintic else None)

    @classmethod
    def from_rest(cls, names: Sequence[str], start: np.ndarray, q: np.ndarray,
                  seconds: float) -> "Move":
        """Return the quintic from rest at ``start`` (n,) to rest at ``q`` (n,).

        It takes ``seconds`` [s] (:func:`duration_s`).
        """
        n = len(names)
        return cls(tuple(names), np.asarray(start, dtype=float), np.zeros(n),
                   np.asarray(q, dtype=float).reshape(1, n), np.zeros((1, n)),
                   np.array([float(seconds)]), np.zeros((1, n)), np.zeros(n))

    def then(self, q: np.ndarray, seconds: float) -> "Move":
        """Return this move, then on from its end to rest at ``q`` (n,) ``seconds`` [s] later.

        This move ends at rest (a braking does): the step on is the spline from rest of
        this move's kind (a cubic after a braking; :func:`duration_s` times either).
        """
        n = len(self.names)
        return Move(self.names, self.start, self.start_velocity,
                    np.vstack([self.q_path, np.asarray(q, dtype=float)[None, :]]),
                    np.vstack([self.velocities, np.zeros((1, n))]),
                    np.append(self.times_s, self.duration_s + float(seconds)),
                    None if self.accelerations is None else
                    np.vstack([self.accelerations, np.zeros((1, n))]),
                    self.start_acceleration)

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
        s = (t - stamps[k]) / span
        c = self._segment(k, span)
        q = sum(ci * s ** i for i, ci in enumerate(c))
        qd = sum(i * ci * s ** (i - 1) for i, ci in enumerate(c) if i) / span
        return q, qd

    def braking(self, t: float, deceleration: np.ndarray) -> "Move":
        """Return the move to rest from this one's state at ``t`` [s] (:func:`braking`)."""
        q, v = self.state_at(t)
        return braking(self.names, q, v, deceleration)

    def peak_accelerations(self) -> np.ndarray:
        """Each joint's largest |acceleration| (n,) [rad/s^2 or m/s^2] on the move's steps."""
        spans = np.diff(np.concatenate([[0.0], self.times_s]))
        if self.accelerations is None:
            speeds = np.vstack([self.start_velocity, self.velocities])
            first, last = timing.cubic_end_accelerations(
                np.diff(np.vstack([self.start, self.q_path]), axis=0), spans, speeds[:-1],
                speeds[1:])
            return np.max(np.maximum(first, last), axis=0)
        peaks = np.zeros(len(self.names))
        for k, span in enumerate(spans):
            if span > 0.0:
                peaks = np.maximum(peaks, _quintic_peak(self._segment(k, span)) / span ** 2)
        return peaks

    def trajectory(self) -> JointTrajectory:
        """Return the move's points as a JointTrajectory (its start is where the arm is)."""
        msg = JointTrajectory()
        msg.joint_names = list(self.names)
        for k, (q, qd, t) in enumerate(zip(self.q_path, self.velocities, self.times_s)):
            point = JointTrajectoryPoint(positions=[float(x) for x in q],
                                         velocities=[float(x) for x in qd],
                                         time_from_start=duration_msg(t))
            if self.accelerations is not None:
                point.accelerations = [float(x) for x in self.accelerations[k]]
            msg.points.append(point)
        return msg

    def _segment(self, k: int, span: float) -> Tuple[np.ndarray, ...]:
        """Coefficients (n,) of ``s^0 ...`` of step ``k`` in ``s`` in [0, 1].

        A cubic Hermite (4) through positions and velocities, or a quintic Hermite (6)
        through their accelerations too; the start's acceleration None: 0.
        """
        p0, v0 = (self.start, self.start_velocity) if k == 0 else \
            (self.q_path[k - 1], self.velocities[k - 1])
        p1, v1 = self.q_path[k], self.velocities[k]
        d, V0, V1 = p1 - p0, v0 * span, v1 * span
        if self.accelerations is None:
            return p0, V0, 3 * d - 2 * V0 - V1, -2 * d + V0 + V1
        a0 = self.start_acceleration if k == 0 else self.accelerations[k - 1]
        A0 = (np.zeros_like(p0) if a0 is None else a0) * span ** 2
        A1 = self.accelerations[k] * span ** 2
        return (p0, V0, 0.5 * A0, 10 * d - 6 * V0 - 4 * V1 - 1.5 * A0 + 0.5 * A1,
                -15 * d + 8 * V0 + 7 * V1 + 1.5 * A0 - A1,
                6 * d - 3 * V0 - 3 * V1 - 0.5 * A0 + 0.5 * A1)


def braking(names: Sequence[str], q: np.ndarray, v: np.ndarray,
            deceleration: np.ndarray) -> Move:
    """Return the move to rest from configuration ``q`` (n,) at velocity ``v`` (n,).

    The cubic from ``(q, v)`` to rest at ``q + v T / 2`` after ``T``: its velocity falls
    linearly (``v / T``), along a straight line in joint space, each joint slowing at most
    ``deceleration`` (n,) [rad/s^2 or m/s^2], in the time the slowest to stop needs (at
    least 1 ms).  Joints without a finite positive deceleration do not set T.  A cubic,
    not a quintic: slowing uniformly stops in the least distance (``v^2 / 2a``), so the
    braking of a one-point move, at no more than that move's own hardest acceleration,
    never passes its end (a quintic braking, ``0.75 v^2 / a``, passed it by up to 8 % of the
    move).  Its point carries no accelerations: the controller draws the cubic from its
    state, whichever it interpolates from.
    """
    q, v = np.asarray(q, dtype=float), np.asarray(v, dtype=float)
    n = len(names)
    with np.errstate(divide="ignore", invalid="ignore"):
        need = np.where((deceleration > 0) & np.isfinite(deceleration),
                        np.abs(v) / deceleration, 0.0)
    seconds = max(float(np.max(need, initial=0.0)), 1e-3)
    return Move(tuple(names), q, v, (q + 0.5 * seconds * v)[None, :], np.zeros((1, n)),
                np.array([seconds]))


def _quintic_peak(c: Tuple[np.ndarray, ...]) -> np.ndarray:
    """Each joint's largest |second derivative| of the quintic ``c`` (coefficients) on [0, 1].

    The second derivative is a cubic in ``s``: its largest magnitude is at an end or where
    its own derivative, ``6 c3 + 24 c4 s + 60 c5 s^2``, vanishes inside.
    """
    def second(s):
        return np.abs(2 * c[2] + 6 * c[3] * s + 12 * c[4] * s ** 2 + 20 * c[5] * s ** 3)
    a, b, k = 60 * c[5], 24 * c[4], 6 * c[3]
    with np.errstate(divide="ignore", invalid="ignore"):
        root = np.sqrt(np.maximum(b * b - 4 * a * k, 0.0))
        inside = ((-b + root) / (2 * a), (-b - root) / (2 * a), -k / b)  # a = 0: linear
    # Every candidate clipped into [0, 1]: a point that is no root only adds a value the
    # largest already bounds.
    return np.max([second(0.0), second(1.0)]
                  + [second(np.clip(np.nan_to_num(s, nan=0.0, posinf=0.0, neginf=0.0), 0, 1))
                     for s in inside], axis=0)


@dataclass(frozen=True)
class Sent:
    """The move handed to the controller, when, and how hard it may brake.

    ``move`` was sent at ``t0`` (``time.monotonic()`` [s]); each joint may brake it at
    ``deceleration`` (n,) [rad/s^2 or m/s^2]; ``wraps`` (n,): True where the joint's range
    spans 2 pi (a continuous joint, which a driver may report wrapped; :func:`off_plan`).
    """

    move: Move
    t0: float
    deceleration: np.ndarray
    wraps: Optional[np.ndarray] = None

    def left_s(self, now: float) -> float:
        """Seconds [s] from ``now`` (``time.monotonic()``) until the move ends (0: ended)."""
        return max(0.0, self.t0 + self.move.duration_s - now)

    def braking(self, now: float) -> Move:
        """Return the move to rest from the state at ``now`` (:meth:`Move.braking`)."""
        return self.move.braking(now - self.t0, self.deceleration)


#: Bounds [s] of how far ahead a braking is planned (:func:`next_lead_s`).
MIN_LEAD_S, MAX_LEAD_S = 0.002, 0.05


def next_lead_s(lead_s: float, taken_s: float) -> float:
    """Return how far ahead [s] to plan the next braking, after one took ``taken_s`` [s].

    An execute while the arm moves (a redirect of the move under way, or the measured
    motion of one moved by another source) brakes it from its state at a planned instant
    and is sent then (:meth:`.outputs.Outputs.execute`): a controller draws the braking
    from its own state when it starts the trajectory, and a start ``e`` [s] after (before)
    the planned instant makes the braking's first (last) step harder by about
    ``6 |e| / T`` of it (``T``: the braking's duration).  ``taken_s``: the time from
    planning to ready to send (the move's collision proof, mostly); the lead is 1.5 x
    that, or 0.9 x the lead before when longer, within [:data:`MIN_LEAD_S`,
    :data:`MAX_LEAD_S`].
    """
    return min(MAX_LEAD_S, max(MIN_LEAD_S, 0.9 * lead_s, 1.5 * taken_s))


#: Longest time [s] a measured state is carried on at its velocity (:func:`carried_on`).
MAX_CARRY_S = 0.1


def carried_on(q: np.ndarray, v: np.ndarray, received: np.ndarray, at: float) -> np.ndarray:
    """Where joints read at ``q`` (n,) moving at ``v`` (n,) will be at instant ``at`` [s].

    ``received`` (n,): when each reading came (``time.monotonic()`` [s]).  The arm moved
    by another source keeps its velocity, as far as the node knows: each joint runs on by
    ``v`` times the time from its reading to ``at``, over :data:`MAX_CARRY_S` at most (an
    older reading of a moving arm tells little of where it is now; the controller starts
    from its own state).
    """
    return q + v * np.clip(at - received, 0.0, MAX_CARRY_S)


#: How long [s] of a move's motion a joint_states reading may lag it (:func:`off_plan`).
READING_LAG_S = MAX_CARRY_S


def off_plan(sent: Sent, positions: np.ndarray, received: np.ndarray,
             tolerance: float) -> str:
    """Why joint_states say the controller is not running ``sent`` ('' when they agree).

    Each joint's reading ``positions`` (n,) [rad or m], received at ``received`` (n,)
    (``time.monotonic()`` [s]), is compared with the move's state at that instant (modulo
    2 pi where ``sent.wraps``): it may lie ``tolerance`` [rad or m] from it, plus the
    move's speed there times :data:`READING_LAG_S` (a reading is measured before it
    comes, and a controller tracks a little behind).  A reading from before the move was
    sent tells nothing of it.  Farther off, the move is not what the arm does (stopped by
    the controller: an e-stop, a controller switch, its own abort): a braking planned
    from the move would start where the arm is not, and the controller, which draws a
    trajectory's first step from its own state, would make that step fast.
    """
    positions, received = np.asarray(positions, dtype=float), np.asarray(received, dtype=float)
    gap, allowed = np.zeros(len(positions)), np.full(len(positions), np.inf)
    for t in set(received[received > sent.t0].tolist()):  # one message: one instant
        at = received == t
        q, v = sent.move.state_at(t - sent.t0)
        d = positions - q
        if sent.wraps is not None:
            d = np.where(sent.wraps, np.remainder(d + np.pi, 2.0 * np.pi) - np.pi, d)
        gap[at], allowed[at] = np.abs(d[at]), tolerance + np.abs(v[at]) * READING_LAG_S
    worst = int(np.argmax(gap - allowed)) if len(gap) else 0
    if not len(gap) or gap[worst] <= allowed[worst]:
        return ""
    return (f"joint_states put joint '{sent.move.names[worst]}' {gap[worst]:.3f} from the move "
            f"under way (allowed {allowed[worst]:.3f}: execute_follow_tolerance, plus "
            f"{READING_LAG_S} s of the move's speed)")


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
