"""ik_node for a physical arm.

    ros2 launch ros2_ik ik.launch.py config_file:=/path/my_arm.yaml \
        urdf_file:=/path/my_arm.urdf.xacro srdf_file:=/path/my_arm.srdf \
        namespace:=arm \
        controller_action:=/arm/joint_trajectory_controller/follow_joint_trajectory \
        joint_limits_file:=/path/my_arm_moveit_config/config/joint_limits.yaml
    # servo: add servo:=true servo_command_topic:=/forward_position_controller/commands

Robot model: with ``urdf_file`` (a URDF or a xacro file; both go through ``xacro``, with
``xacro_args``, where xacro is installed; without xacro a plain URDF is read as it is)
the node gets the URDF as its ``robot_description`` parameter.  Without
it the node listens on the ``robot_description`` topic (in its namespace) that the arm's
bringup already publishes with robot_state_publisher.  This file starts no
robot_state_publisher: the bringup runs one, and a second would fight over /tf.

``config_file``: a copy of ``config/ros2_ik.yaml`` (every parameter, with its default)
with your groups; ``config/panda.yaml`` is a short example.  Arguments given here
override it.

Only ``generate_launch_description`` imports ``launch``: the rest is importable without
it, so the tests check the parameters this file passes where launch is not installed.
"""
import os
import shutil
from typing import Callable, List, Optional

#: (name, default, description) of every launch argument.
ARGUMENTS = (
    ("urdf_file", "", "URDF or xacro file of the arm. Empty: use the robot_description "
     "topic."),
    ("xacro_args", "", "Arguments for xacro, e.g. 'ur_type:=ur5e name:=ur'."),
    ("srdf_file", "", "SRDF file (disabled collision pairs). Empty: the "
     "robot_description_semantic topic, if any."),
    ("config_file", "", "ik_node parameters file (groups, solver, tolerances, ...). "
     "Empty: the defaults of config/ros2_ik.yaml."),
    ("namespace", "", "Namespace of ik_node and of the topics it uses."),
    ("controller_topic", "/joint_trajectory_controller/joint_trajectory",
     "Topic the solutions are sent to when executed."),
    ("controller_action", "", "FollowJointTrajectory action of the controller, e.g. "
     "/arm/joint_trajectory_controller/follow_joint_trajectory: executed solutions go there "
     "instead of controller_topic, and the node learns when a move ends (early too). "
     "Empty: the config file's (by default none: controller_topic)."),
    ("log_level", "info", "ik_node log level (debug, info, warn, error)."),
    ("servo", "false", "true: start the servo (ik_node's ~/servo/*) as soon as the model "
     "and joint_states are there."),
    ("servo_command_topic", "", "Topic of the servo's commands (empty: the config file's "
     "servo_command_topic, default /forward_position_controller/commands)."),
    ("joint_limits_file", "", "MoveIt's joint_limits.yaml of the arm (position bounds, "
     "velocities, accelerations: what the node searches in and times its moves by), passed "
     "as move_group gets it. Empty: the URDF's limits."),
)


def node_parameters(config_file: str, srdf_file: str, controller_topic: str,
                    robot_description: Optional[object] = None, servo: str = "false",
                    servo_command_topic: str = "", joint_limits_file: str = "",
                    controller_action: str = "") -> List[object]:
    """The ``parameters`` of the ik_node action: the file, then the overrides.

    Raises ros2_ik's ``InvalidArgument`` naming ``joint_limits_file`` when it is no
    joint_limits.yaml.
    """
    overrides = joint_limits_parameters(joint_limits_file) if joint_limits_file else {}
    overrides["controller_topic"] = controller_topic
    if controller_action:
        overrides["controller_action"] = controller_action
    if servo.lower() in ("true", "1", "yes"):
        overrides["servo_autostart"] = True
    if servo_command_topic:
        overrides["servo_command_topic"] = servo_command_topic
    if srdf_file:
        overrides["srdf_file"] = srdf_file
    if robot_description is not None:
        overrides["robot_description"] = robot_description
    return ([config_file] if config_file else []) + [overrides]


def joint_limits_parameters(path: str) -> dict:
    """ik_node's ``robot_description_planning.joint_limits.<joint>.<key>`` of a yaml file.

    The keys ik_node reads (``PLANNING_LIMIT_KEYS``), as MoveIt's launch helpers pass
    them to move_group; null values are left out (no parameter holds one).
    """
    from ros2_ik.core.model.joint_limits_yaml import read_section
    from ros2_ik.node.parameters import PLANNING_LIMIT_KEYS, PLANNING_LIMITS_PREFIX

    with open(path, encoding="utf-8") as f:
        section = read_section(f.read(), f"joint_limits_file:={path}")
    return {f"{PLANNING_LIMITS_PREFIX}{joint}.{key}": value
            for joint, keys in section.items() if isinstance(keys, dict)
            for key, value in keys.items() if key in PLANNING_LIMIT_KEYS and value is not None}


def input_problems(urdf_file: str, srdf_file: str, config_file: str,
                   exists: Callable[[str], bool] = os.path.isfile,
                   which: Callable[[str], Optional[str]] = shutil.which,
                   joint_limits_file: str = "") -> List[str]:
    """Return what is wrong with the file arguments, checked before ik_node starts."""
    problems = [f"{arg}:={path}: no such file" for arg, path in
                (("urdf_file", urdf_file), ("srdf_file", srdf_file),
                 ("config_file", config_file), ("joint_limits_file", joint_limits_file))
                if path and not exists(path)]
    if urdf_file and needs_xacro(urdf_file) and which("xacro") is None:
        problems.append("urdf_file needs xacro, which is not installed")
    return problems


def needs_xacro(urdf_file: str) -> bool:
    """Return True for a xacro file (``*.xacro``): a plain URDF can be read without xacro."""
    return urdf_file.endswith(".xacro")


def description_source(urdf_file: str, which: Callable[[str], Optional[str]] = shutil.which
                       ) -> str:
    """How ``urdf_file`` becomes the URDF text: 'xacro' (where installed) or 'file'."""
    return "xacro" if which("xacro") is not None or needs_xacro(urdf_file) else "file"


def generate_launch_description():
    """Declare the arguments; the node is built once they are known."""
    from launch import LaunchDescription
    from launch.actions import DeclareLaunchArgument, OpaqueFunction

    return LaunchDescription(
        [DeclareLaunchArgument(name, default_value=default, description=text)
         for name, default, text in ARGUMENTS]
        + [OpaqueFunction(function=_launch_setup)])


def _launch_setup(context):
    from launch.substitutions import Command, LaunchConfiguration
    from launch_ros.actions import Node
    from launch_ros.parameter_descriptions import ParameterValue

    urdf_file = LaunchConfiguration("urdf_file").perform(context)
    joint_limits_file = LaunchConfiguration("joint_limits_file").perform(context)
    problems = input_problems(urdf_file, LaunchConfiguration("srdf_file").perform(context),
                              LaunchConfiguration("config_file").perform(context),
                              joint_limits_file=joint_limits_file)
    if problems:  # before any process starts: a failed launch leaves nothing behind
        raise RuntimeError("ik.launch.py: " + "; ".join(problems))
    description = None
    if urdf_file and description_source(urdf_file) == "file":
        with open(urdf_file, encoding="utf-8") as f:
            description = f.read()
    elif urdf_file:
        description = ParameterValue(
            Command(["xacro ", urdf_file, " ", LaunchConfiguration("xacro_args")]),
            value_type=str)
    try:
        parameters = node_parameters(
            LaunchConfiguration("config_file").perform(context),
            LaunchConfiguration("srdf_file").perform(context),
            LaunchConfiguration("controller_topic").perform(context), description,
            LaunchConfiguration("servo").perform(context),
            LaunchConfiguration("servo_command_topic").perform(context), joint_limits_file,
            LaunchConfiguration("controller_action").perform(context))
    except ValueError as exc:  # ros2_ik's InvalidArgument: the file is no joint_limits.yaml
        raise RuntimeError(f"ik.launch.py: {exc}") from None
    return [Node(package="ros2_ik", executable="ik_node", name="ik_node",
                 namespace=LaunchConfiguration("namespace"), output="screen",
                 parameters=parameters,
                 arguments=["--ros-args", "--log-level",
                            LaunchConfiguration("log_level")])]
