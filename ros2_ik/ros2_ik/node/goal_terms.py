"""ConstrainedIK goal messages -> core constraints, costs and pose targets.

One function per message type, each a direct call of the core class of the same name
(Drake's meaning); the core validates the numbers and frames.  An empty frame name
means the model's root frame (``universe``).
"""
from __future__ import annotations

from typing import Callable, List, Sequence, Tuple

import numpy as np
import pinocchio as pin

from ros2_ik.core import constraints as C
from ros2_ik.core import costs as K
from ros2_ik.core.constraints import DistanceConstraint, MinimumDistanceUpperBoundConstraint
from ros2_ik.core.errors import IKError, InvalidGoal
from ros2_ik.core.pose import PoseTarget
from ros2_ik.node.conversions import (
    finite_or, pose_to_se3, quaternion_to_rotation, weights_array)
from ros2_ik.node.error_codes import RequestError, code_for_exception

ROOT = "universe"


def _f(name: str) -> str:
    return name or ROOT


def _v(msg) -> np.ndarray:
    return np.array([msg.x, msg.y, msg.z], dtype=float)


def _offset(pose) -> pin.SE3:
    q = pose.orientation
    if (q.x, q.y, q.z, q.w) == (0.0, 0.0, 0.0, 0.0):  # an all-zero Pose means "none"
        return pin.SE3(np.eye(3), _v(pose.position))
    return pose_to_se3(pose, "x_abar_a")


def _name(msg) -> dict:
    return {"name": msg.name} if getattr(msg, "name", "") else {}


def constraints_of(model: pin.Model, goal) -> List:
    """Every constraint of a goal except the distance ones (need the scene: see below)."""
    out: List = []
    out += [C.PositionConstraint(model, _f(m.frame_a), _v(m.lower), _v(m.upper),
                                 _f(m.frame_b), _v(m.p_bq), _offset(m.x_abar_a), **_name(m))
            for m in goal.position_constraints]
    out += [C.OrientationConstraint(
        model, _f(m.frame_abar), quaternion_to_rotation(m.r_abar_a, "r_abar_a"),
        _f(m.frame_bbar), quaternion_to_rotation(m.r_bbar_b, "r_bbar_b"), m.theta_bound,
        **_name(m)) for m in goal.orientation_constraints]
    out += [C.GazeTargetConstraint(model, _f(m.frame_a), _v(m.p_as), _v(m.n_a),
                                   _f(m.frame_b), _v(m.p_bt), m.cone_half_angle, **_name(m))
            for m in goal.gaze_constraints]
    out += [C.AngleBetweenVectorsConstraint(model, _f(m.frame_a), _v(m.a_a), _f(m.frame_b),
                                            _v(m.b_b), m.angle_lower, m.angle_upper,
                                            **_name(m))
            for m in goal.angle_constraints]
    out += [C.PointToPointDistanceConstraint(model, _f(m.frame1), _v(m.p_b1p1),
                                             _f(m.frame2), _v(m.p_b2p2), m.distance_lower,
                                             m.distance_upper, **_name(m))
            for m in goal.point_distance_constraints]
    out += [C.PointToLineDistanceConstraint(model, _f(m.frame_point), _v(m.p_b1p),
                                            _f(m.frame_line), _v(m.p_b2q), _v(m.n_b2),
                                            m.distance_lower, m.distance_upper, **_name(m))
            for m in goal.line_distance_constraints]
    out += [_polyhedron(model, m) for m in goal.polyhedron_constraints]
    out += _joint_bounds(model, goal.joint_bounds)
    return out


def scene_constraints(goal) -> bool:
    """Whether the goal has constraints that need the collision checker."""
    return bool(goal.minimum_distance_constraints
                or goal.minimum_distance_upper_bound_constraints or goal.distance_constraints)


def distance_constraints_of(checker, goal) -> List:
    """Return the goal's upper-bound and named-pair distance constraints on ``checker``.

    An error names the message field first (``distance_constraints[1]: geometry_a: ...``)
    and keeps the core error's code.
    """
    out: List = []
    for i, m in enumerate(goal.minimum_distance_upper_bound_constraints):
        out.append(_field(f"minimum_distance_upper_bound_constraints[{i}]",
                          lambda m=m: MinimumDistanceUpperBoundConstraint(
                              checker, m.bound, **_name(m))))
    for i, m in enumerate(goal.distance_constraints):
        out.append(_field(f"distance_constraints[{i}]", lambda m=m: DistanceConstraint(
            checker, m.geometry_a, m.geometry_b, m.distance_lower, m.distance_upper,
            **_name(m))))
    return out


def _field(field: str, make: Callable):
    try:
        return make()
    except IKError as exc:
        raise RequestError(code_for_exception(exc), f"{field}: {exc}") from exc


def _polyhedron(model: pin.Model, m):
    points = np.array([[p.x, p.y, p.z] for p in m.p_gp], dtype=float).reshape(-1, 3).T
    if m.a_rows == 0 or len(m.a) != m.a_rows * 3 * points.shape[1]:
        raise InvalidGoal(f"polyhedron '{m.name}': a must have a_rows x 3N = "
                          f"{m.a_rows} x {3 * points.shape[1]} values, got {len(m.a)}")
    A = np.asarray(m.a, dtype=float).reshape(m.a_rows, -1)
    return C.PolyhedronConstraint(model, _f(m.frame_f), _f(m.frame_g), points, A,
                                  np.asarray(m.b, dtype=float), **_name(m))


def _joint_bounds(model: pin.Model, m) -> List:
    if not m.joint_names:
        return []
    if not len(m.joint_names) == len(m.lower) == len(m.upper):
        raise InvalidGoal("joint_bounds: joint_names, lower and upper differ in length")
    bounds = {n: (lo, hi) for n, lo, hi in zip(m.joint_names, m.lower, m.upper)}
    return [C.JointBoundsConstraint(model, bounds)]


def costs_of(model: pin.Model, goal, q_seed_full: np.ndarray, joint_index) -> List:
    """Every cost of a goal; posture costs default to the seed."""
    out: List = []
    out += [K.PositionCost(model, _f(m.frame_a), _v(m.p_ap), _f(m.frame_b), _v(m.p_bq),
                           _matrix3(m.c)) for m in goal.position_costs]
    out += [K.OrientationCost(model, _f(m.frame_abar),
                              quaternion_to_rotation(m.r_abar_a, "r_abar_a"),
                              _f(m.frame_bbar),
                              quaternion_to_rotation(m.r_bbar_b, "r_bbar_b"), m.c)
            for m in goal.orientation_costs]
    out += [K.AngleBetweenVectorsCost(model, _f(m.frame_a), _v(m.a_a), _f(m.frame_b),
                                      _v(m.b_b), m.c) for m in goal.angle_costs]
    out += [_posture(model, m, q_seed_full, joint_index) for m in goal.posture_costs]
    return out


def _matrix3(values: Sequence[float]) -> np.ndarray:
    if len(values) == 0:
        return np.eye(3)
    if len(values) != 9:
        raise InvalidGoal(f"position cost: c must have 9 values (3x3), got {len(values)}")
    return np.asarray(values, dtype=float).reshape(3, 3)


def _posture(model: pin.Model, m, q_seed_full: np.ndarray, joint_index):
    """Return a PostureCost toward ``m.nominal`` (named joints overwrite the seed) or the seed."""
    q_nominal = np.array(q_seed_full, dtype=float)
    if len(m.nominal.position) != len(m.nominal.name):
        raise InvalidGoal("posture cost: nominal.name and nominal.position differ in length")
    for name, value in zip(m.nominal.name, m.nominal.position):
        q_nominal = joint_index(q_nominal, name, value)
    weights: object = 1.0
    if len(m.weights):
        if len(m.weights) != model.nv:
            raise InvalidGoal(f"posture cost: weights must be empty or have nv={model.nv} "
                              f"values, got {len(m.weights)}")
        weights = np.asarray(m.weights, dtype=float)
    return K.PostureCost(model, q_nominal, weights)


def pose_goals(goal, cfg) -> Tuple[List[PoseTarget], int]:
    """Return the PoseTargets of ``goal.pose_goals`` (tolerances defaulted from the config)."""
    targets = [PoseTarget(
        frame=m.tip_link or goal.tip_link,
        T_ref_target=pose_to_se3(m.target.pose, f"pose_goals[{i}].target.pose"),
        reference_frame=m.target.header.frame_id,
        weights=weights_array(m.weights),
        position_tolerance_m=finite_or(m.position_tolerance, cfg.position_tolerance,
                                       f"pose_goals[{i}].position_tolerance"),
        orientation_tolerance_rad=finite_or(m.orientation_tolerance,
                                            cfg.orientation_tolerance,
                                            f"pose_goals[{i}].orientation_tolerance"),
        position_only=m.position_only) for i, m in enumerate(goal.pose_goals)]
    return targets, len(targets)


def count_terms(goal) -> int:
    """How many constraints, costs and pose goals a goal carries (for the size limit)."""
    fields = ("pose_goals", "position_constraints", "orientation_constraints",
              "gaze_constraints", "angle_constraints", "point_distance_constraints",
              "line_distance_constraints", "polyhedron_constraints",
              "minimum_distance_constraints", "minimum_distance_upper_bound_constraints",
              "distance_constraints", "position_costs", "orientation_costs",
              "angle_costs", "posture_costs")
    return sum(len(getattr(goal, f)) for f in fields) + len(goal.joint_bounds.joint_names)
