"""Closed-form planar 2R arm: both elbow solutions, against the analytic IK."""
import math

import numpy as np
import pinocchio as pin
import pytest

from ros2_ik.core.model.robot import Robot
from ros2_ik.core.pose import PoseTarget
from ros2_ik.core.result import IKStatus
from ros2_ik.core.solve import solve

L1, L2 = 1.0, 0.7

PLANAR_2R = f"""<?xml version="1.0"?>
<robot name="planar_2r">
  <link name="base"/>
  <link name="link1"/>
  <link name="link2"/>
  <link name="tip"/>
  <joint name="j1" type="revolute">
    <parent link="base"/><child link="link1"/>
    <origin xyz="0 0 0"/><axis xyz="0 0 1"/>
    <limit lower="-3.1" upper="3.1" effort="1" velocity="2"/>
  </joint>
  <joint name="j2" type="revolute">
    <parent link="link1"/><child link="link2"/>
    <origin xyz="{L1} 0 0"/><axis xyz="0 0 1"/>
    <limit lower="-3.1" upper="3.1" effort="1" velocity="2"/>
  </joint>
  <joint name="tip_fixed" type="fixed">
    <parent link="link2"/><child link="tip"/>
    <origin xyz="{L2} 0 0"/>
  </joint>
</robot>"""


def analytic_ik(x: float, y: float):
    """Both (q1, q2) reaching (x, y): elbow down (q2 > 0) and up (q2 < 0)."""
    c2 = (x * x + y * y - L1 * L1 - L2 * L2) / (2 * L1 * L2)
    out = []
    for q2 in (math.acos(c2), -math.acos(c2)):
        q1 = math.atan2(y, x) - math.atan2(L2 * math.sin(q2), L1 + L2 * math.cos(q2))
        out.append(np.array([q1, q2]))
    return out


@pytest.fixture(scope="module")
def group():
    robot = Robot.from_urdf(PLANAR_2R)
    return robot.group(base="base", tip="tip")


def test_group_shape(group):
    assert group.joint_names == ("j1", "j2")
    np.testing.assert_allclose(group.lower, [-3.1, -3.1])
    np.testing.assert_allclose(group.velocity_limits, [2.0, 2.0])


@pytest.mark.parametrize("x,y", [(1.2, 0.5), (-0.4, 1.1), (0.9, -0.9), (0.5, 0.2)])
@pytest.mark.parametrize("solver", ["lm", "dls", "bfgs", "sqp"])
def test_both_elbows_match_closed_form(group, solver, x, y):
    target = PoseTarget("tip", pin.SE3(np.eye(3), np.array([x, y, 0.0])), position_only=True)
    expected = analytic_ik(x, y)
    result = solve(group, target, np.array([0.1, 0.2]), solver=solver, timeout_s=2.0,
                   num_solutions=2, random_seed=3)
    assert result.status is IKStatus.SUCCESS, result.message
    assert len(result.solutions) == 2
    for sol in result.solutions:
        err = min(np.abs(sol.q - e).max() for e in expected)
        assert err < 1e-3, (sol.q, expected)
    elbows = sorted(np.sign(s.q[1]) for s in result.solutions)
    assert elbows == [-1.0, 1.0]


def test_full_pose_has_the_closed_form_angle(group):
    q_true = np.array([0.7, -1.2])
    T = pin.SE3(pin.utils.rotate("z", q_true.sum()),
                np.array([L1 * math.cos(0.7) + L2 * math.cos(-0.5),
                          L1 * math.sin(0.7) + L2 * math.sin(-0.5), 0.0]))
    # A planar arm cannot rotate about x or y: leave those axes free.
    target = PoseTarget("tip", T, weights=(1, 1, 1, 0, 0, 1))
    result = solve(group, target, np.zeros(2), timeout_s=2.0, random_seed=0)
    assert result.status is IKStatus.SUCCESS, result.message
    np.testing.assert_allclose(result.q, q_true, atol=1e-3)


def test_unreachable_returns_best_available(group):
    target = PoseTarget("tip", pin.SE3(np.eye(3), np.array([3.0, 0.0, 0.0])),
                        position_only=True)
    result = solve(group, target, np.zeros(2), max_attempts=5, timeout_s=2.0, random_seed=0)
    assert result.status is IKStatus.NO_SOLUTION
    # Best available: arm stretched towards the target, 3 - 1.7 = 1.3 m short.
    assert result.position_error_m == pytest.approx(3.0 - L1 - L2, abs=1e-3)
    # Beyond the reach bound (1.7 m): answered after the seed's attempt, with the reason.
    assert result.restarts == 0 and "reach 1.70 m" in result.message
