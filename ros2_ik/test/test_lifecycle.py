"""ik_node ends with its parent and on SIGINT / SIGTERM, with its own shutdown line.

A launch that dies (killed, or failing after it started ik_node) must not leave ik_node
running as an orphan.  Checked with the process table, without ``launch``: a plain
Python parent starts ik_node and is SIGKILLed.
"""
import os
import signal
import subprocess
import sys
import tempfile
import time

import pytest

pytest.importorskip("rclpy")

from ros2_ik.node.harness import Client, NodeProcess, node_executable, wait_for  # noqa: E402
from ros2_ik_interfaces.srv import ComputeIK  # noqa: E402

SHUTDOWN_LINE = "ik_node shutting down"
PARENT = """
import subprocess, sys, time
log = open(sys.argv[2], "w")
child = subprocess.Popen([sys.argv[1]], stdout=log, stderr=subprocess.STDOUT)
print(child.pid, flush=True)
time.sleep(600)
"""


def _running(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/status", encoding="utf-8") as status:
            state = next(line for line in status if line.startswith("State:"))
    except (FileNotFoundError, ProcessLookupError):
        return False
    return "Z" not in state.split()[1]


def _read(path: str) -> str:
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def _started(read) -> bool:
    return "ik_node" in read() or "robot_description" in read()


def test_ik_node_exits_when_its_parent_is_killed(ros_context):
    log = tempfile.NamedTemporaryFile(prefix="ik_node_orphan_", suffix=".log", delete=False)
    env = dict(os.environ, RCUTILS_LOGGING_BUFFERED_STREAM="0", PYTHONUNBUFFERED="1")
    parent = subprocess.Popen([sys.executable, "-c", PARENT, node_executable(), log.name],
                              stdout=subprocess.PIPE, text=True, env=env)
    child = int(parent.stdout.readline())
    try:
        wait_for(lambda: len(_read(log.name)) > 0, 60, "ik_node's first log line")
        assert _running(child)
        parent.kill()  # SIGKILL: no chance to clean up, as a crashed launch
        parent.wait(10)
        wait_for(lambda: not _running(child), 15, "the orphaned ik_node to exit")
        wait_for(lambda: SHUTDOWN_LINE in _read(log.name), 5, "the shutdown line")
    finally:
        if _running(child):
            os.kill(child, signal.SIGKILL)
        if parent.poll() is None:
            parent.kill()


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_ik_node_shuts_down_cleanly_on_a_signal(ros_context, sig):
    node = NodeProcess()
    try:
        wait_for(lambda: len(node.output()) > 0, 60, "ik_node's first log line")
        time.sleep(0.5)  # past rclpy.init, whose handler turns the signal into a shutdown
        node.proc.send_signal(sig)
        node.proc.wait(15)
        assert node.proc.returncode == 0, node.output()
        assert node.output().rstrip().splitlines()[-1].endswith(SHUTDOWN_LINE), node.output()
    finally:
        node.stop()


HANGING_TEARDOWN = """
import sys, time
from ros2_ik.node import ik_node, lifecycle
lifecycle.TEARDOWN_LIMIT_S = 1.0
def destroy_node(self):  # stands in for Fast DDS's deadlock in destroy_participant
    time.sleep(60)
ik_node.IKNode.destroy_node = destroy_node
from ros2_ik.node.main import main
sys.exit(main())
"""


def test_a_teardown_that_hangs_ends_the_process_at_its_limit(ros_context):
    log = tempfile.NamedTemporaryFile(prefix="ik_node_hang_", suffix=".log", delete=False)
    env = dict(os.environ, RCUTILS_LOGGING_BUFFERED_STREAM="0", PYTHONUNBUFFERED="1")
    proc = subprocess.Popen([sys.executable, "-c", HANGING_TEARDOWN, "--ros-args",
                             "-r", "__ns:=/teardown_hang"],
                            stdout=log, stderr=subprocess.STDOUT, env=env)
    client = Client("teardown_hang_client", namespace="/teardown_hang")
    try:
        client.wait_for_service(60)
        client.call(ComputeIK.Request())  # answered (no model yet): the node is spinning
        proc.send_signal(signal.SIGINT)
        t0 = time.monotonic()
        proc.wait(20)  # not the 60 s of the hang
        assert time.monotonic() - t0 < 10
        assert proc.returncode == 1, _read(log.name)  # faulthandler's exit, not a clean 0
        assert "destroy_node" in _read(log.name)  # every thread's stack, for the report
    finally:
        client.close()
        if proc.poll() is None:
            proc.kill()
