"""Closed forms of five-joint arms (core/closed_form/chain.py with five rotations).

A 5R arm reaches a five-dimensional set of poses.  On it (targets made by forward
kinematics of configurations within the limits) the closed form answers exactly, every
branch checked by pinocchio's forward kinematics on the full model; off it (a reachable
position with another orientation) NO_SOLUTION with the reason, checked against an
independent search (lm without the closed form finds no solution either).
"""
import json
import os
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
from test_closed_form import NumericLM, _same_branch, batch_equals_solve, exact_and_numeric

from ros2_ik.core.closed_form import chain
from ros2_ik.core.model import robots
from ros2_ik.core.model.robot import Robot
from ros2_ik.core.pose import PoseTarget
from ros2_ik.core.problem import Problem
from ros2_ik.core.result import IKStatus
from ros2_ik.core.solve import solve
from ros2_ik.core.solvers.options import SolveOptions

pytest.importorskip("eaik.pybindings.EAIK", reason="eaik is not installed (make setup)")

REAL_URDFS = Path(os.environ.get("ROS2_IK_REAL_URDFS", "/work/shared/real_urdfs"))


def _vendor_5r():
    manifest = REAL_URDFS / "manifest.json"
    if not manifest.is_file():
        return []
    return [e for e in json.loads(manifest.read_text()) if e.get("dof") == 5]


def _load(name):
    if name == "so101":
        return robots.load_group("so101")[1]
    entry = next(e for e in _vendor_5r() if e["name"] == name)
    robot = Robot.from_urdf((REAL_URDFS / entry["file"]).read_text())
    return robot.group(base=entry["base"], tip=entry["tip"])


ARMS = ["so101"] + [e["name"] for e in _vendor_5r()]


@pytest.fixture(scope="module", params=ARMS)
def group(request):
    return _load(request.param)


def _targets(group, count, seed):
    rng = np.random.default_rng(seed)
    return [(q, group.fk(q, group.tip))
            for q in (group.random_configuration(rng) for _ in range(count))]


def test_detected_from_kinematics(group):
    closed = chain.of(group, group.robot.frame_id(group.tip))
    assert closed is not None, chain.reason(group, group.robot.frame_id(group.tip))
    assert closed.family.startswith("5R")


def test_poses_on_the_manifold_answered_exactly(group):
    for q_true, T in _targets(group, 25, seed=1):
        result = solve(group, PoseTarget(group.tip, T), group.mid_configuration(),
                       solver="analytic", num_solutions=100)
        assert result.status is IKStatus.SUCCESS, result.message
        assert result.message.startswith("closed form (5R")
        assert any(_same_branch(s.q, q_true, group) for s in result.solutions)
        for s in result.solutions:
            assert np.abs(pin.log6(T.actInv(group.fk(s.q, group.tip))).np).max() < 1e-8
            assert group.within_limits(s.q)


def test_lm_answers_from_the_closed_form_by_default(group):
    q_true, T = _targets(group, 1, seed=2)[0]
    result = solve(group, PoseTarget(group.tip, T), q_true)
    assert result.success and result.solver == "lm"
    assert result.message.startswith("closed form")
    assert np.abs(result.q - q_true).max() < 1e-6  # the seed is a solution: itself


def test_branches_equal_a_numeric_search(group):
    for _, T in _targets(group, 2, seed=3):
        exact, numeric = exact_and_numeric(group, T, 400)
        for e in exact.solutions:  # several numeric ones may lie within tolerance of one
            assert any(_same_branch(s.q, e.q, group) for s in numeric.solutions)


def test_off_the_manifold_no_solution_with_the_reason(group):
    """A reachable position with a random orientation: proven, and no search finds one."""
    rng = np.random.default_rng(4)
    proven = 0
    for _, T in _targets(group, 12, seed=5):
        R = pin.exp3(rng.normal(size=3))
        off = pin.SE3(R @ T.rotation, T.translation)
        result = solve(group, PoseTarget(group.tip, off), group.mid_configuration(),
                       timeout_s=0.05)
        assert result.status is IKStatus.NO_SOLUTION
        if "5-dimensional set of poses" in result.message:
            proven += 1
            assert result.iterations == 0, result.message  # no search ran
            assert group.within_limits(result.q)
            numeric = NumericLM().solve(Problem(group, PoseTarget(group.tip, off)),
                                        group.mid_configuration(),
                                        SolveOptions(timeout_s=0.5, max_attempts=50))
            assert not numeric.success
    assert proven >= 8


def test_near_the_manifold_never_no_solution(group):
    """On the manifold moved by half a position tolerance: never NO_SOLUTION."""
    rng = np.random.default_rng(6)
    for _, T in _targets(group, 25, seed=7):
        nudge = rng.normal(size=3)
        near = pin.SE3(T.rotation, T.translation + 0.5e-4 * nudge / np.linalg.norm(nudge))
        result = solve(group, PoseTarget(group.tip, near), group.mid_configuration(),
                       timeout_s=0.1)
        assert result.success, result.message


def test_batch_rows_answer_as_solve_does():
    group = _load("so101")
    poses = [T.homogeneous for _, T in _targets(group, 30, seed=8)]
    off = poses[0].copy()
    off[:3, :3] = pin.exp3(np.array([0.0, 0.0, 1.5])) @ off[:3, :3]
    poses.append(off)
    batch_equals_solve("so101", group, poses)
