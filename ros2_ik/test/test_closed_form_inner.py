"""The shoulder-and-wrist 6R family and a 7R arm held at its upper-arm roll (compiled).

:data:`.six_r.FIRST_TWO_INTERSECTING` against EAIK on generated chains, and
:mod:`.closed_form.inner` (the six others of an SRS arm at any value of the roll, one
compiled call) on generated SRS arms with random axes, lengths and tool frames.  Every
branch is checked by pinocchio's forward kinematics on the full model, and the
configuration a target came from must be among them.
"""
import math

import numpy as np
import pinocchio as pin
import pytest
import urdf_edits

from ros2_ik.core.closed_form import chain, inner, six_r, sweep
from ros2_ik.core.kinematics import jit  # noqa: F401 (loads numba: the kernels compile)
from ros2_ik.core.model.robot import Robot
from ros2_ik.core.pose import PoseTarget
from ros2_ik.core.solve import solve

pytest.importorskip("eaik.pybindings.EAIK", reason="eaik is not installed (make setup)")


def _unit(rng):
    v = rng.normal(size=3)
    return v / np.linalg.norm(v)


def _through(rng, point, spread=0.05):
    """A point on a random line through ``point``: the joint's origin along its axis."""
    return np.asarray(point) + rng.uniform(-spread, spread) * _unit(rng)


def _srs_arm(rng, roll: bool = True):
    """A random arm: axes 1, 2 meet (the shoulder), axes 5-7 meet (the wrist).

    ``roll``: seven joints, the third between shoulder and elbow; else the six of a
    :data:`FIRST_TWO_INTERSECTING` chain (the same without the roll).
    """
    shoulder = np.array([0.0, 0.0, rng.uniform(0.1, 0.3)])
    elbow = shoulder + rng.uniform(0.25, 0.45) * _unit(rng)
    wrist = elbow + rng.uniform(0.25, 0.45) * _unit(rng)
    a1, a2, a5, a6, a7 = (_unit(rng) for _ in range(5))
    axes = [a1, a2] + ([_unit(rng)] if roll else []) + [_unit(rng), a5, a6, a7]
    points = [shoulder - 0.05 * a1, shoulder + 0.03 * a2]
    if roll:
        points.append(0.5 * (shoulder + elbow) + 0.02 * _unit(rng))
    points += [elbow, wrist - 0.04 * a5, wrist + 0.02 * a6, wrist]
    # each point on its own axis line (the lines meet where the structure says)
    tool = wrist + rng.uniform(0.05, 0.2) * _unit(rng)
    rpy = rng.uniform(-math.pi, math.pi, 3)
    robot = Robot.from_urdf(urdf_edits.world_axes_urdf(points, axes, tool, rpy))
    return robot.group(base="base", tip="tool")


def _configurations(group, rng, count):
    return [rng.uniform(-3.0, 3.0, group.n) for _ in range(count)]


def _has(rows, q, tol=1e-6):
    gap = np.abs(np.remainder(np.asarray(rows) - q + math.pi, 2 * math.pi) - math.pi)
    return len(rows) > 0 and bool(gap.max(axis=1).min() <= tol)


def _limits(lo: float, hi: float):
    """Read-only limits (7,), as a group's are (the compiled entry's types)."""
    out = np.full(7, lo), np.full(7, hi)
    for limit in out:
        limit.setflags(write=False)
    return out


def _form(group):
    fid = group.robot.frame_id("tool")
    return chain._product_of_exponentials(group, fid, chain._axes(group.robot.model,
                                                                  group.joint_ids))


@pytest.mark.parametrize("arm", range(6))
def test_the_family_matches_eaik(arm):
    """Shoulder and spherical wrist, axes 2 and 3 apart: the kernel's branches are EAIK's."""
    rng = np.random.default_rng(40 + arm)
    group = _srs_arm(rng, roll=False)
    H, P, R = _form(group)
    found = six_r.geometry(H, P, R)
    assert found is not None and found[0] == six_r.FIRST_TWO_INTERSECTING
    closed = chain.of(group, group.robot.frame_id("tool"))
    assert closed is not None and closed.kernel[0] == six_r.FIRST_TWO_INTERSECTING
    for q in _configurations(group, rng, 15):
        T = group.fk(q, "tool").homogeneous
        rows, flags = closed.solve(T)
        ours = np.asarray(rows)[~np.asarray(flags, dtype=bool)]
        theirs_rows, theirs_flags = closed.eaik(T)
        theirs = np.asarray(theirs_rows)[~np.asarray(theirs_flags, dtype=bool)]
        assert _has(ours, q)
        assert all(_has(ours, t) for t in theirs) and all(_has(theirs, o) for o in ours)
        for row in ours:
            assert np.abs(group.fk(row, "tool").homogeneous - T).max() < 1e-9


def test_a_chain_without_a_shoulder_has_no_layout():
    """Axis 2 moved off axis 1 (1 cm): no meeting point, no geometry of this family."""
    rng = np.random.default_rng(50)
    group = _srs_arm(rng, roll=False)
    H, P, R = _form(group)
    assert six_r.geometry(H, P, R)[0] == six_r.FIRST_TWO_INTERSECTING
    moved = P.copy()
    moved[1] += 0.01 * np.cross(H[0], H[1]) / np.linalg.norm(np.cross(H[0], H[1]))
    assert six_r.geometry(H, moved, R) is None


@pytest.mark.parametrize("arm", range(6))
def test_the_roll_held_anywhere_gives_every_branch(arm):
    """A generated SRS arm held at its roll: the known configuration among the branches."""
    rng = np.random.default_rng(60 + arm)
    group = _srs_arm(rng)
    H, P, R = _form(group)
    found = inner.layout(H, P, R, 2)
    assert found is not None and inner.layout(H, P, R, 3) is not None  # roll or elbow
    for joint in (0, 1, 4, 5, 6):  # an end, or the shoulder or wrist split by the joint
        assert inner.layout(H, P, R, joint) is None
    lower, upper = _limits(-np.inf, np.inf)
    for q in _configurations(group, rng, 25):
        T = group.fk(q, "tool").homogeneous
        rows = inner.branches_at(found, float(q[2]), T, q, lower, upper, 1e-9).q
        assert _has(rows, q)
        for row in rows:
            assert row[2] == q[2]
            assert np.abs(group.fk(row, "tool").homogeneous - T).max() < 1e-9


def test_an_unreachable_value_has_no_branch():
    """A target beyond the six's reach at that value: no branch, and no exception."""
    group = _srs_arm(np.random.default_rng(70))
    H, P, R = _form(group)
    found = inner.layout(H, P, R, 2)
    T = group.fk(np.zeros(7), "tool").homogeneous
    T[:3, 3] += 5.0
    lower, upper = _limits(-3.0, 3.0)
    branches = inner.branches_at(found, 0.3, T, np.zeros(7), lower, upper, 1e-2)
    assert len(branches.q) == 0 and branches.exact == 0


def test_the_swept_roll_is_compiled_and_answers_exactly():
    """lm and analytic on an SRS arm, seeds anywhere: the sweep runs the compiled form.

    Detection keeps the layout (it passed the self-test).  lm's answers the sweep gives
    (after the seed's attempt) and every analytic answer hold the roll at a value the
    sweep tried and meet the pose exactly (pinocchio), within the limits; analytic's
    solutions are distinct.
    """
    group = urdf_edits.srs_arm()
    found = sweep.of(group, group.robot.frame_id("tool"))
    assert found.cheap and found.joint == 2 and found.inner is not None
    rng = np.random.default_rng(16)
    swept = 0
    for k in range(40):
        seed = rng.uniform(-2.5, 2.5, 7)
        T = group.fk(rng.uniform(-2.5, 2.5, 7), "tool")
        values = found.values(float(seed[2]), T.homogeneous)
        for solver, count in (("lm", 1), ("analytic", 4)):
            result = solve(group, PoseTarget("tool", T), seed, solver, 0.5, random_seed=k,
                           num_solutions=count)
            assert result.success, result.message
            exact = solver == "analytic" or "swept" in result.message
            swept += solver == "lm" and exact
            for s in result.solutions:
                M = group.fk(s.q, "tool")
                if exact:
                    assert np.abs(M.homogeneous - T.homogeneous).max() < 1e-9
                else:  # the search's tolerances
                    assert np.linalg.norm(M.translation - T.translation) <= 1e-4
                    assert np.linalg.norm(pin.log3(T.rotation.T @ M.rotation)) <= 1e-3
                assert group.within_limits(s.q)
                assert not exact or min(abs(s.q[2] - v) for v in values) < 1e-12
            qs = np.array([s.q for s in result.solutions])
            assert all(np.abs(qs[i] - qs[j]).max() > 1e-2 for i in range(len(qs))
                       for j in range(i))
    assert swept >= 1, swept
