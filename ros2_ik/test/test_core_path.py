"""solve_path: continuous joint paths along Cartesian paths, checked by independent FK.

Paths are built from a continuous joint motion (so a continuous answer exists) and every
answer is checked against forward kinematics of the returned values and plain joint
differences, never against the result's own figures.
"""
import math
import time

import numpy as np
import pinocchio as pin
import pytest

from ros2_ik.core import PoseTarget, errors, robots
from ros2_ik.core.constraints import JointBoundsConstraint
from ros2_ik.core.path import PathStatus, solve_path
from ros2_ik.core.path.segments import between, cartesian_waypoints

STEP = 0.2


@pytest.fixture(scope="module")
def panda():
    return robots.load_group("panda")[1]


@pytest.fixture(scope="module")
def ur5():
    return robots.load_group("ur5")[1]


def targets(group, poses, **kw):
    return [PoseTarget(group.tip, T, **kw) for T in poses]


def joint_motion_path(group, q_a, q_b, count):
    """Tip poses along the joint-linear motion q_a -> q_b (continuously feasible)."""
    return [group.fk(q_a + (k / (count - 1)) * (q_b - q_a), group.tip) for k in range(count)]


def assert_continuous_and_on_path(group, result, poses, step=STEP, tol_m=1e-4, tol_rad=1e-3):
    q = np.asarray(result.q_path)
    assert len(q) == round(result.fraction * len(poses))
    if len(q) > 1:
        assert np.abs(np.diff(q, axis=0)).max() <= step + 1e-12
    for qi, T in zip(q, poses):
        assert np.all(qi >= group.lower) and np.all(qi <= group.upper)
        reached = group.fk(qi, group.tip)
        assert np.linalg.norm(reached.translation - T.translation) <= tol_m
        assert np.linalg.norm(pin.log3(T.rotation.T @ reached.rotation)) <= tol_rad


def test_panda_line_complete_and_continuous(panda):
    rng = np.random.default_rng(3)
    q_a = panda.mid_configuration() + rng.uniform(-0.3, 0.3, panda.n)
    T_a = panda.fk(q_a, panda.tip)
    T_b = pin.SE3(T_a.rotation, T_a.translation + np.array([0.0, 0.15, -0.05]))
    poses = cartesian_waypoints(T_a, [T_b], 0.002, 0.02)
    result = solve_path(panda, targets(panda, poses), panda.mid_configuration(), STEP,
                        random_seed=1)
    assert result.status is PathStatus.COMPLETE and result.fraction == 1.0
    assert result.failed_waypoint == -1
    assert_continuous_and_on_path(panda, result, poses)
    assert not result.q_path.flags.writeable


def test_interior_points_follow_the_line(panda):
    """Waypoints 3 cm apart: the joint-linear motion between them stays near the segment."""
    q_a = panda.mid_configuration() + 0.2
    T_a = panda.fk(q_a, panda.tip)
    poses = [pin.SE3(T_a.rotation, T_a.translation + np.array([0.03 * k, 0.0, 0.0]))
             for k in range(5)]
    tol_m = 2e-3
    result = solve_path(panda, targets(panda, poses), q_a, 0.5, path_tolerance_m=tol_m,
                        path_tolerance_rad=0.05, check_step_m=0.003, random_seed=2)
    q = result.q_path
    assert len(q) >= 2
    for i in range(1, len(q)):
        for t in np.linspace(0.0, 1.0, 11):
            p = panda.fk(q[i - 1] + t * (q[i] - q[i - 1]), panda.tip).translation
            p_line = between(poses[i - 1], poses[i], t).translation
            assert np.linalg.norm(p - p_line) <= tol_m + 1e-9  # t on the check points


def test_ur5_wrist_turn_is_unwound_not_wound(ur5):
    """The tool turns 1.5 pi about its axis: joint 6 follows continuously, inside +-2 pi."""
    q_a = np.array([0.3, -1.2, 1.4, -1.8, -1.5, 2.5])
    T_a = ur5.fk(q_a, ur5.tip)
    T_b = T_a * pin.SE3(pin.exp3(np.array([0.0, 0.0, 1.5 * math.pi])), np.zeros(3))
    poses = [T_a * pin.SE3(pin.exp3(np.array([0.0, 0.0, a])), np.zeros(3))
             for a in np.linspace(0.0, 1.5 * math.pi, 60)]
    assert np.allclose(poses[-1].homogeneous, T_b.homogeneous)
    result = solve_path(ur5, targets(ur5, poses), q_a, STEP, random_seed=0)
    assert result.complete
    assert_continuous_and_on_path(ur5, result, poses)
    wrist = result.q_path[:, 5]
    assert abs(abs(wrist[-1] - wrist[0]) - 1.5 * math.pi) < 0.05  # turned, not wound back


def test_continuous_joint_arm_goes_beyond_pi():
    group = robots.load_group("pr2_right")[1]
    assert group.continuous.any()
    j = int(np.flatnonzero(group.continuous)[-1])  # the wrist roll
    q_a = group.clamp(group.mid_configuration() + 0.3)
    q_b = q_a.copy()
    q_b[j] += 1.6 * math.pi
    poses = joint_motion_path(group, q_a, q_b, 50)
    result = solve_path(group, targets(group, poses), q_a, STEP, random_seed=0)
    assert result.complete
    assert_continuous_and_on_path(group, result, poses)
    assert abs(result.q_path[-1, j] - result.q_path[0, j]) > math.pi


@pytest.mark.parametrize("random_seed", [0, 1])
def test_branch_that_dies_is_bridged_from_the_far_waypoint(panda, random_seed):
    """A continuously feasible Panda motion whose sampled branches all stop at waypoint 70.

    From the mid-limits seed, every branch followed forwards reaches the joint limits
    there (the path benchmark's one case where sequential TRAC-IK reached farther);
    solutions of waypoint 70 followed backwards join the ladder and the path completes.
    """
    q_a = np.array([1.2253, 0.7438, 0.2377, -2.3542, -0.5275, 1.2367, 2.1643])
    q_b = np.array([1.5145, 1.5619, -0.1700, -2.4963, -0.3928, 0.9462, 2.0773])
    poses = joint_motion_path(panda, q_a, q_b, 101)
    result = solve_path(panda, targets(panda, poses), panda.mid_configuration(), STEP,
                        random_seed=random_seed)
    assert result.complete, result.message
    assert_continuous_and_on_path(panda, result, poses)


def test_joint_with_a_range_of_exactly_two_pi_is_not_crossed_over(ur5):
    """UR5's elbow has [-pi, pi]: a motion that ends at -pi completes, inside the limits.

    Taking its +pi and -pi ends as one angle joined the last waypoint's +pi solution to
    the path near -pi, a crossing no 2 pi shift places in the limits: the path stopped at
    the last waypoint (held-out path benchmark paths, where both baselines completed).
    """
    q_a = np.array([3.3264, -0.6010, -2.3888, 2.2197, 4.4589, -0.7022])
    q_b = np.array([3.3256, -0.2704, -math.pi, 1.6429, 5.4332, 0.0856])
    poses = joint_motion_path(ur5, q_a, q_b, 101)
    result = solve_path(ur5, targets(ur5, poses), ur5.mid_configuration(), STEP,
                        random_seed=0)
    assert result.complete, result.message
    assert_continuous_and_on_path(ur5, result, poses)


def test_unknown_frames_name_the_waypoint_field(panda):
    q = panda.mid_configuration()
    T = panda.fk(q, panda.tip)
    with pytest.raises(errors.InvalidFrame, match=r"waypoints\[0\]\.frame: unknown frame "
                       "'no_such_frame'; valid: .*panda_hand"):
        solve_path(panda, [PoseTarget("no_such_frame", T)], q, STEP)
    good = PoseTarget(panda.tip, T)
    with pytest.raises(errors.InvalidFrame,
                       match=r"waypoints\[1\]\.reference_frame: unknown frame 'nowhere'"):
        solve_path(panda, [good, PoseTarget(panda.tip, T, "nowhere")], q, STEP)


def test_unreachable_tail_gives_prefix_fraction_and_waypoint(panda):
    q_a = panda.mid_configuration()
    T_a = panda.fk(q_a, panda.tip)
    far = pin.SE3(T_a.rotation, T_a.translation + np.array([1.5, 0.0, 0.0]))  # out of reach
    poses = cartesian_waypoints(T_a, [far], 0.02, 0.1)
    result = solve_path(panda, targets(panda, poses), q_a, STEP, random_seed=0)
    assert result.status is PathStatus.PARTIAL
    m = len(result.q_path)
    assert 0 < m < len(poses) and result.fraction == m / len(poses)
    assert result.failed_waypoint == m and f"waypoint {m}" in result.message
    # The reach of the prefix's last waypoint is below the arm's length; the next is not.
    assert_continuous_and_on_path(panda, result, poses)


def test_joint_window_stops_the_path_and_is_named(ur5):
    """A base rotation on a 6-joint arm: the pan joint must follow it, out of its window."""
    q_a = np.array([0.3, -1.2, 1.4, -1.8, -1.5, 0.5])
    q_b = q_a.copy()
    q_b[0] += 0.8
    poses = joint_motion_path(ur5, q_a, q_b, 41)
    name = ur5.joint_names[0]
    window = JointBoundsConstraint(ur5.robot.model, {name: (q_a[0] - 0.5, q_a[0] + 0.4)},
                                   name="window")
    result = solve_path(ur5, targets(ur5, poses), q_a, STEP, constraints=[window],
                        random_seed=0)
    assert result.status is PathStatus.PARTIAL and 0 < result.fraction < 1
    assert np.all(result.q_path[:, 0] <= q_a[0] + 0.4 + 1e-4)
    assert result.q_path[-1, 0] > q_a[0] + 0.35  # it went as far as the window allows
    assert_continuous_and_on_path(ur5, result, poses)
    assert "window" in result.message


def test_start_at_seed_names_the_joint(panda):
    q_a = panda.mid_configuration()
    poses = joint_motion_path(panda, q_a, q_a + 0.1, 5)
    seed = q_a.copy()
    seed[3] -= 1.0  # joint 4 one radian away from any solution near q_a
    result = solve_path(panda, targets(panda, poses), seed, STEP, start_at_seed=True,
                        num_solutions=2, random_seed=0)
    assert result.status is PathStatus.NO_PATH and result.fraction == 0.0
    assert result.failed_waypoint == 0 and result.failed_joint
    assert result.failed_joint in result.message


def test_bad_input_names_the_field(panda):
    q = panda.mid_configuration()
    one = targets(panda, [panda.fk(q, panda.tip)])
    with pytest.raises(errors.InvalidGoal, match="waypoints"):
        solve_path(panda, [], q, STEP)
    for bad in (0.0, -1.0, math.nan, [0.1, 0.2]):
        with pytest.raises(errors.InvalidArgument, match="max_joint_step"):
            solve_path(panda, one, q, bad)
    with pytest.raises(errors.InvalidArgument, match="check_step_m"):
        solve_path(panda, one, q, STEP, check_step_m=0.0)
    with pytest.raises(errors.InvalidSeed):
        solve_path(panda, one, q[:3], STEP)
    with pytest.raises(errors.InvalidGoal, match="T_ref_target has non-finite values"):
        PoseTarget(panda.tip, pin.SE3(np.eye(3), np.array([math.nan, 0.0, 0.0])))
    with pytest.raises(errors.InvalidSeed, match="seed has non-finite values"):
        solve_path(panda, one, np.full(panda.n, math.nan), STEP)
    with pytest.raises(errors.InvalidArgument, match="path_tolerance_m"):
        solve_path(panda, one, q, STEP, path_tolerance_m=math.nan)
    with pytest.raises(errors.InvalidArgument, match="max_step_m"):
        cartesian_waypoints(pin.SE3.Identity(), [pin.SE3.Identity()], 0.0, 0.1)


def test_a_step_too_small_is_refused_at_once_naming_it(panda):
    """A check step of 1e-12 m made 5e10 checks per segment: the call never returned."""
    q = panda.mid_configuration()
    T = panda.fk(q, panda.tip)
    far = pin.SE3(T.rotation, T.translation + np.array([0.05, 0.0, 0.0]))
    two = targets(panda, [T, far])
    for field, step in (("check_step_m", 1e-12), ("check_step_m", 5e-324),
                        ("check_step_rad", 1e-300)):
        started = time.perf_counter()
        with pytest.raises(errors.InvalidArgument, match=f"{field}: .*at most"):
            solve_path(panda, two, q, STEP, timeout_s=1.0, **{field: step})
        assert time.perf_counter() - started < 5.0  # refused, not searched
    with pytest.raises(errors.InvalidArgument, match="max_step_m: .*at most"):
        cartesian_waypoints(T, [far], 1e-12, 0.1)
    assert len(cartesian_waypoints(T, [far], 0.05 / 10_000, 0.1)) == 10_000  # the limit


def test_obstacle_on_the_line_stops_the_path_before_it():
    """The hand goes down onto a ball: the path stops clear of it, naming the clearance."""
    from ros2_ik.core.collision import (CollisionChecker, PlanningScene, SceneObject, Sphere,
                                        pose_from_xyz_quat)
    from ros2_ik.core.constraints import MinimumDistanceConstraint
    from test_lm_pose_first import READY, arm_and_target

    robot, urdf, srdf, group, _ = arm_and_target()
    T_a = group.fk(READY, group.tip)
    T_b = pin.SE3(T_a.rotation, T_a.translation + np.array([0.0, 0.0, -0.2]))
    poses = cartesian_waypoints(T_a, [T_b], 0.002, 0.02)
    free = solve_path(group, targets(group, poses), READY, STEP, random_seed=0)
    assert free.complete  # without the ball the whole line is feasible
    scene = PlanningScene.for_model(robot.model)
    scene.add(SceneObject("ball", [Sphere(0.05)],
                          T_frame_object=pose_from_xyz_quat(T_b.translation)))
    checker = CollisionChecker.from_urdf(robot.model, urdf, srdf, scene)
    clearance_m = 0.005
    constraint = MinimumDistanceConstraint(checker, clearance_m, 0.05)
    result = solve_path(group, targets(group, poses), READY, STEP, constraints=[constraint],
                        random_seed=0)
    assert result.status is PathStatus.PARTIAL and 0.3 < result.fraction < 1.0
    assert result.failed_constraint == constraint.name
    assert_continuous_and_on_path(group, result, poses)
    for q in result.q_path:
        assert checker.min_distance(group.to_full_q(q)).distance_m >= clearance_m - 1e-4


def test_ur5_wrist_near_its_limit_starts_on_the_equivalent_that_fits(ur5):
    """Wrist at 5.5 rad turning +1.5 rad would pass 2 pi: the path starts 2 pi lower."""
    q_a = np.array([0.3, -1.2, 1.4, -1.8, -1.5, 5.5])
    T_a = ur5.fk(q_a, ur5.tip)
    poses = [T_a * pin.SE3(pin.exp3(np.array([0.0, 0.0, a])), np.zeros(3))
             for a in np.linspace(0.0, 1.5, 40)]
    result = solve_path(ur5, targets(ur5, poses), q_a, STEP, random_seed=0)
    assert result.complete, result.message
    assert_continuous_and_on_path(ur5, result, poses)
    wrist = result.q_path[:, 5]
    assert abs(wrist[0] - (5.5 - 2 * math.pi)) < 1e-3 and wrist[-1] <= ur5.upper[5]
    # Starting where the arm is (5.5 rad), the wrist can only turn to its limit: the path
    # stops there and names the joint.
    held = solve_path(ur5, targets(ur5, poses), q_a, STEP, start_at_seed=True,
                      random_seed=0)
    assert held.status is PathStatus.PARTIAL, held.message
    assert held.failed_joint == ur5.joint_names[5]
    assert np.abs(held.q_path[0] - q_a).max() <= STEP
    assert held.q_path[-1, 5] <= ur5.upper[5] and held.q_path[-1, 5] > 6.0


def test_cartesian_waypoints_steps_are_bounded_and_end_on_the_goals():
    T_a = pin.SE3(pin.exp3(np.array([0.1, 0.2, 0.3])), np.array([0.3, 0.0, 0.5]))
    T_b = pin.SE3(pin.exp3(np.array([0.0, 1.0, 0.0])), np.array([0.3, 0.1, 0.4]))
    T_c = pin.SE3(T_b.rotation, np.array([0.0, 0.1, 0.4]))
    poses = cartesian_waypoints(T_a, [T_b, T_c], 0.004, 0.03)
    assert np.allclose(poses[-1].homogeneous, T_c.homogeneous)
    assert any(np.allclose(T.homogeneous, T_b.homogeneous) for T in poses)
    for a, b in zip([T_a] + poses[:-1], poses):
        assert np.linalg.norm(b.translation - a.translation) <= 0.004 + 1e-12
        assert np.linalg.norm(pin.log3(a.rotation.T @ b.rotation)) <= 0.03 + 1e-12
    # between T_b and T_c the orientation is constant: the path is a straight line
    on_bc = [T for T in poses if T.translation[0] < 0.3 - 1e-9]
    assert all(np.allclose(T.rotation, T_b.rotation) for T in on_bc)
    assert all(abs(T.translation[1] - 0.1) < 1e-12 for T in on_bc)
