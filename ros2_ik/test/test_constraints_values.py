"""Values of every constraint on hand-made cases, and satisfied / violated classification.

The planar 2R arm (links 1 m and 0.5 m about z) has closed-form kinematics:
tip = (cos q1 + 0.5 cos(q1 + q2), sin q1 + 0.5 sin(q1 + q2), 0).
"""
from __future__ import annotations

import math

import numpy as np
import pinocchio as pin
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_constraints_fixtures import ROBOTS, evaluate_at, planar_2r, rot_x, rot_z, tiny

from ros2_ik.core.constraints import (
    AngleBetweenVectorsConstraint,
    GazeTargetConstraint,
    JointBoundsConstraint,
    LockedJointConstraint,
    OrientationConstraint,
    PointToLineDistanceConstraint,
    PointToPointDistanceConstraint,
    PolyhedronConstraint,
    PositionConstraint,
    update_kinematics,
)
from ros2_ik.core.kinematics.frames import perpendicular, projection_off


def _tip(q1, q2):
    return np.array([math.cos(q1) + 0.5 * math.cos(q1 + q2),
                     math.sin(q1) + 0.5 * math.sin(q1 + q2), 0.0])


def _satisfied(term, q, model=None):
    value, _ = evaluate_at(term, model or planar_2r(), np.asarray(q, dtype=float))
    return not term.violation(value).any()


@pytest.mark.parametrize("q", [(0.0, 0.0), (0.4, -1.1), (2.0, 0.7)])
def test_position_in_world_and_in_a_moving_frame(q):
    model = planar_2r()
    world = PositionConstraint(model, "universe", [-2] * 3, [2] * 3, "link2", [0.5, 0, 0])
    np.testing.assert_allclose(evaluate_at(world, model, np.array(q))[0], _tip(*q), atol=1e-12)
    in_link1 = PositionConstraint(model, "link1", [-2] * 3, [2] * 3, "tip", [0, 0, 0])
    expected = [1 + 0.5 * math.cos(q[1]), 0.5 * math.sin(q[1]), 0.0]
    np.testing.assert_allclose(evaluate_at(in_link1, model, np.array(q))[0], expected,
                               atol=1e-12)


def test_position_with_offset_frame_A():
    """A = link1 moved to the elbow and turned +90 deg about z: p_AQ = Rz(-90)(tip - elbow)."""
    model = planar_2r()
    X_AbarA = pin.SE3(rot_z(math.pi / 2), np.array([1.0, 0, 0]))
    term = PositionConstraint(model, "link1", [-1] * 3, [1] * 3, "tip", [0, 0, 0], X_AbarA)
    q2 = 0.8
    value, _ = evaluate_at(term, model, np.array([1.3, q2]))
    np.testing.assert_allclose(value, [0.5 * math.sin(q2), -0.5 * math.cos(q2), 0], atol=1e-12)
    homogeneous = PositionConstraint(model, "link1", [-1] * 3, [1] * 3, "tip", [0, 0, 0],
                                     X_AbarA.homogeneous)
    np.testing.assert_allclose(evaluate_at(homogeneous, model, np.array([1.3, q2]))[0], value)


def test_position_box_classification_with_a_free_axis():
    model = planar_2r()
    box = PositionConstraint(model, "universe", [1.4, -0.1, -math.inf], [1.6, 0.1, math.inf],
                             "tip", [0, 0, 0])
    assert _satisfied(box, [0.0, 0.0])
    assert not _satisfied(box, [0.5, 0.0])
    value, _ = evaluate_at(box, model, np.array([0.0, math.pi / 2]))  # tip at (1, 0.5)
    np.testing.assert_allclose(box.violation(value), [0.4, 0.4, 0.0], atol=1e-12)


@pytest.mark.parametrize("angle", [0.0, 0.3, 1.2, 2.5, math.pi - 1e-3])
def test_orientation_of_a_frame_rotated_by_a_known_angle(angle):
    """B = base rotated by ``angle`` about x; the trace gives exactly that angle."""
    model = planar_2r()
    term = OrientationConstraint(model, "universe", np.eye(3), "link2", rot_x(angle), 0.1)
    value, _ = evaluate_at(term, model, np.zeros(2))
    assert math.acos(np.clip((value[0] - 1) / 2, -1, 1)) == pytest.approx(angle, abs=1e-6)
    assert term.lower_bound[0] == pytest.approx(2 * math.cos(0.1) + 1)


def test_orientation_classification_follows_the_joint_angle():
    model = planar_2r()
    for bound, q_sum, expected in [(0.5, 0.49, True), (0.5, 0.51, False), (0.0, 0.0, True),
                                   (math.pi, 3.0, True), (1.0, -1.2, False)]:
        term = OrientationConstraint(model, "base_link", np.eye(3), "tip", np.eye(3), bound)
        assert _satisfied(term, [0.3, q_sum - 0.3]) is expected, (bound, q_sum)


def test_orientation_frame_offsets_compose():
    """Offsets on both sides: R_AB = R_AbarA^T R_WAbar^T R_WBbar R_BbarB."""
    model = planar_2r()
    term = OrientationConstraint(model, "base_link", rot_z(0.2), "tip", rot_z(-0.1), 0.0)
    value, _ = evaluate_at(term, model, np.array([0.2, 0.1]))  # angle 0.3 - 0.2 - 0.1 = 0
    assert value[0] == pytest.approx(3.0, abs=1e-12)
    assert not term.violation(value).any()


def test_gaze_values_are_drakes_two_rows():
    model = planar_2r()
    theta = 0.4
    term = GazeTargetConstraint(model, "universe", [0, 0, 0], [2, 0, 0], "tip", [0, 0, 0],
                                theta)
    value, _ = evaluate_at(term, model, np.zeros(2))  # target on the axis at 1.5 m
    np.testing.assert_allclose(value, [1.5, 1.5 ** 2 * (1 - math.cos(theta) ** 2)], atol=1e-12)


@pytest.mark.parametrize("cone,q1,expected", [
    (0.6, 0.5, True), (0.4, 0.5, False), (0.4, -0.35, True), (1.5, 1.45, True),
    (1.5, 2.0, False), (0.0, 0.0, True)])
def test_gaze_classification(cone, q1, expected):
    """Tip direction is q1 off the x axis (q2 = 0); behind the source is always outside."""
    term = GazeTargetConstraint(planar_2r(), "universe", [0, 0, 0], [1, 0, 0], "tip",
                                [0, 0, 0], cone)
    assert _satisfied(term, [q1, 0.0]) is expected


def test_gaze_target_behind_the_source_violates_the_first_row():
    term = GazeTargetConstraint(planar_2r(), "universe", [0, 0, 0], [1, 0, 0], "tip",
                                [0, 0, 0], 0.3)
    value, _ = evaluate_at(term, planar_2r(), np.array([math.pi - 0.01, 0.0]))
    assert value[0] < 0 and value[1] > 0  # the squared row alone would accept it


@pytest.mark.parametrize("q_sum", [0.0, 0.7, 2.0, -2.9])
def test_angle_between_vectors_value_is_the_cosine(q_sum):
    model = planar_2r()
    term = AngleBetweenVectorsConstraint(model, "universe", [3, 0, 0], "tip", [0.1, 0, 0],
                                         0.0, math.pi)
    value, _ = evaluate_at(term, model, np.array([0.0, q_sum]))
    assert value[0] == pytest.approx(math.cos(q_sum), abs=1e-12)


def test_angle_between_vectors_classification():
    model = planar_2r()
    term = AngleBetweenVectorsConstraint(model, "universe", [1, 0, 0], "tip", [0, 1, 0],
                                         0.5, 1.0)  # b = y of tip: angle = pi/2 + q1 + q2
    np.testing.assert_allclose([term.lower_bound[0], term.upper_bound[0]],
                               [math.cos(1.0), math.cos(0.5)])
    assert _satisfied(term, [-0.5, -0.3])      # pi/2 - 0.8 = 0.77
    assert not _satisfied(term, [-0.5, 0.0])   # 1.07
    assert not _satisfied(term, [-0.8, -0.4])  # 0.37


def test_point_to_point_distance_is_squared_with_bounds_in_metres():
    model = planar_2r()
    term = PointToPointDistanceConstraint(model, "tip", [0, 0, 0], "universe", [0, 0, 0],
                                          1.4, 1.6)
    value, _ = evaluate_at(term, model, np.array([0.7, 0.0]))
    assert value[0] == pytest.approx(1.5 ** 2)
    assert (term.lower_bound[0], term.upper_bound[0]) == pytest.approx((1.4 ** 2, 1.6 ** 2))
    assert (term.distance_lower, term.distance_upper) == (1.4, 1.6)
    assert _satisfied(term, [0.7, 0.0])
    assert not _satisfied(term, [0.0, math.pi / 2])  # |tip| = sqrt(1.25) = 1.118
    unbounded = PointToPointDistanceConstraint(model, "tip", [0, 0, 0], "link1", [0, 0, 0],
                                               1.0, math.inf)
    assert _satisfied(unbounded, [0.0, 1.0])  # tip is 1.118 m from link1's origin


def test_point_to_line_distance():
    """Line along x through the base: the distance is |y| of the tip."""
    model = planar_2r()
    term = PointToLineDistanceConstraint(model, "tip", [0, 0, 0], "universe", [5, 0, 0],
                                         [-2, 0, 0], 0.0, 0.3)
    q = np.array([0.4, 0.3])
    value, _ = evaluate_at(term, model, q)
    assert value[0] == pytest.approx(_tip(*q)[1] ** 2, abs=1e-12)
    assert not _satisfied(term, q)          # |y| = 0.71
    assert _satisfied(term, [0.1, -0.1])    # |y| = 0.0998


def test_polyhedron_rows_stack_points_in_frame_F():
    model = planar_2r()
    p_GP = np.array([[0.0, -0.5], [0.0, 0.0], [0.0, 0.0]])  # tip, then the elbow
    A = np.array([[1.0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 1.0, 0], [1.0, 0, 0, -1.0, 0, 0]])
    term = PolyhedronConstraint(model, "universe", "tip", p_GP, A, [1.4, 0.5, 0.6])
    q = np.array([0.6, -0.4])
    value, jacobian = evaluate_at(term, model, q)
    tip, elbow = _tip(*q), np.array([math.cos(0.6), math.sin(0.6), 0])
    np.testing.assert_allclose(value, [tip[0], elbow[1], tip[0] - elbow[0]], atol=1e-12)
    assert jacobian.shape == (3, 2)
    np.testing.assert_allclose(term.violation(value), [0, math.sin(0.6) - 0.5, 0], atol=1e-12)
    assert np.isneginf(term.lower_bound).all()


def test_joint_bounds_on_revolute_and_continuous_joints():
    model = tiny()
    term = JointBoundsConstraint(model, {"j2": (-3.0, -2.5), "j1": (-0.5, 0.5)})
    q = pin.neutral(model)
    q[0] = 0.7
    j2 = model.joints[model.getJointId("j2")].idx_q
    q[j2:j2 + 2] = [math.cos(-2.8), math.sin(-2.8)]
    value, jacobian = evaluate_at(term, model, q)
    np.testing.assert_allclose(value, [-2.8, 0.7], atol=1e-12)
    np.testing.assert_allclose(term.violation(value), [0.0, 0.2], atol=1e-12)
    np.testing.assert_array_equal(jacobian, [[0, 1, 0, 0], [1, 0, 0, 0]])
    assert term.joint_names == ("j2", "j1")


def test_locked_joint_is_equal_bounds():
    term = LockedJointConstraint(planar_2r(), {"joint2": 0.25})
    np.testing.assert_array_equal(term.lower_bound, term.upper_bound)
    assert _satisfied(term, [1.0, 0.25]) and not _satisfied(term, [1.0, 0.26])


def test_default_and_custom_names():
    model = planar_2r()
    assert PositionConstraint(model, "universe", [0] * 3, [0] * 3, "tip", [0] * 3
                              ).name == "position(tip)"
    named = OrientationConstraint(model, "universe", np.eye(3), "tip", np.eye(3), 0.1,
                                  name="keep level")
    assert named.name == "keep level" and "keep level" in repr(named)


def test_terms_hold_no_data_and_do_not_recompute_kinematics():
    """evaluate() reads the kinematics the caller computed, even for another q."""
    model = ROBOTS["tiny"]()
    term = PositionConstraint(model, "side_link", [-1] * 3, [1] * 3, "tool", [0.1, 0, 0])
    assert not any(isinstance(v, pin.Data) for v in vars(term).values())
    data = model.createData()
    q_a, q_b = pin.neutral(model), pin.randomConfiguration(model)
    update_kinematics(model, data, q_a)
    stale, _ = term.evaluate(model, data, q_b)
    np.testing.assert_allclose(stale, evaluate_at(term, model, q_a)[0])


def test_bounds_are_read_only():
    term = PositionConstraint(planar_2r(), "universe", [0] * 3, [1] * 3, "tip", [0] * 3)
    with pytest.raises(ValueError):
        term.lower_bound[0] = 5.0


_unit = st.lists(st.floats(-1, 1), min_size=3, max_size=3).filter(
    lambda v: np.linalg.norm(v) > 0.1)


@settings(max_examples=40, deadline=None)
@given(axis=_unit, angle=st.floats(0.0, math.pi), offset=_unit, q=st.floats(-3, 3))
def test_orientation_angle_for_any_axis_and_offset(axis, angle, offset, q):
    """R_BbarB = exp(angle * axis) on top of the same frame: theta is exactly ``angle``."""
    model = planar_2r()
    R_off = pin.exp3(np.array(offset))
    axis = np.array(axis) / np.linalg.norm(axis)
    term = OrientationConstraint(model, "tip", R_off, "tip", R_off @ pin.exp3(angle * axis),
                                 angle)
    value, _ = evaluate_at(term, model, np.array([q, -q / 2]))
    assert value[0] == pytest.approx(1 + 2 * math.cos(angle), abs=1e-9)
    assert term.violation(value)[0] <= 1e-9


@settings(max_examples=40, deadline=None)
@given(a=_unit, b=_unit, q=st.floats(-3, 3))
def test_angle_between_vectors_for_any_vectors(a, b, q):
    """Both vectors in the same moving frame: the value is the cosine of their angle."""
    model = planar_2r()
    term = AngleBetweenVectorsConstraint(model, "link2", a, "link2", b, 0.0, math.pi)
    value, _ = evaluate_at(term, model, np.array([q, 0.3]))
    a, b = np.array(a), np.array(b)
    assert value[0] == pytest.approx(a @ b / np.linalg.norm(a) / np.linalg.norm(b), abs=1e-12)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([-math.inf, -2.0, -0.5, 0.0, 0.5, 2.0, math.inf, math.nan]),
                min_size=3, max_size=3),
       st.lists(st.floats(-1.0, 1.0), min_size=3, max_size=3))
def test_violation_is_the_distance_outside_the_bounds(value, half_width):
    """Per row max(lower - v, v - upper, 0), NaN where numpy's formula gives NaN."""
    lower = np.array([-1.0, -math.inf, -0.25])
    upper = np.array([1.0, 0.5, math.inf])
    c = PositionConstraint(planar_2r(), "universe", lower, upper, "universe", np.zeros(3))
    v = np.array(value) + np.array(half_width)
    expected = np.maximum(np.maximum(lower - v, v - upper), 0.0)
    np.testing.assert_array_equal(c.violation(v), expected)


@settings(max_examples=200, deadline=None)
@given(n=_unit)
def test_perpendicular_and_projection_of_any_direction(n):
    """perpendicular(n) is a unit vector normal to n; projection_off(n) is I - n n^T."""
    n = np.array(n) / np.linalg.norm(n)
    p = perpendicular(n)
    assert abs(p @ n) <= 1e-12 and abs(np.linalg.norm(p) - 1.0) <= 1e-12
    np.testing.assert_allclose(projection_off(n), np.eye(3) - np.outer(n, n), atol=1e-15)
    for axis in np.eye(3):  # on an axis, and between two (ties choose the first axis)
        for m in (axis, -axis, (axis + np.roll(axis, 1)) / math.sqrt(2.0)):
            p = perpendicular(m)
            assert abs(p @ m) <= 1e-12 and abs(np.linalg.norm(p) - 1.0) <= 1e-12


def test_frame_id_sees_frames_added_later_and_keeps_the_first_of_a_name():
    """The per-model table answers known names without asking the model; added frames count."""
    from ros2_ik.core.errors import InvalidFrame
    from ros2_ik.core.kinematics.frames import frame_id
    model = planar_2r()
    tip = frame_id(model, "tip")
    with pytest.raises(InvalidFrame):
        frame_id(model, "added")
    parent = model.frames[tip].parentJoint
    added = model.addFrame(pin.Frame("added", parent, tip, pin.SE3.Identity(),
                                     pin.FrameType.OP_FRAME))
    assert frame_id(model, "added") == added
    model.addFrame(pin.Frame("tip", parent, tip, pin.SE3.Identity(), pin.FrameType.OP_FRAME))
    assert frame_id(model, "tip") == tip  # the first frame of that name, as before
    with pytest.raises(InvalidFrame):
        frame_id(model, "missing")


def test_bounded_constraint_takes_numbers_lists_and_arrays_as_bounds():
    """A subclass may give one-row bounds as numbers; the arrays and lists agree."""
    from ros2_ik.core.constraints._base import BoundedConstraint

    class Row(BoundedConstraint):
        def evaluate(self, model, data, q):
            return np.zeros(self.num_constraints), np.zeros((self.num_constraints, 1))

    for lower, upper in ((-1.0, 2.0), ([-1.0], [2.0]), (np.array([-1.0]), np.array([2.0]))):
        row = Row("row", lower, upper)
        assert row.num_constraints == 1
        assert row.bound_lists() == ([-1.0], [2.0])
        assert row.physical_lists() == ([-1.0], [2.0])
        np.testing.assert_array_equal(row.lower_bound, [-1.0])
        assert not row.upper_bound.flags.writeable
