"""The README's commands work as written: parameter table, service call, Python API."""
import os
import pathlib
import re
import shlex

import numpy as np
import pinocchio as pin
import pytest
import yaml
from panda_node import T_frame, pose_errors

ROOT = pathlib.Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()


def section(name: str) -> str:
    return README.split(f"<!-- {name}:begin -->", 1)[1].split(f"<!-- {name}:end -->", 1)[0]


def fill(msg, values: dict):
    """Set message fields from a dict, as `ros2 service call` does with its YAML."""
    for key, value in values.items():
        if isinstance(value, dict):
            fill(getattr(msg, key), value)
        else:
            current = getattr(msg, key)
            setattr(msg, key, type(current)(value) if isinstance(current, float) else value)
    return msg


def test_parameter_table_matches_schema():
    pytest.importorskip("rclpy")
    import sys
    sys.path.insert(0, str(ROOT / "tools"))
    from param_table import table
    assert section("params").strip() == table().strip()


def test_python_api_block_runs():
    block = re.search(r"## Python API.*?```python\n(.*?)```", README, re.S).group(1)
    scope = {}
    exec(compile(block, "README.md", "exec"), scope)  # noqa: S102 - our own README
    result, arm, target = scope["result"], scope["arm"], scope["T_base_target"]
    assert result.status.name == "SUCCESS"
    T = arm.fk(np.asarray(result.q), "panda_hand")
    assert np.linalg.norm(T.translation - target.translation) <= 1e-4


def test_service_call_example_succeeds(ros_context):
    from ament_index_python.packages import get_package_share_directory
    from ros2_ik.core import robots
    from ros2_ik.node.harness import Client, NodeProcess
    from ros2_ik_interfaces.srv import ComputeIK

    words = shlex.split(section("service-call").split("```bash", 1)[1].split("```")[0])
    assert words[:5] == ["ros2", "service", "call", "/compute_ik",
                         "ros2_ik_interfaces/srv/ComputeIK"]
    request = fill(ComputeIK.Request(), yaml.safe_load(words[5]))
    config = os.path.join(get_package_share_directory("ros2_ik"), "config", "panda.yaml")
    node = NodeProcess(extra_args=["--params-file", config])
    client = Client("readme_test")
    try:
        urdf = robots.urdf_text("panda")
        client.publish_description(urdf, robots.srdf_text("panda"))
        client.wait_for_service()
        res = client.wait_for_model(request)
    finally:
        client.close()
        node.stop()
    assert res.error_code.val == 1, res.message
    T = T_frame(pin.buildModelFromXML(urdf), res.solution.name, res.solution.position,
                "panda_hand", "panda_link0")
    p, o = request.target.pose.position, request.target.pose.orientation
    T_target = pin.XYZQUATToSE3(np.array([p.x, p.y, p.z, o.x, o.y, o.z, o.w]))
    position_error, orientation_error = pose_errors(T, T_target)
    assert position_error <= 1e-4
    assert orientation_error <= 1e-3
