"""search.returned_q on lists of floats gives the array path's answer (unwrap, clamp)."""
import math

import numpy as np
import pytest

from ros2_ik.core import constraints as C
from ros2_ik.core import costs as K
from ros2_ik.core import robots
from ros2_ik.core.problem import Problem
from ros2_ik.core.solvers.search import returned_q, unwrapped


@pytest.mark.parametrize("arm", ["panda", "ur5", "pr2_right"])
def test_returned_q_unwraps_and_clamps_as_the_array_path(arm):
    group = robots.load_group(arm)[1]
    model = group.robot.model
    box = C.PositionConstraint(model, group.base, [-1, -1, -1], [1, 1, 1], group.tip,
                               [0, 0, 0])
    plain = Problem(group, None, [box], [])
    rng = np.random.default_rng(6)
    for _ in range(200):
        seed = group.random_configuration(rng)
        q = rng.uniform(-9.0, 9.0, group.n)  # beyond 2 pi, beyond the limits
        want = unwrapped(plain, q, seed)
        want = want if group.within_limits(want) else group.clamp(want)
        got = returned_q(plain, q, seed)
        np.testing.assert_array_equal(got, want)
        assert not got.flags.writeable and got is not q
        assert group.within_limits(got)
    q = np.full(group.n, math.nan)  # not finite: numpy's way, still an answer
    assert returned_q(plain, q, group.mid_configuration()).shape == (group.n,)


def test_with_costs_a_wrapping_joint_keeps_its_value_inside_the_limits():
    group = robots.load_group("ur5")[1]  # revolute joints of range 4 pi: they wrap
    model = group.robot.model
    problem = Problem(group, None, [C.PositionConstraint(
        model, group.base, [-1, -1, -1], [1, 1, 1], group.tip, [0, 0, 0])],
        [K.PostureCost(model, group.to_full_q(group.mid_configuration()))])
    seed = np.zeros(group.n)
    # Inside the limits, 2 pi from a value nearer the seed (the elbow's range is 2 pi).
    q = np.where(group.upper > 6.0, 6.0, 0.5)
    np.testing.assert_array_equal(returned_q(problem, q, seed), q)
    plain = Problem(group, None, problem.constraints, [])  # no costs: the nearest one
    np.testing.assert_array_equal(returned_q(plain, q, seed),
                                  np.where(group.upper > 6.0, 6.0 - 2 * math.pi, 0.5))
