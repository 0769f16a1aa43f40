"""A simulated arm for servo tests and benchmarks: a stand-in ros2_control controller.

Subscribes to the command topic of a forward position controller, a forward velocity
controller (``std_msgs/Float64MultiArray``, joint order = ``joints``) or a
JointTrajectoryController (``trajectory_msgs/JointTrajectory``, first point), and
publishes ``joint_states`` at ``rate`` [Hz]: positions follow position commands at once,
velocity commands are integrated over the elapsed time.  It also records the receive time
of every command on ``~/command_period`` (``std_msgs/Float64``, seconds since the previous
command): the servo's period as the controller sees it.

Run: ``python -m ros2_ik.node.fake_controller --ros-args -p joints:=[a,b] -p
positions:=[0.0,0.1] -p mode:=position -p command_topic:=/x/commands``.
"""
from __future__ import annotations

import time

import numpy as np
import rclpy
from rclpy.node import Node
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64, Float64MultiArray
from trajectory_msgs.msg import JointTrajectory

from ros2_ik.node.lifecycle import exit_with_parent
from ros2_ik.node.spinning import make_executor, spin


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
        self.period_pub = self.create_publisher(Float64, "~/command_period", 100)
        kind = JointTrajectory if self.mode == "trajectory" else Float64MultiArray
        self.create_subscription(kind, topic, self._on_command, 10)
        self.create_timer(1.0 / rate, self._tick)

    def _on_command(self, msg) -> None:
        now = time.monotonic()
        if self._last_command is not None:
            self.period_pub.publish(Float64(data=now - self._last_command))
        self._last_command = now
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
        msg = JointState(name=self.names, position=self.q.tolist())
        msg.header.stamp = self.get_clock().now().to_msg()
        self.state_pub.publish(msg)


def main(args=None) -> None:
    """Run the fake controller until shutdown (or its parent's exit)."""
    exit_with_parent()  # a test that crashes must not leave a publishing arm behind
    rclpy.init(args=args)
    node = FakeController()
    executor = make_executor()
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
