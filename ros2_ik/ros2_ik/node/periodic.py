"""A fixed-rate loop on its own thread: the servo's clock.

Why not an executor timer: on the executor thread a tick waits behind whatever callback
runs when it falls due (a ComputeIK solve of 1-2 ms, a burst of joint_states), and that
wait is the servo period's jitter.  On its own thread a tick waits at most for the GIL
(handed over every 0.5 ms: node/main.py) or a C call holding it.

Deadlines are absolute (start + k * period), so lateness does not accumulate; a tick
that falls more than one period behind skips the missed deadlines instead of bursting.
Optionally real-time (SCHED_FIFO), against the other processes of the machine.
"""
from __future__ import annotations

import os
import threading
import time
from typing import Callable

#: Shortest wait between two ticks [s], even when late.
MIN_SLEEP_S = 1e-4


class PeriodicThread:
    """Calls ``tick()`` every ``period_s`` [s] on a daemon thread until :meth:`stop`."""

    def __init__(self, period_s: float, tick: Callable[[], None], name: str,
                 priority: int = 0) -> None:
        """Start calling ``tick`` now; exceptions are the caller's to catch inside it.

        ``priority`` 1-99: run the thread under SCHED_FIFO at that priority (needs the
        rtprio permission, as ros2_control's real-time threads do); :attr:`priority_error`
        says why it could not be set.  0: normal scheduling.
        """
        self.period_s, self.priority = period_s, priority
        self.priority_error = ""
        self._priority_set = threading.Event()
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

    def wait_started(self, timeout_s: float = 1.0) -> None:
        """Wait until the thread tried to set its priority (then read priority_error)."""
        self._priority_set.wait(timeout_s)

    def _set_priority(self) -> None:
        if self.priority > 0:
            try:
                os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(self.priority))
            except (OSError, AttributeError) as exc:
                self.priority_error = f"SCHED_FIFO {self.priority} refused ({exc})"
        self._priority_set.set()

    def _run(self) -> None:
        self._set_priority()
        deadline = time.monotonic()
        while not self._stop.is_set():
            self._tick()
            deadline += self.period_s
            now = time.monotonic()
            if now - deadline > self.period_s:  # more than a period late: skip, no burst
                missed = int((now - deadline) // self.period_s)
                self.skipped += missed
                deadline += missed * self.period_s
            # At least a little sleep: a real-time thread that ran late must still let the
            # executor thread (ComputeIK, joint_states) run.
            if self._stop.wait(max(MIN_SLEEP_S, deadline - time.monotonic())):
                return
