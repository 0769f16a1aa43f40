"""Tight problems (issue 48): a tool axis within 2 deg, the tip within 2 mm of a point.

A distance or an angle is one row, a norm, flat in the directions that turn its vector;
the LM step adds the curvature of the vector excess (``bend``).  Checked here: ``bend``
against finite differences of the turning direction (independent pinocchio FK), and the
vendor-arm problems lm once answered NO_SOLUTION to (``data/tight_problems.json``, from
``bench/completeness.py``'s tight families) solved in a few attempts, each answer checked
with pinocchio FK on the full model.  The vendor URDFs are read from
``../shared/real_urdfs`` (skipped when absent), never copied.
"""
import json
import math
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

from ros2_ik.core import constraints as C
from ros2_ik.core import Robot, robots
from ros2_ik.core.problem import Problem
from ros2_ik.core.result import IKStatus
from ros2_ik.core.solve import solve

DATA = Path(__file__).resolve().parent / "data" / "tight_problems.json"
VENDOR = next((p / "shared" / "real_urdfs" for p in Path(__file__).resolve().parents
               if (p / "shared" / "real_urdfs" / "manifest.json").exists()), None)
TOL = 1e-4


def _world(model, data, group, q):
    pin.framesForwardKinematics(model, data, group.to_full_q(q))
    return data.oMf


def _fd(f, q, h=1e-6):
    """Central differences of ``f`` (k,) at group vector ``q``: (k, n)."""
    cols = []
    for j in range(q.size):
        dq = np.zeros_like(q)
        dq[j] = h
        cols.append((f(q + dq) - f(q - dq)) / (2 * h))
    return np.stack(cols, axis=1)


def test_bend_rows_are_the_turn_of_the_direction():
    """Distances: d(d / |d|)/dq; angle: the azimuth of b around a, d(phi)/dq."""
    _, group = robots.load_group("ur5")
    model = group.robot.model
    data = model.createData()
    root, tip = model.frames[1].name, group.tip
    rng = np.random.default_rng(4)
    p_point = np.array([0.3, -0.2, 0.4])
    n_line = np.array([0.0, 0.6, 0.8])
    a_A, b_B = np.array([0.0, 0.0, 1.0]), np.array([1.0, 0.0, 0.0])
    e1 = np.array([1.0, 0.0, 0.0])
    e2 = np.cross(a_A, e1)
    point = C.PointToPointDistanceConstraint(model, tip, np.zeros(3), root, p_point, 0.0, 1e-3)
    line = C.PointToLineDistanceConstraint(model, tip, np.zeros(3), root, p_point, n_line,
                                           0.0, 1e-3)
    angle = C.AngleBetweenVectorsConstraint(model, root, a_A, tip, b_B, 0.0, 0.01)
    fid_tip, fid_root = model.getFrameId(tip), model.getFrameId(root)

    def offset(q):
        W = _world(model, data, group, q)
        return W[fid_root].actInv(W[fid_tip].translation) - p_point

    def unit(v):
        return v / np.linalg.norm(v)

    def off_line(q):
        d = offset(q)
        return unit(d - n_line * (n_line @ d))

    def azimuth(q):
        W = _world(model, data, group, q)
        b = W[fid_root].rotation.T @ W[fid_tip].rotation @ b_B
        return np.array([math.atan2(b @ e2, b @ e1)])

    for _ in range(5):
        q = group.random_configuration(rng)
        q_full = group.to_full_q(q)
        pin.computeJointJacobians(model, data, q_full)
        pin.updateFramePlacements(model, data)
        for c, f in ((point, lambda x: unit(offset(x))), (line, off_line), (angle, azimuth)):
            T = c.bend(model, data, q_full)[:, group.iv_full]
            np.testing.assert_allclose(T, _fd(f, q), atol=1e-5, rtol=1e-4)


def _cases():
    if not DATA.exists():
        return []
    return json.loads(DATA.read_text())["problems"]


def _terms(model, spec):
    out = []
    for t in spec["constraints"]:
        args = {k: v for k, v in t.items() if k != "kind"}
        if t["kind"] == "angle":
            out.append(C.AngleBetweenVectorsConstraint(model, **args))
        else:
            out.append(C.PointToPointDistanceConstraint(model, **args))
    return out


def _violations(model, group, q, spec):
    """Each term's violation [rad or m] at ``q``, by pinocchio FK on the full model."""
    data = model.createData()
    W = _world(model, data, group, q)
    out = []
    for t in spec["constraints"]:
        if t["kind"] == "angle":
            a = W[model.getFrameId(t["frame_A"])].rotation @ np.asarray(t["a_A"])
            b = W[model.getFrameId(t["frame_B"])].rotation @ np.asarray(t["b_B"])
            cos = float(a @ b) / (np.linalg.norm(a) * np.linalg.norm(b))
            value = math.acos(max(-1.0, min(1.0, cos)))
            lo, hi = t["angle_lower"], t["angle_upper"]
        else:
            p1 = W[model.getFrameId(t["frame1"])].act(np.asarray(t["p_B1P1"]))
            p2 = W[model.getFrameId(t["frame2"])].act(np.asarray(t["p_B2P2"]))
            value = float(np.linalg.norm(p1 - p2))
            lo, hi = t["distance_lower"], t["distance_upper"]
        out.append(max(lo - value, value - hi, 0.0))
    return out


@pytest.mark.skipif(VENDOR is None, reason="../shared/real_urdfs (vendor arms) is absent")
@pytest.mark.parametrize("spec", _cases(), ids=lambda s: f"{s['robot']}-{s['index']}")
def test_formerly_failing_tight_problems_solve(spec):
    """Each in at most 10 attempts (it was NO_SOLUTION after ~1,000), checked by FK."""
    entry = next(e for e in json.loads((VENDOR / "manifest.json").read_text())
                 if e["name"] == spec["robot"])
    robot = Robot.from_urdf((VENDOR / entry["file"]).read_text())
    group = robot.group(base=spec["base"], tip=spec["tip"])
    model = robot.model
    q_star = np.asarray(spec["q_star"])
    assert max(_violations(model, group, q_star, spec)) == 0.0  # feasible by construction
    result = solve(group, Problem(group, None, _terms(model, spec)), np.asarray(spec["seed"]),
                   solver="lm", timeout_s=2.0, random_seed=spec["index"], max_attempts=10,
                   constraint_tolerance_m=TOL, constraint_tolerance_rad=TOL)
    assert result.status == IKStatus.SUCCESS, result.message
    assert max(_violations(model, group, result.q, spec)) <= TOL
