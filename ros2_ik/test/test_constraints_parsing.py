"""The list-making argument checks agree with the checks on arrays (checks.py).

``vector_lists``, ``box_and_point`` and ``rotation_list`` read well-formed arguments as
floats without an array and hand anything else to ``vector3`` / ``unit_vector3`` /
``box_bounds`` / ``array_of_shape``; terms keep those floats and make their arrays, and
their bounds' arrays, read-only when first read, whichever way they came.
"""
import math

import numpy as np
import pytest

from ros2_ik.core import constraints as C
from ros2_ik.core import costs as K
from ros2_ik.core import robots
from ros2_ik.core.constraints import checks as check
from ros2_ik.core.errors import InvalidGoal
from ros2_ik.core.problem import Problem
from ros2_ik.core.solvers import constraint_kernel as ck
from ros2_ik.core.verify import ConstraintTolerance

INF = math.inf


def _forms(v):
    """The same 3-vector as a list, a tuple, a float array and (when whole) ints."""
    yield list(v)
    yield tuple(v)
    yield np.array(v, dtype=float)
    if all(float(x).is_integer() for x in v):
        yield [int(x) for x in v]


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and a.tobytes() == b.tobytes()


@pytest.mark.parametrize("units", [(), (0,), (1,), (0, 2), (0, 1, 2)])
def test_vector_lists_equal_the_checks_one_by_one_bit_for_bit(units):
    rng = np.random.default_rng(len(units))
    for _ in range(200):
        values = [rng.normal(size=3) * rng.choice([1e-3, 1.0, 1e3]) for _ in range(3)]
        values[0] = np.round(values[0])  # some whole numbers too
        if 0 in units and not np.any(values[0]):
            values[0][0] = 1.0
        for forms in zip(*(list(_forms(v))[:3] for v in values)):
            got = check.vector_lists(forms, ("a", "b", "c"), units=units)
            want = [check.unit_vector3(v, "x") if k in units else check.vector3(v, "x")
                    for k, v in enumerate(forms)]
            assert all(type(g) is list and _same(np.array(g), w) for g, w in zip(got, want))


@pytest.mark.parametrize("bad,arg", [
    ((1.0, 2.0), "b"), ((math.nan, 0, 0), "b"), ((0, INF, 0), "b"),
    ("xyz", "b"), ([[1, 2, 3]], "b"), ((0, 0, 0), "c"), (np.zeros(3, dtype=np.float32), "c"),
    (np.array([1.0, math.nan, 0.0]), "b"),
])
def test_vector_lists_name_the_bad_argument(bad, arg):
    values = [[1.0, 0, 0], [0, 1.0, 0], [0, 0, 1.0]]
    values["abc".index(arg)] = bad
    with pytest.raises(InvalidGoal, match=rf"^{arg} "):
        check.vector_lists(values, ("a", "b", "c"), units=(2,))


def test_other_arrays_are_read_as_the_array_checks_read_them():
    for value in (np.array([1, 2, 3]), np.array([0.5, 1.5, 2.5], dtype=np.float32),
                  np.array([[1.0], [2.0], [3.0]]).ravel(), np.arange(6.0)[::2]):
        (got,) = check.vector_lists((value,), ("a",))
        assert _same(np.array(got), check.vector3(value, "a"))


def test_rotation_list_equals_rotation_and_names_the_argument():
    rng = np.random.default_rng(3)
    for _ in range(50):
        R = np.linalg.qr(rng.normal(size=(3, 3)))[0]
        R *= np.sign(np.linalg.det(R))
        for form in (R, R.tolist(), np.asfortranarray(R)):
            got = check.rotation_list(form, "R")
            want = check.array_of_shape(R, (3, 3), "R")
            assert type(got) is list and _same(np.array(got).reshape(3, 3), want)
    for bad, message in ((np.full((3, 3), math.nan), "contains NaN"), (-np.eye(3), "determinant"),
                         (2 * np.eye(3), "orthonormal"), (np.eye(2), "shape")):
        with pytest.raises(InvalidGoal, match=rf"^R .*{message}"):
            check.rotation_list(bad, "R")


def test_terms_make_their_arrays_when_first_read_read_only(panda):
    _, group = panda
    model = group.robot.model
    R = np.array([[0.0, -1, 0], [1, 0, 0], [0, 0, 1]])
    terms = [
        (C.GazeTargetConstraint(model, "universe", [0, 0, 0.5], (0, 0, 2), "panda_hand",
                                np.array([0, 0, 0.1]), 0.2),
         {"_p_AS": [0, 0, 0.5], "_n_A": [0, 0, 1], "_p_BT": [0, 0, 0.1]}),
        (C.OrientationConstraint(model, "universe", R, "panda_hand", R.T.tolist(), 0.3),
         {"_R_AbarA": R, "_R_BbarB": R.T}),
        (C.PointToLineDistanceConstraint(model, "panda_hand", [0, 0, 0.1], "universe",
                                         [1, 2, 3], [0, 3, 4], 0.0, 0.1),
         {"_p_B1P": [0, 0, 0.1], "_p_B2Q": [1, 2, 3], "_n_B2": [0, 0.6, 0.8]}),
        (K.PositionCost(model, "universe", [0, 0, 1], "panda_hand", [0, 0, 0.1],
                        np.diag([1.0, 4.0, 0.0])),
         {"_p_AP": [0, 0, 1], "_Lt": np.diag([math.sqrt(2), math.sqrt(8), 0.0])}),
        (K.AngleBetweenVectorsCost(model, "universe", [0, 0, 3], "panda_hand", [2, 0, 0], 1.0),
         {"_a_A": [0, 0, 1], "_b_B": [1, 0, 0]}),
    ]
    for term, arrays in terms:
        for name, want in arrays.items():
            assert name not in vars(term)  # not made by the constructor
            got = getattr(term, name)
            assert got is getattr(term, name) and not got.flags.writeable
            np.testing.assert_allclose(got, want, rtol=0, atol=1e-15)


@pytest.mark.parametrize("lower,upper", [
    ([0.1, 0.2, 0.3], [0.4, 0.5, 0.6]), ([-INF, 0.0, -INF], [INF, 0.1, 2.0]),
    (np.array([-1.0, -1, -1]), (1, 1, 1)), ([0.5, 0.5, 0.5], [0.5, 0.5, 0.5]),
])
def test_box_and_point_equals_box_bounds_and_vector3(lower, upper):
    point = [0.0, 0.0, 0.1]
    lo, hi, p = check.box_and_point(lower, upper, point, "lo", "hi", "p")
    want_lo, want_hi = check.box_bounds(lower, upper, "lo", "hi")
    assert type(lo) is list and type(hi) is list and type(p) is list
    assert _same(np.array(lo), want_lo) and _same(np.array(hi), want_hi)
    assert _same(np.array(p), check.vector3(point, "p"))


@pytest.mark.parametrize("lower,upper,point,arg", [
    ([INF, 0, 0], [INF, 1, 1], [0, 0, 0], "lo"),
    ([0, 0, 0], [1, -INF, 1], [0, 0, 0], "hi"),
    ([0, 2, 0], [1, 1, 1], [0, 0, 0], "lo"),
    ([0, math.nan, 0], [1, 1, 1], [0, 0, 0], "lo"),
    ([0, 0, 0], [1, 1, 1], [0, INF, 0], "p"),
    ([0, 0, 0], [1, 1], [0, 0, 0], "hi"),
])
def test_box_and_point_names_the_bad_argument(lower, upper, point, arg):
    with pytest.raises(InvalidGoal, match=rf"^{arg} "):
        check.box_and_point(lower, upper, point, "lo", "hi", "p")


@pytest.fixture(scope="module")
def panda():
    return robots.load_group("panda")


def test_bounds_of_any_length_are_read_only_arrays(panda):
    _, group = panda
    model = group.robot.model
    gaze = C.GazeTargetConstraint(model, "universe", [0, 0, 0], [0, 0, 1], "panda_hand",
                                  [0, 0, 0.1], 0.2)  # 2 rows, 1 physical row
    pos = C.PositionConstraint(model, "universe", [-1, -1, 0], [1, 1, INF], "panda_hand",
                               (0, 0, 0))
    for c, m, physical in ((gaze, 2, 1), (pos, 3, 3)):
        for b in (c.lower_bound, c.upper_bound, *c.physical_bounds):
            assert b.dtype == np.float64 and not b.flags.writeable
        assert c.lower_bound.shape == c.upper_bound.shape == (m,)
        assert c.physical_bounds[0].shape == (physical,)
    assert gaze.lower_bound.tolist() == [0.0, 0.0] and gaze.physical_bounds[1][0] == 0.2
    assert pos.upper_bound.tolist() == [1.0, 1.0, INF]


def _problem(group, box_lo, frame="panda_hand"):
    model = group.robot.model
    return Problem(group, None, [
        C.PositionConstraint(model, "universe", box_lo, [0.9, 0.9, 0.9], frame, [0, 0, 0.1]),
        C.OrientationConstraint(model, "universe", np.eye(3), frame, np.eye(3), 0.3)], [])


def test_problems_of_one_shape_share_the_layout_and_keep_their_own_numbers(panda):
    _, group = panda
    tol = ConstraintTolerance()
    a = ck.compile_problem(_problem(group, [0.1, 0.1, 0.1]), tol)
    b = ck.compile_problem(_problem(group, [0.2, 0.2, 0.2]), tol)
    other = ck.compile_problem(_problem(group, [0.1, 0.1, 0.1], "panda_link5"), tol)
    assert a.ctype is b.ctype and a.fplace is b.fplace and a.coff is b.coff
    assert a.fplace is not other.fplace
    assert a.lo[0] != b.lo[0] and a.params.tolist() == b.params.tolist()
    ck._LAYOUTS[group].clear()  # a fresh layout gives the same problem, number for number
    fresh = ck.compile_problem(_problem(group, [0.1, 0.1, 0.1]), tol)
    assert fresh.fplace is not a.fplace
    for name in ("fparent", "fplace", "ctype", "cfa", "cfb", "coff", "params", "lo", "hi",
                 "margin", "pose"):
        assert _same(getattr(fresh, name), getattr(a, name)), name
    assert fresh.frames == a.frames


def test_the_layout_cache_stays_bounded(panda, monkeypatch):
    _, group = panda
    monkeypatch.setattr(ck, "_MAX_LAYOUTS", 3)
    frames = [f.name for f in group.robot.model.frames][:6]
    for name in frames:
        ck.compile_problem(_problem(group, [0.1, 0.1, 0.1], name), ConstraintTolerance())
        assert len(ck._LAYOUTS[group]) <= 3


def test_a_subclass_may_give_bounds_as_numbers_tuples_or_writable_arrays():
    from ros2_ik.core.constraints._base import BoundedConstraint

    class Mine(BoundedConstraint):
        def evaluate(self, model, data, q):
            raise NotImplementedError

    for lower, upper in ((0.0, 1.0), ((0.0, 1.0), (2.0, 3.0)), (np.zeros(2), np.ones(2))):
        c = Mine("mine", lower, upper)
        assert c.lower_bound.tolist() == np.atleast_1d(lower).astype(float).tolist()
        assert c.upper_bound.tolist() == np.atleast_1d(upper).astype(float).tolist()
        assert not c.lower_bound.flags.writeable and c.physical_bounds[1] is c.upper_bound
    given = np.zeros(2)
    assert Mine("mine", given, given + 1).lower_bound is not given  # a copy, read-only
