"""The launch files started for real: under ``launch_test`` and with ``ros2 launch``.

Needs launch, launch_ros, launch_testing and ros2launch (a ROS 2 install has them; here
tools/ros_src.sh installs them from ../shared/ros-src): skipped without them.  The
node-level checks that run everywhere are in test_launch_files.py.

- launch/launch_files.py (run by ``launch_test``): demo.launch.py and ik.launch.py serve,
  and each ik_node exits with 0 when the launch is shut down;
- ``ros2 launch ros2_ik ik.launch.py``: a launch that fails starts nothing and leaves no
  process; SIGINT to the launch, or SIGKILL of it, leaves no ik_node behind.
"""
import os
import pathlib
import signal
import subprocess
import tempfile

import pytest

for _module in ("launch", "launch_ros", "launch_testing", "ros2launch"):
    pytest.importorskip(_module, reason=f"{_module} is not installed (no PyPI wheel: it "
                        "comes with a ROS 2 install; tools/ros_src.sh installs it for CI)")
pytest.importorskip("rclpy")

from ament_index_python.packages import get_package_share_directory  # noqa: E402
from ros2_ik.core import robots  # noqa: E402
from ros2_ik.node.harness import Client, wait_for  # noqa: E402
from ros2_ik_interfaces.srv import ComputeIK  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent


def processes_with(text: str) -> list:
    """PIDs of the processes whose command line contains ``text``."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmdline = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if text in cmdline:
            pids.append(int(entry))
    return pids


def ros2_launch(namespace: str, *arguments: str):
    """``ros2 launch ros2_ik ik.launch.py namespace:=<namespace> ...`` as a child process."""
    log = tempfile.NamedTemporaryFile(prefix="ros2_launch_", suffix=".log", delete=False)
    proc = subprocess.Popen(["ros2", "launch", "ros2_ik", "ik.launch.py",
                             f"namespace:={namespace}", *arguments],
                            stdout=log, stderr=subprocess.STDOUT)
    proc.log = log.name
    return proc


def output(proc) -> str:
    with open(proc.log, encoding="utf-8", errors="replace") as f:
        return f.read()


def serving_launch(namespace: str):
    """ik.launch.py on the Panda (plain URDF, SRDF, config/panda.yaml), once it serves."""
    data = robots.data_dir()
    config = os.path.join(get_package_share_directory("ros2_ik"), "config", "panda.yaml")
    proc = ros2_launch(namespace, f"config_file:={config}",
                       f"urdf_file:={data / robots.ARMS['panda'].urdf}",
                       f"srdf_file:={data / robots.ARMS['panda'].srdf}")
    client = Client(f"{namespace}_client", namespace=f"/{namespace}")
    try:
        client.wait_for_service(60)
        probe = ComputeIK.Request()
        probe.target.pose.position.x = 0.4
        client.wait_for_model(probe)
    except BaseException:
        proc.kill()
        raise
    finally:
        client.close()
    return proc


def test_both_launch_files_under_launch_testing():
    result = subprocess.run(["launch_test", str(HERE / "launch" / "launch_files.py")],
                            capture_output=True, text=True, timeout=300)
    text = result.stdout + result.stderr
    assert result.returncode == 0, text[-5000:]
    names = ("test_demo_launch_serves", "test_ik_launch_with_a_plain_urdf_serves",
             "test_ik_launch_passes_the_controller_action", "test_each_ik_node_exits_cleanly")
    for name in names:
        assert f"{name} (" in text and text.count(" ... ok") == len(names), text[-5000:]


def test_a_failed_launch_starts_nothing_and_leaves_no_process(ros_context):
    namespace = f"failed_{os.getpid()}"
    proc = ros2_launch(namespace, "config_file:=/nonexistent/my_arm.yaml")
    assert proc.wait(60) != 0, output(proc)
    assert "config_file:=/nonexistent/my_arm.yaml: no such file" in output(proc)
    assert "process started" not in output(proc)
    assert processes_with(f"__ns:=/{namespace}") == []


def test_sigint_to_the_launch_stops_ik_node(ros_context):
    namespace = f"sigint_{os.getpid()}"
    proc = serving_launch(namespace)
    assert len(processes_with(f"__ns:=/{namespace}")) == 1      # ik_node
    proc.send_signal(signal.SIGINT)
    assert proc.wait(30) == 0, output(proc)
    assert "ik_node shutting down" in output(proc)
    wait_for(lambda: not processes_with(f"__ns:=/{namespace}"), 10, "ik_node to exit")


def test_a_killed_launch_leaves_no_ik_node(ros_context):
    namespace = f"killed_{os.getpid()}"
    proc = serving_launch(namespace)
    (node,) = processes_with(f"__ns:=/{namespace}")
    proc.kill()
    proc.wait(10)
    wait_for(lambda: not processes_with(f"__ns:=/{namespace}"), 15,
             f"ik_node (pid {node}) to exit after its launch was killed")
