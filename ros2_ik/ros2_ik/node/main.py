"""Entry point of ``ros2 run ros2_ik ik_node``."""
from __future__ import annotations

import faulthandler
import signal
import sys

import rclpy
import rclpy.logging
from rclpy.exceptions import ParameterException
from rclpy.executors import ExternalShutdownException

from ros2_ik.node.ik_node import IKNode
from ros2_ik.node.lifecycle import exit_with_parent, limit_teardown
from ros2_ik.node.spinning import make_executor, spin
from ros2_ik.node.transport import choose_transport


def main(args=None) -> int:
    """Spin the node until shutdown (Ctrl-C, SIGTERM or its parent's exit).

    Threads: see node/spinning.py; the parent watch: node/lifecycle.py.  The last line
    the node logs is "ik_node shutting down".

    The node's DDS transport (UDPv4 under Fast DDS unless configured): node/transport.py.
    ``kill -USR1 <pid>`` prints every thread's Python stack (to diagnose a stuck solve).
    """
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    exit_with_parent()  # SIGTERM when the launch (or shell) that started us dies
    # Hand the GIL over every 0.5 ms (default 5 ms) so that the executor thread (service,
    # joint_states) is not held up behind the action's solving thread (make load).
    sys.setswitchinterval(0.0005)
    transport_note = choose_transport()  # before the DDS participant exists
    try:
        with rclpy.init(args=args):
            try:
                node = IKNode()
            except (ValueError, ParameterException) as exc:  # bad configuration
                print(f"ik_node: {exc}", file=sys.stderr)
                return 2
            except Exception:  # noqa: BLE001 - a signal during start-up: clean exit
                if rclpy.ok():
                    raise
                rclpy.logging.get_logger("ik_node").info("ik_node shutting down")
                return 0
            if transport_note:
                node.get_logger().info(transport_note)
            executor = make_executor()
            executor.add_node(node)
            try:
                spin(executor)
            finally:
                limit_teardown()  # a Fast DDS deadlock must not outlive a launch's stop
                executor.shutdown()
                node.destroy_node()  # first: its /rosout publisher died with the context
                rclpy.logging.get_logger("ik_node").info("ik_node shutting down")
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    faulthandler.cancel_dump_traceback_later()
    return 0


if __name__ == "__main__":
    sys.exit(main())
