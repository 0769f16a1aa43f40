"""The servo loop's state machine and safety gate, without ROS (the node's servo_loop drives it).

Each tick takes the measured joint positions (None when ``joint_states`` are stale) and
the newest target, runs one differential-IK step (core.servo) from the last *command*,
checks the command independently against the joint limits, the scaled velocity limits
and the acceleration limit, and returns what to send.  The command, not the measured
state, is the integration base (the controller's lag and the sensors' noise do not feed
back into the next command); the measured state is checked against it, and a servo that
starts or resumes from a stop takes the measured state as its base.  With velocity
commands (``rebase``) the arm integrates them itself, so each step starts from the
measured state instead (the arm's drift from the servo's own sum is corrected).

Halts hold position without a jump: each joint's velocity goes to zero within the
acceleration limit, then the held command is repeated.
A halt ends by itself when its cause clears (a fresh target, fresh joint_states);
``pause`` and ``stop`` are the user's.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from enum import IntEnum
from typing import Callable, Optional, Tuple

import numpy as np
import pinocchio as pin

#: Slack of the independent command check over the step's own bounds (round-off).
CHECK_SLACK = 1e-7


class State(IntEnum):
    """Values of ``ServoStatus.state``."""

    STOPPED = 0
    RUNNING = 1
    PAUSED = 2
    HALTED = 3


@dataclass(frozen=True)
class Limits:
    """What the supervisor checks every command against (group order)."""

    lower: np.ndarray  # [rad or m]
    upper: np.ndarray
    velocity: np.ndarray  # scaled limits [rad/s or m/s]
    acceleration: np.ndarray  # per joint, or one for all [rad/s^2 or m/s^2]
    joint_names: Tuple[str, ...]
    max_tracking_error: float  # largest |measured - commanded| tolerated [rad or m]


@dataclass
class Target:
    """The newest target: a pose T_world_target, or a twist [m/s, rad/s] at the tip."""

    stamp: float  # receive time [s, monotonic]
    pose: Optional[pin.SE3] = None
    twist: Optional[np.ndarray] = None
    twist_in_world: bool = True


@dataclass
class Command:
    """What one tick sends: positions [rad or m] and velocities [rad/s or m/s]."""

    q: np.ndarray
    qd: np.ndarray


@dataclass
class Report:
    """State after a tick, with the step's figures for the status topic."""

    state: State = State.STOPPED
    reason: str = ""
    position_error: float = math.nan  # [m]
    orientation_error: float = math.nan  # [rad]
    clearance: float = math.inf  # [m]
    manipulability: float = math.nan


class TipJacobian:
    """The tip's Jacobian [m/s, rad/s per joint unit], on the group's model and own Data."""

    def __init__(self, group, frame: str) -> None:
        """Bind the group (core.group.Group) and its frame ``frame``."""
        self.model = group.angle_model
        self.data = self.model.createData()
        self.fid = group.reduced_frame_id(frame)

    def __call__(self, q: np.ndarray, in_world: bool) -> np.ndarray:
        """Return the (6, n) Jacobian: world-aligned axes at the tip, or the tip's own."""
        ref = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED if in_world else pin.ReferenceFrame.LOCAL
        return pin.computeFrameJacobian(self.model, self.data, q, self.fid, ref)


def pushed_past(J: np.ndarray, twist: np.ndarray, q: np.ndarray, lower: np.ndarray,
                upper: np.ndarray, margin: float = 1e-3) -> np.ndarray:
    """Return the joints within ``margin`` of a limit that ``twist`` drives further out.

    By the least-squares joint velocity of the twist (``lstsq(J, twist)``): what the twist
    asks of each joint, before any bound.
    """
    qd = np.linalg.lstsq(J, twist, rcond=1e-6)[0]
    small = 1e-3 * max(np.abs(qd).max(), 1e-12)
    out = ((upper - q < margin) & (qd > small)) | ((q - lower < margin) & (qd < -small))
    return np.flatnonzero(out)


class Supervisor:
    """Runs one servo (``core.servo.Servo``-like ``step_pose`` / ``step_twist``)."""

    def __init__(self, servo, limits: Limits, target_timeout_s: float,
                 clearance_m: float = 0.0,
                 tip_jacobian: Optional[Callable[[np.ndarray, bool], np.ndarray]] = None,
                 rebase: bool = False) -> None:
        """Supervise ``servo``; targets older than ``target_timeout_s`` [s] are stale.

        ``tip_jacobian(q, in_world)`` (e.g. :class:`TipJacobian`) lets a twist that drives
        a joint past its limit halt instead of wandering on the other joints.  ``rebase``:
        step from the measured state each period (for velocity commands, which the arm
        integrates itself: its drift from the servo's own sum is then corrected).
        """
        self.servo, self.limits, self.tip_jacobian = servo, limits, tip_jacobian
        self.rebase = rebase
        self._refused_twist: Optional[Tuple[np.ndarray, str]] = None
        self.target_timeout_s, self.clearance_m = target_timeout_s, clearance_m
        self.report = Report()
        self.target: Optional[Target] = None
        self.q_cmd: Optional[np.ndarray] = None
        self.qd = np.zeros(len(limits.lower))
        self._stopping = ""  # a controlled stop's reason while it decelerates

    # --- user requests -----------------------------------------------------------------
    def start(self, q_measured: Optional[np.ndarray]) -> str:
        """Start (or restart) from the measured state; returns why not, or ''."""
        if q_measured is None:
            return "joint_states of the group are missing or stale"
        lim = self.limits
        self.q_cmd = np.clip(np.asarray(q_measured, dtype=float), lim.lower, lim.upper)
        self.qd = np.zeros_like(self.q_cmd)
        self.servo.reset()
        self.target, self._stopping = None, ""
        self._set(State.HALTED, "waiting for a target")
        return ""

    def stop(self, reason: str = "stopped on request") -> None:
        """Stop servoing at once: nothing more is sent (the arm keeps the last command)."""
        self.q_cmd, self.target, self._stopping = None, None, ""
        self._set(State.STOPPED, reason)

    @property
    def stopping(self) -> bool:
        """True while a controlled stop decelerates."""
        return bool(self._stopping)

    def cancel_stop(self) -> None:
        """Go on servoing from where a controlled stop has braked to (no jump)."""
        if self._stopping:
            self._stopping = ""
            self._set(State.HALTED, "restarted: waiting for a fresh target")

    def request_stop(self, reason: str = "stopped on request") -> None:
        """Stop after decelerating to rest within the acceleration limit (a moving arm).

        The ticks hold (as a halt does) until every joint is at rest, send that command,
        then stop: a position controller is never left holding a command that the arm was
        passing through at speed.  At rest already: stops at once.
        """
        if self.report.state == State.STOPPED:
            return
        if not np.any(self.qd):
            self.stop(reason)
            return
        self._stopping = reason
        self._set(State.HALTED, f"stopping: {reason}")

    def pause(self, paused: bool) -> str:
        """Pause (hold position, ignore targets) or resume; returns why not, or ''."""
        if self.report.state == State.STOPPED:
            return "servo is stopped: call ~/servo/start first"
        if paused:
            self._set(State.PAUSED, "paused on request")
        elif self.report.state == State.PAUSED:
            self._set(State.HALTED, "resumed: waiting for a fresh target")
        return ""

    def set_target(self, target: Target) -> None:
        """Replace the target (ignored while stopped)."""
        if self.report.state != State.STOPPED:
            self.target = target

    # --- the loop ----------------------------------------------------------------------
    def tick(self, now: float, q_measured: Optional[np.ndarray],
             dt: float) -> Optional[Command]:
        """One period: the command to send (None when stopped)."""
        state = self.report.state
        if state == State.STOPPED:
            return None
        if self._stopping:
            return self._brake_to_stop(dt)
        reason = self._halt_reason(now, q_measured)
        if state == State.PAUSED:
            return self._hold(dt, State.PAUSED, self.report.reason)
        if reason:
            return self._hold(dt, State.HALTED, reason)
        if self.rebase:  # velocity output: the arm integrates; step from where it is
            self.q_cmd = np.clip(np.asarray(q_measured, dtype=float), self.limits.lower,
                                 self.limits.upper)
        return self._follow(dt)

    def _halt_reason(self, now: float, q_measured: Optional[np.ndarray]) -> str:
        if q_measured is None:
            return "joint_states stale or missing"
        error = np.abs(np.asarray(q_measured) - self.q_cmd)
        worst = int(np.argmax(error))
        if error[worst] > self.limits.max_tracking_error:
            return (f"controller not following: {self.limits.joint_names[worst]} is "
                    f"{error[worst]:.3f} from the command")
        if self.target is None:
            return "waiting for a target"
        if now - self.target.stamp > self.target_timeout_s:
            return f"target stale (older than {self.target_timeout_s:g} s)"
        refused = self._refused_twist
        if refused is not None:
            if self.target.twist is not None and np.array_equal(self.target.twist, refused[0]):
                return refused[1]
            self._refused_twist = None
        return ""

    def _follow(self, dt: float) -> Command:
        target = self.target
        if target.pose is not None:
            step = self.servo.step_pose(self.q_cmd, target.pose, dt)
        else:
            step = self.servo.step_twist(self.q_cmd, target.twist, target.twist_in_world, dt)
        self._figures(step)
        problem = self._check(step.q_next, step.qd, dt)
        if problem:
            return self._hold(dt, State.HALTED, problem)
        if step.flag != 1:
            return self._accept(step, State.HALTED, "no feasible step within the limits "
                                "and the clearance: holding")
        bent = self._bent_by_limits(step)
        if bent:
            self._refused_twist = (self.target.twist, bent)
            return self._hold(dt, State.HALTED, bent)
        return self._accept(step, *self._blocked(step))

    def _bent_by_limits(self, step) -> str:
        """Why a twist is refused: it drives a joint at its limit further out."""
        target, lim = self.target, self.limits
        if target.twist is None or self.tip_jacobian is None:
            return ""
        J = self.tip_jacobian(step.q_next, target.twist_in_world)
        out = pushed_past(J, target.twist, step.q_next, lim.lower, lim.upper)
        if not out.size:
            return ""
        names = ", ".join(lim.joint_names[i] for i in out)
        return f"joint limit reached: {names} (the twist cannot be followed; send another)"

    def _blocked(self, step) -> Tuple[State, str]:
        """HALTED when the step barely moves because a bound holds it, else RUNNING."""
        if np.max(np.abs(step.qd)) > 1e-3:
            return State.RUNNING, ""
        if self.target.pose is not None and not (step.error_m > 1e-3 or step.error_rad > 1e-2):
            return State.RUNNING, ""  # at rest on the target
        if self.target.twist is not None and not np.any(self.target.twist):
            return State.RUNNING, ""
        clearance = getattr(step, "clearance_m", math.inf)
        if clearance <= self.clearance_m + 1e-3:
            return State.HALTED, f"collision bound reached (clearance {clearance:.4f} m)"
        lim, q = self.limits, self.q_cmd
        at = np.flatnonzero((q - lim.lower < 1e-3) | (lim.upper - q < 1e-3))
        if at.size:
            names = ", ".join(lim.joint_names[i] for i in at)
            return State.HALTED, f"joint limit reached: {names}"
        return State.RUNNING, "target not reachable from here (singular or out of reach)"

    def _hold(self, dt: float, state: State, reason: str) -> Command:
        """Decelerate to rest, each joint at the acceleration limit, then repeat the command.

        Per joint, not through the QP (whose posture task would keep a redundant arm
        moving): a joint within the braking bound stops within half its distance to a
        limit.
        """
        lim = self.limits
        speed = np.abs(self.qd)
        qd = np.sign(self.qd) * np.maximum(speed - lim.acceleration * dt, 0.0)
        q_next = np.clip(self.q_cmd + qd * dt, lim.lower, lim.upper)
        self.servo.reset(qd)
        self.q_cmd, self.qd = q_next, qd
        self._set(state, reason)
        return Command(self.q_cmd.copy(), self.qd.copy())

    def _brake_to_stop(self, dt: float) -> Command:
        """One period of a controlled stop; the command at rest ends it."""
        reason = self._stopping
        command = self._hold(dt, State.HALTED, f"stopping: {reason}")
        if not np.any(command.qd):
            self.stop(reason)
        return command

    def _accept(self, step, state: State, reason: str) -> Command:
        self.q_cmd, self.qd = np.array(step.q_next), np.array(step.qd)
        self._set(state, reason)
        return Command(self.q_cmd.copy(), self.qd.copy())

    def _check(self, q_next: np.ndarray, qd: np.ndarray, dt: float) -> str:
        """Why the command breaks a limit ('' when it does not), independently of the QP."""
        lim = self.limits
        checks: Tuple[Tuple[str, Callable[[], np.ndarray]], ...] = (
            ("position limit", lambda: np.maximum(lim.lower - q_next, q_next - lim.upper)),
            ("velocity limit", lambda: np.abs(qd) - lim.velocity),
            ("acceleration limit", lambda: np.abs(qd - self.qd) - lim.acceleration * dt),
        )
        if not np.isfinite(q_next).all() or not np.isfinite(qd).all():
            return "the step returned a non-finite command: holding"
        for what, excess in checks:
            over = excess()
            worst = int(np.argmax(over))
            if over[worst] > CHECK_SLACK:
                return (f"the command would exceed the {what} of "
                        f"{lim.joint_names[worst]} by {over[worst]:.2e}: holding")
        return ""

    def _figures(self, step) -> None:
        rep = self.report
        rep.position_error = float(step.error_m)
        rep.orientation_error = float(step.error_rad)
        rep.clearance = float(getattr(step, "clearance_m", math.inf))
        rep.manipulability = float(getattr(step, "manipulability", math.nan))

    def _set(self, state: State, reason: str) -> None:
        self.report.state, self.report.reason = state, reason
