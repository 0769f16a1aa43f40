"""ik_node's servo beside a second arm that moves, over real DDS (Baxter).

The left arm is servoed toward its right; its joint_states come from
``node/fake_controller.py``, which follows the servo's commands.  The right arm is another
driver's: this test publishes its joint_states, clear of the left arm's path when the
servo starts, then moved onto the left arm's target.  With ``servo_avoid_collisions`` the
node reads the joints beside the servo's chain every tick (``node/servo_mount.py``) and
holds them in its collision checks (``Servo.hold``), so the left arm stops short of where
the right arm now stands, not of where it stood at the start.  Checked with a collision
checker of this test's own (coal on a model built here) at each command the node sent,
with the right arm where this test put it.
"""
import time

import numpy as np
import pinocchio as pin
import pytest

pytest.importorskip("rclpy")

from geometry_msgs.msg import PoseStamped  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402

from panda_node import serve  # noqa: E402
from ros2_ik.core import robots  # noqa: E402
from ros2_ik.core.collision import CollisionChecker, PlanningScene  # noqa: E402
from ros2_ik.core.pose import PoseTarget  # noqa: E402
from ros2_ik.core.solve import solve  # noqa: E402
from ros2_ik.node.conversions import se3_to_pose  # noqa: E402
from ros2_ik.node.harness import FakeControllerProcess, wait_for  # noqa: E402
from ros2_ik_interfaces.msg import ServoStatus  # noqa: E402
from whole_body_checks import call_servo  # noqa: E402

NS = "dual"
COMMANDS = f"/{NS}/commands"
CLEARANCE = 0.01  # servo_clearance [m] (the left arm starts 16 mm from its shoulder's mount)
BASE, TIP = "torso", "left_gripper"
#: The links the left arm moves (the right gripper's fingers sit 6.5 mm apart whatever
#: either arm does: pairs of the right arm alone are not the servo's to keep).
LEFT = ("left_", "l_gripper")
RIGHT = ("right_", "r_gripper")


class Scenario:
    """The robot, its two arms, the left arm's start and target, the right arm's poses."""

    def __init__(self):
        self.robot, self.left = robots.load_group("baxter_left")
        self.right = self.robot.group(base=BASE, tip="right_gripper")
        model = self.robot.model
        self.q0 = self.left.mid_configuration()
        T0 = self.left.fk(self.q0, TIP)
        #: The left gripper's target: 0.5 m toward the right arm, as it is [world].
        self.T_goal = pin.SE3(T0.rotation, T0.translation + np.array([0.0, -0.5, 0.0]))
        self.T_base_goal = self.left.fk(self.q0, BASE).actInv(self.T_goal)
        #: The right arm clear of the path (its mid-limits, mirrored on the other side),
        #: then with its hand on the left arm's target (position only).
        self.away = self.right.mid_configuration()
        there = solve(self.right, PoseTarget(self.right.tip, pin.SE3(
            np.eye(3), self.T_goal.translation), position_only=True), self.away, "lm", 0.5, 0, 1)
        assert there.success, there.message
        self.there = np.array(there.q)
        #: Every other joint (head, fingers) at 0 within its limits, published as it is.
        others = [model.names[j] for j in range(1, model.njoints) if model.nqs[j] == 1
                  and model.names[j] not in self.left.joint_names + self.right.joint_names]
        self.others = {n: float(np.clip(0.0, *self.robot.joint_limits(n))) for n in others}
        self.checker = CollisionChecker.from_urdf(
            model, robots.urdf_text("baxter_left"), robots.srdf_text("baxter_left"),
            PlanningScene.for_model(model))

    def right_state(self, q_right):
        """Names and values of the joint state this test publishes: right arm and others."""
        names = list(self.right.joint_names) + list(self.others)
        return names, list(q_right) + list(self.others.values())

    def distance(self, q_left, q_right, other=()) -> float:
        """Smallest distance [m] of a pair with a side the left arm moves (our checker).

        ``other``: prefixes of the other side's links (none: any link).
        """
        model = self.robot.model
        full = pin.neutral(model)
        for names, values in ((self.left.joint_names, q_left),
                              (self.right.joint_names, q_right),
                              (tuple(self.others), tuple(self.others.values()))):
            for name, value in zip(names, values):
                full[model.idx_qs[model.getJointId(name)]] = value
        pairs = self.checker.distances(full)
        return min(d for d, names in zip(pairs.distances_m, pairs.compiled.pair_names)
                   if any(n.startswith(LEFT) for n in names)
                   and (not other or any(n.startswith(other) for n in names)))


@pytest.fixture(scope="module")
def scenario():
    return Scenario()


@pytest.fixture(scope="module")
def dual(ros_context, scenario):
    s = scenario
    args = ["-p", "group_names:=[left_arm]", "-p", f"groups.left_arm.base_link:={BASE}",
            "-p", f"groups.left_arm.tip_link:={TIP}", "-p", f"servo_command_topic:={COMMANDS}",
            "-p", "servo_avoid_collisions:=true", "-p", f"servo_clearance:={CLEARANCE}",
            "-p", "servo_target_timeout:=0.3"]
    node, client = serve(NS, robots.urdf_text("baxter_left"), robots.srdf_text("baxter_left"),
                         args, s.right_state(s.away))
    arm = FakeControllerProcess(NS, s.left.joint_names, s.q0, COMMANDS)
    try:
        yield node, client
    finally:
        arm.stop()
        client.close()
        assert node.stop() == 0, node.output()[-2000:]


def test_keeps_clear_of_where_the_second_arm_now_stands(dual, scenario):
    """The right arm moves onto the left arm's target after the servo started: every
    command keeps the clearance from it (our checker); the left arm did approach it."""
    node, client = dual
    s = scenario
    assert s.distance(s.q0, s.there, RIGHT) > 0.1  # its new place is not at the start
    commands, status = [], []
    client.node.create_subscription(Float64MultiArray, COMMANDS,
                                    lambda m: commands.append(np.array(m.data)), 100)
    client.node.create_subscription(ServoStatus, f"/{NS}/ik_node/servo/status",
                                    status.append, 100)
    target_pub = client.node.create_publisher(PoseStamped, f"/{NS}/ik_node/servo/target_pose",
                                              10)
    wait_for(lambda: target_pub.get_subscription_count() > 0, 10, "target_pose subscriber",
             client.spin)
    right = [s.away]

    def publish_right():
        client.publish_joints(*s.right_state(right[-1]))

    def spin(seconds, target=None):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            publish_right()  # 50 Hz: fresh within servo_joint_state_timeout (0.1 s)
            if target is not None:
                msg = PoseStamped()
                msg.header.frame_id = BASE
                msg.pose = se3_to_pose(target)
                target_pub.publish(msg)
            client.spin(0.02)

    # Started with the right arm away: the servo's group is held there.
    deadline = time.monotonic() + 30.0
    answer = call_servo(client, NS, "start")
    while not answer.success and time.monotonic() < deadline:
        spin(0.25)  # the fake arm's joint_states not yet matched (DDS discovery)
        answer = call_servo(client, NS, "start")
    assert answer.success, answer.message
    try:
        for f in np.linspace(0.0, 1.0, 16):  # the right arm moves in, over 0.3 s
            right.append((1.0 - f) * s.away + f * s.there)
            spin(0.02)
        spin(0.5)  # it stands there, read by the node's next ticks
        first = len(commands)
        spin(4.0, s.T_base_goal)
        assert len(commands) > first + 200, (len(commands), [x.reason for x in status[-3:]])
        sent = commands[first:]
        distances = [s.distance(q, s.there) for q in sent[::5]] + [s.distance(sent[-1], s.there)]
        assert min(distances) >= CLEARANCE - 1e-3, (min(distances),
                                                    [x.reason for x in status[-3:]])
        # It did servo toward the target, into the right arm's influence distance.
        T_end = s.left.fk(sent[-1], TIP)
        T_start = s.left.fk(sent[0], TIP)
        assert np.linalg.norm(T_end.translation - s.T_goal.translation) \
            < np.linalg.norm(T_start.translation - s.T_goal.translation) - 0.2
        assert min(distances) < CLEARANCE + 0.03, min(distances)
    finally:
        assert call_servo(client, NS, "stop").success
