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

from std_msgs.msg import Float64MultiArray

from ros2_ik.node import execution
from ros2_ik.node.execution import Move
from ros2_ik.node.periodic import PeriodicThread


class PositionStream:
    """One move at a time, published by ``publish`` at ``rate_hz`` [Hz] until it ends.

    Only the transport: which move is under way, and how a new one starts from it, is the
    caller's (:class:`.outputs.Outputs`, the same for a JointTrajectoryController).
    """

    def __init__(self, publish: Callable[[Float64MultiArray], None], rate_hz: float,
                 log_error: Callable[[str], None] = print) -> None:
        self._publish, self._period = publish, 1.0 / rate_hz
        self._log_error = log_error
        self._lock = threading.Lock()
        self._loop: Optional[PeriodicThread] = None

    def play(self, order: Sequence[str], move: Move, held: Mapping[str, float],
             t0: float) -> str:
        """Send ``move``, begun at ``t0`` (``time.monotonic()`` [s]), in place of any other.

        ``order``: the controller's joints; those not in the move are held at ``held``
        (their last joint_states).  A move that replaces another starts from its state (a
        braking's, :meth:`.execution.Sent.braking`): the commands stay continuous.  '' or
        why not.
        """
        try:
            execution.position_command(order, move.names, move.start, held)
        except KeyError as exc:
            return str(exc)
        with self._lock:
            self._start(list(order), move, dict(held), t0)
        return ""

    def stop(self) -> None:
        """End the move under way (the controller holds its last command)."""
        if self._loop is not None:
            self._loop.stop()

    def _start(self, order: Sequence[str], move: Move, held: Mapping[str, float],
               t0: float) -> None:
        self.stop()
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
