"""Our compiled 6R closed form (core/closed_form/six_r.py, subproblems.py) against EAIK.

On every 6R arm of example-robot-data and of the vendor folder that has a closed form:
the kernel covers it, finds the same exact branches as EAIK on random configurations,
each within 1e-9 of its target by pinocchio's forward kinematics, the configuration the
target came from among them.  The subproblems are checked on their own equations.
"""
import json
import math
import os
from pathlib import Path

import numpy as np
import pytest

from ros2_ik.core.closed_form import chain, six_r
from ros2_ik.core.kinematics import jit  # noqa: F401 (loads numba: the kernels compile)
from ros2_ik.core.closed_form import subproblems as sp
from ros2_ik.core.model import robots
from ros2_ik.core.model.robot import Robot

pytest.importorskip("eaik.pybindings.EAIK", reason="eaik is not installed (make setup)")

REAL_URDFS = Path(os.environ.get("ROS2_IK_REAL_URDFS", "/work/shared/real_urdfs"))
SAMPLES = 25


def _six_joint_arms():
    """``(name, loader)`` of every 6-joint arm of both sources (vendor ones when present)."""
    out = [(name, lambda name=name: robots.load_group(name)[1]) for name in robots.ARMS]
    manifest = REAL_URDFS / "manifest.json"
    if manifest.is_file():
        for e in json.loads(manifest.read_text()):
            if e.get("dof") == 6:
                out.append((e["name"], lambda e=e: _vendor(e)))
    return out


def _vendor(entry):
    srdf = REAL_URDFS / entry["srdf"] if entry.get("srdf") else None
    robot = Robot.from_urdf((REAL_URDFS / entry["file"]).read_text(),
                            srdf.read_text() if srdf and srdf.is_file() else None)
    return robot.group(base=entry["base"], tip=entry["tip"])


def _has(rows, q, tol=1e-6):
    if not len(rows):
        return False
    gap = np.abs(np.remainder(np.asarray(rows) - q + math.pi, 2 * math.pi) - math.pi)
    return bool(gap.max(axis=1).min() <= tol)


@pytest.mark.parametrize("name, load", _six_joint_arms(), ids=lambda v: v if
                         isinstance(v, str) else "")
def test_kernel_matches_eaik_on_every_closed_form_arm(name, load):
    """Same exact branches as EAIK, each verified by pinocchio, the known one among them."""
    group = load()
    if group.n != 6:
        pytest.skip(f"{group.n} joints")
    fid = group.robot.frame_id(group.tip)
    closed = chain.of(group, fid)
    if closed is None:
        pytest.skip(f"no closed form: {chain.reason(group, fid)}")
    assert closed.kernel is not None, f"{closed.family} is not covered by the kernel"
    rng = np.random.default_rng(7)
    qs = rng.uniform(-math.pi, math.pi, (SAMPLES, 6))
    T = np.array([group.fk(q, group.tip).homogeneous for q in qs])
    Q, ls = closed.solve_many(T)
    for k in range(SAMPLES):
        ours = Q[k][~ls[k]]
        rows, flags = closed.eaik(T[k])
        theirs = np.asarray(rows)[~flags]
        assert all(_has(ours, q) for q in theirs) and all(_has(theirs, q) for q in ours)
        assert _has(ours, qs[k])
        for q in ours:
            assert np.abs(group.fk(q, group.tip).homogeneous - T[k]).max() < 1e-9


def test_a_chain_outside_the_families_is_left_to_eaik():
    """Axis 3 tilted off axis 2: the shoulder family; joint 2 off axis 1 too: none here.

    Kinova's axes 1 and 2 meet and its wrist is spherical: tilted 1e-3 rad, axes 2 and 3
    are no longer parallel (family 1) but the shoulder and the wrist remain (family 3);
    with joint 2's axis moved 1 cm off joint 1's, no family fits.
    """
    group = robots.load_group("kinova")[1]
    fid = group.robot.frame_id(group.tip)
    axes = chain._axes(group.robot.model, group.joint_ids)
    H, P, R = chain._product_of_exponentials(group, fid, axes)
    assert six_r.geometry(H, P, R)[0] == six_r.SPHERICAL_TWO_PARALLEL
    tilted = H.copy()
    tilted[2] = sp_rotate(H[2], np.cross(H[1], H[0]), 1e-3)
    assert six_r.geometry(tilted, P, R)[0] == six_r.FIRST_TWO_INTERSECTING
    moved = P.copy()
    off = np.cross(H[0], H[1])
    moved[1] += 0.01 * off / np.linalg.norm(off)
    assert six_r.geometry(tilted, moved, R) is None


def sp_rotate(v, axis, angle):
    """``v`` rotated by ``angle`` [rad] about ``axis`` (numpy, for the tests)."""
    axis = axis / np.linalg.norm(axis)
    return np.array(sp.rot(tuple(axis), angle, tuple(v)))


def test_subproblems_meet_their_equations():
    """sp1 turns p1 onto p2; sp3 and sp4 angles meet the distance and the dot product."""
    rng = np.random.default_rng(3)
    for _ in range(200):
        k = rng.normal(size=3)
        k /= np.linalg.norm(k)
        p, h = rng.normal(size=3), rng.normal(size=3)
        theta = rng.uniform(-math.pi, math.pi)
        turned = sp_rotate(p, k, theta)
        assert abs(sp.sp1(tuple(k), tuple(p), tuple(turned)) - theta) < 1e-9
        a, b, exact = sp.sp4(tuple(h), tuple(k), tuple(p), float(h @ turned))
        assert exact and min(abs(sp.wrap(a - theta)), abs(sp.wrap(b - theta))) < 1e-6
        for x in (a, b):
            assert abs(h @ sp_rotate(p, k, x) - h @ turned) < 1e-9
        other = rng.normal(size=3)
        d = float(np.linalg.norm(turned + other))
        for x in sp.sp3(tuple(k), tuple(p), tuple(other), d)[:2]:
            assert abs(np.linalg.norm(sp_rotate(p, k, x) + other) - d) < 1e-9
        assert not sp.sp4(tuple(h), tuple(k), tuple(p), 10.0 + np.linalg.norm(h) *
                          np.linalg.norm(p))[2]
        assert -math.pi < sp.wrap(theta + 2 * math.pi * rng.integers(-3, 4)) <= math.pi


@pytest.mark.parametrize("name", ["ur5", "kinova"])
def test_edges_of_the_workspace_are_exact(name):
    """Elbow straight, wrist singular, all zero: exact branches, each verified by pinocchio.

    At such a pose a subproblem sits on its tangent; rounding must not flag it out of reach
    (EAIK finds no branch of kinova's zero configuration).
    """
    group = robots.load_group(name)[1]
    closed = chain.of(group, group.robot.frame_id(group.tip))
    rng = np.random.default_rng(5)
    for joints in ((2,), (1, 2), (4,), tuple(range(6))):
        for _ in range(10):
            q = rng.uniform(-math.pi, math.pi, 6)
            q[list(joints)] = 0.0
            T = group.fk(q, group.tip).homogeneous
            rows, flags = closed.solve(T)
            exact = rows[~flags]
            assert len(exact), (joints, q)
            for row in exact:
                assert np.abs(group.fk(row, group.tip).homogeneous - T).max() < 1e-7


def test_eaik_rows_padded_when_a_target_has_none():
    """EAIK returns a flat empty array for a target without rows: padded as least squares."""
    flags = [np.array([False, True]), np.zeros(0, dtype=bool)]
    Q, ls = chain._padded([np.ones((2, 6)), np.zeros(0)], flags, 6)
    assert Q.shape == (2, 2, 6) and ls.shape == (2, 2)
    assert (Q[0] == 1.0).all() and list(ls[0]) == [False, True] and ls[1].all()
