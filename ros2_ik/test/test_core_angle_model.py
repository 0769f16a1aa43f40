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
