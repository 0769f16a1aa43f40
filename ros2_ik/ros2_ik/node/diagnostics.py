"""``~/diagnostics``: once a second, how the node kept up with ``joint_states``.

A ``std_msgs/String`` holding JSON (``diagnostic_msgs`` is not in every install)::

    {"joint_states": {"messages": 500, "max_gap_s": 0.0031, "window_s": 1.0}}

``max_gap_s`` is the longest time between two joint_states callbacks in the window:
with a 500 Hz driver it stays near 2 ms unless solves starve the callback (the load
benchmark reads it).
"""
from __future__ import annotations

import json
import threading
import time

from std_msgs.msg import String


class CallbackGaps:
    """Count of callbacks and the longest gap between two, since the last ``take``."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last = None
        self._count = 0
        self._max_gap_s = 0.0
        self._window_start = time.monotonic()

    def tick(self) -> None:
        """Record one callback."""
        now = time.monotonic()
        with self._lock:
            if self._last is not None:
                self._max_gap_s = max(self._max_gap_s, now - self._last)
            self._last = now
            self._count += 1

    def take(self) -> dict:
        """Return the window's figures; starts a new window."""
        now = time.monotonic()
        with self._lock:
            out = {"messages": self._count, "max_gap_s": round(self._max_gap_s, 6),
                   "window_s": round(now - self._window_start, 3)}
            self._count, self._max_gap_s, self._window_start = 0, 0.0, now
        return out


class Diagnostics:
    """Publishes the joint_states figures of ``node`` on ``~/diagnostics`` every second."""

    def __init__(self, node, callback_group=None, period_s: float = 1.0) -> None:
        self.joint_states = CallbackGaps()
        self._pub = node.create_publisher(String, "~/diagnostics", 10)
        node.create_timer(period_s, self._publish, callback_group=callback_group)

    def _publish(self) -> None:
        self._pub.publish(String(data=json.dumps({"joint_states": self.joint_states.take()})))
