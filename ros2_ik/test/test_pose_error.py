"""The two pose-error conventions of ``core.pose`` against independent computations.

``split_error``: the frame's position in the target's axes [m] and the rotation vector of
``R_t^T R`` [rad] (scipy's, not pinocchio's); ``twist_error``: the twist whose exponential
is ``T_target_frame`` (pinocchio's ``exp6`` undoes it), sharing the rotation vector.
"""
import numpy as np
import pinocchio as pin
from scipy.spatial.transform import Rotation

from ros2_ik.core.pose import split_error, twist_error


def _placements(count: int):
    """(T_world_target, T_world_frame) pairs, rotations up to near pi apart."""
    rng = np.random.default_rng(7)
    for k in range(count):
        angle = np.pi * (k + 0.5) / (count + 1)  # 0 < angle < pi: log3 is unique
        axis = rng.normal(size=3)
        R_tf = Rotation.from_rotvec(angle * axis / np.linalg.norm(axis)).as_matrix()
        R_wt = Rotation.random(random_state=k).as_matrix()
        T_wt = pin.SE3(R_wt, rng.normal(size=3))
        T_wf = pin.SE3(R_wt @ R_tf, rng.normal(size=3))
        yield T_wt, T_wf


def test_split_error_is_position_in_target_axes_and_rotation_vector():
    for T_wt, T_wf in _placements(20):
        t, w = split_error(T_wt.inverse() * T_wf)
        R_t, p_t = T_wt.rotation, T_wt.translation
        np.testing.assert_allclose(t, R_t.T @ (T_wf.translation - p_t), atol=1e-12)
        np.testing.assert_allclose(w, Rotation.from_matrix(R_t.T @ T_wf.rotation).as_rotvec(),
                                   atol=1e-9)


def test_twist_error_is_the_log_of_the_relative_placement():
    for T_wt, T_wf in _placements(20):
        T_tf = T_wt.inverse() * T_wf
        e = twist_error(T_tf)
        assert pin.exp6(pin.Motion(e)).isApprox(T_tf, 1e-9)
        np.testing.assert_allclose(e[3:], split_error(T_tf)[1], atol=1e-12)
        # v is not the position once the frames are rotated: the two conventions differ
        assert np.linalg.norm(e[:3] - T_tf.translation) > 1e-6
