"""The whole-body servo's states (no ROS): start where the robot is, follow pose targets.

The node's servo loop ticks it as it ticks :class:`.supervisor.Supervisor` for an arm,
with the same :class:`.supervisor.Report`, :class:`.supervisor.Target` and
:class:`.supervisor.Command` (group vectors: the base's coordinates, then the joints).
Each tick steps :class:`.whole_body.WholeBodyServo` from the last command (open loop, as
the arm servo): contacts held where they were at :meth:`start`, the CoM inside their
polygon, the hand toward the newest pose target.  It holds the last command (HALTED)
while joint_states are stale, without a target, with a stale one, or when the step's QP
has no solution; twist targets are refused (pose targets only).
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from ros2_ik.core.servo.supervisor import Command, Report, State, Target
from ros2_ik.core.servo.whole_body import WholeBodyServo


class WholeBodySupervisor:
    """States and commands of one whole-body servo on a whole-body group."""

    def __init__(self, servo: WholeBodyServo, group, target_timeout_s: float) -> None:
        """Bind the step (on the group's full model) and the group (its vector layout)."""
        self.servo, self.group = servo, group
        self.target_timeout_s = float(target_timeout_s)
        self.report = Report()
        self.q_cmd: Optional[np.ndarray] = None  # group vector [base coordinates, joints]
        self.qd = np.zeros(0)
        self.last_step = None  # the last WholeBodyStep (its CoM margin, contact drift)
        self._q_full: Optional[np.ndarray] = None
        self._target: Optional[Target] = None
        self._paused = False
        self._base = int(group.base_nq)

    def start(self, q_measured: Optional[np.ndarray]) -> str:
        """Hold the contacts where ``q_measured`` (group vector) puts them; why not, or ''."""
        if q_measured is None:
            return "no fresh joint_states (and base pose) for the group"
        q_full = self.group.to_full_q(np.asarray(q_measured, dtype=float))
        try:
            self.servo.hold(q_full)
        except ValueError as exc:
            return str(exc)
        self.servo.reset()
        self._q_full, self.q_cmd = q_full, self.group.from_full_q(q_full)
        self.qd = np.zeros(len(self.q_cmd))
        self._target, self._paused = None, False
        self._set(State.HALTED, "waiting for a target pose")
        return ""

    def stop(self, reason: str = "stopped on request") -> None:
        """Send nothing more (the controllers keep the last command)."""
        self._set(State.STOPPED, reason)

    def request_stop(self, reason: str = "stopped on request") -> None:
        """Stop now: the commands are positions, and the last one is held."""
        self.stop(reason)

    def cancel_stop(self) -> None:
        """Nothing to cancel: a stop is immediate."""

    def pause(self, paused: bool) -> str:
        """Hold the last command while paused; returns why not, or ''."""
        if self.report.state == State.STOPPED:
            return "servo is stopped: call start first"
        self._paused = bool(paused)
        self._set(State.PAUSED if paused else State.HALTED,
                  "paused" if paused else "resumed: waiting for a target pose")
        return ""

    def set_target(self, target: Target) -> None:
        """Take the newest target; a twist is refused (the reason goes to the report)."""
        if target.pose is None:
            self._set(self.report.state, "whole-body servo: twist targets are not "
                      "supported, send target_pose")
            return
        self._target = target

    def tick(self, now: float, q_measured: Optional[np.ndarray],
             dt: float) -> Optional[Command]:
        """One period: the next command, the last one held, or None when stopped."""
        if self.report.state == State.STOPPED:
            return None
        if self._paused:
            return self._hold(State.PAUSED, "paused")
        if q_measured is None:
            return self._hold(State.HALTED, "joint_states are stale")
        target = self._target
        if target is None:
            return self._hold(State.HALTED, "waiting for a target pose")
        if now - target.stamp > self.target_timeout_s:
            return self._hold(State.HALTED, "the target is stale")
        step = self.servo.step(self._q_full, target.pose, dt)
        self.last_step = step
        self.report.position_error, self.report.orientation_error = (step.error_m,
                                                                     step.error_rad)
        if step.flag != 1:
            return self._hold(State.HALTED, f"the step's QP has no solution (daqp flag "
                                            f"{step.flag}): contacts or CoM bound")
        q_next = self.group.from_full_q(step.q_next)
        qd = np.zeros(len(q_next))
        qd[self._base:] = (q_next[self._base:] - self.q_cmd[self._base:]) / dt
        self._q_full, self.q_cmd, self.qd = step.q_next, q_next, qd
        self._set(State.RUNNING, "")
        return Command(q_next, qd)

    def _hold(self, state: State, reason: str) -> Command:
        self.servo.reset()
        self.qd = np.zeros(len(self.q_cmd))
        self._set(state, reason)
        return Command(self.q_cmd, self.qd)

    def _set(self, state: State, reason: str) -> None:
        self.report.state, self.report.reason = state, reason
