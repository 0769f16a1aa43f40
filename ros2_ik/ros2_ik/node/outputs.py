"""What the node publishes: ``~/solution``, ``~/markers`` and controller commands.

One move is under way at a time, whichever the controller (:class:`execution.Sent`): a
new solution sent while it runs brakes it to rest and goes on from there in the same
trajectory (each step a straight segment in joint space, within the limits and proven
clear when asked), and ``~/stop_execution`` (std_srvs/Trigger) brakes it alone.
"""
from __future__ import annotations

import threading
import time
from typing import Callable, Optional, Sequence, Tuple

import numpy as np
import pinocchio as pin
from geometry_msgs.msg import Point, PoseStamped
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from std_srvs.srv import Trigger
from trajectory_msgs.msg import JointTrajectory
from visualization_msgs.msg import Marker, MarkerArray

from ros2_ik.core.model.joint_values import outside_limits
from ros2_ik.core.path import timing
from ros2_ik.node import execution
from ros2_ik.node.base_pose import has_base, pose_stamped
from ros2_ik.node.compute_ik import collision_checker
from ros2_ik.node.conversions import joint_state, se3_to_pose
from ros2_ik.node.position_stream import PositionStream
from ros2_ik.node.trajectory_action import make_sender


#: How often [s] a move under way is checked against joint_states (``execute_watch``).
WATCH_PERIOD_S = 0.05


class Outputs:
    """Publishers of one node and the safety gate in front of the controller."""

    def __init__(self, node) -> None:
        self._node = node
        cfg = node.config
        self.solution_pub = node.create_publisher(JointState, "~/solution", 10)
        self.marker_pub = node.create_publisher(MarkerArray, "~/markers", 10)
        kind = Float64MultiArray if cfg.controller_mode == "position" else JointTrajectory
        self.controller_pub = node.create_publisher(kind, cfg.controller_topic, 10)
        #: Position mode's moves, one command per period (None in trajectory mode).
        self.stream = PositionStream(self.controller_pub.publish, cfg.position_rate,
                                     node.get_logger().error) \
            if cfg.controller_mode == "position" else None
        #: The last move sent, either mode (:meth:`under_way`), under ``_lock``.
        self._sent: Optional[execution.Sent] = None
        #: How far ahead [s] a braking is planned (:func:`execution.next_lead_s`).
        self._lead_s = execution.MIN_LEAD_S
        self._lock = threading.Lock()
        node.create_service(Trigger, "~/stop_execution", self._on_stop,
                            callback_group=node.solve_group)
        node.create_timer(WATCH_PERIOD_S, self.watch, callback_group=node.solve_group)
        self.action_sender = make_sender(node, cfg.controller_action, node.solve_group)
        self.base_goal_pub = (node.create_publisher(PoseStamped, cfg.base_goal_topic, 10)
                              if cfg.base_goal_topic else None)

    def solution(self, names: Sequence[str], q: Sequence[float]) -> None:
        """Publish a solution for visualization (every solution, any status).

        Not built when nobody subscribes (it would reach no one: the topic is volatile).
        """
        if self.wants_solution():
            self.solution_pub.publish(joint_state(names, q,
                                                  self._node.get_clock().now().to_msg()))

    def wants_solution(self) -> bool:
        """Return True when someone subscribes to ``~/solution``."""
        return self.solution_pub.get_subscription_count() > 0

    def wants_markers(self) -> bool:
        """Return True when someone subscribes to ``~/markers`` (else skip building them)."""
        return self.marker_pub.get_subscription_count() > 0

    def move_check(self, group, wanted: bool
                   ) -> Optional[Callable[[Sequence[np.ndarray]], str]]:
        """Return the check of a move for :meth:`execute` and :meth:`execute_path`.

        ``wanted``: the request's ``avoid_collisions``.  None when not wanted, or for a
        whole-body group (its base pose is in no joint_states).  Given the move's
        waypoints (group vectors: where the arm is, [where braking ends,] the end), the
        check says why the move must not be made ('' when it may:
        :func:`execution.move_refusal`, against the collision model at ``minimum_distance``).
        """
        if not wanted or has_base(group):
            return None
        node = self._node
        return lambda waypoints: execution.move_refusal(
            collision_checker(node.robot.snapshot, node.config), group, waypoints,
            node.config.minimum_distance)

    def execute(self, group, names: Sequence[str], q: np.ndarray, succeeded: bool,
                collides: bool = False,
                move: Optional[Callable[[Sequence[np.ndarray]], str]] = None,
                notes: Optional[list] = None) -> str:
        """Send ``q`` to the controller when safe; returns the refusal reason or ''.

        ``group``: anything with the joints' ``lower``, ``upper``, ``velocity_limits``,
        ``acceleration_limits`` and ``wraps`` (a whole-body group's joints:
        node/base_pose.joint_limits).
        ``move``: the check of the move there (:meth:`move_check`).  While a move is under
        way, the new one brakes it to rest first (:meth:`execution.Sent.braking`: no joint
        slows harder than it may) and goes on from there: the controller never gets a new
        goal that it would blend from the arm's speed.  The braking starts where the move
        under way will be a lead later (about the time its proof takes:
        :func:`execution.next_lead_s`), and is sent then, not before: a controller draws
        it from its own state when it starts it.  An arm that joint_states show moving with
        no move of ours under way is braked the same way, from where its readings carried
        on at their velocities put it at that instant (:func:`execution.carried_on`); so
        is one whose joint_states are off the move under way (:meth:`_off_plan`: the
        controller stopped it), which is then no move of ours any more; ``notes`` gets why.
        """
        cfg = self._node.config
        current = self._node.joints.fresh(names, cfg.joint_state_timeout)
        reason = execution.refusal(succeeded, names, q, group.lower, group.upper, current,
                                   cfg.execute_max_joint_jump, collides)
        if reason:
            return reason
        with self._lock:
            now, under_way = time.monotonic(), self._sent
            planned = ahead = now + self._lead_s
            stop = self._braking(ahead)
            if stop is None:  # none of ours under way then (or it ends first): from now
                planned, stop = now, self._braking(now)
        if stop is not None and self._off_plan(under_way, notes):  # the controller stopped it
            stop = None
        if stop is not None and tuple(names) != stop.names:
            return f"a move of joints {list(stop.names)} is under way: ~/stop_execution first"
        here = np.array([current[n] for n in names])
        if stop is None:  # none of ours: the arm may still move (another source, settling)
            stop = self._measured_braking(group, names, q, ahead)
            if stop is not None:
                planned = ahead
        at = here if stop is None else stop.q_path[-1]
        outside = outside_limits(names, at, group.lower, group.upper)
        if outside:
            return (f"braking the motion under way would end with joints {outside} outside "
                    f"their limits: ~/stop_execution (or wait) first")
        reason = move([at, q] if stop is None else [stop.start, at, q]) \
            if move is not None else ""  # outside the lock: a stop never waits for it
        if reason:
            return reason
        seconds = execution.duration_s(q, at, group.velocity_limits, cfg.velocity_scaling,
                                       cfg.min_trajectory_duration,
                                       group.acceleration_limits, cfg.acceleration_scaling)
        sent = execution.Move.from_rest(names, at, q, seconds) if stop is None else \
            stop.then(q, seconds)
        ready = time.monotonic()
        if stop is not None and ready < planned and self._sent is under_way:
            time.sleep(planned - ready)  # sent when its braking starts (a stop never waits)
        with self._lock:
            if self._sent is not under_way and (self._sent is not None or stop is not None):
                return "the move under way changed (a stop or another execute): send it again"
            if stop is not None:
                self._lead_s = execution.next_lead_s(self._lead_s, ready - now)
            return self._send(group, sent, planned)

    def base_goal(self, base) -> str:
        """Publish a whole-body solution's base pose (MultiDOFJointState entry) as a goal.

        On ``base_goal_topic``, a PoseStamped in the base joint's parent frame (the goal of
        a mobile base's controller); returns the refusal reason or ''.
        """
        if self.base_goal_pub is None:
            return "base_goal_topic is empty: the base pose has nowhere to go"
        self.base_goal_pub.publish(pose_stamped(base, self._node.get_clock().now().to_msg()))
        return ""

    def execute_path(self, group, trajectory: JointTrajectory, q_path: np.ndarray,
                     succeeded: bool,
                     move: Optional[Callable[[Sequence[np.ndarray]], str]] = None,
                     notes: Optional[list] = None) -> str:
        """Send a path (``q_path`` (m, n), timed in ``trajectory``) when safe; refusal or ''.

        The first point is held to ``execute_max_joint_jump`` from fresh joint_states (as
        one solution is), every point to the limits; position mode streams it
        (:class:`.PositionStream`), and a whole-body group's path (its base moves) is
        refused: it said "joint_states are stale" before, as its base columns are in no
        joint_states.  Refused while a move is under way: the path is timed from rest
        where the arm is; a move joint_states are off (:meth:`_off_plan`: the controller
        stopped it) is none (``notes`` gets why), as for :meth:`execute`.
        """
        if has_base(group):  # the base's coordinates are no controller's joints
            return (f"a whole-body path moves the base ('{group.base_joint}'); ros2_ik sends "
                    f"joint paths only: execute it with a fixed-base group, or send its "
                    f"'{group.base_joint}/...' columns to the base's own controller")
        cfg = self._node.config
        names = trajectory.joint_names
        current = self._node.joints.fresh(names, cfg.joint_state_timeout)
        reason = execution.refusal(succeeded, names, q_path[0], group.lower, group.upper,
                                   current, cfg.execute_max_joint_jump)
        if reason:
            return reason
        outside = [k for k, q in enumerate(q_path) if not group.within_limits(q)]
        if outside:
            return f"points {outside} are outside the joint limits"
        with self._lock:
            under_way = self._sent
            left = under_way.left_s(time.monotonic()) if under_way is not None else 0.0
        off = self._off_plan(under_way, notes) if left > 0.0 else ""
        if left > 0.0 and not off:
            return (f"a move is under way ({left:.2f} s left): a path is timed from rest "
                    f"(~/stop_execution brakes the move)")
        at = np.array([current[n] for n in names])
        if self._moving(group, names) is not None:
            return ("the arm is moving (joint_states velocities): a path is timed from rest; "
                    "send it once the arm stands")
        reason = move([at, q_path[0]]) if move is not None else ""  # as :meth:`execute`
        if reason:
            return reason
        with self._lock:
            now = time.monotonic()
            if self._sent is not None and self._sent.left_s(now) > 0.0 \
                    and not (off and self._sent is under_way):
                return "a move was sent meanwhile: send the path again"
            return self._send(group, execution.Move.of(trajectory, at), now)

    def _measured_braking(self, group, names: Sequence[str], q: np.ndarray, at: float
                          ) -> Optional[execution.Move]:
        """Return the braking from the arm's measured state at ``at``, or None at rest.

        joint_states' last positions and velocities (at rest: :meth:`_at_rest`), each
        carried on at its velocity from its reading to instant ``at`` [s]
        (``time.monotonic()``; :func:`execution.carried_on`): a goal timed from rest would
        be blended from that speed.  Each joint brakes within its scaled acceleration
        limit, or without one, as hard as the move to ``q`` from there accelerates it, and
        within ``min_trajectory_duration`` at most (the shortest move from rest): a small
        move there must not make the arm coast on for long.
        """
        measured = self._measured(names, at)
        if measured is None or self._at_rest(group, measured[1]):
            return None
        start, v = measured
        cfg = self._node.config
        limits = timing.scaled_limits(group.acceleration_limits, cfg.acceleration_scaling)
        if not np.all(np.isfinite(limits)):
            on = execution.Move.from_rest(names, start, q, execution.duration_s(
                q, start, group.velocity_limits, cfg.velocity_scaling,
                cfg.min_trajectory_duration, group.acceleration_limits,
                cfg.acceleration_scaling))
            hardest = np.maximum(on.peak_accelerations(),
                                 np.abs(v) / cfg.min_trajectory_duration)
            limits = np.where(np.isfinite(limits), limits, hardest)
        return execution.braking(names, start, v, limits)

    def _moving(self, group, names: Sequence[str]) -> Optional[np.ndarray]:
        """Return joint_states' last velocities of ``names`` (n,), or None (:meth:`_at_rest`)."""
        v = np.array(self._node.joints.velocities(names))
        return None if self._at_rest(group, v) else v

    def _at_rest(self, group, v: np.ndarray) -> bool:
        """Return True when each of velocities ``v`` (n,) is that of a joint at rest.

        Within :data:`execution.AT_REST_SHARE` of its scaled velocity limit (1e-3 without
        one).
        """
        limits = timing.scaled_limits(group.velocity_limits, self._node.config.velocity_scaling)
        still = np.where(np.isfinite(limits), execution.AT_REST_SHARE * limits, 1e-3)
        return bool(np.all(np.abs(v) <= still))

    def under_way(self) -> float:
        """Seconds [s] until the move under way ends (0: none), either mode."""
        with self._lock:
            return self._sent.left_s(time.monotonic()) if self._sent is not None else 0.0

    def _braking(self, now: float) -> Optional[execution.Move]:
        """Return the move under way brought to rest from its state at ``now``, or None."""
        sent = self._sent
        return sent.braking(now) if sent is not None and sent.left_s(now) > 0.0 else None

    def _send(self, group, move: execution.Move, now: float) -> str:
        """Send ``move`` (from the arm's state at ``now``) to the controller; '' or why not.

        Under ``_lock``.  Refused while the servo runs (it commands the arm; two sources
        would fight over it), or when it lasts longer than a Duration holds.  Position mode
        streams it in ``controller_joints`` order (empty: the move's joints; the
        controller's other joints held at their last joint_states).  The move is kept for
        the next one and :meth:`stop_execution`, with how hard it may brake: each joint's
        scaled acceleration limit, or where it has none, the move's own hardest.
        """
        if self._node.servo.active:
            return "the servo is commanding the arm: call ~/servo/stop first"
        reason = execution.duration_refusal(move.duration_s)
        if reason:
            return reason
        limits = timing.scaled_limits(group.acceleration_limits,
                                      self._node.config.acceleration_scaling)
        deceleration = np.where(np.isfinite(limits), limits, move.peak_accelerations())
        sent = execution.Sent(move, now, deceleration, np.asarray(group.wraps))
        reason = self._deliver(sent)
        if not reason:
            self._sent = sent
        return reason

    def _deliver(self, sent: execution.Sent) -> str:
        """Send ``sent.move``: streamed (position mode), a FollowJointTrajectory goal, or a topic.

        A goal the action server rejects or ends is no move under way any more (the
        controller holds where it stopped): :meth:`_ended`.
        """
        move = sent.move
        if self.stream is not None:
            order = [n for n in self._node.config.controller_joints if n] or list(move.names)
            return self.stream.play(order, move, self._node.joints.latest(), sent.t0)
        trajectory = move.trajectory()
        if self.action_sender is not None:
            return self.action_sender.send(trajectory, lambda: self._ended(sent))
        self.controller_pub.publish(trajectory)
        return ""

    def _ended(self, sent: execution.Sent) -> None:
        """Forget ``sent`` when it is still the move under way (its goal ended or was rejected)."""
        with self._lock:
            if self._sent is sent:
                self._sent = None

    def _on_stop(self, _request: Trigger.Request, response: Trigger.Response
                 ) -> Trigger.Response:
        """``~/stop_execution`` (std_srvs/Trigger): :meth:`stop_execution`, always success."""
        response.message = self.stop_execution()
        response.success = True
        return response

    def stop_execution(self) -> str:
        """Bring the move under way to rest (:meth:`.execution.Move.braking`); what was done.

        The braking move replaces it at the controller (a new trajectory or goal, or the
        position stream's next commands), each joint slowing no harder than it was allowed
        to move; the servo is not touched (``~/servo/stop``).  When joint_states are off
        the move (:meth:`_off_plan`: the controller stopped it), the braking starts where
        they put the arm instead, carried on at their velocities to now (a standing arm:
        held where it stands, and the controller resumes nothing).
        """
        with self._lock:
            now, under_way = time.monotonic(), self._sent
            stop = self._braking(now)
            if stop is None:
                return "no move under way"
            off = self._off_plan(under_way)
            if off:
                stop = self._measured_stop(under_way, now)
            reason = self._replace(under_way, stop, now)
            if reason:
                return f"not stopped: {reason}"
        done = f"braking to rest in {stop.duration_s:.3f} s"
        return f"{off}; from joint_states instead, {done}" if off else done

    def watch(self) -> None:
        """With ``execute_watch``: stop the move under way when joint_states are off it.

        Every :data:`WATCH_PERIOD_S`: as :meth:`stop_execution` does when they are off
        (:meth:`_off_plan`), the arm held where they put it (or their motion braked), and
        an error logged.  A controller stopped without the node knowing (an e-stop on a
        topic or a position stream) then resumes nothing when it is reset: it has the
        hold, not the rest of the move.
        """
        if not self._node.config.execute_watch:
            return
        with self._lock:
            now, under_way = time.monotonic(), self._sent
            if under_way is None or under_way.left_s(now) <= 0.0 \
                    or not self._off_plan(under_way):
                return
            stop = self._measured_stop(under_way, now)
            reason = self._replace(under_way, stop, now)
        self._node.get_logger().error(
            f"execute_watch: the move under way stopped: {reason}" if reason else
            f"execute_watch: the move under way stopped, the arm held where joint_states "
            f"put it (braking to rest in {stop.duration_s:.3f} s)")

    def _measured_stop(self, under_way: execution.Sent, now: float) -> execution.Move:
        """Return the braking from joint_states carried on to ``now`` (``under_way``'s rates).

        Called once :meth:`_off_plan` read them: every joint of the move has a reading.
        """
        names = under_way.move.names
        start, v = self._measured(names, now)
        return execution.braking(names, start, v, under_way.deceleration)

    def _measured(self, names: Sequence[str], at: float
                  ) -> Optional[Tuple[np.ndarray, np.ndarray]]:
        """Return joint_states' ``(positions, velocities)`` of ``names`` carried on to ``at``.

        Each position carried on at its velocity from its reading to instant ``at`` [s]
        (``time.monotonic()``; :func:`execution.carried_on`); None when one never came.
        """
        read = self._node.joints.motion(names)
        if read is None:
            return None
        positions, v, received = (np.array(x) for x in read)
        return execution.carried_on(positions, v, received, at), v

    def _replace(self, under_way: execution.Sent, stop: execution.Move, now: float) -> str:
        """Send braking ``stop`` in place of ``under_way`` (under ``_lock``); '' or why not."""
        sent = execution.Sent(stop, now, under_way.deceleration, under_way.wraps)
        reason = self._deliver(sent)
        if not reason:
            self._sent = sent
        return reason

    def _off_plan(self, sent: execution.Sent, notes: Optional[list] = None) -> str:
        """Why joint_states say the controller is not running ``sent`` ('' when they agree).

        :func:`execution.off_plan` at ``execute_follow_tolerance``; '' when some of its
        joints never came.  When not '': logged as a warning, and ``notes`` (a reply's)
        gets that the move is taken as stopped.
        """
        read = self._node.joints.motion(sent.move.names)
        if read is None:
            return ""
        off = execution.off_plan(sent, read[0], read[2],
                                 self._node.config.execute_follow_tolerance)
        if off:
            self._node.get_logger().warning(f"{off}: the controller is not running it")
            if notes is not None:
                notes.append(f"{off}: taken as stopped by the controller")
        return off

    def markers(self, frame: str, T_ref_target: pin.SE3, T_ref_reached: Optional[pin.SE3],
                closest: Optional[Sequence[np.ndarray]] = None,
                T_ref_base: Optional[pin.SE3] = None, world_frame: str = "universe") -> None:
        """Target (green) and reached (blue) poses as arrows, closest pair (red), base (orange).

        Poses in ``frame``; the closest pair's points in ``world_frame`` (the model's root
        frame, named as tf names it: a whole-body group's base parent frame).
        ``T_ref_base``: a whole-body solution's base pose (an arrow along the base's x).
        """
        stamp = self._node.get_clock().now().to_msg()
        markers = MarkerArray()
        markers.markers.append(_axes(frame or "universe", stamp, "target", T_ref_target,
                                     (0.1, 0.9, 0.1)))
        if T_ref_reached is not None:
            markers.markers.append(_axes(frame or "universe", stamp, "reached",
                                         T_ref_reached, (0.1, 0.3, 0.9)))
        if T_ref_base is not None:
            base = _axes(frame or "universe", stamp, "base", T_ref_base, (1.0, 0.5, 0.0))
            base.pose = se3_to_pose(T_ref_base)  # x forward: the way a base drives
            base.scale.x, base.scale.y, base.scale.z = 0.4, 0.04, 0.06
            markers.markers.append(base)
        if closest is not None:
            line = Marker(ns="closest_pair", id=0, type=Marker.LINE_LIST,
                          action=Marker.ADD)
            line.header.frame_id, line.header.stamp = world_frame, stamp
            line.pose.orientation.w = 1.0
            line.scale.x = 0.005
            line.color.r, line.color.a = 1.0, 1.0
            line.points = [Point(x=float(p[0]), y=float(p[1]), z=float(p[2]))
                           for p in closest]
            markers.markers.append(line)
        self.marker_pub.publish(markers)


def _axes(frame: str, stamp, ns: str, T: pin.SE3, rgb) -> Marker:
    """Return an arrow along the pose's z axis (the approach direction of most tools)."""
    marker = Marker(ns=ns, id=0, type=Marker.ARROW, action=Marker.ADD)
    marker.header.frame_id, marker.header.stamp = frame, stamp
    # An ARROW points along its x axis: rotate the pose so x goes along the tool's z.
    marker.pose = se3_to_pose(T * pin.SE3(pin.utils.rpyToMatrix(0, -np.pi / 2, 0),
                                          np.zeros(3)))
    marker.scale.x, marker.scale.y, marker.scale.z = 0.1, 0.01, 0.02
    marker.color.r, marker.color.g, marker.color.b = rgb
    marker.color.a = 1.0
    return marker
