"""The servo holds the joint carrying its group where the robot holds it, over real DDS.

PR2's ``right_arm`` (SRDF: ``torso_lift_link`` -> ``r_wrist_roll_link``) hangs from the
torso lift, outside the group.  The lift stands at 0.2 m in ``joint_states``; a simulated
controller (node/fake_controller.py) follows the arm's commands.  A pose target in
``base_link`` must be reached on the robot, i.e. by our own pinocchio FK of the commanded
arm with the lift at 0.2 m (held at 0 instead, the wrist would end 0.2 m off), and again
after the lift rises to 0.25 m while the servo runs (node/servo_mount.py).
"""
import time

import numpy as np
import pinocchio as pin
import pytest

pytest.importorskip("rclpy")

from geometry_msgs.msg import PoseStamped  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402

from ros2_ik.core import robots  # noqa: E402
from ros2_ik.node.conversions import se3_to_pose  # noqa: E402
from ros2_ik.node.harness import FakeControllerProcess, wait_for  # noqa: E402
from panda_node import T_frame  # noqa: E402
from whole_body_checks import call_servo, serve, stop  # noqa: E402

NS = "upservo"
LIFT, HEIGHT = "torso_lift_joint", 0.2
TIP = "r_wrist_roll_link"
ARM = ["r_shoulder_pan_joint", "r_shoulder_lift_joint", "r_upper_arm_roll_joint",
       "r_elbow_flex_joint", "r_forearm_roll_joint", "r_wrist_flex_joint",
       "r_wrist_roll_joint"]
START = [0.0, 0.3, 0.0, -1.2, 0.0, -0.8, 0.0]


@pytest.fixture(scope="module")
def servo_node(ros_context):
    urdf = (robots.data_dir() / "pr2_description/urdf/pr2.urdf").read_text()
    model = pin.buildModelFromXML(urdf)
    controller = FakeControllerProcess(NS, ARM, START, f"/{NS}/commands")
    names = "[" + ",".join(ARM) + "]"
    node, client, _ = serve(
        NS, "ros2_ik.yaml", "pr2_description/urdf/pr2.urdf", "pr2_description/srdf/pr2.srdf",
        "servo_group:=right_arm", f"servo_command_topic:=/{NS}/commands",
        f"controller_joints:={names}", "servo_output:=position",
        "servo_avoid_collisions:=false")
    yield client, model
    stop(node, client)
    controller.stop()


def _tip(model, arm_q, lift: float) -> pin.SE3:
    """``T_base_link_tip`` by our own FK, the arm at ``arm_q`` and the lift at ``lift``."""
    return T_frame(model, ARM + [LIFT], list(arm_q) + [lift], TIP, "base_link")


def _call(client, name):
    return call_servo(client, NS, name)


def test_the_servo_reaches_the_target_at_the_lift_the_robot_holds(servo_node):
    client, model = servo_node
    commands = []
    client.node.create_subscription(Float64MultiArray, f"/{NS}/commands", commands.append, 50)
    lift_pub = client.node.create_publisher(JointState, f"/{NS}/joint_states", 10)
    target_pub = client.node.create_publisher(PoseStamped,
                                              f"/{NS}/ik_node/servo/target_pose", 10)
    wait_for(lambda: target_pub.get_subscription_count() > 0, 10, "target_pose subscriber",
             client.spin)
    # The node must have the lift's state before the start reads it (a start without it
    # holds the lift at 0 and says so in the log): matched, then a few messages.
    wait_for(lambda: lift_pub.get_subscription_count() > 0, 10, "joint_states subscriber",
             client.spin)

    def publish_lift():
        lift_pub.publish(JointState(name=[LIFT], position=[HEIGHT]))

    for _ in range(25):
        publish_lift()
        client.spin(0.02)
    deadline = time.monotonic() + 30.0
    answer = _call(client, "start")
    while not answer.success and time.monotonic() < deadline:
        publish_lift()
        client.spin(0.25)
        answer = _call(client, "start")
    assert answer.success, answer.message
    goal = np.array(START) + np.array([0.15, -0.1, 0.1, 0.2, 0.0, 0.15, 0.1])
    target = PoseStamped()
    target.header.frame_id = "base_link"
    target.pose = se3_to_pose(_tip(model, goal, HEIGHT))
    t0 = time.monotonic()
    while time.monotonic() - t0 < 4.0:  # a 50 Hz target stream, the lift's state beside it
        target_pub.publish(target)
        publish_lift()
        client.spin(0.02)
    assert commands, "no command"
    reached = _tip(model, commands[-1].data, HEIGHT)
    miss = np.linalg.norm(reached.translation - _tip(model, goal, HEIGHT).translation)
    assert miss < 2e-3, f"the wrist ends {miss:.4f} m from the target at the robot's lift"
    # The lift rises 5 cm while the servo runs: the same target, reached at the new height
    # (the servo used to keep the height its start read: the wrist ended 5 cm high).
    height = HEIGHT + 0.05
    t0 = time.monotonic()
    while time.monotonic() - t0 < 4.0:
        target_pub.publish(target)
        lift_pub.publish(JointState(name=[LIFT], position=[height]))
        client.spin(0.02)
    reached = _tip(model, commands[-1].data, height)
    miss = np.linalg.norm(reached.translation - _tip(model, goal, HEIGHT).translation)
    assert miss < 2e-3, f"the wrist ends {miss:.4f} m from the target after the lift rose"
    _call(client, "stop")
