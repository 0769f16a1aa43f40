"""Servo targets from messages: a PoseStamped or a TwistStamped in any frame of the model.

No rclpy: the node's callbacks pass the messages in.  Errors are ValueErrors naming the
field (the node logs them and keeps the previous target).
"""
from __future__ import annotations

import time

import numpy as np

from ros2_ik.core.errors import IKError
from ros2_ik.node.conversions import pose_to_se3
from ros2_ik.core.servo.supervisor import Target


def pose_target(group, q: np.ndarray, msg) -> Target:
    """Return T_world_target of ``msg`` (T_frame_target in header.frame_id, '' = world).

    A frame that moves with the group is taken at ``q`` (the servo's last command).
    """
    try:
        T = pose_to_se3(msg.pose, "target_pose.pose")
        ref = msg.header.frame_id
        T_world = group.fk(q, ref) * T if ref else T
    except (IKError, KeyError) as exc:
        raise ValueError(f"target_pose: {exc}") from exc
    return Target(time.monotonic(), pose=T_world)


def twist_target(group, tip: str, q: np.ndarray, msg) -> Target:
    """Return the tip's twist of ``msg`` [m/s, rad/s] as a servo target.

    In the tip's own axes when header.frame_id is the tip, else world-aligned (the axes
    of header.frame_id at ``q``; '' = world).
    """
    t = msg.twist
    twist = np.array([t.linear.x, t.linear.y, t.linear.z,
                      t.angular.x, t.angular.y, t.angular.z])
    if not np.isfinite(twist).all():
        raise ValueError("target_twist.twist: values must be finite")
    ref = msg.header.frame_id
    if ref == tip:
        return Target(time.monotonic(), twist=twist, twist_in_world=False)
    try:
        R = group.fk(q, ref).rotation if ref else np.eye(3)
    except (IKError, KeyError) as exc:
        raise ValueError(f"target_twist.header.frame_id: {exc}") from exc
    return Target(time.monotonic(), twist=np.concatenate([R @ twist[:3], R @ twist[3:]]),
                  twist_in_world=True)
