"""ConstrainedIK goal's whole-body fields -> core terms (CoM, support polygon, contacts).

One function per message type, each a direct call of the core class (core/constraints:
com.py, support_polygon.py, contact.py; core/costs.py).  Terms placed "where the seed
puts them" (a polygon, a held contact) are built at the seed's full configuration.  An
error names the message field (``contact_constraints[1]: ...``) and keeps the core
error's code.
"""
from __future__ import annotations

from typing import List

import numpy as np
import pinocchio as pin

from ros2_ik.core import constraints as C
from ros2_ik.core import costs as K
from ros2_ik.core.errors import InvalidGoal
from ros2_ik.node.base_pose import has_base
from ros2_ik.node.conversions import pose_to_se3
from ros2_ik.node.goal_terms import _f, _field, _name, _v

#: The goal fields this module maps (for the size limit).
FIELDS = ("com_constraints", "support_polygon_constraints", "contact_constraints",
          "point_on_plane_constraints", "com_costs")


def whole_body_constraints(model: pin.Model, goal, q_seed_full: np.ndarray,
                           root_aliases=("", "universe")) -> List:
    """Return the goal's CoM, support-polygon, contact and point-on-plane constraints.

    ``root_aliases``: frame names meaning the model's root (a contact target's frame).
    """
    out: List = []
    for i, m in enumerate(goal.com_constraints):
        out.append(_field(f"com_constraints[{i}]", lambda m=m: C.CenterOfMassConstraint(
            model, _v(m.lower), _v(m.upper), frame_A=_f(m.frame_a), **_name(m))))
    for i, m in enumerate(goal.support_polygon_constraints):
        out.append(_field(f"support_polygon_constraints[{i}]",
                          lambda m=m: _polygon(model, m, q_seed_full)))
    for i, m in enumerate(goal.contact_constraints):
        out.append(_field(f"contact_constraints[{i}]",
                          lambda m=m, i=i: _contact(model, m, q_seed_full, root_aliases, i)))
    for i, m in enumerate(goal.point_on_plane_constraints):
        out.append(_field(f"point_on_plane_constraints[{i}]", lambda m=m: C.PointOnPlaneConstraint(
            model, m.frame, p_FP=_v(m.p_fp), plane_point=_v(m.plane_point),
            plane_normal=_or_z(_v(m.plane_normal)), a_F=_or_z(_v(m.a_f)),
            cone_rad=m.cone_half_angle, height_lower=m.height_lower,
            height_upper=m.height_upper, **_name(m))))
    return out


def whole_body_costs(model: pin.Model, goal, group, seed: np.ndarray) -> List:
    """Return the goal's CoM costs and, with ``base_motion_weight`` > 0, the base-motion cost."""
    out: List = [_field(f"com_costs[{i}]", lambda m=m: K.CenterOfMassCost(
        model, _v(m.target), _weights3(m.weights))) for i, m in enumerate(goal.com_costs)]
    weight = float(goal.base_motion_weight)
    if not weight == 0.0:
        if not (weight > 0.0 and np.isfinite(weight)):
            raise InvalidGoal(f"base_motion_weight: must be >= 0 and finite, got {weight}")
        if not has_base(group):
            raise InvalidGoal("base_motion_weight: the group has no floating or planar base")
        out.append(K.BaseMotionCost(model, group.base_joint, group.base_placement(seed),
                                    position_weight=weight, rotation_weight=weight))
    return out


def count(goal) -> int:
    """How many whole-body terms a goal carries (for the size limit)."""
    return sum(len(getattr(goal, f)) for f in FIELDS)


def _polygon(model: pin.Model, m, q_seed_full: np.ndarray):
    points = np.array([[p.x, p.y, p.z] for p in m.local_points], dtype=float).reshape(-1, 3)
    local = [points] * len(m.frames) if len(points) else None
    return C.ComInSupportPolygonConstraint.from_frames(
        model, q_seed_full, list(m.frames), local, margin=m.margin,
        normal=_or_z(_v(m.normal)))


def _contact(model: pin.Model, m, q_seed_full: np.ndarray, root_aliases, i: int):
    if m.hold_current:
        return C.FramePlacementConstraint.at_current(model, m.frame, q_seed_full)
    frame = m.target.header.frame_id
    if frame not in root_aliases:
        raise InvalidGoal(f"target.header.frame_id '{frame}': a contact target is given in "
                          f"the root frame (one of {list(root_aliases)})")
    T = pose_to_se3(m.target.pose, f"contact_constraints[{i}].target.pose")
    return C.FramePlacementConstraint(model, m.frame, T, m.position_tolerance,
                                      m.angle_tolerance)


def _or_z(v: np.ndarray) -> np.ndarray:
    """``v``, or +z when all zero (the message's "default")."""
    return np.array([0.0, 0.0, 1.0]) if not v.any() else v


def _weights3(values) -> object:
    if len(values) == 0:
        return 1.0
    if len(values) != 3:
        raise InvalidGoal(f"weights: empty or 3 values, got {len(values)}")
    return np.asarray(values, dtype=float)
