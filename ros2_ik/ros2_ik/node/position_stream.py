"""Playing a timed move to a forward position controller, one command per period.

A forward position controller writes each Float64MultiArray to the hardware as it comes:
sent the solution alone, the arm is asked to be there at once (a step of up to
``execute_max_joint_jump``).  :class:`PositionStream` sends instead the move a
JointTrajectoryController would make of the same JointTrajectory (its cubics,
:class:`.execution.Move`), sampled every period on its own thread
(:class:`.periodic.PeriodicThread`: a solve on the executor does not delay it), so
position mode keeps the same velocity and acceleration limits as trajectory mode.
"""
from __future__ import annotations

import threading
import time
from typing import Callable, Mapping, Optional, Sequence

import numpy as np
from std_msgs.msg import Float64MultiArray

from ros2_ik.node import execution
from ros2_ik.node.execution import Move
from ros2_ik.node.periodic import PeriodicThread


class PositionStream:
    """One move at a time, published by ``publish`` at ``rate_hz`` [Hz] until it ends."""

    def __init__(self, publish: Callable[[Float64MultiArray], None], rate_hz: float,
                 log_error: Callable[[str], None] = print) -> None:
        self._publish, self._period = publish, 1.0 / rate_hz
        self._log_error = log_error
        self._lock = threading.Lock()
        self._loop: Optional[PeriodicThread] = None
        self._move: Optional[Move] = None
        self._t0 = 0.0  # time.monotonic() at the move's start

    def play(self, order: Sequence[str], move: Move, held: Mapping[str, float],
             deceleration: np.ndarray) -> str:
        """Start sending ``move``; '' or why not.

        ``order``: the controller's joints; those not in the move are held at ``held``
        (their last joint_states).  ``deceleration`` (n,) [rad/s^2 or m/s^2]: how hard
        :meth:`brake` may stop it.  Refused while a move is under way: its commands are
        the arm's, and a new move from rest would jump its velocity (:meth:`brake` first).
        """
        try:
            execution.position_command(order, move.names, move.start, held)
        except KeyError as exc:
            return str(exc)
        with self._lock:
            left = self.time_left()
            if left > 0.0:
                return (f"a move is under way ({left:.2f} s left): position mode sends one "
                        f"move at a time (~/stop_execution brakes it)")
            self._start(order, move, held, np.asarray(deceleration, dtype=float))
        return ""

    def brake(self) -> Optional[Move]:
        """Replace the move under way by its stop (:meth:`Move.braking`); None if none."""
        with self._lock:
            if self.time_left() <= 0.0:
                return None
            stop = self._move.braking(time.monotonic() - self._t0, self._deceleration)
            self._start(self._order, stop, self._held, self._deceleration)
            return stop

    def time_left(self) -> float:
        """Seconds [s] until the move under way ends (0: none)."""
        if self._loop is None or not self._loop.running or self._move is None:
            return 0.0
        return max(0.0, self._t0 + self._move.duration_s - time.monotonic())

    @property
    def moving(self) -> bool:
        """True while a move is being sent."""
        return self._loop is not None and self._loop.running

    def stop(self) -> None:
        """End the move under way (the controller holds its last command)."""
        if self._loop is not None:
            self._loop.stop()

    def _start(self, order: Sequence[str], move: Move, held: Mapping[str, float],
               deceleration: np.ndarray) -> None:
        self.stop()
        self._order, self._held, self._move = list(order), dict(held), move
        self._deceleration = deceleration
        t0 = self._t0 = time.monotonic()
        loop: list = []  # the thread, once started (its first tick may come before)

        def tick() -> None:
            t = time.monotonic() - t0
            q, _ = move.state_at(t)
            try:
                self._publish(execution.position_command(order, move.names, q, held))
            except Exception as exc:  # noqa: BLE001 - a failed publish ends the move
                self._log_error(f"position stream: {type(exc).__name__}: {exc}")
                t = move.duration_s
            if t >= move.duration_s and loop:
                loop[0].stop()

        self._loop = PeriodicThread(self._period, tick, "position_stream")
        loop.append(self._loop)
