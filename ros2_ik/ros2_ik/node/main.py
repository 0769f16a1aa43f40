"""Entry point of ``ros2 run ros2_ik ik_node``."""
from __future__ import annotations

import faulthandler
import signal

import rclpy
from rclpy.executors import ExternalShutdownException, MultiThreadedExecutor

from ros2_ik.node.ik_node import IKNode


def main(args=None) -> None:
    """Spin the node on a multi-threaded executor until shutdown (Ctrl-C or SIGTERM).

    ``kill -USR1 <pid>`` prints every thread's Python stack (to diagnose a stuck solve).
    """
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    try:
        with rclpy.init(args=args):
            node = IKNode()
            executor = MultiThreadedExecutor(num_threads=4)
            executor.add_node(node)
            executor.spin()
    except (KeyboardInterrupt, ExternalShutdownException):
        pass


if __name__ == "__main__":
    main()
