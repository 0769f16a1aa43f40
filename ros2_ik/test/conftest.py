"""Shared fixtures. ROS pieces are imported lazily so core tests never load rclpy."""
import os

import pytest

#: node/harness.py's DOMAIN_CHOSEN (not imported: harness loads rclpy).
DOMAIN_CHOSEN = "ROS2_IK_ISOLATED_DOMAIN"


def pytest_configure(config):
    """Give each pytest-xdist worker (make test: -n 2) a DDS domain of its own.

    The workers of one run share their parent's pid, so ``10 + (ppid % (90 // n)) * n +
    index`` differs between them by construction; every harness, node and demo a worker
    starts inherits it (:func:`ros2_ik.node.harness.isolate_ros`).  Without workers the
    harness's own choice (``10 + pid % 90``) stands.
    """
    config.addinivalue_line(
        "markers", "long: slow and benchmark-like; make test-long runs them, make test not")
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker:
        count = int(os.environ["PYTEST_XDIST_WORKER_COUNT"])
        slot = os.getppid() % max(1, 90 // count)
        os.environ[DOMAIN_CHOSEN] = str(10 + slot * count + int(worker[2:]))


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

    As the node does at start-up: a compilation must not land inside a test's timed
    region or a node's readiness wait (make build has usually filled the cache).
    """
    from ros2_ik.core.runtime.warm_up import warm_up

    warm_up()
