"""Servo step (core.servo): reaching, tracking and limits, checked on an integrator.

Every check is independent of the QP: the pose error by full-model FK (group.fk), the
limits against the URDF arrays of the group, velocities and accelerations by finite
differences of the simulated position commands.
"""
import numpy as np
import pinocchio as pin
import pytest

from ros2_ik.core import robots
from ros2_ik.core.servo import Servo, ServoConfig

DT = 0.004  # 250 Hz
TIP = "panda_hand"
ACC = 10.0


@pytest.fixture(scope="module")
def group():
    return robots.load_group("panda")[1]


def _q0(group):
    q = group.mid_configuration()
    q[3] = -1.5  # away from the elbow singularity at the joint-4 mid
    return q


def _run(servo, q, targets):
    """Integrate q_{k+1} = q_k + qd_k dt; return the command history (k+1, n)."""
    qs = [q.copy()]
    for T in targets:
        q = servo.step_pose(q, T, DT).q_next
        qs.append(q.copy())
    return np.array(qs)


def _check_limits(group, qs, scale=1.0):
    tol = 1e-9
    assert (qs >= group.lower - tol).all() and (qs <= group.upper + tol).all()
    v = np.diff(qs, axis=0) / DT
    assert (np.abs(v) <= scale * group.velocity_limits + 1e-7).all()
    a = np.diff(np.vstack([np.zeros(group.n), v]), axis=0) / DT
    assert (np.abs(a) <= ACC + 1e-6).all()


def test_step_target_reached_within_limits(group):
    q0 = _q0(group)
    T0 = group.fk(q0, TIP)
    target = pin.SE3(pin.rpy.rpyToMatrix(0.2, -0.1, 0.3) @ T0.rotation,
                     T0.translation + np.array([-0.05, -0.08, -0.1]))
    servo = Servo(group, TIP, ServoConfig(acceleration_limit=ACC))
    qs = _run(servo, q0, [target] * 750)  # 3 s
    T = group.fk(qs[-1], TIP)
    assert np.linalg.norm(T.translation - target.translation) < 1e-4
    assert np.linalg.norm(pin.log3(T.rotation.T @ target.rotation)) < 1e-3
    _check_limits(group, qs)


def test_moving_target_tracked(group):
    q0 = _q0(group)
    T0 = group.fk(q0, TIP)
    r, speed = 0.1, 0.2
    w = speed / r
    centre = T0.translation - np.array([r, 0.0, 0.0])
    t = np.arange(1, 1001) * DT

    def pose(tk):
        p = centre + r * np.array([np.cos(w * tk), np.sin(w * tk), 0.0])
        return pin.SE3(T0.rotation, p)
    servo = Servo(group, TIP, ServoConfig(acceleration_limit=ACC, gain=20.0))
    qs = _run(servo, q0, [pose(tk) for tk in t])
    # after the 1 s transient: lag error of a first-order tracker ~ speed / gain = 1 cm
    errs = [np.linalg.norm(group.fk(q, TIP).translation - pose(tk).translation)
            for q, tk in zip(qs[500::25], t[499::25])]
    assert max(errs) < 0.015
    _check_limits(group, qs)


def test_limit_approached_slows_to_zero(group):
    """Worst case the QP may pick: every joint at its upper velocity bound, every step."""
    q = _q0(group)
    q[0] = group.upper[0] - 0.3
    servo = Servo(group, TIP, ServoConfig(acceleration_limit=ACC))
    qs = [q.copy()]
    for _ in range(1000):
        lo, hi, relaxed = servo.bounds(q, DT)
        assert not relaxed
        servo.reset(hi)
        q = q + hi * DT
        qs.append(q.copy())
    qs = np.array(qs)
    _check_limits(group, qs)
    v = np.diff(qs[:, 0]) / DT
    assert v.max() > 0.5  # it sped up toward the limit
    assert qs[-1, 0] > group.upper[0] - 1e-3  # reached it
    assert abs(v[-1]) < 1e-2  # and stopped there


def test_twist_follows_world_direction(group):
    q = _q0(group)
    p0 = group.fk(q, TIP).translation
    servo = Servo(group, TIP, ServoConfig(acceleration_limit=ACC))
    twist = np.array([0.0, 0.05, 0.0, 0.0, 0.0, 0.0])
    for _ in range(250):
        q = servo.step_twist(q, twist, True, DT).q_next
    moved = group.fk(q, TIP).translation - p0
    assert abs(moved[1] - 0.05) < 0.005  # ~1 s at 5 cm/s, minus the ramp-up
    assert np.linalg.norm(moved[[0, 2]]) < 0.003


def test_bad_input_names_the_field(group):
    servo = Servo(group, TIP)
    with pytest.raises(ValueError, match="q"):
        servo.step_pose(np.zeros(3), pin.SE3.Identity(), DT)
    with pytest.raises(ValueError, match="dt"):
        servo.step_pose(_q0(group), pin.SE3.Identity(), 0.0)
    with pytest.raises(ValueError, match="twist"):
        servo.step_twist(_q0(group), np.full(6, np.nan), True, DT)


def test_obstacle_in_the_path_is_passed_without_going_under_the_clearance(group):
    """A ball halfway along the tip's straight path: dampers keep 2 cm, the tip gets there.

    The clearance is re-measured by the checker's own min_distance on each command.
    """
    from ros2_ik.core.collision import CollisionChecker, PlanningScene
    from ros2_ik.core.collision.scene import SceneObject, Sphere, pose_from_xyz_quat
    q = _q0(group)
    T0 = group.fk(q, TIP)
    goal = pin.SE3(T0.rotation, T0.translation + np.array([0.0, 0.3, 0.0]))
    scene = PlanningScene.for_model(group.robot.model)
    scene.add(SceneObject("ball", [Sphere(0.05)], T_frame_object=pose_from_xyz_quat(
        T0.translation + np.array([0.0, 0.15, 0.0]))))
    checker = CollisionChecker.from_urdf(group.robot.model, robots.urdf_text("panda"),
                                         robots.srdf_text("panda"), scene)
    config = ServoConfig(acceleration_limit=ACC, clearance_m=0.02, influence_m=0.1)
    servo = Servo(group, TIP, config, checker=checker)
    qs = _run(servo, q, [goal] * 600)
    clearance = [checker.min_distance(group.to_full_q(x)).distance_m for x in qs[::3]]
    assert min(clearance) >= 0.02 - 1e-4  # first order: the dampers are linearised
    assert min(clearance) < 0.03  # it did pass close: the ball was in the way
    assert np.linalg.norm(group.fk(qs[-1], TIP).translation - goal.translation) < 1e-3
    _check_limits(group, qs)
    step = servo.step_pose(qs[-1], goal, DT)
    assert step.clearance_m == pytest.approx(
        checker.min_distance(group.to_full_q(qs[-1])).distance_m, abs=1e-9)


def test_joint_limits_yaml_accelerations_bound_the_servo():
    """joint_limits.yaml's max_acceleration below the config's limit binds per joint."""
    from ros2_ik.core.model.joint_limits_yaml import PlanningLimits
    amax = {"panda_joint1": 0.5, "panda_joint4": 1.0}
    group = robots.load_arm("panda", planning_limits={
        name: PlanningLimits(max_acceleration=a) for name, a in amax.items()}).group(
        base="panda_link0", tip=TIP)
    q0 = _q0(group)
    T0 = group.fk(q0, TIP)
    target = pin.SE3(T0.rotation, T0.translation + np.array([0.0, 0.2, -0.1]))
    qs = _run(Servo(group, TIP, ServoConfig(acceleration_limit=ACC)), q0, [target] * 250)
    v = np.diff(qs, axis=0) / DT
    a = np.abs(np.diff(np.vstack([np.zeros(group.n), v]), axis=0)) / DT
    limit = np.full(group.n, ACC)
    limit[[0, 3]] = 0.5, 1.0
    assert np.all(a <= limit + 1e-6)
    assert a[:, 0].max() == pytest.approx(0.5, rel=1e-6)  # it binds: joint 1 leads the move
