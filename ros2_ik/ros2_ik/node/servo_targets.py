"""Servo targets from messages: a PoseStamped or a TwistStamped in a frame of the model.

Or in a frame :mod:`request_frames` resolves to the world (MoveIt's planning frame, a TF
frame of the monitored scene): :func:`in_world` puts such a message in the world first.
No rclpy: the node's callbacks pass the messages in.  Errors are ValueErrors naming the
field (the node logs them and keeps the previous target).
"""
from __future__ import annotations

import time

import numpy as np

from geometry_msgs.msg import PoseStamped, TwistStamped
from std_msgs.msg import Header

from ros2_ik.core.errors import IKError
from ros2_ik.node.base_pose import has_base
from ros2_ik.node.conversions import pose_to_se3, se3_to_pose
from ros2_ik.node.request_frames import placed_in_world
from ros2_ik.core.servo.supervisor import Target


def in_world(snapshot, group, msg):
    """Return ``msg`` (PoseStamped or TwistStamped) in the world ('') where its frame goes.

    A copy when its frame resolves to the world (:func:`request_frames.placed_in_world`),
    else ``msg`` as it came.
    """
    T_world_ref = placed_in_world(snapshot, msg.header.frame_id, has_base(group))
    if T_world_ref is None:
        return msg
    header = Header(stamp=msg.header.stamp, frame_id="")
    if isinstance(msg, TwistStamped):
        R, t = T_world_ref.rotation, msg.twist
        linear = R @ np.array([t.linear.x, t.linear.y, t.linear.z])
        angular = R @ np.array([t.angular.x, t.angular.y, t.angular.z])
        out = TwistStamped(header=header)
        out.twist.linear.x, out.twist.linear.y, out.twist.linear.z = map(float, linear)
        out.twist.angular.x, out.twist.angular.y, out.twist.angular.z = map(float, angular)
        return out
    try:
        T = pose_to_se3(msg.pose, "target_pose.pose")
    except IKError as exc:
        raise ValueError(f"target_pose: {exc}") from exc
    return PoseStamped(header=header, pose=se3_to_pose(T_world_ref * T))


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
