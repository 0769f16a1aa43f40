"""A fixed-rate loop on its own thread: the servo's clock.

Why not an executor timer: on the executor thread a tick waits behind whatever callback
runs when it falls due (a ComputeIK solve of 1-2 ms, a burst of joint_states), and that
wait is the servo period's jitter.  On its own thread a tick waits at most for the GIL
(handed over every 0.5 ms: node/main.py) or a C call holding it.

Deadlines are absolute (start + k * period), so lateness does not accumulate; a tick
that falls more than one period behind skips the missed deadlines instead of bursting.
"""
from __future__ import annotations

import threading
import time
from typing import Callable


class PeriodicThread:
    """Calls ``tick()`` every ``period_s`` [s] on a daemon thread until :meth:`stop`."""

    def __init__(self, period_s: float, tick: Callable[[], None], name: str) -> None:
        """Start calling ``tick`` now; exceptions are the caller's to catch inside it."""
        self.period_s = period_s
        self._tick = tick
        self._stop = threading.Event()
        self.skipped = 0  # deadlines dropped because a tick ran more than a period late
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def stop(self, timeout_s: float = 1.0) -> None:
        """End the loop (joins the thread unless called from it)."""
        self._stop.set()
        if self._thread is not threading.current_thread():
            self._thread.join(timeout_s)

    @property
    def running(self) -> bool:
        """True until :meth:`stop` was called."""
        return not self._stop.is_set()

    def _run(self) -> None:
        deadline = time.monotonic()
        while not self._stop.is_set():
            self._tick()
            deadline += self.period_s
            now = time.monotonic()
            if now - deadline > self.period_s:  # more than a period late: skip, no burst
                missed = int((now - deadline) // self.period_s)
                self.skipped += missed
                deadline += missed * self.period_s
            if self._stop.wait(max(0.0, deadline - time.monotonic())):
                return
