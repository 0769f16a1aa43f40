"""Whole-body IK (issue 47): floating and planar bases, the CoM, contacts, base costs.

Robots from example-robot-data loaded as users load them (a URDF with a free-flyer root,
or the SRDF's planar virtual joint).  Jacobians are checked against finite differences
on the configuration's Lie group (``pin.integrate``), values against pinocchio computed
here, and every SUCCESS again on the full model, from a configuration this test
assembles from the returned vector by joint name (not through the group's conversion).
"""
import math
import re
import time

import numpy as np
import pinocchio as pin
import pytest
import wholebody_groups

from ros2_ik.core import constraints as C
from ros2_ik.core import costs, errors, robots
from ros2_ik.core.model.floating_base import BaseBounds
from ros2_ik.core.model.world import MAX_COORDINATE_M
from ros2_ik.core.pose import PoseTarget
from ros2_ik.core.problem import Problem
from ros2_ik.core.model.robot import Robot
from ros2_ik.core.solve import solve
from ros2_ik.core.model.srdf_groups import srdf_groups

#: A Talos sole's corners in its sole frame [m] (the foot is 0.2 x 0.13 m).
SOLE = [[x, y, 0.0] for x in (-0.1, 0.1) for y in (-0.065, 0.065)]
SOLO_FEET = ["FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"]


_read = wholebody_groups.read
full_q = wholebody_groups.full_q


@pytest.fixture(scope="module")
def talos():
    group = wholebody_groups.talos()
    return group.robot, group


@pytest.fixture(scope="module")
def solo():
    group = wholebody_groups.solo()
    return group.robot, group


@pytest.fixture(scope="module")
def pr2():
    group = wholebody_groups.pr2()
    return group.robot, group


def kinematics(model, qf):
    data = model.createData()
    pin.computeJointJacobians(model, data, qf)
    pin.updateFramePlacements(model, data)
    return data


def random_q(group, rng, spread=0.3):
    q = group.mid_configuration()
    q[group.base_nq:] += rng.normal(0.0, spread, group.n - group.base_nq)
    if group.base_kind == "floating":
        q[:3] = rng.uniform(-1.0, 1.0, 3)
        q[3:7] = pin.Quaternion(pin.exp3(rng.normal(0.0, 0.5, 3))).coeffs()
    else:
        q[:3] = rng.uniform(-1.0, 1.0, 3)
    return group.clamp(q)


# ---------------------------------------------------------------- the Lie group
def test_group_layout_and_lie_operations_match_pinocchio(talos, pr2):
    for robot, g in (talos, pr2):
        model, rng = robot.model, np.random.default_rng(1)
        floating = g.base_kind == "floating"
        assert g.has_base and g.nq == g.n and g.nv == g.nq - (1 if floating else 0)
        q = random_q(g, rng)
        dq = rng.normal(0.0, 0.3, g.nv)
        qf = full_q(g, q)
        np.testing.assert_allclose(g.to_full_q(q), qf, atol=1e-15)
        dq_full = np.zeros(model.nv)
        dq_full[g.iv_full] = dq
        expected = pin.integrate(model, qf, dq_full)
        np.testing.assert_allclose(full_q(g, g.integrate(q, dq)), expected, atol=1e-12)
        np.testing.assert_allclose(g.difference(q, g.integrate(q, dq)), dq, atol=1e-9)
        np.testing.assert_allclose(g.from_full_q(qf), q, atol=1e-12)
    assert not robots.load_group("panda")[1].has_base


def test_fixed_base_groups_keep_the_root_locked(talos):
    robot, _ = talos
    arm = robot.group(base="torso_2_link", tip="gripper_left_base_link")
    assert not arm.has_base and arm.n == arm.nq == arm.nv == 7
    np.testing.assert_array_equal(arm.q_full_locked[:7], [0, 0, 0, 0, 0, 0, 1])


def test_a_whole_body_group_held_elsewhere_stays_whole_body(pr2):
    robot, group = pr2
    lift = "torso_lift_joint"
    arm = robot.whole_body(tip=group.tip, joints=[n for n in group.joint_names[group.base_nq:]
                                                  if n != lift])
    held = arm.held_at({lift: 0.2})
    assert held.has_base and held.base_kind == arm.base_kind and held.bounds == arm.bounds
    assert held.joint_names == arm.joint_names and held.locked[lift] == pytest.approx(0.2)
    q = arm.mid_configuration()
    lifted = held.fk(q, arm.tip).translation - arm.fk(q, arm.tip).translation
    np.testing.assert_allclose(lifted, [0.0, 0.0, 0.2 - arm.locked[lift]], atol=1e-9)


# ---------------------------------------------------------------- the terms
def _terms(robot, q_ref):
    m = robot.model
    qf = full_q(robot.whole_body(), q_ref)
    T = pin.SE3(pin.exp3(np.array([0.1, -0.2, 0.3])), np.array([0.2, 0.1, 0.0]))
    return [
        C.CenterOfMassConstraint(m, [-1, -1, 0], [1, 1, 2]),
        C.CenterOfMassConstraint(m, [-1, -1, -1], [1, 1, 1], frame_A="torso_2_link"),
        C.CenterOfMassDistanceConstraint(m, [0.3, 0.1, 0.2], 0.0, 0.5, frame_A="left_sole_link"),
        C.ComInSupportPolygonConstraint.from_frames(
            m, qf, ["left_sole_link", "right_sole_link"], [SOLE, SOLE], margin=0.02),
        C.FramePlacementConstraint(m, "left_sole_link", T),
        C.PointOnPlaneConstraint(m, "right_sole_link", p_FP=[0.1, 0.05, 0.0],
                                 plane_point=[0, 0, 0.1], plane_normal=[0.1, 0, 1],
                                 cone_rad=0.1),
    ]


def test_jacobians_of_the_new_terms_against_finite_differences_on_the_lie_group(talos):
    robot, g = talos
    model, rng = robot.model, np.random.default_rng(2)
    qf = full_q(g, random_q(g, rng))
    data = kinematics(model, qf)
    h = 1e-6
    items = [(c, c.evaluate) for c in _terms(robot, random_q(g, rng))]
    T = pin.SE3(pin.exp3(np.array([0.3, 0.0, 0.1])), np.array([0.5, 0.0, 1.0]))
    items += [(c, lambda m, d, q, c=c: c.gauss_newton(m, d, q)) for c in (
        costs.CenterOfMassCost(model, [0.1, 0.2, 0.9], weights=[1.0, 2.0, 0.5]),
        costs.BaseMotionCost(model, "root_joint", T, 2.0, 0.5))]
    for c, f in items:
        g0, J = f(model, data, qf)
        J_fd = np.zeros_like(J)
        for k in range(model.nv):
            e = np.zeros(model.nv)
            e[k] = h
            gp = f(model, kinematics(model, pin.integrate(model, qf, e)), None)[0]
            gm = f(model, kinematics(model, pin.integrate(model, qf, -e)), None)[0]
            J_fd[:, k] = (gp - gm) / (2 * h)
        np.testing.assert_allclose(J, J_fd, atol=2e-6, err_msg=getattr(c, "name", str(c)))
        # A cost's gradient is r^T J_r.
    cost = costs.BaseMotionCost(model, "root_joint", T, 2.0, 0.5)
    value, grad = cost.evaluate(model, data, qf)
    r, Jr = cost.gauss_newton(model, data, qf)
    assert value == pytest.approx(0.5 * r @ r) and np.allclose(grad, r @ Jr)


def test_values_of_the_new_terms_against_pinocchio(talos):
    robot, g = talos
    model, rng = robot.model, np.random.default_rng(3)
    qf = full_q(g, random_q(g, rng))
    data = kinematics(model, qf)
    ref = model.createData()
    com = pin.centerOfMass(model, ref, qf)
    pin.framesForwardKinematics(model, ref, qf)
    c = C.CenterOfMassConstraint(model, [-1, -1, -1], [1, 1, 1], frame_A="torso_2_link")
    X = ref.oMf[model.getFrameId("torso_2_link")]
    np.testing.assert_allclose(c.value(model, data, qf), X.rotation.T @ (com - X.translation),
                               atol=1e-12)
    np.testing.assert_allclose(c.evaluate(model, data, qf)[0], c.value(model, data, qf),
                               atol=1e-12)
    # The polygon: points inside a 0.4 x 0.2 rectangle on z = 0; rows are distances inside.
    rect = [[x, y, 0.0] for x in (-0.2, 0.2) for y in (-0.1, 0.1)]
    poly = C.ComInSupportPolygonConstraint(model, rect + [[0.0, 0.0, 0.3]], margin=0.01)
    inside = [min(0.2 - com[0], com[0] + 0.2, 0.1 - com[1], com[1] + 0.1)]
    assert poly.num_constraints == 4
    assert min(poly.value(model, data, qf)) == pytest.approx(inside[0], abs=1e-12)
    # 6D contact: the rows are the world position error and log3; measure the norms.
    T = pin.SE3(pin.exp3(np.array([0.02, 0.0, -0.01])), np.array([0.1, 0.2, 0.0]))
    contact = C.FramePlacementConstraint(model, "left_sole_link", T)
    F = ref.oMf[model.getFrameId("left_sole_link")]
    np.testing.assert_allclose(contact.value(model, data, qf)[:3], F.translation - T.translation,
                               atol=1e-12)
    m = contact.measure(model, data, qf)
    assert m[0] == pytest.approx(np.linalg.norm(F.translation - T.translation))
    assert m[3] == pytest.approx(np.linalg.norm(pin.log3(T.rotation.T @ F.rotation)))
    cost = costs.CenterOfMassCost(model, [0.0, 0.0, 1.0], weights=2.0)
    assert cost.evaluate(model, data, qf)[0] == pytest.approx(
        2.0 * float(np.sum((com - [0, 0, 1]) ** 2)))


# ---------------------------------------------------------------- solves
def _check_success(group, res, target=None, constraints=(), tol=1e-4):
    """Verify ``res`` on the full model independently: pose, constraints, limits, quaternion."""
    assert res.status.name == "SUCCESS", res.message
    model = group.robot.model
    q = np.asarray(res.q)
    if group.base_kind == "floating":
        assert abs(np.linalg.norm(q[3:7]) - 1.0) < 1e-12
    qf = full_q(group, q)
    nb = group.base_nq
    lo = model.lowerPositionLimit
    hi = model.upperPositionLimit
    for name, v in zip(group.joint_names[nb:], q[nb:]):
        j = model.getJointId(name)
        if model.nqs[j] == 1:
            assert lo[model.idx_qs[j]] <= v <= hi[model.idx_qs[j]], name
    data = kinematics(model, qf)
    if target is not None:
        F = data.oMf[model.getFrameId(target.frame)]
        assert np.linalg.norm(F.translation - target.T_ref_target.translation) <= \
            target.position_tolerance_m
        assert np.linalg.norm(pin.log3(target.T_ref_target.rotation.T @ F.rotation)) <= \
            target.orientation_tolerance_rad
    for c in constraints:
        assert np.all(c.measure(model, data, qf) <= tol), c.name
    return qf, data


def _humanoid(robot, g, rng):
    """A standing Talos q*, the soles held there, the CoM 2 cm inside, a hand target."""
    model = robot.model
    while True:
        q = g.mid_configuration()
        q[:3] = [*rng.uniform(-0.5, 0.5, 2), 1.02]
        q[7:] = 0.0
        q[7:] += rng.normal(0.0, 0.1, g.n - 7)
        q = g.clamp(q)
        qf = full_q(g, q)
        poly = C.ComInSupportPolygonConstraint.from_frames(
            model, qf, ["left_sole_link", "right_sole_link"], [SOLE, SOLE], margin=0.02)
        if np.all(poly.value(model, kinematics(model, qf), qf) >= 0.02):
            break
    cons = [C.FramePlacementConstraint.at_current(model, "left_sole_link", qf),
            C.FramePlacementConstraint.at_current(model, "right_sole_link", qf), poly]
    return q, cons, PoseTarget("gripper_left_joint", g.fk(q, "gripper_left_joint"))


def test_talos_both_soles_com_in_polygon_and_a_hand(talos):
    robot, g = talos
    rng = np.random.default_rng(4)
    for k in range(3):
        q_star, cons, target = _humanoid(robot, g, rng)
        seed = g.mid_configuration()
        seed[2] = 1.0
        res = solve(g, Problem(g, target, cons), seed, timeout_s=2.0, random_seed=k)
        _check_success(g, res, target, cons)


def test_talos_soles_flat_on_the_ground_by_their_corners(talos):
    """Each sole's corners on the ground where q* has it, its normal within 0.05 rad."""
    robot, g = talos
    model, rng = robot.model, np.random.default_rng(9)
    q_star, cons, target = _humanoid(robot, g, rng)
    data = kinematics(model, full_q(g, q_star))
    ground = {s: data.oMf[model.getFrameId(s)] for s in ("left_sole_link", "right_sole_link")}
    flat = [C.PointOnPlaneConstraint(model, s, p_FP=corner, plane_point=X.translation,
                                     plane_normal=X.rotation[:, 2], cone_rad=0.05)
            for s, X in ground.items() for corner in SOLE]
    assert all(np.all(c.measure(model, data, full_q(g, q_star)) <= 1e-9) for c in flat)
    seed = g.mid_configuration()
    seed[:3] = [q_star[0] + 0.1, q_star[1] - 0.1, 1.0]
    res = solve(g, Problem(g, target, flat + [cons[2]]), seed, timeout_s=2.0, random_seed=9)
    _, data = _check_success(g, res, target, flat + [cons[2]])
    for sole, X in ground.items():
        z = data.oMf[model.getFrameId(sole)].rotation[:, 2]
        assert math.acos(min(1.0, float(z @ X.rotation[:, 2]))) <= 0.05 + 1e-4


def test_solo12_four_feet_base_pose_and_com(solo):
    robot, g = solo
    model, rng = robot.model, np.random.default_rng(5)
    for k in range(3):
        q_star = g.mid_configuration()
        q_star[:3] = [*rng.uniform(-1, 1, 2), 0.25]
        q_star[7:] = np.tile([0.0, 0.8, -1.6], 4) + rng.normal(0, 0.1, 12)
        q_star = g.clamp(q_star)
        qf = full_q(g, q_star)
        data = kinematics(model, qf)
        cons = [C.PositionConstraint(model, "universe", data.oMf[model.getFrameId(f)].translation,
                                     data.oMf[model.getFrameId(f)].translation, f, [0, 0, 0])
                for f in SOLO_FEET]
        cons.append(C.ComInSupportPolygonConstraint.from_frames(model, qf, SOLO_FEET, margin=0.0))
        target = PoseTarget("base_link", g.fk(q_star, "base_link"))
        seed = g.mid_configuration()
        seed[2] = 0.3
        res = solve(g, Problem(g, target, cons), seed, timeout_s=2.0, random_seed=k)
        _check_success(g, res, target, cons)


def test_pr2_planar_base_reaches_beyond_the_arm_with_least_base_motion(pr2):
    robot, g = pr2
    assert g.base_kind == "planar" and g.base_joint == "world_joint"
    assert g.joint_names[:3] == ("world_joint/x", "world_joint/y", "world_joint/theta")
    seed = g.mid_configuration()
    T = g.fk(seed, "r_gripper_tool_frame")
    T.translation += np.array([2.5, 0.5, 0.0])  # far beyond the arm, beyond +-1 m too
    target = PoseTarget("r_gripper_tool_frame", T)
    cost = costs.BaseMotionCost(robot.model, g.base_joint, g.base_world_placement(seed), 1.0,
                                0.1)
    res = solve(g, Problem(g, target, costs=[cost]), seed, timeout_s=2.0, random_seed=0)
    _check_success(g, res, target)
    assert res.q[0] > 1.5  # the base moved (the URDF's planar limits do not confine it)


def test_the_base_world_placement_is_pinocchios(pr2, talos):
    """``base_world_placement`` (T_world_base, what markers and the base-motion cost read)
    is the base joint's ``oMi`` by pinocchio FK of the full configuration."""
    for robot, g in (pr2, talos):
        rng = np.random.default_rng(2)
        for _ in range(3):
            q = g.clamp(g.mid_configuration() + rng.uniform(-1.0, 1.0, g.nq))
            data = robot.model.createData()
            pin.forwardKinematics(robot.model, data, g.to_full_q(q))
            joint = robot.model.getJointId(g.base_joint)
            assert g.base_world_placement(q).isApprox(data.oMi[joint], 1e-12)


def test_a_base_position_never_wraps_but_a_planar_heading_does(pr2, solo):
    # A position [m] or quaternion coordinate is no angle: 4 m from the seed is not
    # 4 - 2 pi m; an unbounded planar heading is an angle.
    for _, g in (pr2, solo):
        seed = g.mid_configuration()
        q = seed.copy()
        q[:2] = (4.0, -5.0)
        q[2] = seed[2] + 7.0 if g.base_kind == "planar" else 6.5
        expected = q.copy()
        if g.base_kind == "planar":
            expected[2] -= 2 * math.pi
        np.testing.assert_allclose(g.unwrap_near(q, seed)[:3], expected[:3], atol=1e-12)
        assert not g.wraps[:g.base_nq].any() if g.base_kind == "floating" else \
            g.wraps[:3].tolist() == [False, False, True]
    robot, g = pr2
    seed = g.mid_configuration()
    T = g.fk(seed, "r_gripper_tool_frame")
    T.translation += np.array([4.5, 0.0, 0.0])  # the base must move more than pi m
    target = PoseTarget("r_gripper_tool_frame", T)
    res = solve(g, target, seed, timeout_s=2.0, random_seed=0)
    _check_success(g, res, target)
    assert res.q[0] > math.pi


def test_base_bounds_are_kept(pr2, talos):
    robot, _ = pr2
    g = robot.whole_body(tip="r_gripper_tool_frame", base_bounds=BaseBounds(
        (-0.2, -0.3, -math.inf), (0.3, 0.3, math.inf), -0.2, 0.2))
    seed = g.mid_configuration()
    T = g.fk(seed, "r_gripper_tool_frame")
    T.translation += np.array([0.25, 0.0, 0.0])
    res = solve(g, PoseTarget("r_gripper_tool_frame", T), seed, timeout_s=2.0, random_seed=1)
    _check_success(g, res)
    assert -0.2 <= res.q[0] <= 0.3 and -0.3 <= res.q[1] <= 0.3 and -0.2 <= res.q[2] <= 0.2
    # A free-flyer's yaw range: a target behind the robot's heading is not reached by yawing.
    t_robot, _ = talos
    gt = t_robot.whole_body(tip="gripper_left_joint", base_bounds=BaseBounds(
        (-1, -1, 0.5), (1, 1, 1.5), -0.1, 0.1))
    rng = np.random.default_rng(6)
    for _ in range(20):
        q = gt.random_configuration(rng, gt.mid_configuration())
        assert gt.within_limits(q)
        yaw = pin.rpy.matrixToRpy(gt.base_placement(q).rotation)[2]
        assert -0.1 - 1e-12 <= yaw <= 0.1 + 1e-12
    q = gt.mid_configuration()
    q[3:7] = pin.Quaternion(pin.rpy.rpyToMatrix(0.1, 0.0, 1.0)).coeffs()
    assert not gt.within_limits(q)
    yaw = pin.rpy.matrixToRpy(gt.base_placement(gt.clamp(q)).rotation)[2]
    assert yaw == pytest.approx(0.1)


def test_relative_pose_between_two_moving_hands(talos):
    """Two hands on one box: position and orientation of one hand in the other's frame."""
    robot, g = talos
    model = robot.model
    p = [0.0, -0.4, 0.0]  # the right hand 0.4 m along the left hand's -y
    R = np.eye(3)
    cons = [C.PositionConstraint(model, "gripper_left_joint", p, p, "gripper_right_joint",
                                 [0, 0, 0]),
            C.OrientationConstraint(model, "gripper_left_joint", R, "gripper_right_joint", R,
                                    0.0)]
    seed = g.mid_configuration()
    seed[2] = 1.0
    res = solve(g, Problem(g, None, cons), seed, timeout_s=2.0, random_seed=2)
    _, data = _check_success(g, res, None, cons)
    L = data.oMf[model.getFrameId("gripper_left_joint")]
    Rh = data.oMf[model.getFrameId("gripper_right_joint")]
    np.testing.assert_allclose(L.actInv(Rh.translation), p, atol=2e-4)


def test_srdf_groups_with_the_virtual_joint_become_whole_body_groups(pr2):
    robot, _ = pr2
    groups = srdf_groups(robot, robot.srdf_xml)
    assert groups["whole_body"].base_joint == "world_joint"
    assert groups["base"].base_joint == "world_joint" and groups["base"].joints == ()
    assert groups["right_arm"].base_joint is None
    for name in ("whole_body", "base"):
        g = robot.whole_body(tip=groups[name].tips[-1], joints=groups[name].joints)
        assert g.joint_names[:3] == ("world_joint/x", "world_joint/y", "world_joint/theta")
        assert g.n == 3 + len(groups[name].joints)
    base = robot.whole_body(joints=[])
    seed = base.mid_configuration()
    T = base.fk(seed, "base_footprint")
    T.translation += np.array([1.5, -2.0, 0.0])
    T.rotation = pin.rpy.rpyToMatrix(0.0, 0.0, 2.0)
    res = solve(base, PoseTarget("base_footprint", T), seed, timeout_s=1.0, random_seed=0)
    _check_success(base, res, PoseTarget("base_footprint", T))


def test_tiago_with_a_planar_base_given_in_the_api():
    robot = Robot.from_urdf(_read("tiago_description/robots/tiago.urdf"), root_joint="planar")
    arm = ["torso_lift_joint"] + [f"arm_{i}_joint" for i in range(1, 8)]
    g = robot.whole_body(tip="arm_tool_link", joints=arm)
    assert g.base_kind == "planar" and g.n == 3 + 8
    seed = g.mid_configuration()
    T = g.fk(seed, "arm_tool_link")
    T.translation += np.array([-1.5, 2.0, 0.1])
    target = PoseTarget("arm_tool_link", T)
    cost = costs.BaseMotionCost(robot.model, g.base_joint, g.base_world_placement(seed))
    res = solve(g, Problem(g, target, costs=[cost]), seed, timeout_s=2.0, random_seed=3)
    _check_success(g, res, target)


def test_b1_z1_four_feet_and_the_gripper_at_a_pose():
    robot = Robot.from_urdf(_read("b1_description/urdf/b1-z1.urdf"),
                            _read("b1_description/srdf/b1-z1.srdf"), root_joint="srdf")
    g = robot.whole_body(tip="gripperMover")
    model, rng = robot.model, np.random.default_rng(8)
    feet = ["FL_foot", "FR_foot", "RL_foot", "RR_foot"]
    q_star = g.mid_configuration()
    q_star[:3] = [0.3, -0.2, 0.5]
    legs = [g.joint_index[n] for n in g.joint_names if "_hip" in n or "thigh" in n or "calf" in n]
    q_star[legs] = np.tile([0.0, 0.7, -1.4], 4) + rng.normal(0.0, 0.1, 12)
    q_star = g.clamp(q_star)
    data = kinematics(model, full_q(g, q_star))
    cons = []
    for f in feet:
        p = data.oMf[model.getFrameId(f)].translation
        cons.append(C.PositionConstraint(model, "universe", p, p, f, [0, 0, 0]))
    target = PoseTarget("gripperMover", g.fk(q_star, "gripperMover"))
    seed = g.mid_configuration()
    seed[2] = 0.5
    seed[legs] = np.tile([0.0, 0.7, -1.4], 4)
    res = solve(g, Problem(g, target, cons), g.clamp(seed), timeout_s=2.0, random_seed=4)
    _check_success(g, res, target, cons)


# ---------------------------------------------------------------- failures, bad input
def test_a_com_bound_that_cannot_hold_is_no_solution_naming_it(talos):
    robot, g = talos
    model, rng = robot.model, np.random.default_rng(7)
    _, cons, target = _humanoid(robot, g, rng)
    high = C.CenterOfMassConstraint(model, [-10, -10, 3.0], [10, 10, 10], name="com_high")
    seed = g.mid_configuration()
    seed[2] = 1.0
    res = solve(g, Problem(g, target, cons[:2] + [high]), seed, timeout_s=0.3,
                random_seed=0)
    assert res.status.name == "NO_SOLUTION" and "com_high" in res.message


def test_bad_input_names_the_field(talos):
    robot, g = talos
    with pytest.raises(errors.InvalidArgument, match="position_lower"):
        robot.whole_body(base_bounds=BaseBounds((0, 0, 0), (-1, 1, 1)))
    with pytest.raises(errors.InvalidArgument, match="yaw_lower"):
        robot.whole_body(base_bounds=BaseBounds(yaw_lower=float("nan")))
    with pytest.raises(errors.InvalidSeed, match="quaternion"):
        g.clamped_seed(np.zeros(g.n))
    with pytest.raises(errors.InvalidSeed, match="values"):
        g.check_vector(np.zeros(g.n - 1))
    with pytest.raises(errors.InvalidArgument, match="root_joint"):
        Robot.from_urdf(_read("talos_data/robots/talos_reduced.urdf"), root_joint="spherical")
    bad_srdf = _read("pr2_description/srdf/pr2.srdf").replace(
        'child_link="base_footprint"', 'child_link="torso_lift_link"')
    with pytest.raises(errors.RobotModelError, match="child_link"):
        Robot.from_urdf(_read("pr2_description/urdf/pr2.urdf"), bad_srdf, root_joint="srdf")
    with pytest.raises(errors.InvalidArgument, match="whole_body"):
        robots.load_group("panda")[0].whole_body()
    with pytest.raises(errors.InvalidGoal, match="points_W"):
        C.ComInSupportPolygonConstraint.from_frames(
            robot.model, g.to_full_q(g.mid_configuration()), ["left_sole_link", "right_sole_link"])
    with pytest.raises(errors.InvalidGoal, match="margin"):
        C.ComInSupportPolygonConstraint(robot.model, SOLE, margin=-1.0)
    with pytest.raises(errors.InvalidGoal, match="cone_rad"):
        C.PointOnPlaneConstraint(robot.model, "left_sole_link", cone_rad=4.0)


@pytest.mark.parametrize("far", [1e300, -2e4])
def test_a_base_seed_beyond_the_world_is_refused_at_once(talos, pr2, far):
    """A base seed beyond ``MAX_COORDINATE_M`` is InvalidSeed naming the coordinate.

    It ran to the timeout and answered NO_SOLUTION ("best available has inf m"): no step
    moves a base 1e300 m away by metres.  A base and target far out but inside the
    world are still solved; a quaternion of 1e300 components is normalised, not zeroed.
    """
    for g, coordinate in ((talos[1], 1), (pr2[1], 0)):
        seed = g.mid_configuration()
        target = PoseTarget(g.tip, g.fk(seed, g.tip))
        seed[coordinate] = far
        started = time.perf_counter()
        with pytest.raises(errors.InvalidSeed, match=re.escape(g.joint_names[coordinate])):
            solve(g, target, seed, timeout_s=2.0)
        assert time.perf_counter() - started < 1.0
        with pytest.raises(errors.InvalidSeed, match="within 10000 m"):
            g.check_vector(seed)
        inside = g.mid_configuration()
        inside[coordinate] = math.copysign(MAX_COORDINATE_M, far)
        T = g.fk(inside, g.tip)
        res = solve(g, PoseTarget(g.tip, pin.SE3(T.rotation, T.translation + 0.01)), inside,
                    timeout_s=2.0, random_seed=0)
        assert res.status.name == "SUCCESS", res.message
    seed = talos[1].mid_configuration()
    seed[3:7] = (0.0, 0.0, 1e300, 1e300)
    np.testing.assert_allclose(talos[1].check_vector(seed)[3:7], [0, 0, 0.5 ** 0.5, 0.5 ** 0.5])


@pytest.mark.parametrize("distance", [100.0, 3000.0])
def test_a_target_beyond_the_arm_from_the_seed_is_reached_by_moving_the_base(
        talos, pr2, distance):
    """A hand target 100 m or 3 km from the seed's base: SUCCESS, checked on pinocchio FK.

    Restarts kept the base where the seed had it, and each attempt moved it only metres
    before its progress test cut it: NO_SOLUTION after the whole timeout ("best
    available has 83 m" at 100 m).  Now the restarts move the whole robot so that the
    hand lands on the target (free-flyer: the full pose; planar base: x, y and heading).
    """
    for robot, g in (talos, pr2):
        seed = g.mid_configuration()
        T0 = g.fk(seed, g.tip)
        for k, heading in enumerate((0.3, 2.0, -2.8)):
            offset = distance * np.array([math.cos(heading), math.sin(heading), 0.0])
            R = pin.rpy.rpyToMatrix(0.0, 0.0, heading).dot(T0.rotation)
            T = pin.SE3(R, T0.translation + offset)
            res = solve(g, PoseTarget(g.tip, T), seed, timeout_s=1.0, random_seed=k)
            assert res.status.name == "SUCCESS", (robot.model.name, heading, res.message)
            assert res.solve_time_s < 0.5
            data = kinematics(robot.model, full_q(g, res.q))
            M = data.oMf[robot.model.getFrameId(g.tip)]
            assert np.linalg.norm(M.translation - T.translation) < 1e-4
            assert np.linalg.norm(pin.log3(M.rotation.T.dot(T.rotation))) < 1e-3
            assert g.within_limits(res.q)


@pytest.mark.parametrize("distance", [100.0, 3000.0])
def test_a_position_box_far_across_the_floor_is_reached_by_moving_the_base(pr2, distance):
    """A world-fixed PositionConstraint box far away, no pose target: SUCCESS, checked by FK.

    As with a pose target, restarts kept the base at the seed: NO_SOLUTION after the
    timeout at 100 m.  They now carry the robot so that the box's point lands in its centre.
    """
    robot, g = pr2
    seed = g.mid_configuration()
    p0 = g.fk(seed, g.tip).translation
    p_BQ = np.array([0.0, 0.0, 0.05])
    for k, heading in enumerate((0.4, -2.5)):
        centre = p0 + distance * np.array([math.cos(heading), math.sin(heading), 0.0])
        box = C.PositionConstraint(robot.model, "universe", centre - 0.01, centre + 0.01, g.tip,
                                   p_BQ)
        res = solve(g, Problem(g, None, [box]), seed, timeout_s=1.0, random_seed=k)
        assert res.status.name == "SUCCESS", res.message
        assert res.solve_time_s < 0.5
        M = kinematics(robot.model, full_q(g, res.q)).oMf[robot.model.getFrameId(g.tip)]
        assert np.all(np.abs(M.act(p_BQ) - centre) <= 0.01 + 1e-6)
        assert g.within_limits(res.q)


def test_a_whole_body_target_beyond_the_world_is_refused_at_once(talos, pr2):
    """A whole-body target beyond ``MAX_COORDINATE_M`` is InvalidGoal naming the frame.

    The base would have to follow it beyond the world (a seed there is refused too);
    1e300 m away, it ran the whole timeout.  A fixed-base group keeps its reach proof.
    """
    for _, g in (talos, pr2):
        seed = g.mid_configuration()
        T0 = g.fk(seed, g.tip)
        for far in (1e300, -2e4):
            T = pin.SE3(T0.rotation, T0.translation + np.array([0.0, far, 0.0]))
            started = time.perf_counter()
            with pytest.raises(errors.InvalidGoal, match=re.escape(f"frame '{g.tip}'")):
                solve(g, PoseTarget(g.tip, T), seed, timeout_s=2.0)
            assert time.perf_counter() - started < 0.5
    robot = talos[0]
    arm = robot.group("torso_2_link", "gripper_left_joint")
    q = arm.mid_configuration()
    T = arm.fk(q, arm.tip)
    T.translation = T.translation + np.array([0.0, 1e300, 0.0])
    res = solve(arm, PoseTarget(arm.tip, T), q, timeout_s=2.0)
    assert res.status.name == "NO_SOLUTION" and "1e+300 m" in res.message, res.message


def test_a_target_beyond_the_bounded_base_reach_is_proven_out_of_reach(talos, pr2):
    """A target farther from the base's box than its frame reaches is NO_SOLUTION at once.

    ``base_bounds`` keep the base in a box; such a target ran the whole timeout.  One the
    base reaches inside its box is solved, checked on pinocchio FK.
    """
    for robot, g in (talos, pr2):
        bounded = robot.whole_body(tip=g.tip, joints=g.joint_names[g.base_nq:],
                                   base_bounds=BaseBounds((-1.0, -1.0, -2.0), (1.0, 1.0, 2.0)))
        seed = bounded.mid_configuration()
        T0 = bounded.fk(seed, bounded.tip)
        far = pin.SE3(T0.rotation, T0.translation + np.array([8.0, 0.0, 0.0]))
        started = time.perf_counter()
        res = solve(bounded, PoseTarget(bounded.tip, far), seed, timeout_s=2.0)
        assert res.status.name == "NO_SOLUTION", res.message
        assert "from the positions base_bounds allow the base" in res.message, res.message
        assert time.perf_counter() - started < 0.5
        near = pin.SE3(T0.rotation, T0.translation + np.array([0.9, 0.0, 0.0]))
        res = solve(bounded, PoseTarget(bounded.tip, near), seed, timeout_s=2.0,
                    random_seed=0)
        assert res.status.name == "SUCCESS", res.message
        M = kinematics(robot.model, full_q(bounded, res.q)).oMf[
            robot.model.getFrameId(bounded.tip)]
        assert np.linalg.norm(M.translation - near.translation) < 1e-4
        assert bounded.within_limits(res.q)


@pytest.mark.parametrize("solver", ["dls", "bfgs", "sqp"])
def test_every_solver_takes_whole_body_groups(solo, solver):
    """Quadruped feet held, the base moved to a target: solved on the group's Lie group."""
    robot, g = solo
    model = robot.model
    seed = g.mid_configuration()
    seed[2] = 0.3
    seed[7:] = np.tile([0.0, 0.8, -1.6], 4)
    data = kinematics(model, full_q(g, seed))
    # Feet within 1 mm (bfgs, a penalty method, does not settle on equality rows).
    cons = [C.PositionConstraint(model, "universe", data.oMf[model.getFrameId(f)].translation
                                 - 1e-3, data.oMf[model.getFrameId(f)].translation + 1e-3, f,
                                 [0, 0, 0]) for f in SOLO_FEET]
    T = g.fk(seed, "base_link")
    T.translation += np.array([0.03, -0.02, -0.03])
    T.rotation = T.rotation @ pin.rpy.rpyToMatrix(0.05, -0.05, 0.1)
    target = PoseTarget("base_link", T)
    res = solve(g, Problem(g, target, cons), seed, solver=solver, timeout_s=2.0,
                random_seed=0)
    _check_success(g, res, target, cons)


def test_docs_whole_body_blocks_run_and_succeed():
    """docs/whole_body.md works as written; its answers checked here on the full model."""
    import pathlib
    import re
    doc = (pathlib.Path(__file__).resolve().parents[2] / "docs" / "whole_body.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", doc, re.S)
    scope: dict = {}
    exec(compile(blocks[0], "docs/whole_body.md", "exec"), scope)  # noqa: S102 - our doc
    _check_success(scope["group"], scope["result"],
                   PoseTarget("gripper_left_joint", scope["T"]), scope["terms"])
    exec(compile(blocks[1], "docs/whole_body.md", "exec"), scope)  # noqa: S102 - our doc
    _check_success(scope["group"], scope["result"], PoseTarget("r_gripper_tool_frame",
                                                               scope["T"]))
