"""Forward-sampled workspace marks (core/maps/workspace.py), checked by independent FK."""
import numpy as np
import pinocchio as pin

from ros2_ik.core import robots
from ros2_ik.core.maps import workspace
from ros2_ik.core.maps.capability import orientations, voxel_centers

CENTER, PITCH = (0.0, 0.0, 0.333), 0.15


def test_grid_finds_each_voxel_and_nothing_outside():
    voxels = voxel_centers(CENTER, 1.0, PITCH)
    grid = workspace.Grid.of(voxels, CENTER, PITCH)
    np.testing.assert_array_equal(grid.voxel_of(voxels), np.arange(len(voxels)))
    jitter = np.random.default_rng(0).uniform(-0.49, 0.49, voxels.shape) * PITCH
    np.testing.assert_array_equal(grid.voxel_of(voxels + jitter), np.arange(len(voxels)))
    assert (grid.voxel_of(np.array([[5.0, 0.0, 0.0], [0.0, 0.0, -4.0]])) == -1).all()


def test_marks_keep_a_sample_in_the_voxel_near_the_orientation():
    _, group = robots.load_group("panda")
    voxels, R = voxel_centers(CENTER, 1.0, PITCH), orientations(4, 2)
    hits = workspace.sample_hits(group, voxels, R, CENTER, PITCH, 20_000, 0, 0.8)
    assert 0 < hits.hit.mean() < 1
    T_base_world = group.fk(group.mid_configuration(), group.base).inverse()
    for v, k in zip(*np.nonzero(hits.hit)):
        q = hits.seed[v, k]
        T = T_base_world * group.fk(q, group.tip)  # independent of the compiled FK
        assert np.all(np.abs(T.translation - voxels[v]) <= PITCH / 2 + 1e-9)
        angles = [np.linalg.norm(pin.log3(Rk.T @ T.rotation)) for Rk in R]
        assert int(np.argmin(angles)) == k and angles[k] <= 0.8 + 1e-9
    assert not np.isfinite(hits.seed[~hits.hit]).any()


def test_tip_poses_compiled_equal_pinocchio():
    _, group = robots.load_group("kinova")  # continuous joints
    qs = group.random_configurations(np.random.default_rng(2), 50)
    T = workspace.tip_poses(group, qs)
    for q, H in zip(qs, T):
        np.testing.assert_allclose(H, group.fk(q, group.tip).homogeneous, atol=1e-12)


def test_near_voxels_are_the_marked_ones_and_their_neighbours():
    voxels = voxel_centers(CENTER, 1.0, PITCH)
    marked = np.zeros(len(voxels), bool)
    marked[len(voxels) // 2] = True
    near = workspace.near_voxels(voxels, marked, CENTER, PITCH)
    d = np.abs(voxels - voxels[len(voxels) // 2]).max(axis=1)
    np.testing.assert_array_equal(near, d <= PITCH + 1e-9)
