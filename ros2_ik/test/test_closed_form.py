"""Closed-form pose IK (core/closed_form, the ``analytic`` solver, lm's use of it).

Every branch is checked by pinocchio's forward kinematics on the full model, counts
against a dense numeric search (lm without the closed form, many restarts), and
NO_SOLUTION never on a target made by forward kinematics of a configuration within the
limits.
"""
import json
import math
import os
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
import urdf_edits

from ros2_ik.core import errors
from ros2_ik.core.model import robots
from ros2_ik.core.closed_form import chain
from ros2_ik.core.pose import PoseTarget
from ros2_ik.core.problem import Problem
from ros2_ik.core.result import IKStatus
from ros2_ik.core.model.robot import Robot
from ros2_ik.core.solve import prepare, solve
from ros2_ik.core.solvers import before_iterating
from ros2_ik.core.solvers.options import SolveOptions
from ros2_ik.core.solvers.lm import LevenbergMarquardt

pytest.importorskip("eaik.pybindings.EAIK", reason="eaik is not installed (make setup)")

CLOSED_FORM_ARMS = ("ur5", "ur10", "kinova", "z1")
REAL_URDFS = Path(os.environ.get("ROS2_IK_REAL_URDFS", "/work/shared/real_urdfs"))


class NumericLM(LevenbergMarquardt):
    """lm without the closed form: the dense numeric search the counts are checked by."""

    closed_form = False


def _fk(group, q):
    return group.fk(q, group.tip)


def _targets(group, count, seed=0):
    rng = np.random.default_rng(seed)
    return [(q, _fk(group, q)) for q in (group.random_configuration(rng) for _ in range(count))]


def _same_branch(a, b, group):
    """Equal up to 2 pi on the joints that wrap, within the distinct tolerance [rad].

    Two exact branches closer than it (near a singularity) are returned as one.
    """
    d = np.asarray(a) - np.asarray(b)
    d = np.where(group.wraps, np.remainder(d + math.pi, 2 * math.pi) - math.pi, d)
    return np.abs(d).max() <= 1e-2


@pytest.fixture(scope="module", params=CLOSED_FORM_ARMS)
def arm(request):
    return robots.load_group(request.param)


def test_detected_from_kinematics(arm):
    robot, group = arm
    closed = chain.of(group, robot.frame_id(group.tip))
    assert closed is not None, chain.reason(group, robot.frame_id(group.tip))
    assert closed.family.startswith("6R")


@pytest.mark.parametrize("name", ["panda", "xarm7"])
def test_no_closed_form_has_a_reason(name):
    robot, group = robots.load_group(name)
    assert chain.of(group, robot.frame_id(group.tip)) is None
    assert "joints" in chain.reason(group, robot.frame_id(group.tip))


def test_every_branch_verified_by_pinocchio(arm):
    _, group = arm
    for q_true, T in _targets(group, 25):
        result = solve(group, PoseTarget(group.tip, T), group.mid_configuration(),
                       solver="analytic", num_solutions=1000)
        assert result.status is IKStatus.SUCCESS, result.message
        assert any(_same_branch(s.q, q_true, group) for s in result.solutions)
        for s in result.solutions:
            err = pin.log6(T.actInv(_fk(group, s.q))).np
            assert np.abs(err).max() < 1e-8
            assert group.within_limits(s.q)
        qs = np.array([s.q for s in result.solutions])
        for i in range(len(qs)):
            for j in range(i):
                assert np.abs(qs[i] - qs[j]).max() > 1e-2


def exact_and_numeric(group, T, attempts):
    """Every branch of pose ``T`` (analytic) and a dense numeric search's, each on one."""
    problem = Problem(group, PoseTarget(group.tip, T))
    seed = group.mid_configuration()
    exact = solve(group, problem, seed, solver="analytic", num_solutions=1000)
    numeric = NumericLM().solve(problem, seed, SolveOptions(
        timeout_s=30.0, max_attempts=attempts, num_solutions=1000, random_seed=3))
    assert numeric.success
    for s in numeric.solutions:
        assert any(_same_branch(s.q, e.q, group) for e in exact.solutions)
    return exact, numeric


def test_counts_equal_a_dense_numeric_search():
    robot, group = robots.load_group("ur5")
    for q_true, T in _targets(group, 3, seed=5):
        exact, numeric = exact_and_numeric(group, T, 1500)
        assert len(exact.solutions) == len(numeric.solutions)


def test_nearest_branch_to_the_seed_first(arm):
    _, group = arm
    for q_true, T in _targets(group, 10, seed=2):
        result = solve(group, PoseTarget(group.tip, T), q_true, solver="analytic")
        assert result.success
        assert np.abs(result.q - q_true).max() < 1e-6  # the seed is a solution: itself


def test_continuous_joints_unwrapped_near_the_seed():
    robot, group = robots.load_group("kinova")
    assert group.continuous.any()
    q_true, T = _targets(group, 1, seed=4)[0]
    seed = q_true + np.where(group.continuous, 4 * math.pi, 0.0)
    result = solve(group, PoseTarget(group.tip, T), seed, solver="analytic")
    assert result.success
    assert np.abs(result.q - seed).max() < 1e-6


def test_reachable_targets_never_no_solution(arm):
    """FK of q within the limits, also moved by half a tolerance: never NO_SOLUTION."""
    _, group = arm
    rng = np.random.default_rng(7)
    for q_true, T in _targets(group, 60, seed=8):
        nudge = rng.normal(size=3)
        T = pin.SE3(T.rotation, T.translation + 0.5e-4 * nudge / np.linalg.norm(nudge))
        result = solve(group, PoseTarget(group.tip, T), group.mid_configuration(),
                       solver="lm", timeout_s=0.05)
        assert result.success, result.message


def test_out_of_reach_proven_with_a_reason(arm):
    _, group = arm
    prepare(group, group.tip)  # the one-time detection is not the solve's (test_prepare.py)
    for _, T in _targets(group, 5, seed=9):
        far = pin.SE3(T.rotation, T.translation * (3.0 / np.linalg.norm(T.translation)))
        result = solve(group, PoseTarget(group.tip, far), group.mid_configuration(),
                       timeout_s=1.0)
        assert result.status is IKStatus.NO_SOLUTION
        # the reach bound's proof first (core/solvers/proofs.py), else the closed form's
        assert result.message.startswith("no solution: "), result.message
        assert group.within_limits(result.q)  # the best available configuration
        assert result.position_error_m > 1.0
        # No search ran (it would restart within its 1 s; timings: bench/analytic_bench.py,
        # not here: this call once took 1.1 s in a busy test worker of a fresh clone).
        assert result.restarts == 0, result.message
    T = _targets(group, 1, seed=10)[0][1]
    base = group.locked_placement(group.robot.frame_id(group.base)).translation
    reach = np.linalg.norm(T.translation - base)
    inside = pin.SE3(T.rotation, base + 0.02 * (T.translation - base) / reach)  # at the base
    result = solve(group, PoseTarget(group.tip, inside), group.mid_configuration(),
                   timeout_s=1.0)
    if result.status is IKStatus.NO_SOLUTION:  # within the reach sphere: the closed form
        assert result.restarts == 0, result.message  # proven, not searched


def _narrow_ur5():
    """ur5 with its elbow limited to [1, 2.5] rad: elbows bent less leave the limits."""
    robot = urdf_edits.narrowed("ur5", "elbow_joint", 1.0, 2.5)
    return robot, robot.group(base="base_link", tip="tool0")


def test_outside_the_limits_proven_or_searched():
    """Poses whose branches all leave the limits: NO_SOLUTION, proven or by the search."""
    robot, group = _narrow_ur5()
    wide = Robot.from_urdf(robots.urdf_text("ur5")).group(base="base_link", tip="tool0")
    rng = np.random.default_rng(11)
    proven = 0
    for _ in range(40):
        q = wide.random_configuration(rng)
        q[2] = rng.choice([-1, 1]) * rng.uniform(0.3, 0.8)  # both elbows outside [1, 2.5]
        T = _fk(wide, q)
        exact = solve(wide, PoseTarget("tool0", T), q, solver="analytic", num_solutions=100)
        if any(1.0 - 1e-2 <= s.q[2] <= 2.5 + 1e-2 for s in exact.solutions):
            continue  # another branch has its elbow inside
        result = solve(group, PoseTarget("tool0", T), group.mid_configuration(),
                       timeout_s=0.02)
        assert result.status is IKStatus.NO_SOLUTION
        proven += result.message.startswith("no solution: outside the joint limits")
    assert proven > 0


def test_the_message_counts_the_branches_found_not_those_returned(arm):
    """One solution asked: the message still counts every branch within the limits.

    It said "1 of 8 branches within the limits" on UR5e when all 8 were inside.
    """
    _, group = arm
    for _, T in _targets(group, 3, seed=13):
        every = solve(group, PoseTarget(group.tip, T), group.mid_configuration(),
                      num_solutions=64, timeout_s=1.0)
        one = solve(group, PoseTarget(group.tip, T), group.mid_configuration(), timeout_s=1.0)
        assert every.success and one.success
        n = len(every.solutions)
        assert f": {n} branch" in one.message and "the one nearest the seed" in one.message
        assert n == 1 or f"{n} returned" in every.message
        assert np.allclose(one.q, every.solutions[0].q)


def test_lm_answers_pose_only_targets_exactly_and_seeds_weighted_ones(arm):
    _, group = arm
    q_true, T = _targets(group, 1, seed=12)[0]
    result = solve(group, PoseTarget(group.tip, T), group.mid_configuration())
    assert result.success and result.solver == "lm"
    assert result.message.startswith("closed form")
    problem = Problem(group, PoseTarget(group.tip, T, position_only=True))
    starts = before_iterating.answer(LevenbergMarquardt(), problem, group.mid_configuration(),
                                     SolveOptions(), 1e-2)
    assert isinstance(starts, list) and starts
    for q in starts:
        assert np.linalg.norm(_fk(group, q).translation - T.translation) < 1e-9
    assert solve(group, problem, group.mid_configuration(), timeout_s=1.0).success


def test_arm_without_closed_form_keeps_its_path():
    _, group = robots.load_group("xarm7")  # 7R, and no joint held leaves a closed form
    q_true = group.mid_configuration() + 0.2
    problem = Problem(group, PoseTarget(group.tip, _fk(group, q_true)))
    assert before_iterating.answer(LevenbergMarquardt(), problem, group.mid_configuration(),
                                   SolveOptions(), 1e-2) is None
    with pytest.raises(errors.InvalidArgument, match="no closed form"):
        solve(group, problem, group.mid_configuration(), solver="analytic")


def test_analytic_refuses_problems_it_does_not_answer():
    _, group = robots.load_group("ur5")
    T = _fk(group, group.mid_configuration() + 0.3)
    with pytest.raises(errors.InvalidArgument, match="every axis"):
        solve(group, PoseTarget(group.tip, T, position_only=True), group.mid_configuration(),
              solver="analytic")


@pytest.mark.parametrize("turned", [0, 1, 2])
def test_three_parallel_axes_pointing_either_way(turned):
    """Axes 2-4 parallel, one of them the other way, 5 and 6 not meeting (EAIK's family).

    EAIK's rows of three parallel axes all missed the pose when one pointed the other way
    (a URDF's ``axis xyz="0 -1 0"``); the self-test then refused the closed form.  Every
    branch is checked here by pinocchio, and the configuration a target came from is one.
    """
    y = np.array([0.0, 1.0, 0.0])
    axes = [[0.0, 0.0, 1.0], y, y, y, [0.6, 0.0, 0.8], [0.0, 0.6, 0.8]]
    axes[1 + turned] = -y
    points = [[0, 0, 0.1], [0.05, 0.1, 0.2], [0.45, 0.05, 0.25], [0.8, 0.1, 0.2],
              [0.85, 0.2, 0.15], [0.9, 0.25, 0.05]]
    robot = Robot.from_urdf(urdf_edits.world_axes_urdf(points, axes, [0.95, 0.3, 0.0],
                                                       [0.3, -0.2, 0.1]))
    group = robot.group(base="base", tip="tool")
    frame_id = robot.frame_id("tool")
    form = chain.of(group, frame_id)
    assert form is not None, chain.reason(group, frame_id)
    assert form.kernel is None and "PARALLEL" in form.family  # EAIK's, not our kernel's
    _own_branch_among_verified(group, 15, seed=9)


def _own_branch_among_verified(group, count: int, seed: int) -> None:
    """On ``count`` targets of the tip, every branch is exact and the target's own is one."""
    for q_true, T in _targets(group, count, seed=seed):
        result = solve(group, PoseTarget(group.tip, T), group.mid_configuration(),
                       solver="analytic", num_solutions=1000)
        assert result.status is IKStatus.SUCCESS, result.message
        assert any(_same_branch(s.q, q_true, group) for s in result.solutions)
        for s in result.solutions:
            assert np.abs(pin.log6(T.actInv(_fk(group, s.q))).np).max() < 1e-8
            assert group.within_limits(s.q)


def _generated_arm(seed: int) -> Robot:
    """A 6R of a closed-form family, every axis direction, offset and tool frame random.

    Even seeds: a spherical wrist after three general joints; odd: axes 2-4 parallel (each
    pointing either way), then two general ones.  Nobody tuned anything for these.
    """
    rng = np.random.default_rng(seed)

    def unit():
        v = rng.normal(size=3)
        return v / np.linalg.norm(v)
    point, points, axes = np.zeros(3), [], []
    if seed % 2 == 0:
        for _ in range(3):
            points.append(point.copy())
            axes.append(unit())
            point = point + rng.uniform(-0.4, 0.4, 3)
        for _ in range(3):  # through one wrist point
            axes.append(unit())
            points.append(point + axes[-1] * rng.uniform(-0.2, 0.2))
    else:
        points.append(point.copy())
        axes.append(unit())
        parallel = unit()
        for _ in range(3):
            point = point + rng.uniform(-0.4, 0.4, 3)
            points.append(point.copy())
            axes.append(parallel * rng.choice([-1.0, 1.0]))
        for _ in range(2):
            point = point + rng.uniform(-0.2, 0.2, 3)
            points.append(point.copy())
            axes.append(unit())
    return Robot.from_urdf(urdf_edits.world_axes_urdf(
        points, axes, points[-1] + rng.uniform(-0.1, 0.1, 3), rng.uniform(-3.0, 3.0, 3)))


@pytest.mark.parametrize("seed", range(8))
def test_generated_arms_have_every_branch(seed):
    """Each generated arm has its closed form; a target's own configuration is a branch."""
    robot = _generated_arm(seed)
    group = robot.group(base="base", tip="tool")
    frame_id = robot.frame_id("tool")
    assert chain.of(group, frame_id) is not None, chain.reason(group, frame_id)
    _own_branch_among_verified(group, 5, seed=seed)


def test_eaik_rows_of_an_axis_pointing_the_other_way():
    """UR5 with its elbow's axis turned: our kernel's arm, EAIK's rows (the proofs') right too."""
    robot = urdf_edits.turned("ur5", "elbow_joint")
    group = robot.group(base="base_link", tip="tool0")
    form = chain.of(group, robot.frame_id("tool0"))
    assert form is not None and form.kernel is not None
    for q_true, T in _targets(group, 10, seed=12):
        Q, ls = form.eaik(T.homogeneous)
        exact = np.asarray(Q)[~np.asarray(ls, dtype=bool)]
        assert any(_same_branch(q, q_true, group) for q in exact)
        for q in exact:
            assert np.abs(pin.log6(T.actInv(_fk(group, q))).np).max() < 1e-8


def test_base_and_tool_offsets():
    """A world placement of the base and a tool frame below the flange: the same answers."""
    text = robots.urdf_text("ur5")
    head = text.index(">", text.index("<robot")) + 1
    mount = ('<link name="stand"/><joint name="mount" type="fixed"><parent link="stand"/>'
             '<child link="world"/><origin xyz="0.4 -0.2 0.7" rpy="0.3 -0.2 1.1"/></joint>'
             '<link name="pen"/><joint name="pen_joint" type="fixed"><parent link="tool0"/>'
             '<child link="pen"/><origin xyz="0.02 0.01 0.15" rpy="0 0.4 0"/></joint>')
    robot = Robot.from_urdf(text[:head] + mount + text[head:])
    group = robot.group(base="stand", tip="pen")
    assert chain.of(group, robot.frame_id("pen")) is not None
    for q_true, T in _targets(group, 10, seed=13):
        result = solve(group, PoseTarget("pen", T), group.mid_configuration(),
                       solver="analytic", num_solutions=100)
        assert result.success and any(_same_branch(s.q, q_true, group)
                                      for s in result.solutions)


def _vendor_6r():
    manifest = REAL_URDFS / "manifest.json"
    if not manifest.is_file():
        return []
    return [e for e in json.loads(manifest.read_text()) if e.get("dof") == 6]


@pytest.mark.skipif(not (REAL_URDFS / "manifest.json").is_file(),
                    reason=f"{REAL_URDFS} is absent (vendor URDFs are not in the repository)")
@pytest.mark.parametrize("entry", _vendor_6r(), ids=lambda e: e["name"])
def test_vendor_6r_arms(entry):
    """Each vendor 6R arm: detected or not; when detected, exact on reachable poses."""
    srdf = REAL_URDFS / entry["srdf"] if entry.get("srdf") else None
    robot = Robot.from_urdf((REAL_URDFS / entry["file"]).read_text(),
                            srdf.read_text() if srdf and srdf.is_file() else None)
    group = robot.group(base=entry["base"], tip=entry["tip"])
    if chain.of(group, robot.frame_id(group.tip)) is None:
        pytest.skip(f"no closed form: {chain.reason(group, robot.frame_id(group.tip))}")
    for q_true, T in _targets(group, 15, seed=14):
        result = solve(group, PoseTarget(group.tip, T), group.mid_configuration(),
                       solver="analytic", num_solutions=100)
        assert result.success, result.message
        assert any(_same_branch(s.q, q_true, group) for s in result.solutions)
        for s in result.solutions:
            assert np.abs(pin.log6(T.actInv(_fk(group, s.q))).np).max() < 1e-8


def _alexander_left_leg():
    """Alexander's left leg, a chain EAIK solves (not our kernel), whose tangent cases EAIK
    flags least-squares: 8-14 % of random poses had their own configuration flagged."""
    path = robots.data_dir() / "alexander_description/urdf/alexander_v1.lowerBodyOnly.urdf"
    robot = Robot.from_urdf(path.read_text())
    root = next(f.name for f in robot.model.frames if f.type == pin.FrameType.BODY)
    group = robot.group(base=root, tip="LEFT_FOOT")
    closed = chain.of(group, robot.frame_id(group.tip))
    assert closed is not None and closed.kernel is None, chain.reason(group, robot.frame_id(
        group.tip))
    return group, closed


def test_rows_flagged_least_squares_that_meet_the_pose_are_exact():
    """Every pose made by FK has the configuration it came from among the exact rows."""
    group, closed = _alexander_left_leg()
    targets = _targets(group, 80, seed=21)
    for q_true, T in targets:
        Q, ls = closed.solve(T.homogeneous)
        exact = np.asarray(Q)[~np.asarray(ls, dtype=bool)]
        assert len(exact) and any(_same_branch(q, q_true, group) for q in exact)
        result = solve(group, PoseTarget(group.tip, T), group.mid_configuration(),
                       solver="analytic", num_solutions=100)
        assert result.success, result.message
        assert any(_same_branch(s.q, q_true, group) for s in result.solutions)
    rows, flags = closed.solve_many(np.array([T.homogeneous for _, T in targets]))
    for (q_true, _), Q, ls in zip(targets, rows, flags):
        assert any(_same_branch(q, q_true, group) for q in Q[~ls])


def test_a_flagged_row_near_the_pose_is_no_proof(monkeypatch):
    """With the flags left as EAIK gives them, the proof still does not answer NO_SOLUTION.

    The pose (completeness fuzz, seed 13, problem 3934) has one branch within the limits,
    the one it came from, which EAIK flags least-squares; its other exact branches leave the
    limits.  The proof said "outside the joint limits" until it measured the flagged rows.
    """
    group, _ = _alexander_left_leg()
    monkeypatch.setattr(chain, "EXACT_RESIDUAL", -1.0)  # EAIK's flags as they come
    q_true = np.array([0.80745531, 1.00569114, 0.22593636, 2.19450284, -0.74164269,
                       0.26510798])
    seed = np.array([0.26179939, 0.34906707, -0.916296, 1.22260314, -0.2618005, 0.0])
    result = solve(group, PoseTarget(group.tip, _fk(group, q_true)), seed, timeout_s=0.5)
    assert result.status is IKStatus.SUCCESS, result.message


def test_batch_rows_answer_as_solve_does():
    """The batch's closed-form pass: each row's q and status are solve()'s."""
    _, group = robots.load_group("ur5")
    poses = [T.homogeneous for _, T in _targets(group, 40, seed=15)]
    far = poses[0].copy()
    far[:3, 3] *= 3.0 / np.linalg.norm(far[:3, 3])
    poses.append(far)
    batch_equals_solve("ur5", group, poses)


def batch_equals_solve(arm, group, poses):
    """Each row of a batch of ``poses`` (its last one unreachable): solve()'s answer.

    One attempt per row, with a budget no loaded machine cuts (rows the closed form
    leaves to the search then get the same attempt in both).
    """
    from ros2_ik.core.maps.batch import STATUS_CODES, GroupSpec, solve_batch
    result = solve_batch(GroupSpec(arm=arm), np.array(poses), max_attempts=1, batch_seed=3,
                         timeout_s=1.0)
    for k, T in enumerate(poses):
        one = solve(group, PoseTarget(group.tip, pin.SE3(T), group.base),
                    group.mid_configuration(), max_attempts=1, timeout_s=1.0,
                    random_seed=int(result.random_seed[k]))
        assert STATUS_CODES[result.status[k]] is one.status
        assert np.array_equal(result.q[k], one.q)
    assert STATUS_CODES[result.status[-1]] is IKStatus.NO_SOLUTION


def test_solve_many_is_solve_per_target(arm):
    """One batched call gives each target's rows and flags, padded as least-squares rows."""
    _, group = arm
    closed = chain.of(group, group.robot.frame_id(group.tip))
    poses = [T.homogeneous for _, T in _targets(group, 30, seed=4)]
    far = poses[0].copy()
    far[:3, 3] *= 5.0 / np.linalg.norm(far[:3, 3])
    poses.append(far)  # least-squares rows only
    Q, ls = closed.solve_many(np.array(poses))
    widths = set()
    for k, H in enumerate(poses):
        rows, flags = closed.solve(H)
        widths.add(len(rows))
        assert np.array_equal(Q[k, :len(rows)], rows)
        assert np.array_equal(ls[k, :len(rows)], flags)
        assert ls[k, len(rows):].all()
    assert Q.shape == (len(poses), max(widths), group.n)
    empty = closed.solve_many(np.zeros((0, 4, 4)))
    assert empty[0].shape == (0, 0, group.n) and empty[1].shape == (0, 0)
