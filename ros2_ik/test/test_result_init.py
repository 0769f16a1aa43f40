"""Solution and IKResult: their own ``__init__`` keeps the frozen dataclasses' behaviour."""
import dataclasses
import math

import numpy as np
import pytest

from ros2_ik.core.result import IKResult, IKStatus, Solution


def _result(q, **extra):
    return IKResult(q, ("a", "b"), IKStatus.SUCCESS, 7, 0, math.nan, math.nan, 0.001, 3,
                    **extra)


def test_q_is_a_read_only_copy_and_the_fields_are_frozen():
    q = np.array([0.1, 0.2])
    for made in (Solution(q, math.nan, math.nan, 0.5), _result(q)):
        q[0] = 9.0  # the caller's array stays theirs
        assert made.q.tolist() == [0.1, 0.2] and not made.q.flags.writeable
        with pytest.raises(dataclasses.FrozenInstanceError):
            made.q = q
        with pytest.raises(ValueError):
            made.q[0] = 1.0


def test_every_field_is_set_with_its_default():
    solution = Solution(q=[0.0, 1.0], position_error_m=1e-5, orientation_error_rad=2e-5,
                        distance_to_seed=0.5)
    result = _result([0.0, 1.0])
    assert [f.name for f in dataclasses.fields(IKResult)] == list(vars(result))
    assert [f.name for f in dataclasses.fields(Solution)] == list(vars(solution))
    assert (result.violations, result.solutions, result.message, result.solver) == \
        ((), (), "", "")
    assert solution.distance_to_seed == 0.5 and result.iterations == 7 and result.success


def test_equality_and_repr_come_from_the_fields():
    a = Solution(np.zeros(2), 0.0, 0.0, 0.0)
    assert a == dataclasses.replace(a) and a != dataclasses.replace(a, distance_to_seed=1.0)
    assert repr(a).startswith("Solution(q=array([0., 0.])")
    kept = _result(np.zeros(2), solutions=(a,), message="m", solver="lm")
    assert kept.solutions == (a,) and "solver='lm'" in repr(kept)
