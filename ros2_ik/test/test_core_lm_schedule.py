"""LM's progress schedule: attempts that will not converge are restarted early."""
import numpy as np
import pinocchio as pin
import pytest

from ros2_ik.core import robots
from ros2_ik.core.pose import PoseTarget
from ros2_ik.core.result import IKStatus
from ros2_ik.core.solve import solve
from ros2_ik.core.solvers.lm import LevenbergMarquardt


@pytest.fixture(scope="module")
def panda():
    return robots.load_group("panda")[1]


def test_unreachable_attempt_is_cut_by_the_schedule(panda):
    """2 m away: E ~ 4 m^2 at iteration 8, far above the first bound (1e-2)."""
    first_iteration, _ = LevenbergMarquardt.progress_schedule[0]
    target = PoseTarget(panda.tip, pin.SE3(np.eye(3), np.array([2.0, 0.0, 0.5])))
    result = solve(panda, target, panda.mid_configuration(), max_attempts=1, timeout_s=1.0,
                   random_seed=0)
    assert result.status is IKStatus.NO_SOLUTION
    assert result.iterations <= first_iteration < LevenbergMarquardt.max_iterations


def test_schedule_keeps_converging_attempts(panda):
    """Targets near the seed converge in the first attempt, never cut."""
    rng = np.random.default_rng(2)
    seed = panda.mid_configuration()
    for _ in range(20):
        q = panda.clamp(seed + rng.uniform(-0.3, 0.3, panda.n))
        target = PoseTarget(panda.tip, panda.fk(q, panda.tip))
        result = solve(panda, target, seed, max_attempts=1, timeout_s=1.0, random_seed=0)
        assert result.status is IKStatus.SUCCESS, result.message
        assert result.restarts == 0


@pytest.mark.parametrize("arm", ["panda", "z1", "kinova"])
def test_work_bound_solves_all_succeed_inside_limits(arm):
    """No deadline (200 attempts): every random reachable target is solved, in limits."""
    _, group = robots.load_group(arm)
    rng = np.random.default_rng(11)
    for i in range(30):
        q = group.random_configuration(rng)
        target = PoseTarget(group.tip, group.fk(q, group.tip))
        result = solve(group, target, group.mid_configuration(), max_attempts=200,
                       timeout_s=10.0, random_seed=i)
        assert result.status is IKStatus.SUCCESS, (arm, i, result.message)
        assert group.within_limits(result.q)
