"""URDF mimic joints follow their leaders: never a group's own joint (core/model/robot.py).

Checked against pinocchio's own mimic model (``buildModelFromXML(..., mimic=True)``), which
moves a mimic joint with its leader: the reference the robot's controllers follow.
"""
import numpy as np
import pinocchio as pin
import pytest

from ros2_ik.core import errors
from ros2_ik.core.model.robot import Robot
from ros2_ik.core.pose import PoseTarget
from ros2_ik.core.result import IKStatus
from ros2_ik.core.solve import solve


def _joint(name, parent, child, axis, xyz="0 0 0", mimic=""):
    return (f'<joint name="{name}" type="revolute"><parent link="{parent}"/>'
            f'<child link="{child}"/><origin xyz="{xyz}"/><axis xyz="{axis}"/>'
            f'<limit lower="-2" upper="2" effort="1" velocity="1"/>{mimic}</joint>')


def _urdf(links, joints) -> str:
    return ('<?xml version="1.0"?><robot name="m">' + "".join(
        f'<link name="{n}"/>' for n in links) + "".join(joints) + "</robot>")


#: A torso of two twin joints (b2 follows b1), an arm on each.
TWIN = _urdf(
    ["base", "tb1", "tb2", "r1", "rtip", "l1", "l2", "ltip"],
    [_joint("b1", "base", "tb1", "0 0 1"),
     _joint("b2", "base", "tb2", "0 0 1", mimic='<mimic joint="b1" multiplier="1"/>'),
     _joint("r1", "tb1", "r1", "0 1 0", "0.3 0 0.5"),
     _joint("r2", "r1", "rtip", "0 1 0", "0.4 0 0"),
     _joint("l1", "tb2", "l1", "0 1 0", "-0.3 0 0.5"),
     _joint("l2", "l1", "l2", "0 1 0", "0 0 0.4"),
     _joint("l3", "l2", "ltip", "1 0 0", "0 0 0.3")])

#: A palletizer's parallelogram: j3 keeps the forearm level (-j2 + 0.1).
PALLETIZER = _urdf(
    ["base", "a1", "a2", "a3", "a4", "tip"],
    [_joint("j1", "base", "a1", "0 0 1"),
     _joint("j2", "a1", "a2", "0 1 0", "0 0 0.5"),
     _joint("j3", "a2", "a3", "0 1 0", "0 0 1.0",
            '<mimic joint="j2" multiplier="-1" offset="0.1"/>'),
     _joint("j4", "a3", "a4", "0 1 0", "1.0 0 0"),
     _joint("j5", "a4", "tip", "0 0 1", "0.3 0 0")])


def _reference_tip(urdf: str, values: dict, frame: str) -> pin.SE3:
    """``T_world_frame`` of pinocchio's mimic model at the leaders' ``values``."""
    model = pin.buildModelFromXML(urdf, mimic=True)
    data = model.createData()
    q = pin.neutral(model)
    for name, value in values.items():
        j = model.getJointId(name)
        if model.nqs[j]:
            q[model.idx_qs[j]] = value
    pin.framesForwardKinematics(model, data, q)
    return data.oMf[model.getFrameId(frame)]


def test_a_mimic_joint_is_no_movable_joint():
    robot = Robot.from_urdf(TWIN)
    assert "b2" not in robot.joint_names and robot.mimics["b2"].leader == "b1"


@pytest.mark.parametrize("b1", [0.0, 0.7, -1.2])
def test_an_arm_on_the_twin_torso_follows_the_leader(b1):
    robot = Robot.from_urdf(TWIN)
    group = robot.group(base="base", tip="ltip", locked={"b1": b1})
    assert group.joint_names == ("l1", "l2", "l3")  # b2 follows b1: not the arm's
    assert group.locked["b2"] == pytest.approx(b1) and group.upstream == ("b2",)
    rng = np.random.default_rng(2)
    for k in range(10):
        q = rng.uniform(-1.5, 1.5, 3)
        T = _reference_tip(TWIN, {"b1": b1, "l1": q[0], "l2": q[1], "l3": q[2]}, "ltip")
        result = solve(group, PoseTarget("ltip", T, position_tolerance_m=1e-4,
                                         orientation_tolerance_rad=10.0),
                       np.zeros(3), "lm", 0.2, 0, k)
        assert result.status is IKStatus.SUCCESS, result.message
        reached = _reference_tip(TWIN, {"b1": b1, **dict(zip(group.joint_names, result.q))},
                                 "ltip")
        assert np.linalg.norm(reached.translation - T.translation) < 1e-4


def test_held_elsewhere_a_mimic_joint_follows_its_leader():
    robot = Robot.from_urdf(TWIN)
    group = robot.group(base="base", tip="ltip")
    assert group.locked["b2"] == 0.0
    assert group.held_at({"b1": 0.7}).locked["b2"] == pytest.approx(0.7)
    assert group.held_at({"b1": 0.7, "b2": 0.69}).locked["b2"] == 0.69  # measured: kept


def test_a_given_mimic_value_is_kept():
    robot = Robot.from_urdf(TWIN)
    group = robot.group(base="base", tip="ltip", locked={"b1": 0.2, "b2": 0.25})
    assert group.locked["b2"] == 0.25  # joint_states say where it is


def test_a_chain_through_a_mimic_its_group_moves_is_refused():
    robot = Robot.from_urdf(PALLETIZER)
    assert robot.joint_names == ("j1", "j2", "j4", "j5")
    with pytest.raises(errors.InvalidArgument, match="'j3' follows 'j2'.*mimic"):
        robot.group(base="base", tip="tip")
    with pytest.raises(errors.InvalidArgument, match="'j3' follows 'j2'.*mimic"):
        robot.group(joints=["j1", "j2", "j4", "j5"], tip="tip")
    below = robot.group(base="a3", tip="tip", locked={"j2": 0.4})
    assert below.locked["j3"] == pytest.approx(-0.3)  # -j2 + 0.1


def test_a_group_names_the_leader_not_the_mimic():
    robot = Robot.from_urdf(TWIN)
    with pytest.raises(errors.InvalidArgument, match="'b2' follows 'b1'"):
        robot.group(joints=["b2", "l1"], tip="ltip")


def test_mimic_joints_that_lead_each_other_are_a_model_error():
    """A cycle of mimics is a broken URDF: said when it loads (it recursed without end)."""
    cyclic = _urdf(["base", "a1", "a2", "tip"],
                   [_joint("j1", "base", "a1", "0 0 1"),
                    _joint("j2", "a1", "a2", "0 1 0", "0 0 0.5", '<mimic joint="j3"/>'),
                    _joint("j3", "a2", "tip", "0 1 0", "0 0 0.5", '<mimic joint="j2"/>')])
    with pytest.raises(errors.RobotModelError, match="cycle: j2 -> j3 -> j2"):
        Robot.from_urdf(cyclic)


def test_followers_follow_their_leaders_down_a_chain_of_mimics():
    """``Robot.followers``: the mimic joints a given value leads, a mimic of a mimic too."""
    chained = _urdf(["base", "a1", "a2", "a3", "tip"],
                    [_joint("j1", "base", "a1", "0 0 1"),
                     _joint("j2", "a1", "a2", "0 1 0", "0 0 0.5",
                            '<mimic joint="j1" multiplier="2" offset="0.1"/>'),
                     _joint("j3", "a2", "a3", "0 1 0", "0 0 0.5",
                            '<mimic joint="j2" multiplier="-1"/>'),
                     _joint("j4", "a3", "tip", "1 0 0", "0 0 0.5")])
    robot = Robot.from_urdf(chained)
    assert robot.followers({"j1": 0.3}) == pytest.approx({"j2": 0.7, "j3": -0.7})
    assert robot.followers({"j1": 0.3, "j2": 0.5}) == pytest.approx({"j3": -0.5})
    assert robot.followers({"j4": 0.3}) == {}
    group = robot.group(tip="tip", joints=["j4"])  # held as the followers say
    assert group.held_at({"j1": 0.3}).locked == pytest.approx(
        {"j1": 0.3, "j2": 0.7, "j3": -0.7})
