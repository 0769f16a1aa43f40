"""Sending a solution to a ros2_control controller, only when it is safe.

``refusal()`` says why a solution must not be executed (or '' when it may be): it is
checked on the exact values that would be sent, against fresh ``joint_states``.
The message builders time a trajectory from the joints' velocity limits.
"""
from __future__ import annotations

from typing import Dict, Mapping, Optional, Sequence

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
               velocity_limits: np.ndarray, scaling: float, minimum_s: float) -> float:
    """Time [s] to reach ``q`` with each joint's peak velocity at most ``scaling`` x its limit.

    A path of one step from ``current`` (:func:`path_times`: the controller's cubic from
    rest peaks at :data:`CUBIC_PEAK` times the mean velocity), at least ``minimum_s``.
    """
    start = np.array([current[name] for name in names], dtype=float)
    step = np.asarray(q, dtype=float)[None, :]
    return max(float(path_times(step, start, np.asarray(velocity_limits, dtype=float),
                                scaling)[-1]), minimum_s)


def path_times(q_path: np.ndarray, start: Optional[np.ndarray], velocity_limits: np.ndarray,
               scaling: float) -> np.ndarray:
    """Time from start [s] of each point: each step's peak at its slowest joint's scaled limit.

    A step's mean velocity is held to ``scaling`` / 1.5 of the limit: the cubics through
    the points (:func:`point_velocities`) peak at 1.5 times it at most.
    ``start`` (n,): where the arm is before the first point (None: the first point is at
    0 s).  Joints without a finite, positive limit do not slow a step.
    """
    v = np.where((velocity_limits > 0) & np.isfinite(velocity_limits),
                 velocity_limits * scaling / CUBIC_PEAK, np.inf)
    previous = q_path[:1] if start is None else start[None, :]
    steps = np.diff(np.vstack([previous, q_path]), axis=0)
    return np.cumsum(np.max(np.abs(steps) / v, axis=1, initial=0.0))


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
    spans = np.diff(np.concatenate([[0.0], times_s]))[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = np.where(spans > 0, steps / spans, 0.0)
        left, right = mean[:-1], mean[1:]
        inner = np.where(left * right > 0, 2 * left * right / (left + right), 0.0)
    return np.vstack([inner, np.zeros((1, q_path.shape[1]))])


def trajectory(names: Sequence[str], q: np.ndarray, seconds: float) -> JointTrajectory:
    """Return a one-point JointTrajectory (the controller interpolates from its current state)."""
    msg = JointTrajectory()
    msg.joint_names = list(names)
    point = JointTrajectoryPoint()
    point.positions = [float(v) for v in q]
    point.velocities = [0.0] * len(names)
    whole = int(seconds)
    point.time_from_start = Duration(sec=whole, nanosec=int((seconds - whole) * 1e9))
    msg.points = [point]
    return msg


def position_command(order: Sequence[str], names: Sequence[str], q: np.ndarray,
                     current: Mapping[str, float]) -> Float64MultiArray:
    """Float64MultiArray in the controller's joint ``order``; others keep their state."""
    values: Dict[str, float] = dict(current)
    values.update(zip(names, (float(v) for v in q)))
    missing = [n for n in order if n not in values]
    if missing:
        raise KeyError(f"no position known for controller joints {missing}")
    return Float64MultiArray(data=[values[n] for n in order])
