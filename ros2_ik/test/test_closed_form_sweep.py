"""7R arms by a swept joint over 6R closed forms (core/closed_form/sweep.py).

Every answer is checked by pinocchio's forward kinematics on the full model and the
joint limits, never by the solver's own figures.
"""
import json
import math
import os
import re
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
import urdf_edits

from ros2_ik.core import errors
from ros2_ik.core.closed_form import chain, sweep
from ros2_ik.core.model import robots
from ros2_ik.core.model.robot import Robot
from ros2_ik.core.pose import PoseTarget
from ros2_ik.core.problem import Problem
from ros2_ik.core.result import IKStatus
from ros2_ik.core.solve import prepare, solve
from ros2_ik.core.solvers import before_iterating
from ros2_ik.core.solvers.analytic import Analytic
from ros2_ik.core.solvers.options import SolveOptions
from ros2_ik.core.solvers.lm import LevenbergMarquardt

pytest.importorskip("eaik.pybindings.EAIK", reason="eaik is not installed (make setup)")

REAL_URDFS = Path(os.environ.get("ROS2_IK_REAL_URDFS", "/work/shared/real_urdfs"))


@pytest.fixture(scope="module")
def panda():
    return robots.load_group("panda")


def _targets(group, count, seed):
    rng = np.random.default_rng(seed)
    qs = [group.random_configuration(rng) for _ in range(count)]
    return [(q, group.fk(q, group.tip)) for q in qs]


def _verified(group, q, T, tol=1e-4):
    """Pinocchio FK within ``tol`` [m, rad] of ``T`` (the search's: its tolerances), limits."""
    err = pin.log6(T.actInv(group.fk(np.asarray(q), group.tip))).np
    return np.abs(err).max() < tol and group.within_limits(q)


def test_panda_has_a_swept_joint(panda):
    robot, group = panda
    fid = robot.frame_id(group.tip)
    assert chain.of(group, fid) is None  # seven joints: no 6R closed form
    found = sweep.of(group, fid)
    assert found is not None, sweep.reason(group, fid)
    assert 0 <= found.joint < 7 and found.name == group.joint_names[found.joint]
    # held at any value in its limits, the rest reproduces pinocchio's kinematics
    for q, T in _targets(group, 5, seed=1):
        form = found.at(float(q[found.joint]))
        assert np.abs(form.forward(q) - T.homogeneous).max() < 1e-9


@pytest.mark.parametrize("name", ["panda", "pr2_right"])  # an end joint, one inside
def test_answers_verified_by_pinocchio_within_limits(name):
    _, group = robots.load_group(name)
    seed = group.mid_configuration()
    swept = 0
    for k, (q_true, T) in enumerate(_targets(group, 40, seed=2)):
        result = solve(group, PoseTarget(group.tip, T), seed, solver="analytic",
                       timeout_s=0.5, random_seed=k)
        assert result.status is IKStatus.SUCCESS, result.message
        exact = "swept" in result.message
        assert _verified(group, result.q, T, 1e-9 if exact else 1e-4)
        swept += exact
    assert swept >= 36  # the sweep answers; the search only where it ran out


def test_the_seed_is_its_own_answer(panda):
    """A seed that solves the pose: the sweep starts at its value, its branch first."""
    _, group = panda
    for q_true, T in _targets(group, 10, seed=3):
        result = solve(group, PoseTarget(group.tip, T), q_true, solver="analytic")
        assert result.success and "swept" in result.message
        assert np.abs(result.q - q_true).max() < 1e-6


def test_limits_respected_on_a_narrowed_joint():
    """Limits narrowed on a joint other than the swept one: every answer inside them."""
    robot = urdf_edits.narrowed("panda", "panda_joint2", -0.3, 0.9)
    spec = robots.ARMS["panda"]
    group = robot.group(base=spec.base, tip=spec.tip)
    assert sweep.of(group, robot.frame_id(group.tip)) is not None
    seed = group.mid_configuration()
    swept = 0
    for k, (q_true, T) in enumerate(_targets(group, 15, seed=4)):
        result = solve(group, PoseTarget(group.tip, T), seed, solver="analytic",
                       timeout_s=0.5, random_seed=k)
        assert result.success, result.message
        assert -0.3 - 1e-9 <= result.q[1] <= 0.9 + 1e-9
        assert _verified(group, result.q, T)
        swept += "swept" in result.message
    assert swept >= 12


def test_num_solutions_distinct_verified_branches(panda):
    _, group = panda
    q_true, T = _targets(group, 1, seed=5)[0]
    result = solve(group, PoseTarget(group.tip, T), group.mid_configuration(),
                   solver="analytic", num_solutions=20, timeout_s=0.2)
    assert result.success and len(result.solutions) >= 2
    qs = np.array([s.q for s in result.solutions])
    for s in result.solutions:
        assert _verified(group, s.q, T)
    for i in range(len(qs)):
        for j in range(i):
            assert np.abs(qs[i] - qs[j]).max() > 1e-2


def test_other_problems_keep_the_search(panda):
    """A free axis (or constraints, costs): no sweep, lm's search as before."""
    _, group = panda
    q_true, T = _targets(group, 1, seed=6)[0]
    problem = Problem(group, PoseTarget(group.tip, T, position_only=True))
    assert before_iterating.answer(Analytic(), problem, group.mid_configuration(),
                                   SolveOptions(), 1e-2) is None
    result = solve(group, problem, group.mid_configuration(), timeout_s=0.5)
    assert result.success and "swept" not in result.message
    assert np.linalg.norm(group.fk(result.q, group.tip).translation - T.translation) < 1e-3


def test_out_of_reach_still_no_solution(panda):
    _, group = panda
    T = _targets(group, 1, seed=7)[0][1]
    far = pin.SE3(T.rotation, T.translation * (3.0 / np.linalg.norm(T.translation)))
    result = solve(group, PoseTarget(group.tip, far), group.mid_configuration(),
                   solver="analytic", timeout_s=0.5)
    assert result.status is IKStatus.NO_SOLUTION
    assert result.message.startswith("no solution: ")


def test_lm_keeps_its_search_on_7r_arms(panda):
    """Panda's sweep is not cheap (lm's median is as good): lm's answers are its search's."""
    _, group = panda
    assert not sweep.of(group, group.robot.frame_id(group.tip)).cheap
    q_true, T = _targets(group, 1, seed=10)[0]
    problem = Problem(group, PoseTarget(group.tip, T))
    assert before_iterating.answer(LevenbergMarquardt(), problem, group.mid_configuration(),
                                   SolveOptions(), 1e-2) is None
    result = solve(group, problem, group.mid_configuration(), timeout_s=0.5)
    assert result.success and result.iterations > 0 and "swept" not in result.message


def test_the_sweep_cache_frees_its_group():
    import gc
    import weakref
    refs = []
    for _ in range(2):
        robot, group = robots.load_group("panda")
        assert sweep.of(group, robot.frame_id(group.tip)) is not None
        refs.append(weakref.ref(group))
        del robot, group
    gc.collect()
    assert all(ref() is None for ref in refs)


def test_arm_without_a_swept_joint_keeps_lm():
    """xarm7 (offset axes): no joint held leaves a chain EAIK decomposes."""
    robot, group = robots.load_group("xarm7")
    fid = robot.frame_id(group.tip)
    assert sweep.of(group, fid) is None and sweep.reason(group, fid)
    q_true, T = _targets(group, 1, seed=8)[0]
    problem = Problem(group, PoseTarget(group.tip, T))
    assert before_iterating.answer(Analytic(), problem, group.mid_configuration(),
                                   SolveOptions(), 1e-2) is None
    with pytest.raises(errors.InvalidArgument, match="no closed form"):
        solve(group, problem, group.mid_configuration(), solver="analytic")
    result = solve(group, problem, group.mid_configuration(), timeout_s=0.5)
    assert result.success and "swept" not in result.message


def test_continuous_swept_values_cover_one_turn():
    """Values of a joint without limits: the seed's first, then one turn, each once."""
    _, group = robots.load_group("panda")
    fid = group.robot.frame_id(group.tip)
    H, P, R = chain._product_of_exponentials(group, fid,
                                             chain._axes(group.robot.model, group.joint_ids))
    s = sweep.Sweep(6, "j", "", H, P, R, -math.inf, math.inf, end=True)
    s.order(np.arange(sweep.CELLS)[::-1])
    poses = [T.homogeneous for _, T in _targets(group, 200, seed=11)]
    s.rank(poses, sweep._reached(group.lower, group.upper, s, poses))
    values = s.values(10.0, poses[0])
    assert values[0] == 10.0
    assert min(values[1:]) >= -math.pi and max(values[1:]) <= math.pi
    assert len(set(np.round(values, 9))) == len(values) == 1 + sweep.CELLS


@pytest.mark.parametrize("name", ["panda", "tiago", "pr2_right"])
def test_ranking_reaches_unseen_poses_in_few_values(name):
    """The values ranked for a target give it branches within the limits early."""
    robot, group = robots.load_group(name)
    found = sweep.of(group, robot.frame_id(group.tip))
    seed = group.mid_configuration()
    firsts = []
    for _, T in _targets(group, 60, seed=9):  # poses the detection did not see
        for count, found_at in enumerate(sweep.along(found, group, T, seed, 1e-2), 1):
            if len(found_at.q):
                break
        else:
            count = 99
        firsts.append(count)
    assert np.median(firsts) <= 2 and np.mean(np.array(firsts) <= 4) >= 0.8, firsts


def test_the_ranking_is_fitted_when_a_solver_first_runs_the_sweep(monkeypatch):
    """lm does not run the Panda's sweep: its prepare leaves the ranking's fit (most of the
    detection's time) undone; the analytic solver's prepare fits it; threads that run a new
    sweep at once see one ranking."""
    monkeypatch.setattr(sweep, "_SEEN", OrderedDict())  # no detection from another test
    robot, group = robots.load_group("panda")
    prepare(group, group.tip)
    found = sweep.of(group, robot.frame_id(group.tip))
    assert not found.cheap and not found.ranked
    prepare(group, group.tip, solver="analytic")
    assert found.ranked
    T = [T.homogeneous for _, T in _targets(group, 8, seed=4)]
    expected = [found.values(0.1, H) for H in T]
    monkeypatch.setattr(sweep, "_SEEN", OrderedDict())
    fresh = robots.load_group("panda")[1]
    again = sweep.of(fresh, robot.frame_id(fresh.tip))
    assert again is not found and not again.ranked
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda H: again.values(0.1, H), T))
    assert again.ranked
    np.testing.assert_array_equal(got, expected)


def test_a_chain_seen_before_keeps_its_detection(monkeypatch):
    """A robot built again (the node's second model when the SRDF follows the URDF) gets its
    chain's detection back; other limits make another chain, detected anew."""
    monkeypatch.setattr(sweep, "_SEEN", OrderedDict())
    calls = []
    detected = sweep._detected
    monkeypatch.setattr(sweep, "_detected", lambda *a: calls.append(a) or detected(*a))
    robot, group = robots.load_group("panda")
    first = sweep.of(group, robot.frame_id(group.tip))
    robot, group = robots.load_group("panda")
    assert sweep.of(group, robot.frame_id(group.tip)) is first
    assert len(calls) == 1
    spec = robots.ARMS["panda"]
    narrowed = urdf_edits.narrowed("panda", "panda_joint2", -0.3, 0.9)
    other = narrowed.group(base=spec.base, tip=spec.tip)
    assert sweep.of(other, narrowed.frame_id(other.tip)) is not first
    assert len(calls) == 2
    # the seen chains are bounded: the oldest goes first
    monkeypatch.setattr(sweep, "SEEN_CHAINS", 1)
    third = urdf_edits.narrowed("panda", "panda_joint2", -0.2, 0.8)
    group = third.group(base=spec.base, tip=spec.tip)
    sweep.of(group, third.frame_id(group.tip))
    assert len(calls) == 3 and len(sweep._SEEN) == 1
    robot, group = robots.load_group("panda")
    assert sweep.of(group, robot.frame_id(group.tip)) is not first
    assert len(calls) == 4


@pytest.mark.parametrize("name,end", [("panda", 6), ("tiago", 0)])
def test_an_end_joint_is_swept_with_one_closed_form(name, end):
    """An end joint held: the rest's target is the pose with the joint's motion removed.

    Checked against EAIK's forward kinematics of the rest at the other six angles, the
    pose from pinocchio's.
    """
    from ros2_ik.core.closed_form import held
    robot, group = robots.load_group(name)
    found = sweep.of(group, robot.frame_id(group.tip))
    assert found.end and found.joint == end
    for q, T in _targets(group, 10, seed=12):
        rest = np.delete(q, end)
        sub = held.target(T.homogeneous, float(q[end]), found._axis, found._point,
                          found._tool_RT, end == 0)
        assert np.abs(found._rest.fwdkin(rest) - sub).max() < 1e-9


def test_a_joint_inside_the_chain_swept_per_value():
    """pr2's sweep holds a joint inside the chain (EAIK's fixed axes, a form per value).

    Within its hard limits: its soft limits (the group's own) make an end joint cover the
    sample poses in fewer values.
    """
    spec = robots.ARMS["pr2_right"]
    robot = Robot.from_urdf(re.sub(r"<safety_controller[^>]*/>", "",
                                   robots.urdf_text("pr2_right")))
    group = robot.group(base=spec.base, tip=spec.tip)
    found = sweep.of(group, robot.frame_id(group.tip))
    assert not found.end and 0 < found.joint < 6


@pytest.mark.parametrize("turned", [None, 2, 3])
def test_parallel_axes_pointing_either_way_keep_the_sweep(turned):
    """A joint, then a 6R of three parallel axes (one turned: ``turned``), 5 and 6 apart.

    EAIK's rows of three parallel axes miss the pose when one points the other way: the
    held chain failed the self-test and the arm had no sweep.  Turned alike for EAIK
    (:func:`.chain.codirected`) it has one; every branch is checked by pinocchio.
    """
    y = [0.0, 1.0, 0.0]
    axes = [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], y, y, y, [0.6, 0.0, 0.8], [0.0, 0.6, 0.8]]
    if turned is not None:
        axes[turned] = [0.0, -1.0, 0.0]
    points = [[0.0, 0.0, 0.05], [0.0, 0.0, 0.1], [0.05, 0.1, 0.2], [0.45, 0.05, 0.25],
              [0.8, 0.1, 0.2], [0.85, 0.2, 0.15], [0.9, 0.25, 0.05]]
    robot = Robot.from_urdf(urdf_edits.world_axes_urdf(points, axes, [0.95, 0.3, 0.0],
                                                       [0.3, -0.2, 0.1]))
    group = robot.group(base="base", tip="tool")
    frame_id = robot.frame_id("tool")
    assert sweep.of(group, frame_id) is not None, sweep.reason(group, frame_id)
    for q, T in _targets(group, 10, seed=13):
        result = solve(group, PoseTarget("tool", T), group.mid_configuration(),
                       solver="analytic", timeout_s=0.5, num_solutions=4)
        assert result.success, result.message
        for s in result.solutions:
            assert _verified(group, s.q, T)


@pytest.mark.skipif(not (REAL_URDFS / "manifest.json").is_file(),
                    reason=f"{REAL_URDFS} is absent (vendor URDFs are not in the repository)")
def test_lm_sweeps_where_one_value_reaches_nearly_every_pose():
    """iiwa's elbow held at one value leaves a spherical-wrist 6R that reaches almost all.

    lm tries the seed's attempt first, then the sweep: the poses that attempt misses are
    answered by the sweep, exactly and without restarts, its result counting the
    attempt's iterations.
    """
    entry = next(e for e in json.loads((REAL_URDFS / "manifest.json").read_text())
                 if e["name"] == "kuka_lbr_iiwa14_r820")
    robot = Robot.from_urdf((REAL_URDFS / entry["file"]).read_text())
    group = robot.group(base=entry["base"], tip=entry["tip"])
    found = sweep.of(group, robot.frame_id(group.tip))
    assert found.cheap and 0 < found.joint < 6
    seed = group.mid_configuration()
    swept = attempt = 0
    for k, (q_true, T) in enumerate(_targets(group, 30, seed=14)):
        result = solve(group, PoseTarget(group.tip, T), seed, timeout_s=0.5, random_seed=k)
        assert result.success and result.solver == "lm", result.message
        M = group.fk(result.q, group.tip)
        exact = "swept" in result.message
        if exact:
            assert _verified(group, result.q, T, 1e-9) and result.iterations > 0
        else:  # the search's tolerances
            assert np.linalg.norm(M.translation - T.translation) <= 1e-4
            assert np.linalg.norm(pin.log3(T.rotation.T @ M.rotation)) <= 1e-3
            assert group.within_limits(result.q)
        swept += exact
        attempt += not exact and result.restarts == 0
    assert swept >= 1 and attempt >= 15 and swept + attempt >= 28, (swept, attempt)


def test_a_cheap_sweep_goes_before_an_end_joint_that_costs_fewer_values():
    """An SRS arm: its upper-arm roll held at one value reaches every sample pose.

    Its last joint, held (one closed form for every value), needs ~1.3 values a pose;
    the roll, counted with its per-value closed form (:data:`.sweep.BUILD_COST`), 1.5.
    lm runs only a cheap sweep: chosen by that count alone, the arm had none for lm, and
    the poses the seed's attempt missed went to restarts.  Every answer is checked by
    pinocchio's forward kinematics and the limits.
    """
    group = urdf_edits.srs_arm()
    found = sweep.of(group, group.robot.frame_id("tool"))
    assert found.cheap and found.joint == 2 and not found.end, found.family
    seed = group.mid_configuration()
    swept = 0
    for k, (_, T) in enumerate(_targets(group, 40, seed=15)):
        result = solve(group, PoseTarget("tool", T), seed, timeout_s=0.5, random_seed=k)
        assert result.success and result.solver == "lm", result.message
        M = group.fk(result.q, "tool")
        assert np.linalg.norm(M.translation - T.translation) <= 1e-4
        assert np.linalg.norm(pin.log3(T.rotation.T @ M.rotation)) <= 1e-3
        assert group.within_limits(result.q)
        swept += "swept" in result.message
    assert swept >= 1
