"""``Group.within_limits_values`` against numpy's comparison, on bounded and continuous joints."""
import math

import numpy as np
import pytest

from ros2_ik.core import robots


@pytest.fixture(scope="module", params=["panda", "kinova"])
def group(request):
    return robots.load_group(request.param)[1]  # kinova: continuous joints (infinite limits)


def _numpy_within(group, q: np.ndarray) -> bool:
    """The independent reading: every value with ``lower <= v <= upper`` (NaN fails)."""
    return bool(np.all((group.lower <= q) & (q <= group.upper)))


def test_agrees_with_numpy_inside_on_and_outside_the_limits(group):
    rng = np.random.default_rng(7)
    lo = np.where(np.isfinite(group.lower), group.lower, -10.0)
    hi = np.where(np.isfinite(group.upper), group.upper, 10.0)
    special = [math.nan, math.inf, -math.inf]
    seen = set()
    for _ in range(400):
        q = rng.uniform(lo - 0.2, hi + 0.2)
        j = rng.integers(group.n)
        pick = rng.integers(6)
        if pick == 0:
            q[j] = group.lower[j]  # on a limit: inside
        elif pick == 1:
            q[j] = group.upper[j]
        elif pick == 2:
            q[j] = special[rng.integers(3)]
        ours = group.within_limits_values(q.tolist())
        assert ours == _numpy_within(group, q), q
        seen.add(ours)
    assert seen == {True, False}  # both answers were exercised


def test_nan_fails_and_a_limit_itself_passes(group):
    q = group.mid_configuration().tolist()
    assert group.within_limits_values(q)
    bounded = int(np.flatnonzero(np.isfinite(group.upper))[0])
    q[bounded] = float(group.upper[bounded])
    assert group.within_limits_values(q)
    q[bounded] = math.nextafter(float(group.upper[bounded]), math.inf)
    assert not group.within_limits_values(q)
    q[bounded] = math.nan
    assert not group.within_limits_values(q)
