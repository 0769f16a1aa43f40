"""Conversions between ROS messages and the core's types (pinocchio SE3, numpy arrays)."""
from __future__ import annotations

import array
import math
from typing import Optional, Sequence, Tuple

import numpy as np
import pinocchio as pin
from geometry_msgs.msg import Pose, Quaternion
from sensor_msgs.msg import JointState

from ros2_ik.core.errors import InvalidGoal

#: A quaternion whose norm is within this of 1 is normalised; others are rejected.
QUATERNION_NORM_TOLERANCE = 1e-3
#: A request's seed may sit this far outside a joint limit [rad or m] (a driver's
#: rounding) and is clamped; farther out it is INVALID_SEED (wrong units or joint order).
SEED_LIMIT_TOLERANCE = 1e-3
#: The weights of a request that gives none.
UNIT_WEIGHTS = (1.0,) * 6


def near_limits(value: float, lower: float, upper: float) -> bool:
    """Whether a joint value [rad or m] a request gives may be used (clamped into the limits).

    Finite, and within :data:`SEED_LIMIT_TOLERANCE` of ``[lower, upper]``; else refused.
    """
    return math.isfinite(value) and \
        lower - SEED_LIMIT_TOLERANCE <= value <= upper + SEED_LIMIT_TOLERANCE


def _unit_quaternion(q: Quaternion, field: str) -> Tuple[float, float, float, float]:
    """(x, y, z, w) of a near-unit quaternion, normalised; InvalidGoal naming ``field``.

    Plain floats: a ComputeIK request converts one pose, where numpy's per-call
    overhead was most of the cost (make load profile).
    """
    x, y, z, w = float(q.x), float(q.y), float(q.z), float(q.w)
    if not all(map(math.isfinite, (x, y, z, w))):
        raise InvalidGoal(f"{field}: quaternion has NaN or infinite components")
    norm = math.hypot(x, y, z, w)
    if abs(norm - 1.0) > QUATERNION_NORM_TOLERANCE:
        raise InvalidGoal(
            f"{field}: quaternion norm is {norm:.6g}; it must be 1 within "
            f"{QUATERNION_NORM_TOLERANCE} (x, y, z, w = {[x, y, z, w]})")
    return x / norm, y / norm, z / norm, w / norm


def quaternion_to_rotation(q: Quaternion, field: str) -> np.ndarray:
    """Rotation matrix (3, 3) of a near-unit quaternion; InvalidGoal naming ``field``."""
    x, y, z, w = _unit_quaternion(q, field)
    return pin.Quaternion(w, x, y, z).toRotationMatrix()


def pose_to_se3(pose: Pose, field: str) -> pin.SE3:
    """``pin.SE3`` of a ``geometry_msgs/Pose``; InvalidGoal on NaN/inf or a bad quaternion."""
    return _se3(pose.position, pose.orientation, field + ".position", field + ".orientation")


def transform_to_se3(transform, field: str) -> pin.SE3:
    """``pin.SE3`` of a ``geometry_msgs/Transform``; InvalidGoal as :func:`pose_to_se3`."""
    return _se3(transform.translation, transform.rotation, field + ".translation",
                field + ".rotation")


def _se3(p, q, p_field: str, q_field: str) -> pin.SE3:
    """``pin.SE3`` of a point-like ``p`` and a quaternion ``q``; InvalidGoal naming the field."""
    px, py, pz = float(p.x), float(p.y), float(p.z)
    if not (math.isfinite(px) and math.isfinite(py) and math.isfinite(pz)):
        raise InvalidGoal(f"{p_field} has NaN or infinite components")
    quat = _unit_quaternion(q, q_field)
    return pin.XYZQUATToSE3(np.array((px, py, pz) + quat))


def se3_to_pose(T: pin.SE3) -> Pose:
    """``geometry_msgs/Pose`` of a ``pin.SE3``."""
    pose = Pose()
    pose.position.x, pose.position.y, pose.position.z = (float(v) for v in T.translation)
    quat = pin.Quaternion(T.rotation)
    pose.orientation.x, pose.orientation.y = float(quat.x), float(quat.y)
    pose.orientation.z, pose.orientation.w = float(quat.z), float(quat.w)
    return pose


def joint_state(names: Sequence[str], positions: np.ndarray, stamp=None,
                msg: Optional[JointState] = None) -> JointState:
    """Return a ``sensor_msgs/JointState`` with the given names and positions.

    ``msg``: fill this message (e.g. a reply's field) instead of making one.  Positions
    go in as an ``array('d')``, which rosidl takes without checking every element.
    """
    msg = JointState() if msg is None else msg
    if stamp is not None:
        msg.header.stamp = stamp
    msg.name = list(names)
    msg.position = array.array("d", np.ascontiguousarray(positions, dtype=float).tobytes())
    return msg


def finite_or(value: float, default: float, field: str = "value") -> float:
    """``value`` unless it is <= 0 (meaning "use the default"); NaN raises InvalidGoal."""
    if math.isnan(value):
        raise InvalidGoal(f"{field} is NaN (<= 0 means the node default)")
    return default if value <= 0 else float(value)


def weights_array(weights: Sequence[float]) -> Tuple[float, ...]:
    """Return the six pose weights (empty means all ones); InvalidGoal on a wrong length.

    A tuple of floats, as ``PoseTarget`` keeps them (all ones skips its weight checks).
    """
    if len(weights) == 0:
        return UNIT_WEIGHTS
    if len(weights) != 6:
        raise InvalidGoal(f"weights: expected 6 values (x y z rx ry rz), got {len(weights)}")
    return tuple(float(w) for w in weights)
