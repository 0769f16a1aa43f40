"""Shared fixtures. ROS pieces are imported lazily so core tests never load rclpy."""
import fcntl
import os
import tempfile

import pytest

#: node/harness.py's DOMAIN_CHOSEN (not imported: harness loads rclpy).
DOMAIN_CHOSEN = "ROS2_IK_ISOLATED_DOMAIN"
#: The DDS domains test processes claim: 10 .. 10 + DOMAINS - 1.
DOMAINS = 90
#: The lock file held for the claimed domain (kept open for the process's life).
_CLAIMED = []


def pytest_configure(config):
    """Give this test process (each pytest-xdist worker: make test -n 2) a DDS domain of its own.

    The domain is claimed with an exclusive lock on a file per domain in the temp folder,
    held until the process ends: two test runs on one machine (two worktrees, say) never
    share a domain, whose nodes would answer each other's requests.  Every harness, node
    and demo the process starts inherits it (:func:`ros2_ik.node.harness.isolate_ros`).
    """
    config.addinivalue_line(
        "markers", "long: slow and benchmark-like; make test-long runs them, make test not")
    # A worker claims its own (it inherits the controller's); a plain run keeps a domain
    # its caller chose.
    if os.environ.get("PYTEST_XDIST_WORKER") or DOMAIN_CHOSEN not in os.environ:
        os.environ[DOMAIN_CHOSEN] = str(claim_domain(os.getpid()))


def claim_domain(start: int) -> int:
    """Return the first domain from ``start`` (mod :data:`DOMAINS`) whose lock is free.

    Falls back to ``10 + start % DOMAINS`` when every lock is held or none can be made.
    """
    for k in range(DOMAINS):
        domain = 10 + (start + k) % DOMAINS
        path = os.path.join(tempfile.gettempdir(), f"ros2_ik_dds_domain_{domain}.lock")
        try:
            handle = open(path, "a")
        except OSError:
            break
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # another test process holds it
            handle.close()
            continue
        _CLAIMED.append(handle)
        return domain
    return 10 + start % DOMAINS


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
