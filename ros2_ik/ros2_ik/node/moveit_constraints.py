"""A GetPositionIK request's ``moveit_msgs/Constraints`` -> terms of a ConstrainedIK goal.

Each constraint becomes terms of the same meaning as MoveIt's ``kinematic_constraints``
(what ``move_group``'s ``compute_ik`` checks its answers against), or the request is
refused with INVALID_GOAL_CONSTRAINTS and a message naming the field: nothing is dropped
or approximated.  Pure functions over message-shaped data (the moveit_msgs attribute
names), so that they are tested where moveit_msgs is not installed.

- ``joint_constraints[i]``: ``position - tolerance_below <= joint <= position +
  tolerance_above`` [rad or m] -> ``joint_bounds`` (a continuous joint's window lies on the
  circle, as MoveIt's signed shortest difference).  Tolerances must be >= 0 (MoveIt
  ignores a negative one).  As in MoveIt, a window beyond a bounded joint's limit is
  that limit, and a bounded joint named twice lies in both windows (refused when they
  miss each other); a continuous joint named twice is refused.
- ``position_constraints[i]``: the point ``target_point_offset`` [m] fixed in
  ``link_name`` lies inside ``constraint_region``, placed in ``header.frame_id``: one
  primitive -- a box (-> ``position_constraints``, the box in the primitive's frame), a
  sphere (-> ``point_distance_constraints``: distance to the centre <= radius) or a
  cylinder (-> a box [-r, r] x [-r, r] x [-h/2, h/2] in its frame and a
  ``line_distance_constraints`` term: distance to its z axis <= radius).  Several
  primitives (MoveIt: their union), meshes, cones and prisms are refused.
- ``orientation_constraints[i]``: each component of the rotation from ``orientation`` (in
  ``header.frame_id``) to ``link_name``, as XYZ Euler angles or a rotation vector
  (``parameterization``), within its ``absolute_*_axis_tolerance`` [rad] ->
  ``rotation_box_constraints`` (the core's RotationBoxConstraint).  One that bounds
  nothing (tolerances >= pi; pi/2 for the pitch) has no term.
- ``visibility_constraints``: refused (the action's ``gaze_constraints`` are Drake's).

An empty ``header.frame_id`` means the model's root frame, as for pose targets; the
frames and links must be frames of the robot model, or a name that stands for its root
(``root_names``: MoveIt's planning frame, a whole-body group's base joint parent:
node/request_frames.world_names).  Every term is named after its MoveIt
field (``constraints.position_constraints[0]``), so that violations and errors name it.
"""
from __future__ import annotations

import math
from typing import Dict, Mapping, Optional, Sequence, Tuple

from geometry_msgs.msg import Point, Quaternion, Vector3
import numpy as np

from ros2_ik.core.constraints.joints import joint_table
from ros2_ik.core.constraints.rotation_box import bounded_components
from ros2_ik.core.errors import IKError
from ros2_ik.core.runtime.per_object import PerObject
from ros2_ik.node.conversions import pose_to_se3, quaternion_to_rotation, se3_to_pose
from ros2_ik.node.moveit_codes import MoveItCode, MoveItRequestError
from ros2_ik_interfaces.msg import (
    PointToLineDistanceConstraint, PointToPointDistanceConstraint, PositionConstraint,
    RotationBoxConstraint)

#: ``shape_msgs/SolidPrimitive`` types and how many dimensions each takes.
BOX, SPHERE, CYLINDER = 1, 2, 3
DIMENSIONS = {BOX: 3, SPHERE: 1, CYLINDER: 2}
PRIMITIVE_NAMES = {1: "box", 2: "sphere", 3: "cylinder", 4: "cone", 5: "prism"}
FIELD = "constraints"
#: A joint tolerance this far below 0 [rad or m] is rounding, and counts as 0.
ROUNDING = 1e-12
#: ``moveit_msgs/OrientationConstraint.parameterization`` -> RotationBoxConstraint's.
PARAMETERIZATIONS = {0: "xyz_euler", 1: "rotation_vector"}
#: ``{joint: (lower, upper, continuous)}`` of the model's 1-DoF joints [rad or m].
JointLimits = Mapping[str, Tuple[float, float, bool]]


def has_constraints(constraints) -> bool:
    """Return True when a ``moveit_msgs/Constraints`` holds any constraint."""
    return any(len(getattr(constraints, kind, ())) for kind in (
        "joint_constraints", "position_constraints", "orientation_constraints",
        "visibility_constraints"))


def add_to_goal(goal, constraints, frame_names: Sequence[str] = (),
                limits: Optional[JointLimits] = None, root_names: Sequence[str] = ()) -> None:
    """Add the terms of ``constraints`` to the ConstrainedIK ``goal`` (module docstring).

    ``frame_names``: the model's, to name an unknown one (empty: not checked here, the
    core refuses it); ``limits``: its joints' (:func:`joint_limits`; None: likewise).
    Raises :class:`MoveItRequestError`.
    """
    _refuse_unsupported(constraints)
    add_orientations(goal, constraints, frame_names, root_names)
    windows = joint_windows(constraints.joint_constraints, limits)
    if windows:
        names = list(windows)
        goal.joint_bounds.joint_names = list(goal.joint_bounds.joint_names) + names
        goal.joint_bounds.lower = list(goal.joint_bounds.lower) + [windows[n][0] for n in names]
        goal.joint_bounds.upper = list(goal.joint_bounds.upper) + [windows[n][1] for n in names]
    for i, c in enumerate(constraints.position_constraints):
        field = f"{FIELD}.position_constraints[{i}]"
        frame = _frame(c.header.frame_id, f"{field}.header.frame_id", frame_names,
                       root_names)
        link = _link(c.link_name, f"{field}.link_name", frame_names)
        offset = _vector(c.target_point_offset, f"{field}.target_point_offset")
        kind, dims, T_frame_region = _region(c.constraint_region, f"{field}.constraint_region")
        _add_region(goal, field, frame, link, offset, kind, dims, T_frame_region)


def _refuse_unsupported(constraints) -> None:
    """Refuse the kinds without an exact counterpart (module docstring)."""
    if len(constraints.visibility_constraints):
        raise MoveItRequestError(
            MoveItCode.INVALID_GOAL_CONSTRAINTS,
            f"{FIELD}.visibility_constraints are not supported; use the constrained_ik "
            f"action's gaze_constraints")


def add_orientations(goal, constraints, frame_names: Sequence[str] = (),
                     root_names: Sequence[str] = ()) -> None:
    """Add the orientation constraints to ``goal.rotation_box_constraints``.

    ``link_name``'s rotation from ``orientation`` (in ``header.frame_id``) within the
    per-axis tolerances, read in ``parameterization``; a negative tolerance counts as its
    magnitude, as MoveIt reads it; one that bounds nothing adds no term.
    """
    terms = []
    for i, c in enumerate(constraints.orientation_constraints):
        field = f"{FIELD}.orientation_constraints[{i}]"
        frame = _frame(c.header.frame_id, f"{field}.header.frame_id", frame_names,
                       root_names)
        link = _link(c.link_name, f"{field}.link_name", frame_names)
        kind = PARAMETERIZATIONS.get(int(c.parameterization))
        if kind is None:
            raise MoveItRequestError(
                MoveItCode.INVALID_GOAL_CONSTRAINTS,
                f"{field}.parameterization must be XYZ_EULER_ANGLES (0) or ROTATION_VECTOR "
                f"(1), got {c.parameterization}")
        tolerances = [abs(_finite(getattr(c, f"absolute_{axis}_axis_tolerance"),
                                  f"{field}.absolute_{axis}_axis_tolerance"))
                      for axis in "xyz"]
        try:
            quaternion_to_rotation(c.orientation, f"{field}.orientation")  # its check
        except IKError as exc:
            raise MoveItRequestError(MoveItCode.INVALID_GOAL_CONSTRAINTS, str(exc)) from None
        if bounded_components(tolerances, kind):
            terms.append(RotationBoxConstraint(
                name=field, frame_abar=frame, r_abar_a=c.orientation, frame_bbar=link,
                r_bbar_b=Quaternion(w=1.0), tolerances=_vector3(np.array(tolerances)),
                parameterization=kind))
    goal.rotation_box_constraints = list(goal.rotation_box_constraints) + terms


def joint_limits(model) -> JointLimits:
    """Return ``{joint: (lower, upper, continuous)}`` [rad or m] of ``model``'s 1-DoF joints.

    Made once per model (read it, do not change it): a request's joint constraints read it.
    """
    limits = _LIMITS.get(model)
    if limits is None:
        limits = _LIMITS[model] = {name: (j.urdf_lower, j.urdf_upper, j.continuous)
                                   for name, j in joint_table(model).items()
                                   if not isinstance(j, IKError)}
    return limits


#: Per model: :func:`joint_limits`.
_LIMITS: PerObject = PerObject()


def joint_windows(joint_constraints, limits: Optional[JointLimits] = None
                  ) -> Dict[str, Tuple[float, float]]:
    """Return ``{joint: (lower, upper)}`` [rad or m] of MoveIt JointConstraints.

    ``limits`` (:func:`joint_limits`; None: names and limits not checked here) gives
    MoveIt's meaning exactly: a bounded joint's window beyond a limit is that limit (MoveIt
    moves it there), a bounded joint named twice lies in both windows.  A continuous
    joint named twice is refused (two arcs may meet in two pieces).
    """
    windows: Dict[str, Tuple[float, float]] = {}
    first: Dict[str, int] = {}
    for i, c in enumerate(joint_constraints):
        field = f"{FIELD}.joint_constraints[{i}]"
        name = c.joint_name
        if limits is not None and name not in limits:
            raise MoveItRequestError(MoveItCode.INVALID_GOAL_CONSTRAINTS,
                                     f"{field}.joint_name '{name}' is not a 1-DoF joint of "
                                     f"the robot model")
        position = _finite(c.position, f"{field}.position")
        above = _tolerance(c.tolerance_above, f"{field}.tolerance_above")
        below = _tolerance(c.tolerance_below, f"{field}.tolerance_below")
        lower, upper = _on_limits(position - below, position + above,
                                  limits.get(name) if limits is not None else None)
        if name in first:
            lower, upper = _both(windows[name], (lower, upper), limits, name, field, first)
        first.setdefault(name, i)
        windows[name] = (lower, upper)
    return windows


def _on_limits(lower: float, upper: float, limit) -> Tuple[float, float]:
    """Move a bounded joint's window onto the limit it lies beyond, as MoveIt does."""
    if limit is None or limit[2]:
        return lower, upper
    if upper < limit[0]:
        return limit[0], limit[0]
    if lower > limit[1]:
        return limit[1], limit[1]
    return lower, upper


def _both(old: Tuple[float, float], new: Tuple[float, float], limits, name: str, field: str,
          first: Dict[str, int]) -> Tuple[float, float]:
    """Return the window of a joint named again: inside both (refused if none)."""
    earlier = f"{FIELD}.joint_constraints[{first[name]}]"
    if limits is None or limits[name][2]:
        raise MoveItRequestError(
            MoveItCode.INVALID_GOAL_CONSTRAINTS,
            f"{field}.joint_name '{name}' is constrained by {earlier} already: give one "
            f"window per continuous joint")
    lower, upper = max(old[0], new[0]), min(old[1], new[1])
    if lower > upper:
        raise MoveItRequestError(
            MoveItCode.INVALID_GOAL_CONSTRAINTS,
            f"{field}: the window [{new[0]:g}, {new[1]:g}] of joint '{name}' misses "
            f"{earlier}'s [{old[0]:g}, {old[1]:g}]: no position meets both")
    return lower, upper


def _region(volume, field: str) -> Tuple[int, Tuple[float, ...], object]:
    """Return ``(primitive type, dimensions [m], T_frame_region)`` of a one-primitive region."""
    if len(volume.meshes) or len(volume.primitives) != 1:
        raise MoveItRequestError(
            MoveItCode.INVALID_GOAL_CONSTRAINTS,
            f"{field}: {len(volume.primitives)} primitives and {len(volume.meshes)} meshes; "
            f"ros2_ik takes one box, sphere or cylinder per position constraint")
    primitive = volume.primitives[0]
    kind = int(primitive.type)
    if kind not in DIMENSIONS:
        raise MoveItRequestError(
            MoveItCode.INVALID_GOAL_CONSTRAINTS,
            f"{field}.primitives[0]: a {PRIMITIVE_NAMES.get(kind, f'type {kind}')} region is "
            f"not supported (box, sphere or cylinder)")
    dims = tuple(primitive.dimensions)
    if len(dims) != DIMENSIONS[kind]:
        raise MoveItRequestError(
            MoveItCode.INVALID_GOAL_CONSTRAINTS,
            f"{field}.primitives[0].dimensions: a {PRIMITIVE_NAMES[kind]} takes "
            f"{DIMENSIONS[kind]}, got {len(dims)}")
    dims = tuple(_finite(d, f"{field}.primitives[0].dimensions[{k}]", minimum=0.0)
                 for k, d in enumerate(dims))
    if not len(volume.primitive_poses):
        raise MoveItRequestError(MoveItCode.INVALID_GOAL_CONSTRAINTS,
                                 f"{field}.primitive_poses is empty: the primitive's pose "
                                 f"is needed")
    try:
        T = pose_to_se3(volume.primitive_poses[0], f"{field}.primitive_poses[0]")
    except IKError as exc:
        raise MoveItRequestError(MoveItCode.INVALID_GOAL_CONSTRAINTS, str(exc)) from None
    return kind, dims, T


def _add_region(goal, field: str, frame: str, link: str, offset: np.ndarray, kind: int,
                dims: Tuple[float, ...], T_frame_region) -> None:
    """Append the terms saying: ``link``'s point ``offset`` lies in the primitive."""
    if kind == SPHERE:
        goal.point_distance_constraints = list(goal.point_distance_constraints) + [
            PointToPointDistanceConstraint(
                name=field, frame1=link, p_b1p1=_point(offset), frame2=frame,
                p_b2p2=_point(T_frame_region.translation), distance_lower=0.0,
                distance_upper=dims[0])]
        return
    half = np.array(dims) / 2 if kind == BOX else np.array([dims[1], dims[1], dims[0] / 2])
    goal.position_constraints = list(goal.position_constraints) + [PositionConstraint(
        name=field, frame_a=frame, x_abar_a=se3_to_pose(T_frame_region),
        lower=_vector3(-half), upper=_vector3(half), frame_b=link, p_bq=_point(offset))]
    if kind == CYLINDER:  # the box bounds the height; the axis' distance the radius
        goal.line_distance_constraints = list(goal.line_distance_constraints) + [
            PointToLineDistanceConstraint(
                name=f"{field} (radius)", frame_point=link, p_b1p=_point(offset),
                frame_line=frame, p_b2q=_point(T_frame_region.translation),
                n_b2=_vector3(T_frame_region.rotation[:, 2]), distance_lower=0.0,
                distance_upper=dims[1])]


def _frame(name: str, field: str, frame_names: Sequence[str], root_names: Sequence[str]
           ) -> str:
    """Return the model frame ``name`` means ('' and ``root_names``: the root frame, '')."""
    if not name or name in root_names:
        return ""
    if frame_names and name not in frame_names:
        raise MoveItRequestError(MoveItCode.FRAME_TRANSFORM_FAILURE,
                                 f"{field} '{name}' is not a frame of the robot model")
    return name


def _link(name: str, field: str, frame_names: Sequence[str]) -> str:
    """Return ``name``, a frame of the model (INVALID_LINK_NAME otherwise)."""
    if not name or (frame_names and name not in frame_names):
        raise MoveItRequestError(MoveItCode.INVALID_LINK_NAME,
                                 f"{field} '{name}' is not a frame of the robot model")
    return name


def _finite(value, field: str, minimum: float = -math.inf) -> float:
    """Return ``value`` as a float, finite and >= ``minimum`` (else refuse, naming ``field``)."""
    v = float(value)
    if not math.isfinite(v) or v < minimum:
        bound = "" if minimum == -math.inf else f" and >= {minimum:g}"
        raise MoveItRequestError(MoveItCode.INVALID_GOAL_CONSTRAINTS,
                                 f"{field} must be finite{bound}, got {value}")
    return v


def _tolerance(value, field: str) -> float:
    """Return a joint tolerance [rad or m]: finite, >= 0; one below 0 by rounding is 0.

    A tolerance computed as a difference (``upper - position``) can come out a few ulps
    below zero (-1.4e-17, seen in the fuzz); farther below than ``ROUNDING`` it is refused.
    """
    v = _finite(value, field)
    if v < -ROUNDING:
        raise MoveItRequestError(MoveItCode.INVALID_GOAL_CONSTRAINTS,
                                 f"{field} must be finite and >= 0, got {value}")
    return max(v, 0.0)


def _vector(msg, field: str) -> np.ndarray:
    """Return a ``geometry_msgs/Vector3`` as a finite (3,) array [m]."""
    return np.array([_finite(getattr(msg, a), f"{field}.{a}") for a in "xyz"])


def _point(v: np.ndarray) -> Point:
    return Point(x=float(v[0]), y=float(v[1]), z=float(v[2]))


def _vector3(v: np.ndarray) -> Vector3:
    return Vector3(x=float(v[0]), y=float(v[1]), z=float(v[2]))
