"""Shared fixtures. ROS pieces are imported lazily so core tests never load rclpy."""
import pytest


@pytest.fixture(scope="session")
def ros_context():
    """rclpy initialised once, on a private localhost-only DDS domain."""
    from ros2_ik.node.harness import isolate_ros
    import rclpy

    isolate_ros()
    rclpy.init()
    yield
    rclpy.shutdown()


@pytest.fixture(scope="session", autouse=True)
def compiled_attempt():
    """Compile (or load from numba's cache) the compiled attempts before any test.

    As the node does at start-up: the first compilation (~8 s) must not land inside a
    test's timed region or a node's readiness wait.
    """
    from ros2_ik.core import robots
    from ros2_ik.core.servo import Servo
    from ros2_ik.core.solvers import chain_kernel, constraint_kernel, polish_kernel

    chain_kernel.warm_up()
    constraint_kernel.warm_up()
    polish_kernel.warm_up()
    group = robots.load_group("panda")[1]
    Servo(group, group.tip).warm_up(group.mid_configuration(), 0.004)
