"""Optional FollowJointTrajectory execution (needs ``control_msgs``, absent on some installs).

When ``controller_action`` names a FollowJointTrajectory server and control_msgs is
importable, safe trajectories go there as goals instead of the topic; the outcome is
logged and published on ``~/execution_result`` (std_msgs/String).
"""
from __future__ import annotations

from typing import Callable, Optional

from action_msgs.msg import GoalStatus
from std_msgs.msg import String

#: control_msgs/action/FollowJointTrajectory result error codes.
RESULT_CODES = {0: "SUCCESSFUL", -1: "INVALID_GOAL", -2: "INVALID_JOINTS",
                -3: "OLD_HEADER_TIMESTAMP", -4: "PATH_TOLERANCE_VIOLATED",
                -5: "GOAL_TOLERANCE_VIOLATED"}
STATUS_NAMES = {GoalStatus.STATUS_SUCCEEDED: "succeeded", GoalStatus.STATUS_ABORTED: "aborted",
                GoalStatus.STATUS_CANCELED: "canceled"}


def describe(action: str, status: int, error_code: int, error_string: str) -> str:
    """One line on how a FollowJointTrajectory goal ended."""
    text = (f"{action}: {STATUS_NAMES.get(status, f'status {status}')}, "
            f"{RESULT_CODES.get(error_code, f'error_code {error_code}')}")
    return f"{text} ({error_string})" if error_string else text


class TrajectoryActionSender:
    """Sends trajectories as FollowJointTrajectory goals and reports their outcome."""

    def __init__(self, node, action_name: str, action_type, callback_group) -> None:
        from rclpy.action import ActionClient

        self._node, self._name, self._type = node, action_name, action_type
        self._client = ActionClient(node, action_type, action_name,
                                    callback_group=callback_group)
        self._result_pub = node.create_publisher(String, "~/execution_result", 10)

    def send(self, trajectory, ended: Callable[[], None] = lambda: None) -> str:
        """Send one goal; returns '' or why it could not be sent.

        ``ended`` is called once the goal is rejected or has ended (any status).
        """
        if not self._client.server_is_ready():
            return f"the FollowJointTrajectory server {self._name} is not available"
        future = self._client.send_goal_async(self._type.Goal(trajectory=trajectory))
        future.add_done_callback(lambda done: self._on_response(done, ended))
        return ""

    def _on_response(self, future, ended: Callable[[], None]) -> None:
        handle = future.result()
        if not handle.accepted:
            ended()
            self._report(f"{self._name}: goal rejected")
            return
        handle.get_result_async().add_done_callback(lambda done: self._on_result(done, ended))

    def _on_result(self, future, ended: Callable[[], None]) -> None:
        ended()
        wrapped = future.result()
        self._report(describe(self._name, wrapped.status, wrapped.result.error_code,
                              wrapped.result.error_string))

    def _report(self, text: str) -> None:
        self._node.get_logger().info(text)
        self._result_pub.publish(String(data=text))


def make_sender(node, action_name: str, callback_group) -> Optional[TrajectoryActionSender]:
    """Return a sender when ``action_name`` is set and control_msgs is installed, else None."""
    if not action_name:
        return None
    try:
        from control_msgs.action import FollowJointTrajectory
    except ImportError:
        node.get_logger().warning(f"controller_action {action_name} ignored: control_msgs is "
                                  "not installed; trajectories go to controller_topic")
        return None
    return TrajectoryActionSender(node, action_name, FollowJointTrajectory, callback_group)
