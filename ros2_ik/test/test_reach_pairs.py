"""Bounds on the distance between two frames, and from a frame to the CoM (issue 47).

Sound everywhere, checked against pinocchio FK and ``centerOfMass`` on the full model,
outside the bounds' code: for random configurations within the limits, the distance
between any two frames is within :func:`frame_distance_bound` and the CoM's distance to a
frame within :func:`com_distance_bound`, on floating (talos, solo12) and planar (pr2)
bases and on random arms with prismatic joints and unaligned axes.  A rigid pair's bound
is its one distance.
"""
import sys
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

from ros2_ik.core import Robot
from ros2_ik.core.kinematics.reach import com_distance_bound, frame_distance_bound
from wholebody_groups import pr2, solo, talos

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from random_arms import random_arm  # noqa: E402

SLACK = 1e-9


def _check(group, pairs, com_frames, rng, samples):
    """Every sampled distance within its bound; returns the largest distance / bound."""
    model = group.robot.model
    data = model.createData()
    bounds = {p: frame_distance_bound(group, *p) for p in pairs}
    com = {f: com_distance_bound(group, f) for f in com_frames}
    assert all(b is not None for b in bounds.values()) and all(
        b is not None for b in com.values())
    worst = 0.0
    for _ in range(samples):
        q = group.to_full_q(group.random_configuration(rng))
        pin.framesForwardKinematics(model, data, q)
        c = pin.centerOfMass(model, data, q)
        for (a, b), bound in bounds.items():
            d = np.linalg.norm(data.oMf[a].translation - data.oMf[b].translation)
            assert d <= bound.radius_m * (1 + SLACK) + SLACK, (a, b, d, bound)
            worst = max(worst, d / max(bound.radius_m, 1e-12))
        for f, bound in com.items():
            d = np.linalg.norm(c - data.oMf[f].translation)
            assert d <= bound * (1 + SLACK) + SLACK, (f, d, bound)
    return worst


@pytest.mark.parametrize("make", [talos, solo, pr2], ids=["talos", "solo12", "pr2"])
def test_bounds_hold_on_whole_body_groups(make):
    group = make()
    model = group.robot.model
    rng = np.random.default_rng(7)
    bodies = [i for i, f in enumerate(model.frames) if f.type == pin.FrameType.BODY]
    pairs = [tuple(int(x) for x in rng.choice(bodies, 2, replace=False)) for _ in range(30)]
    worst = _check(group, pairs, bodies[::max(1, len(bodies) // 6)], rng, 150)
    assert worst > 0.5  # not vacuous: some sampled pair comes near its bound


@pytest.mark.parametrize("seed", range(200, 206))
def test_bounds_hold_on_random_arms(seed):
    """Prismatic joints and unaligned axes: the frames along the chain, pairwise."""
    arm = random_arm(seed, mixed=True)
    group = Robot.from_urdf(arm.urdf).group(base=arm.base, tip=arm.tip)
    model = group.robot.model
    chain = [i for i, f in enumerate(model.frames) if f.type == pin.FrameType.BODY]
    pairs = [(a, b) for a in chain for b in chain if a < b]
    _check(group, pairs, chain[-1:], np.random.default_rng(seed), 200)


def test_a_rigid_pair_is_its_distance_and_a_frame_with_itself_zero():
    group = talos()
    model = group.robot.model
    data = model.createData()
    pin.framesForwardKinematics(model, data, group.q_full_locked)
    sole = model.getFrameId("left_sole_link")
    ankle = model.getFrameId("leg_left_6_link")
    bound = frame_distance_bound(group, sole, ankle)
    rigid = np.linalg.norm(data.oMf[sole].translation - data.oMf[ankle].translation)
    assert bound.radius_m == pytest.approx(rigid, abs=1e-12)
    assert frame_distance_bound(group, sole, sole).radius_m == pytest.approx(0.0, abs=1e-15)
    feet = frame_distance_bound(group, sole, model.getFrameId("right_sole_link"))
    assert feet.via == "root_joint" and 0.3 < feet.radius_m < 3.0


def test_no_bound_across_a_floating_base():
    """A frame fixed in the world and one on a free-flying robot: any distance."""
    group = talos()
    model = group.robot.model
    world = model.getFrameId("universe")
    assert frame_distance_bound(group, world, model.getFrameId("left_sole_link")) is None


def _sixty_rounds(A: np.ndarray, b: np.ndarray) -> float:
    """The summed length after 60 rounds of reweighted least squares, none skipped.

    ``reach._pivots`` as it was before it stopped early (``einsum`` on the (m, 3, k)
    segments), the shortest length met: the reference of its stopping rule.
    """
    def length(s):
        return float(np.linalg.norm(np.einsum("mik,k->mi", A, s) + b, axis=1).sum())
    k = A.shape[2]
    s, shortest = np.zeros(k), length(np.zeros(k))
    for _ in range(60):
        w = 1.0 / np.maximum(np.linalg.norm(np.einsum("mik,k->mi", A, s) + b, axis=1), 1e-9)
        H = np.einsum("m,mik,mil->kl", w, A, A) + 1e-12 * np.eye(k)
        s = np.linalg.solve(H, -np.einsum("m,mik,mi->k", w, A, b))
        shortest = min(shortest, length(s))
    return shortest


def test_pivots_stop_early_without_loosening_the_bounds(monkeypatch):
    """Every pair bound of talos and pr2 is as short as 60 full rounds make it (1e-9 m)."""
    from ros2_ik.core.kinematics import reach
    problems, real = [], reach._pivots

    def recorded(A, b, rounds=60):
        problems.append((A, b))
        return real(A, b, rounds)
    monkeypatch.setattr(reach, "_pivots", recorded)
    for make in (talos, pr2):
        group = make()
        model = group.robot.model
        bodies = [i for i, f in enumerate(model.frames) if f.type == pin.FrameType.BODY]
        rng = np.random.default_rng(3)
        for _ in range(25):
            reach._pair(group, *(int(x) for x in rng.choice(bodies, 2, replace=False)))
    assert len(problems) > 20
    for A, b in problems:
        assert reach._length(A, b, real(A, b)) <= _sixty_rounds(A, b) + 1e-9


def test_a_whole_body_group_held_beside_its_chain_shares_its_bounds():
    """PR2's base, torso and right arm, held with the left arm elsewhere: the same bounds.

    A collision-checked request holds the left arm where joint_states put it, and each new
    reading is a held group: its bounds are not built again.
    """
    from ros2_ik.core.kinematics import reach
    group = pr2()
    model = group.robot.model
    tool, base = model.getFrameId("r_gripper_tool_frame"), model.getFrameId("base_link")
    held = group.held_at({"l_shoulder_pan_joint": 0.4, "l_elbow_flex_joint": -0.7})
    assert held.chain_owner(tool) is group
    assert frame_distance_bound(held, tool, base) is frame_distance_bound(group, tool, base)
    assert reach.base_distance_bound(held, tool) == reach.base_distance_bound(group, tool)
    assert not reach._PAIRS.table(held) and not reach._BASE.table(held)
    # A frame the changed joints move: a bound of the held group's own.
    hand = model.getFrameId("l_gripper_tool_frame")
    assert frame_distance_bound(held, tool, hand) is not frame_distance_bound(group, tool, hand)
