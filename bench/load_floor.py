"""The floors of ``bench/load.py``: what rclpy and DDS cost a ComputeIK call without a solve.

Measured in the same run as the node, call by call after each ComputeIK call of the one
client, so that all see the same machine:

- ``get_parameters`` of the node: the node's own executor with next to no work;
- ``std_srvs/Empty`` of a bare server (:func:`floor_server`, its own process, rclpy's
  ``EventsExecutor`` as the node): executor + DDS, both ways, with empty messages;
- ComputeIK of the same bare server, which answers every request with one prepared
  reply shaped as the node's (a 7-joint solution, a message) without reading it: what the
  interface's messages add (rclpy's Python <-> C conversion, a bigger payload).

:func:`conversions_s` times rclpy's message conversions of one call in-process
(``serialize_message`` / ``deserialize_message``: the Python <-> C conversion the executor
does on take and send, plus the CDR step the DDS layer does either way).
"""
from __future__ import annotations

import multiprocessing as mp
import os
import time
from contextlib import contextmanager

FLOOR_NAMESPACE = "/load_floor"
LOST_AFTER_S = 10.0


def _reply():
    """Return a ComputeIK reply shaped as the node's for a Panda SUCCESS."""
    import array
    from load_clients import ARM, READY
    from ros2_ik_interfaces.msg import IKErrorCode
    from ros2_ik_interfaces.srv import ComputeIK
    res = ComputeIK.Response()
    res.solution.name = list(ARM)
    res.solution.position = array.array("d", READY.tolist())
    res.error_code.val = IKErrorCode.SUCCESS
    res.message = "1 solution(s) after 1 attempt(s)"
    res.position_error, res.orientation_error, res.solve_time = 1e-6, 1e-6, 1e-4
    res.iterations, res.random_seed, res.min_distance = 4, 12345, float("nan")
    return res


def floor_server(domain_id: str, stop) -> None:
    """Serve ``empty`` and an echo ``compute_ik`` under :data:`FLOOR_NAMESPACE` until ``stop``."""
    import rclpy
    from load_clients import _start_ros
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from ros2_ik_interfaces.srv import ComputeIK
    from std_srvs.srv import Empty
    executor = _start_ros(domain_id)
    node = rclpy.create_node("load_floor", namespace=FLOOR_NAMESPACE)
    reply, qos = _reply(), QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)
    node.create_service(Empty, "empty", lambda _req, res: res, qos_profile=qos)
    node.create_service(ComputeIK, "compute_ik", lambda _req, _res: reply, qos_profile=qos)
    executor.add_node(node)
    while not stop.is_set():
        executor.spin_once(timeout_sec=0.1)
    node.destroy_node()
    executor.shutdown()
    rclpy.shutdown()


@contextmanager
def floor_process():
    """Run :func:`floor_server` in a spawned process for the ``with`` block."""
    ctx = mp.get_context("spawn")
    stop = ctx.Event()
    proc = ctx.Process(target=floor_server, args=(os.environ["ROS_DOMAIN_ID"], stop))
    proc.start()
    try:
        yield
    finally:
        stop.set()
        proc.join(30)


class Call:
    """One service of a client node, timed call by call."""

    def __init__(self, node, srv_type, name: str, request, qos=None) -> None:
        kwargs = {} if qos is None else {"qos_profile": qos}
        self._client = node.create_client(srv_type, name, **kwargs)
        self._request = request
        if not self._client.wait_for_service(timeout_sec=60):
            raise TimeoutError(f"{name} did not appear")

    def round_trip_s(self, executor, request=None) -> float:
        """Time [s] of one call (nan when unanswered)."""
        from load_clients import _spin_until
        t0 = time.perf_counter()
        future = self._client.call_async(self._request if request is None else request)
        if not _spin_until(executor, future, LOST_AFTER_S):
            self._client.remove_pending_request(future)
            return float("nan")
        return time.perf_counter() - t0


class Floors:
    """The three floor calls of one client, after each of its ComputeIK calls."""

    KEYS = ("get_parameters_s", "empty_s", "echo_compute_ik_s")

    def __init__(self, node, namespace: str) -> None:
        from rcl_interfaces.srv import GetParameters
        from rclpy.qos import QoSProfile, ReliabilityPolicy
        from ros2_ik_interfaces.srv import ComputeIK
        from std_srvs.srv import Empty
        deep = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE)
        self._calls = (
            Call(node, GetParameters, f"{namespace.rstrip('/')}/ik_node/get_parameters",
                 GetParameters.Request(names=["timeout"])),
            Call(node, Empty, f"{FLOOR_NAMESPACE}/empty", Empty.Request(), deep),
            Call(node, ComputeIK, f"{FLOOR_NAMESPACE}/compute_ik", None, deep))

    def round_trips_s(self, executor, request) -> dict:
        """Each floor's time [s] (nan when unanswered); the echo sends ``request``."""
        parameters, empty, echo = self._calls
        return dict(zip(self.KEYS, (parameters.round_trip_s(executor),
                                    empty.round_trip_s(executor),
                                    echo.round_trip_s(executor, request))))


def conversions_s(request, response) -> dict:
    """Time rclpy's conversions of one ComputeIK call [s], on the node's side and the client's.

    Node: the request taken (C -> Python), the empty reply the executor makes, the reply
    sent (Python -> C).  Client: the request sent, the reply taken.
    """
    from rclpy.serialization import deserialize_message, serialize_message
    from ros2_ik_interfaces.srv import ComputeIK
    t0 = time.perf_counter()
    raw_request = serialize_message(request)
    t1 = time.perf_counter()
    deserialize_message(raw_request, ComputeIK.Request)
    ComputeIK.Response()
    raw_response = serialize_message(response)
    t2 = time.perf_counter()
    deserialize_message(raw_response, ComputeIK.Response)
    t3 = time.perf_counter()
    return {"node_conversions_s": t2 - t1, "client_conversions_s": (t1 - t0) + (t3 - t2)}
