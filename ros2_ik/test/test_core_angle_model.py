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
def test_unaligned_continuous_axis_gets_a_one_angle_twin(solver):
    """An unaligned continuous joint's twin is an unaligned revolute one: q = angles.

    So the compiled pose attempt takes such arms too (issue 38: they were slower than
    TRAC-IK on the cos/sin loop); answers checked by the full model's FK.
    """
    from ros2_ik.core.model.robot import Robot
    from ros2_ik.core.pose import PoseTarget
    from ros2_ik.core.result import IKStatus
    from ros2_ik.core.solve import solve
    from ros2_ik.core.solvers import chain_kernel

    group = Robot.from_urdf(UNALIGNED_URDF).group(base="base", tip="tip")
    assert group.angle_model is not group.reduced_model and group.angle_q
    assert group.angle_model.nq == group.n
    fid = group.angle_model.getFrameId("tip")
    assert chain_kernel.chain_of(group.angle_model, fid) is not None
    q_star = np.array([2.5, 0.7, -2.9])
    target = PoseTarget("tip", group.fk(q_star, "tip"))
    result = solve(group, target, group.mid_configuration(), solver=solver, timeout_s=1.0,
                   random_seed=1)
    assert result.status is IKStatus.SUCCESS, result.message
    T = group.fk(result.q, "tip")
    assert np.linalg.norm(T.translation - target.T_ref_target.translation) <= 1e-4


def test_unaligned_continuous_axis_takes_constraints():
    """Constraint problems on that arm: verified answers, no exception (its binding lacks axis).

    The constraint kernel reads the joint's axis; pinocchio's binding of an unbounded
    unaligned revolute joint has none, which raised AttributeError out of ``solve``.
    """
    from ros2_ik.core import constraints as C
    from ros2_ik.core.model.robot import Robot
    from ros2_ik.core.problem import Problem
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


@pytest.mark.parametrize("arm", ["panda", "pr2_right", "tiago"])
def test_every_frame_has_its_reduced_twin(arm):
    """A locked joint's frame becomes a fixed joint's in the reduced model: still found.

    Searched by name and type, it was not, and pinocchio answered ``nframes``: a pose
    target on panda_finger_joint1 raised IndexError, and the compiled check read past the
    end of the frames.  Every frame's id: in range, the same name, the same placement.
    """
    _, group = robots.load_group(arm)
    model, reduced = group.robot.model, group.angle_model
    data, d_red = model.createData(), reduced.createData()
    q = group.random_configuration(np.random.default_rng(2))
    pin.framesForwardKinematics(model, data, group.to_full_q(q))
    pin.framesForwardKinematics(reduced, d_red, q if group.angle_q else group.to_reduced_q(q))
    names = {f.name for f in model.frames}
    for name in names:
        fid, rid = group.robot.frame_id(name), group.reduced_frame_id(name)
        assert rid < reduced.nframes and reduced.frames[rid].name == name
        assert group.reduced_frame_of(fid) == rid
        np.testing.assert_allclose(d_red.oMf[rid].homogeneous, data.oMf[fid].homogeneous,
                                   atol=1e-12)


def test_a_pose_target_on_a_locked_joints_frame_is_solved():
    from ros2_ik.core import constraints as C
    from ros2_ik.core.pose import PoseTarget
    from ros2_ik.core.problem import Problem
    from ros2_ik.core.solve import solve

    _, group = robots.load_group("panda")
    T = group.fk(group.mid_configuration(), "panda_finger_joint1")  # no group joint moves it
    result = solve(group, PoseTarget("panda_finger_joint1", T), group.mid_configuration(),
                   timeout_s=0.1, random_seed=1)
    assert result.status.name == "SUCCESS", result.message
    box = C.PositionConstraint(group.robot.model, "panda_finger_joint1", [-0.2] * 3,
                               [0.2] * 3, group.tip, np.zeros(3))
    result = solve(group, Problem(group, None, [box]), group.mid_configuration(),
                   timeout_s=0.1, random_seed=1)
    assert result.status.name == "SUCCESS", result.message
