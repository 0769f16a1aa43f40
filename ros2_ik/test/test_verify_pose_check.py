"""``verify.check`` on a pose alone: errors, acceptance and reasons against geometry here.

A pose target without constraints is checked by forward kinematics of the full model and
the frame's placement alone (no constraint measures); its figures and its decision must be
those computed here from pinocchio's placement and the limits, and those of the same
target with a constraint that always holds.
"""
from __future__ import annotations

import math

import numpy as np
import pinocchio as pin
import pytest

from ros2_ik.core import constraints as C
from ros2_ik.core.model.robots import load_group
from ros2_ik.core.pose import PoseTarget
from ros2_ik.core.verify import DEFAULT_TOLERANCE, check


def _independent(group, target: PoseTarget, q: np.ndarray):
    """(position error [m], orientation error [rad], within limits) from pinocchio here."""
    model = group.robot.model
    data = model.createData()
    pin.framesForwardKinematics(model, data, group.to_full_q(q))
    M = data.oMf[model.getFrameId(target.frame)]
    T = target.T_ref_target
    pos = float(np.linalg.norm(T.rotation.T @ (M.translation - T.translation)))
    ori = float(np.linalg.norm(pin.log3(T.rotation.T @ M.rotation)))
    inside = bool(np.all(q >= group.lower) and np.all(q <= group.upper))
    return pos, ori, inside


@pytest.mark.parametrize("arm", ["panda", "ur5"])
def test_pose_alone_is_checked_as_the_geometry_and_the_general_branch(arm):
    group = load_group(arm)[1]
    model = group.robot.model
    box = C.PositionConstraint(model, group.base, [-9, -9, -9], [9, 9, 9], group.tip,
                               [0, 0, 0])  # always holds: the general branch
    data = model.createData()
    rng = np.random.default_rng(3)
    seen = set()
    for k in range(60):
        q_target = group.random_configuration(rng)
        target = PoseTarget(group.tip, group.fk(q_target, group.tip),
                            position_tolerance_m=1e-3, orientation_tolerance_rad=1e-2)
        pose = target.compile(group)
        # Near the target, far from it, and outside the limits.
        q = q_target + rng.normal(0.0, [1e-5, 1e-2, 1e-1][k % 3], group.n)
        if k % 4 == 0:
            q[k % group.n] = group.upper[k % group.n] + 0.05
        ok, pos, ori, reason, viol = check(group, pose, q, (), data, DEFAULT_TOLERANCE)
        want_pos, want_ori, inside = _independent(group, target, q)
        assert pos == pytest.approx(want_pos, abs=1e-12)
        assert ori == pytest.approx(want_ori, abs=1e-9)
        want_ok = want_pos <= 1e-3 and want_ori <= 1e-2 and inside
        assert ok == want_ok and viol == []
        assert (reason == "") == want_ok
        assert ("outside joint limits" in reason) == (not inside)
        assert ("above tolerance" in reason) == (not (want_pos <= 1e-3 and want_ori <= 1e-2))
        general = check(group, pose, q, (box,), data, DEFAULT_TOLERANCE)
        assert general[:4] == (ok, pos, ori, reason) and general[4] == []
        assert check(group, pose, q, (), data, DEFAULT_TOLERANCE, q.tolist())[:4] == \
            (ok, pos, ori, reason)
        seen.add((ok, inside))
    assert seen == {(True, True), (False, True), (False, False)}


def test_a_non_finite_configuration_is_rejected():
    group = load_group("panda")[1]
    pose = PoseTarget(group.tip, group.fk(group.mid_configuration(), group.tip)).compile(group)
    q = group.mid_configuration()
    q[2] = math.nan
    ok, _, _, reason, _ = check(group, pose, q, (), group.robot.model.createData(),
                                DEFAULT_TOLERANCE)
    assert not ok and "outside joint limits" in reason
