"""Time budget of a solve: deadline, cancel polling, periodic feedback (periods below)."""
from __future__ import annotations

import time
from typing import Callable, Optional

#: Period of the cancel poll [s].
POLL_PERIOD_S = 1e-3
#: Period of the feedback hook [s].
FEEDBACK_PERIOD_S = 10e-3


class Budget:
    """Cheap ``expired()`` for inner loops: one clock read until the next poll time."""

    def __init__(self, timeout_s: float, cancel: Optional[Callable[[], bool]] = None,
                 feedback: Optional[Callable[[], None]] = None, start: Optional[float] = None):
        """Start the clock now, or at ``start`` (``time.perf_counter()``, an earlier time).

        ``feedback`` is a no-argument hook called every ``FEEDBACK_PERIOD_S``.
        """
        self.start = time.perf_counter() if start is None else start
        self.deadline = self.start + timeout_s
        self._cancel = cancel
        self._feedback = feedback
        self._next_poll = min(self.deadline, self.start + POLL_PERIOD_S)
        self._next_feedback = self.start + FEEDBACK_PERIOD_S
        self.cancelled = False
        self.timed_out = False

    def expired(self) -> bool:
        """Return True once the deadline passed or ``cancel()`` returned True."""
        now = time.perf_counter()
        if now < self._next_poll:
            return False
        return self._poll(now)

    def _poll(self, now: float) -> bool:
        if self.cancelled or self.timed_out:
            return True
        if now >= self.deadline:
            self.timed_out = True
            return True
        if self._cancel is not None and self._cancel():
            self.cancelled = True
            return True
        if self._feedback is not None and now >= self._next_feedback:
            self._next_feedback = now + FEEDBACK_PERIOD_S
            self._feedback()
        self._next_poll = min(self.deadline, now + POLL_PERIOD_S)
        return False

    def elapsed(self) -> float:
        """Seconds since the start."""
        return time.perf_counter() - self.start

    @property
    def stopped(self) -> bool:
        """True after ``expired()`` returned True once."""
        return self.cancelled or self.timed_out
