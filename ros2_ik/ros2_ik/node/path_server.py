"""The ``compute_ik_path`` service of ik_node: solve, then execute and draw when asked.

Solved on the long-solve worker (a path takes longer than one pose, and would otherwise
hold joint_states and the servo loop).  ``execute`` goes through the node's guarded
execution (:meth:`Outputs.execute_path`); the tip path is drawn on ``~/markers``, and
the joint path is published as a ``moveit_msgs/DisplayTrajectory`` on ``~/display_path``
when moveit_msgs is installed (rviz's MoveIt Trajectory display animates it).
"""
from __future__ import annotations

import numpy as np
from geometry_msgs.msg import Point
from visualization_msgs.msg import Marker, MarkerArray

from ros2_ik.core.path import timing
from ros2_ik.node import execution
from ros2_ik.node.base_pose import has_base, marker_frames
from ros2_ik.node.compute_ik_path import PathAnswer, compute_ik_path, trajectory_msg
from ros2_ik.node.error_codes import CODE_NAMES
from ros2_ik.node.request_frames import placed_in_world
from ros2_ik.node.spinning import answered
from ros2_ik_interfaces.msg import IKErrorCode
from ros2_ik_interfaces.srv import ComputeIKPath


class PathServer:
    """Serves ComputeIKPath on ``node`` (an IKNode: config, joints, outputs, long solves)."""

    def __init__(self, node, callback_group, qos_profile) -> None:
        """Create the service."""
        self._node = node
        node.create_service(ComputeIKPath, "compute_ik_path", self._on_request,
                            qos_profile=qos_profile, callback_group=callback_group)
        self._display = _display_publisher(node)

    async def _on_request(self, request: ComputeIKPath.Request,
                          response: ComputeIKPath.Response) -> ComputeIKPath.Response:
        """Answer on the long-solve worker; never raises (:func:`spinning.answered`)."""
        try:
            return await self._node.long_solves.run(self._answer, request)
        except Exception as exc:  # noqa: BLE001 - the node must keep serving
            return answered(response, exc)

    def _answer(self, request: ComputeIKPath.Request) -> ComputeIKPath.Response:
        node = self._node
        answer = compute_ik_path(node.robot.snapshot, node.robot.error, node.config,
                                 node.joints, request)
        result = answer.result
        if result is not None and len(result.q_path):
            if request.execute:
                self._execute(answer, request.avoid_collisions)
            self._draw(request, answer)
        code = answer.response.error_code.val
        if code < 0:
            node.get_logger().warning(f"compute_ik_path: {CODE_NAMES.get(code, code)} "
                                      f"{answer.response.message}", throttle_duration_sec=1.0)
        return answer.response

    def _execute(self, answer: PathAnswer, avoid_collisions: bool = False) -> None:
        """Send a complete path, timed at the configured velocity scaling, when safe.

        ``avoid_collisions``: the move from the arm to the path's first point is checked
        too (:meth:`Outputs.move_check`; the path's own steps were, by the solve).
        """
        response, group, result = answer.response, answer.group, answer.result
        cfg = self._node.config
        current = self._node.joints.fresh(group.joint_names, cfg.joint_state_timeout)
        times, start = None, None
        if current is not None:
            start = np.array([current[n] for n in group.joint_names])
            times = timing.path_times(result.q_path, start, group.velocity_limits,
                                      cfg.velocity_scaling, group.acceleration_limits,
                                      cfg.acceleration_scaling, cfg.min_trajectory_duration)
        ok = response.error_code.val == IKErrorCode.SUCCESS
        reason = execution.duration_refusal(times[-1]) if ok and times is not None else ""
        notes: list = []
        if not reason:
            trajectory = trajectory_msg(group.joint_names, result.q_path,
                                        times if times is not None else
                                        np.zeros(len(result.q_path)), start)
            outputs = self._node.outputs
            reason = outputs.execute_path(group, trajectory, result.q_path, ok,
                                          outputs.move_check(group, avoid_collisions), notes)
        execution.note_outcome(response, reason, ok, IKErrorCode.EXECUTION_REFUSED, notes)

    def _draw(self, request: ComputeIKPath.Request, answer: PathAnswer) -> None:
        """Publish the path's markers and DisplayTrajectory when someone subscribes.

        A drawing failure is logged; the reply goes out as solved.
        """
        node = self._node
        try:
            if node.outputs.wants_markers():
                node.outputs.marker_pub.publish(self._markers(request, answer))
            if self._display is not None and self._display.get_subscription_count() > 0:
                self._display.publish(self._display_msg(answer))
        except Exception as exc:  # noqa: BLE001 - a display failure must not stop us
            node.get_logger().error(f"compute_ik_path markers: {type(exc).__name__}: {exc}",
                                    throttle_duration_sec=1.0)

    def _display_msg(self, answer: PathAnswer):
        """Return the path as a DisplayTrajectory, timed at the configured velocity scaling.

        It starts at the request's seed (the arm's state when the path was solved).
        """
        from moveit_msgs.msg import DisplayTrajectory, RobotTrajectory
        group, q_path = answer.group, answer.result.q_path
        cfg = self._node.config
        times = timing.path_times(q_path, answer.seed, group.velocity_limits,
                                  cfg.velocity_scaling, group.acceleration_limits,
                                  cfg.acceleration_scaling)
        msg = DisplayTrajectory(model_id=group.robot.model.name)
        msg.trajectory.append(RobotTrajectory(
            joint_trajectory=trajectory_msg(group.joint_names, q_path, times, answer.seed)))
        msg.trajectory_start.joint_state.name = list(group.joint_names)
        msg.trajectory_start.joint_state.position = [float(v) for v in answer.seed]
        return msg

    def _markers(self, request: ComputeIKPath.Request, answer: PathAnswer) -> MarkerArray:
        """Draw the reached tip path (blue line) and the requested waypoints (green points)."""
        group = answer.group
        snapshot, shown = self._node.robot.snapshot, request.header.frame_id
        T_world_shown = placed_in_world(snapshot, shown, has_base(group))
        if T_world_shown is None:  # a model frame, or none
            ref, shown = marker_frames(group, shown, snapshot.base_parent_frame)
        stamp = self._node.get_clock().now().to_msg()
        tip = group.tip if not request.tip_link else request.tip_link
        reached = [(group.fk(q, ref) if T_world_shown is None else T_world_shown).actInv(
            group.fk(q, tip)).translation for q in answer.result.q_path]
        asked = [(w.position.x, w.position.y, w.position.z) for w in request.waypoints]
        return MarkerArray(markers=[
            _line(shown, stamp, "path_reached", Marker.LINE_STRIP, reached, (0.1, 0.3, 0.9)),
            _line(shown, stamp, "path_waypoints", Marker.POINTS, asked, (0.1, 0.9, 0.1))])


def _display_publisher(node):
    """Return a DisplayTrajectory publisher on ``~/display_path`` (None without moveit_msgs)."""
    try:
        from moveit_msgs.msg import DisplayTrajectory
    except ImportError:
        return None
    return node.create_publisher(DisplayTrajectory, "~/display_path", 10)


def _line(frame: str, stamp, ns: str, kind: int, points, rgb) -> Marker:
    marker = Marker(ns=ns, id=0, type=kind, action=Marker.ADD)
    marker.header.frame_id, marker.header.stamp = frame, stamp
    marker.pose.orientation.w = 1.0
    marker.scale.x = marker.scale.y = 0.005
    marker.color.r, marker.color.g, marker.color.b = rgb
    marker.color.a = 1.0
    marker.points = [Point(x=float(p[0]), y=float(p[1]), z=float(p[2])) for p in points]
    return marker
