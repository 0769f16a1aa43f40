"""launch_testing: start demo.launch.py (no rviz), call /compute_ik, check the answer by
our own FK, then check that ik_node shut down cleanly.

Runs where launch_testing is installed (a ROS 2 install: ``launch_test`` or pytest with
the launch_testing plugin); skipped elsewhere.  The node-level equivalent that runs
everywhere is test_launch_files.py.
"""
import pathlib
import unittest

import pytest

launch_testing = pytest.importorskip(
    "launch_testing",
    reason="launch_testing is not installed (no PyPI wheel; it comes with a ROS 2 "
           "install): demo.launch.py is covered by test_launch_files.py here")

import launch  # noqa: E402
import launch.launch_description_sources  # noqa: E402
import launch_testing.actions  # noqa: E402
import launch_testing.asserts  # noqa: E402
import numpy as np  # noqa: E402
import pinocchio as pin  # noqa: E402
import rclpy  # noqa: E402

from ros2_ik.core import robots  # noqa: E402
from ros2_ik.node.conversions import se3_to_pose  # noqa: E402
from ros2_ik.node.harness import isolate_ros, wait_for  # noqa: E402
from ros2_ik_interfaces.msg import IKErrorCode  # noqa: E402
from ros2_ik_interfaces.srv import ComputeIK  # noqa: E402

DEMO = pathlib.Path(__file__).resolve().parents[1] / "launch" / "demo.launch.py"
READY = [0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785]
ARM = [f"panda_joint{i}" for i in range(1, 8)]
#: Processes other than ik_node (robot_state_publisher, joint_state_publisher) may also
#: report the SIGINT of the shutdown.
OTHER_EXIT_CODES = (0, -2, 130)

# The launched processes inherit this process' private, localhost-only DDS domain.
isolate_ros()


@pytest.mark.launch_test
def generate_test_description():
    """The demo without rviz, and the ReadyToTest marker."""
    demo = launch.actions.IncludeLaunchDescription(
        launch.launch_description_sources.PythonLaunchDescriptionSource(str(DEMO)),
        launch_arguments={"rviz": "false"}.items())
    return launch.LaunchDescription([demo, launch_testing.actions.ReadyToTest()])


def hand_pose(q) -> pin.SE3:
    """Our own FK: T_panda_link0_panda_hand at arm joints ``q``."""
    model = pin.buildModelFromXML(robots.urdf_text("panda"))
    data = model.createData()
    full = pin.neutral(model)
    full[:7] = q
    pin.framesForwardKinematics(model, data, full)
    return data.oMf[model.getFrameId("panda_link0")].actInv(
        data.oMf[model.getFrameId("panda_hand")])


class TestDemoServes(unittest.TestCase):
    """While the demo runs."""

    @classmethod
    def setUpClass(cls):
        rclpy.init()
        cls.node = rclpy.create_node("demo_launch_test")

    @classmethod
    def tearDownClass(cls):
        cls.node.destroy_node()
        rclpy.shutdown()

    def call(self, client, request):
        future = client.call_async(request)
        wait_for(future.done, 30, "the compute_ik response",
                 lambda t: rclpy.spin_once(self.node, timeout_sec=t))
        return future.result()

    def test_compute_ik_answers_with_a_correct_solution(self):
        client = self.node.create_client(ComputeIK, "/compute_ik")
        self.assertTrue(client.wait_for_service(timeout_sec=60), "no /compute_ik")
        T = hand_pose(np.array(READY) + 0.1)
        request = ComputeIK.Request()
        request.target.header.frame_id = "panda_link0"
        request.target.pose = se3_to_pose(T)
        request.timeout, request.random_seed = 0.5, 1
        response = self.call(client, request)
        self.assertEqual(response.error_code.val, IKErrorCode.SUCCESS, response.message)
        T_reached = hand_pose(np.array(response.solution.position))
        self.assertLess(np.linalg.norm(T_reached.translation - T.translation), 1e-4)
        self.assertEqual(list(response.solution.name), ARM)


@launch_testing.post_shutdown_test()
class TestDemoShutdown(unittest.TestCase):
    """After the launch is shut down (SIGINT to every process)."""

    def test_ik_node_exits_cleanly(self, proc_info):
        names = proc_info.process_names()
        ours = [name for name in names if name.startswith("ik_node")]
        self.assertEqual(len(ours), 1, names)
        for name in names:
            allowed = (0,) if name in ours else OTHER_EXIT_CODES
            self.assertIn(proc_info[name].returncode, allowed, name)
