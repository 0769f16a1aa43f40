"""A callback that raises does not end the node's spin loop (node/spinning.py).

rclpy re-raises a callback's exception out of the executor; ``spin`` ended, and with it
ik_node.  Now the exception is logged and the next request is served.  A real executor
(the node's own choice) and a real service over DDS.
"""
import threading

import pytest

pytest.importorskip("rclpy")

import rclpy  # noqa: E402
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor  # noqa: E402
from rclpy.node import Node  # noqa: E402
from std_srvs.srv import Trigger  # noqa: E402

from ros2_ik.node.spinning import make_executor, spin  # noqa: E402


def test_a_raising_callback_leaves_the_node_serving(ros_context):
    context = rclpy.Context()  # the server's own: shut down at the end, it ends spin()
    rclpy.init(context=context)
    server, client = Node("spin_net_server", context=context), Node("spin_net_client")
    calls = []

    def answer(_request, response):
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("a bug in a callback")
        response.success = True
        return response

    server.create_service(Trigger, "spin_net", answer)
    executor = make_executor(context)
    executor.add_node(server)
    ended = []

    def run():
        try:
            spin(executor)
        except ExternalShutdownException:  # the context's shutdown below
            pass
        ended.append(1)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    caller = client.create_client(Trigger, "spin_net")
    assert caller.wait_for_service(timeout_sec=10.0)
    spinner = SingleThreadedExecutor()
    spinner.add_node(client)
    try:
        first = caller.call_async(Trigger.Request())
        spinner.spin_until_future_complete(first, timeout_sec=2.0)
        assert not first.done()  # the raising call has no reply ...
        for _ in range(2):  # ... and the next ones do
            future = caller.call_async(Trigger.Request())
            spinner.spin_until_future_complete(future, timeout_sec=10.0)
            assert future.done() and future.result().success
        assert thread.is_alive() and not ended
    finally:
        context.shutdown()  # ends the loop; the executor's shutdown wakes its wait
        executor.shutdown(timeout_sec=1.0)
        thread.join(timeout=5.0)
        spinner.shutdown(timeout_sec=1.0)
        server.destroy_node()
        client.destroy_node()
    assert ended  # spin() ends at shutdown, as it should


def test_the_nodes_async_callbacks_answer_instead_of_raising():
    """ComputeIK's and ComputeIKPath's async callbacks reply INTERNAL_ERROR, never raise.

    rclpy 9.1.2's ``EventsExecutor`` (the node's) ends the process with a segmentation
    fault when an async service callback raises: a whole-body path whose markers could not
    be drawn took ik_node down so (test_node_whole_body_dds.py).  Called here with the
    work behind them raising.
    """
    import asyncio
    from types import SimpleNamespace
    from ros2_ik.node.ik_node import IKNode
    from ros2_ik.node.path_server import PathServer
    from ros2_ik_interfaces.msg import IKErrorCode
    from ros2_ik_interfaces.srv import ComputeIK, ComputeIKPath

    def broken(*_args):
        raise RuntimeError("a bug while answering")

    async def on_worker(solve, *args):
        return solve(*args)
    long_solves = SimpleNamespace(run=on_worker)
    for timeout in (0.01, 0.5):  # inline, and on the long-solve worker
        node = SimpleNamespace(config=SimpleNamespace(timeout=0.005, max_timeout=1.0),
                               _on_compute_ik=broken, long_solves=long_solves)
        request = ComputeIK.Request(timeout=timeout)
        reply = asyncio.run(IKNode._on_compute_ik_request(node, request, ComputeIK.Response()))
        assert reply.error_code.val == IKErrorCode.INTERNAL_ERROR
        assert "RuntimeError: a bug while answering" in reply.message
    server = SimpleNamespace(_node=SimpleNamespace(long_solves=long_solves), _answer=broken)
    reply = asyncio.run(PathServer._on_request(server, ComputeIKPath.Request(),
                                               ComputeIKPath.Response()))
    assert reply.error_code.val == IKErrorCode.INTERNAL_ERROR
