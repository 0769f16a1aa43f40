"""Analytic Jacobians of every constraint against central finite differences.

Random configurations of the Panda and of a tiny arm with continuous joints
(nq != nv); frames chosen so that both frames of a term move.
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from test_constraints_fixtures import FRAMES, ROBOTS, random_configurations, rot_x, rot_z

from ros2_ik.core.constraints import (
    AngleBetweenVectorsConstraint,
    GazeTargetConstraint,
    JointBoundsConstraint,
    OrientationConstraint,
    PointToLineDistanceConstraint,
    PointToPointDistanceConstraint,
    PolyhedronConstraint,
    PositionConstraint,
    finite_difference,
    update_kinematics,
)

X_OFFSET = pin.SE3(rot_x(0.4) @ rot_z(-0.7), np.array([0.1, -0.2, 0.05]))
P_GP = np.array([[0.0, 0.1, -0.05], [0.02, 0.0, 0.1], [0.0, -0.1, 0.2]])
A_POLY = np.arange(18.0).reshape(3, 6) / 10.0 - 0.8


def _terms(model, tip, other, third):
    return {
        "position": PositionConstraint(model, other, [-1] * 3, [1] * 3, tip, [0.1, 0, 0.05]),
        "position_offset": PositionConstraint(
            model, third, [-1] * 3, [1] * 3, tip, [0.0, 0.2, 0.1], X_AbarA=X_OFFSET),
        "position_world": PositionConstraint(model, "universe", [-1] * 3, [1] * 3, tip,
                                             [0.1, 0.1, 0.1]),
        "orientation": OrientationConstraint(model, other, rot_x(0.3), tip, rot_z(1.1), 0.2),
        "gaze": GazeTargetConstraint(model, tip, [0.0, 0.1, 0.05], [0.3, -1.0, 2.0], other,
                                     [0.1, 0.0, 0.2], 0.4),
        "angle": AngleBetweenVectorsConstraint(model, other, [1, 2, 3], tip, [0, -1, 0.5],
                                               0.1, 2.0),
        "point_to_point": PointToPointDistanceConstraint(
            model, tip, [0.1, 0, 0], other, [0, 0.05, 0.1], 0.1, 0.5),
        "point_to_line": PointToLineDistanceConstraint(
            model, tip, [0.0, 0.1, 0.0], other, [0.05, 0, 0], [1, 1, 0], 0.0, 0.2),
        "polyhedron": PolyhedronConstraint(model, other, tip, P_GP[:, :2], A_POLY, [1, 2, 3]),
    }


TERM_NAMES = list(_terms(ROBOTS["tiny"](), *FRAMES["tiny"]))
CASES = [(robot, term) for robot in FRAMES for term in TERM_NAMES]


@pytest.mark.parametrize("robot,term_name", CASES)
def test_jacobian_matches_finite_differences(robot, term_name):
    model = ROBOTS[robot]()
    term = _terms(model, *FRAMES[robot])[term_name]
    data = model.createData()
    for q in random_configurations(model, 8, seed=hash(term_name) % 1000):
        update_kinematics(model, data, q)
        value, jacobian = term.evaluate(model, data, q)
        assert value.shape == term.lower_bound.shape == term.upper_bound.shape
        assert jacobian.shape == (term.num_constraints, model.nv)
        numeric = finite_difference(term, model, data, q)
        scale = max(1.0, float(np.abs(numeric).max()))
        np.testing.assert_allclose(jacobian, numeric, atol=1e-6 * scale, err_msg=term_name)


@pytest.mark.parametrize("robot", ["panda", "tiny"])
def test_joint_bounds_jacobian_matches_finite_differences(robot):
    model = ROBOTS[robot]()
    names = [name for name, joint in zip(model.names[1:], model.joints[1:]) if joint.nv == 1]
    term = JointBoundsConstraint(model, {name: (-1.0, 1.0) for name in names[::-1]})
    data = model.createData()
    for q in random_configurations(model, 5, seed=3):
        update_kinematics(model, data, q)
        _, jacobian = term.evaluate(model, data, q)
        np.testing.assert_allclose(jacobian, finite_difference(term, model, data, q),
                                   atol=1e-7)


def test_finite_difference_detects_a_wrong_jacobian():
    """The check itself can fail: a constraint with a sign error is caught."""
    model = ROBOTS["tiny"]()
    good = _terms(model, *FRAMES["tiny"])["position"]

    class Wrong(PositionConstraint):
        def evaluate(self, model, data, q):
            value, jacobian = super().evaluate(model, data, q)
            return value, -jacobian

    wrong = Wrong(model, "side_link", [-1] * 3, [1] * 3, "tool", [0.1, 0, 0.05])
    data = model.createData()
    q = random_configurations(model, 1, seed=5)[0]
    update_kinematics(model, data, q)
    numeric = finite_difference(good, model, data, q)
    assert not np.allclose(wrong.evaluate(model, data, q)[1], numeric, atol=1e-6)


@pytest.mark.parametrize("robot", ["panda", "tiny"])
def test_rigidly_attached_quantities_do_not_depend_on_q(robot):
    """Same frame on both sides: constant value, zero Jacobian (checks the A-side terms)."""
    model = ROBOTS[robot]()
    tip = FRAMES[robot][0]
    X = pin.SE3(rot_x(0.3), np.array([0.1, 0.2, -0.3]))
    terms = [
        PositionConstraint(model, tip, [-1] * 3, [1] * 3, tip, [0.3, -0.2, 0.1], X_AbarA=X),
        OrientationConstraint(model, tip, rot_x(0.2), tip, rot_z(0.5), 0.1),
        AngleBetweenVectorsConstraint(model, tip, [1, 0, 0], tip, [1, 1, 0], 0.0, 1.0),
        PointToPointDistanceConstraint(model, tip, [0, 0, 0], tip, [0.3, 0.4, 0], 0.0, 1.0),
    ]
    values = []
    for q in random_configurations(model, 3, seed=9):
        data = model.createData()
        update_kinematics(model, data, q)
        for term in terms:
            value, jacobian = term.evaluate(model, data, q)
            np.testing.assert_allclose(jacobian, 0.0, atol=1e-12)
            values.append(value)
    expected = [X.actInv(np.array([0.3, -0.2, 0.1])), [np.trace(rot_x(0.2).T @ rot_z(0.5))],
                [np.cos(np.pi / 4)], [0.25]]
    for i, value in enumerate(values):
        np.testing.assert_allclose(value, expected[i % 4], atol=1e-12)


def test_terms_are_shareable_between_threads():
    """One term object, one Data per thread: the same answers as sequentially."""
    from concurrent.futures import ThreadPoolExecutor

    model = ROBOTS["tiny"]()
    terms = list(_terms(model, *FRAMES["tiny"]).values())
    configurations = random_configurations(model, 16, seed=4)

    def run(q):
        data = model.createData()
        update_kinematics(model, data, q)
        return np.concatenate([term.evaluate(model, data, q)[1].ravel() for term in terms])

    sequential = [run(q) for q in configurations]
    with ThreadPoolExecutor(max_workers=4) as pool:
        parallel = list(pool.map(run, configurations))
    for a, b in zip(sequential, parallel):
        np.testing.assert_array_equal(a, b)
