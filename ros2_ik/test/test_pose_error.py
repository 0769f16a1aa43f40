"""The two pose-error conventions of ``core.pose`` against independent computations.

``CompiledPose.errors`` (the verifier's two figures, on floats) against scipy's rotation
vector and the distance of the origins, from 1e-9 rad to pi; a compiled pose against its
target.

``split_error``: the frame's position in the target's axes [m] and the rotation vector of
``R_t^T R`` [rad] (scipy's, not pinocchio's); ``twist_error``: the twist whose exponential
is ``T_target_frame`` (pinocchio's ``exp6`` undoes it), sharing the rotation vector.
"""
import numpy as np
import pinocchio as pin
from scipy.spatial.transform import Rotation

import pytest

from ros2_ik.core import errors
from ros2_ik.core.model import robots
from ros2_ik.core.pose import PoseTarget, split_error, twist_error


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


def _relative(angle: float, seed: int):
    """(T_world_target, T_world_frame) ``angle`` [rad] apart about a random axis."""
    rng = np.random.default_rng(seed)
    axis = rng.normal(size=3)
    R_tf = Rotation.from_rotvec(angle * axis / np.linalg.norm(axis)).as_matrix()
    R_wt = Rotation.random(random_state=seed).as_matrix()
    return pin.SE3(R_wt, rng.normal(size=3)), pin.SE3(R_wt @ R_tf, rng.normal(size=3))


@pytest.fixture(scope="module")
def panda():
    return robots.load_group("panda")[1]


@pytest.mark.parametrize("angle", [0.0, 1e-9, 1e-5, 0.3, 2.0, np.pi - 1e-6, np.pi])
def test_the_verifiers_errors_are_the_split_errors_lengths(panda, angle):
    for seed in range(10):
        T_wt, T_wf = _relative(angle, seed)
        pos, ori = PoseTarget(panda.tip, T_wt).compile(panda).errors(T_wf)
        assert pos == pytest.approx(np.linalg.norm(T_wf.translation - T_wt.translation),
                                    abs=1e-12)
        R = T_wt.rotation.T @ T_wf.rotation
        expected = np.linalg.norm(Rotation.from_matrix(R).as_rotvec())
        assert ori == pytest.approx(expected, abs=1e-9)
        assert ori == pytest.approx(angle, abs=1e-9)


def test_compiled_pose_holds_the_validated_target(panda):
    """The compiled target and its inverse are the matrices of the target as validated."""
    group = panda
    T_wt, T_wf = _relative(1.0, 3)
    target = PoseTarget(group.tip, T_wt)
    T_wt.translation = np.array([np.nan, 0.0, 0.0])  # the caller's object, changed later
    assert np.isfinite(target.T_ref_target.translation).all()
    pose = target.compile(group)
    np.testing.assert_array_equal(pose.H_world_target, target.H_ref_target)
    assert np.isfinite(pose.H_world_target).all()
    np.testing.assert_allclose(pose.H_target_world @ pose.H_world_target, np.eye(4),
                               atol=1e-12)
    assert pose.T_target_world.isApprox(pose.T_world_target.inverse(), 1e-12)
    assert pose.H_target_world.flags.c_contiguous
    assert pose.errors(T_wf) == pytest.approx(
        tuple(np.linalg.norm(v) for v in split_error(pose.T_target_world * T_wf)), abs=1e-12)
    with pytest.raises(errors.InvalidGoal):
        PoseTarget(group.tip, T_wt)


def test_a_target_in_a_reference_frame_is_placed_by_its_locked_placement(panda):
    """``T_world_target = T_world_ref T_ref_target``, the reference frame's from pinocchio FK."""
    ref = "panda_link2"  # carried by two locked joints: not at the origin
    group = panda.robot.group(ref, panda.tip, locked={"panda_joint1": 0.4, "panda_joint2": -0.3})
    model = group.robot.model
    data = model.createData()
    pin.framesForwardKinematics(model, data, group.to_full_q(group.mid_configuration()))
    assert np.linalg.norm(pin.log6(data.oMf[model.getFrameId(ref)]).vector) > 0.3
    _, T_ref_target = _relative(0.7, 5)
    pose = PoseTarget(group.tip, T_ref_target, reference_frame=ref).compile(group)
    expected = data.oMf[model.getFrameId(ref)] * T_ref_target
    np.testing.assert_allclose(pose.H_world_target, expected.homogeneous, atol=1e-12)
    np.testing.assert_allclose(pose.H_target_world, expected.inverse().homogeneous, atol=1e-12)
    assert not pose.H_world_target.flags.writeable


def test_a_target_keeps_one_resolution_per_group_and_pickles_without_it(panda):
    """Compiled twice for one group while held (a solve, then the node's re-check): one
    resolution.

    Another group resolves anew; a resolution no longer held is made anew (the target
    holds it weakly: no cycle); a pickled target carries no group and compiles again.
    """
    import pickle
    import weakref
    group = panda
    target = PoseTarget(group.tip, _relative(0.3, 2)[0])
    first = target.compile(group)
    assert target.compile(group) is first
    other = group.robot.group(group.base, group.tip)
    assert other is not group and target.compile(other) is not first
    dropped = weakref.ref(target.compile(other))
    assert dropped() is None  # freed by its reference count: the target held it weakly
    copy = pickle.loads(pickle.dumps(target))
    assert "_compiled" not in copy.__dict__
    assert copy == target
    np.testing.assert_array_equal(copy.compile(group).H_world_target, first.H_world_target)
