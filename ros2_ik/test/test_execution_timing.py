"""Timing of what is sent (core.path.timing, node.execution) against the controller's splines.

A JointTrajectoryController reaches one point with positions and zero velocities and
accelerations by a quintic from the arm's state at rest: ``10 tau^3 - 15 tau^4 + 6 tau^5``
of each joint's move at ``tau = t / T`` (ros2_controllers' spline interpolation; a
controller whose state holds no accelerations and that does not take them as zero draws
the cubic ``3 tau^2 - 2 tau^3`` instead), and joins the points of a path by cubic Hermites
through their velocities.  Sampled here (positions, velocities and accelerations written
apart): no joint may exceed its scaled limits, and the slowest joint reaches one unless
the minimum duration holds the move back.
"""
import numpy as np
import pytest

from ros2_ik.core.path import timing
from ros2_ik.node import execution

TAU = np.linspace(0.0, 1.0, 2001)
SHAPE_RATE = 30 * TAU ** 2 - 60 * TAU ** 3 + 30 * TAU ** 4  # d(10 t^3 - 15 t^4 + 6 t^5) / dt
QUINTIC_ACCELERATION = 60 * TAU - 180 * TAU ** 2 + 120 * TAU ** 3


def _peaks(move: np.ndarray, seconds: float) -> np.ndarray:
    """Each joint's peak speed [rad/s] on the quintic of ``move`` [rad] lasting ``seconds``."""
    return np.max(np.outer(SHAPE_RATE, np.abs(move)), axis=0) / seconds


@pytest.mark.parametrize("scaling", [1.0, 0.7, 0.2, 0.05])
def test_peak_velocity_keeps_the_scaled_limit(scaling):
    rng = np.random.default_rng(int(scaling * 100))
    for _ in range(200):
        vmax = rng.uniform(0.5, 3.0, 7)
        start = rng.uniform(-2.0, 2.0, 7)
        q = start + rng.uniform(-3.0, 3.0, 7)
        seconds = execution.duration_s(q, start, vmax, scaling, 0.05)
        peaks = _peaks(q - start, seconds)
        assert np.all(peaks <= scaling * vmax * (1 + 1e-9))
        if seconds > 0.05:
            assert np.max(peaks / (scaling * vmax)) == pytest.approx(1.0, rel=1e-6)


def test_joints_without_a_limit_do_not_slow_the_move():
    seconds = execution.duration_s(np.array([1.0, 5.0]), np.zeros(2), np.array([2.0, np.inf]),
                                   1.0, 0.0)
    assert seconds == pytest.approx(1.875 * 1.0 / 2.0)


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
    from ros2_ik.core.path.timing import path_times
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


SHAPE_ACCELERATION = 6 - 12 * TAU  # d^2(3 tau^2 - 2 tau^3) / d tau^2


@pytest.mark.parametrize("scaling", [1.0, 0.3])
def test_a_one_point_move_keeps_the_scaled_accelerations(scaling):
    """The quintic from rest accelerates by at most 10 / sqrt(3) x the move / T^2, the
    cubic (a controller that draws one) by 6 x at its ends: both within the limit, and the
    move is as short as the velocity or the acceleration limit allows."""
    rng = np.random.default_rng(int(scaling * 10))
    for _ in range(200):
        vmax, amax = rng.uniform(0.5, 3.0, 6), rng.uniform(0.5, 10.0, 6)
        amax[rng.random(6) < 0.2] = np.inf  # joints without one
        start = rng.uniform(-2.0, 2.0, 6)
        q = start + rng.uniform(-1.0, 1.0, 6)
        seconds = execution.duration_s(q, start, vmax, 1.0, 0.05, amax, scaling)
        move = q - start
        accelerations = np.max(np.abs(np.outer(SHAPE_ACCELERATION, move)), axis=0) / seconds ** 2
        quintic = np.max(np.abs(np.outer(QUINTIC_ACCELERATION, move)), axis=0) / seconds ** 2
        assert np.all(quintic <= accelerations)
        assert np.all(accelerations <= scaling * amax * (1 + 1e-9))
        peaks = _peaks(move, seconds)
        assert np.all(peaks <= vmax * (1 + 1e-9))
        if seconds > 0.05:
            assert max(np.max(peaks / vmax), np.max(accelerations / (scaling * amax))) \
                == pytest.approx(1.0, rel=1e-6)


def _accelerations(p0, p1, v0, v1, span):
    """Accelerations on TAU of the cubic through one step (the second derivative)."""
    a00, a10, a01, a11 = 12 * TAU - 6, 6 * TAU - 4, 6 - 12 * TAU, 6 * TAU - 2
    return (np.outer(a00, p0) + np.outer(a10, v0 * span) + np.outer(a01, p1)
            + np.outer(a11, v1 * span)) / span ** 2


def _fastest(distance, vmax, amax):
    """Shortest rest-to-rest time [s] of one joint moving ``distance`` (bang-bang)."""
    if distance <= vmax ** 2 / amax:
        return 2 * np.sqrt(distance / amax)
    return distance / vmax + vmax / amax


def _paths(rng):
    """Straight lines and arcs in joint space (what a Cartesian path's IK gives), zig-zags."""
    for case in range(40):
        n, m = 6, int(rng.integers(2, 80))
        start = rng.uniform(-1.0, 1.0, n)
        s = np.linspace(0.0, 1.0, m + 1)[1:, None]
        kind = ("line", "arc", "zigzag")[case % 3]
        if kind == "line":
            q_path = start + s * rng.uniform(-1.5, 1.5, n)
        elif kind == "arc":
            q_path = start + np.sin(s * np.pi / 2) * rng.uniform(-1, 1, n) \
                + (1 - np.cos(s * np.pi / 2)) * rng.uniform(-1, 1, n)
        else:
            q_path = start + np.cumsum(rng.normal(0.0, 0.05, (m, n)), axis=0)
        yield kind, start, q_path


def test_a_timed_path_keeps_the_scaled_accelerations_and_ramps():
    """Cubics through every point, sampled: each joint within its scaled velocity and
    acceleration limits, no point overshot; a line or an arc takes at most 2.5 times the
    time its slowest joint's travel needs alone at the scaled limits (a ramp, not every
    step slowed to what starting from rest allows: ~8 times on a line)."""
    from ros2_ik.node.compute_ik_path import trajectory_msg
    from ros2_ik.core.path.timing import path_times
    rng = np.random.default_rng(11)
    for case, (kind, start, q_path) in enumerate(_paths(rng)):
        n, m = q_path.shape[1], len(q_path)
        vmax, amax = rng.uniform(0.5, 3.0, n), rng.uniform(1.0, 10.0, n)
        scaling = float(rng.choice([1.0, 0.5]))
        minimum = float(rng.choice([0.0, 0.5, 20.0]))  # the last: longer than every path
        times = path_times(q_path, start, vmax, scaling, amax, scaling, minimum)
        assert times[-1] >= minimum * (1 - 1e-12)
        msg = trajectory_msg([f"j{i}" for i in range(n)], q_path, times, start)
        points = np.vstack([start, q_path])
        speeds = np.vstack([np.zeros(n), [p.velocities for p in msg.points]])
        stamps = np.concatenate([[0.0], times])
        for k in range(m):
            span = stamps[k + 1] - stamps[k]
            if span == 0.0:
                continue
            args = (points[k], points[k + 1], speeds[k], speeds[k + 1], span)
            pos, vel = _hermite(*args)
            assert np.all(np.abs(vel) <= scaling * vmax * (1 + 1e-9)), (case, k)
            assert np.all(np.abs(_accelerations(*args)) <= scaling * amax * (1 + 1e-6)), \
                (case, kind, k)
            lo, hi = np.minimum(points[k], points[k + 1]), np.maximum(points[k], points[k + 1])
            assert np.all((pos >= lo - 1e-12) & (pos <= hi + 1e-12)), (case, k)
        if kind != "zigzag" and minimum < 20.0:
            # Each joint's whole travel, from rest to rest, as fast as can be.
            travel = np.sum(np.abs(np.diff(points, axis=0)), axis=0)
            alone = max(_fastest(d, scaling * v, scaling * a)
                        for d, v, a in zip(travel, vmax, amax))
            assert times[-1] <= 2.5 * alone, (case, kind, m, times[-1], alone)


def test_joints_without_an_acceleration_limit_are_timed_by_velocity_alone():
    rng = np.random.default_rng(2)
    q_path = np.cumsum(rng.normal(0.0, 0.1, (20, 3)), axis=0)
    vmax = np.array([1.0, 2.0, 3.0])
    plain = timing.path_times(q_path, np.zeros(3), vmax, 0.5)
    np.testing.assert_array_equal(
        timing.path_times(q_path, np.zeros(3), vmax, 0.5, np.full(3, np.inf), 0.5), plain)
    slow = timing.path_times(q_path, np.zeros(3), vmax, 0.5, np.array([np.inf, 0.5, np.inf]),
                             0.5)
    assert slow[-1] > plain[-1]


def test_a_move_samples_the_controllers_cubics():
    """What position mode streams and a stop starts from: each step's cubic (_hermite,
    written apart), positions and velocities."""
    rng = np.random.default_rng(4)
    start = rng.uniform(-1, 1, 3)
    q_path = start + np.cumsum(rng.normal(0, 0.1, (5, 3)), axis=0)
    times = timing.path_times(q_path, start, np.full(3, 1.0), 1.0)
    v = timing.point_velocities(q_path, times, start)
    from ros2_ik.node.compute_ik_path import trajectory_msg
    move = execution.Move.of(trajectory_msg(["a", "b", "c"], q_path, times, start), start)
    points, speeds = np.vstack([start, q_path]), np.vstack([np.zeros(3), v])
    stamps = np.concatenate([[0.0], times])
    for k in range(5):
        pos, vel = _hermite(points[k], points[k + 1], speeds[k], speeds[k + 1],
                            stamps[k + 1] - stamps[k])
        for i in (0, 500, 1377, 2000):
            q, qd = move.state_at(stamps[k] + TAU[i] * (stamps[k + 1] - stamps[k]))
            np.testing.assert_allclose(q, pos[i], atol=1e-9)
            np.testing.assert_allclose(qd, vel[i], atol=1e-6)
    np.testing.assert_array_equal(move.state_at(-1.0)[0], start)
    np.testing.assert_array_equal(move.state_at(99.0)[0], q_path[-1])
    assert not move.state_at(99.0)[1].any()


def test_a_trajectory_with_accelerations_is_read_back_as_its_quintics():
    """Move.of reads the points' accelerations (as a JointTrajectoryController draws
    them): a quintic move sent as its trajectory is the same move again."""
    start, goal = np.array([0.1, -0.4]), np.array([0.6, 0.2])
    sent = execution.Move.from_rest(("a", "b"), start, goal, 1.3).then(start, 0.9)
    back = execution.Move.of(sent.trajectory(), start)
    assert back.accelerations is not None
    for t in np.linspace(-0.1, 2.4, 26):
        for a, b in zip(sent.state_at(t), back.state_at(t)):
            np.testing.assert_allclose(b, a, atol=1e-9)


def test_a_move_with_accelerations_samples_the_controllers_quintics():
    """Points with accelerations: quintic Hermites, which meet each point's position,
    velocity and acceleration (the last by finite differences here), and whose largest
    acceleration the move reports."""
    rng = np.random.default_rng(9)
    q_path, v = rng.normal(0, 1, (3, 2)), rng.normal(0, 1, (3, 2))
    a, times = rng.normal(0, 2, (3, 2)), np.array([0.7, 1.5, 2.6])
    start, v0, a0 = rng.normal(0, 1, 2), rng.normal(0, 1, 2), rng.normal(0, 2, 2)
    move = execution.Move(("a", "b"), start, v0, q_path, v, times, a, a0)
    h = 1e-6
    for t, q, qd, qdd in zip([0.0, *times], [start, *q_path], [v0, *v], [a0, *a]):
        side = -h if t == times[-1] else h  # the last point's inside is before it
        near = t + side if t > 0 else h
        np.testing.assert_allclose(move.state_at(t)[0] if t < times[-1] else q_path[-1], q)
        inner = t + 2 * side
        np.testing.assert_allclose(move.state_at(near)[1], qd + qdd * side, atol=1e-6)
        numeric = (move.state_at(inner)[1] - move.state_at(near)[1]) / side
        np.testing.assert_allclose(numeric, qdd, atol=1e-3)
    ts = np.linspace(0.0, times[-1], 20001)[1:-1]
    speeds = np.array([move.state_at(t)[1] for t in ts])
    numeric = np.max(np.abs(np.diff(speeds, axis=0)), axis=0) / (ts[1] - ts[0])
    np.testing.assert_allclose(move.peak_accelerations(), numeric, rtol=5e-3)


def test_braking_stops_within_the_deceleration():
    """From any instant of a move: a cubic to rest whose velocity falls linearly, no joint
    slowing harder than allowed, the slowest exactly at it."""
    names = ["a", "b"]
    start = np.zeros(2)
    move = execution.Move.from_rest(names, start, np.array([1.0, -0.5]), 2.0)
    deceleration = np.array([0.4, 5.0])
    for t in (0.3, 1.0, 1.7):
        q, v = move.state_at(t)
        stop = move.braking(t, deceleration)
        np.testing.assert_allclose(stop.start, q)
        np.testing.assert_allclose(stop.start_velocity, v)
        seconds = stop.duration_s
        velocities = np.array([stop.state_at(s * seconds)[1] for s in TAU])
        np.testing.assert_allclose(velocities, np.outer(1 - TAU, v), atol=1e-9)
        slowing = np.abs(v) / seconds
        assert np.all(slowing <= deceleration * (1 + 1e-9))
        assert np.max(slowing / deceleration) == pytest.approx(1.0)
        np.testing.assert_allclose(stop.peak_accelerations(), slowing, rtol=1e-9)
        assert list(stop.trajectory().points[0].accelerations) == []  # the controller's cubic


def test_braking_a_one_point_move_never_passes_its_end():
    """At the move's own hardest acceleration (a stop without joint_limits.yaml), from any
    instant: the arm comes to rest on the segment the move was proven on, short of its end
    (a quintic braking passed it by up to 8 % of the move)."""
    move = execution.Move.from_rest(["a", "b"], np.zeros(2), np.array([1.0, -0.5]), 1.0)
    hardest = move.peak_accelerations()
    for t in np.linspace(0.001, 0.999, 999):
        end = move.braking(t, hardest).q_path[-1]
        fraction = end / np.array([1.0, -0.5])
        assert fraction[0] == pytest.approx(fraction[1], abs=1e-12)
        assert fraction[0] <= 1.0 + 1e-8  # the 1 ms shortest braking, at the very end


def test_a_new_goal_mid_move_brakes_along_a_line_then_goes_on_from_rest():
    """What an execute sends while a move is under way: from the arm's state (position and
    velocity: no jump for the controller to blend), a straight braking within the
    deceleration to rest, then the cubic from rest to the new goal (a controller draws a
    segment as a quintic only when both its points carry accelerations); the move under
    way's record ends with it."""
    names = ["a", "b", "c"]
    first = execution.Move.from_rest(names, np.zeros(3), np.array([1.0, -0.5, 0.2]), 2.0)
    deceleration = np.array([0.5, 2.0, np.inf])
    sent = execution.Sent(first, 10.0, deceleration)
    assert sent.left_s(10.5) == pytest.approx(1.5) and sent.left_s(13.0) == 0.0
    goal = np.array([-0.3, 0.4, 0.0])
    stop = sent.braking(10.8)
    redirect = stop.then(goal, 1.2)
    q, v = first.state_at(0.8)
    np.testing.assert_allclose(redirect.state_at(0.0)[0], q)
    np.testing.assert_allclose(redirect.state_at(0.0)[1], v)
    braked = stop.duration_s
    assert braked == pytest.approx(np.max(np.abs(v[:2]) / deceleration[:2]))
    rest = redirect.q_path[0]
    np.testing.assert_allclose(redirect.state_at(braked), (rest, np.zeros(3)), atol=1e-12)
    for s in TAU[::100]:  # the braking on the line from q along v
        along = redirect.state_at(s * braked)[0] - q
        np.testing.assert_allclose(along, np.dot(along, v) / np.dot(v, v) * v, atol=1e-12)
    pos, _ = _hermite(rest, goal, np.zeros(3), np.zeros(3), 1.2)
    for k in range(0, 2001, 100):  # then the cubic from rest
        np.testing.assert_allclose(redirect.state_at(braked + TAU[k] * 1.2)[0], pos[k],
                                   atol=1e-12)
    assert redirect.duration_s == pytest.approx(braked + 1.2)
    peaks = redirect.peak_accelerations()
    np.testing.assert_allclose(peaks, np.maximum(np.abs(v) / braked,
                                                 6 * np.abs(goal - rest) / 1.2 ** 2))
    assert all(list(p.accelerations) == [] for p in redirect.trajectory().points)


def test_a_braking_started_off_its_instant_is_harder_at_one_end():
    """Why a redirect is sent at the instant its braking was planned from: a controller
    draws a trajectory from its own state when it starts it, so a braking started e after
    that instant (the arm run on by e) has its first step harder by about 6 e / T, one
    started e before, its last step (T: the braking's duration).  At the instant it is as
    planned: uniform, within the deceleration."""
    names = ["a", "b"]
    first = execution.Move.from_rest(names, np.zeros(2), np.array([1.0, -0.5]), 2.0)
    deceleration = np.array([1.5, 4.0])
    stop = execution.Sent(first, 0.0, deceleration).braking(0.8)
    planned = np.abs(stop.start_velocity) / stop.duration_s
    assert np.max(planned / deceleration) == pytest.approx(1.0)

    def drawn(e: float) -> np.ndarray:
        """The braking's accelerations at its start and end, started at 0.8 + e s."""
        q, v = first.state_at(0.8 + e)
        move = execution.Move(names, q, v, stop.q_path, stop.velocities, stop.times_s)
        return np.abs([move.state_at(t)[1] - move.state_at(t - 1e-6)[1] for t in
                       (1e-6, move.duration_s)]) / 1e-6

    at_start, at_end = drawn(0.0)
    np.testing.assert_allclose(at_start, planned, rtol=1e-4)
    np.testing.assert_allclose(at_end, planned, rtol=1e-4)
    for e in (0.002, 0.008):
        late, early = drawn(e), drawn(-e)
        np.testing.assert_allclose(late[0] / planned, 1 + 6 * e / stop.duration_s, rtol=0.05)
        np.testing.assert_allclose(early[1] / planned, 1 + 6 * e / stop.duration_s, rtol=0.05)
        assert np.max(late[0] / deceleration) > 1 + 4 * e / stop.duration_s


def test_the_lead_follows_the_proofs_time_within_its_bounds():
    assert execution.next_lead_s(execution.MIN_LEAD_S, 1e-4) == execution.MIN_LEAD_S
    assert execution.next_lead_s(0.002, 0.008) == pytest.approx(0.012)  # 1.5 x the last
    assert execution.next_lead_s(0.012, 0.001) == pytest.approx(0.0108)  # decays slowly
    assert execution.next_lead_s(0.04, 1.0) == execution.MAX_LEAD_S


def test_a_move_held_to_the_minimum_duration_is_slowed_as_a_whole():
    """Slower everywhere, not only on its first step: delaying the first point (as the
    path's execute did) slowed that step alone, and the next one then left a slower
    point: more acceleration there (65 against 40 rad/s^2 in this case)."""
    q_path = np.outer(np.arange(1, 6) * 0.02, np.ones(2))
    vmax, amax = np.full(2, 3.0), np.full(2, 40.0)
    fast = timing.path_times(q_path, np.zeros(2), vmax, 1.0, amax, 1.0)
    assert fast[-1] < 0.5
    times = timing.path_times(q_path, np.zeros(2), vmax, 1.0, amax, 1.0, 0.5)
    np.testing.assert_allclose(times, fast * 0.5 / fast[-1])
    steps, spans = np.diff(np.vstack([np.zeros(2), q_path]), axis=0), np.diff(
        np.concatenate([[0.0], times]))
    assert max(np.max(e) for e in timing._end_accelerations(steps, spans)) <= 40.0
    nothing = timing.path_times(np.zeros((3, 2)), np.zeros(2), vmax, 1.0, amax, 1.0, 0.5)
    np.testing.assert_array_equal(nothing, [0.5, 0.5, 0.5])


def test_a_path_takes_as_long_however_finely_it_is_sampled():
    """One curve in joint space at 60 and at 2,000 points: the same time within 5 % (step
    by step lengthening alone took 2x as long at 2,000 points, its ramp re-formed one
    small step at a time)."""
    totals = []
    for m in (60, 2000):
        s = np.linspace(0.0, 1.0, m + 1)[1:, None]
        q_path = s * np.array([2.0, -1.5, 1.0, 0.5, 1.0, 0.3, 2.5]) + 0.1 * np.sin(6 * s)
        times = timing.path_times(q_path, np.zeros(7), np.full(7, 2.0), 1.0,
                                  np.full(7, 5.0), 1.0)
        totals.append(times[-1])
    assert totals[1] == pytest.approx(totals[0], rel=0.05), totals


def test_joint_states_off_the_move_under_way_are_told_apart_from_lag():
    """execution.off_plan: each joint's reading against the move where it was when the
    reading came; up to the tolerance plus READING_LAG_S of the move's speed behind it is
    lag (a reading is measured before it comes), farther is a move the controller does not
    run; a joint whose range spans 2 pi is read modulo 2 pi (drivers wrap it), and a
    reading from before the move was sent tells nothing of it."""
    two_pi = 2.0 * np.pi
    move = execution.Move.from_rest(("a", "b"), np.zeros(2), np.array([1.0, 3.0]), 1.0)
    sent = execution.Sent(move, 10.0, np.ones(2), np.array([False, True]))
    q, v = move.state_at(0.5)
    assert np.all(v > 1.0)
    at = np.full(2, 10.5)
    assert execution.off_plan(sent, q, at, 0.01) == ""
    lag = v * execution.READING_LAG_S
    assert execution.off_plan(sent, q - lag - 0.009, at, 0.01) == ""
    off = execution.off_plan(sent, q - lag - [0.011, 0.0], at, 0.01)
    assert off.startswith("joint_states put joint 'a' ") and "execute_follow_tolerance" in off
    assert execution.off_plan(sent, q - [0.0, two_pi], at, 0.01) == ""  # b wraps
    assert execution.off_plan(sent, q - [two_pi, 0.0], at, 0.01).startswith(
        "joint_states put joint 'a' ")  # a does not
    assert execution.off_plan(sent, np.zeros(2), np.full(2, 9.9), 0.01) == ""  # before t0
    early = move.state_at(0.1)[0]  # each joint at its own reading's instant
    assert execution.off_plan(sent, [early[0], q[1]], np.array([10.1, 10.5]), 0.01) == ""
    assert execution.off_plan(sent, [early[0], q[1]], at, 0.01) != ""
    assert execution.off_plan(sent, np.zeros(2), at, 0.01).startswith(
        "joint_states put joint 'b' ")  # the farthest beyond its allowance is named
