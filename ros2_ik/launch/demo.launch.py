"""The demo: ik_node on the embedded Franka Panda (example-robot-data), shown in rviz.

    ros2 launch ros2_ik demo.launch.py             # rviz:=false for no window

Starts ik_node (URDF and SRDF of example-robot-data as parameters, config/panda.yaml),
robot_state_publisher for /tf, joint_state_publisher that republishes the latest IK
solution (``/ik_node/solution``) as ``/joint_states`` (starting at the Panda's ready
pose), and rviz with config/demo.rviz.  The robot model in rviz therefore shows each
answer, and the next solve is seeded from it.  Goals: rviz's "2D Goal Pose" tool
(``/goal_pose``, a pose in the panda_link0 plane), the interactive marker at the hand
(when interactive_markers is installed), or ``ros2 service call /compute_ik ...``.

Only ``generate_launch_description`` imports ``launch``: the parameters are built by
plain functions, so the tests start ik_node with exactly them where launch is absent.
"""
import os
from typing import Dict, List

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


def generate_launch_description():
    """ik_node, robot_state_publisher, joint_state_publisher and (optionally) rviz."""
    from launch import LaunchDescription
    from launch.actions import DeclareLaunchArgument
    from launch.conditions import IfCondition
    from launch.substitutions import LaunchConfiguration
    from launch_ros.actions import Node

    # launch_ros passes plain str parameters through yaml.dump: XML arrives unchanged.
    urdf = robot_description()["robot_description"]
    return LaunchDescription(
        [DeclareLaunchArgument(name, default_value=default, description=text)
         for name, default, text in ARGUMENTS]
        + [Node(package="ros2_ik", executable="ik_node", name="ik_node", output="screen",
                parameters=demo_parameters()),
           Node(package="robot_state_publisher", executable="robot_state_publisher",
                parameters=[{"robot_description": urdf}]),
           Node(package="joint_state_publisher", executable="joint_state_publisher",
                parameters=joint_state_publisher_parameters()),
           Node(package="rviz2", executable="rviz2", arguments=["-d", rviz_config()],
                condition=IfCondition(LaunchConfiguration("rviz")))])
