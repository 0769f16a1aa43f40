"""The servo node's state machine and safety gate (core/servo/supervisor.py), no DDS.

Runs a real core.servo.Servo on the Panda, or a stub step where a test needs a step the
QP would never produce (to see the independent check catch it).  Checks are our own:
finite differences of the commands, FK of the group.
"""
import math
from types import SimpleNamespace

import numpy as np
import pinocchio as pin
import pytest

from ros2_ik.core import robots
from ros2_ik.core.servo import Servo, ServoConfig
from ros2_ik.core.servo.supervisor import Limits, State, Supervisor, Target

DT, ACC, TIP = 0.004, 5.0, "panda_hand"


@pytest.fixture(scope="module")
def group():
    return robots.load_group("panda")[1]


def _q0(group):
    q = group.mid_configuration()
    q[3] = -1.5
    return q


def _supervisor(group, servo=None, timeout=0.3):
    servo = servo or Servo(group, TIP, ServoConfig(acceleration_limit=ACC))
    limits = Limits(np.array(group.lower), np.array(group.upper),
                    np.array(group.velocity_limits, dtype=float), ACC,
                    tuple(group.joint_names), 0.2)
    return Supervisor(servo, limits, timeout)


def _accelerations(qs):
    v = np.diff(np.array(qs), axis=0) / DT
    return np.diff(v, axis=0) / DT


def test_start_needs_joint_states_and_waits_for_a_target(group):
    sup = _supervisor(group)
    assert "stale" in sup.start(None)
    assert sup.tick(0.0, _q0(group), DT) is None  # still stopped: nothing sent
    assert sup.start(_q0(group)) == ""
    command = sup.tick(0.0, _q0(group), DT)
    assert sup.report.state == State.HALTED and "target" in sup.report.reason
    np.testing.assert_array_equal(command.q, _q0(group))


def test_follows_a_target_then_halts_smoothly_when_it_goes_stale(group):
    sup = _supervisor(group)
    q = _q0(group)
    sup.start(q)
    T0 = group.fk(q, TIP)
    target = pin.SE3(T0.rotation, T0.translation + np.array([0.2, 0.0, 0.0]))
    sup.set_target(Target(0.0, pose=target))
    qs, t = [q], 0.0
    for _ in range(50):  # 0.2 s: moving toward a target 0.2 m away
        t += DT
        qs.append(sup.tick(t, qs[-1], DT).q)
    assert sup.report.state == State.RUNNING
    assert np.abs(sup.qd).max() > 0.1
    for _ in range(300):  # the target is now older than 0.3 s
        t += DT
        qs.append(sup.tick(t, qs[-1], DT).q)
    assert sup.report.state == State.HALTED and "stale" in sup.report.reason
    assert np.abs(_accelerations(qs)).max() <= ACC + 1e-6  # no jump into the halt
    assert np.ptp(np.array(qs[-50:]), axis=0).max() == 0.0  # at rest, holding
    moved = group.fk(qs[-1], TIP).translation - T0.translation
    assert 0.0 < moved[0] < 0.2


def test_a_stop_while_moving_decelerates_to_rest_then_stops(group):
    """request_stop: no jump from speed to a held command; the last command is at rest."""
    sup = _supervisor(group)
    q = _q0(group)
    sup.start(q)
    T0 = group.fk(q, TIP)
    sup.set_target(Target(0.0, pose=pin.SE3(T0.rotation, T0.translation + [0.2, 0, 0])))
    qs, t = [q], 0.0
    for _ in range(50):
        t += DT
        qs.append(sup.tick(t, qs[-1], DT).q)
    speed = np.abs(sup.qd).max()
    assert speed > 0.1
    sup.request_stop("stopped on request")
    assert sup.report.state == State.HALTED and sup.report.reason.startswith("stopping")
    ticks = 0
    while (command := sup.tick(t, qs[-1], DT)) is not None:
        t += DT
        ticks += 1
        qs.append(command.q)
        assert ticks < 1000
    assert sup.report.state == State.STOPPED and sup.report.reason == "stopped on request"
    assert ticks >= math.floor(speed / (ACC * DT))  # it took the braking time
    assert np.abs(_accelerations(qs)).max() <= ACC + 1e-6
    np.testing.assert_array_equal(qs[-1], qs[-2])  # the last command: at rest
    sup.start(qs[-1])
    sup.request_stop()  # at rest: at once
    assert sup.report.state == State.STOPPED and sup.tick(t, qs[-1], DT) is None


def test_halts_when_the_arm_does_not_follow(group):
    sup = _supervisor(group)
    q = _q0(group)
    sup.start(q)
    sup.set_target(Target(0.0, twist=np.array([0.0, 0.0, 0.05, 0.0, 0.0, 0.0])))
    sup.tick(DT, q, DT)
    far = q.copy()
    far[2] += 0.5
    sup.tick(2 * DT, far, DT)
    assert sup.report.state == State.HALTED
    assert "not following" in sup.report.reason and group.joint_names[2] in sup.report.reason


def test_the_independent_check_stops_a_step_beyond_the_limits(group):
    """A step breaking the velocity limit (a faulty step) is never sent."""
    q = _q0(group)
    bad = np.zeros(group.n)
    bad[1] = 10.0 * group.velocity_limits[1]
    stub = SimpleNamespace(
        reset=lambda qd=None: None,
        step_twist=lambda q_, tw, world, dt: SimpleNamespace(
            qd=bad, q_next=q_ + bad * dt, flag=1, error_m=math.nan, error_rad=math.nan))
    sup = _supervisor(group, servo=stub)
    sup.start(q)
    sup.set_target(Target(0.0, twist=np.ones(6) * 0.01))
    command = sup.tick(DT, q, DT)
    assert sup.report.state == State.HALTED
    assert "velocity limit" in sup.report.reason and group.joint_names[1] in sup.report.reason
    np.testing.assert_array_equal(command.q, q)


def test_blocked_at_a_joint_limit_is_a_halt_that_names_the_joint(group):
    q = _q0(group)
    q[3] = group.upper[3]
    stub = SimpleNamespace(
        reset=lambda qd=None: None,
        step_pose=lambda q_, T, dt: SimpleNamespace(
            qd=np.zeros(group.n), q_next=q_.copy(), flag=1, error_m=0.05, error_rad=0.0))
    sup = _supervisor(group, servo=stub)
    sup.start(q)
    sup.set_target(Target(0.0, pose=pin.SE3.Identity()))
    sup.tick(DT, q, DT)
    assert sup.report.state == State.HALTED
    assert "joint limit" in sup.report.reason and group.joint_names[3] in sup.report.reason


def test_pause_holds_and_resume_waits_for_a_fresh_target(group):
    sup = _supervisor(group)
    q = _q0(group)
    sup.start(q)
    assert sup.pause(True) == "" and sup.report.state == State.PAUSED
    sup.set_target(Target(0.0, twist=np.array([0.05, 0, 0, 0, 0, 0])))
    assert np.array_equal(sup.tick(DT, q, DT).q, q)  # paused: the twist is ignored
    assert sup.pause(False) == ""
    sup.tick(2 * DT, q, DT)
    assert sup.report.state == State.RUNNING
    sup.stop()
    assert sup.pause(True) != "" and sup.tick(3 * DT, q, DT) is None


def test_a_twist_that_limits_bend_is_refused_until_another_comes(group):
    """Turning the hand about its axis: panda_joint7 ends on its limit, then it halts."""
    from ros2_ik.core.servo.supervisor import TipJacobian
    sup = _supervisor(group)
    sup.tip_jacobian = TipJacobian(group, TIP)
    q = np.array([0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785])
    sup.start(q)
    turn = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 1.5])
    qs, t = [q], 0.0
    while "joint limit" not in sup.report.reason and t < 5.0:
        t += DT
        sup.set_target(Target(t, twist=turn, twist_in_world=False))
        qs.append(sup.tick(t, qs[-1], DT).q)
    assert "joint limit" in sup.report.reason and group.joint_names[6] in sup.report.reason
    for _ in range(200):  # the same twist again: still refused, decelerated, holding
        t += DT
        sup.set_target(Target(t, twist=turn, twist_in_world=False))
        qs.append(sup.tick(t, qs[-1], DT).q)
    assert sup.report.state == State.HALTED
    assert np.ptp(np.array(qs[-20:]), axis=0).max() == 0.0
    assert (np.array(qs) <= group.upper + 1e-12).all()
    assert np.abs(_accelerations(qs)).max() <= ACC + 1e-6
    t += DT
    sup.set_target(Target(t, twist=-turn, twist_in_world=False))  # back: followed again
    sup.tick(t, qs[-1], DT)
    assert sup.report.state == State.RUNNING
