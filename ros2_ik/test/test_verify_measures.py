"""The full check's one forward kinematics: what each measure needs, and what it gets.

``verify.check`` updates the kinematics once per check, shared by every constraint:
frame placements alone (no Jacobians) when each constraint defines ``measure_rows`` or
``value``, the joint Jacobians too when one measures through ``evaluate``; the measures
read the placements as floats (``kinematics.frames.Placements``).  Each measure
is compared with geometry computed here from pinocchio placements
(``test_constraints_physical._independent``), never with the constraint's own code.
"""
from __future__ import annotations

import math
import weakref
import zlib

import numpy as np
import pinocchio as pin
import pytest
from test_constraints_fixtures import FRAMES, ROBOTS, random_configurations
from test_constraints_jacobians import _terms
from test_constraints_physical import CASES, _independent

from ros2_ik.core import constraints as C
from ros2_ik.core import terms
from ros2_ik.core.constraints import update_kinematics
from ros2_ik.core.kinematics.frames import Placements, frame_id, frame_jacobian
from ros2_ik.core.model.robots import load_group
from ros2_ik.core.verify import update_for_measures, verify_pose


@pytest.mark.parametrize("robot,term_name", CASES)
def test_measure_on_the_check_kinematics_is_the_geometric_violation(robot, term_name):
    """Each type's measure after what check runs for it (no Jacobians) = the geometry's."""
    model = ROBOTS[robot]()
    term = _terms(model, *FRAMES[robot])[term_name]
    data, reference = model.createData(), model.createData()
    violated = 0
    for q in random_configurations(model, 8, seed=zlib.crc32(term_name.encode()) % 983):
        update_for_measures(model, data, q, [term])
        assert not np.any(data.J), "check computed Jacobians a measure does not need"
        update_kinematics(model, reference, q)
        expected = _independent(term_name, model, reference, *FRAMES[robot])
        np.testing.assert_allclose(term.measure(model, data, q), expected, atol=1e-9,
                                   err_msg=term_name)
        violated += bool(np.max(expected) > 0)
    if robot == "tiny":  # the Panda's reach stays inside some of the wide boxes
        assert violated, f"{term_name}: no configuration violates it, the test says nothing"


class _HandLever(terms.Constraint):
    """``g(q) = |J_v[:, 0]|`` of the hand [m/rad]: a row only ``evaluate`` defines.

    Its value reads the frame Jacobian (not ``data.oMf``), so the check must compute the
    Jacobians for it.  The Jacobian of ``g`` is not needed here (zeros).
    """

    def __init__(self, model: pin.Model, lower: float, upper: float):
        self._fid = frame_id(model, "panda_hand")
        self._lower, self._upper = np.array([lower]), np.array([upper])
        self.name = "hand_lever"

    @property
    def lower_bound(self) -> np.ndarray:
        return self._lower

    @property
    def upper_bound(self) -> np.ndarray:
        return self._upper

    def evaluate(self, model, data, q):
        J = frame_jacobian(model, data, self._fid)
        return np.array([float(np.linalg.norm(J[:3, 0]))]), np.zeros((1, model.nv))


def test_a_constraint_measured_through_evaluate_gets_the_jacobians():
    """The panda's first joint turns about the world z axis through the origin: the hand's
    speed per rad of it is the hand's distance from that axis (computed here by FK)."""
    robot, group = load_group("panda")
    model = robot.model
    data = model.createData()
    rng = np.random.default_rng(4)
    for _ in range(5):
        q = group.random_configuration(rng)
        pin.framesForwardKinematics(model, data, group.to_full_q(q))
        x, y, _ = data.oMf[model.getFrameId("panda_hand")].translation
        lever = math.hypot(x, y)
        ok, _, _, reason = verify_pose(group, None, q, [_HandLever(model, lever - 1e-6,
                                                                   lever + 1e-6)])
        assert ok, reason
        ok, _, _, reason = verify_pose(group, None, q, [_HandLever(model, lever + 0.01,
                                                                   math.inf)])
        assert not ok and "hand_lever by 0.01 m" in reason, reason


@pytest.mark.parametrize("R_AbarA_identity,R_BbarB_identity",
                         [(True, True), (True, False), (False, True), (False, False)])
def test_orientation_measure_with_identity_offsets(R_AbarA_identity, R_BbarB_identity):
    """The angle of ``R_AB`` (scipy's rotation magnitude) with either offset the identity."""
    from scipy.spatial.transform import Rotation

    model = ROBOTS["panda"]()
    turn = Rotation.from_rotvec
    R_AbarA = np.eye(3) if R_AbarA_identity else turn([0.3, -0.2, 0.9]).as_matrix()
    R_BbarB = np.eye(3) if R_BbarB_identity else turn([-1.2, 0.4, 0.1]).as_matrix()
    term = C.OrientationConstraint(model, "panda_link3", R_AbarA, "panda_hand", R_BbarB, 0.5)
    data, reference = model.createData(), model.createData()
    violated = 0
    for q in random_configurations(model, 10, seed=7):
        update_for_measures(model, data, q, [term])
        pin.framesForwardKinematics(model, reference, q)
        R_WA = reference.oMf[model.getFrameId("panda_link3")].rotation @ R_AbarA
        R_WB = reference.oMf[model.getFrameId("panda_hand")].rotation @ R_BbarB
        theta = Rotation.from_matrix(R_WA.T @ R_WB).magnitude()
        np.testing.assert_allclose(term.measure(model, data, q), [max(theta - 0.5, 0.0)],
                                   atol=1e-9)
        violated += theta > 0.5
    assert violated


def _tight_terms(group, q_star, checker):
    """One constraint of every type, each holding at ``q_star`` with (almost) no slack.

    Built from placements computed here (pinocchio FK), so that a corrupted solution
    must move each term out of its bounds.
    """
    model = group.robot.model
    q_full = group.to_full_q(q_star)
    data = model.createData()
    pin.framesForwardKinematics(model, data, q_full)
    base, tip = group.base, group.tip
    X_bt = data.oMf[model.getFrameId(base)].actInv(data.oMf[model.getFrameId(tip)])
    X_wt = data.oMf[model.getFrameId(tip)]
    p_q = X_bt.act(np.array([0.02, -0.01, 0.1]))
    eps = 1e-6
    n_A = np.array([0.0, 0.6, 0.8])
    com = pin.centerOfMass(model, model.createData(), q_full)
    joint = group.joint_names[1]
    distance = checker.distances(q_full)
    ball = float(distance.distances_m[[k for k, names in enumerate(
        distance.compiled.pair_names) if set(names) == {"panda_hand", "ball"}][0]])
    clearance = checker.min_distance(q_full).distance_m
    corners = com[:2] + 1e-3 * np.array([[1.0, 0.0], [-0.5, 0.9], [-0.5, -0.9]])
    return [
        C.PositionConstraint(model, base, p_q - eps, p_q + eps, tip, [0.02, -0.01, 0.1]),
        C.OrientationConstraint(model, base, X_bt.rotation, tip, np.eye(3), eps),
        C.RotationBoxConstraint(model, base, X_bt.rotation, tip, np.eye(3), (eps, eps, eps)),
        C.RotationBoxConstraint(model, base, X_bt.rotation, tip, np.eye(3), (eps, eps, eps),
                                "rotation_vector"),
        C.GazeTargetConstraint(model, tip, [0.0, 0.0, 0.0], n_A, base,
                               X_bt.act(0.5 * n_A), 1e-3),
        C.AngleBetweenVectorsConstraint(model, base, X_bt.rotation @ n_A, tip, n_A, 0.0, 1e-3),
        C.PointToPointDistanceConstraint(model, tip, [0.0, 0.0, 0.0], base, [0.3, 0.2, 0.1],
                                         np.linalg.norm(X_bt.translation - [.3, .2, .1]) - eps,
                                         np.linalg.norm(X_bt.translation - [.3, .2, .1]) + eps),
        C.PointToLineDistanceConstraint(model, tip, [0.0, 0.0, 0.0], base, X_bt.translation,
                                        [0.0, 0.0, 1.0], 0.0, eps),
        C.PolyhedronConstraint(model, base, tip, np.zeros((3, 1)),
                               np.vstack((np.eye(3), -np.eye(3))),
                               np.concatenate((X_bt.translation, -X_bt.translation)) + eps),
        C.FramePlacementConstraint(model, tip, X_wt),
        C.PointOnPlaneConstraint(model, tip, plane_point=X_wt.translation,
                                 plane_normal=X_wt.rotation[:, 2], cone_rad=1e-3),
        C.JointBoundsConstraint(model, {joint: (q_star[1] - eps, q_star[1] + eps)}),
        C.LockedJointConstraint(model, {joint: q_star[1]}),
        C.CenterOfMassConstraint(model, com - eps, com + eps),
        C.CenterOfMassDistanceConstraint(model, [0.0, 0.0, 0.0], 0.0,
                                         float(np.linalg.norm(com)) + eps),
        C.ComInSupportPolygonConstraint(model, np.column_stack((corners, np.zeros(3)))),
        C.MinimumDistanceConstraint(checker, clearance - eps, clearance + 0.05),
        C.MinimumDistanceUpperBoundConstraint(checker, clearance + eps),
        C.DistanceConstraint(checker, "panda_hand", "ball", ball - eps, ball + eps),
    ]


def test_a_moved_joint_is_rejected_for_every_constraint_type():
    """A solution with one joint moved is rejected, by name, whatever the constraint type.

    Each term holds at ``q_star`` with no slack (:func:`_tight_terms`); the shoulder
    joint moved by +-0.1 rad must violate every two-sided term, and the one-sided ones
    (a distance at least / at most, the CoM's distance) in one of the two directions.
    """
    from ros2_ik.core.collision import (CollisionChecker, PlanningScene, SceneObject, Sphere,
                                        pose_from_xyz_quat)
    from ros2_ik.core.model import robots
    from ros2_ik.core.verify import DEFAULT_TOLERANCE, check

    robot, group = load_group("panda")
    model = robot.model
    scene = PlanningScene.for_model(model)
    scene.add(SceneObject("ball", [Sphere(0.05)],
                          T_frame_object=pose_from_xyz_quat([0.5, 0.3, 0.4])))
    checker = CollisionChecker.from_urdf(model, robots.urdf_text("panda"),
                                         robots.srdf_text("panda"), scene)
    q_star = np.array([0.2, -0.4, 0.1, -2.0, 0.3, 1.8, 0.5])
    tight = _tight_terms(group, q_star, checker)
    assert {type(c) for c in tight} >= {getattr(C, n) for n in C.__all__ if "Constraint" in n}
    data = model.createData()
    ok, _, _, reason, _ = check(group, None, q_star, tight, data, DEFAULT_TOLERANCE)
    assert ok, reason
    one_sided = (C.CenterOfMassDistanceConstraint, C.MinimumDistanceConstraint,
                 C.MinimumDistanceUpperBoundConstraint, C.ComInSupportPolygonConstraint)
    for term in tight:
        rejected = []
        for step in (0.1, -0.1):
            moved = q_star.copy()
            moved[1] += step
            ok, _, _, reason, violations = check(group, None, moved, [term], data,
                                                 DEFAULT_TOLERANCE)
            rejected.append(not ok and [v.name for v in violations] == [term.name])
        assert any(rejected) if isinstance(term, one_sided) else all(rejected), term.name


@pytest.mark.parametrize("robot", ["panda", "tiny"])
def test_placements_read_every_frame_as_pinocchio_places_it(robot):
    """``Placements.pose`` of every frame (on the world or moving) = ``data.oMf`` at each q.

    The views are made at the first configuration and must follow the next ones.
    """
    model = ROBOTS[robot]()
    data, reference = model.createData(), model.createData()
    for q in random_configurations(model, 4, seed=11):
        pin.framesForwardKinematics(model, data, q)
        pin.framesForwardKinematics(model, reference, q)
        placements = Placements.of(model, data, q)
        assert placements.q is q and placements.data is data
        for fid in range(model.nframes):
            X = reference.oMf[fid]
            np.testing.assert_allclose(placements.pose(fid), np.concatenate(
                (X.rotation.T.ravel(), X.translation)), atol=1e-15, err_msg=str(fid))


def test_placements_go_with_their_data():
    """One Placements per Data while it lives (its views read that Data's memory only)."""
    import gc

    model = ROBOTS["tiny"]()
    data = model.createData()
    q = pin.neutral(model)
    first = Placements.of(model, data, q)
    assert Placements.of(model, data, q) is first
    assert Placements.of(model, model.createData(), q) is not first
    ref = weakref.ref(data)
    del data
    gc.collect()
    assert ref() is None and first.data is None


@pytest.mark.parametrize("offset", [-1e-7, -1e-10, 0.0, 1e-10, 1e-7, 1e-5])
def test_orientation_measure_at_its_bound(offset):
    """At ``theta_bound = theta(q) + offset`` the measure is ``max(-offset, 0)`` within 1e-9.

    The trace's shortcut (inside by more than rounding) and the angle agree at the bound.
    """
    from scipy.spatial.transform import Rotation

    model = ROBOTS["panda"]()
    data = model.createData()
    R_AbarA = Rotation.from_rotvec([0.3, -0.2, 0.9]).as_matrix()
    for q in random_configurations(model, 5, seed=5):
        pin.framesForwardKinematics(model, data, q)
        R_WA = data.oMf[model.getFrameId("panda_link3")].rotation @ R_AbarA
        R_WB = data.oMf[model.getFrameId("panda_hand")].rotation
        theta = Rotation.from_matrix(R_WA.T @ R_WB).magnitude()
        if not 1e-3 < theta + offset < math.pi:
            continue
        term = C.OrientationConstraint(model, "panda_link3", R_AbarA, "panda_hand",
                                       np.eye(3), theta + offset)
        np.testing.assert_allclose(term.measure(model, data, q), [max(-offset, 0.0)],
                                   atol=1e-9)


@pytest.mark.parametrize("offset", [-1e-7, -1e-10, 0.0, 1e-10, 1e-7, 1e-5])
def test_angle_and_gaze_measures_at_their_bounds(offset):
    """Bounds at the angle of ``q`` plus ``offset``: the measure is ``max(-offset, 0)``.

    The cosine shortcuts (inside by more than rounding) and the angles agree at the
    bound; the angle between vectors is bounded from above and from below.  Angles
    computed here from the placements (numpy).
    """
    model = ROBOTS["panda"]()
    data = model.createData()
    a_A, b_B = np.array([0.6, 0.0, 0.8]), np.array([0.0, 0.28, 0.96])
    p_AS, n_A = np.array([0.01, 0.02, 0.0]), np.array([0.0, 0.6, 0.8])
    p_BT = np.array([0.5, 0.1, 0.3])
    measured = set()
    for q in random_configurations(model, 5, seed=9):
        pin.framesForwardKinematics(model, data, q)
        X_WA = data.oMf[model.getFrameId("panda_link2")]
        X_WB = data.oMf[model.getFrameId("panda_hand")]
        a, b = X_WA.rotation @ a_A, X_WB.rotation @ b_B
        angle = math.atan2(np.linalg.norm(np.cross(a, b)), a @ b)
        p = X_WB.actInv(X_WA.act(p_BT)) - p_AS  # T fixed in link2, seen from the hand
        alpha = math.atan2(np.linalg.norm(np.cross(p, n_A)), p @ n_A)
        terms_and_bounds = []
        if 1e-3 < angle + offset < math.pi:
            terms_and_bounds.append(C.AngleBetweenVectorsConstraint(
                model, "panda_link2", a_A, "panda_hand", b_B, 0.0, angle + offset))
        if 1e-3 < angle - offset < math.pi:
            terms_and_bounds.append(C.AngleBetweenVectorsConstraint(
                model, "panda_link2", a_A, "panda_hand", b_B, angle - offset, math.pi))
        if 1e-3 < alpha + offset < math.pi / 2:
            terms_and_bounds.append(C.GazeTargetConstraint(
                model, "panda_hand", p_AS, n_A, "panda_link2", p_BT, alpha + offset))
        for term in terms_and_bounds:
            np.testing.assert_allclose(term.measure(model, data, q), [max(-offset, 0.0)],
                                       atol=1e-9, err_msg=term.name)
            measured.add(type(term))
    assert measured == {C.AngleBetweenVectorsConstraint, C.GazeTargetConstraint}


def test_a_class_defining_measure_alone_is_checked_by_it():
    """A constraint written against ``measure`` (not ``measure_rows``) keeps its measure.

    Its rows are the placements' frame height above 0.5 m (read here from ``data.oMf``):
    forward kinematics only, no Jacobian, and the check reports its violation by name.
    """
    robot, group = load_group("panda")
    model = robot.model

    class Height(terms.Constraint):
        name = "height"
        lower_bound = property(lambda self: np.array([-math.inf]))
        upper_bound = property(lambda self: np.array([0.5]))

        def evaluate(self, model, data, q):
            raise AssertionError("the check must not evaluate a measured constraint")

        def measure(self, model, data, q):
            z = data.oMf[model.getFrameId("panda_hand")].translation[2]
            return np.array([max(z - 0.5, 0.0)])

    assert not Height.measured_through_evaluate
    data, outcomes = model.createData(), set()
    for q in (np.array([0.0, 0.0, 0.0, -0.2, 0.0, 0.3, 0.0]),  # upright: ~0.94 m high
              np.array([0.0, 1.2, 0.0, -1.0, 0.0, 2.0, 0.0])):  # reaching down: ~0.09 m
        pin.framesForwardKinematics(model, data, group.to_full_q(q))
        z = data.oMf[model.getFrameId("panda_hand")].translation[2]
        ok, _, _, reason = verify_pose(group, None, q, [Height()])
        assert ok == (z <= 0.5 + 1e-4), (z, reason)
        if not ok:
            assert f"height by {z - 0.5:.3g} m" in reason, reason
        outcomes.add(ok)
    assert outcomes == {True, False}
