"""A one-point trajectory's timing against the controller's own interpolation.

A JointTrajectoryController reaches a point with positions and zero velocities by a
cubic from the arm's state at rest: ``3 tau^2 - 2 tau^3`` of each joint's move at
``tau = t / T`` (ros2_controllers' spline interpolation).  Sampled here, independently of
``execution.duration_s``: no joint's velocity may exceed ``scaling`` x its limit, and the
slowest joint reaches it unless the minimum duration holds the move back.
"""
import numpy as np
import pytest

from ros2_ik.node import execution

TAU = np.linspace(0.0, 1.0, 2001)
SHAPE_RATE = 6 * TAU - 6 * TAU ** 2  # d(3 tau^2 - 2 tau^3) / d tau


def _peaks(move: np.ndarray, seconds: float) -> np.ndarray:
    """Each joint's peak speed [rad/s] on the cubic of ``move`` [rad] lasting ``seconds``."""
    return np.max(np.outer(SHAPE_RATE, np.abs(move)), axis=0) / seconds


@pytest.mark.parametrize("scaling", [1.0, 0.7, 0.2, 0.05])
def test_peak_velocity_keeps_the_scaled_limit(scaling):
    rng = np.random.default_rng(int(scaling * 100))
    names = [f"j{i}" for i in range(7)]
    for _ in range(200):
        vmax = rng.uniform(0.5, 3.0, 7)
        start = rng.uniform(-2.0, 2.0, 7)
        q = start + rng.uniform(-3.0, 3.0, 7)
        seconds = execution.duration_s(names, q, dict(zip(names, start)), vmax, scaling,
                                       0.05)
        peaks = _peaks(q - start, seconds)
        assert np.all(peaks <= scaling * vmax * (1 + 1e-9))
        if seconds > 0.05:
            assert np.max(peaks / (scaling * vmax)) == pytest.approx(1.0, rel=1e-6)


def test_joints_without_a_limit_do_not_slow_the_move():
    names = ["a", "b"]
    seconds = execution.duration_s(names, np.array([1.0, 5.0]), {"a": 0.0, "b": 0.0},
                                   np.array([2.0, np.inf]), 1.0, 0.0)
    assert seconds == pytest.approx(1.5 * 1.0 / 2.0)
