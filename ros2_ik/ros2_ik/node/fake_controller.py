"""A simulated arm for servo tests and benchmarks: a stand-in ros2_control controller.

Subscribes to the command topic of a forward position controller, a forward velocity
controller (``std_msgs/Float64MultiArray``, joint order = ``joints``) or a
JointTrajectoryController (``trajectory_msgs/JointTrajectory``, first point), and
publishes ``joint_states`` at ``rate`` [Hz]: positions follow position commands at once,
velocity commands are integrated over the elapsed time.  For monitoring without a 250 Hz
subscription: every second, ``~/command_periods`` (``std_msgs/Float64MultiArray``, a 3 x n
array, rows labelled in its layout) holds the seconds between consecutive commands by
three clocks: ``sent`` (the publisher's source timestamp: the servo's own period),
``received`` (the middleware's reception timestamp in this process: the period as a
controller's real-time buffer sees it) and ``callback`` (when this Python callback ran:
adds this process's executor latency); every 40 ms ``~/state_sample`` repeats the current
joint state.

Run: ``python -m ros2_ik.node.fake_controller --ros-args -p joints:=[a,b] -p
positions:=[0.0,0.1] -p mode:=position -p command_topic:=/x/commands``.
"""
from __future__ import annotations

import time

import numpy as np
import rclpy
from rclpy.node import Node
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, MultiArrayDimension
from trajectory_msgs.msg import JointTrajectory

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
        if len(self.names) != len(self.q) or self.mode not in (
                "position", "velocity", "trajectory"):
            raise ValueError("joints and positions: same length; mode: position, velocity "
                             "or trajectory")
        self.qd = np.zeros_like(self.q)
        self._last_tick = self._last_command = None
        self.state_pub = self.create_publisher(JointState, "joint_states", 10)
        self.sample_pub = self.create_publisher(JointState, "~/state_sample", 10)
        self.period_pub = self.create_publisher(Float64MultiArray, "~/command_periods", 10)
        self._periods = ([], [], [])  # sent, received, callback [s]
        kind = JointTrajectory if self.mode == "trajectory" else Float64MultiArray
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

    def _tick(self) -> None:
        now = time.monotonic()
        if self.mode == "velocity" and self._last_tick is not None:
            self.q = self.q + self.qd * (now - self._last_tick)
        self._last_tick = now
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
