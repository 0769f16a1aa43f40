"""Whole-body servo step (core.servo.whole_body) on talos with a free-flyer, checked outside it.

The soles' drift and the CoM's place in the polygon are measured with a fresh pinocchio
Data (framesForwardKinematics, centerOfMass), the polygon against hand-written edges,
the base quaternion's norm directly.
"""
import daqp
import numpy as np
import pinocchio as pin
import pytest

from ros2_ik.core import robots
from ros2_ik.core.servo.whole_body import (
    Contact, WholeBodyConfig, WholeBodyServo, support_polygon)

DT = 0.004
HAND, SOLES = "gripper_left_base_link", ("left_sole_link", "right_sole_link")
CORNERS = np.array([[x, y, 0.0] for x in (0.1, -0.1) for y in (0.05, -0.05)])
MARGIN = 0.02


@pytest.fixture(scope="module")
def talos():
    root = robots.data_dir() / "talos_data"
    model = pin.buildModelFromUrdf(str(root / "robots/talos_full_v2.urdf"),
                                   pin.JointModelFreeFlyer())
    pin.loadReferenceConfigurations(model, str(root / "srdf/talos.srdf"), False)
    return model, np.array(model.referenceConfigurations["half_sitting"])


def _servo(model, q0):
    servo = WholeBodyServo(model, HAND, [Contact(s, CORNERS) for s in SOLES],
                           WholeBodyConfig(com_margin_m=MARGIN), posture=q0)
    servo.hold(q0)
    return servo


def _run(servo, q, offset, steps):
    """Step toward the hand's start pose + ``offset`` [m]; return every configuration."""
    data = servo.model.createData()
    pin.framesForwardKinematics(servo.model, data, q)
    T0 = data.oMf[servo.model.getFrameId(HAND)]
    target = pin.SE3(T0.rotation, T0.translation + np.asarray(offset))
    qs = [q]
    for _ in range(steps):
        qs.append(servo.step(qs[-1], target, DT).q_next)
    return qs, target


def _measure(model, qs, polygon):
    """Largest sole drift [m], smallest CoM margin [m], worst quaternion norm error."""
    data = model.createData()
    pin.framesForwardKinematics(model, data, qs[0])
    feet = [model.getFrameId(s) for s in SOLES]
    start = [data.oMf[f].copy() for f in feet]
    A, b = polygon
    drift, margin, unit = 0.0, np.inf, 0.0
    for q in qs[1:]:
        pin.framesForwardKinematics(model, data, q)
        drift = max(drift, *(np.linalg.norm(pin.log6(T.actInv(data.oMf[f])).vector)
                             for f, T in zip(feet, start)))
        com = pin.centerOfMass(model, data, q, False)
        margin = min(margin, float(np.min(b - A @ com[:2])))
        unit = max(unit, abs(np.linalg.norm(q[3:7]) - 1.0))
    return drift, margin, unit


def test_support_polygon_of_a_square():
    pts = np.array([[0, 0], [1, 0], [1, 1], [0, 1], [0.5, 0.5], [0.5, 0.0]])
    A, b = support_polygon(pts)
    assert len(b) == 4  # the inner and the collinear point are no vertices
    inside, outside = np.array([0.5, 0.5]), np.array([1.2, 0.5])
    assert np.all(A @ inside <= b) and not np.all(A @ outside <= b)
    np.testing.assert_allclose(np.min(b - A @ inside), 0.5)


def test_support_polygon_needs_an_area():
    with pytest.raises(ValueError, match="no polygon"):
        support_polygon(np.array([[0.0, 0.0], [1.0, 0.0], [2.0, 0.0]]))


def test_hand_reaches_with_soles_held_and_com_inside(talos):
    model, q0 = talos
    servo = _servo(model, q0)
    qs, target = _run(servo, q0, [0.1, 0.05, -0.1], 500)
    drift, margin, unit = _measure(model, qs, servo.polygon)
    data = model.createData()
    pin.framesForwardKinematics(model, data, qs[-1])
    assert np.linalg.norm(data.oMf[model.getFrameId(HAND)].translation
                          - target.translation) < 1e-3
    assert drift < 1e-4 and unit < 1e-12
    assert margin > MARGIN - 1e-3
    assert not np.allclose(qs[-1][:7], q0[:7])  # the base moved too (whole body)


def test_com_stays_inside_when_the_hand_asks_too_much(talos):
    """A target 0.8 m ahead: unreachable standing, the CoM stops at the shrunk polygon."""
    model, q0 = talos
    servo = _servo(model, q0)
    qs, _ = _run(servo, q0, [0.8, 0.0, -0.3], 500)
    drift, margin, _ = _measure(model, qs, servo.polygon)
    assert drift < 1e-4
    assert MARGIN - 1e-3 < margin < MARGIN + 5e-3  # pressed against the bound, not past


def _qp_written_out(servo, q, T_target, dt):
    """The step's velocity from the QP of the module docstring, built on a fresh Data and
    solved from scratch (daqp, no warm start): the reference the fast step must match."""
    model, c = servo.model, servo.config
    data = model.createData()
    pin.computeJointJacobians(model, data, q)
    pin.updateFramePlacements(model, data)

    def task(fid, T):
        T_err = T.actInv(data.oMf[fid])
        J = pin.Jlog6(T_err) @ pin.getFrameJacobian(model, data, fid, pin.LOCAL)
        return J, pin.log6(T_err).vector

    W = np.diag(np.square(c.hand_weights))
    J, e = task(model.getFrameId(HAND), T_target)
    posture = np.array([c.posture_weight if model.joints[j].nv == 1 else 0.0
                        for j in range(1, model.njoints) for _ in range(model.joints[j].nv)])
    H = J.T @ W @ J + np.diag(c.damping + c.lm_damping * (e @ W @ e) + posture)
    f = J.T @ W @ (c.hand_gain * e) - posture * c.posture_gain * pin.difference(
        model, q, servo.posture)
    rows, upper, lower = [], [], []
    for frame, T_hold in zip(SOLES, servo.T_world_contacts):
        J_c, e_c = task(model.getFrameId(frame), T_hold)
        rows.append(J_c)
        upper += list(-c.contact_gain * e_c)
        lower += list(-c.contact_gain * e_c)
    A_poly, b_poly = servo.polygon
    com = pin.centerOfMass(model, data, q)
    rows.append(A_poly @ pin.jacobianCenterOfMass(model, data, q)[:2])
    upper += list(c.com_gain * (b_poly - A_poly @ com[:2] - c.com_margin_m))
    lower += [-1e30] * len(b_poly)
    lo, hi = servo._box.fill(q, servo.v, dt, np.empty(model.nv), np.empty(model.nv))
    sense = np.array([0] * model.nv + [5] * 12 + [0] * len(b_poly), dtype=np.int32)
    v, _, flag, _ = daqp.solve(H, f, np.vstack(rows), np.r_[hi, upper], np.r_[lo, lower],
                               sense)
    assert flag == 1
    return np.clip(v, lo, hi)


def test_step_is_the_qp_written_out(talos):
    """Each step (reused arrays, compiled cost, warm-started QP) is the QP built plainly.

    Within daqp's primal tolerance (1e-6): from the last step's active set, daqp may stop
    at another point of that tolerance than from scratch (seen: 4e-8 rad/s).
    """
    model, q0 = talos
    servo = _servo(model, q0)
    data = model.createData()
    pin.framesForwardKinematics(model, data, q0)
    T0 = data.oMf[model.getFrameId(HAND)]
    q = q0
    for k in range(120):  # a far target: the CoM rows become active on the way
        T = pin.SE3(T0.rotation, T0.translation + min(k / 60, 1.0) * np.array([0.8, 0, -0.3]))
        expected = _qp_written_out(servo, q, T, DT)
        step = servo.step(q, T, DT)
        assert step.flag == 1
        np.testing.assert_allclose(step.v, expected, rtol=0, atol=1e-6)
        q = step.q_next
    assert servo.polygon[1].min() > 0  # sanity: a real polygon
    assert _measure(model, [q0, q], servo.polygon)[1] < MARGIN + 5e-3  # the CoM rows bit


def test_bad_input_names_the_field(talos):
    model, q0 = talos
    with pytest.raises(ValueError, match="hand"):
        WholeBodyServo(model, "no_such_frame", [Contact(SOLES[0], CORNERS)])
    servo = _servo(model, q0)
    bad = q0.copy()
    bad[9] = np.nan
    with pytest.raises(ValueError, match="q:"):
        servo.step(bad, pin.SE3.Identity(), DT)
    with pytest.raises(ValueError, match="dt"):
        servo.step(q0, pin.SE3.Identity(), 0.0)
    fresh = WholeBodyServo(model, HAND, [Contact(s, CORNERS) for s in SOLES])
    with pytest.raises(ValueError, match="hold"):
        fresh.step(q0, pin.SE3.Identity(), DT)


def test_joints_outside_moving_keep_their_values(talos):
    model, q0 = talos
    arm = [f"arm_left_{i}_joint" for i in range(1, 8)]
    legs = [f"leg_{s}_{i}_joint" for s in ("left", "right") for i in range(1, 7)]
    servo = WholeBodyServo(model, HAND, [Contact(s, CORNERS) for s in SOLES],
                           WholeBodyConfig(com_margin_m=MARGIN), posture=q0,
                           moving=arm + legs)
    servo.hold(q0)
    qs, target = _run(servo, q0, (0.05, 0.0, 0.05), 300)
    held = [model.joints[j].idx_q for j in range(2, model.njoints)
            if model.names[j] not in arm + legs]
    np.testing.assert_array_equal(qs[-1][held], q0[held])  # exactly: a zero box
    moved = [model.joints[model.getJointId(n)].idx_q for n in arm]
    assert np.abs(qs[-1][moved] - q0[moved]).max() > 1e-3
    with pytest.raises(ValueError, match="moving"):
        WholeBodyServo(model, HAND, [Contact(s, CORNERS) for s in SOLES], moving=["nope"])


def test_supervisor_follows_fresh_pose_targets_and_holds_otherwise(talos):
    """States and commands of the node's whole-body servo, on a whole-body group."""
    from ros2_ik.core.model.robot import Robot
    from ros2_ik.core.servo.supervisor import State, Target
    from ros2_ik.core.servo.whole_body_supervisor import WholeBodySupervisor
    model, q0 = talos
    urdf = (robots.data_dir() / "talos_data/robots/talos_full_v2.urdf").read_text()
    group = Robot.from_urdf(urdf, root_joint="floating").whole_body(tip=HAND)
    q = group.from_full_q(q0)
    sup = WholeBodySupervisor(_servo(model, q0), group, target_timeout_s=0.5)
    assert "joint_states" in sup.start(None)
    assert sup.start(q) == "" and sup.report.state == State.HALTED
    held = sup.tick(0.0, np.zeros(3), DT)  # no target yet: the start, held
    np.testing.assert_array_equal(held.q, q)
    assert not held.qd.any()
    T = group.fk(q, HAND)
    T.translation += (0.03, 0.0, 0.03)
    sup.set_target(Target(0.0, twist=np.ones(6)))
    assert "twist" in sup.report.reason
    sup.set_target(Target(0.0, pose=T))
    for k in range(200):
        command = sup.tick(0.1 * k / 200, np.zeros(3), DT)
    assert sup.report.state == State.RUNNING
    reached = group.fk(command.q, HAND).translation  # our FK of the command
    assert np.linalg.norm(reached - T.translation) < 5e-3
    qs = [q0, group.to_full_q(command.q)]
    drift, margin, unit = _measure(model, qs, sup.servo.polygon)
    assert drift < 1e-3 and margin >= MARGIN - 1e-3 and unit < 1e-12
    stale = sup.tick(10.0, np.zeros(3), DT)
    assert sup.report.state == State.HALTED and "stale" in sup.report.reason
    np.testing.assert_array_equal(stale.q, command.q)
    assert sup.tick(0.1, None, DT) is not None and "joint_states" in sup.report.reason
    sup.stop("done")
    assert sup.tick(0.1, np.zeros(3), DT) is None


def test_joint_limits_yaml_accelerations_bound_the_joints(talos):
    """``acceleration_limits`` (Robot.acceleration_limits: joint_limits.yaml's) bind per joint."""
    model, q0 = talos
    amax = np.full(model.nv, np.inf)
    slow = model.joints[model.getJointId("arm_left_4_joint")].idx_v
    amax[slow] = 0.2
    servo = WholeBodyServo(model, HAND, [Contact(s, CORNERS) for s in SOLES],
                           WholeBodyConfig(com_margin_m=MARGIN), posture=q0,
                           acceleration_limits=amax)
    servo.hold(q0)
    qs, _ = _run(servo, q0, (0.1, 0.1, 0.1), 150)
    i = model.joints[model.getJointId("arm_left_4_joint")].idx_q
    v = np.diff([q[i] for q in qs]) / DT
    a = np.abs(np.diff(np.concatenate([[0.0], v]))) / DT
    assert a.max() <= 0.2 + 1e-6
    assert a.max() == pytest.approx(0.2, rel=1e-6)  # it binds (the config's is 10)
