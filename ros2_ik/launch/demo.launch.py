"""The demo: ik_node on the embedded Franka Panda (example-robot-data), shown in rviz.

    ros2 launch ros2_ik demo.launch.py             # rviz:=false for no window

Starts ik_node (URDF and SRDF of example-robot-data as parameters, config/panda.yaml),
robot_state_publisher for /tf, joint_state_publisher that republishes the latest IK
solution (``/ik_node/solution``) as ``/joint_states`` (starting at the Panda's ready
pose), and rviz with config/demo.rviz.  The robot model in rviz therefore shows each
answer, and the next solve is seeded from it.  Goals: rviz's "2D Goal Pose" tool
(``/goal_pose``, a pose in the panda_link0 plane), the interactive marker at the hand
(when interactive_markers is installed), or ``ros2 service call /compute_ik ...``.

Packages are resolved before any process starts (:func:`plan`): without
robot_state_publisher, joint_state_publisher or rviz2 the demo says which are missing and
runs ik_node alone on the Panda description it passes; ``rviz:=false`` never looks for
rviz2.  When ik_node exits the launch ends, and ik_node ends with its launch
(node/lifecycle.py), so no ik_node outlives a failed or killed launch.

Only the launch setup imports ``launch``: the parameters and the plan are plain
functions, so the tests check them where launch is absent.
"""
import os
from typing import Callable, Dict, List, Tuple

READY = {"panda_joint1": 0.0, "panda_joint2": -0.785, "panda_joint3": 0.0,
         "panda_joint4": -2.356, "panda_joint5": 0.0, "panda_joint6": 1.571,
         "panda_joint7": 0.785, "panda_finger_joint1": 0.02, "panda_finger_joint2": 0.02}

#: (name, default, description) of every launch argument.
ARGUMENTS = (
    ("rviz", "true", "Start rviz with config/demo.rviz."),
)


def share_dir() -> str:
    """``share/ros2_ik`` of the installed package."""
    from ament_index_python.packages import get_package_share_directory
    return get_package_share_directory("ros2_ik")


def robot_description() -> Dict[str, str]:
    """URDF and SRDF of the Panda shipped with example-robot-data (read from disk)."""
    from ros2_ik.core import robots
    return {"robot_description": robots.urdf_text("panda"),
            "robot_description_semantic": robots.srdf_text("panda")}


def demo_parameters() -> List[object]:
    """The ``parameters`` of ik_node: config/panda.yaml, then the robot model."""
    return [os.path.join(share_dir(), "config", "panda.yaml"), robot_description()]


def joint_state_publisher_parameters() -> List[object]:
    """Republish the IK solutions as joint_states, from the ready pose."""
    return [{"source_list": ["ik_node/solution"], "rate": 30, "zeros": READY}]


def rviz_config() -> str:
    """config/demo.rviz."""
    return os.path.join(share_dir(), "config", "demo.rviz")


#: Optional packages of the demo: (package, executable, what is lost without it).
OPTIONAL = (
    ("robot_state_publisher", "robot_state_publisher", "no /tf: rviz cannot place the robot"),
    ("joint_state_publisher", "joint_state_publisher",
     "solutions are not republished as /joint_states (each solve seeds from mid-limits)"),
    ("rviz2", "rviz2", "no rviz window"),
)


def plan(rviz: bool, has_package: Callable[[str], bool]) -> Tuple[List[str], List[str]]:
    """Decide, before anything starts, which packages to run and what to tell the user.

    Returns the packages to start (ros2_ik's ik_node first) and the lines to log for
    the missing optional ones.  ``has_package(name)`` looks a package up (the ament index
    at launch time).  rviz2 is looked up only when ``rviz`` is true.
    """
    if not has_package("ros2_ik"):
        raise RuntimeError("package 'ros2_ik' not found: source its install/setup.bash")
    start, notes = ["ros2_ik"], []
    for package, _, lost in OPTIONAL:
        if package == "rviz2" and not rviz:
            continue
        if has_package(package):
            start.append(package)
        else:
            notes.append(f"{package} is not installed: {lost}. ik_node still runs on the "
                         f"Panda description this launch passes it (compute_ik, "
                         f"constrained_ik, ~/solution).")
    return start, notes


def _has_package(name: str) -> bool:
    from ament_index_python.packages import PackageNotFoundError, get_package_prefix
    try:
        get_package_prefix(name)
    except PackageNotFoundError:
        return False
    return True


def generate_launch_description():
    """ik_node and, where installed, robot_state_publisher, joint_state_publisher and rviz.

    Every package is resolved (:func:`plan`) before the first process starts, so a missing
    one never leaves an ik_node behind; ik_node's exit ends the launch.
    """
    from launch import LaunchDescription
    from launch.actions import DeclareLaunchArgument, OpaqueFunction

    return LaunchDescription(
        [DeclareLaunchArgument(name, default_value=default, description=text)
         for name, default, text in ARGUMENTS]
        + [OpaqueFunction(function=_launch_setup)])


def _launch_setup(context):
    from launch.actions import EmitEvent, LogInfo, RegisterEventHandler
    from launch.event_handlers import OnProcessExit
    from launch.events import Shutdown
    from launch.substitutions import LaunchConfiguration
    from launch_ros.actions import Node

    rviz = LaunchConfiguration("rviz").perform(context).lower() in ("true", "1", "yes")
    start, notes = plan(rviz, _has_package)
    # launch_ros passes plain str parameters through yaml.dump: XML arrives unchanged.
    urdf = robot_description()["robot_description"]
    ik_node = Node(package="ros2_ik", executable="ik_node", name="ik_node", output="screen",
                   parameters=demo_parameters())
    others = {
        "robot_state_publisher": lambda: Node(
            package="robot_state_publisher", executable="robot_state_publisher",
            parameters=[{"robot_description": urdf}]),
        "joint_state_publisher": lambda: Node(
            package="joint_state_publisher", executable="joint_state_publisher",
            parameters=joint_state_publisher_parameters()),
        "rviz2": lambda: Node(package="rviz2", executable="rviz2",
                              arguments=["-d", rviz_config()]),
    }
    return ([LogInfo(msg=note) for note in notes]
            + [ik_node,
               RegisterEventHandler(OnProcessExit(
                   target_action=ik_node,
                   on_exit=[EmitEvent(event=Shutdown(reason="ik_node exited"))]))]
            + [others[package]() for package in start[1:]])
