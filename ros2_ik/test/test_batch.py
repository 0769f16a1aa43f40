"""Batch IK (core/maps/batch.py): deterministic across worker counts, SUCCESS checked by FK."""
import numpy as np
import pinocchio as pin
import pytest

from ros2_ik.core import errors, robots
from ros2_ik.core.maps.batch import GroupSpec, solve_batch, target_seeds
from ros2_ik.core.pose import PoseTarget

PANDA = GroupSpec(arm="panda")


def _reachable_targets(count: int, seed: int = 3) -> np.ndarray:
    """(count, 4, 4) poses of the Panda hand at random configurations (reachable)."""
    _, group = robots.load_group("panda")
    rng = np.random.default_rng(seed)
    return np.stack([group.fk(group.random_configuration(rng), group.tip).homogeneous
                     for _ in range(count)])


def _fk_errors(group, q: np.ndarray, T: np.ndarray):
    """Position [m] and orientation [rad] errors by plain FK, outside the solver."""
    T_fk = group.fk(q, group.tip)
    pos = np.linalg.norm(T_fk.translation - T[:3, 3])
    ori = np.linalg.norm(pin.log3(T[:3, :3].T @ T_fk.rotation))
    return pos, ori


def test_one_and_two_workers_give_identical_answers():
    T = _reachable_targets(12)
    T[-1, :3, 3] = [3.0, 0.0, 0.0]  # far out of reach: must not succeed
    kwargs = dict(timeout_s=5.0, max_attempts=6, batch_seed=7, chunk_size=5)
    one = solve_batch(PANDA, T, workers=1, **kwargs)
    two = solve_batch(PANDA, T, workers=2, **kwargs)
    np.testing.assert_array_equal(one.q, two.q)
    np.testing.assert_array_equal(one.status, two.status)
    np.testing.assert_array_equal(one.random_seed, two.random_seed)
    assert one.success.sum() >= 9 and not one.success[-1]
    _, group = robots.load_group("panda")
    for q, ok, T_i in zip(one.q, one.success, T):
        pos, ori = _fk_errors(group, q, T_i)
        assert group.within_limits(q)
        if ok:
            assert pos <= 1e-4 and ori <= 1e-3
    assert pos > 1.0  # the unreachable target really is far away


def test_seeds_depend_on_batch_seed_and_index_only():
    a = target_seeds(5, np.arange(10))
    np.testing.assert_array_equal(a[4:], target_seeds(5, np.arange(4, 10)))
    assert len(set(a.tolist())) == 10
    assert not np.array_equal(a, target_seeds(6, np.arange(10)))
    big = target_seeds(2 ** 64 - 1, np.arange(100_000))
    assert big.max() < 2 ** 63 and len(np.unique(big)) == len(big)


def test_pose_targets_list_is_accepted():
    T = _reachable_targets(2)
    targets = [PoseTarget("panda_hand", pin.SE3(t), "panda_link0") for t in T]
    res = solve_batch(PANDA, targets, timeout_s=1.0, max_attempts=6, batch_seed=1)
    assert res.q.shape == (2, 7) and res.success.all()
    with pytest.raises(ValueError):
        res.q[0, 0] = 1.0


def test_calls_on_one_spec_share_its_prepared_group(monkeypatch):
    """A second call builds no group: the spec's group, prepared once, serves every call."""
    T = _reachable_targets(3, seed=8)
    first = solve_batch(PANDA, T, timeout_s=1.0, max_attempts=6, batch_seed=2)
    built = []
    build = GroupSpec.build
    monkeypatch.setattr(GroupSpec, "build", lambda spec: built.append(spec) or build(spec))
    again = solve_batch(PANDA, T, timeout_s=1.0, max_attempts=6, batch_seed=2)
    assert not built
    np.testing.assert_array_equal(first.q, again.q)
    assert again.success.all()


@pytest.mark.parametrize("spec, field", [
    (GroupSpec(arm="nope"), "arm"),
    (GroupSpec(arm="panda", tip="no_such_link"), "no_such_link"),
    (GroupSpec(), "group_spec"),
])
def test_bad_group_spec(spec, field):
    with pytest.raises(errors.IKError, match=field):
        solve_batch(spec, _reachable_targets(1))


@pytest.mark.parametrize("targets", [np.zeros((0, 4, 4)), np.zeros((3, 3, 3)), [],
                                     np.full((1, 4, 4), np.nan)])
def test_bad_targets(targets):
    with pytest.raises(errors.InvalidGoal, match="targets"):
        solve_batch(PANDA, targets)


def test_bad_frame_workers_and_seed():
    T = _reachable_targets(1)
    with pytest.raises(errors.InvalidFrame, match="no_frame"):
        solve_batch(PANDA, T, frame="no_frame")
    with pytest.raises(errors.InvalidArgument, match="workers"):
        solve_batch(PANDA, T, workers=0)
    with pytest.raises(errors.InvalidSeed, match="seed"):
        solve_batch(PANDA, T, seed=np.zeros((2, 7)))
    for bad in (-1, 2 ** 64, 1.5, True, "3"):
        with pytest.raises(errors.InvalidArgument, match="batch_seed"):
            solve_batch(PANDA, T, batch_seed=bad)


def test_ray_path_gives_the_local_answers():
    ray = pytest.importorskip(
        "ray", reason="ray not installed (an extra: make extras)")
    T = _reachable_targets(6)
    kwargs = dict(timeout_s=5.0, max_attempts=6, batch_seed=7, chunk_size=2)
    local = solve_batch(PANDA, T, **kwargs)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        remote = solve_batch(PANDA, T, workers=2, use_ray=True, **kwargs)
        again = solve_batch(PANDA, T, workers=2, use_ray=True, **kwargs)  # reused actors
    finally:
        ray.shutdown()
    np.testing.assert_array_equal(local.q, remote.q)
    np.testing.assert_array_equal(local.status, remote.status)
    np.testing.assert_array_equal(again.q, remote.q)


def box_around_row(group, row, half_m):
    """Template of the test: the tip's origin inside a cube of half side ``half_m`` at row."""
    from ros2_ik.core.constraints import PositionConstraint
    from ros2_ik.core.problem import Problem
    box = PositionConstraint(group.robot.model, group.base, np.asarray(row) - half_m,
                             np.asarray(row) + half_m, group.tip, [0.0, 0.0, 0.0])
    return Problem(group, None, [box])


def test_template_batch_solves_constraint_problems_checked_by_fk():
    from ros2_ik.core.maps.batch import ProblemTemplate
    _, group = robots.load_group("panda")
    rng = np.random.default_rng(4)
    T_base_world = group.fk(group.mid_configuration(), group.base).inverse()
    rows = np.array([(T_base_world * group.fk(q, group.tip)).translation
                     for q in group.random_configurations(rng, 12)])
    template = ProblemTemplate(box_around_row, (("half_m", 0.005),))
    res = solve_batch(GroupSpec(arm="panda"), rows, template=template, timeout_s=0.05,
                      batch_seed=2)
    assert res.success.all()
    assert np.isnan(res.position_error_m).all()  # no pose target: no pose error
    for q, row in zip(res.q, rows):  # independent FK: inside the box, within tolerance
        p = (T_base_world * group.fk(q, group.tip)).translation
        assert np.all(np.abs(p - row) <= 0.005 + 1e-4)
        assert group.within_limits(q)
    with pytest.raises(errors.InvalidGoal, match="targets"):
        solve_batch(GroupSpec(arm="panda"), np.zeros((0, 3)), template=template)
    with pytest.raises(errors.InvalidGoal, match="targets"):
        solve_batch(GroupSpec(arm="panda"), [[np.nan, 0, 0]], template=template)
