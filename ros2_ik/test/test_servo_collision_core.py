"""Servo step with collision dampers, hold on infeasibility, manipulability, continuous joints.

Independent checks: distances by the checker's own exact ``min_distance`` on the full
configuration of each commanded ``q``; damper rows against central finite differences of
that distance; manipulability against numpy on the full model's frame Jacobian; limits,
velocities and accelerations by finite differences of the commands.
"""
import math

import numpy as np
import pinocchio as pin
import pytest

from ros2_ik.core import robots
from ros2_ik.core.collision import (CollisionChecker, PlanningScene, SceneObject, Sphere,
                                    pose_from_xyz_quat)
from ros2_ik.core.pose import PoseTarget
from ros2_ik.core.servo import Servo, ServoConfig
from ros2_ik.core.solve import solve
from ros2_ik.core.servo.dampers import CollisionDampers

DT, TIP, ACC = 0.004, "panda_hand", 10.0


@pytest.fixture(scope="module")
def panda():
    robot, group = robots.load_group("panda")
    scene = PlanningScene.for_model(robot.model)
    checker = CollisionChecker.from_urdf(robot.model, robots.urdf_text("panda"),
                                         robots.srdf_text("panda"), scene)
    q0 = group.mid_configuration()
    q0[3] = -1.5
    return robot, group, scene, checker, q0


def _ball(scene, p_world, radius=0.03):
    scene.clear()
    scene.add(SceneObject("ball", [Sphere(radius)], T_frame_object=pose_from_xyz_quat(p_world)))


def _distance(checker, group, q):
    return checker.min_distance(group.to_full_q(q)).distance_m


def _check_limits(group, qs, acc=ACC):
    assert (qs >= group.lower - 1e-9).all() and (qs <= group.upper + 1e-9).all()
    v = np.diff(qs, axis=0) / DT
    assert (np.abs(v) <= group.velocity_limits + 1e-7).all()
    a = np.diff(np.vstack([np.zeros(group.n), v]), axis=0) / DT
    assert (np.abs(a) <= acc + 1e-6).all()


def _drive(servo, q, target, steps):
    qs, steps_out = [q.copy()], []
    for _ in range(steps):
        step = servo.step_pose(q, target, DT)
        q = step.q_next
        qs.append(q.copy())
        steps_out.append(step)
    return np.array(qs), steps_out


def test_tip_passes_obstacle_without_going_under_clearance(panda):
    robot, group, scene, checker, q0 = panda
    T0 = group.fk(q0, TIP)
    target = pin.SE3(T0.rotation, T0.translation + np.array([0.0, -0.3, 0.0]))
    _ball(scene, T0.translation + np.array([0.0, -0.15, 0.12]))  # beside the straight path
    config = ServoConfig(acceleration_limit=ACC, gain=5.0)
    blind, _ = _drive(Servo(group, TIP, config), q0, target, 600)
    assert min(_distance(checker, group, q) for q in blind[::10]) < 0.0  # the path hits it
    qs, steps = _drive(Servo(group, TIP, config, checker=checker), q0, target, 1000)
    distances = np.array([_distance(checker, group, q) for q in qs])
    assert distances.min() >= config.clearance_m
    assert distances.min() < config.clearance_m + 0.005  # the dampers were what held it
    assert all(s.flag == 1 for s in steps)
    T = group.fk(qs[-1], TIP)
    assert np.linalg.norm(T.translation - target.translation) < 1e-3  # and it got past
    _check_limits(group, qs)
    # the step's clearance is the nearest distance at the q it started from
    near = [(s.clearance_m, d) for s, d in zip(steps, distances)
            if s.clearance_m < config.influence_m]
    assert near and all(abs(c - d) < 1e-6 for c, d in near)
    assert math.isinf(Servo(group, TIP, config).step_pose(q0, target, DT).clearance_m)


def test_damper_rows_match_finite_differences(panda):
    robot, group, scene, checker, q0 = panda
    T0 = group.fk(q0, TIP)
    _ball(scene, T0.translation + np.array([0.0, -0.05, 0.1]))
    _assert_rows_match_fd(checker, group, q0)


def test_infeasible_step_stops_within_the_acceleration_limit(panda):
    """Closing in fast with a small acceleration limit: no velocity keeps the clearance.

    The step is flagged and slows every joint as hard as the acceleration limit allows
    (the box's velocity nearest zero), never a jump to a standstill.
    """
    robot, group, scene, checker, q0 = panda
    T0 = group.fk(q0, TIP)
    _ball(scene, T0.translation + np.array([0.0, -0.2, 0.0]))
    servo = Servo(group, TIP, ServoConfig(acceleration_limit=0.5))
    servo.reset(np.zeros(group.n))
    q, twist = q0.copy(), np.array([0.0, -0.2, 0.0, 0.0, 0.0, 0.0])
    while _distance(checker, group, q) > 0.02:  # blind: speed up toward the ball
        q = servo.step_twist(q, twist, True, DT).q_next
    servo.set_checker(checker)
    before = servo.qd.copy()
    step = servo.step_twist(q, twist, True, DT)
    assert step.flag != 1
    assert (np.abs(step.qd - before) <= 0.5 * DT + 1e-12).all()  # within the limit
    assert (np.abs(step.qd) <= np.maximum(np.abs(before) - 0.5 * DT, 0.0) + 1e-12).all()
    assert _distance(checker, group, step.q_next) > 0.0


def test_manipulability_matches_numpy(panda):
    robot, group, _, _, q0 = panda
    model, data = robot.model, robot.model.createData()
    fid = robot.frame_id(TIP)
    rng = np.random.default_rng(3)
    for position_only in (False, True):
        servo = Servo(group, TIP, ServoConfig(position_only=position_only))
        for q in [q0] + list(group.random_configurations(rng, 3)):
            J = pin.computeFrameJacobian(model, data, group.to_full_q(q), fid, pin.LOCAL)
            J = J[:3 if position_only else 6, group.iv_full]
            expected = math.sqrt(max(np.linalg.det(J @ J.T), 0.0))
            got = servo.step_twist(q, np.zeros(6), True, DT).manipulability
            assert got == pytest.approx(expected, rel=1e-7, abs=1e-12)
    q = q0.copy()
    q[3] = group.upper[3]  # elbow nearly stretched (Panda's joint 4 limit: -0.07 rad)
    stretched = Servo(group, TIP).step_twist(q, np.zeros(6), True, DT).manipulability
    assert stretched < Servo(group, TIP).step_twist(q0, np.zeros(6), True, DT).manipulability


@pytest.fixture(scope="module")
def pr2():
    robot, group = robots.load_group("pr2_right")
    scene = PlanningScene.for_model(robot.model)
    checker = CollisionChecker.from_urdf(robot.model, robots.urdf_text("pr2_right"),
                                         robots.srdf_text("pr2_right"), scene)
    return group, scene, checker


def test_self_collision_damped(pr2):
    """PR2's gripper driven back into its own shoulder: a robot-robot pair keeps the bound."""
    group, scene, checker = pr2
    scene.clear()
    twist = np.array([-0.3, 0.0, 0.0, 0.0, 0.0, 0.0])  # toward the torso [m/s]
    config = ServoConfig(acceleration_limit=ACC)
    for use in (None, checker):
        servo, q = Servo(group, group.tip, config, checker=use), group.mid_configuration()
        distances, holds = [], 0
        for k in range(500):
            step = servo.step_twist(q, twist, True, DT)
            holds += step.flag != 1  # met at speed, pairs are braked: no hold
            q = step.q_next
            if use is not None or k % 5 == 0:
                distances.append(checker.min_distance(group.to_full_q(q)))
        nearest = min(distances, key=lambda r: r.distance_m)
        assert nearest.pair[0].startswith("r_") and nearest.pair[1].startswith("r_")
        if use is None:
            assert nearest.distance_m < 0.0  # blind, the gripper hits the shoulder
        else:
            assert config.clearance_m <= nearest.distance_m < config.clearance_m + 0.005
        assert holds == 0


def test_continuous_joints_with_checker(pr2):
    """PR2's right arm (two continuous joints, torso and the rest locked) in a live scene."""
    group, scene, checker = pr2
    scene.clear()
    assert group.continuous.any()
    q = group.mid_configuration()
    rolls = group.continuous
    q[rolls] = math.pi + 0.2  # angles beyond pi (cos/sin in the full model)
    servo = Servo(group, group.tip, ServoConfig(acceleration_limit=ACC), checker=checker)
    qs = [q.copy()]
    for twist, in_world, steps in (([0.0, 0.0, 0.0, 0.5, 0.0, 0.0], False, 100),  # roll
                                   ([0.0, 0.0, 0.1, 0.0, 0.0, 0.0], True, 300)):  # up
        if in_world:  # the live scene gains a ball above the tip, just beyond influence
            above = group.fk(q, group.tip).translation
            for height in np.arange(0.05, 0.5, 0.01):
                _ball(scene, above + [0.0, 0.0, height])
                if _distance(checker, group, q) > servo.config.influence_m:
                    break
        for _ in range(steps):
            step = servo.step_twist(q, np.array(twist), in_world, DT)
            assert step.flag == 1
            q = step.q_next
            qs.append(q.copy())
    qs = np.array(qs)
    assert (qs[:, rolls] > 2.0).all()  # angles, never wrapped to -pi (no atan2 jump)
    assert min(_distance(checker, group, x) for x in qs[::5]) >= servo.config.clearance_m
    assert _distance(checker, group, qs[-1]) < 0.02  # it went as far as the ball allowed
    bounded = np.isfinite(group.lower)
    v = np.diff(qs, axis=0) / DT
    assert (np.abs(v) <= group.velocity_limits + 1e-7).all()
    assert (qs[:, bounded] >= group.lower[bounded] - 1e-9).all()
    _assert_rows_match_fd(checker, group, qs[-1])


def _assert_rows_match_fd(checker, group, q):
    """The nearest pair's damper row = d(min distance)/dq by central differences."""
    A, b, clearance = CollisionDampers(group, checker, 0.01, 0.5, 5.0).rows(q)
    assert abs(clearance - _distance(checker, group, q)) < 1e-9
    k = int(np.argmax(b))  # b = -xi (d - target): the nearest pair has the largest b
    h = 1e-6
    fd = np.array([(_distance(checker, group, q + h * e) - _distance(checker, group, q - h * e))
                   / (2 * h) for e in np.eye(group.n)])
    np.testing.assert_allclose(A[k], fd, atol=1e-4)


def test_bad_checker_and_config_name_the_field(panda):
    robot, group, _, _, _ = panda
    other, _ = robots.load_group("ur5")
    foreign = CollisionChecker.from_urdf(other.model, robots.urdf_text("ur5"))
    with pytest.raises(ValueError, match="checker"):
        Servo(group, TIP, checker=foreign)
    with pytest.raises(ValueError, match="clearance_m"):
        Servo(group, TIP, ServoConfig(clearance_m=0.1, influence_m=0.05))
    with pytest.raises(ValueError, match="damper_gain"):
        Servo(group, TIP, ServoConfig(damper_gain=0.0))


def test_a_second_arm_where_the_robot_holds_it_is_avoided():
    """Baxter's left arm servoed toward its right, where the right arm now stands (not
    where it stood when the group was made): with :meth:`Servo.hold` given the right arm's
    values, every command keeps the clearance from it; without, the servo drives into it.
    Distances by the checker on a full configuration this test assembles by joint name."""
    robot, left = robots.load_group("baxter_left")
    right = robot.group(base="torso", tip="right_gripper")
    checker = CollisionChecker.from_urdf(robot.model, robots.urdf_text("baxter_left"),
                                         robots.srdf_text("baxter_left"),
                                         PlanningScene.for_model(robot.model))
    model = robot.model
    q0 = left.mid_configuration()
    T0 = left.fk(q0, "left_gripper")
    target = pin.SE3(T0.rotation, T0.translation + np.array([0.0, -0.5, 0.0]))
    config = ServoConfig(acceleration_limit=ACC, gain=5.0)

    def drive(servo, steps):
        q, qs = q0.copy(), [q0.copy()]
        for _ in range(steps):
            q = servo.step_pose(q, target, DT).q_next
            qs.append(q.copy())
        return np.array(qs)

    blind = drive(Servo(left, "left_gripper", config), 800)
    # the right arm's hand where the blind path ends (position only)
    there = solve(right, PoseTarget(right.tip, pin.SE3(np.eye(3), left.fk(
        blind[-1], "left_gripper").translation), position_only=True),
        right.mid_configuration(), "lm", 0.5, 0, 1)
    assert there.success
    held = dict(zip(right.joint_names, there.q))

    moved = ("left_", "l_gripper")  # the links the left arm moves

    def distance(q):
        """The nearest pair with a side the left arm moves (the right gripper's fingers
        sit 6.5 mm apart whatever it does)."""
        full = left.to_full_q(q)
        for name, value in held.items():
            full[model.idx_qs[model.getJointId(name)]] = value
        pairs = checker.distances(full)
        return min(d for d, names in zip(pairs.distances_m, pairs.compiled.pair_names)
                   if any(n.startswith(moved) for n in names))

    assert min(distance(q) for q in blind[::10]) < 0.0
    unheld = drive(Servo(left, "left_gripper", config, checker=checker), 1500)
    assert min(distance(q) for q in unheld[::10]) < 0.0  # it avoids where the arm was
    servo = Servo(left, "left_gripper", config, checker=checker)
    servo.hold(held)
    qs = drive(servo, 1500)
    assert min(distance(q) for q in qs) >= config.clearance_m - 1e-9
    _check_limits(left, qs)
