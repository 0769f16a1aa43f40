"""The ``constrained_ik`` action server: one goal at a time, a newer goal preempts.

Policy (documented in the README): accepting a new goal asks the running one to stop;
the solver polls that request about every millisecond, and the preempted goal ends
ABORTED with CANCELLED and the message "preempted by a newer goal".  A client cancel
ends the goal CANCELED with the best configuration found so far.
"""
from __future__ import annotations

import threading
from typing import Optional

from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.action.server import ServerGoalHandle

from ros2_ik.node.constrained_ik import solve_goal
from ros2_ik_interfaces.action import ConstrainedIK
from ros2_ik_interfaces.msg import IKErrorCode


class ConstrainedIKServer:
    """Wires the action to :func:`solve_goal` on the node's current model and config."""

    def __init__(self, node, callback_group) -> None:
        self._node = node
        self._lock = threading.Lock()
        self._active: Optional[ServerGoalHandle] = None
        self._preempted: set = set()
        self._server = ActionServer(
            node, ConstrainedIK, "constrained_ik",
            execute_callback=self._execute,
            goal_callback=lambda _goal: GoalResponse.ACCEPT,
            handle_accepted_callback=self._on_accepted,
            cancel_callback=lambda _handle: CancelResponse.ACCEPT,
            callback_group=callback_group)
        # rclpy can leave a cancel request untaken while a goal executes until something
        # else wakes the executor (make load: cancel p99 ~1 s, set by the 1 Hz
        # ~/diagnostics timer); a 20 ms no-op timer bounds that wait (p99 ~40 ms).
        self._wake = node.create_timer(0.02, lambda: None, callback_group=callback_group)

    def _on_accepted(self, handle: ServerGoalHandle) -> None:
        with self._lock:
            if self._active is not None and self._active.is_active:
                self._preempted.add(bytes(self._active.goal_id.uuid))
            self._active = handle
        handle.execute()

    def _execute(self, handle: ServerGoalHandle) -> ConstrainedIK.Result:
        goal_id = bytes(handle.goal_id.uuid)

        def stop_requested() -> bool:
            return handle.is_cancel_requested or goal_id in self._preempted

        node = self._node
        result = solve_goal(node.robot.snapshot, node.robot.error, node.config, node.joints,
                            handle.request, stop_requested, handle.publish_feedback)
        with self._lock:
            preempted = goal_id in self._preempted
            self._preempted.discard(goal_id)
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
        """Destroy the underlying action server."""
        self._server.destroy()
