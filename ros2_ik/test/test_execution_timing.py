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


def _hermite(p0, p1, v0, v1, span):
    """Positions and velocities on TAU of the cubic a controller draws through one step."""
    h00, h10 = 2 * TAU ** 3 - 3 * TAU ** 2 + 1, TAU ** 3 - 2 * TAU ** 2 + TAU
    h01, h11 = -2 * TAU ** 3 + 3 * TAU ** 2, TAU ** 3 - TAU ** 2
    d00, d10, d01, d11 = 6 * TAU ** 2 - 6 * TAU, 3 * TAU ** 2 - 4 * TAU + 1, \
        -6 * TAU ** 2 + 6 * TAU, 3 * TAU ** 2 - 2 * TAU
    pos = np.outer(h00, p0) + np.outer(h10, v0 * span) + np.outer(h01, p1) \
        + np.outer(h11, v1 * span)
    vel = (np.outer(d00, p0) + np.outer(d10, v0 * span) + np.outer(d01, p1)
           + np.outer(d11, v1 * span)) / span
    return pos, vel


def test_a_timed_path_is_smooth_and_keeps_the_scaled_limits():
    """Cubics through every point: each joint within its scaled limit, no overshoot."""
    from ros2_ik.node.compute_ik_path import trajectory_msg
    from ros2_ik.node.execution import path_times
    rng = np.random.default_rng(5)
    for case in range(60):
        n, m = 6, int(rng.integers(2, 30))
        vmax = rng.uniform(0.5, 3.0, n)
        start = rng.uniform(-1.0, 1.0, n)
        q_path = start + np.cumsum(rng.normal(0.0, 0.1, (m, n)) + rng.normal(0, 0.05, n),
                                   axis=0)
        scaling = float(rng.choice([1.0, 0.5, 0.2]))
        times = path_times(q_path, start, vmax, scaling)
        msg = trajectory_msg([f"j{i}" for i in range(n)], q_path, times, start)
        v = np.array([p.velocities for p in msg.points])
        assert np.all(v[-1] == 0.0)
        points = np.vstack([start, q_path])
        speeds = np.vstack([np.zeros(n), v])
        stamps = np.concatenate([[0.0], times])
        for k in range(m):
            span = stamps[k + 1] - stamps[k]
            if span == 0.0:
                continue
            pos, vel = _hermite(points[k], points[k + 1], speeds[k], speeds[k + 1], span)
            assert np.all(np.abs(vel) <= scaling * vmax * (1 + 1e-9)), (case, k)
            lo, hi = np.minimum(points[k], points[k + 1]), np.maximum(points[k], points[k + 1])
            assert np.all((pos >= lo - 1e-12) & (pos <= hi + 1e-12)), (case, k)


def test_an_untimed_path_carries_positions_only():
    from ros2_ik.node.compute_ik_path import trajectory_msg
    msg = trajectory_msg(["a"], np.array([[0.0], [1.0]]), np.zeros(2))
    assert all(list(p.velocities) == [] for p in msg.points)
