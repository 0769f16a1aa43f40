"""A 6-DoF interactive marker at the tip: drag it in rviz and the node solves.

Needs the ``interactive_markers`` Python package (real ROS installs); only :func:`attach`
imports it.  The feedback callback only stores the latest pose; a timer in its own
callback group solves it (at most :data:`SOLVE_PERIOD_S` apart), so a fast drag never
queues stale poses and never blocks the node's default callback group.  Each solve goes
through the node's ComputeIK path (``_on_compute_ik``: core solve, ``~/solution``,
``~/markers``), seeded from the last answer; with ``execute_by_default`` the pose where the
marker is released (MOUSE_UP) is executed when it is safe, not each step of the drag (each
would brake the move under way: to follow a drag, servo).  While the servo runs
(servo_loop.py), the marker is its pose target instead, re-sent every timer period so that
it does not go stale while displayed.
"""
from __future__ import annotations

import threading
from typing import NamedTuple, Optional, Sequence, Tuple

from geometry_msgs.msg import PoseStamped
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from sensor_msgs.msg import JointState
from visualization_msgs.msg import (
    InteractiveMarker, InteractiveMarkerControl, InteractiveMarkerFeedback)

from ros2_ik.node.compute_ik import resolve_group, seed_for
from ros2_ik.node.conversions import se3_to_pose
from ros2_ik_interfaces.srv import ComputeIK

MARKER_NAME = "ik_goal"
SERVER_NAMESPACE = "~/goal_marker"
#: Period of the solve timer [s]: a drag is solved at most 20 times a second.
SOLVE_PERIOD_S = 0.05
#: Feedback events that ask for a solve.
SOLVE_EVENTS = (InteractiveMarkerFeedback.POSE_UPDATE, InteractiveMarkerFeedback.MOUSE_UP)

#: A control acts along the x axis of its orientation; these quaternions (w = 1 and
#: this x, y, z, normalised) turn that x axis onto the marker's x, y and z axes.
CONTROL_AXES = {"x": (1.0, 0.0, 0.0), "y": (0.0, 0.0, 1.0), "z": (0.0, 1.0, 0.0)}

Seed = Tuple[Tuple[str, ...], Tuple[float, ...]]


class LatestFeedback:
    """One slot holding the newest feedback (older ones are dropped), thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._feedback = None

    def put(self, feedback) -> None:
        """Keep ``feedback`` when it asks for a solve."""
        if feedback.event_type in SOLVE_EVENTS:
            with self._lock:
                self._feedback = feedback

    def take(self):
        """Return the newest feedback not yet taken, or None."""
        with self._lock:
            feedback, self._feedback = self._feedback, None
            return feedback


def goal_request(feedback, seed: Optional[Seed], default_frame: str,
                 avoid_collisions: bool = False) -> ComputeIK.Request:
    """Return the ComputeIK request of a marker pose, seeded from the last answer when known.

    ``avoid_collisions``: the node's ``goal_avoid_collisions``.
    """
    request = ComputeIK.Request(avoid_collisions=avoid_collisions)
    request.target.header.frame_id = feedback.header.frame_id or default_frame
    request.target.pose = feedback.pose
    if seed is not None:
        request.seed.name, request.seed.position = list(seed[0]), list(seed[1])
    return request


def servo_goal(feedback, default_frame: str) -> PoseStamped:
    """Return the servo's pose target of a marker pose (in the marker's frame)."""
    msg = PoseStamped()
    msg.header.frame_id = feedback.header.frame_id or default_frame
    msg.pose = feedback.pose
    return msg


def remember(seed: Optional[Seed], response: ComputeIK.Response) -> Optional[Seed]:
    """Return the seed for the next drag: this answer's configuration (any status), if any."""
    if response.solution.name:
        return tuple(response.solution.name), tuple(float(v) for v in
                                                    response.solution.position)
    return seed


def marker(frame: str, pose, scale_m: float) -> InteractiveMarker:
    """Return the tip marker: move and rotate along each axis of ``frame``."""
    msg = InteractiveMarker(name=MARKER_NAME, description="IK goal", scale=float(scale_m))
    msg.header.frame_id = frame
    msg.pose = pose
    for axis, xyz in CONTROL_AXES.items():
        for mode, verb in ((InteractiveMarkerControl.MOVE_AXIS, "move"),
                           (InteractiveMarkerControl.ROTATE_AXIS, "rotate")):
            control = InteractiveMarkerControl(name=f"{verb}_{axis}", interaction_mode=mode)
            control.orientation.w = 2 ** -0.5
            control.orientation.x, control.orientation.y, control.orientation.z = (
                v * 2 ** -0.5 for v in xyz)
            msg.controls.append(control)
    return msg


class Placement(NamedTuple):
    """Where the marker was put, and from what."""

    frame: str
    pose: object
    joint_names: Tuple[str, ...]
    #: False: placed at mid-limits because joint_states were missing or stale.
    at_joint_states: bool


def placement(snapshot, cfg, joints) -> Placement:
    """Return the default group's tip in its base frame, at joint_states (or mid-limits)."""
    group, tip = resolve_group(snapshot, cfg, "", "", "")
    group_cfg = cfg.groups.get(cfg.default_group_name)
    frames: Sequence[str] = snapshot.robot.frame_names
    frame = (group_cfg.base_link if group_cfg and group_cfg.base_link else frames[1])
    fresh = joints.fresh(group.joint_names, cfg.joint_state_timeout) is not None
    q = seed_for(group, JointState(), joints, cfg)
    T_frame_tip = group.fk(q, frame).actInv(group.fk(q, tip))
    return Placement(frame, se3_to_pose(T_frame_tip), tuple(group.joint_names), fresh)


class InteractiveGoal:
    """The marker server of one node and the timer that solves the dragged pose."""

    def __init__(self, node, server) -> None:
        self._node = node
        self._server = server
        self._latest = LatestFeedback()
        self._seed: Optional[Seed] = None
        self._placement: Optional[Placement] = None
        self._placed_version = None
        self._dragged = False
        self._servo_goal: Optional[PoseStamped] = None
        self.callback_group = MutuallyExclusiveCallbackGroup()
        self.timer = node.create_timer(SOLVE_PERIOD_S, self._tick,
                                       callback_group=self.callback_group)

    def _tick(self) -> None:
        node = self._node
        snapshot = node.robot.snapshot
        if snapshot is None:
            return
        if self._needs_placing(snapshot):
            self._place(snapshot)
        feedback = self._latest.take()
        servo = getattr(node, "servo", None)
        if servo is not None and servo.active:
            self._drive_servo(servo, feedback)
            return
        self._servo_goal = None
        if feedback is None or self._placement is None:
            return
        self._dragged = True
        request = goal_request(feedback, self._seed, self._placement.frame,
                               node.config.goal_avoid_collisions)
        released = feedback.event_type == InteractiveMarkerFeedback.MOUSE_UP
        self._seed = remember(self._seed, node._on_compute_ik(
            request, ComputeIK.Response(), execute=released and node.config.execute_by_default))

    def _drive_servo(self, servo, feedback) -> None:
        """While servo runs, the marker is its pose target (re-sent: it stays fresh)."""
        if feedback is not None and self._placement is not None:
            self._dragged = True
            self._servo_goal = servo_goal(feedback, self._placement.frame)
        if self._servo_goal is not None:
            servo.on_pose(self._servo_goal)

    def _needs_placing(self, snapshot) -> bool:
        """Return True for a new model, or joint_states after a mid-limits placement (no drag)."""
        if snapshot.version != self._placed_version:
            return True
        done = self._placement
        return (done is not None and not done.at_joint_states and not self._dragged
                and self._node.joints.fresh(done.joint_names,
                                            self._node.config.joint_state_timeout) is not None)

    def _place(self, snapshot) -> None:
        """(Re)insert the marker at the tip of the current model."""
        self._placed_version = snapshot.version
        self._seed, self._dragged = None, False
        try:
            self._placement = placement(snapshot, self._node.config, self._node.joints)
        except Exception as exc:  # noqa: BLE001 - no default group: no marker, keep serving
            self._placement = None
            self._node.get_logger().warning(f"no interactive marker: {exc}")
            return
        scale = self._node.config.interactive_marker_scale
        self._server.insert(marker(self._placement.frame, self._placement.pose, scale),
                            feedback_callback=self._latest.put)
        self._server.applyChanges()


def attach(node) -> Optional[InteractiveGoal]:
    """Start the marker when ``interactive_marker`` is set and interactive_markers imports."""
    if not node.config.interactive_marker:
        return None
    try:
        from interactive_markers import InteractiveMarkerServer
    except ImportError:
        node.get_logger().info("interactive_markers is not installed: no goal marker")
        return None
    return InteractiveGoal(node, InteractiveMarkerServer(node, SERVER_NAMESPACE))
