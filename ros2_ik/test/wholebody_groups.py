"""Whole-body groups of example-robot-data robots, loaded as users load them (tests' helper).

talos and solo12 with a free-flyer root (a floating URDF root), pr2 with its SRDF's
planar virtual joint and its right arm; :func:`full_q` assembles a full configuration
from a group vector by joint name, independently of the group's own conversion.
"""
import math

import numpy as np
import pinocchio as pin

from ros2_ik.core import robots
from ros2_ik.core.model.robot import Robot


def read(path: str) -> str:
    """Text of example-robot-data file ``path``."""
    return (robots.data_dir() / path).read_text()


def talos():
    """Talos (reduced) on a free-flyer, its left gripper the tip."""
    robot = Robot.from_urdf(read("talos_data/robots/talos_reduced.urdf"), root_joint="floating")
    return robot.whole_body(tip="gripper_left_joint")


def solo():
    """Solo12 on a free-flyer (pinocchio's model given to ``Robot``)."""
    model = pin.buildModelFromUrdf(str(robots.data_dir() / "solo_description/robots/solo12.urdf"),
                                   pin.JointModelFreeFlyer())
    return Robot(model).whole_body()


def pr2():
    """PR2 on its SRDF's planar base: the torso and the right arm, the tool frame the tip."""
    robot = Robot.from_urdf(read("pr2_description/urdf/pr2.urdf"),
                            read("pr2_description/srdf/pr2.srdf"), root_joint="srdf")
    arm = [robot.model.names[j] for j in range(2, robot.model.njoints)
           if robot.model.names[j].startswith("r_") and "gripper" not in robot.model.names[j]
           and robot.model.nvs[j] == 1]
    return robot.whole_body(tip="r_gripper_tool_frame", joints=["torso_lift_joint"] + arm)


def full_q(group, q) -> np.ndarray:
    """The full configuration of group vector ``q``, assembled by joint name."""
    model = group.robot.model
    qf = group.q_full_locked.copy()
    nb = group.base_nq
    if group.base_kind == "floating":
        qf[:7] = q[:7]
    else:
        qf[:4] = [q[0], q[1], math.cos(q[2]), math.sin(q[2])]
    for name, v in zip(group.joint_names[nb:], q[nb:]):
        j = model.getJointId(name)
        i = model.idx_qs[j]
        qf[i:i + model.nqs[j]] = (math.cos(v), math.sin(v)) if model.nqs[j] == 2 else v
    return qf
