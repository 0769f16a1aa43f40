"""ComputeIK requests with a long budget, solved off the executor thread.

The executor thread solves a ComputeIK inline (no hand-over: the quickest reply), but a
request may ask for up to ``max_timeout`` of solving (an unreachable target uses all of it).
Inline, the node would go that long without joint_states (the servo halts on joint_states
older than ``servo_joint_state_timeout``), servo targets, cancels, parameters or other
clients.  A request whose budget is over :data:`INLINE_SOLVE_MAX_S` is solved on a worker
thread instead, and the service callback awaits it.

This rclpy's ``EventsExecutor`` resumes an awaiting callback only on an event of its own: a
future completed by another thread does not wake it, and it has no guard conditions.  So the
worker, having set the result, resets a one-shot timer of :data:`WAKE_S` (timers may be
reset from any thread); a :data:`POLL_S` timer runs too while a solve is pending, so that
a lost wake-up would cost one poll, not a reply.
"""
from __future__ import annotations

import math
import threading
from typing import Any, Callable, List

from rclpy.task import Future

from ros2_ik.node.spinning import GoalWorker

#: Longest request budget [s] solved on the executor thread (the default ``timeout``).
INLINE_SOLVE_MAX_S = 0.05
#: Delay [s] of the one-shot timer the worker resets when a solve is done.
WAKE_S = 0.0002
#: How often [s] the executor looks for a finished long solve while one is pending.
POLL_S = 0.05


def budget_s(request_timeout: float, default_s: float, max_s: float) -> float:
    """Return the solve budget [s] of a request (``<= 0`` or not finite: the default)."""
    asked = request_timeout if math.isfinite(request_timeout) and request_timeout > 0 \
        else default_s
    return min(asked, max_s)


class LongSolves:
    """One worker thread for long ComputeIK solves, awaited by the service callback."""

    def __init__(self, node, callback_group) -> None:
        """Create the worker and the (idle) poll timer on ``node``."""
        self._worker = GoalWorker("compute_ik_long")
        self._thread_ident = None
        self._pending: List[Future] = []
        self._wake = node.create_timer(WAKE_S, self._woken, callback_group=callback_group)
        self._wake.cancel()
        self._timer = node.create_timer(POLL_S, self._poll, callback_group=callback_group)
        self._timer.cancel()

    async def run(self, solve: Callable[..., Any], *args: Any) -> Any:
        """Return ``solve(*args)``, computed on the worker (call on the executor thread)."""
        done = Future()
        self._pending.append(done)
        self._timer.reset()

        def job() -> None:
            self._thread_ident = threading.get_ident()
            try:
                done.set_result(solve(*args))
            except BaseException as exc:  # noqa: BLE001 - re-raised in the callback
                done.set_exception(exc)
            try:
                self._wake.reset()
            except Exception:  # noqa: BLE001 - the node is shutting down: nobody waits
                pass
        self._worker.submit(job)
        return await done

    def on_worker(self) -> bool:
        """Return whether this is the worker thread (no executor tasks created there)."""
        return threading.get_ident() == self._thread_ident

    def stop(self) -> None:
        """End the worker (a solve under way ends within its budget: daemon thread)."""
        self._timer.cancel()
        self._wake.cancel()
        self._worker.stop(timeout_s=0.5)

    def _woken(self) -> None:
        self._wake.cancel()  # one shot: the executor now resumes the finished callbacks
        self._poll()

    def _poll(self) -> None:
        self._pending = [f for f in self._pending if not f.done()]
        if not self._pending:
            self._timer.cancel()
