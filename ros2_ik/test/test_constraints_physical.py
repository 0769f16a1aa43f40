"""Constraints in physical units: rows in [m] / [rad], their Jacobians, what verify reports.

Every figure is checked against geometry computed here from pinocchio placements (scipy's
rotation magnitude, arccos of unit vectors, numpy norms), not against the constraint's own
code; Jacobians against central finite differences.
"""
from __future__ import annotations

import math
import zlib

import numpy as np
import pinocchio as pin
import pytest
from scipy.spatial.transform import Rotation
from test_constraints_fixtures import FRAMES, ROBOTS, random_configurations
from test_constraints_jacobians import A_POLY, P_GP, X_OFFSET, _terms

from ros2_ik.core import constraints as C
from ros2_ik.core.constraints import _samples, update_kinematics
from ros2_ik.core.costs import PostureCost
from ros2_ik.core.model.robots import load_group
from ros2_ik.core.problem import Problem
from ros2_ik.core.result import IKStatus
from ros2_ik.core.solve import solve
from ros2_ik.core.solvers import seed_library
from ros2_ik.core.verify import ConstraintTolerance, verify_pose

TERM_NAMES = list(_terms(ROBOTS["tiny"](), *FRAMES["tiny"]))
CASES = [(robot, term) for robot in FRAMES for term in TERM_NAMES]


def _physical_fd(term, model, data, q, eps=1e-6):
    columns = []
    for k in range(model.nv):
        step = np.zeros(model.nv)
        step[k] = eps
        values = []
        for s in (step, -step):
            qs = pin.integrate(model, q, s)
            update_kinematics(model, data, qs)
            values.append(term.evaluate_physical(model, data, qs)[0])
        columns.append((values[0] - values[1]) / (2 * eps))
    update_kinematics(model, data, q)
    return np.stack(columns, axis=1)


@pytest.mark.parametrize("robot,term_name", CASES)
def test_physical_jacobian_matches_finite_differences(robot, term_name):
    model = ROBOTS[robot]()
    term = _terms(model, *FRAMES[robot])[term_name]
    data = model.createData()
    for q in random_configurations(model, 6, seed=zlib.crc32(term_name.encode()) % 997):
        update_kinematics(model, data, q)
        value, jacobian = term.evaluate_physical(model, data, q)
        lower, upper = term.physical_bounds
        assert value.shape == lower.shape == upper.shape == (jacobian.shape[0],)
        numeric = _physical_fd(term, model, data, q)
        scale = max(1.0, float(np.abs(numeric).max()))
        np.testing.assert_allclose(jacobian, numeric, atol=2e-6 * scale, err_msg=term_name)


def _frame(model, data, name):
    return data.oMf[model.getFrameId(name)]


def _independent(term_name, model, data, tip, other, third):
    """The violation [m or rad] of each term of ``_terms``, from placements alone."""
    T_tip, T_other = _frame(model, data, tip), _frame(model, data, other)
    if term_name == "position":
        p = T_other.actInv(T_tip.act(np.array([0.1, 0, 0.05])))
        return np.maximum(np.abs(p) - 1.0, 0.0)
    if term_name == "position_offset":
        p = (_frame(model, data, third) * X_OFFSET).actInv(T_tip.act(np.array([0, .2, .1])))
        return np.maximum(np.abs(p) - 1.0, 0.0)
    if term_name == "position_world":
        return np.maximum(np.abs(T_tip.act(np.array([0.1, 0.1, 0.1]))) - 1.0, 0.0)
    if term_name == "orientation":
        R_AB = (T_other.rotation @ _rot("x", 0.3)).T @ (T_tip.rotation @ _rot("z", 1.1))
        return [max(Rotation.from_matrix(R_AB).magnitude() - 0.2, 0.0)]
    if term_name == "gaze":
        p = T_tip.actInv(T_other.act(np.array([0.1, 0.0, 0.2]))) - [0.0, 0.1, 0.05]
        n = np.array([0.3, -1.0, 2.0]) / np.linalg.norm([0.3, -1.0, 2.0])
        return [max(math.acos(np.clip(p @ n / np.linalg.norm(p), -1, 1)) - 0.4, 0.0)]
    if term_name == "angle":
        a = T_other.rotation @ (np.array([1, 2, 3]) / np.linalg.norm([1, 2, 3]))
        b = T_tip.rotation @ (np.array([0, -1, 0.5]) / np.linalg.norm([0, -1, 0.5]))
        angle = math.acos(np.clip(a @ b, -1, 1))
        return [max(0.1 - angle, angle - 2.0, 0.0)]
    if term_name == "point_to_point":
        d = np.linalg.norm(T_tip.act(np.array([0.1, 0, 0])) - T_other.act(np.array([0, .05, .1])))
        return [max(0.1 - d, d - 0.5, 0.0)]
    if term_name == "point_to_line":
        u = T_other.actInv(T_tip.act(np.array([0.0, 0.1, 0.0]))) - [0.05, 0, 0]
        n = np.array([1.0, 1.0, 0.0]) / math.sqrt(2.0)
        return [max(np.linalg.norm(u - (u @ n) * n) - 0.2, 0.0)]
    if term_name == "polyhedron":
        p = np.concatenate([T_other.actInv(T_tip.act(P_GP[:, i])) for i in range(2)])
        return np.maximum((A_POLY @ p - [1, 2, 3]) / np.linalg.norm(A_POLY, axis=1), 0.0)
    raise KeyError(term_name)


def _rot(axis, angle):
    return Rotation.from_euler(axis, angle).as_matrix()


@pytest.mark.parametrize("robot,term_name", CASES)
def test_measure_is_the_geometric_violation(robot, term_name):
    model = ROBOTS[robot]()
    term = _terms(model, *FRAMES[robot])[term_name]
    data = model.createData()
    violated = 0
    for q in random_configurations(model, 12, seed=zlib.crc32(term_name.encode()) % 991):
        update_kinematics(model, data, q)
        expected = _independent(term_name, model, data, *FRAMES[robot])
        measured = term.measure(model, data, q)
        np.testing.assert_allclose(measured, expected, atol=1e-9, err_msg=term_name)
        assert len(term.units) == len(measured)
        violated += bool(np.max(expected) > 0)
    if term_name not in ("position", "position_offset", "position_world", "polyhedron") \
            or robot == "tiny":  # the Panda's reach stays inside the wide boxes

        assert violated, f"{term_name}: no configuration violates it, the test says nothing"


def test_position_measure_is_the_distance_outside_the_box():
    model = ROBOTS["panda"]()
    data = model.createData()
    tip = FRAMES["panda"][0]
    q0, q1 = random_configurations(model, 2, seed=2)
    update_kinematics(model, data, q0)
    p0 = _frame(model, data, tip).translation.copy()
    box = C.PositionConstraint(model, "universe", p0 - 1e-3, p0 + 1e-3, tip, np.zeros(3))
    update_kinematics(model, data, q1)
    p1 = _frame(model, data, tip).translation
    expected = np.maximum(np.abs(p1 - p0) - 1e-3, 0.0)
    assert expected.max() > 0.01
    np.testing.assert_allclose(box.measure(model, data, q1), expected, atol=1e-12)


def test_units_name_metres_and_radians():
    model = ROBOTS["tiny"]()
    terms = _terms(model, *FRAMES["tiny"])
    assert set(terms["orientation"].units) == {"rad"}
    assert terms["gaze"].units == ("rad",) and terms["angle"].units == ("rad",)
    for name in ("position", "point_to_point", "point_to_line", "polyhedron"):
        assert set(terms[name].units) == {"m"}, name
    bounds = C.JointBoundsConstraint(model, {"j1": (-1, 1), "j3": (-0.1, 0.1)})
    assert bounds.units == ("rad", "m")


class _Frames:
    """Placements of a few configurations in the (3, S) / (9, S) layout, by pinocchio."""

    def __init__(self, model, qs):
        self.model, self.qs = model, qs

    def placement(self, fid):
        data = self.model.createData()
        p, R = [], []
        for q in self.qs:
            pin.framesForwardKinematics(self.model, data, q)
            p.append(data.oMf[fid].translation.copy())
            R.append(data.oMf[fid].rotation.reshape(9).copy())
        return np.array(p).T, np.array(R).T


@pytest.mark.parametrize("term_name", TERM_NAMES)
def test_sample_violation_is_the_squared_measure(term_name):
    """The vectorised ranking figure equals sum(measure^2), radians weighed as documented."""
    model = ROBOTS["panda"]()
    term = _terms(model, *FRAMES["panda"])[term_name]
    qs = random_configurations(model, 6, seed=11)
    ranked = term.sample_violation(_Frames(model, qs))
    data = model.createData()
    for q, value in zip(qs, ranked):
        update_kinematics(model, data, q)
        v = term.measure(model, data, q)
        weights = [_samples.RAD_WEIGHT_M2 if u == "rad" else 1.0 for u in term.units]
        assert value == pytest.approx(float(np.dot(weights, v * v)), rel=1e-6, abs=1e-12)


@pytest.fixture(scope="module")
def panda():
    return load_group("panda")[1]


def _orientation_problem(panda, bound=0.02):
    model = panda.robot.model
    q_star = panda.mid_configuration() + 0.3
    R_target = panda.fk(q_star, panda.tip).rotation
    term = C.OrientationConstraint(model, "panda_link0", R_target, panda.tip, np.eye(3), bound)
    return term, q_star


def test_an_angle_bound_is_verified_in_radians(panda):
    """0.5 mrad beyond a 0.02 rad bound fails at 1e-4 rad, though tr(R) is off by only 2e-5."""
    term, q_star = _orientation_problem(panda)
    model = panda.robot.model
    # Turn joint 7 (about the hand's axis) by 0.0205 rad: the hand turns by that much.
    q = q_star.copy()
    q[6] += 0.0205
    data = model.createData()
    update_kinematics(model, data, panda.to_full_q(q))
    trace_off = float(term.lower_bound[0] - term.evaluate(model, data, panda.to_full_q(q))[0][0])
    assert 0 < trace_off < 1e-4
    ok, _, _, reason = verify_pose(panda, None, q, [term])
    assert not ok and "rad" in reason
    ok, *_ = verify_pose(panda, None, q, [term], ConstraintTolerance(1e-4, 1e-3))
    assert ok


def test_violations_are_reported_with_their_unit(panda):
    """Two 0.1 rad cones 0.5 rad apart cannot both hold: the best is reported in rad.

    The problem is infeasible whatever the machine's speed (a short deadline made the
    old version end TIMED_OUT, with nothing evaluated, under CI's load).
    """
    term, q_star = _orientation_problem(panda, bound=0.1)
    R_other = panda.fk(q_star, panda.tip).rotation @ pin.utils.rpyToMatrix(0.5, 0.0, 0.0)
    other = C.OrientationConstraint(panda.robot.model, "panda_link0", R_other, panda.tip,
                                    np.eye(3), 0.1)
    far = panda.mid_configuration() - 0.4
    result = solve(panda, Problem(panda, None, [term, other]), far, max_attempts=2,
                   library_starts=0, timeout_s=30.0)
    assert result.status is IKStatus.NO_SOLUTION, result.message
    assert [unit for _, _, unit in result.violations] == ["rad", "rad"]
    # The cones' axes are 0.5 rad apart: the two angles sum to >= 0.5, the excesses to >= 0.3.
    assert sum(amount for _, amount, _ in result.violations) >= 0.3 - 1e-9


@pytest.mark.parametrize("solver", ["lm", "dls", "bfgs", "sqp"])
def test_constraint_only_problems_never_raise(panda, solver):
    """bfgs used to raise 'need at least one array to concatenate' once every row held."""
    term, q_star = _orientation_problem(panda, bound=0.5)
    box = C.PositionConstraint(panda.robot.model, "panda_link0", [-2] * 3, [2] * 3,
                               panda.tip, np.zeros(3))
    for constraints in ([box], [term, box]):
        result = solve(panda, Problem(panda, None, constraints), panda.mid_configuration(),
                       solver=solver, timeout_s=0.05, random_seed=1)
        assert result.status is IKStatus.SUCCESS, (solver, result.message)


def _family(panda, rng, kind):
    """Position box +-5 mm and an angle bound around a random reachable configuration."""
    model = panda.robot.model
    q_star = panda.lower + (panda.upper - panda.lower) * rng.random(panda.n)
    T = panda.fk(q_star, panda.tip)
    p = T.translation
    box = C.PositionConstraint(model, "panda_link0", p - 5e-3, p + 5e-3, panda.tip,
                               np.zeros(3))
    if kind == "orientation":
        other = C.OrientationConstraint(model, "panda_link0", T.rotation, panda.tip,
                                        np.eye(3), 0.02)
    elif kind == "gaze":
        other = C.GazeTargetConstraint(model, panda.tip, np.zeros(3), [0, 0, 1.0],
                                       "panda_link0", T.act(np.array([0, 0, 0.5])),
                                       math.radians(5))
    else:
        other = C.AngleBetweenVectorsConstraint(model, "panda_link0", T.rotation[:, 2],
                                                panda.tip, [0, 0, 1.0], 0.0, 0.1)
    return [box, other]


@pytest.mark.parametrize("kind", ["orientation", "gaze", "angle"])
def test_lm_solves_constraint_families_and_they_hold_in_physical_units(panda, kind):
    rng = np.random.default_rng(7)
    model = panda.robot.model
    data = model.createData()
    for i in range(12):
        constraints = _family(panda, rng, kind)
        result = solve(panda, Problem(panda, None, constraints), panda.mid_configuration(),
                       timeout_s=0.5, random_seed=i)
        assert result.status is IKStatus.SUCCESS, result.message
        update_kinematics(model, data, panda.to_full_q(result.q))
        T = data.oMf[model.getFrameId(panda.tip)]
        box = constraints[0]
        assert np.all(T.translation >= box.lower_bound - 1e-4)
        assert np.all(T.translation <= box.upper_bound + 1e-4)
        for c in constraints[1:]:
            assert float(np.max(c.measure(model, data, panda.to_full_q(result.q)))) <= 1e-4


def test_lm_lowers_a_posture_cost_and_keeps_the_constraints(panda):
    """From the same start, the polished answer is feasible and cheaper than the plain one."""
    rng = np.random.default_rng(3)
    model = panda.robot.model
    compared = 0
    for i in range(8):
        constraints = _family(panda, rng, "orientation")
        nominal = panda.to_full_q(panda.lower + (panda.upper - panda.lower) * rng.random(7))
        cost = PostureCost(model, nominal)
        options = dict(timeout_s=0.5, random_seed=i, library_starts=0, max_attempts=1)
        plain = solve(panda, Problem(panda, None, constraints), panda.mid_configuration(),
                      **options)
        polished = solve(panda, Problem(panda, None, constraints, [cost]),
                         panda.mid_configuration(), **options)
        if not (plain.success and polished.success):
            continue
        ok, *_ = verify_pose(panda, None, polished.q, constraints)
        assert ok

        def value(q):
            data = model.createData()
            update_kinematics(model, data, panda.to_full_q(q))
            return cost.evaluate(model, data, panda.to_full_q(q))[0]
        assert value(polished.q) < value(plain.q)
        compared += 1
    assert compared >= 4


@pytest.mark.parametrize("max_jump", [math.inf, 1.0])
def test_constraint_starts_without_the_seed_are_the_same_samples(panda, max_jump):
    """``with_seed=False`` (the seed tried already): the ranked samples, in order, no seed."""
    rng = np.random.default_rng(8)
    for family in ("orientation", "gaze", "angle"):
        constraints = _family(panda, rng, family)
        seed = panda.random_configuration(rng)
        full = seed_library.constraint_starts(panda, constraints, 6, seed, max_jump)
        samples = seed_library.constraint_starts(panda, constraints, 6, seed, max_jump,
                                                 with_seed=False)
        expected = [q for q in full if not np.array_equal(q, seed)]
        assert len(samples) == len(expected) == (6 if math.isinf(max_jump) else len(full) - 1)
        np.testing.assert_array_equal(samples, expected)


def test_constraint_starts_put_a_satisfying_seed_first(panda):
    rng = np.random.default_rng(5)
    constraints = _family(panda, rng, "orientation")
    model = panda.robot.model
    q_star = panda.mid_configuration() + 0.123  # not a library sample
    T = panda.fk(q_star, panda.tip)
    p = T.translation
    around = [C.PositionConstraint(model, "panda_link0", p - 1e-3, p + 1e-3, panda.tip,
                                   np.zeros(3))]
    seed = np.array(q_star) + 1e-4
    starts = seed_library.constraint_starts(panda, around, 4, seed)
    np.testing.assert_array_equal(starts[0], seed)
    far = panda.mid_configuration()
    starts = seed_library.constraint_starts(panda, constraints, 4, far)
    assert any(np.array_equal(s, far) for s in starts)
    data = model.createData()

    def violation(q):
        update_kinematics(model, data, panda.to_full_q(q))
        return sum(float(np.sum(c.measure(model, data, panda.to_full_q(q)) ** 2))
                   for c in constraints)
    assert violation(starts[0]) <= violation(far)


@pytest.mark.parametrize("robot", ["panda", "tiny"])
def test_orientation_excess_matches_finite_differences(robot):
    """The rotation beyond the bound: norm theta - bound, Jacobian by central differences."""
    model = ROBOTS[robot]()
    term = _terms(model, *FRAMES[robot])["orientation"]
    data = model.createData()
    for q in random_configurations(model, 6, seed=21):
        update_kinematics(model, data, q)
        theta = term.measure(model, data, q)[0] + term.theta_bound
        bound = 0.5 * theta
        excess, jacobian = term.evaluate_excess(model, data, q, bound)
        assert np.linalg.norm(excess) == pytest.approx(theta - bound, abs=1e-9)
        columns = []
        for k in range(model.nv):
            step = np.zeros(model.nv)
            step[k] = 1e-6
            values = []
            for s in (step, -step):
                qs = pin.integrate(model, q, s)
                update_kinematics(model, data, qs)
                values.append(term.evaluate_excess(model, data, qs, bound)[0])
            columns.append((values[0] - values[1]) / 2e-6)
        np.testing.assert_allclose(jacobian, np.stack(columns, axis=1), atol=2e-6)


def test_a_frame_name_shared_by_a_joint_and_a_link_is_usable():
    """z1's gripperStator names a joint frame and a link frame: no ValueError, either way."""
    from ros2_ik.core.pose import PoseTarget
    _, group = load_group("z1")
    model = group.robot.model
    names = [f.name for f in model.frames]
    shared = [n for n in set(names) if names.count(n) > 1]
    assert shared, "the test needs a repeated frame name"
    name = sorted(shared)[0]
    q = group.mid_configuration() + 0.1
    bound = C.OrientationConstraint(model, "universe", group.fk(q, name).rotation, name,
                                    np.eye(3), 0.05)
    result = solve(group, Problem(group, None, [bound]), group.mid_configuration(),
                   timeout_s=0.5, random_seed=0)
    assert result.status is IKStatus.SUCCESS, result.message
    target = PoseTarget(name, group.fk(q, name))
    assert solve(group, target, group.mid_configuration(), timeout_s=0.5).success
