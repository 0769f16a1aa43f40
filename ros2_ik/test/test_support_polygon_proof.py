"""The support polygon's own proof that a CoM margin cannot hold (issue 47).

The inradius is checked against an independent linear program (scipy's HiGHS, the
Chebyshev centre), the proof's answer against it, and a solve on Talos answers
NO_SOLUTION from the proof (its message) on a margin deeper than the feet allow.
"""
import numpy as np
import pinocchio as pin
import pytest
from scipy.optimize import linprog

from ros2_ik.core import constraints as C
from ros2_ik.core.constraints.support_polygon import inradius
from ros2_ik.core.problem import Problem
from ros2_ik.core.solve import solve

from test_whole_body import _humanoid, talos  # noqa: F401 (a fixture)


def _chebyshev_radius(points_xy: np.ndarray) -> float:
    """Largest disc inside the hull of ``points_xy``: max r, A x + r |a| <= b (HiGHS)."""
    from scipy.spatial import ConvexHull
    hull = ConvexHull(points_xy)
    A, b = hull.equations[:, :2], -hull.equations[:, 2]  # A x <= b, |A_i| = 1
    res = linprog([0.0, 0.0, -1.0], A_ub=np.column_stack((A, np.ones(len(A)))), b_ub=b,
                  bounds=[(None, None)] * 2 + [(0.0, None)], method="highs")
    return -res.fun


def _polygon(model, points_xy, margin, normal=(0.0, 0.0, 1.0)):
    points = np.column_stack((points_xy, np.zeros(len(points_xy))))
    return C.ComInSupportPolygonConstraint(model, points, margin, normal)


def test_inradius_against_a_linear_program():
    model = pin.buildSampleModelManipulator()
    rng = np.random.default_rng(3)
    for _ in range(30):
        pts = rng.uniform(-0.3, 0.3, (int(rng.integers(3, 12)), 2)) + rng.uniform(-1, 1, 2)
        c = _polygon(model, pts, 0.0)
        expected = _chebyshev_radius(pts)
        assert inradius(c._inward, c._b) == pytest.approx(expected, abs=1e-9)
        assert _polygon(model, pts, expected - 1e-6).impossible() is None
        reason = _polygon(model, pts, expected + 1e-4).impossible()
        assert reason is not None and "inradius" in reason


def test_a_rectangle_of_feet_allows_half_its_width():
    model = pin.buildSampleModelManipulator()
    feet = np.array([[0.2, 0.15], [0.2, -0.15], [-0.2, 0.15], [-0.2, -0.15]])
    assert _polygon(model, feet, 0.149).impossible() is None
    assert "0.15" in _polygon(model, feet, 0.151).impossible()


def test_talos_margin_deeper_than_the_feet_is_no_solution_from_the_proof(talos):  # noqa: F811
    robot, g = talos
    model = robot.model
    _, cons, target = _humanoid(robot, g, np.random.default_rng(7))
    poly = cons[2]
    deep = C.ComInSupportPolygonConstraint(
        model, np.column_stack((poly.vertices, np.zeros(len(poly.vertices)))),
        margin=inradius(poly._inward, poly._b) + 0.01, name="com_deep")
    seed = g.mid_configuration()
    seed[2] = 1.0
    res = solve(g, Problem(g, target, cons[:2] + [deep]), seed, timeout_s=5.0, random_seed=0)
    assert res.status.name == "NO_SOLUTION"
    assert "com_deep" in res.message and "inradius" in res.message
    assert res.restarts == 0  # one attempt for the best available, not the budget's


def test_measure_rows_against_pinocchio_com_and_scipy_hull():
    """The verification's rows: the margin less the projected CoM's depth inside each edge.

    The CoM from ``pin.centerOfMass``, the edges from scipy's hull (row order aside).
    """
    from scipy.spatial import ConvexHull
    from ros2_ik.core.kinematics.frames import Placements
    model = pin.buildSampleModelManipulator()
    data = model.createData()
    rng = np.random.default_rng(5)
    for _ in range(20):
        pts = rng.uniform(-0.4, 0.4, (int(rng.integers(3, 9)), 2))
        margin = float(rng.uniform(0.0, 0.1))
        c = _polygon(model, pts, margin)
        q = pin.randomConfiguration(model)
        pin.framesForwardKinematics(model, data, q)
        com = pin.centerOfMass(model, data, q)
        eq = ConvexHull(pts).equations  # A x + e <= 0 inside, |A_i| = 1
        depth = -(eq[:, :2] @ com[:2] + eq[:, 2])
        expected = np.maximum(margin - depth, 0.0)
        rows = c.measure_rows(Placements.of(model, data, q))
        assert len(rows) == len(expected)
        assert np.sort(rows) == pytest.approx(np.sort(expected), abs=1e-12)
