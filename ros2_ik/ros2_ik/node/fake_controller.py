"""A simulated arm for servo tests and benchmarks: a stand-in ros2_control controller.

Subscribes to the command topic of a forward position controller, a forward velocity
controller (``std_msgs/Float64MultiArray``, joint order = ``joints``) or a
JointTrajectoryController (``trajectory_msgs/JointTrajectory``: its first point in mode
``trajectory``; in mode ``follow``, the whole trajectory as a JointTrajectoryController
draws it from its own state, :class:`.execution.Move`), and publishes ``joint_states`` at
``rate`` [Hz]: positions follow position commands at once, velocity commands are
integrated over the elapsed time. In mode ``follow`` joint_states carry velocities and
read ``lag`` [s] late (a driver's readings come after they are measured). For monitoring
without a 250 Hz subscription: every second, ``~/command_periods``
(``std_msgs/Float64MultiArray``, a 3 x n array, rows labelled in its layout) holds the
seconds between consecutive commands by three clocks: ``sent`` (the publisher's source
timestamp: the servo's own period), ``received`` (the middleware's reception timestamp in
this process: the period as a controller's real-time buffer sees it) and ``callback``
(when this Python callback ran: adds this process's executor latency); every 40 ms
``~/state_sample`` repeats the current joint state.

Run: ``python -m ros2_ik.node.fake_controller --ros-args -p joints:=[a,b] -p
positions:=[0.0,0.1] -p mode:=position -p command_topic:=/x/commands``.
"""
from __future__ import annotations

import time
from collections import deque
from dataclasses import replace
from typing import Deque, List, Optional, Tuple

import numpy as np
import rclpy
from rclpy.node import Node
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, MultiArrayDimension
from trajectory_msgs.msg import JointTrajectory

from ros2_ik.node.execution import Move
from ros2_ik.node.lifecycle import exit_with_parent
from ros2_ik.node.spinning import spin


PERIOD_CLOCKS = "sent,received,callback"  # the rows of ~/command_periods


class FakeController(Node):
    """Integrates commands into ``joint_states`` (no dynamics, no limits: it obeys)."""

    def __init__(self) -> None:
        super().__init__("fake_controller")
        self.names = list(self.declare_parameter("joints", [""]).value)
        self.q = np.array(self.declare_parameter("positions", [0.0]).value, dtype=float)
        self.mode = self.declare_parameter("mode", "position").value
        topic = self.declare_parameter("command_topic", "commands").value
        rate = float(self.declare_parameter("rate", 250.0).value)
        self.lag_s = float(self.declare_parameter("lag", 0.0).value)
        if len(self.names) != len(self.q) or self.mode not in (
                "position", "velocity", "trajectory", "follow"):
            raise ValueError("joints and positions: same length; mode: position, velocity, "
                             "trajectory or follow")
        self.qd = np.zeros_like(self.q)
        #: Mode follow: (the move, its joints' indices, when it came) and the states drawn.
        self._move: Optional[Tuple[Move, List[int], float]] = None
        self._drawn: Deque[Tuple[float, np.ndarray, np.ndarray]] = deque()
        self._last_tick = self._last_command = None
        self.state_pub = self.create_publisher(JointState, "joint_states", 10)
        self.sample_pub = self.create_publisher(JointState, "~/state_sample", 10)
        self.period_pub = self.create_publisher(Float64MultiArray, "~/command_periods", 10)
        self._periods = ([], [], [])  # sent, received, callback [s]
        kind = JointTrajectory if self.mode in ("trajectory", "follow") else Float64MultiArray
        self.create_subscription(kind, topic, self._on_command, 10)
        self.create_timer(1.0 / rate, self._tick)
        self.create_timer(1.0, self._publish_periods)
        self.create_timer(0.04, lambda: self.sample_pub.publish(self._state()))

    def _on_command(self, msg, info) -> None:
        stamps = (info["source_timestamp"] * 1e-9, info["received_timestamp"] * 1e-9,
                  time.monotonic())
        if self._last_command is not None:
            for periods, now, last in zip(self._periods, stamps, self._last_command):
                periods.append(now - last)
        self._last_command = stamps
        if self.mode == "follow":
            self._follow(msg)
            return
        if self.mode == "trajectory":
            values = msg.points[0].positions if msg.points else []
        else:
            values = msg.data
        if len(values) != len(self.q):
            self.get_logger().error(f"command with {len(values)} values for "
                                    f"{len(self.q)} joints ignored",
                                    throttle_duration_sec=1.0)
            return
        if self.mode == "velocity":
            self.qd = np.array(values, dtype=float)
        else:
            self.q = np.array(values, dtype=float)

    def _follow(self, msg: JointTrajectory) -> None:
        """Start ``msg`` from the arm's state now, as a JointTrajectoryController does."""
        names = list(msg.joint_names)
        if not msg.points or not set(names) <= set(self.names):
            self.get_logger().error(f"trajectory of joints {names} ignored",
                                    throttle_duration_sec=1.0)
            return
        now = time.monotonic()
        q, qd = self._drawn_at(now)
        joints = [self.names.index(n) for n in names]
        move = replace(Move.of(msg, q[joints]), start_velocity=qd[joints])
        self._move = (move, joints, now)

    def _drawn_at(self, t: float) -> Tuple[np.ndarray, np.ndarray]:
        """Mode follow: positions and velocities of every joint at ``t`` (monotonic [s])."""
        q, qd = self.q.copy(), np.zeros_like(self.q)
        if self._move is not None:
            move, joints, t0 = self._move
            q[joints], qd[joints] = move.state_at(t - t0)
        return q, qd

    def _tick(self) -> None:
        now = time.monotonic()
        if self.mode == "velocity" and self._last_tick is not None:
            self.q = self.q + self.qd * (now - self._last_tick)
        self._last_tick = now
        if self.mode == "follow":
            self.q, self.qd = self._drawn_at(now)
            self._drawn.append((now, self.q, self.qd))
            while len(self._drawn) > 1 and self._drawn[1][0] <= now - self.lag_s:
                self._drawn.popleft()  # the first left is the latest lag_s old
            _, q, qd = self._drawn[0]
            msg = JointState(name=self.names, position=q.tolist(), velocity=qd.tolist())
            msg.header.stamp = self.get_clock().now().to_msg()
            self.state_pub.publish(msg)
            return
        self.state_pub.publish(self._state())

    def _state(self) -> JointState:
        msg = JointState(name=self.names, position=self.q.tolist())
        msg.header.stamp = self.get_clock().now().to_msg()
        return msg

    def _publish_periods(self) -> None:
        n = len(self._periods[0])
        if n:
            msg = Float64MultiArray(data=[p for row in self._periods for p in row])
            msg.layout.dim = [MultiArrayDimension(label=PERIOD_CLOCKS, size=3, stride=3 * n),
                              MultiArrayDimension(label="command", size=n, stride=n)]
            self.period_pub.publish(msg)
            self._periods = ([], [], [])


def main(args=None) -> None:
    """Run the fake controller until shutdown (or its parent's exit)."""
    exit_with_parent()  # a test that crashes must not leave a publishing arm behind
    rclpy.init(args=args)
    node = FakeController()
    # Not the EventsExecutor: in this rclpy (9.1) it cannot pass a callback the
    # MessageInfo (SystemError: null argument), and the reception stamps need it.
    executor = rclpy.executors.SingleThreadedExecutor()
    executor.add_node(node)
    try:
        spin(executor)
    except (KeyboardInterrupt, rclpy.executors.ExternalShutdownException):
        pass
    finally:
        node.destroy_node()
        rclpy.try_shutdown()


if __name__ == "__main__":
    main()
