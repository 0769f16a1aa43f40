"""The node's whole-body servo on talos, over real DDS: feet held, CoM inside, a hand tracking.

ik_node (config/talos_whole_body.yaml) servos its whole_body group at 250 Hz; a simulated
controller (node/fake_controller.py) follows the joint commands and publishes
joint_states; the measured base pose comes on ``~/servo/base_pose``.  A target moving on
a small circle is streamed to ``~/servo/target_pose``.  Checked on our own pinocchio model
from the commands the node sent (joints on the command topic, base on
``servo_base_command_topic``): the soles stay where they were, the CoM stays inside
their polygon, the hand follows the target.
"""
import math
import time

import numpy as np
import pinocchio as pin
import pytest

pytest.importorskip("rclpy")

from geometry_msgs.msg import PoseStamped  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402

from ros2_ik.core import robots  # noqa: E402
from ros2_ik.node.conversions import se3_to_pose  # noqa: E402
from ros2_ik.node.harness import FakeControllerProcess, wait_for  # noqa: E402
from ros2_ik_interfaces.msg import ServoStatus  # noqa: E402
from whole_body_checks import SOLE, call_servo, inside_by, serve, stop  # noqa: E402

NS = "wbservo"
HAND = "gripper_left_base_link"
FEET = ("left_sole_link", "right_sole_link")
MARGIN = 0.02


@pytest.fixture(scope="module")
def servo_node(ros_context):
    urdf = (robots.data_dir() / "talos_data/robots/talos_full_v2.urdf").read_text()
    model = pin.buildModelFromXML(urdf, pin.JointModelFreeFlyer())
    joints = [model.names[j] for j in range(2, model.njoints)]
    names = "[" + ",".join(joints) + "]"
    points = "[" + ",".join(f"{x},{y},0.0" for x, y in SOLE) + "]"
    controller = FakeControllerProcess(NS, joints, [0.0] * len(joints), f"/{NS}/commands")
    node, client, _ = serve(
        NS, "talos_whole_body.yaml", "talos_data/robots/talos_full_v2.urdf",
        "talos_data/srdf/talos.srdf", f"servo_command_topic:=/{NS}/commands",
        f"controller_joints:={names}", f"servo_frame:={HAND}",
        f"servo_contacts:=[{','.join(FEET)}]", f"servo_contact_points:={points}",
        f"servo_com_margin:={MARGIN}", f"servo_base_command_topic:=/{NS}/base_command",
        "servo_avoid_collisions:=false")
    yield client, model, joints
    stop(node, client)
    controller.stop()


def _call(client, name):
    return call_servo(client, NS, name)


def _configuration(model, joints, command, base):
    q = pin.neutral(model)
    p, r = base.pose.position, base.pose.orientation
    q[:7] = (p.x, p.y, p.z, r.x, r.y, r.z, r.w)
    for name, value in zip(joints, command.data):
        q[model.joints[model.getJointId(name)].idx_q] = value
    return q


def _poses(model, q):
    data = model.createData()
    pin.framesForwardKinematics(model, data, q)
    return data, {f: data.oMf[model.getFrameId(f)].copy() for f in FEET + (HAND,)}


def test_feet_held_com_inside_hand_tracks(servo_node):
    client, model, joints = servo_node
    commands = []
    bases = []
    status = []
    client.node.create_subscription(Float64MultiArray, f"/{NS}/commands", commands.append, 50)
    client.node.create_subscription(PoseStamped, f"/{NS}/base_command", bases.append, 50)
    client.node.create_subscription(ServoStatus, f"/{NS}/ik_node/servo/status",
                                    status.append, 50)
    base_pub = client.node.create_publisher(PoseStamped, f"/{NS}/ik_node/servo/base_pose", 10)
    target_pub = client.node.create_publisher(PoseStamped,
                                              f"/{NS}/ik_node/servo/target_pose", 10)
    start = pin.neutral(model)
    start[2] = 1.02
    measured = PoseStamped()
    measured.header.frame_id = "universe"
    measured.pose = se3_to_pose(pin.XYZQUATToSE3(start[:7]))
    wait_for(lambda: base_pub.get_subscription_count() > 0, 10, "base_pose subscriber",
             client.spin)
    # The targets are not latched: sent before discovery matched them, they would be lost
    # and the hand stay where it started (seen once in CI, 0.13 m from the target: the cause
    # is not certain; the asserts below now report the servo's reasons first).
    wait_for(lambda: target_pub.get_subscription_count() > 0, 10, "target_pose subscriber",
             client.spin)
    base_pub.publish(measured)
    client.spin(0.2)
    # The node's warm-up after the model (the whole_body group) can hold its executor: joint_states
    # read during it look stale, and a start then fails; a failed start changes nothing.
    deadline = time.monotonic() + 30.0
    answer = _call(client, "start")
    while not answer.success and time.monotonic() < deadline:
        client.spin(0.25)
        answer = _call(client, "start")
    assert answer.success, answer.message
    _, at_start = _poses(model, start)
    centre = at_start[HAND].translation + (0.08, -0.04, 0.05)

    def target_at(t):
        T = at_start[HAND].copy()
        T.translation = centre + 0.03 * np.array([math.cos(t), math.sin(t), 0.0])
        return T

    t0 = time.monotonic()
    while time.monotonic() - t0 < 3.5:  # a target moving on a 3 cm circle, at ~50 Hz
        msg = PoseStamped()
        msg.header.frame_id = ""
        elapsed = time.monotonic() - t0
        # ... then held still for 0.5 s: the joint command and the base command, two
        # topics, are read as one configuration below; while the target moves, the last
        # of each to arrive can be of different ticks (seen in CI on a busy machine: a
        # foot 7 mm off in that mixed configuration).
        T = target_at(2.0 * min(elapsed, 3.0))
        msg.pose = se3_to_pose(T)
        target_pub.publish(msg)
        client.spin(0.02)
    assert bases and commands
    assert bases[-1].header.frame_id == "universe"
    q = _configuration(model, joints, commands[-1], bases[-1])
    data, now = _poses(model, q)
    for foot in FEET:  # held where they were at start
        err = pin.log6(at_start[foot].actInv(now[foot])).vector
        assert np.linalg.norm(err) < 2e-3, (foot, err)
    corners = np.array([now[f].act(np.array([x, y, 0.0]))[:2] for f in FEET for x, y in SOLE])
    com = pin.centerOfMass(model, data, q)[:2]
    assert inside_by(com, corners) >= MARGIN - 2e-3
    # first the servo's own account: a halt's reason says more than the distance
    assert any(s.state == ServoStatus.RUNNING for s in status), [s.reason for s in status]
    assert np.linalg.norm(now[HAND].translation - T.translation) < 0.02, (  # tracking
        len(commands), [s.reason for s in status[-3:]])
    answer = _call(client, "stop")
    assert answer.success, answer.message


def test_the_base_parent_frame_is_parsed_once_per_model(monkeypatch):
    """The servo reads it every tick: an SRDF parse there held the GIL for the tick's time.

    Parsed once per snapshot (a new model is a new snapshot), with the SRDF's answer.
    """
    from ros2_ik.core.model.robot import Robot
    from ros2_ik.node import robot_source
    calls = []
    parse = robot_source.virtual_joint_parent
    monkeypatch.setattr(robot_source, "virtual_joint_parent",
                        lambda srdf: calls.append(srdf) or parse(srdf))
    urdf = (robots.data_dir() / "pr2_description/urdf/pr2.urdf").read_text()
    srdf = (robots.data_dir() / "pr2_description/srdf/pr2.srdf").read_text()
    snapshot = robot_source.RobotSnapshot(Robot.from_urdf(urdf, srdf, root_joint="srdf"), 1,
                                          urdf, srdf)
    assert [snapshot.base_parent_frame for _ in range(3)] == [parse(srdf)] * 3
    assert parse(srdf) == "odom_combined" and len(calls) == 1
