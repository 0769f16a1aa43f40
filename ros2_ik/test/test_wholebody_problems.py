"""The whole-body benchmark's problems are feasible by construction, and its check can fail.

``bench/wholebody_problems.py`` draws each problem from a configuration ``q_star`` that
must satisfy every term; ``bench/wholebody_check.py`` judges answers on its own pinocchio
model.  Here: ``q_star`` passes the check on every robot, the seed (the nominal stance) is
itself a valid configuration of the model, and configurations that break one term each
(a foot lifted, a hand moved, the CoM pushed out, a joint past its limit, a quaternion
scaled, a locked joint moved) are refused, naming the term.
"""
from __future__ import annotations

import dataclasses
import math
import sys
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import wholebody_problems as wb  # noqa: E402
from constrained_problems import Term  # noqa: E402
from wholebody_check import (WholeBodyChecker, convex_hull,  # noqa: E402
                             inside_distance)

COUNT = 3


@pytest.fixture(scope="module", params=sorted(wb.ROBOTS))
def robot(request):
    name = request.param
    return name, wb.problems(name, COUNT, seed=11), WholeBodyChecker(name)


def test_q_star_passes_the_check(robot):
    name, problems, checker = robot
    for problem in problems:
        verdict = checker.check(problem.q_star, problem)
        assert verdict.ok, (name, problem.index, verdict.reason)
        assert problem.seed.shape == problem.q_star.shape == (checker.model.nq,)


def test_problems_are_deterministic(robot):
    name, problems, _ = robot
    again = wb.problems(name, COUNT, seed=11)
    for a, b in zip(problems, again):
        np.testing.assert_array_equal(a.q_star, b.q_star)


def _lift(q: np.ndarray, dz: float) -> np.ndarray:
    out = q.copy()
    out[2] += dz
    return out


def test_check_refuses_a_perturbed_configuration(robot):
    name, problems, checker = robot
    problem = problems[0]
    spec = wb.ROBOTS[name]
    if spec.planar:  # the base moved 1 cm: the hand with it
        q = problem.q_star.copy()
        q[0] += 0.01
        expected = spec.hand
    else:  # the whole robot lifted 1 mm: every foot off its target
        q = _lift(problem.q_star, 1e-3)
        expected = spec.contacts[0].frame
    verdict = checker.check(q, problem)
    assert not verdict.ok and expected in verdict.reason, verdict.reason


def test_check_refuses_limits_quaternion_and_locked_joints(robot):
    name, problems, checker = robot
    problem, model = problems[0], checker.model
    joint = model.getJointId(problem.moving[-1])
    q = problem.q_star.copy()
    i = model.idx_qs[joint]
    if model.nqs[joint] == 1:
        q[i] = model.upperPositionLimit[i] + 1e-3
        assert "limits" in checker.check(q, problem).reason
    q = problem.q_star.copy()
    unit = 3 if model.nqs[1] == 7 else 2
    q[unit:unit + (4 if unit == 3 else 2)] *= 1.001
    assert "unit norm" in checker.check(q, problem).reason
    locked = checker.locked_slots(problem.moving)
    if locked.size:
        q = problem.q_star.copy()
        q[locked[0]] += 1e-3
        assert "locked" in checker.check(q, problem).reason


@pytest.mark.parametrize("name", ["pr2", "tiago"])
def test_the_ranges_are_the_soft_limits_a_controller_keeps(name):
    """Every soft-limited joint's range is the narrowed one, in the check and ``q_star``.

    Read from the raw URDF here: a joint whose ``<safety_controller>`` lies inside its
    ``<limit>``.  Its hard limit is outside the problem's range: ``q_star`` never goes
    there and the check refuses it (MoveIt and ros2_ik bound the joint the same way).
    """
    import xml.etree.ElementTree as ET
    raw = ET.fromstring((wb.robots.data_dir() / wb.ROBOTS[name].urdf).read_text())
    checker, problems = WholeBodyChecker(name), wb.problems(name, COUNT, seed=11)
    model, narrowed = checker.model, 0
    for joint in raw.iter("joint"):
        safety, limit = joint.find("safety_controller"), joint.find("limit")
        if safety is None or joint.get("type") not in ("revolute", "prismatic"):
            continue
        lower, upper = float(limit.get("lower", "0")), float(limit.get("upper", "0"))
        lo = max(lower, float(safety.get("soft_lower_limit", "-inf")))
        hi = min(upper, float(safety.get("soft_upper_limit", "inf")))
        i = model.idx_qs[model.getJointId(joint.get("name"))]
        assert (model.lowerPositionLimit[i], model.upperPositionLimit[i]) == \
            pytest.approx((lo, hi), abs=1e-12), joint.get("name")
        for problem in problems:
            assert lo <= problem.q_star[i] <= hi, (joint.get("name"), problem.index)
        if hi < upper:
            narrowed += 1
            q = problems[0].q_star.copy()
            q[i] = upper
            assert "limits" in checker.check(q, problems[0]).reason, joint.get("name")
    assert narrowed >= 5


def test_check_refuses_a_com_outside_the_polygon():
    """The CoM term judged at ``q_star`` fails once its margin exceeds the CoM's own."""
    problem = wb.problems("talos", 1, seed=3)[0]
    checker = WholeBodyChecker("talos")
    com = next(t for t in problem.constraints if t.kind == "com_in_support")
    pin.framesForwardKinematics(checker.model, checker.data, problem.q_star)
    margin = checker.com_margin(problem.q_star, com.args["contacts"])
    assert margin >= wb.COM_MARGIN_M
    wider = Term("com_in_support", dict(com.args, margin_m=margin + 1e-3))
    harder = dataclasses.replace(problem, constraints=tuple(
        wider if t is com else t for t in problem.constraints))
    assert "CoM in support polygon by 0.001" in checker.check(problem.q_star, harder).reason


def test_inside_distance_of_a_square():
    hull = convex_hull(np.array([[0, 0], [1, 0], [1, 1], [0, 1], [0.5, 0.5]], float))
    assert len(hull) == 4
    assert math.isclose(inside_distance(hull, np.array([0.5, 0.5])), 0.5)
    assert math.isclose(inside_distance(hull, np.array([0.9, 0.5])), 0.1)
    assert inside_distance(hull, np.array([1.2, 0.5])) == pytest.approx(-0.2)
    assert inside_distance(convex_hull(np.array([[0, 0], [1, 1]], float)),
                           np.zeros(2)) == -math.inf


def test_humanoid_soles_are_level_on_the_ground():
    for name in wb.FAMILIES["humanoid"]:
        problem = wb.problems(name, 1, seed=5)[0]
        for term in problem.constraints:
            if term.kind == "frame_pose" and term.args["frame"] != wb.ROBOTS[name].hand:
                T = pin.SE3(np.asarray(term.args["T"]))
                contact = next(c for c in wb.ROBOTS[name].contacts
                               if c.frame == term.args["frame"])
                heights = [T.act(np.asarray(p))[2] for p in contact.points]
                np.testing.assert_allclose(heights, 0.0, atol=1e-9)
                np.testing.assert_allclose(T.rotation[:, 2], [0, 0, 1], atol=1e-9)


def test_a_far_base_problem_keeps_its_moved_answer_and_only_that(robot):
    """``with_far_base``: the check passes the moved ``q_star`` and refuses the original.

    Legged robots get none (their contacts hold them where they stand).
    """
    name, problems, checker = robot
    for problem in problems:
        far = wb.with_far_base(problem)
        if not wb.ROBOTS[name].planar:
            assert far is None
            continue
        assert wb.FAR_BASE_M[0] <= far.meta["far_m"] <= wb.FAR_BASE_M[1]
        assert np.hypot(*(far.q_star[:2] - problem.q_star[:2])) == pytest.approx(
            far.meta["far_m"])
        assert checker.check(far.q_star, far).ok
        assert not checker.check(problem.q_star, far).ok
        np.testing.assert_array_equal(far.seed, problem.seed)


def test_an_impossible_com_margin_refuses_even_q_star():
    problem = wb.problems("solo12", 1, seed=2)[0]
    impossible = wb.with_impossible_com(problem)
    assert impossible.meta["infeasible"] == "com_in_support"
    verdict = WholeBodyChecker("solo12").check(problem.q_star, impossible)
    assert not verdict.ok and "CoM in support polygon" in verdict.reason
    assert wb.with_impossible_com(wb.problems("pr2", 1, seed=2)[0]) is None
