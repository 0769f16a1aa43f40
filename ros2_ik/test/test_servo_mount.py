"""The servo follows the joints carrying its group (node/servo_mount.py), without DDS.

TIAGo's arm (``torso_lift_link`` -> ``arm_tool_link``) is held at the lift's start height;
the lift then moves in ``joint_states``.  A target in ``base_footprint`` must be met by the
robot's tool: the model's tool is steered to ``D^-1 T``, checked here against pinocchio FK
of the full model at the robot's lift.
"""
import numpy as np
import pinocchio as pin
import pytest

import node_inputs
from panda_node import T_frame
from ros2_ik.core.model.robots import ARMS
from ros2_ik.core.servo.supervisor import Target
from ros2_ik.node.compute_ik import resolve_group
from ros2_ik.node.robot_source import JointStateCache
from ros2_ik.node.servo_mount import Mount
from ros2_ik.node.upstream import held_group

LIFT = "torso_lift_joint"
SPEC = ARMS["tiago"]


@pytest.fixture(scope="module")
def tiago():
    return node_inputs.tiago_arm()


def _held(tiago, joints, lift):
    snapshot, cfg = tiago
    joints.update([LIFT], [lift])
    group = resolve_group(snapshot, cfg, "arm", "", "")[0]
    return held_group(snapshot, group, (), (), joints, cfg)


def test_a_target_is_met_by_the_robot_at_the_lift_it_holds_now(tiago):
    joints = JointStateCache()
    group = _held(tiago, joints, 0.2)
    model = group.robot.model
    mount = Mount(group, joints, 1.0)
    assert mount.names == (LIFT,)
    assert mount.update() and not mount.moved  # read, where the start held it
    assert mount.D.isApprox(pin.SE3.Identity(), 1e-12) and mount.values[LIFT] == 0.2
    q = group.mid_configuration() + 0.2
    names = list(group.joint_names) + [LIFT]
    T = T_frame(model, names, list(q) + [0.2], SPEC.tip)  # base_footprint = the world
    above = mount.to_robot(Target(0.0, pose=T), model.getFrameId("base_footprint"))
    tool = model.getFrameId(SPEC.tip)
    carried = mount.to_robot(Target(0.0, pose=group.fk(q, SPEC.tip)), tool)
    joints.update([LIFT], [0.27])
    assert mount.update() and mount.moved and not mount.update()  # moved, then still
    model_target = mount.to_model(above).pose
    # The model's tool at model_target is the robot's tool (lift at 0.27) at T.
    np.testing.assert_allclose((mount.D * model_target).homogeneous, T.homogeneous, atol=1e-12)
    robot_tool = T_frame(model, names, list(q) + [0.27], SPEC.tip)
    np.testing.assert_allclose((mount.D * group.fk(q, SPEC.tip)).homogeneous,
                               robot_tool.homogeneous, atol=1e-12)
    # A target given in the tool's frame was met where the tool stood when it arrived.
    np.testing.assert_allclose(carried.pose.homogeneous, group.fk(q, SPEC.tip).homogeneous)
    np.testing.assert_allclose(mount.to_model(carried).pose.homogeneous,
                               mount.D.actInv(group.fk(q, SPEC.tip)).homogeneous)
    twist = Target(0.0, twist=np.arange(6.0), twist_in_world=True)
    np.testing.assert_allclose(mount.to_model(twist).twist, np.arange(6.0))  # a lift: no turn


def test_a_stale_lift_keeps_the_last_motion(tiago):
    joints = JointStateCache()
    group = _held(tiago, joints, 0.1)
    mount = Mount(group, joints, 1e-9)  # every reading is stale at once
    joints.update([LIFT], [0.3])
    assert not mount.update() and mount.D.isApprox(pin.SE3.Identity(), 1e-12)
    assert not mount.values


def test_the_collision_checks_see_the_arm_at_the_lift_the_robot_holds():
    """A ball above the tool: its distances follow the lift (``Servo.hold``).

    The group is held at 0.2 m; the lift rises 5 cm.  The dampers' clearance must be the
    checker's own distance at the robot's configuration (lift 0.25), not at 0.2.
    """
    from ros2_ik.core.collision import (CollisionChecker, PlanningScene, SceneObject,
                                        Sphere, pose_from_xyz_quat)
    from ros2_ik.core.model.joint_values import with_joint_value
    from ros2_ik.core.model.robot import Robot
    from ros2_ik.core.model.robots import urdf_text, srdf_text
    from ros2_ik.core.servo import Servo, ServoConfig
    robot = Robot.from_urdf(urdf_text("tiago"), srdf_text("tiago"))
    group = robot.group(SPEC.base, SPEC.tip).held_at({LIFT: 0.2})
    scene = PlanningScene.for_model(robot.model)
    checker = CollisionChecker.from_urdf(robot.model, urdf_text("tiago"), srdf_text("tiago"),
                                         scene)
    q = group.mid_configuration()
    tool = group.fk(q, SPEC.tip).translation
    scene.add(SceneObject("ball", [Sphere(0.03)],
                          T_frame_object=pose_from_xyz_quat(tool + [0.0, 0.0, 0.15])))
    servo = Servo(group, SPEC.tip, ServoConfig(influence_m=0.5), checker=checker)

    def truth(lift):
        full = with_joint_value(robot.model, group.to_full_q(q), LIFT, lift)
        return checker.distances(full, 0.5)

    def seen():  # every pair's distance where the dampers' last rows put the robot
        servo._dampers.rows(q)
        return checker.distances_from_data(servo._dampers.data, 0.5)
    np.testing.assert_allclose(seen().distances_m, truth(0.2).distances_m, atol=1e-9)
    servo.hold({LIFT: 0.25})
    risen = seen()
    np.testing.assert_allclose(risen.distances_m, truth(0.25).distances_m, atol=1e-9)
    names = risen.compiled.pair_names
    before = truth(0.2).distances_m
    ball = min((k for k, pair in enumerate(names) if "ball" in pair), key=lambda k: before[k])
    drop = before[ball] - risen.distances_m[ball]
    assert drop > 0.02, (names[ball], drop)  # the arm nearer the ball above it


def test_a_mimic_joint_carrying_the_group_is_followed():
    """A mimic joint above the arm (it follows the lift) names no error and moves ``D``.

    ``Mount`` asked ``Robot.joint_id`` for every upstream joint, which refuses mimic
    joints: the servo would not start on such a robot ("cannot servo").
    """
    import sys
    from pathlib import Path
    from ros2_ik.core.model.robot import Robot
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    from random_arms import random_arm
    arm = random_arm(1)
    fixed = '<joint name="mount_joint" type="fixed">'
    assert fixed in arm.urdf
    urdf = arm.urdf.replace(fixed, '<joint name="mount_joint" type="prismatic"><axis xyz="0 0 1"/>'
                            '<limit lower="0" upper="1" effort="1" velocity="1"/>'
                            '<mimic joint="lift_joint" multiplier="0.5" offset="0"/>')
    robot = Robot.from_urdf(urdf)
    group = robot.group(None, arm.tip, joints=robot.group(arm.base, arm.tip).joint_names)
    assert set(group.upstream) == {"lift_joint", "mount_joint"}
    joints = JointStateCache()
    joints.update(list(group.upstream), [0.0, 0.0])
    mount = Mount(group, joints, 1.0)
    joints.update(["lift_joint", "mount_joint"], [0.2, 0.1])
    assert mount.update() and mount.moved
    q = group.mid_configuration()
    held = group.held_at({"lift_joint": 0.2})
    np.testing.assert_allclose((mount.D * group.fk(q, arm.tip)).homogeneous,
                               held.fk(q, arm.tip).homogeneous, atol=1e-12)


def test_with_collision_checks_the_joints_beside_the_chain_are_read_too(tiago):
    """``every``: the head's value as the robot holds it now, for the collision checks.

    It does not move the chain (``D`` stays); a joint without a reading keeps the group's
    value.
    """
    joints = JointStateCache()
    group = _held(tiago, joints, 0.2)
    mount = Mount(group, joints, 1.0, every=True)
    mount.update()
    assert "head_1_joint" not in mount.values  # not read yet: the group's value stays
    joints.update(["head_1_joint"], [0.5])
    assert mount.update() and not mount.moved
    assert mount.values["head_1_joint"] == 0.5 and mount.values[LIFT] == 0.2
    assert mount.D.isApprox(pin.SE3.Identity(), 1e-12)
    lone = Mount(group, joints, 1.0)  # without: the upstream joints alone are read
    joints.update(["head_1_joint"], [0.7])
    assert lone.update() and not lone.update()  # the head is not read: nothing new


def test_a_joint_beside_the_chain_gone_stale_keeps_its_last_reading(tiago):
    """A second arm's (here the head's) joint_states pause: the collision checks keep it
    where it was last read, not at the group's value from when the group was made (the
    servo then steered the arm into a second arm it placed back there: seen as a CI
    flake of test_servo_second_arm_node on a loaded machine)."""
    import time
    joints = JointStateCache()
    group = _held(tiago, joints, 0.2)
    mount = Mount(group, joints, 0.05, every=True)
    joints.update(["head_1_joint"], [0.5])
    assert mount.update() and mount.values["head_1_joint"] == 0.5
    time.sleep(0.1)  # the head's reading is stale now; the lift goes on publishing
    joints.update([LIFT], [0.25])
    assert mount.update() and mount.moved
    assert mount.values["head_1_joint"] == 0.5 and mount.values[LIFT] == 0.25
    joints.update(["head_1_joint"], [0.6])  # fresh again: read
    assert mount.update() and mount.values["head_1_joint"] == 0.6
    time.sleep(0.1)  # now the lift pauses, the head goes on: the head is still read
    D = mount.D
    joints.update(["head_1_joint"], [0.7])
    assert mount.update() and not mount.moved and mount.D is D
    assert mount.values["head_1_joint"] == 0.7 and mount.values[LIFT] == 0.25


def test_a_mimic_joint_not_in_joint_states_follows_its_leader():
    """Panda's second finger (a mimic of the first), absent from ``joint_states``."""
    from ros2_ik.core.model.robot import Robot
    from ros2_ik.core.model.robots import urdf_text
    spec = ARMS["panda"]
    group = Robot.from_urdf(urdf_text("panda")).group(spec.base, spec.tip)
    joints = JointStateCache()
    joints.update(["panda_finger_joint1"], [0.03])
    mount = Mount(group, joints, 1.0, every=True)
    assert mount.update()
    assert mount.values == {"panda_finger_joint1": 0.03, "panda_finger_joint2": 0.03}
