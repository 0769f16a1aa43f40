"""Restarts from the sample library: placements, ranking, jump box, the driver's order."""
import math

import numpy as np
import pinocchio as pin
import pytest

from ros2_ik.core import errors, robots
from ros2_ik.core.constraints import PositionConstraint
from ros2_ik.core.pose import PoseTarget
from ros2_ik.core.problem import Problem
from ros2_ik.core.solve import solve
from ros2_ik.core.solvers import seed_library
from ros2_ik.core.solvers.options import SolveOptions
from ros2_ik.core.solvers.search import Search


@pytest.fixture(scope="module")
def panda():
    return robots.load_group("panda")[1]


def independent_fk(arm: str, group, q: np.ndarray, frame: str) -> pin.SE3:
    """``T_world_frame`` from a second model built from the URDF text (no group code).

    The joints outside the group at the group's locked values (0 clipped into their
    limits).
    """
    model = pin.buildModelFromXML(robots.urdf_text(arm))
    data = model.createData()
    q_full = pin.neutral(model)
    for name, value in group.locked.items():
        if model.nqs[model.getJointId(name)] == 1:
            q_full[model.idx_qs[model.getJointId(name)]] = value
    for name, value in zip(group.joint_names, q):
        jid = model.getJointId(name)
        if model.nqs[jid] == 2:  # continuous: cos/sin
            q_full[model.idx_qs[jid]:model.idx_qs[jid] + 2] = math.cos(value), math.sin(value)
        else:
            q_full[model.idx_qs[jid]] = value
    pin.framesForwardKinematics(model, data, q_full)
    return data.oMf[model.getFrameId(frame)]


@pytest.mark.parametrize("arm, frame", [
    ("panda", None), ("kinova", None),  # kinova: continuous joints
    ("panda", "panda_link4"),  # mid-chain
    ("panda", "panda_link0"),  # fixed in the world: pinocchio, not the compiled chain
    ("pr2_right", None)])  # a whole robot: continuous joints, the rest locked
def test_placements_are_the_forward_kinematics_of_the_samples(arm, frame):
    _, group = robots.load_group(arm)
    frame = frame or group.tip
    lib = seed_library.library(group)
    p, R = lib.placements(group, frame)
    assert lib.q.shape == (seed_library.SAMPLES, group.n) and p.shape == (seed_library.SAMPLES, 3)
    for i in np.random.default_rng(4).choice(seed_library.SAMPLES, 25, replace=False):
        assert np.all(lib.q[i] >= group.search_lower) and np.all(lib.q[i] <= group.search_upper)
        T = independent_fk(arm, group, lib.q[i], frame)
        np.testing.assert_allclose(p[i], T.translation, atol=1e-12)
        np.testing.assert_allclose(R[i].reshape(3, 3), T.rotation, atol=1e-12)


def test_library_is_deterministic_and_shared(panda):
    fresh = seed_library.SeedLibrary(panda)
    np.testing.assert_array_equal(fresh.q, seed_library.library(panda).q)
    assert seed_library.library(panda) is seed_library.library(panda)


def brute_force_order(group, target: PoseTarget, weight_rotation: bool) -> np.ndarray:
    """Indices of the library sorted by the documented distance, computed per sample."""
    lib = seed_library.library(group)
    T_t = target.T_ref_target
    placements = [group.fk(q, target.frame) for q in lib.q]
    p = np.array([T.translation for T in placements])
    # the documented weight: ORIENTATION_WEIGHT times the spread of the sample positions
    weight = seed_library.ORIENTATION_WEIGHT * ((p - p.mean(axis=0)) ** 2).sum(axis=1).mean()
    d = []
    for T in placements:
        dist = float(np.sum((T.translation - T_t.translation) ** 2))
        if weight_rotation:
            theta = np.linalg.norm(pin.log3(T_t.rotation.T @ T.rotation))
            dist += weight * 2.0 * (1.0 - math.cos(theta))
        d.append(dist)
    return np.argsort(d, kind="stable")


@pytest.mark.parametrize("position_only", [False, True])
def test_nearest_starts_rank_by_the_documented_distance(panda, position_only):
    q = panda.random_configuration(np.random.default_rng(8))
    target = PoseTarget(panda.tip, panda.fk(q, panda.tip), position_only=position_only)
    pose = Problem(panda, target).pose
    got = seed_library.nearest_starts(panda, pose, 5, panda.mid_configuration())
    order = brute_force_order(panda, target, weight_rotation=not position_only)
    np.testing.assert_allclose(got, seed_library.library(panda).q[order[:5]])


@pytest.mark.parametrize("position, rotation", [(True, True), (True, False), (False, True)])
def test_the_compiled_ranking_orders_as_the_distances(panda, position, rotation):
    """``_Ranking.nearest`` (one compiled pass) gives the order of a stable sort of
    ``distances`` (numpy's product), on the quick prefix and on the whole library."""
    ranking = seed_library.library(panda).ranking(panda, panda.tip)
    rng = np.random.default_rng(21)
    for _ in range(60):
        T = seed_library.target_rows(panda.fk(panda.random_configuration(rng), panda.tip))
        for samples, count in ((seed_library.QUICK_SAMPLES, seed_library.QUICK_STARTS),
                               (seed_library.SAMPLES, seed_library.LIBRARY_STARTS)):
            got = ranking.nearest(T, position, rotation, count, samples)
            assert got is not None  # numba is installed: the compiled pass ran
            d = ranking.distances(T, position, rotation, samples)
            np.testing.assert_array_equal(got, np.argsort(d, kind="stable")[:count])
    nan = [[math.nan] * 4] * 3
    assert ranking.nearest(nan, position, rotation, 4).size == 0


def test_a_library_sample_is_its_own_nearest(panda):
    lib = seed_library.library(panda)
    for i in (0, 17, 1999):
        pose = Problem(panda, PoseTarget(panda.tip, panda.fk(lib.q[i], panda.tip))).pose
        np.testing.assert_array_equal(
            seed_library.nearest_starts(panda, pose, 1, panda.mid_configuration())[0], lib.q[i])


def test_jump_box_keeps_only_samples_near_the_seed(panda):
    seed = panda.mid_configuration()
    pose = Problem(panda, PoseTarget(panda.tip, panda.fk(seed + 0.9, panda.tip))).pose
    starts = seed_library.nearest_starts(panda, pose, 4, seed, max_jump=1.2)
    assert len(starts) > 0
    assert np.abs(starts - seed).max() <= 1.2
    assert len(seed_library.nearest_starts(panda, pose, 4, seed, max_jump=1e-3)) == 0


def test_driver_order_seed_library_then_random(panda):
    """The seed, the nearest of the quick prefix, the nearest of all the others, random."""
    q, seed = panda.random_configuration(np.random.default_rng(3)), panda.mid_configuration()
    problem = Problem(panda, PoseTarget(panda.tip, panda.fk(q, panda.tip)))
    quick = seed_library.QUICK_STARTS
    search = Search(problem, seed, SolveOptions(library_starts=quick + 3, random_seed=5))
    first = seed_library.nearest_starts(panda, problem.pose, quick, seed,
                                        samples=seed_library.QUICK_SAMPLES)
    ranked = seed_library.nearest_starts(panda, problem.pose, 2 * quick + 3, seed)
    rest = [row for row in ranked if not any(np.array_equal(row, f) for f in first)][:3]
    starts = []
    for _ in range(quick + 5):
        starts.append(search.next_start())
        search.attempts += 1
    np.testing.assert_array_equal(starts[0], seed)
    np.testing.assert_array_equal(starts[1:quick + 1], first)
    np.testing.assert_array_equal(starts[quick + 1:quick + 4], rest)
    for start in starts[quick + 4:]:
        assert not any(np.array_equal(start, row) for row in seed_library.library(panda).q)
        assert panda.within_limits(start)


def test_no_library_when_disabled(panda):
    """library_starts=0: the seed, then uniform random (pose and constraint problems)."""
    seed = panda.mid_configuration()
    box = PositionConstraint(panda.robot.model, "panda_link0", [0.2, -0.3, 0.2], [0.6, 0.3, 0.6],
                             panda.tip, [0.0, 0.0, 0.0])
    for problem in (Problem(panda, PoseTarget(panda.tip, panda.fk(seed + 0.5, panda.tip))),
                    Problem(panda, None, [box])):
        search = Search(problem, seed, SolveOptions(library_starts=0, random_seed=5))
        np.testing.assert_array_equal(search.next_start(), seed)
        search.attempts += 1
        second = search.next_start()
        assert not any(np.array_equal(second, row) for row in seed_library.library(panda).q)
        assert search._library is None and search._pose_library is None


def test_library_starts_must_be_a_count(panda):
    target = PoseTarget(panda.tip, panda.fk(panda.mid_configuration(), panda.tip))
    for bad in (-1, 1.5, True, "4"):
        with pytest.raises(errors.InvalidArgument, match="library_starts"):
            solve(panda, target, panda.mid_configuration(), library_starts=bad)


def test_library_starts_solve_a_hard_target_in_fewer_iterations(panda):
    """Same targets, same random seeds, no deadline: fewer iterations with the library.

    A property of the ranking, checked against the same solver without it: over 150
    random targets the total work drops (measured 2x fewer iterations at p95).
    """
    rng = np.random.default_rng(21)
    with_lib = without = 0
    for i in range(150):
        target = PoseTarget(panda.tip, panda.fk(panda.random_configuration(rng), panda.tip))
        runs = [solve(panda, target, panda.mid_configuration(), timeout_s=10.0,
                      max_attempts=200, random_seed=i, library_starts=k) for k in (4, 0)]
        assert all(r.success for r in runs)
        with_lib += runs[0].iterations
        without += runs[1].iterations
    assert with_lib < 0.9 * without, (with_lib, without)


@pytest.mark.parametrize("arm", ["panda", "kinova"])
def test_batched_samples_and_conversions_equal_the_single_ones(arm):
    """random_configurations / to_reduced_qs (the library's) = the per-sample functions."""
    _, group = robots.load_group(arm)
    batch = group.random_configurations(np.random.default_rng(6), 40)
    rng = np.random.default_rng(6)
    np.testing.assert_array_equal(batch, [group.random_configuration(rng) for _ in range(40)])
    np.testing.assert_allclose(group.to_reduced_qs(batch),
                               [group.to_reduced_q(q) for q in batch], rtol=0, atol=1e-15)


def test_groups_are_freed_after_solving(panda):
    """The per-group caches (seed library, lm's arrays) are weak: a dropped group is freed."""
    import gc
    import weakref
    refs = []
    for i in range(3):
        group = panda.robot.group(base="panda_link0", tip="panda_hand")
        target = PoseTarget(group.tip, group.fk(group.mid_configuration() + 0.8, group.tip))
        result = solve(group, target, group.random_configuration(np.random.default_rng(i)),
                       max_attempts=6, timeout_s=1.0, random_seed=i)
        assert result.iterations > 0
        seed_library.prepare(group, group.tip)
        refs.append(weakref.ref(group))
        del group, result
    gc.collect()
    assert all(ref() is None for ref in refs)
