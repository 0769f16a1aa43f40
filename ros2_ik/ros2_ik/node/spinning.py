"""How ``ik_node`` runs its callbacks: one executor thread and one goal worker.

The executor thread runs every callback: ComputeIK (solved inline, no hand-off, when its
budget is at most 50 ms; longer ones on their own thread, see long_solves.py),
joint_states, timers, parameters, scene input and the action's goal/cancel/result
requests.  Long ConstrainedIK solves run on :class:`GoalWorker` (see action_server.py),
so they never hold up a service reply, and a cancel is taken at once by the executor
thread while the solve polls it.

The executor is rclpy's ``EventsExecutor`` where it exists (rclpy >= 9): entities call
back when they have work, with no Python wait set rebuilt per callback.  Profiled under
``make load``, the ``MultiThreadedExecutor`` it replaces spent more time choosing and
handing over callbacks than a Panda solve takes.  Older rclpy: ``SingleThreadedExecutor``.

The servo loop (250 Hz) runs on a third thread (node/periodic.py): on the executor
thread a tick would wait behind the callback ahead of it (a ComputeIK solve of 1-2 ms),
which is the period's jitter.
"""
from __future__ import annotations

import queue
import threading
import traceback
from typing import Callable, Optional

import rclpy
from rclpy.context import Context
from rclpy.executors import Executor, ExternalShutdownException, SingleThreadedExecutor
from rclpy.task import Future

#: Longest single wait of the spin loop [s].  Any finite value: see :func:`spin`.
SPIN_SLICE_S = 60.0


def make_executor(context: Optional[Context] = None) -> Executor:
    """Return an ``EventsExecutor`` when this rclpy has one, else a single-threaded one.

    ``context``: rclpy's context to run in (None: the default one, as ik_node's).
    """
    try:
        from rclpy.experimental import EventsExecutor
    except ImportError:
        return SingleThreadedExecutor(context=context)
    return EventsExecutor(context=context)


def spin(executor: Executor) -> None:
    """Run callbacks until the context shuts down.

    Waits in finite slices: ``EventsExecutor.spin()`` (rclpy 9.1.2 wheels) waits on
    a condition variable until ``time_point::max()``, which overflows in that build and
    turns the wait into a busy loop that starves the event queue (nothing is ever
    dispatched).  A deadline ``SPIN_SLICE_S`` ahead does not overflow.  Raises
    ``ExternalShutdownException`` on shutdown, as ``spin()`` does.  A callback's exception
    is logged and spinning goes on (:func:`_log_callback_failure`).
    """
    never = Future()
    while rclpy.ok(context=executor.context):
        try:
            executor.spin_until_future_complete(never, timeout_sec=SPIN_SLICE_S)
        except ExternalShutdownException:
            raise
        except Exception as exc:  # noqa: BLE001 - a callback's bug must not end the node
            _log_callback_failure(exc)


def _log_callback_failure(exc: Exception) -> None:
    """Log a callback's exception with its traceback; spinning goes on.

    rclpy re-raises a callback's exception out of the executor, which ended ``spin`` and
    with it the node (every answer of the node's own services already catches its
    errors; this is the net under the rest: a subscription, a timer, a plug-in).
    """
    rclpy.logging.get_logger("ik_node").error(
        "a callback raised; the node goes on serving:\n"
        + "".join(traceback.format_exception(exc)))


def answered(response, exc: Exception):
    """Return ``response`` as INTERNAL_ERROR for ``exc`` raised while answering, logged.

    For async service callbacks (ComputeIK's, ComputeIKPath's), which must never raise:
    rclpy 9.1.2's ``EventsExecutor`` ends the process with a segmentation fault when one
    does (a ComputeIKPath whose markers could not be drawn took ik_node down so).
    ``response``: the service's reply message (``error_code``, ``message``).
    """
    from ros2_ik.node.error_codes import error_reply
    from ros2_ik_interfaces.msg import IKErrorCode
    _log_callback_failure(exc)
    return error_reply(response, IKErrorCode.INTERNAL_ERROR, f"{type(exc).__name__}: {exc}")


class GoalWorker:
    """One daemon thread running submitted jobs in order (the action's solves).

    Daemon: a solve still running at exit does not hold the process; ``stop()``
    asks the owner's stop flag first so that it ends within a poll of the solver.
    """

    def __init__(self, name: str) -> None:
        self._jobs: "queue.SimpleQueue[Optional[Callable[[], None]]]" = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def submit(self, job: Callable[[], None]) -> None:
        """Run ``job()`` on the worker after the jobs already submitted."""
        self._jobs.put(job)

    def stop(self, timeout_s: float = 2.0) -> None:
        """Finish the queued jobs and end the thread (waits at most ``timeout_s``)."""
        self._jobs.put(None)
        if self._thread is not threading.current_thread():
            self._thread.join(timeout_s)

    def _run(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                return
            try:
                job()
            except Exception:  # noqa: BLE001 - one bad job must not end the worker
                traceback.print_exc()
