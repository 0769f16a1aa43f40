"""ConstrainedIK goal messages -> core constraints, costs and pose targets.

One table, :data:`GOAL_TERMS`: per list field of the goal, which part of the problem its
terms go to and how each is built, a direct call of the core class of the same name
(Drake's meaning); the core validates the numbers and frames.  An empty frame name
means the model's root frame (``universe``).
"""
from __future__ import annotations

from typing import Callable, List, NamedTuple, Optional, Sequence, Tuple

import numpy as np
import pinocchio as pin

from ros2_ik.core import constraints as C
from ros2_ik.core import costs as K
from ros2_ik.core.constraints import DistanceConstraint, MinimumDistanceUpperBoundConstraint
from ros2_ik.core.errors import IKError, InvalidGoal, InvalidJoint
from ros2_ik.core.model.joint_values import with_joint_value
from ros2_ik.core.pose import PoseTarget
from ros2_ik.node import whole_body_terms as wb
from ros2_ik.node.conversions import (
    finite_or, pose_to_se3, quaternion_to_rotation, weights_array)
from ros2_ik.node.error_codes import RequestError, code_for_exception
from ros2_ik.node.request_frames import resolve

ROOT = "universe"


def _f(inputs: "_Inputs", name: str) -> str:
    """Return the model frame a term's frame name means (the root: '' and its other names)."""
    return ROOT if not name or name in inputs.root_aliases else name


def _v(msg) -> np.ndarray:
    return np.array([msg.x, msg.y, msg.z], dtype=float)


def _offset(pose) -> pin.SE3:
    q = pose.orientation
    if (q.x, q.y, q.z, q.w) == (0.0, 0.0, 0.0, 0.0):  # an all-zero Pose means "none"
        return pin.SE3(np.eye(3), _v(pose.position))
    return pose_to_se3(pose, "x_abar_a")


def _name(msg) -> dict:
    return {"name": msg.name} if getattr(msg, "name", "") else {}


def constraints_of(model: pin.Model, goal, q_seed_full: Optional[np.ndarray] = None,
                   root_aliases: Tuple[str, ...] = ("", ROOT)) -> List:
    """Every constraint of a goal except the distance ones (need the scene: see below).

    ``q_seed_full``: the seed's full configuration (terms placed where the seed puts them:
    a support polygon, a held contact); ``root_aliases``: frame names meaning the model's
    root (a term's frame, a contact target's frame).  An error names the message field first.
    """
    inputs = _Inputs(model, None, q_seed_full, root_aliases)
    return [_field(f"{field}[{i}]", lambda build=build, m=m: build(inputs, m))
            for field, part, build in GOAL_TERMS if part == CONSTRAINT
            for i, m in enumerate(getattr(goal, field))] + _joint_bounds(model, goal.joint_bounds)


def scene_constraints(goal) -> bool:
    """Whether the goal has constraints that need the collision checker."""
    return any(getattr(goal, field) for field, part, _ in GOAL_TERMS if part == SCENE)


def distance_constraints_of(checker, goal) -> List:
    """Return the goal's scene constraints built here (upper bound, named pairs) on ``checker``.

    An error names the message field first (``distance_constraints[1]: geometry_a: ...``)
    and keeps the core error's code.  The minimum distance is the caller's (it needs the
    node's configuration).
    """
    inputs = _Inputs(None, checker)
    return [_field(f"{field}[{i}]", lambda build=build, m=m: build(inputs, m))
            for field, part, build in GOAL_TERMS if part == SCENE and build is not None
            for i, m in enumerate(getattr(goal, field))]


def _field(field: str, make: Callable):
    try:
        return make()
    except IKError as exc:
        raise RequestError(code_for_exception(exc), f"{field}: {exc}") from exc


def _polyhedron(inputs: "_Inputs", m):
    model = inputs.model
    points = np.array([[p.x, p.y, p.z] for p in m.p_gp], dtype=float).reshape(-1, 3).T
    if m.a_rows == 0 or len(m.a) != m.a_rows * 3 * points.shape[1]:
        raise InvalidGoal(f"polyhedron '{m.name}': a must have a_rows x 3N = "
                          f"{m.a_rows} x {3 * points.shape[1]} values, got {len(m.a)}")
    A = np.asarray(m.a, dtype=float).reshape(m.a_rows, -1)
    return C.PolyhedronConstraint(model, _f(inputs, m.frame_f), _f(inputs, m.frame_g), points, A,
                                  np.asarray(m.b, dtype=float), **_name(m))


def _joint_bounds(model: pin.Model, m) -> List:
    if not m.joint_names:
        return []
    if not len(m.joint_names) == len(m.lower) == len(m.upper):
        raise InvalidGoal("joint_bounds: joint_names, lower and upper differ in length")
    bounds = {n: (lo, hi) for n, lo, hi in zip(m.joint_names, m.lower, m.upper)}
    return [C.JointBoundsConstraint(model, bounds)]


def costs_of(model: pin.Model, goal, q_seed_full: np.ndarray,
             root_aliases: Tuple[str, ...] = ("", ROOT)) -> List:
    """Every cost of a goal; posture costs default to the seed.

    ``root_aliases``: frame names meaning the model's root, as for :func:`constraints_of`.
    """
    inputs = _Inputs(model, None, q_seed_full, root_aliases)
    return [_field(f"{field}[{i}]", lambda build=build, m=m: build(inputs, m))
            for field, part, build in GOAL_TERMS if part == COST
            for i, m in enumerate(getattr(goal, field))]


def _matrix3(values: Sequence[float]) -> np.ndarray:
    if len(values) == 0:
        return np.eye(3)
    if len(values) != 9:
        raise InvalidGoal(f"position cost: c must have 9 values (3x3), got {len(values)}")
    return np.asarray(values, dtype=float).reshape(3, 3)


def _posture(inputs: "_Inputs", m):
    """Return a PostureCost toward ``m.nominal`` (named joints overwrite the seed) or the seed."""
    model = inputs.model
    q_nominal = np.array(inputs.q_seed_full, dtype=float)
    if len(m.nominal.position) != len(m.nominal.name):
        raise InvalidGoal("posture cost: nominal.name and nominal.position differ in length")
    for name, value in zip(m.nominal.name, m.nominal.position):
        try:
            q_nominal = with_joint_value(model, q_nominal, name, value)
        except InvalidJoint as exc:  # a goal's field, not a seed: INVALID_GOAL
            raise InvalidGoal(f"posture cost: {exc}") from exc
    weights: object = 1.0
    if len(m.weights):
        if len(m.weights) != model.nv:
            raise InvalidGoal(f"posture cost: weights must be empty or have nv={model.nv} "
                              f"values, got {len(m.weights)}")
        weights = np.asarray(m.weights, dtype=float)
    return K.PostureCost(model, q_nominal, weights)


def pose_goals(goal, cfg, snapshot, base_moves: bool, tip: str = ""
               ) -> Tuple[List[PoseTarget], int]:
    """Return the PoseTargets of ``goal.pose_goals`` (tolerances defaulted from the config).

    A target in a frame the model's world stands for, or outside the model, is put in
    the world (node/request_frames.py; ``base_moves``: the group moves the base).  A
    pose goal naming no link is for the goal's ``tip_link``, else for ``tip`` (the tip the
    goal resolved to: the first pose goal's link, else the group's; as a ComputeIK request
    naming none).
    """
    placed = [resolve(snapshot, m.target.header.frame_id,
                      pose_to_se3(m.target.pose, f"pose_goals[{i}].target.pose"), base_moves)
              for i, m in enumerate(goal.pose_goals)]
    targets = [PoseTarget(
        frame=m.tip_link or goal.tip_link or tip,
        T_ref_target=T_ref_target,
        reference_frame=frame,
        weights=weights_array(m.weights),
        position_tolerance_m=finite_or(m.position_tolerance, cfg.position_tolerance,
                                       f"pose_goals[{i}].position_tolerance"),
        orientation_tolerance_rad=finite_or(m.orientation_tolerance,
                                            cfg.orientation_tolerance,
                                            f"pose_goals[{i}].orientation_tolerance"),
        position_only=m.position_only)
        for i, (m, (frame, T_ref_target)) in enumerate(zip(goal.pose_goals, placed))]
    return targets, len(targets)


def reads_beside_the_chain(goal, group) -> bool:
    """Whether a goal has terms besides its pose goals and joint bounds, or bounds a held joint.

    Such a term may read a frame or a body the group does not move (a head camera's gaze,
    the centre of mass, an obstacle), and joint bounds may name a joint the group holds
    (a finger beside an arm): the joints beside the chain count for it, at the values the
    request gives them.
    """
    return any(getattr(goal, field) for field, _, _ in GOAL_TERMS) or any(
        name in group.locked for name in goal.joint_bounds.joint_names)


def count_terms(goal) -> int:
    """How many constraints, costs and pose goals a goal carries (for the size limit)."""
    return (sum(len(getattr(goal, field)) for field, _, _ in GOAL_TERMS)
            + len(goal.pose_goals) + len(goal.joint_bounds.joint_names))


class _Inputs(NamedTuple):
    """What a term's builder may read besides its message."""

    model: Optional[pin.Model]
    checker: object = None
    q_seed_full: Optional[np.ndarray] = None
    root_aliases: Tuple[str, ...] = ("", ROOT)


#: The parts a goal's terms go to: constraints on the model, constraints that need the
#: collision checker (the scene), costs.
CONSTRAINT, SCENE, COST = "constraint", "scene", "cost"
#: Every list of terms a ConstrainedIK goal carries, in the order the problem takes them:
#: ``(goal field, part, builder(inputs, message) -> core term)``, each builder a direct
#: call of the core class of the same name (Drake's meaning).  A builder of None: the
#: caller builds it (the minimum distance needs the node's configuration).  A new term
#: type is one line here (plus its message field).
GOAL_TERMS: Tuple[Tuple[str, str, Optional[Callable]], ...] = (
    ("position_constraints", CONSTRAINT, lambda i, m: C.PositionConstraint(
        i.model, _f(i, m.frame_a), _v(m.lower), _v(m.upper), _f(i, m.frame_b), _v(m.p_bq),
        _offset(m.x_abar_a), **_name(m))),
    ("orientation_constraints", CONSTRAINT, lambda i, m: C.OrientationConstraint(
        i.model, _f(i, m.frame_abar), quaternion_to_rotation(m.r_abar_a, "r_abar_a"),
        _f(i, m.frame_bbar), quaternion_to_rotation(m.r_bbar_b, "r_bbar_b"), m.theta_bound,
        **_name(m))),
    ("rotation_box_constraints", CONSTRAINT, lambda i, m: C.RotationBoxConstraint(
        i.model, _f(i, m.frame_abar), quaternion_to_rotation(m.r_abar_a, "r_abar_a"),
        _f(i, m.frame_bbar), quaternion_to_rotation(m.r_bbar_b, "r_bbar_b"), _v(m.tolerances),
        m.parameterization or "xyz_euler", **_name(m))),
    ("gaze_constraints", CONSTRAINT, lambda i, m: C.GazeTargetConstraint(
        i.model, _f(i, m.frame_a), _v(m.p_as), _v(m.n_a), _f(i, m.frame_b), _v(m.p_bt),
        m.cone_half_angle, **_name(m))),
    ("angle_constraints", CONSTRAINT, lambda i, m: C.AngleBetweenVectorsConstraint(
        i.model, _f(i, m.frame_a), _v(m.a_a), _f(i, m.frame_b), _v(m.b_b), m.angle_lower,
        m.angle_upper, **_name(m))),
    ("point_distance_constraints", CONSTRAINT, lambda i, m: C.PointToPointDistanceConstraint(
        i.model, _f(i, m.frame1), _v(m.p_b1p1), _f(i, m.frame2), _v(m.p_b2p2), m.distance_lower,
        m.distance_upper, **_name(m))),
    ("line_distance_constraints", CONSTRAINT, lambda i, m: C.PointToLineDistanceConstraint(
        i.model, _f(i, m.frame_point), _v(m.p_b1p), _f(i, m.frame_line), _v(m.p_b2q), _v(m.n_b2),
        m.distance_lower, m.distance_upper, **_name(m))),
    ("polyhedron_constraints", CONSTRAINT, _polyhedron),
    ("com_constraints", CONSTRAINT, lambda i, m: C.CenterOfMassConstraint(
        i.model, _v(m.lower), _v(m.upper), frame_A=_f(i, m.frame_a), **_name(m))),
    ("support_polygon_constraints", CONSTRAINT, wb.support_polygon),
    ("contact_constraints", CONSTRAINT, wb.contact),
    ("point_on_plane_constraints", CONSTRAINT, lambda i, m: C.PointOnPlaneConstraint(
        i.model, m.frame, p_FP=_v(m.p_fp), plane_point=_v(m.plane_point),
        plane_normal=wb.or_z(_v(m.plane_normal)), a_F=wb.or_z(_v(m.a_f)),
        cone_rad=m.cone_half_angle, height_lower=m.height_lower,
        height_upper=m.height_upper, **_name(m))),
    ("minimum_distance_constraints", SCENE, None),
    ("minimum_distance_upper_bound_constraints", SCENE,
     lambda i, m: MinimumDistanceUpperBoundConstraint(i.checker, m.bound, **_name(m))),
    ("distance_constraints", SCENE, lambda i, m: DistanceConstraint(
        i.checker, m.geometry_a, m.geometry_b, m.distance_lower, m.distance_upper,
        **_name(m))),
    ("position_costs", COST, lambda i, m: K.PositionCost(
        i.model, _f(i, m.frame_a), _v(m.p_ap), _f(i, m.frame_b), _v(m.p_bq), _matrix3(m.c))),
    ("orientation_costs", COST, lambda i, m: K.OrientationCost(
        i.model, _f(i, m.frame_abar), quaternion_to_rotation(m.r_abar_a, "r_abar_a"),
        _f(i, m.frame_bbar), quaternion_to_rotation(m.r_bbar_b, "r_bbar_b"), m.c)),
    ("angle_costs", COST, lambda i, m: K.AngleBetweenVectorsCost(
        i.model, _f(i, m.frame_a), _v(m.a_a), _f(i, m.frame_b), _v(m.b_b), m.c)),
    ("posture_costs", COST, _posture),
    ("com_costs", COST, lambda i, m: K.CenterOfMassCost(
        i.model, _v(m.target), wb.weights3(m.weights))),
)
