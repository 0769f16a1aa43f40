"""``ik_node``'s servo mode: track a moving target at ``servo_rate`` and stream commands.

Interfaces (under the node's name)::

    ~/servo/start   std_srvs/Trigger    start from the measured joint_states
    ~/servo/stop    std_srvs/Trigger    stop sending commands
    ~/servo/pause   std_srvs/SetBool    true: hold position; false: resume
    ~/servo/target_pose   geometry_msgs/PoseStamped   tip target (any known frame)
    ~/servo/target_twist  geometry_msgs/TwistStamped  tip twist, axes of header.frame_id
    ~/servo/status  ros2_ik_interfaces/ServoStatus    25 Hz and on every change;
                    transient local (a late subscriber gets the latest, STOPPED at start)
    ~/servo/base_pose     geometry_msgs/PoseStamped   whole-body: the measured base pose
                    (in the base's parent frame), read at start

A fixed-base servo_group is held where the joints carrying it (a torso lift) stand at the
start, and follows them at every tick (node/servo_mount.py: the target moved by the
chain's mount motion, not a new group).  A whole-body servo_group (floating or planar
base) runs ``core/servo/whole_body.py``: ``servo_contacts`` held where they are at start,
the CoM ``servo_com_margin`` inside their support polygon, the frame toward
``target_pose``; it sends the joints on ``servo_command_topic`` and the base pose on
``servo_base_command_topic`` every tick.

Commands go to ``servo_command_topic`` as positions or velocities (Float64MultiArray) or
one-point JointTrajectory messages.  The loop runs on its own thread (node/periodic.py:
a tick does not wait behind the executor's callbacks); its tick runs
``core/servo/supervisor.py`` over ``core.servo.Servo``.  One lock orders the tick and
the callbacks that change the servo (start, stop, pause, targets).
"""
from __future__ import annotations

import threading
import time
from collections import deque
from typing import Optional

import numpy as np
from builtin_interfaces.msg import Duration
from geometry_msgs.msg import PoseStamped, TwistStamped
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import Float64MultiArray
from std_srvs.srv import SetBool, Trigger
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from ros2_ik.core.errors import IKError
from ros2_ik.core.servo import Servo, ServoConfig
from ros2_ik.core.servo.whole_body import Contact, WholeBodyConfig, WholeBodyServo
from ros2_ik.core.servo.whole_body_supervisor import WholeBodySupervisor
from ros2_ik.node.base_pose import (
    base_of_pose, base_state, has_base, joint_part, pose_stamped, with_base)
from ros2_ik.node.compute_ik import RequestError, collision_checker, resolve_group
from ros2_ik.node.parameters import clean_list
from ros2_ik.node.periodic import PeriodicThread
from ros2_ik.core.servo.supervisor import Limits, State, Supervisor, Target, TipJacobian
from ros2_ik.node.servo_mount import Mount
from ros2_ik.node.servo_targets import in_world, pose_target, twist_target
from ros2_ik.node.upstream import held_group
from ros2_ik_interfaces.msg import ServoStatus

#: Status messages at most this often [s] (and on every change of state or reason).
STATUS_PERIOD_S = 0.04
#: ``~/servo/status``: kept for late subscribers, so that they learn the current state
#: (STOPPED included: the loop then publishes nothing more).
STATUS_QOS = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE,
                        durability=DurabilityPolicy.TRANSIENT_LOCAL)


def _read_at_start(cfg) -> tuple:
    """Return the parameters a running servo cannot take (a start rebuilds it for them)."""
    return (cfg.servo_group, cfg.servo_frame, cfg.servo_avoid_collisions,
            cfg.servo_contacts, cfg.servo_contact_points, cfg.servo_com_margin)


class ServoLoop:
    """The servo's topics, services and loop thread on one node."""

    def __init__(self, node, callback_group) -> None:
        self.node, self.group_cb = node, callback_group
        cfg = node.config
        self.period_s = 1.0 / cfg.servo_rate
        self.supervisor: Optional[Supervisor] = None
        self.group = self.frame = None
        self.group_name = ""
        self._loop: Optional[PeriodicThread] = None
        self._lock = threading.RLock()
        self._ticks: deque = deque(maxlen=max(2, int(cfg.servo_rate)))
        self._last_status = (-1.0, None)
        kind = JointTrajectory if cfg.servo_output == "trajectory" else Float64MultiArray
        self.command_pub = node.create_publisher(kind, cfg.servo_command_topic, 10)
        self.base_pub = node.create_publisher(PoseStamped, cfg.servo_base_command_topic, 10)
        self._base_pose: Optional[PoseStamped] = None  # the newest measured base pose
        self._mount: Optional[Mount] = None  # the joints carrying the group (a lift)
        self._target_robot: Optional[Target] = None  # the newest target, robot's world
        self._mount_note = ""
        node.create_subscription(PoseStamped, "~/servo/base_pose", self._on_base_pose, 10,
                                 callback_group=callback_group)
        self.status_pub = node.create_publisher(ServoStatus, "~/servo/status", STATUS_QOS)
        stopped = ServoStatus(state=int(State.STOPPED), reason="not started")
        stopped.header.stamp = node.get_clock().now().to_msg()
        self.status_pub.publish(stopped)
        for name, srv, cb in (("start", Trigger, self._on_start), ("stop", Trigger, self._on_stop),
                              ("pause", SetBool, self._on_pause)):
            node.create_service(srv, f"~/servo/{name}", cb, callback_group=callback_group)
        node.create_subscription(PoseStamped, "~/servo/target_pose", self.on_pose, 10,
                                 callback_group=callback_group)
        node.create_subscription(TwistStamped, "~/servo/target_twist", self.on_twist, 10,
                                 callback_group=callback_group)
        self._autostart = (node.create_timer(0.2, self._try_autostart,
                                             callback_group=callback_group)
                           if cfg.servo_autostart else None)

    @property
    def active(self) -> bool:
        """True while the servo runs, halts or pauses (not stopped)."""
        return self.supervisor is not None and self.supervisor.report.state != State.STOPPED

    # --- services ----------------------------------------------------------------------
    def _on_start(self, _request, response):
        response.message = self.start()
        response.success = not response.message
        if response.success:
            response.message = f"servoing {self.frame} of group {self.group_name}"
        return response

    def _on_stop(self, _request, response):
        response.success, response.message = True, self.stop_smoothly("stopped on request")
        return response

    def _on_pause(self, request, response):
        if self.supervisor is None:
            response.success, response.message = False, "servo is stopped: call start first"
            return response
        with self._lock:
            response.message = self.supervisor.pause(bool(request.data))
            self._status(force=True)
        response.success = not response.message
        return response

    def _try_autostart(self) -> None:
        """``servo_autostart``: start once the model and fresh joint_states are there.

        Until then, why not is logged every few seconds (a cause that lasts, such as a
        controller joint never published, is otherwise silent).
        """
        if self.node.robot.snapshot is None:
            return
        why = self.start()
        if why:
            self.node.get_logger().info(f"servo_autostart: not yet: {why}",
                                        throttle_duration_sec=5.0)
            return
        self.node.destroy_timer(self._autostart)
        self._autostart = None
        self.node.get_logger().info(f"servo started (servo_autostart): {self.frame}")

    def start(self) -> str:
        """Build the servo on the current model and start it; returns why not, or ''."""
        with self._lock:
            return self._start()

    def _start(self) -> str:
        node, cfg = self.node, self.node.config
        snapshot = node.robot.snapshot
        if snapshot is None:
            return f"no robot model: {node.robot.error or 'waiting for robot_description'}"
        left = node.outputs.under_way()
        if left > 0.0:  # its commands are the arm's until it ends
            return (f"an executed move is under way ({left:.2f} s left): start after it "
                    f"(~/stop_execution brakes it)")
        if self.active and self._loop is not None and snapshot is self._snapshot \
                and _read_at_start(cfg) == _read_at_start(self._config):
            self.supervisor.cancel_stop()  # already servoing: go on (a rebuild would jump)
            self._status(force=True)
            return ""
        try:
            group, tip = resolve_group(snapshot, cfg, cfg.servo_group, "", "")
            # Held where the robot holds the joints carrying it (a torso lift), as a
            # request's group is (node/upstream.py), at the start; then followed as the
            # chain's mount, every tick (node/servo_mount.py).
            notes: list = []
            group = held_group(snapshot, group, (), (), node.joints, cfg, notes,
                               every=cfg.servo_avoid_collisions)
            for note in notes:
                node.get_logger().warning(f"servo: {note}")
            mount = None if has_base(group) else Mount(
                group, node.joints, cfg.servo_joint_state_timeout,
                every=cfg.servo_avoid_collisions)
            # Measured before the build: building the collision model holds this (the
            # executor) thread, so joint_states read after it would look stale.
            q = self._measured(group)
            output_map = self._output_map(group)  # before the build: refused early
            frame = cfg.servo_frame or tip
            if has_base(group):
                q = self._with_measured_base(group, q)
                supervisor = WholeBodySupervisor(self._whole_body_servo(group, frame, q),
                                                 group, cfg.servo_target_timeout)
            else:
                supervisor = self._supervisor(group, frame, q)
        except (RequestError, IKError, ValueError, KeyError) as exc:
            return f"cannot servo: {exc}"
        problem = supervisor.start(q)
        if problem:
            return f"cannot start: {problem}"
        self.supervisor, self.group, self.frame = supervisor, group, frame
        self._mount, self._target_robot, self._mount_note = mount, None, ""
        self.group_name = cfg.servo_group or cfg.default_group_name
        self._snapshot, self._config = snapshot, cfg
        self._order, self._index, self._held = output_map
        if self._loop is None:
            self._loop = PeriodicThread(self.period_s, self.tick, "servo",
                                        cfg.servo_thread_priority)
            self._loop.wait_started()
            if self._loop.priority_error:
                node.get_logger().warning(f"servo_thread_priority: "
                                          f"{self._loop.priority_error}; normal scheduling")
        self._status(force=True)
        return ""

    def _supervisor(self, group, frame: str, q: Optional[np.ndarray]) -> Supervisor:
        """Return the arm servo's supervisor on a fixed-base group (warmed up at ``q``)."""
        cfg = self.node.config
        checker = collision_checker(self.node.robot.snapshot, cfg) \
            if cfg.servo_avoid_collisions else None
        servo = self._make_servo(group, frame, checker)
        supervisor = Supervisor(servo, self._limits(group, servo), cfg.servo_target_timeout,
                                cfg.servo_clearance if cfg.servo_avoid_collisions else 0.0,
                                TipJacobian(group, frame), cfg.servo_output == "velocity")
        if q is not None:
            servo.warm_up(np.clip(q, group.lower, group.upper), self.period_s)
        return supervisor

    def _with_measured_base(self, group, joints: Optional[np.ndarray]) -> Optional[np.ndarray]:
        """Return the group vector at start: the measured base pose, then the joints."""
        if joints is None:
            return None
        if self._base_pose is None:
            raise ValueError("no base pose: publish the measured base pose on "
                             "~/servo/base_pose (PoseStamped in the base's parent frame)")
        q = group.mid_configuration()
        q[joint_part(group)[1]] = joints
        return with_base(group, q, base_of_pose(group, self._base_pose),
                         self.node.robot.snapshot.base_parent_frame, "servo/base_pose")

    def _whole_body_servo(self, group, frame: str, q: Optional[np.ndarray]) -> WholeBodyServo:
        """Return the whole-body step on the group's full model (contacts, CoM, ``frame``)."""
        cfg = self.node.config
        contacts = clean_list(cfg.servo_contacts)
        if not contacts:
            raise ValueError("servo_contacts: name the frames held in place (the feet)")
        points = np.asarray(cfg.servo_contact_points, dtype=float)
        if points.size == 0 or points.size % 3:
            raise ValueError("servo_contact_points: x y z per point, got "
                             f"{points.size} values")
        config = WholeBodyConfig(hand_gain=cfg.servo_gain,
                                 velocity_scale=cfg.servo_velocity_scaling,
                                 acceleration_limit=cfg.servo_acceleration_limit,
                                 com_margin_m=cfg.servo_com_margin)
        posture = None if q is None else group.to_full_q(q)
        return WholeBodyServo(group.robot.model, frame,
                              [Contact(c, points.reshape(-1, 3)) for c in contacts], config,
                              posture, joint_part(group)[0], group.robot.acceleration_limits)

    def _on_base_pose(self, msg: PoseStamped) -> None:
        self._base_pose = msg

    def stop(self, reason: str) -> None:
        """Stop sending commands (the controller keeps the last one)."""
        with self._lock:
            loop, self._loop = self._loop, None
            if self.supervisor is not None:
                self.supervisor.stop(reason)  # a tick still under way sends nothing more
                self._status(force=True)
        if loop is not None:
            loop.stop()  # outside the lock: the loop's last tick may be waiting for it

    def stop_smoothly(self, reason: str) -> str:
        """Stop once the arm is at rest (decelerating within the limit); say which."""
        with self._lock:
            sup = self.supervisor
            if sup is None or self._loop is None or not np.any(sup.qd):
                self.stop(reason)
                return "stopped"
            sup.request_stop(reason)
            self._status(force=True)
        return "stopping: decelerating to rest within the acceleration limit"

    def _reconfigure(self) -> None:
        """Apply changed parameters to the running servo (same group and frame)."""
        cfg, sup = self.node.config, self.supervisor
        self._config = cfg
        if isinstance(sup, WholeBodySupervisor):  # the gains are read at start
            sup.target_timeout_s = cfg.servo_target_timeout
            return
        try:
            servo = self._make_servo(self.group, self.frame, sup.servo.checker)
        except (IKError, ValueError, KeyError) as exc:
            self.stop(f"new parameters refused: {exc}")
            return
        servo.reset(sup.qd)
        sup.servo, sup.limits = servo, self._limits(self.group, servo)
        sup.target_timeout_s = cfg.servo_target_timeout
        sup.clearance_m = cfg.servo_clearance if sup.servo.checker is not None else 0.0

    def _make_servo(self, group, frame: str, checker) -> Servo:
        cfg = self.node.config
        config = ServoConfig(gain=cfg.servo_gain, velocity_scale=cfg.servo_velocity_scaling,
                             acceleration_limit=cfg.servo_acceleration_limit,
                             **self._collision_fields(cfg))
        return Servo(group, frame, config, checker=checker)

    @staticmethod
    def _collision_fields(cfg) -> dict:
        return {"clearance_m": cfg.servo_clearance,
                "influence_m": max(cfg.servo_influence_distance, cfg.servo_clearance + 0.01)}

    def _limits(self, group, servo: Servo) -> Limits:
        cfg = self.node.config
        return Limits(np.array(group.lower), np.array(group.upper), np.array(servo.vmax),
                      np.array(servo.amax), tuple(group.joint_names),
                      cfg.servo_max_tracking_error)

    def _output_map(self, group) -> tuple:
        """``(order, index, held)``: the controller's joints, their group indices, held values.

        ``index`` -1: not in the group, held at ``held`` (its last joint_states position
        [rad or m]; 0 in a velocity command).  Raises ValueError naming the controller
        joints outside the group that joint_states never gave, for a position or
        trajectory command: it would carry NaN for them to the controller.
        """
        cfg = self.node.config
        order = list(clean_list(cfg.controller_joints)) or list(joint_part(group)[0])
        where = {name: i for i, name in enumerate(group.joint_names)}
        index = np.array([where.get(n, -1) for n in order])
        latest = self.node.joints.latest()
        unknown = [n for n, i in zip(order, index) if i < 0 and n not in latest]
        if unknown and cfg.servo_output != "velocity":
            raise ValueError(f"controller_joints {unknown} are outside the group and "
                             f"joint_states never gave their position: a "
                             f"{cfg.servo_output} command cannot hold them")
        return order, index, np.array([latest.get(n, 0.0) for n in order])

    def _measured(self, group) -> Optional[np.ndarray]:
        """Return the measured joints (a whole-body group's without the base); None if stale."""
        cfg = self.node.config
        current = self.node.joints.fresh(joint_part(group)[0], cfg.servo_joint_state_timeout)
        if current is None:
            return None
        return np.fromiter(current.values(), float, len(current))

    # --- targets -----------------------------------------------------------------------
    def on_pose(self, msg: PoseStamped) -> None:
        """Take a pose target (servo_targets.pose_target); a bad one is logged, ignored."""
        self._take(pose_target, msg)

    def on_twist(self, msg: TwistStamped) -> None:
        """Take a twist target (servo_targets.twist_target); a bad one is logged, ignored."""
        self._take(lambda group, q, m: twist_target(group, self.frame, q, m), msg)

    def _take(self, convert, msg) -> None:
        sup = self.supervisor
        q = None if sup is None else sup.q_cmd
        if q is None:
            return
        try:
            msg = in_world(self._snapshot, self.group, msg)
            target = convert(self.group, q, msg)
        except ValueError as exc:
            self._reject(str(exc))
            return
        ref = msg.header.frame_id
        with self._lock:
            mount = self._mount
            if mount is not None:  # kept in the robot's world, stepped in the model's
                frame_id = self.group.robot.frame_id(ref) if ref else None
                target = self._target_robot = mount.to_robot(target, frame_id)
                target = mount.to_model(target)
            sup.set_target(target)

    def _reject(self, why: str) -> None:
        self.node.get_logger().warning(f"servo target ignored: {why}",
                                       throttle_duration_sec=1.0)

    # --- the loop ----------------------------------------------------------------------
    def tick(self) -> None:
        """One control period; an error stops the servo (and says why), never the node."""
        if not self.node.context.ok():  # shutting down: destroy_node stops this loop
            return
        with self._lock:
            try:
                self._tick()
            except Exception as exc:  # noqa: BLE001 - the node keeps serving
                self.node.get_logger().error(f"servo stopped: {type(exc).__name__}: {exc}")
                self.stop(f"internal error: {type(exc).__name__}: {exc}")

    def _tick(self) -> None:
        """Step, publish the command, publish the status now and then."""
        now = time.monotonic()
        self._ticks.append(now)
        if self.node.robot.snapshot is not self._snapshot:
            self.stop("the robot model changed: call ~/servo/start again")
            return
        if self.node.config is not self._config:
            self._reconfigure()
        self._follow_mount()
        command = self.supervisor.tick(now, self._measured(self.group), self.period_s)
        if command is not None:
            self.command_pub.publish(self._message(command))
            if has_base(self.group):
                base = base_state(self.group, command.q, self._snapshot.base_parent_frame)
                self.base_pub.publish(pose_stamped(base, self.node.get_clock().now().to_msg()))
        if self.supervisor.report.state == State.STOPPED:  # a controlled stop's end
            self.stop(self.supervisor.report.reason)
            return
        self._status()

    def _follow_mount(self) -> None:
        """Map the target into the model's world again when the joints carrying it moved."""
        mount = self._mount
        if mount is None:
            return
        if mount.update():
            self.supervisor.servo.hold(mount.values)  # the collision checks: as they are now
            if mount.moved and self._target_robot is not None:
                self.supervisor.set_target(mount.to_model(self._target_robot))
        if mount.note and mount.note != self._mount_note:
            self._mount_note = mount.note
            self.node.get_logger().warning(f"servo: {mount.note}")

    def _message(self, command):
        mode = self.node.config.servo_output
        source = command.qd if mode == "velocity" else command.q
        held = 0.0 if mode == "velocity" else self._held
        values = np.where(self._index >= 0, source[self._index], held)
        if mode != "trajectory":
            return Float64MultiArray(data=values.tolist())
        msg = JointTrajectory(joint_names=self._order)
        vel = np.where(self._index >= 0, command.qd[self._index], 0.0)
        msg.points = [JointTrajectoryPoint(
            positions=values.tolist(), velocities=vel.tolist(),
            time_from_start=Duration(nanosec=int(self.period_s * 1e9)))]
        return msg

    def _status(self, force: bool = False) -> None:
        if not self.node.context.ok():
            return
        rep = self.supervisor.report
        now = time.monotonic()
        key = (rep.state, rep.reason)
        if not force and key == self._last_status[1] and now - self._last_status[0] < \
                STATUS_PERIOD_S:
            return
        self._last_status = (now, key)
        try:
            self.status_pub.publish(self._status_msg(rep))
        except Exception:  # noqa: BLE001 - the context may end between the check and here
            if self.node.context.ok():
                raise  # a real failure; a SIGINT's shutdown (a stop at teardown) is not

    def _status_msg(self, rep) -> ServoStatus:
        msg = ServoStatus(state=int(rep.state), reason=rep.reason,
                          group=self.group_name, frame=self.frame or "")
        msg.header.stamp = self.node.get_clock().now().to_msg()
        msg.position_error, msg.orientation_error = rep.position_error, rep.orientation_error
        msg.clearance, msg.manipulability = rep.clearance, rep.manipulability
        ticks = np.array(self._ticks)
        recent = np.diff(ticks[ticks > ticks[-1] - 1.0]) if len(ticks) > 2 else np.zeros(0)
        if recent.size:
            msg.period_median = float(np.median(recent))
            msg.period_p99 = float(np.percentile(recent, 99))
        msg.ticks = int(recent.size)
        return msg
