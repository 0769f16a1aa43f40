"""Group.angle_model: continuous joints as plain angles, same kinematics as the model."""
import numpy as np
import pinocchio as pin
import pytest

from ros2_ik.core import robots


@pytest.mark.parametrize("arm", ["kinova", "panda", "ur5"])
def test_angle_model_matches_the_full_model(arm):
    _, group = robots.load_group(arm)
    model = group.angle_model
    assert model.nq == model.nv == group.n
    data = model.createData()
    fid = group.reduced_frame_id(group.tip)
    assert model.frames[fid].name == group.tip
    reduced, d_red = group.reduced_model, group.reduced_model.createData()
    rng = np.random.default_rng(3)
    for _ in range(10):
        q = rng.uniform(-4.0, 4.0, group.n)  # continuous joints beyond +-pi too
        q = np.where(group.continuous, q, group.clamp(q))
        pin.framesForwardKinematics(model, data, q)
        np.testing.assert_allclose(data.oMf[fid].homogeneous,
                                   group.fk(q, group.tip).homogeneous, atol=1e-12)
        J = pin.computeFrameJacobian(model, data, q, fid, pin.LOCAL)
        J_red = pin.computeFrameJacobian(reduced, d_red, group.to_reduced_q(q), fid, pin.LOCAL)
        np.testing.assert_allclose(J, J_red, atol=1e-12)


def test_no_continuous_joint_shares_the_reduced_model():
    _, group = robots.load_group("panda")
    assert group.angle_model is group.reduced_model


UNALIGNED_URDF = """<robot name="r">
<link name="base"/><link name="l1"/><link name="l2"/><link name="tip"/>
<joint name="j1" type="continuous"><parent link="base"/><child link="l1"/>
  <axis xyz="0 0.6 0.8"/><origin xyz="0 0 0.1"/></joint>
<joint name="j2" type="revolute"><parent link="l1"/><child link="l2"/><axis xyz="1 0 0"/>
  <origin xyz="0 0 0.3"/><limit lower="-2" upper="2" effort="1" velocity="1"/></joint>
<joint name="j3" type="continuous"><parent link="l2"/><child link="tip"/><axis xyz="0 0 1"/>
  <origin xyz="0 0.2 0.3"/></joint>
</robot>"""


@pytest.mark.parametrize("solver", ["lm", "dls"])
def test_unaligned_continuous_axis_keeps_cos_sin(solver):
    """No plain twin for an unaligned continuous joint: the loops keep cos/sin and work."""
    from ros2_ik.core.pose import PoseTarget
    from ros2_ik.core.result import IKStatus
    from ros2_ik.core.robot import Robot
    from ros2_ik.core.solve import solve

    group = Robot.from_urdf(UNALIGNED_URDF).group(base="base", tip="tip")
    assert group.angle_model is group.reduced_model
    target = PoseTarget("tip", group.fk(np.array([2.5, 0.7, -2.9]), "tip"))
    result = solve(group, target, group.mid_configuration(), solver=solver, timeout_s=1.0,
                   random_seed=1)
    assert result.status is IKStatus.SUCCESS, result.message


def test_unaligned_continuous_axis_takes_constraints():
    """Constraint problems on that arm: verified answers, no exception (its binding lacks axis).

    The constraint kernel reads the joint's axis; pinocchio's binding of an unbounded
    unaligned revolute joint has none, which raised AttributeError out of ``solve``.
    """
    from ros2_ik.core import constraints as C
    from ros2_ik.core.problem import Problem
    from ros2_ik.core.robot import Robot
    from ros2_ik.core.solve import solve
    from ros2_ik.core.verify import ConstraintTolerance, check

    group = Robot.from_urdf(UNALIGNED_URDF).group(base="base", tip="tip")
    model = group.robot.model
    rng = np.random.default_rng(5)
    for _ in range(10):
        p = group.fk(group.random_configuration(rng), "tip").translation
        box = C.PositionConstraint(model, "base", p - 1e-3, p + 1e-3, "tip", np.zeros(3))
        problem = Problem(group, None, [box])
        result = solve(group, problem, group.mid_configuration(), timeout_s=0.5,
                       random_seed=1)
        assert result.status.name == "SUCCESS", result.message
        assert check(group, None, result.q, [box], model.createData(),
                     ConstraintTolerance(1e-4, 1e-4))[0]
