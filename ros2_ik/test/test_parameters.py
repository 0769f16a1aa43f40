"""The one parameter schema: config/ros2_ik.yaml mirrors it, every parameter is described
with its unit, checks reject bad values, and the running node enforces and exposes it."""
import math
import pathlib
import re
import sys

import pytest
import yaml

pytest.importorskip("rclpy")

from ros2_ik.node.parameters import SCHEMA, check_value, group_specs  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
CONFIG = ROOT / "ros2_ik" / "config"
UNIT = re.compile(r"\[[^\]]+\]")

#: Values each check must refuse (parameters absent from the schema are skipped).
BAD_VALUES = {
    "timeout": [0.0, -1.0, math.nan, math.inf],
    "max_timeout": [0.0, -0.5, math.inf],
    "position_tolerance": [0.0, -1e-4, math.nan],
    "orientation_tolerance": [0.0, math.inf],
    "max_joint_jump": [-0.1],
    "joint_state_timeout": [0.0, -1.0],
    "collision_padding": [-0.01, math.nan],
    "minimum_distance": [-0.01, math.inf],
    "influence_distance": [0.0],
    "controller_mode": ["velocity", ""],
    "velocity_scaling": [0.0, 1.5, -0.2],
    "min_trajectory_duration": [0.0],
    "execute_max_joint_jump": [0.0, -1.0],
    "moveit_ik_service": ["9starts_with_digit", "has space", "a//b", "trailing/", "~x"],
    "interactive_marker_scale": [0.0, -0.2, math.nan],
}
GOOD_VALUES = {
    "moveit_ik_service": ["", "compute_ik", "moveit/compute_ik", "/abs/get_ik", "~/ik"],
    "velocity_scaling": [1.0, 0.01],
}


def ros_parameters(path: pathlib.Path) -> dict:
    """The ``ros__parameters`` of a params file, nested dicts flattened with dots."""
    doc = yaml.safe_load(path.read_text())
    (params,) = [v["ros__parameters"] for v in doc.values()]

    def flat(prefix, value):
        if isinstance(value, dict):
            for key, sub in value.items():
                yield from flat(f"{prefix}{key}.", sub)
        else:
            yield prefix[:-1], value
    return dict(flat("", params))


def test_ros2_ik_yaml_is_generated_from_the_schema():
    sys.path.insert(0, str(ROOT / "tools"))
    from param_yaml import render
    assert (CONFIG / "ros2_ik.yaml").read_text() == render(), \
        "regenerate it: python tools/param_yaml.py --write"


def test_ros2_ik_yaml_lists_exactly_the_schema_with_defaults():
    params = ros_parameters(CONFIG / "ros2_ik.yaml")
    assert list(params) == [spec.name for spec in SCHEMA]
    for spec in SCHEMA:
        assert params[spec.name] == spec.default, spec.name


@pytest.mark.parametrize("path", sorted(p.name for p in CONFIG.glob("*.yaml")
                                        if "ros__parameters" in p.read_text()))
def test_params_files_use_only_declared_parameters(path):
    params = ros_parameters(CONFIG / path)
    groups = params.get("group_names", [])
    declared = {spec.name for spec in SCHEMA}
    declared |= {spec.name for g in groups if g for spec in group_specs(g)}
    assert set(params) <= declared, set(params) - declared
    for name, value in params.items():
        assert check_value(name, value) is None, (name, value)


@pytest.mark.parametrize("spec", SCHEMA, ids=lambda s: s.name)
def test_every_parameter_is_described_with_a_unit(spec):
    assert len(spec.description) > 20 and spec.description.endswith("."), spec.name
    if isinstance(spec.default, float):
        assert UNIT.search(spec.description) or "Fraction" in spec.description, \
            f"{spec.name}: a float parameter names its unit as [unit] (or is a Fraction)"
    elif isinstance(spec.default, int) and not isinstance(spec.default, bool):
        # Counts are dimensionless: the description says what is counted.
        assert UNIT.search(spec.description) or re.search(
            r"number|restarts|attempts|triangles|constraints", spec.description), spec.name


@pytest.mark.parametrize("spec", SCHEMA, ids=lambda s: s.name)
def test_every_default_passes_its_check(spec):
    assert check_value(spec.name, spec.default) is None


@pytest.mark.parametrize("name,value", [(n, v) for n, vs in BAD_VALUES.items() for v in vs])
def test_checks_reject_bad_values(name, value):
    if name not in {spec.name for spec in SCHEMA}:
        pytest.skip(f"{name} is no longer in the schema")
    problem = check_value(name, value)
    assert problem and problem.startswith("must"), (name, value, problem)


@pytest.mark.parametrize("name,value", [(n, v) for n, vs in GOOD_VALUES.items() for v in vs])
def test_checks_accept_good_values(name, value):
    assert check_value(name, value) is None


def test_moveit_service_default_does_not_clash_with_compute_ik():
    (spec,) = [s for s in SCHEMA if s.name == "moveit_ik_service"]
    assert spec.default not in ("compute_ik", "/compute_ik")


# --- the running node ---------------------------------------------------------------
def test_node_refuses_to_start_on_a_bad_value(ros_context):
    from ros2_ik.node.harness import NodeProcess, wait_for
    node = NodeProcess({"interactive_marker_scale": -0.2, "moveit_ik_service": "a b"})
    wait_for(lambda: not node.alive(), 30, "ik_node to exit on bad parameters")
    assert node.stop() == 2, node.output()
    assert "interactive_marker_scale must be > 0" in node.output()


def test_node_exposes_the_schema_descriptions(ros_context):
    import rclpy
    from rcl_interfaces.srv import DescribeParameters
    from ros2_ik.node.harness import NodeProcess, call_resending
    node = NodeProcess(extra_args=["--params-file", str(CONFIG / "ros2_ik.yaml"),
                                   "-r", "__ns:=/params"])
    client_node = rclpy.create_node("params_client")
    try:
        client = client_node.create_client(DescribeParameters,
                                           "/params/ik_node/describe_parameters")
        assert client.wait_for_service(timeout_sec=30), node.output()
        response = call_resending(
            client, DescribeParameters.Request(names=[spec.name for spec in SCHEMA]),
            lambda t: rclpy.spin_once(client_node, timeout_sec=t))
        described = {d.name: d for d in response.descriptors}
        for spec in SCHEMA:
            assert described[spec.name].description == spec.description
            assert described[spec.name].read_only == spec.read_only
    finally:
        client_node.destroy_node()
        assert node.stop() == 0, node.output()


def test_library_starts_reaches_the_solver():
    """The node passes library_starts to solve(); with 0 the restarts are uniform random."""
    import numpy as np
    from ros2_ik.core import robots
    from ros2_ik.core.pose import PoseTarget
    from ros2_ik.core.solve import solve
    from node_inputs import config
    from ros2_ik.node.compute_ik import solve_options
    from ros2_ik_interfaces.srv import ComputeIK

    group = robots.load_group("panda")[1]
    target = PoseTarget(group.tip, group.fk(group.random_configuration(
        np.random.default_rng(2)), group.tip))
    request = ComputeIK.Request(random_seed=3, max_attempts=6)
    results = {}
    for n in (0, 4):
        options = solve_options(request, config(library_starts=n))
        assert options["library_starts"] == n
        results[n] = solve(group, target, group.mid_configuration(), **options)
    direct = solve(group, target, group.mid_configuration(), timeout_s=1.0, max_attempts=6,
                   random_seed=3, library_starts=0)
    assert results[0].iterations == direct.iterations
    np.testing.assert_array_equal(results[0].q, direct.q)
