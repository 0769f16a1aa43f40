"""Fuzzing the servo's supervisor (the Panda) with hypothesis: what reaches the arm.

Sequences of targets as the servo topics pass them on (poses near and far, beyond any
reach and 1e300 m away; twists from zero to 1e300, in either frame), control periods of
1-20 ms, the arm following or lagging.  Every command the supervisor sends is checked
here, from the commands alone: finite, inside the joint limits, under the velocity limits,
and its velocity change under the acceleration limit times the period.
``FUZZ_SERVO_EXAMPLES`` sets the count.
"""
import numpy as np
import pinocchio as pin
from hypothesis import given
from hypothesis import strategies as st

from fuzz_answers import examples
from ros2_ik.core import robots
from ros2_ik.core.servo import Servo, ServoConfig
from ros2_ik.core.servo.supervisor import Limits, Supervisor, Target, TipJacobian

TIP, ACC = "panda_hand", 5.0
#: What a command may exceed a limit by (the supervisor's own check allows 1e-9).
SLACK = 1e-6
SCALES = st.sampled_from([0.0, 1e-300, 0.05, 1.0, 1e6, 1e300])


class Panda:
    """The group and one servo, reused (``Supervisor.start`` resets the servo)."""

    group = servo = None

    @classmethod
    def load(cls):
        if cls.group is None:
            cls.group = robots.load_group("panda")[1]
            cls.servo = Servo(cls.group, TIP, ServoConfig(acceleration_limit=ACC))
        return cls


@st.composite
def targets(draw):
    """A target's recipe: ("pose", offset [m], rotation vector [rad]) or ("twist", ...)."""
    if draw(st.booleans()):
        direction = np.array([draw(st.floats(-1.0, 1.0)) for _ in range(3)])
        rotation = np.array([draw(st.floats(-2.0, 2.0)) for _ in range(3)])
        return ("pose", direction * draw(SCALES), rotation)
    twist = np.array([draw(st.floats(-1.0, 1.0)) for _ in range(6)]) * draw(SCALES)
    return ("twist", twist, draw(st.booleans()))


@st.composite
def sessions(draw):
    """Segments of (target, ticks, period [s], the arm's lag [0..1])."""
    return [(draw(targets()), draw(st.integers(1, 60)),
             draw(st.sampled_from([0.001, 0.004, 0.02])),
             draw(st.sampled_from([0.0, 0.0, 0.5])))
            for _ in range(draw(st.integers(1, 5)))]


def violation(q, qd, qd_before, dt, lower, upper, velocity) -> str:
    """What a command breaks ('' when none), from the command alone."""
    if not (np.isfinite(q).all() and np.isfinite(qd).all()):
        return "a non-finite command"
    if np.any(q < lower - SLACK) or np.any(q > upper + SLACK):
        return f"a position outside the limits: {q}"
    if np.any(np.abs(qd) > velocity + SLACK):
        return f"a velocity over its limit: {qd}"
    jump = np.abs(qd - qd_before).max()
    if jump > ACC * dt + SLACK:
        return f"an acceleration of {jump / dt:.3g} over {ACC}"
    return ""


def run_session(session) -> None:
    """Drive a supervisor through ``session``; assert every command it sends."""
    panda = Panda.load()
    group = panda.group
    lower, upper = np.array(group.lower), np.array(group.upper)
    velocity = np.array(group.velocity_limits, dtype=float)
    limits = Limits(lower, upper, velocity, ACC, tuple(group.joint_names), 0.2)
    sup = Supervisor(panda.servo, limits, 0.3, tip_jacobian=TipJacobian(group, TIP))
    q = group.mid_configuration()
    q[3] = -1.5
    assert sup.start(q) == ""
    now, qd_before = 0.0, np.zeros(group.n)
    for (kind, a, b), ticks, dt, lag in session:
        if kind == "pose":
            T = group.fk(q, TIP)
            sup.set_target(Target(now, pose=pin.SE3(T.rotation @ pin.exp3(b),
                                                    T.translation + a)))
        else:
            sup.set_target(Target(now, twist=a, twist_in_world=b))
        for _ in range(ticks):
            now += dt
            command = sup.tick(now, q, dt)
            if command is None:
                return
            why = violation(command.q, command.qd, qd_before, dt, lower, upper, velocity)
            assert not why, f"{why}; state {sup.report.state.name}: {sup.report.reason}"
            qd_before = command.qd
            q = command.q + lag * (q - command.q)  # the arm follows, or lags behind


@examples("FUZZ_SERVO_EXAMPLES", 20)
@given(session=sessions())
def test_servo_commands_stay_within_the_limits(session):
    run_session(session)
