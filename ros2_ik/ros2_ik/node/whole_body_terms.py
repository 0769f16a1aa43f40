"""The whole-body rows of ``goal_terms.GOAL_TERMS`` that need more than one call.

A support polygon and a held contact are placed where the seed puts them (built at the
seed's full configuration); a contact target must be in the model's root frame; the
base-motion cost comes from a scalar field of the goal, not a list.  Each builder is a
direct call of the core class (core/constraints: support_polygon.py, contact.py;
core/costs: com.py, base_motion.py).
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


def support_polygon(inputs, m):
    """``ComInSupportPolygonConstraint`` of the frames' points at the seed's configuration."""
    points = np.array([[p.x, p.y, p.z] for p in m.local_points], dtype=float).reshape(-1, 3)
    local = [points] * len(m.frames) if len(points) else None
    return C.ComInSupportPolygonConstraint.from_frames(
        inputs.model, inputs.q_seed_full, list(m.frames), local, margin=m.margin,
        normal=or_z(np.array([m.normal.x, m.normal.y, m.normal.z], dtype=float)))


def contact(inputs, m):
    """``FramePlacementConstraint``: held where the seed puts it, or at a root-frame target."""
    if m.hold_current:
        return C.FramePlacementConstraint.at_current(inputs.model, m.frame, inputs.q_seed_full)
    frame = m.target.header.frame_id
    if frame not in inputs.root_aliases:
        raise InvalidGoal(f"target.header.frame_id '{frame}': a contact target is given in "
                          f"the root frame (one of {list(inputs.root_aliases)})")
    T = pose_to_se3(m.target.pose, "target.pose")
    return C.FramePlacementConstraint(inputs.model, m.frame, T, m.position_tolerance,
                                      m.angle_tolerance)


def base_motion_costs(model: pin.Model, goal, group, seed: np.ndarray) -> List:
    """``[BaseMotionCost]`` (from the seed's base) when ``goal.base_motion_weight`` > 0."""
    weight = float(goal.base_motion_weight)
    if weight == 0.0:
        return []
    if not (weight > 0.0 and np.isfinite(weight)):
        raise InvalidGoal(f"base_motion_weight: must be >= 0 and finite, got {weight}")
    if not has_base(group):
        raise InvalidGoal("base_motion_weight: the group has no floating or planar base")
    return [K.BaseMotionCost(model, group.base_joint, group.base_world_placement(seed),
                             position_weight=weight, rotation_weight=weight)]


def or_z(v: np.ndarray) -> np.ndarray:
    """``v``, or +z when all zero (the message's "default")."""
    return np.array([0.0, 0.0, 1.0]) if not v.any() else v


def weights3(values) -> object:
    """Per-axis weights of a CoM cost: 1.0 when empty, else exactly 3 values."""
    if len(values) == 0:
        return 1.0
    if len(values) != 3:
        raise InvalidGoal(f"weights: empty or 3 values, got {len(values)}")
    return np.asarray(values, dtype=float)
