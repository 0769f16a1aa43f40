"""Entry point of ``ros2 run ros2_ik ik_node``."""
from __future__ import annotations

import faulthandler
import signal
import sys

import rclpy
from rclpy.exceptions import ParameterException
from rclpy.executors import ExternalShutdownException, MultiThreadedExecutor

from ros2_ik.node.ik_node import IKNode


def main(args=None) -> int:
    """Spin the node on a multi-threaded executor until shutdown (Ctrl-C or SIGTERM).

    ``kill -USR1 <pid>`` prints every thread's Python stack (to diagnose a stuck solve).
    """
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    # Hand the GIL over every 0.5 ms (default 5 ms) so joint_states and service
    # callbacks are not held up behind a solving thread (make load: worst gap).
    sys.setswitchinterval(0.0005)
    try:
        with rclpy.init(args=args):
            try:
                node = IKNode()
            except (ValueError, ParameterException) as exc:  # bad configuration
                print(f"ik_node: {exc}", file=sys.stderr)
                return 2
            executor = MultiThreadedExecutor(num_threads=4)
            executor.add_node(node)
            executor.spin()
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
