"""The one-construction argument checks agree with the checks one by one (_checks.py).

``vectors3`` and ``box_and_point`` parse several arguments in one array construction
when they are well formed and hand anything else to ``vector3`` / ``unit_vector3`` /
``box_bounds``; constraints keep their bounds read-only whichever way they came.
"""
import math

import numpy as np
import pytest

from ros2_ik.core import constraints as C
from ros2_ik.core import robots
from ros2_ik.core.constraints import _checks as check
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
def test_vectors3_equals_the_checks_one_by_one_bit_for_bit(units):
    rng = np.random.default_rng(len(units))
    for _ in range(200):
        values = [rng.normal(size=3) * rng.choice([1e-3, 1.0, 1e3]) for _ in range(3)]
        values[0] = np.round(values[0])  # some whole numbers too
        if 0 in units and not np.any(values[0]):
            values[0][0] = 1.0
        for forms in zip(*(list(_forms(v))[:3] for v in values)):
            got = check.vectors3(forms, ("a", "b", "c"), units=units)
            want = [check.unit_vector3(v, "x") if k in units else check.vector3(v, "x")
                    for k, v in enumerate(forms)]
            assert all(_same(g, w) for g, w in zip(got, want))
            assert not any(g.flags.writeable for g in got)


@pytest.mark.parametrize("bad,arg", [
    ((1.0, 2.0), "b"), ((math.nan, 0, 0), "b"), ((0, INF, 0), "b"),
    ("xyz", "b"), ([[1, 2, 3]], "b"), ((0, 0, 0), "c"),
])
def test_vectors3_names_the_bad_argument(bad, arg):
    values = [[1.0, 0, 0], [0, 1.0, 0], [0, 0, 1.0]]
    values["abc".index(arg)] = bad
    with pytest.raises(InvalidGoal, match=rf"^{arg} "):
        check.vectors3(values, ("a", "b", "c"), units=(2,))


@pytest.mark.parametrize("lower,upper", [
    ([0.1, 0.2, 0.3], [0.4, 0.5, 0.6]), ([-INF, 0.0, -INF], [INF, 0.1, 2.0]),
    (np.array([-1.0, -1, -1]), (1, 1, 1)), ([0.5, 0.5, 0.5], [0.5, 0.5, 0.5]),
])
def test_box_and_point_equals_box_bounds_and_vector3(lower, upper):
    point = [0.0, 0.0, 0.1]
    lo, hi, p = check.box_and_point(lower, upper, point, "lo", "hi", "p")
    want_lo, want_hi = check.box_bounds(lower, upper, "lo", "hi")
    assert type(lo) is list and type(hi) is list
    assert _same(np.array(lo), want_lo) and _same(np.array(hi), want_hi)
    assert _same(p, check.vector3(point, "p"))
    assert not p.flags.writeable


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
