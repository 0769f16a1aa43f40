"""Whole-body problems of frame terms through the compiled LM attempt (issue 47 item 1).

A floating or planar base is one more joint kind of the compiled kinematics
(:mod:`ros2_ik.core.kinematics.configuration`), so a whole-body problem whose terms the
kernel computes (positions, orientations, a pose target) runs the compiled constraint
attempt.  Checked here: the solver picks it, its rows' Jacobians match finite
differences along the compiled ``integrate``, and its answers (talos' soles held by
position and orientation rows with a hand target, solo12's feet with a base target,
pr2's planar base taking its hand beyond the arm's reach) are verified again on the full
model from a configuration assembled here by joint name.
"""
import math

import numpy as np
import pinocchio as pin
import pytest

import wholebody_groups
from ros2_ik.core import constraints as C
from ros2_ik.core.pose import PoseTarget
from ros2_ik.core.problem import Problem
from ros2_ik.core.solve import solve
from ros2_ik.core.solvers import chain_kernel
from ros2_ik.core.solvers import constraint_kernel as ck
from ros2_ik.core.solvers.lm import LevenbergMarquardt
from ros2_ik.core.verify import ConstraintTolerance

pytestmark = pytest.mark.skipif(not chain_kernel.available(), reason="numba not installed")
SOLO_FEET = ["FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"]
SOLES = ["left_sole_link", "right_sole_link"]


@pytest.fixture(scope="module")
def talos():
    return wholebody_groups.talos()


@pytest.fixture(scope="module")
def solo():
    return wholebody_groups.solo()


@pytest.fixture(scope="module")
def pr2():
    return wholebody_groups.pr2()


def _placements(group, q):
    model = group.robot.model
    data = model.createData()
    pin.framesForwardKinematics(model, data, wholebody_groups.full_q(group, q))
    return data


def _held(group, q_star, frames, orientation=False):
    """Position (and orientation) rows holding ``frames`` where ``q_star`` puts them."""
    model = group.robot.model
    data = _placements(group, q_star)
    out = []
    for f in frames:
        X = data.oMf[model.getFrameId(f)]
        out.append(C.PositionConstraint(model, "universe", X.translation, X.translation, f,
                                        [0.0, 0.0, 0.0]))
        if orientation:
            out.append(C.OrientationConstraint(model, "universe", X.rotation, f,
                                               np.eye(3), 0.0))
    return out


def _verified(group, res, target, frames, q_star, orientation=False):
    """Check SUCCESS on the full model: held frames, the target, limits, a unit quaternion."""
    assert res.status.name == "SUCCESS", res.message
    model, q = group.robot.model, np.asarray(res.q)
    if group.base_kind == "floating":
        assert abs(np.linalg.norm(q[3:7]) - 1.0) < 1e-12
    nb = group.base_nq
    for name, v in zip(group.joint_names[nb:], q[nb:]):
        j = model.getJointId(name)
        if model.nqs[j] == 1:
            i = model.idx_qs[j]
            assert model.lowerPositionLimit[i] <= v <= model.upperPositionLimit[i], name
    data, ref = _placements(group, q), _placements(group, q_star)
    for f in frames:
        X, R = data.oMf[model.getFrameId(f)], ref.oMf[model.getFrameId(f)]
        assert np.linalg.norm(X.translation - R.translation) <= 1e-4, f
        if orientation:
            assert np.linalg.norm(pin.log3(R.rotation.T @ X.rotation)) <= 1e-3, f
    if target is not None:
        F = data.oMf[model.getFrameId(target.frame)]
        T = target.T_ref_target
        assert np.linalg.norm(F.translation - T.translation) <= target.position_tolerance_m
        assert np.linalg.norm(pin.log3(T.rotation.T @ F.rotation)) <= \
            target.orientation_tolerance_rad


def _talos_star(group, rng):
    q = group.mid_configuration()
    q[:3] = [*rng.uniform(-0.5, 0.5, 2), 1.02]
    q[3:7] = pin.Quaternion(pin.rpy.rpyToMatrix(0.0, 0.0, rng.uniform(-3, 3))).coeffs()
    q[7:] = rng.normal(0.0, 0.1, group.n - 7)
    return group.clamp(q)


def _solo_star(group, rng):
    q = group.mid_configuration()
    q[:3] = [*rng.uniform(-1, 1, 2), 0.25]
    q[7:] = np.tile([0.0, 0.8, -1.6], 4) + rng.normal(0, 0.1, 12)
    return group.clamp(q)


def test_the_compiled_attempt_takes_whole_body_frame_problems(talos, solo, pr2):
    rng = np.random.default_rng(0)
    lm = LevenbergMarquardt()
    q = _talos_star(talos, rng)
    problem = Problem(talos, PoseTarget(talos.tip, talos.fk(q, talos.tip)),
                      _held(talos, q, SOLES, orientation=True))
    assert isinstance(lm.setup(problem), ck.KernelState)
    q = _solo_star(solo, rng)
    assert isinstance(lm.setup(Problem(solo, PoseTarget("base_link", solo.fk(q, "base_link")),
                                       _held(solo, q, SOLO_FEET))), ck.KernelState)
    q = pr2.mid_configuration()
    problem = Problem(pr2, PoseTarget(pr2.tip, pr2.fk(q, pr2.tip)),
                      _held(pr2, q, ["base_link"], orientation=True))
    assert isinstance(lm.setup(problem), ck.KernelState)


@pytest.mark.parametrize("which", ["talos", "solo", "pr2"])
def test_rows_jacobians_match_finite_differences_along_integrate(which, request):
    group = request.getfixturevalue(which)
    rng = np.random.default_rng(2)
    q_star = {"talos": _talos_star, "solo": _solo_star}.get(
        which, lambda g, r: g.random_configuration(r))(group, rng)
    frames = {"talos": SOLES, "solo": SOLO_FEET, "pr2": ["r_forearm_link"]}[which]
    target = PoseTarget(group.tip, group.fk(group.random_configuration(rng), group.tip))
    problem = Problem(group, target, _held(group, q_star, frames, orientation=True))
    compiled = ck.compile_problem(problem, ConstraintTolerance())
    assert compiled is not None
    from ros2_ik.core.kinematics import configuration, model as km
    kinds = km.tree_of(group).kinds
    q = group.integrate(q_star, rng.normal(0.0, 0.1, group.nv))
    g, J, xe, xJ, _ = ck.evaluate(compiled, q)
    assert J.shape == (g.shape[0], group.nv) and xJ.shape[1] == group.nv
    inf = np.full(group.n, np.inf)
    h = 1e-6
    for c in range(group.nv):
        step = np.zeros(group.nv)
        step[c] = h
        qp, qm = q.copy(), q.copy()
        configuration.integrate(kinds, qp, step, -inf, inf)
        configuration.integrate(kinds, qm, -step, -inf, inf)
        gp, _, xp, _, _ = ck.evaluate(compiled, qp)
        gm, _, xm, _, _ = ck.evaluate(compiled, qm)
        np.testing.assert_allclose((gp - gm) / (2 * h), J[:, c], atol=1e-5)
        # the pose rows' Jacobian leaves out Jlog3: their position rows are exact
        np.testing.assert_allclose((xp[:3] - xm[:3]) / (2 * h), xJ[:3, c], atol=1e-5)


def test_talos_soles_held_and_a_hand_target(talos):
    rng = np.random.default_rng(4)
    for k in range(3):
        q_star = _talos_star(talos, rng)
        target = PoseTarget(talos.tip, talos.fk(q_star, talos.tip))
        problem = Problem(talos, target, _held(talos, q_star, SOLES, orientation=True))
        seed = talos.mid_configuration()
        seed[2] = 1.0
        res = solve(talos, problem, seed, timeout_s=2.0, random_seed=k)
        _verified(talos, res, target, SOLES, q_star, orientation=True)


def test_solo12_four_feet_and_a_base_target(solo):
    rng = np.random.default_rng(5)
    for k in range(3):
        q_star = _solo_star(solo, rng)
        target = PoseTarget("base_link", solo.fk(q_star, "base_link"))
        seed = solo.mid_configuration()
        seed[2] = 0.3
        res = solve(solo, Problem(solo, target, _held(solo, q_star, SOLO_FEET)), seed,
                    timeout_s=2.0, random_seed=k)
        _verified(solo, res, target, SOLO_FEET, q_star)


def test_pr2_planar_base_moves_the_hand_beyond_the_arms_reach(pr2):
    """The hand 3 m away, the base kept level (it is planar): only base motion reaches."""
    rng = np.random.default_rng(6)
    for k in range(3):
        q_star = pr2.random_configuration(rng)
        q_star[:3] = [*rng.uniform(-3.0, 3.0, 2), rng.uniform(-math.pi, math.pi)]
        target = PoseTarget(pr2.tip, pr2.fk(q_star, pr2.tip))
        held = [C.PositionConstraint(pr2.robot.model, "universe", [-np.inf, -np.inf, 0.0],
                                     [np.inf, np.inf, 0.5], "base_link", [0.0, 0.0, 0.0])]
        problem = Problem(pr2, target, held)
        assert isinstance(LevenbergMarquardt().setup(problem), ck.KernelState)
        res = solve(pr2, problem, pr2.mid_configuration(), timeout_s=2.0, random_seed=k)
        _verified(pr2, res, target, [], q_star)


def _polygon(group, q_star, feet, margin):
    """The polygon of ``feet`` where ``q_star`` puts them (a sole: its corners)."""
    sole = [[x, y, 0.0] for x in (-0.1, 0.1) for y in (-0.065, 0.065)]
    return C.ComInSupportPolygonConstraint.from_frames(
        group.robot.model, wholebody_groups.full_q(group, q_star), feet,
        [sole] * len(feet) if feet == SOLES else None, margin=margin)


def _rows_are_the_python_classs(group, held, term, q):
    """The kernel's rows of ``term`` (after ``held``) at ``q`` against its ``evaluate``."""
    model = group.robot.model
    compiled = ck.compile_problem(Problem(group, None, held + [term]), ConstraintTolerance())
    assert compiled is not None
    g, J, _, _, _ = ck.evaluate(compiled, q)
    qf = wholebody_groups.full_q(group, q)
    data = model.createData()
    pin.computeJointJacobians(model, data, qf)
    pin.updateFramePlacements(model, data)
    value, jac = term.evaluate(model, data, qf)
    h = len(value)
    np.testing.assert_allclose(g[-h:], value, atol=1e-10)
    np.testing.assert_allclose(J[-h:], jac[:, group.iv_full], atol=1e-9)


def test_com_in_support_polygon_rows_are_the_python_classs(solo, talos):
    """The compiled rows (the CoM as a frame) against ``evaluate`` on the full model."""
    rng = np.random.default_rng(8)
    for group, feet in ((solo, SOLO_FEET), (talos, SOLES)):
        q_star = (_solo_star if group is solo else _talos_star)(group, rng)
        q = group.integrate(q_star, rng.normal(0.0, 0.1, group.nv))
        _rows_are_the_python_classs(group, _held(group, q_star, feet),
                                    _polygon(group, q_star, feet, 0.01), q)


def test_solo12_four_feet_base_target_and_com_in_polygon_compiled(solo):
    """The bench's quadruped family through the compiled attempt, verified outside."""
    rng = np.random.default_rng(9)
    model = solo.robot.model
    for k in range(3):
        q_star = _solo_star(solo, rng)
        poly = _polygon(solo, q_star, SOLO_FEET, 0.0)
        target = PoseTarget("base_link", solo.fk(q_star, "base_link"))
        problem = Problem(solo, target, _held(solo, q_star, SOLO_FEET) + [poly])
        assert isinstance(LevenbergMarquardt().setup(problem), ck.KernelState)
        seed = solo.mid_configuration()
        seed[2] = 0.3
        res = solve(solo, problem, seed, timeout_s=2.0, random_seed=k)
        _verified(solo, res, target, SOLO_FEET, q_star)
        data = model.createData()
        qf = wholebody_groups.full_q(solo, np.asarray(res.q))
        com = pin.centerOfMass(model, data, qf)
        assert np.all(poly._A @ com - poly._b >= -1e-4)


def test_an_impossible_com_margin_is_no_solution_naming_it(solo):
    rng = np.random.default_rng(10)
    q_star = _solo_star(solo, rng)
    poly = _polygon(solo, q_star, SOLO_FEET, 0.5)  # deeper than the polygon's inradius
    problem = Problem(solo, None, _held(solo, q_star, SOLO_FEET) + [poly])
    res = solve(solo, problem, solo.mid_configuration(), timeout_s=0.5, random_seed=0)
    assert res.status.name == "NO_SOLUTION" and poly.name in res.message


def test_com_box_rows_are_the_python_classs(talos):
    """``CenterOfMassConstraint`` in the world and in a moving frame: compiled = Python."""
    rng = np.random.default_rng(12)
    model = talos.robot.model
    q_star = _talos_star(talos, rng)
    for frame in ("universe", "base_link", "left_sole_link"):
        com = C.CenterOfMassConstraint(model, [-0.1, -0.1, 0.5], [0.1, 0.1, 1.0], frame)
        q = talos.integrate(q_star, rng.normal(0.0, 0.1, talos.nv))
        _rows_are_the_python_classs(talos, _held(talos, q_star, SOLES), com, q)
