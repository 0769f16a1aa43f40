"""Start ``ik_node`` as a real process and talk to it over real DDS with rclpy.

Each harness isolates itself: its own ``ROS_DOMAIN_ID`` and (by default) localhost-only
discovery, set before rclpy initialises.  Waits are on conditions with deadlines, never fixed
sleeps.  Used by the node tests and by ``make demo``.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from typing import Callable, Optional, Sequence

import rclpy
from ament_index_python.packages import get_package_prefix
from rclpy.action import ActionClient
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import String

from ros2_ik.node.execution import STALE_JOINTS
from ros2_ik_interfaces.action import ConstrainedIK
from ros2_ik_interfaces.msg import IKErrorCode
from ros2_ik_interfaces.srv import ComputeIK

LATCHED = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.TRANSIENT_LOCAL)


#: Where :func:`isolate_ros` leaves its range and domain for the children that call it
#: again (the tests' conftest.py sets the domain of each pytest-xdist worker here).
_RANGE_CHOSEN = "ROS2_IK_ISOLATED_RANGE"
DOMAIN_CHOSEN = "ROS2_IK_ISOLATED_DOMAIN"


def isolate_ros(domain_id: Optional[int] = None,
                discovery_range: Optional[str] = None) -> int:
    """Put this process (and its children) on a private DDS domain; return its id.

    ``discovery_range``: ``LOCALHOST`` (the default) or ``SUBNET``, ROS's own default,
    under which the node's Fast DDS participant runs on UDPv4 alone (node/transport.py;
    rmw_fastrtps forces shared memory on LOCALHOST).  A child calling with None keeps
    the range and the domain its parent chose (else the domain is ``10 + pid % 90``).
    """
    if domain_id is None:
        domain_id = int(os.environ.get(DOMAIN_CHOSEN, 10 + os.getpid() % 90))
    chosen = discovery_range or os.environ.get(_RANGE_CHOSEN, "LOCALHOST")
    os.environ["ROS_DOMAIN_ID"] = os.environ[DOMAIN_CHOSEN] = str(domain_id)
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = os.environ[_RANGE_CHOSEN] = chosen
    os.environ.pop("ROS_LOCALHOST_ONLY", None)
    return domain_id


def node_executable() -> str:
    """``<prefix>/lib/ros2_ik/ik_node``: where ``ros2 run ros2_ik ik_node`` looks."""
    return os.path.join(get_package_prefix("ros2_ik"), "lib", "ros2_ik", "ik_node")


def wait_for(condition: Callable[[], bool], timeout_s: float, what: str,
             spin: Optional[Callable[[float], None]] = None) -> None:
    """Poll ``condition`` (spinning ``spin`` in between) until true; raise on the deadline."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout_s} s waiting for {what}")
        if spin is not None:
            spin(0.02)
        else:
            time.sleep(0.01)


def act_until(act: Callable[[], None], condition: Callable[[], bool], timeout_s: float,
              what: str, spin: Callable[[float], None], again_after_s: float = 2.0,
              acted: bool = False) -> None:
    """Call ``act`` until ``condition`` holds, again every ``again_after_s`` [s].

    For a message the node publishes once, not latched, in answer to ``act``: a subscriber
    that already sees the node's publisher can still miss it, because discovery matches
    the two ends one at a time and the writer may not know the reader yet (seen in CI:
    a position command never came, the subscriber's publisher count already 1).  Only
    for acts that may be repeated (the same execute from the same joint state).
    ``acted``: the caller has acted once already (wait before acting again).  Raises
    TimeoutError at the deadline.
    """
    deadline = time.monotonic() + timeout_s
    while True:
        if not acted:
            act()
        acted = False
        try:
            wait_for(condition, max(0.1, min(again_after_s, deadline - time.monotonic())),
                     what, spin)
            return
        except TimeoutError:
            if time.monotonic() > deadline:
                raise TimeoutError(f"timed out after {timeout_s} s waiting for {what} "
                                   f"(acted again every {again_after_s} s)") from None


def with_fresh_joints(client: "Client", names: Sequence[str], positions: Sequence[float],
                      ask: Callable[[], object], timeout_s: float = 20.0,
                      velocities: Sequence[float] = ()):
    """Return ``ask()``'s answer once it was asked with fresh joint_states (an execute).

    ``names`` at ``positions`` are published before each ask, as a robot publishes them
    all the time: an execute needs them younger than ``joint_state_timeout``, and an ask
    can overtake a publication, or come after it went stale (seen in CI on a busy
    machine: EXECUTION_REFUSED, :data:`execution.STALE_JOINTS`); then it asks again.
    ``velocities``: published with them (none when empty).
    """
    answers = []

    def asked() -> bool:
        client.publish_joints(names, positions, velocities)
        client.spin(0.05)
        answers.append(ask())
        return STALE_JOINTS not in answers[-1].message
    wait_for(asked, timeout_s, "an answer from fresh joint_states", client.spin)
    return answers[-1]


def with_frame_known(client: "Client", request: ComputeIK.Request,
                     publish: Callable[[], None], timeout_s: float = 20.0):
    """Return the answer to ``request`` once the node knows its target's frame.

    ``publish()`` (what makes the frame known: a planning scene, a TF edge) runs before
    each call, as its source keeps publishing: it may reach the node after a call, or
    (not latched) before the node's subscription matched.  Any answer but FRAME_NOT_FOUND
    ends the wait.
    """
    answers = []

    def asked() -> bool:
        publish()
        answers.append(client.call(request))
        return answers[-1].error_code.val != IKErrorCode.FRAME_NOT_FOUND
    wait_for(asked, timeout_s, f"an answer in frame '{request.target.header.frame_id}'",
             client.spin)
    return answers[-1]


def call_resending(client, request, spin: Callable[[float], None], timeout_s: float = 30.0,
                   resend_after_s: float = 3.0):
    """Call an idempotent service, sending the request again while it goes unanswered.

    The first response to a new client can be dropped by the middleware: wait_for_service
    returns once the server is discovered, and Fast DDS then waits only 100 ms for the
    client's response reader to match before giving the response up ("client will not
    receive response", ros2/rmw_fastrtps#390 and #467), which a loaded machine misses.
    Only for requests that may be served twice (queries, setting a parameter to a value).
    """
    deadline = time.monotonic() + timeout_s
    while True:
        future = client.call_async(request)
        left = deadline - time.monotonic()
        try:
            wait_for(future.done, max(0.1, min(resend_after_s, left)),
                     f"a response from {client.srv_name}", spin)
            return future.result()
        except TimeoutError:
            if time.monotonic() > deadline:
                raise TimeoutError(f"no response from {client.srv_name} in {timeout_s} s "
                                   f"(re-sent every {resend_after_s} s)") from None


class NodeProcess:
    """``ik_node`` running as a child process with ``--ros-args`` parameters."""

    def __init__(self, params: Optional[dict] = None, extra_args: Sequence[str] = (),
                 env: Optional[dict] = None):
        """Start the node; ``env`` adds or overrides environment variables."""
        self._log = tempfile.NamedTemporaryFile(prefix="ik_node_", suffix=".log",
                                                delete=False)
        args = [node_executable(), "--ros-args"]
        for name, value in (params or {}).items():
            args += ["-p", f"{name}:={_param_text(value)}"]
        args += list(extra_args)
        env = dict(os.environ, RCUTILS_LOGGING_BUFFERED_STREAM="0", PYTHONUNBUFFERED="1",
                   **(env or {}))
        self.proc = subprocess.Popen(args, stdout=self._log, stderr=subprocess.STDOUT,
                                     env=env)

    def alive(self) -> bool:
        """Return True while the process runs."""
        return self.proc.poll() is None

    def output(self) -> str:
        """Everything the node printed so far."""
        with open(self._log.name, encoding="utf-8", errors="replace") as f:
            return f.read()

    def stop(self, timeout_s: float = 10.0) -> int:
        """SIGINT, as Ctrl-C or a launch shutdown would; kill after ``timeout_s``."""
        if self.alive():
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout_s)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        return self.proc.returncode


class FakeControllerProcess(NodeProcess):
    """``node/fake_controller.py`` as a child process: a simulated arm under ``namespace``."""

    def __init__(self, namespace: str, joints: Sequence[str], positions: Sequence[float],
                 command_topic: str, mode: str = "position", rate_hz: float = 250.0,
                 lag_s: float = 0.0):
        """Publish ``namespace``/joint_states from ``positions``, obey ``command_topic``.

        ``lag_s``: how late joint_states read in mode ``follow`` [s].
        """
        self._log = tempfile.NamedTemporaryFile(prefix="fake_controller_", suffix=".log",
                                                delete=False)
        args = [sys.executable, "-m", "ros2_ik.node.fake_controller", "--ros-args",
                "-r", f"__ns:=/{namespace.strip('/')}",
                "-p", f"joints:={_param_text(list(joints))}",
                "-p", f"positions:={_param_text([float(v) for v in positions])}",
                "-p", f"command_topic:={command_topic}", "-p", f"mode:={mode}",
                "-p", f"rate:={float(rate_hz)}", "-p", f"lag:={float(lag_s)}"]
        env = dict(os.environ, RCUTILS_LOGGING_BUFFERED_STREAM="0", PYTHONUNBUFFERED="1")
        self.proc = subprocess.Popen(args, stdout=self._log, stderr=subprocess.STDOUT,
                                     env=env)


def _param_text(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(_param_text(v) for v in value) + "]"
    if isinstance(value, str) and "\n" in value:
        raise ValueError("pass multi-line strings (URDF) over the topic, not -p")
    return str(value)


class Client:
    """An rclpy node that plays robot_state_publisher, a driver and a service client."""

    def __init__(self, name: str = "ik_test_client", namespace: str = ""):
        self.node: Node = rclpy.create_node(name)
        ns = namespace.rstrip("/")
        #: The namespace of the node it talks to ('' or '/name').
        self.namespace = ns
        self.description_pub = self.node.create_publisher(
            String, f"{ns}/robot_description", LATCHED)
        self.semantic_pub = self.node.create_publisher(
            String, f"{ns}/robot_description_semantic", LATCHED)
        self.joint_pub = self.node.create_publisher(JointState, f"{ns}/joint_states", 10)
        self.ik = self.node.create_client(ComputeIK, f"{ns}/compute_ik")
        self.action = ActionClient(self.node, ConstrainedIK, f"{ns}/constrained_ik")
        #: Whether compute_ik has answered this client once (its responses then arrive).
        self._answered = False
        #: Whether this client published an SRDF (:meth:`wait_for_model` waits for it too).
        self._srdf_sent = False

    def spin(self, timeout_s: float) -> None:
        """Process callbacks for at most ``timeout_s``."""
        rclpy.spin_once(self.node, timeout_sec=timeout_s)

    def publish_description(self, urdf: str, srdf: str = "") -> None:
        """Publish the URDF (and SRDF) latched, as robot_state_publisher does."""
        self.description_pub.publish(String(data=urdf))
        if srdf:
            self.semantic_pub.publish(String(data=srdf))
            self._srdf_sent = True

    def publish_joints(self, names: Sequence[str], positions: Sequence[float],
                       velocities: Sequence[float] = ()) -> None:
        """Publish one joint state, as a driver does (``velocities``: none when empty)."""
        msg = JointState()
        msg.header.stamp = self.node.get_clock().now().to_msg()
        msg.name = list(names)
        msg.position = [float(v) for v in positions]
        msg.velocity = [float(v) for v in velocities]
        self.joint_pub.publish(msg)

    def wait_for_service(self, timeout_s: float = 30.0) -> None:
        """Block until compute_ik is advertised."""
        if not self.ik.wait_for_service(timeout_sec=timeout_s):
            raise TimeoutError("compute_ik service did not appear")

    def call(self, request: ComputeIK.Request, timeout_s: float = 30.0):
        """Call compute_ik and wait for the response.

        Until a first response has arrived, an unanswered request is sent again
        (:func:`call_resending`, after 3 s plus the request's own timeout): the first
        response to a new client can be lost.
        """
        if not self._answered:
            response = call_resending(self.ik, request, self.spin, timeout_s,
                                      3.0 + max(request.timeout, 0.0))
        else:
            future = self.ik.call_async(request)
            wait_for(future.done, timeout_s, "the compute_ik response", self.spin)
            response = future.result()
        self._answered = True
        return response

    def wait_for_model(self, request: ComputeIK.Request, timeout_s: float = 30.0,
                       no_model_code: int = -6, resend_after_s: float = 3.0):
        """Call until the node has a model (answer other than NO_ROBOT_MODEL).

        And, when this client published an SRDF, until the node has it: the URDF and the
        SRDF come on two topics, and a model built from the URDF alone knows no SRDF group
        (INVALID_GROUP, "no SRDF yet"; seen once in CI on the pr2 whole-body example).
        Probes go through :func:`call_resending`: the first response to a new client can be
        lost (seen once in ~10 full test runs as a 30 s timeout on a start-up probe).
        """
        deadline = time.monotonic() + timeout_s
        while True:
            left = max(0.1, deadline - time.monotonic())
            response = call_resending(self.ik, request, self.spin, left, resend_after_s)
            self._answered = True
            waiting_srdf = self._srdf_sent and "no SRDF yet" in response.message
            if response.error_code.val != no_model_code and not waiting_srdf:
                return response
            if time.monotonic() > deadline:
                raise TimeoutError("the node never built the robot model: "
                                   + response.message)
            self.spin(0.05)

    def close(self) -> None:
        """Destroy the client node."""
        self.action.destroy()
        self.node.destroy_node()
