"""Groups of one joint (a rail, a pan unit): pinocchio's (6,) Jacobians are reshaped."""
import numpy as np
import pinocchio as pin
import pytest

from ros2_ik.core import constraints, robots
from ros2_ik.core.pose import PoseTarget
from ros2_ik.core.problem import Problem
from ros2_ik.core.result import IKStatus
from ros2_ik.core.solve import solve
from ros2_ik.core.verify import verify_pose

Q1 = 0.7  # [rad] panda_joint1 of every target


@pytest.fixture(scope="module")
def robot():
    return robots.load_arm("panda")


@pytest.fixture(scope="module")
def link1(robot):
    return robot.group(base="panda_link0", tip="panda_link1")


def test_chain_of_one_joint_is_a_group(link1):
    assert link1.joint_names == ("panda_joint1",)
    assert link1.n == 1


@pytest.mark.parametrize("solver", ["lm", "dls", "bfgs", "sqp"])
def test_full_pose_reached_by_one_joint(link1, solver):
    target = PoseTarget("panda_link1", link1.fk(np.array([Q1]), "panda_link1"))
    result = solve(link1, target, link1.mid_configuration(), solver=solver, timeout_s=1.0,
                   random_seed=3)
    assert result.status is IKStatus.SUCCESS, result.message
    assert result.q.shape == (1,)
    assert verify_pose(link1, target, result.q)[0]
    np.testing.assert_allclose(result.q, [Q1], atol=1e-3)


@pytest.mark.parametrize("weights,position_only", [
    ((0.0, 0.0, 0.0, 1.0, 1.0, 1.0), False),   # orientation only
    ((1.0, 1.0, 1.0, 0.0, 0.0, 1.0), False),   # yaw free but weighted x, y, z
    ((1.0, 1.0, 1.0, 1.0, 1.0, 1.0), True),    # position only (on the axis: any q)
])
def test_weighted_targets_on_one_joint(link1, robot, weights, position_only):
    T = link1.fk(np.array([Q1]), "panda_hand")  # a frame off the axis: position depends on q
    group = robot.group(base="panda_link0", tip="panda_hand", joints=["panda_joint1"])
    target = PoseTarget("panda_hand", T, weights=weights, position_only=position_only)
    result = solve(group, target, group.mid_configuration(), timeout_s=1.0, random_seed=5)
    assert result.status is IKStatus.SUCCESS, result.message
    assert verify_pose(group, target, result.q)[0]
    assert group.within_limits(result.q)


def test_constraint_on_one_joint(link1, robot):
    """The constrained (full-model) path: keep panda_hand's origin in a box."""
    group = robot.group(base="panda_link0", tip="panda_hand", joints=["panda_joint1"])
    p = group.fk(np.array([Q1]), "panda_hand").translation
    box = constraints.PositionConstraint(robot.model, "panda_link0", p - 1e-3, p + 1e-3,
                                         "panda_hand", np.zeros(3))
    result = solve(group, Problem(group, None, [box]), group.mid_configuration(),
                   timeout_s=1.0, random_seed=7)
    assert result.status is IKStatus.SUCCESS, result.message
    np.testing.assert_allclose(result.q, [Q1], atol=2e-2)  # +-1 mm at ~0.09 m from the axis


def test_unreachable_pose_is_no_solution(link1):
    target = PoseTarget("panda_link1", pin.SE3(np.eye(3), np.array([0.5, 0.0, 0.3])))
    result = solve(link1, target, link1.mid_configuration(), timeout_s=10.0, max_attempts=3,
                   random_seed=1)
    assert result.status is IKStatus.NO_SOLUTION
    assert link1.within_limits(result.q)
