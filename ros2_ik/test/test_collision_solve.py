"""End to end in the core: the collision-aware solve avoids an obstacle the plain solve hits."""
import numpy as np
import pytest

from ros2_ik.core.constraints import MinimumDistanceConstraint
from ros2_ik.core.solve import solve
from test_lm_pose_first import READY, arm_and_target, checker_with_ball

MIN_DISTANCE_M = 0.005


@pytest.fixture(scope="module")
def setup():
    robot, urdf, srdf, group, target = arm_and_target()
    plain = solve(group, target, READY, solver="lm", timeout_s=0.05, random_seed=1,
                  max_attempts=1)
    assert plain.success
    # a ball where the plain answer puts its elbow: reachable around, not through
    checker = checker_with_ball((robot, urdf, srdf, group, target, plain), 0.0)
    return group, target, plain, checker


@pytest.mark.parametrize("solver", ["lm", "dls"])
def test_in_solve_avoidance_finds_another_answer_from_the_same_seed(setup, solver):
    group, target, plain, checker = setup
    assert checker.in_collision(group.to_full_q(np.array(plain.q)))
    constraint = MinimumDistanceConstraint(checker, MIN_DISTANCE_M, 0.05)
    result = solve(group, target, READY, solver=solver, timeout_s=0.5, random_seed=1,
                   max_attempts=1, constraints=[constraint])  # one attempt: no restart
    assert result.success, result.message
    report = checker.min_distance(group.to_full_q(np.array(result.q)))
    assert report.distance_m >= MIN_DISTANCE_M - 1e-4, report
