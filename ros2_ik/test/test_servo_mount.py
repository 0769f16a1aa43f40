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
    assert not mount.update() and mount.D.isApprox(pin.SE3.Identity(), 1e-12)  # as held
    q = group.mid_configuration() + 0.2
    names = list(group.joint_names) + [LIFT]
    T = T_frame(model, names, list(q) + [0.2], SPEC.tip)  # base_footprint = the world
    above = mount.to_robot(Target(0.0, pose=T), model.getFrameId("base_footprint"))
    tool = model.getFrameId(SPEC.tip)
    carried = mount.to_robot(Target(0.0, pose=group.fk(q, SPEC.tip)), tool)
    joints.update([LIFT], [0.27])
    assert mount.update() and not mount.update()  # moved once, then still
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
