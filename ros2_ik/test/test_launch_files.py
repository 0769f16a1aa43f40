"""Launch files, rviz config and MoveIt kinematics.yaml, checked where ``launch`` is absent.

Static checks parse the files (every LaunchConfiguration declared, every argument used,
every parameter in the schema, every file they name installed).  Node-level tests start
ik_node over real DDS with exactly the parameters, namespace and name the launch files
pass (their parameter functions import no ``launch``), converted to command-line
arguments the way launch_ros does (a dict becomes a ``--params-file``).
"""
import ast
import importlib.util
import os
import pathlib
import tempfile

import numpy as np
import pinocchio as pin
import pytest
import yaml

pytest.importorskip("rclpy")

from ament_index_python.packages import get_package_share_directory  # noqa: E402
from panda_node import ARM, READY  # noqa: E402
from ros2_ik.core import robots  # noqa: E402
from ros2_ik.node.conversions import se3_to_pose  # noqa: E402
from ros2_ik.node.harness import (Client, NodeProcess, node_executable, wait_for,  # noqa: E402
                                  with_fresh_joints)
from ros2_ik.node.interactive_goal import SERVER_NAMESPACE  # noqa: E402
from ros2_ik.node.parameters import SCHEMA, group_specs  # noqa: E402
from ros2_ik_interfaces.msg import IKErrorCode  # noqa: E402
from ros2_ik_interfaces.srv import ComputeIK  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

PKG = pathlib.Path(__file__).resolve().parents[1]
LAUNCH = {name: PKG / "launch" / name for name in ("ik.launch.py", "demo.launch.py")}
DEFAULTS = {spec.name: spec.default for spec in SCHEMA}


def load(name: str):
    """Import a launch file as a module (works without ``launch`` installed)."""
    spec = importlib.util.spec_from_file_location(name.replace(".", "_"), LAUNCH[name])
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def calls(tree: ast.AST, func: str):
    """Every call of ``func(...)`` (a bare name) in the tree."""
    return [node for node in ast.walk(tree) if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name) and node.func.id == func]


def declared_arguments(tree: ast.Module) -> set:
    """Names declared by DeclareLaunchArgument("x") or listed in a module ARGUMENTS."""
    names = {c.args[0].value for c in calls(tree, "DeclareLaunchArgument")
             if c.args and isinstance(c.args[0], ast.Constant)}
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "ARGUMENTS" for t in node.targets):
            names |= {entry[0] for entry in ast.literal_eval(node.value)}
    return names


def schema_names(params: dict) -> set:
    groups = params.get("group_names", [])
    return set(DEFAULTS) | {s.name for g in groups if g for s in group_specs(g)}


def launch_ros_args(parameters, namespace: str = "", name: str = "ik_node") -> list:
    """The command line launch_ros builds for Node(parameters=..., namespace=..., name=...)."""
    args = ["-r", f"__node:={name}"]
    if namespace:
        args += ["-r", f"__ns:=/{namespace.strip('/')}"]
    for entry in parameters:
        if isinstance(entry, dict):
            f = tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False)
            yaml.safe_dump({"/**": {"ros__parameters": entry}}, f)
            f.close()
            entry = f.name
        args += ["--params-file", str(entry)]
    return args


def fk(model, q, ref="panda_link0", frame="panda_hand") -> pin.SE3:
    full = pin.neutral(model)
    full[:7] = q
    data = model.createData()
    pin.framesForwardKinematics(model, data, full)
    return data.oMf[model.getFrameId(ref)].actInv(data.oMf[model.getFrameId(frame)])


def pose_request(T, frame="panda_link0") -> ComputeIK.Request:
    req = ComputeIK.Request()
    req.target.header.frame_id = frame
    req.target.pose = se3_to_pose(T)
    req.seed.name, req.seed.position = ARM, READY
    req.timeout, req.random_seed = 0.5, 1
    return req


@pytest.fixture(scope="module")
def model():
    return pin.buildModelFromXML(robots.urdf_text("panda"))


# --- static checks --------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(LAUNCH))
def test_every_launch_configuration_is_declared_and_used(name):
    tree = ast.parse(LAUNCH[name].read_text())
    used = {c.args[0].value for c in calls(tree, "LaunchConfiguration")}
    declared = declared_arguments(tree)
    assert used <= declared, f"undeclared: {used - declared}"
    assert declared <= used, f"declared but unused: {declared - used}"


@pytest.mark.parametrize("name", sorted(LAUNCH))
def test_launch_is_imported_only_inside_functions(name):
    tree = ast.parse(LAUNCH[name].read_text())
    top = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    modules = [a.name for n in top if isinstance(n, ast.Import) for a in n.names]
    modules += [n.module for n in top if isinstance(n, ast.ImportFrom)]
    assert not [m for m in modules if m.split(".")[0] in ("launch", "launch_ros")]
    assert callable(load(name).generate_launch_description)


@pytest.mark.parametrize("name", sorted(LAUNCH))
def test_ik_node_actions_start_our_executable(name):
    tree = ast.parse(LAUNCH[name].read_text())
    nodes = [{k.arg: k.value.value for k in c.keywords if isinstance(k.value, ast.Constant)}
             for c in calls(tree, "Node")]
    ours = [n for n in nodes if n.get("package") == "ros2_ik"]
    assert len(ours) == 1 and ours[0]["executable"] == "ik_node"
    assert ours[0]["name"] == "ik_node"
    assert os.access(node_executable(), os.X_OK)


def test_ik_launch_parameters_are_in_the_schema():
    ik = load("ik.launch.py")
    params = ik.node_parameters("my_arm.yaml", "my_arm.srdf", "/arm/jtc/joint_trajectory",
                                "<robot/>")
    assert params[0] == "my_arm.yaml"
    assert set(params[1]) <= set(DEFAULTS)
    assert params[1]["srdf_file"] == "my_arm.srdf"
    # Without a file or an SRDF nothing is overridden but the controller topic.
    assert ik.node_parameters("", "", "/t") == [{"controller_topic": "/t"}]
    defaults = {name: default for name, default, _ in ik.ARGUMENTS}
    assert defaults["controller_topic"] == DEFAULTS["controller_topic"]
    servo = ik.node_parameters("", "", "/t", None, "true", "/fpc/commands")[0]
    assert set(servo) <= set(DEFAULTS) and servo["servo_autostart"] is True
    assert servo["servo_command_topic"] == "/fpc/commands"
    # controller_action: passed when given; empty keeps the config file's
    action = "/arm/joint_trajectory_controller/follow_joint_trajectory"
    (given,) = ik.node_parameters("", "", "/t", controller_action=action)
    assert set(given) <= set(DEFAULTS) and given["controller_action"] == action
    assert defaults["controller_action"] == "" == DEFAULTS["controller_action"]


def test_demo_parameters_are_in_the_schema_and_installed():
    demo = load("demo.launch.py")
    config, overrides = demo.demo_parameters()
    assert pathlib.Path(config).is_file() and pathlib.Path(demo.rviz_config()).is_file()
    doc = yaml.safe_load(pathlib.Path(config).read_text())
    file_params = next(iter(doc.values()))["ros__parameters"]
    assert set(overrides) <= schema_names(file_params)
    assert "<robot" in overrides["robot_description"]
    # joint_state_publisher listens to what ik_node publishes as ~/solution.
    (jsp,) = demo.joint_state_publisher_parameters()
    assert jsp["source_list"] == ["ik_node/solution"]
    assert set(jsp["zeros"]) >= set(ARM)


def test_launch_files_are_installed():
    share = pathlib.Path(get_package_share_directory("ros2_ik"))
    for name, path in LAUNCH.items():
        assert (share / "launch" / name).read_text() == path.read_text(), \
            "run tools/build.sh after adding launch files"
    for name in ("demo.rviz", "kinematics_srv.yaml"):
        assert (share / "config" / name).is_file()


def test_rviz_config_shows_what_the_node_publishes():
    rviz = yaml.safe_load((PKG / "config" / "demo.rviz").read_text())
    manager = rviz["Visualization Manager"]
    displays = {d["Class"].split("/")[-1]: d for d in manager["Displays"]}
    assert displays["RobotModel"]["Description Topic"]["Value"] == "/robot_description"
    assert displays["RobotModel"]["Description Topic"]["Durability Policy"] == \
        "Transient Local"                           # robot_state_publisher latches it
    assert displays["MarkerArray"]["Topic"]["Value"] == "/ik_node/markers"
    assert displays["InteractiveMarkers"]["Interactive Markers Namespace"] == \
        "/ik_node/" + SERVER_NAMESPACE.removeprefix("~/")
    tools = {t["Class"].split("/")[-1]: t for t in manager["Tools"]}
    assert tools["SetGoal"]["Topic"]["Value"] == "/" + DEFAULTS["goal_topic"]
    assert "Interact" in tools
    panda = yaml.safe_load((PKG / "config" / "panda.yaml").read_text())
    arm = panda["/**"]["ros__parameters"]["groups"]["arm"]
    assert manager["Global Options"]["Fixed Frame"] == arm["base_link"]


def test_kinematics_yaml_points_moveit_at_our_service():
    kinematics = yaml.safe_load((PKG / "config" / "kinematics_srv.yaml").read_text())
    for group in kinematics.values():
        assert group["kinematics_solver"] == "srv_kinematics_plugin/SrvKinematicsPlugin"
        assert group["kinematics_solver_service_name"] == "/" + DEFAULTS["moveit_ik_service"]


# --- ik_node started with exactly what the launch files pass ------------------------------
def test_demo_node_solves_on_its_parameters_alone(ros_context, model):
    """No topic: the URDF comes from the robot_description parameter, as in the demo."""
    demo = load("demo.launch.py")
    node = NodeProcess(extra_args=launch_ros_args(demo.demo_parameters()))
    client = Client("demo_params_client")
    solutions = []
    client.node.create_subscription(
        JointState, demo.joint_state_publisher_parameters()[0]["source_list"][0],
        solutions.append, 10)
    try:
        client.wait_for_service()
        T = fk(model, np.array(READY) + 0.1)
        res = client.wait_for_model(pose_request(T))
        assert res.error_code.val == IKErrorCode.SUCCESS, res.message
        T_reached = fk(model, res.solution.position)
        assert np.linalg.norm(T_reached.translation - T.translation) <= 1e-4
        wait_for(lambda: solutions, 10, "/ik_node/solution", client.spin)
    finally:
        client.close()
        assert node.stop() == 0, node.output()


#: A MoveIt joint_limits.yaml as the setup assistant writes it (angles in degrees too).
JOINT_LIMITS_YAML = """default_velocity_scaling_factor: 0.1
joint_limits:
  panda_joint1:
    has_velocity_limits: true
    max_velocity: 2.175
    has_acceleration_limits: true
    max_acceleration: 0.5
    max_position: !degrees 150
  panda_joint2:
    has_acceleration_limits: true
    max_acceleration: 0.5
    has_jerk_limits: false
    max_jerk: null
"""


def write_temp(text: str, suffix: str) -> str:
    f = tempfile.NamedTemporaryFile("w", suffix=suffix, delete=False)
    f.write(text)
    f.close()
    return f.name


def test_ik_launch_passes_joint_limits_yaml_as_move_group_gets_it():
    from ros2_ik.node.parameters import check_planning_limit, planning_limit_parameter
    ik = load("ik.launch.py")
    path = write_temp(JOINT_LIMITS_YAML, ".yaml")
    try:
        params = ik.node_parameters("", "", "/t", joint_limits_file=path)[0]
        prefix = "robot_description_planning.joint_limits."
        limits = {name: value for name, value in params.items() if name.startswith(prefix)}
        assert limits == {prefix + "panda_joint1.has_velocity_limits": True,
                          prefix + "panda_joint1.max_velocity": 2.175,
                          prefix + "panda_joint1.has_acceleration_limits": True,
                          prefix + "panda_joint1.max_acceleration": 0.5,
                          prefix + "panda_joint1.max_position": pytest.approx(np.radians(150)),
                          prefix + "panda_joint2.has_acceleration_limits": True,
                          prefix + "panda_joint2.max_acceleration": 0.5}
        assert all(planning_limit_parameter(n) and check_planning_limit(n, v) is None
                   for n, v in limits.items())
        with open(path, "w") as f:
            f.write("panda_joint1: {max_velocity: 1.0}\n")  # no joint_limits mapping
        with pytest.raises(ValueError, match=f"joint_limits_file:={path} has no "
                                             "'joint_limits' mapping"):
            ik.node_parameters("", "", "/t", joint_limits_file=path)
        assert ik.input_problems("", "", "", joint_limits_file="/x/none.yaml") == [
            "joint_limits_file:=/x/none.yaml: no such file"]
    finally:
        os.unlink(path)


def test_ik_launch_node_with_urdf_srdf_namespace_and_controller(ros_context, model):
    """With the arm's joint_limits.yaml: its accelerations time the executed move."""
    from trajectory_msgs.msg import JointTrajectory
    ik = load("ik.launch.py")
    srdf = tempfile.NamedTemporaryFile("w", suffix=".srdf", delete=False)
    srdf.write(robots.srdf_text("panda"))
    srdf.close()
    limits = write_temp(JOINT_LIMITS_YAML, ".yaml")
    config = PKG / "config" / "panda.yaml"
    topic = "/arm1/arm_controller/joint_trajectory"
    params = ik.node_parameters(str(config), srdf.name, topic, robots.urdf_text("panda"),
                                joint_limits_file=limits)
    node = NodeProcess(extra_args=launch_ros_args(params, namespace="arm1"))
    client = Client("ik_launch_client", namespace="/arm1")
    trajectories = []
    client.node.create_subscription(JointTrajectory, topic, trajectories.append, 10)
    try:
        client.wait_for_service()
        T = fk(model, np.array(READY) + 0.05)
        req = pose_request(T)
        req.execute = True
        req.avoid_collisions = True
        res = with_fresh_joints(client, ARM, READY, lambda: client.wait_for_model(req))
        assert res.error_code.val == IKErrorCode.SUCCESS, res.message
        wait_for(lambda: trajectories, 10, "the trajectory on " + topic, client.spin)
        point = trajectories[-1].points[0]
        np.testing.assert_allclose(point.positions, res.solution.position)
        # joint_limits_file is in use: joints 1 and 2 accelerate at most 0.2 x 0.5 rad/s^2,
        # 6 x their move / T^2 at the ends of the controller's cubic from rest.
        seconds = point.time_from_start.sec + 1e-9 * point.time_from_start.nanosec
        move = np.abs(np.array(res.solution.position) - READY)[:2]
        assert seconds == pytest.approx(np.sqrt(6 * move.max() / 0.1), rel=1e-6)
        # The SRDF from srdf_file is in use: without it the touching fingers are the
        # closest pair (at about 0 m); with it that pair is disabled.
        assert set(res.closest_pair) != {"panda_leftfinger", "panda_rightfinger"}
        assert res.min_distance > 0.01
    finally:
        client.close()
        assert node.stop() == 0, node.output()
        os.unlink(srdf.name)
        os.unlink(limits)


def test_ik_launch_node_without_urdf_file_uses_the_topic(ros_context, model):
    ik = load("ik.launch.py")
    params = ik.node_parameters(str(PKG / "config" / "panda.yaml"), "", "/arm2/jtc/cmd")
    node = NodeProcess(extra_args=launch_ros_args(params, namespace="arm2"))
    client = Client("ik_topic_client", namespace="/arm2")
    try:
        client.wait_for_service()
        T = fk(model, np.array(READY) - 0.05)
        assert client.call(pose_request(T)).error_code.val == IKErrorCode.NO_ROBOT_MODEL
        client.publish_description(robots.urdf_text("panda"))
        res = client.wait_for_model(pose_request(T))
        assert res.error_code.val == IKErrorCode.SUCCESS, res.message
    finally:
        client.close()
        assert node.stop() == 0, node.output()


def test_demo_plan_resolves_every_package_before_starting_any():
    """Missing optional packages are named and skipped; rviz:=false never needs rviz2."""
    plan = load("demo.launch.py").plan
    everything = lambda name: True  # noqa: E731
    start, notes = plan(True, everything)
    assert start == ["ros2_ik", "robot_state_publisher", "joint_state_publisher", "rviz2"]
    assert notes == []
    looked_up = []

    def only_ros2_ik(name):
        looked_up.append(name)
        return name == "ros2_ik"
    start, notes = plan(False, only_ros2_ik)
    assert start == ["ros2_ik"] and "rviz2" not in looked_up
    assert len(notes) == 2 and "robot_state_publisher is not installed" in notes[0]
    assert all("ik_node still runs" in n for n in notes)
    start, notes = plan(True, lambda name: name != "rviz2")
    assert start[-1] == "joint_state_publisher" and "rviz2" in notes[0]
    with pytest.raises(RuntimeError, match="ros2_ik"):
        plan(True, lambda name: False)


def test_demo_launch_setup_plans_before_it_builds_any_node():
    """In _launch_setup, plan() is called before the first Node(...) (static check)."""
    tree = ast.parse(LAUNCH["demo.launch.py"].read_text())
    setup = next(f for f in tree.body if isinstance(f, ast.FunctionDef)
                 and f.name == "_launch_setup")
    plan_line = min(c.lineno for c in calls(setup, "plan"))
    assert all(c.lineno > plan_line for c in calls(setup, "Node"))


def test_ik_launch_checks_its_files_before_starting():
    problems = load("ik.launch.py").input_problems
    assert problems("", "", "") == []
    found = problems("/x/arm.urdf.xacro", "/x/arm.srdf", "/x/cfg.yaml",
                     exists=lambda p: p.endswith(".srdf"), which=lambda exe: None)
    assert any("urdf_file:=/x/arm.urdf.xacro" in p for p in found)
    assert any("config_file:=/x/cfg.yaml" in p for p in found)
    assert any("xacro" in p and "not installed" in p for p in found)
    assert not any("srdf_file" in p for p in found)


def test_ik_launch_reads_a_plain_urdf_without_xacro():
    ik = load("ik.launch.py")
    no_xacro, xacro = (lambda exe: None), (lambda exe: "/usr/bin/xacro")
    assert ik.input_problems("/x/arm.urdf", "", "", exists=lambda p: True,
                             which=no_xacro) == []
    assert ik.description_source("/x/arm.urdf", which=no_xacro) == "file"
    assert ik.description_source("/x/arm.urdf", which=xacro) == "xacro"
    assert ik.description_source("/x/arm.urdf.xacro", which=no_xacro) == "xacro"
    found = ik.input_problems("/x/arm.urdf.xacro", "", "", exists=lambda p: True,
                              which=no_xacro)
    assert found == ["urdf_file needs xacro, which is not installed"]
