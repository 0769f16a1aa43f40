"""Conversions between ROS messages and the core's types (pinocchio SE3, numpy arrays)."""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np
import pinocchio as pin
from geometry_msgs.msg import Pose, Quaternion
from sensor_msgs.msg import JointState

from ros2_ik.core.errors import InvalidGoal

#: A quaternion whose norm is within this of 1 is normalised; others are rejected.
QUATERNION_NORM_TOLERANCE = 1e-3


def quaternion_to_rotation(q: Quaternion, field: str) -> np.ndarray:
    """Rotation matrix (3, 3) of a near-unit quaternion; InvalidGoal naming ``field``."""
    xyzw = np.array([q.x, q.y, q.z, q.w], dtype=float)
    if not np.all(np.isfinite(xyzw)):
        raise InvalidGoal(f"{field}: quaternion has NaN or infinite components")
    norm = float(np.linalg.norm(xyzw))
    if abs(norm - 1.0) > QUATERNION_NORM_TOLERANCE:
        raise InvalidGoal(
            f"{field}: quaternion norm is {norm:.6g}; it must be 1 within "
            f"{QUATERNION_NORM_TOLERANCE} (x, y, z, w = {xyzw.tolist()})")
    x, y, z, w = xyzw / norm
    return pin.Quaternion(w, x, y, z).toRotationMatrix()


def pose_to_se3(pose: Pose, field: str) -> pin.SE3:
    """``pin.SE3`` of a ``geometry_msgs/Pose``; InvalidGoal on NaN/inf or a bad quaternion."""
    p = np.array([pose.position.x, pose.position.y, pose.position.z], dtype=float)
    if not np.all(np.isfinite(p)):
        raise InvalidGoal(f"{field}.position has NaN or infinite components")
    return pin.SE3(quaternion_to_rotation(pose.orientation, field + ".orientation"), p)


def se3_to_pose(T: pin.SE3) -> Pose:
    """``geometry_msgs/Pose`` of a ``pin.SE3``."""
    pose = Pose()
    pose.position.x, pose.position.y, pose.position.z = (float(v) for v in T.translation)
    quat = pin.Quaternion(T.rotation)
    pose.orientation.x, pose.orientation.y = float(quat.x), float(quat.y)
    pose.orientation.z, pose.orientation.w = float(quat.z), float(quat.w)
    return pose


def joint_state(names: Sequence[str], positions: np.ndarray, stamp=None) -> JointState:
    """Return a ``sensor_msgs/JointState`` with the given names and positions."""
    msg = JointState()
    if stamp is not None:
        msg.header.stamp = stamp
    msg.name = list(names)
    msg.position = [float(v) for v in positions]
    return msg


def finite_or(value: float, default: float, field: str = "value") -> float:
    """``value`` unless it is <= 0 (meaning "use the default"); NaN raises InvalidGoal."""
    if math.isnan(value):
        raise InvalidGoal(f"{field} is NaN (<= 0 means the node default)")
    return default if value <= 0 else float(value)


def weights_array(weights: Sequence[float]) -> np.ndarray:
    """Return the six pose weights (empty means all ones); InvalidGoal on a wrong length."""
    if len(weights) == 0:
        return np.ones(6)
    if len(weights) != 6:
        raise InvalidGoal(f"weights: expected 6 values (x y z rx ry rz), got {len(weights)}")
    return np.asarray(weights, dtype=float)
