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
