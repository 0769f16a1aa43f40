"""docs/path.md works as written: its Python block and its `ros2 service call`."""
import pathlib
import re
import shlex

import numpy as np
import pinocchio as pin
import pytest
from panda_node import T_frame, description, pose_errors, start, stop

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "path.md").read_text()


def section(name: str) -> str:
    return DOC.split(f"<!-- {name}:begin -->", 1)[1].split(f"<!-- {name}:end -->", 1)[0]


def test_python_block_runs_and_the_path_follows_the_poses():
    block = re.search(r"```python\n(.*?)```", section("path-python"), re.S).group(1)
    scope = {}
    exec(compile(block, "docs/path.md", "exec"), scope)  # noqa: S102 - our own doc
    result, arm, poses = scope["result"], scope["arm"], scope["poses"]
    assert result.complete, result.message
    q = np.asarray(result.q_path)
    assert len(q) == len(poses)
    assert np.abs(np.diff(q, axis=0)).max() <= 0.1
    assert np.abs(q[0] - scope["q_now"]).max() <= 0.1
    for qi, T in zip(q, poses):
        reached = arm.fk(qi, "panda_hand")
        assert pose_errors(reached, T)[0] <= 1e-4 and pose_errors(reached, T)[1] <= 1e-3


def test_service_call_example_succeeds(ros_context):
    """The request as written, to the service of a Panda ik_node (in a namespace of its own,
    so that tests running side by side do not answer each other)."""
    from ros2_ik.node.harness import call_resending
    from test_readme import filled  # as `ros2 service call` fills it; no rosidl_runtime_py
    from ros2_ik_interfaces.srv import ComputeIKPath

    words = shlex.split(section("path-service-call").split("```bash", 1)[1].split("```")[0])
    assert words[:5] == ["ros2", "service", "call", "/compute_ik_path",
                         "ros2_ik_interfaces/srv/ComputeIKPath"]
    request = ComputeIKPath.Request()
    filled(request, words[5])
    node, client = start("docsp", joints=False)
    try:
        path_client = client.node.create_client(ComputeIKPath, "/docsp" + words[3])
        assert path_client.wait_for_service(timeout_sec=30.0)
        res = call_resending(path_client, request, client.spin, 60.0, 10.0)
    finally:
        stop(node, client)
    urdf = description()[0]
    assert res.error_code.val == 1, res.message
    assert res.fraction == pytest.approx(1.0)
    model = pin.buildModelFromXML(urdf)
    names = res.trajectory.joint_names
    for point, pose in zip(res.trajectory.points, request.waypoints):
        T = T_frame(model, names, point.positions, "panda_hand", "panda_link0")
        p, o = pose.position, pose.orientation
        T_target = pin.XYZQUATToSE3(np.array([p.x, p.y, p.z, o.x, o.y, o.z, o.w]))
        position_error, orientation_error = pose_errors(T, T_target)
        assert position_error <= 1e-4 and orientation_error <= 1e-3
    times = [p.time_from_start.sec + 1e-9 * p.time_from_start.nanosec
             for p in res.trajectory.points]
    assert times[0] == 0.0 and np.all(np.diff(times) > 0)
