"""The ``constrained_ik`` action server: one goal at a time, a newer goal preempts.

Policy (documented in the README): accepting a new goal asks the running one to stop;
the solver polls that request about every millisecond, and the preempted goal ends
ABORTED with CANCELLED and the message "preempted by a newer goal".  A client cancel
ends the goal CANCELED with the best configuration found so far.

Threads: goal, cancel and result requests are handled by the node's executor thread;
the solves run one after another on a :class:`GoalWorker`, so a long goal never holds
up ComputeIK, joint_states or the cancel request that stops it.
"""
from __future__ import annotations

import threading
from typing import Optional

from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.action.server import ServerGoalHandle
from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy

from ros2_ik.node.constrained_ik import solve_goal
from ros2_ik.node.spinning import GoalWorker
from ros2_ik_interfaces.action import ConstrainedIK
from ros2_ik_interfaces.msg import IKErrorCode


class WorkerActionServer(ActionServer):
    """An ``ActionServer`` whose execute callbacks run on a :class:`GoalWorker`.

    rclpy schedules them as tasks of the node's executor, which would run a
    seconds-long solve on the executor thread (the EventsExecutor has one).  The rest
    of rclpy's goal life cycle (state changes, result future, result response) is
    unchanged: it is rclpy's own ``_execute_goal`` run on the worker.
    """

    def __init__(self, *args, worker: GoalWorker, **kwargs) -> None:
        self._worker = worker
        #: Set when the node shuts down: a goal still running then cannot end cleanly
        #: (its context is gone), and that is not reported as an error.
        self.closing = False
        super().__init__(*args, **kwargs)

    def notify_execute(self, goal_handle, execute_callback) -> None:
        """Queue the goal's execution on the worker (rclpy calls this from ``execute()``)."""
        callback = execute_callback or self._execute_callback
        if callback is not None:
            self._worker.submit(lambda: self._execute_on_worker(callback, goal_handle))

    def _execute_on_worker(self, callback, goal_handle) -> None:
        try:
            _run(self._execute_goal(callback, goal_handle))
        except _rclpy.RCLError:
            if not self.closing:
                raise


def _run(coroutine) -> None:
    """Run a coroutine that never suspends (a synchronous execute callback) to its end."""
    try:
        coroutine.send(None)
    except StopIteration:
        return
    coroutine.close()
    raise RuntimeError("the execute callback awaited something: use a plain function")


class ConstrainedIKServer:
    """Wires the action to :func:`solve_goal` on the node's current model and config."""

    def __init__(self, node, callback_group) -> None:
        self._node = node
        self._lock = threading.Lock()
        self._active: Optional[ServerGoalHandle] = None
        self._preempted: set = set()
        self._stopping = False
        self._worker = GoalWorker("constrained_ik")
        self._server = WorkerActionServer(
            node, ConstrainedIK, "constrained_ik",
            execute_callback=self._execute,
            goal_callback=lambda _goal: GoalResponse.ACCEPT,
            handle_accepted_callback=self._on_accepted,
            cancel_callback=lambda _handle: CancelResponse.ACCEPT,
            callback_group=callback_group, worker=self._worker)

    def _on_accepted(self, handle: ServerGoalHandle) -> None:
        with self._lock:
            if self._active is not None and self._active.is_active:
                self._preempted.add(bytes(self._active.goal_id.uuid))
            self._active = handle
        handle.execute()

    def _execute(self, handle: ServerGoalHandle) -> ConstrainedIK.Result:
        goal_id = bytes(handle.goal_id.uuid)

        def stop_requested() -> bool:
            return handle.is_cancel_requested or goal_id in self._preempted or self._stopping

        node = self._node
        result = solve_goal(node.robot.snapshot, node.robot.error, node.config, node.joints,
                            handle.request, stop_requested, handle.publish_feedback)
        with self._lock:
            preempted = goal_id in self._preempted
            self._preempted.discard(goal_id)
        if self._stopping:
            return result  # shutting down: no state to publish any more
        if handle.is_cancel_requested:
            handle.canceled()
        elif result.error_code.val == IKErrorCode.SUCCESS:
            handle.succeed()
        else:
            if preempted:
                result.message = "preempted by a newer goal; " + result.message
            handle.abort()
        return result

    def destroy(self) -> None:
        """Stop the running solve, end the worker, destroy the underlying action server."""
        self._stopping = self._server.closing = True
        self._worker.stop()
        self._server.destroy()
