"""Playing a timed move to a forward position controller, one command per period.

A forward position controller writes each Float64MultiArray to the hardware as it comes:
sent the solution alone, the arm is asked to be there at once (a step of up to
``execute_max_joint_jump``).  :class:`PositionStream` sends instead the move a
JointTrajectoryController would make of the same JointTrajectory (its cubics,
:func:`.execution.position_at`), sampled every period on its own thread
(:class:`.periodic.PeriodicThread`: a solve on the executor does not delay it), so
position mode keeps the same velocity and acceleration limits as trajectory mode.
"""
from __future__ import annotations

import threading
import time
from typing import Callable, Mapping, Optional, Sequence

import numpy as np
from std_msgs.msg import Float64MultiArray
from trajectory_msgs.msg import JointTrajectory

from ros2_ik.node import execution
from ros2_ik.node.periodic import PeriodicThread


class PositionStream:
    """One move at a time, published by ``publish`` at ``rate_hz`` [Hz] until it ends."""

    def __init__(self, publish: Callable[[Float64MultiArray], None], rate_hz: float,
                 log_error: Callable[[str], None] = print) -> None:
        self._publish, self._period = publish, 1.0 / rate_hz
        self._log_error = log_error
        self._lock = threading.Lock()
        self._loop: Optional[PeriodicThread] = None
        self._end = 0.0  # time.monotonic() when the move under way ends

    def play(self, order: Sequence[str], trajectory: JointTrajectory, start: np.ndarray,
             held: Mapping[str, float]) -> str:
        """Start sending ``trajectory`` (from ``start`` (n,), at rest); '' or why not.

        ``order``: the controller's joints; those not in the trajectory are held at
        ``held`` (their last joint_states).  Refused while a move is under way: its
        commands are the arm's, and a new move from rest would jump its velocity.
        """
        names = list(trajectory.joint_names)
        try:
            execution.position_command(order, names, start, held)
        except KeyError as exc:
            return str(exc)
        points = trajectory.points
        q_path = np.array([p.positions for p in points], dtype=float)
        times = np.array([p.time_from_start.sec + 1e-9 * p.time_from_start.nanosec
                          for p in points])
        velocities = np.array([p.velocities or [0.0] * len(names) for p in points],
                              dtype=float)
        with self._lock:
            left = self._end - time.monotonic()
            if self._loop is not None and self._loop.running and left > 0.0:
                return (f"a move is under way ({left:.2f} s left): position mode sends one "
                        f"move at a time")
            self.stop()
            t0 = time.monotonic()
            self._end = t0 + float(times[-1])

            def tick() -> None:
                t = time.monotonic() - t0
                q = execution.position_at(start, q_path, velocities, times, t)
                try:
                    self._publish(execution.position_command(order, names, q, held))
                except Exception as exc:  # noqa: BLE001 - a failed publish ends the move
                    self._log_error(f"position stream: {type(exc).__name__}: {exc}")
                    loop.stop()
                    return
                if t >= times[-1]:
                    loop.stop()

            loop = self._loop = PeriodicThread(self._period, tick, "position_stream")
        return ""

    @property
    def moving(self) -> bool:
        """True while a move is being sent."""
        return self._loop is not None and self._loop.running

    def stop(self) -> None:
        """End the move under way (the controller holds its last command)."""
        if self._loop is not None:
            self._loop.stop()
