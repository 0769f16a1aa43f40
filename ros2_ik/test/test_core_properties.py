"""Properties over generated inputs: answers stay inside the limits, finite, verified."""
import numpy as np
import pinocchio as pin
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ros2_ik.core import robots
from ros2_ik.core.pose import PoseTarget
from ros2_ik.core.result import IKStatus
from ros2_ik.core.solve import solve
from ros2_ik.core.verify import verify_pose

GROUPS = {arm: robots.load_group(arm)[1] for arm in ("panda", "ur5", "kinova")}

unit = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(arm=st.sampled_from(sorted(GROUPS)), solver=st.sampled_from(["lm", "dls"]),
       u=st.lists(unit, min_size=7, max_size=7), s=st.lists(unit, min_size=7, max_size=7),
       offset=st.floats(min_value=-0.6, max_value=0.6), position_only=st.booleans(),
       seed=st.integers(min_value=0, max_value=2**31 - 1))
def test_answers_inside_limits_and_verified(arm, solver, u, s, offset, position_only, seed):
    group = GROUPS[arm]
    lo = np.where(group.continuous, -np.pi, group.lower)
    hi = np.where(group.continuous, np.pi, group.upper)
    q_goal = lo + (hi - lo) * np.array(u[:group.n])
    q_seed = lo + (hi - lo) * np.array(s[:group.n])
    T = group.fk(q_goal, group.tip)
    T.translation = T.translation + offset          # may push the target out of reach
    target = PoseTarget(group.tip, T, position_only=position_only)
    result = solve(group, target, q_seed, solver=solver, timeout_s=0.01, max_attempts=4,
                   random_seed=seed)
    assert result.q.shape == (group.n,) and np.all(np.isfinite(result.q))
    assert group.within_limits(result.q)
    ok, pos, ori, reason = verify_pose(group, target, result.q)
    assert ok == (result.status is IKStatus.SUCCESS), reason
    if result.status is not IKStatus.SUCCESS:
        assert result.status in (IKStatus.NO_SOLUTION, IKStatus.TIMED_OUT)
    else:  # no 2 pi flip: no equivalent inside the limits is nearer to the seed
        for k in (-2 * np.pi, 2 * np.pi):
            alt = result.q + k
            inside = (alt >= group.lower) & (alt <= group.upper) & group.wraps
            closer = np.abs(alt - q_seed) < np.abs(result.q - q_seed) - 1e-9
            assert not np.any(inside & closer), (result.q, q_seed)


@pytest.mark.parametrize("arm", sorted(GROUPS))
def test_error_decreases_along_an_attempt(arm):
    """The LM merit of the end point is below the start's on a reachable target."""
    group = GROUPS[arm]
    rng = np.random.default_rng(0)
    q_goal = group.random_configuration(rng)
    T = group.fk(q_goal, group.tip)
    start = np.clip(q_goal + 0.3, group.lower, group.upper)
    before = pin.log6(T.actInv(group.fk(start, group.tip))).vector
    result = solve(group, PoseTarget(group.tip, T), start, timeout_s=1.0, max_attempts=1,
                   random_seed=0)
    after = pin.log6(T.actInv(group.fk(result.q, group.tip))).vector
    assert np.linalg.norm(after) < np.linalg.norm(before)
