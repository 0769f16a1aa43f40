"""launch_testing: both launch files, started together as a user would start them.

- ``demo.launch.py rviz:=false`` serves ``/compute_ik``;
- ``ik.launch.py`` with a plain URDF file (no xacro here), the SRDF, ``config/panda.yaml``,
  ``namespace:=lt`` and a ``controller_action`` serves ``/lt/compute_ik``, the action
  reaching the node as its parameter;

each answer checked by our own FK.  After the launch is shut down (SIGINT to every
process) each ik_node has exited with 0.

Run by ``launch_test`` from test_launch_testing.py (where launch_testing is installed);
the node-level equivalent that runs everywhere is test_launch_files.py.
"""
import os
import pathlib
import unittest

import launch
import launch.launch_description_sources
import launch_testing
import launch_testing.actions
import numpy as np
import pinocchio as pin
import rclpy
from ament_index_python.packages import get_package_share_directory

from ros2_ik.core import robots
from ros2_ik.node.conversions import se3_to_pose
from ros2_ik.node.harness import call_resending, isolate_ros
from ros2_ik_interfaces.msg import IKErrorCode
from ros2_ik_interfaces.srv import ComputeIK

LAUNCH = pathlib.Path(__file__).resolve().parents[2] / "launch"
READY = [0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785]
ARM = [f"panda_joint{i}" for i in range(1, 8)]
#: ``ik.launch.py``'s controller_action here (no server: only the parameter is checked).
CONTROLLER_ACTION = "/lt/joint_trajectory_controller/follow_joint_trajectory"
#: Processes other than ik_node (robot_state_publisher, joint_state_publisher) may also
#: report the SIGINT of the shutdown.
OTHER_EXIT_CODES = (0, -2, 130)

# The launched processes inherit this process' private, localhost-only DDS domain.
isolate_ros()


def include(name: str, **arguments: str):
    """IncludeLaunchDescription of one of our launch files with ``arguments``."""
    return launch.actions.IncludeLaunchDescription(
        launch.launch_description_sources.PythonLaunchDescriptionSource(str(LAUNCH / name)),
        launch_arguments=arguments.items())


def generate_test_description():
    """Both launch files, and the ReadyToTest marker."""
    data = robots.data_dir()
    config = os.path.join(get_package_share_directory("ros2_ik"), "config", "panda.yaml")
    return launch.LaunchDescription([
        include("demo.launch.py", rviz="false"),
        include("ik.launch.py", namespace="lt", config_file=config,
                urdf_file=str(data / robots.ARMS["panda"].urdf),
                srdf_file=str(data / robots.ARMS["panda"].srdf),
                controller_action=CONTROLLER_ACTION),
        launch_testing.actions.ReadyToTest()])


def hand_pose(q) -> pin.SE3:
    """Our own FK: T_panda_link0_panda_hand at arm joints ``q``."""
    model = pin.buildModelFromXML(robots.urdf_text("panda"))
    data = model.createData()
    full = pin.neutral(model)
    full[:7] = q
    pin.framesForwardKinematics(model, data, full)
    return data.oMf[model.getFrameId("panda_link0")].actInv(
        data.oMf[model.getFrameId("panda_hand")])


class TestLaunchFilesServe(unittest.TestCase):
    """While both launch files run."""

    @classmethod
    def setUpClass(cls):
        rclpy.init()
        cls.node = rclpy.create_node("launch_files_test")

    @classmethod
    def tearDownClass(cls):
        cls.node.destroy_node()
        rclpy.shutdown()

    def check_serves(self, service: str):
        client = self.node.create_client(ComputeIK, service)
        self.assertTrue(client.wait_for_service(timeout_sec=60), f"no {service}")
        T = hand_pose(np.array(READY) + 0.1)
        request = ComputeIK.Request()
        request.target.header.frame_id = "panda_link0"
        request.target.pose = se3_to_pose(T)
        request.timeout, request.random_seed = 0.5, 1
        # Both nodes have the URDF as a parameter: a model before they first answer.
        response = call_resending(client, request,
                                  lambda t: rclpy.spin_once(self.node, timeout_sec=t))
        self.assertEqual(response.error_code.val, IKErrorCode.SUCCESS, response.message)
        T_reached = hand_pose(np.array(response.solution.position))
        self.assertLess(np.linalg.norm(T_reached.translation - T.translation), 1e-4)
        self.assertEqual(list(response.solution.name), ARM)

    def test_demo_launch_serves(self):
        self.check_serves("/compute_ik")

    def test_ik_launch_with_a_plain_urdf_serves(self):
        self.check_serves("/lt/compute_ik")

    def test_ik_launch_passes_the_controller_action(self):
        from rcl_interfaces.srv import GetParameters
        client = self.node.create_client(GetParameters, "/lt/ik_node/get_parameters")
        self.assertTrue(client.wait_for_service(timeout_sec=60), "no get_parameters")
        response = call_resending(client, GetParameters.Request(names=["controller_action"]),
                                  lambda t: rclpy.spin_once(self.node, timeout_sec=t))
        self.assertEqual(response.values[0].string_value, CONTROLLER_ACTION)


@launch_testing.post_shutdown_test()
class TestLaunchFilesShutdown(unittest.TestCase):
    """After the launch is shut down (SIGINT to every process)."""

    def test_each_ik_node_exits_cleanly(self, proc_info):
        names = proc_info.process_names()
        ours = [name for name in names if name.startswith("ik_node")]
        self.assertEqual(len(ours), 2, names)
        for name in names:
            allowed = (0,) if name in ours else OTHER_EXIT_CODES
            self.assertIn(proc_info[name].returncode, allowed, name)
