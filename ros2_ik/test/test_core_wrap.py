"""Continuous joints and revolute joints wider than 2 pi never flip by 2 pi."""
import math

import numpy as np
import pytest

from ros2_ik.core.costs import PostureCost
from ros2_ik.core.model.robot import Robot
from ros2_ik.core.pose import PoseTarget
from ros2_ik.core.result import IKStatus
from ros2_ik.core.solve import solve

WRIST = """<?xml version="1.0"?>
<robot name="wrist">
  <link name="base"/><link name="a"/><link name="b"/><link name="tip"/>
  <joint name="spin" type="continuous">
    <parent link="base"/><child link="a"/><axis xyz="0 0 1"/>
    <limit effort="1" velocity="3"/>
  </joint>
  <joint name="wide" type="revolute">
    <parent link="a"/><child link="b"/><origin xyz="0 0 0.3"/><axis xyz="0 1 0"/>
    <limit lower="-6.2831853" upper="6.2831853" effort="1" velocity="3"/>
  </joint>
  <joint name="tip_fixed" type="fixed">
    <parent link="b"/><child link="tip"/><origin xyz="0.4 0 0"/>
  </joint>
</robot>"""


@pytest.fixture(scope="module")
def group():
    return Robot.from_urdf(WRIST).group(base="base", tip="tip")


def test_continuous_limits_are_infinite(group):
    assert group.continuous.tolist() == [True, False]
    assert group.lower[0] == -math.inf and group.upper[0] == math.inf
    assert group.wraps.tolist() == [True, True]


@pytest.mark.parametrize("solver", ["lm", "dls", "bfgs", "sqp"])
@pytest.mark.parametrize("seed_spin", [3.0, -3.1, 9.3, -12.0])
def test_no_two_pi_flip(group, solver, seed_spin):
    seed = np.array([seed_spin, 5.9])
    q_goal = seed + np.array([0.15, 0.2])        # crosses +pi / stays beyond 2 pi
    target = PoseTarget("tip", group.fk(q_goal, "tip"))
    result = solve(group, target, seed, solver=solver, timeout_s=2.0, random_seed=4)
    assert result.status is IKStatus.SUCCESS, result.message
    assert abs(result.q[0] - seed[0]) < math.pi          # nearest equivalent of the seed
    assert group.lower[1] <= result.q[1] <= group.upper[1]
    assert abs(result.q[1] - seed[1]) < math.pi
    T = group.fk(result.q, "tip")
    assert np.linalg.norm(T.translation - target.T_ref_target.translation) <= 1e-4


def test_unwrap_stays_in_limits(group):
    seed = np.array([0.0, 6.2])
    q = group.unwrap_near(np.array([0.0, -0.3 + 4 * math.pi]), seed)
    assert q[1] == pytest.approx(-0.3 + 2 * math.pi)
    q = group.unwrap_near(np.array([2 * math.pi + 0.1, -6.0]), np.array([0.0, -6.2]))
    assert q[0] == pytest.approx(0.1) and q[1] == pytest.approx(-6.0)


def test_seed_from_joint_state(group):
    q = group.seed_from(["wide", "spin"], [0.5, 7.0])
    np.testing.assert_allclose(q, [7.0, 0.5])


@pytest.mark.parametrize("solver", ["lm", "bfgs"])  # sqp: no solution here (~1 cm off)
@pytest.mark.parametrize("seed_spin", [3.0, 9.3, -12.0])
def test_with_a_posture_cost_only_revolute_joints_keep_the_minimised_value(
        group, solver, seed_spin):
    """The continuous joint's cost is periodic: unwrapped near the seed as without costs.

    The wide revolute joint's is not: lm, which also starts from the cost's nominal,
    answers at the nominal's -0.18 rad, not at the seed's equivalent 6.1 rad.
    """
    seed = np.array([seed_spin, 5.9])
    q_goal = seed + np.array([0.15, 0.2])
    nominal = np.array([q_goal[0], q_goal[1] - 2 * math.pi])
    target = PoseTarget("tip", group.fk(q_goal, "tip"))
    posture = PostureCost(group.robot.model, group.to_full_q(nominal))
    result = solve(group, target, seed, solver=solver, timeout_s=2.0, random_seed=4,
                   costs=[posture])
    assert result.status is IKStatus.SUCCESS, result.message
    assert abs(result.q[0] - seed[0]) < math.pi
    assert group.lower[1] <= result.q[1] <= group.upper[1]
    if solver == "lm":
        assert abs(result.q[1] - nominal[1]) < 1e-3, result.q
    T = group.fk(result.q, "tip")
    assert np.linalg.norm(T.translation - target.T_ref_target.translation) <= 1e-4


def test_unwrap_chooses_the_equivalent_inside_a_window(group):
    seed = np.array([0.0, 0.0])
    # 4.0 rad is inside the window [3.95, 4.05]; its equivalent nearest the seed is not.
    q = group.unwrap_near(np.array([0.0, 4.0 - 2 * math.pi]), seed,
                          ([-math.inf, 3.95], [math.inf, 4.05]))
    assert q[1] == pytest.approx(4.0)
    # two turns away from the window
    q = group.unwrap_near(np.array([0.0, 4.0 - 4 * math.pi]), seed,
                          ([-math.inf, 3.95], [math.inf, 4.05]))
    assert q[1] == pytest.approx(4.0)
    # no equivalent inside the window: kept as it is
    q = group.unwrap_near(np.array([0.0, 1.0]), seed, ([-math.inf, 3.95], [math.inf, 4.05]))
    assert q[1] == 1.0
    # without windows: the equivalent nearest the seed inside the limits
    assert group.unwrap_near(np.array([12.0, 6.0]), seed)[0] == pytest.approx(12.0 - 4 * math.pi)


@pytest.mark.parametrize("solver", ["lm", "sqp"])
def test_windows_on_wide_range_joints_are_kept(solver):
    """UR3 (joints +-2 pi): a 1 mm position box and two joints held within +-0.05 rad.

    Checked outside the solver: the joint values and full-model FK of the tool.
    """
    from ros2_ik.core import Problem, robots
    from ros2_ik.core.constraints import JointBoundsConstraint, PositionConstraint

    urdf = (robots.data_dir() / "ur_description" / "urdf" / "ur3_robot.urdf").read_text()
    robot = Robot.from_urdf(urdf)
    group = robot.group(tip="tool0")
    rng = np.random.default_rng(3)
    names = group.joint_names
    for k in range(12):
        q_star = group.random_configuration(rng)
        p = group.fk(q_star, "tool0").translation
        windows = {names[0]: (q_star[0] - 0.05, q_star[0] + 0.05),
                   names[-1]: (q_star[-1] - 0.05, q_star[-1] + 0.05)}
        problem = Problem(group, None, [
            PositionConstraint(robot.model, "world", p - 1e-3, p + 1e-3, "tool0", np.zeros(3)),
            JointBoundsConstraint(robot.model, windows)])
        result = solve(group, problem, group.mid_configuration(), solver=solver,
                       timeout_s=1.0, random_seed=k)
        assert result.status is IKStatus.SUCCESS, result.message
        for i in (0, -1):
            assert abs(result.q[i] - q_star[i]) <= 0.05 + 1e-4
        assert np.abs(group.fk(result.q, "tool0").translation - p).max() <= 1e-3 + 1e-4


def test_a_window_that_holds_the_answer_back_is_named():
    """A pose reachable only outside a joint window: the failure names the window."""
    from ros2_ik.core import Problem, robots
    from ros2_ik.core.constraints import JointBoundsConstraint

    urdf = (robots.data_dir() / "ur_description" / "urdf" / "ur3_robot.urdf").read_text()
    robot = Robot.from_urdf(urdf)
    group = robot.group(tip="tool0")
    q_star = np.array([0.3, -1.2, 1.4, -1.8, -1.5, 0.5])
    name = group.joint_names[1]
    window = JointBoundsConstraint(robot.model, {name: (-0.5, -0.4)}, name="shoulder_window")
    problem = Problem(group, PoseTarget("tool0", group.fk(q_star, "tool0")), [window])
    result = solve(group, problem, q_star, timeout_s=0.05, random_seed=0)
    assert result.status is IKStatus.NO_SOLUTION
    assert f"at the bound of shoulder_window ({name})" in result.message
    assert -0.5 <= result.q[1] <= -0.4
