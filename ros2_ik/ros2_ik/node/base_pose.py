"""A whole-body group's base pose <-> ``sensor_msgs/MultiDOFJointState`` (one entry).

A whole-body group (``Group.has_base``: a floating or planar base, core/model) starts its
configuration with the base coordinates: ``[x, y, z, qx, qy, qz, qw]`` (floating) or
``[x, y, theta]`` (planar), then one value per joint.  Messages carry the joints in a
``JointState`` and the base as MoveIt does (``RobotState.multi_dof_joint_state``): the base
joint's name, its transform, and ``header.frame_id`` = the virtual joint's parent frame
(the SRDF's ``parent_frame``; the model's root frame stands for it).
"""
from __future__ import annotations

import math
from typing import NamedTuple, Optional, Sequence, Tuple

import numpy as np
import pinocchio as pin
from geometry_msgs.msg import PoseStamped, Transform
from sensor_msgs.msg import MultiDOFJointState

from ros2_ik.node.conversions import QUATERNION_NORM_TOLERANCE
from ros2_ik.node.error_codes import RequestError
from ros2_ik.node.robot_source import seed_readings
from ros2_ik_interfaces.msg import IKErrorCode


def has_base(group) -> bool:
    """Return True for a whole-body group (a floating or planar base)."""
    return bool(getattr(group, "has_base", False))


def base_size(group) -> int:
    """Return how many leading coordinates of the group vector are the base's (0: none)."""
    return int(group.base_nq) if has_base(group) else 0


def marker_frames(group, frame: str, base_parent: str) -> Tuple[str, str]:
    """Return ``(model frame, shown frame)`` of markers drawn for a request in ``frame``.

    The model's root frame (``universe``, or '') stands for a whole-body group's base
    parent frame (``odom_combined``: rviz knows it, the model does not): the poses are
    computed in the root and shown in the parent.  Any other frame is both.
    """
    world = base_parent if has_base(group) and base_parent else "universe"
    if not frame or frame in (world, "universe"):
        return "universe", world
    return frame, frame


def joint_part(group) -> Tuple[Tuple[str, ...], slice]:
    """Return the group's 1-DoF joint names and the slice of the group vector they occupy."""
    start = base_size(group)
    return tuple(group.joint_names[start:]), slice(start, None)


def base_state(group, q: np.ndarray, parent_frame: str,
               msg: Optional[MultiDOFJointState] = None) -> MultiDOFJointState:
    """Return (or fill ``msg`` with) the base entry of group vector ``q``: T_parent_base."""
    msg = MultiDOFJointState() if msg is None else msg
    T = group.base_placement(np.asarray(q, dtype=float))
    msg.header.frame_id = parent_frame
    msg.joint_names = [group.base_joint]
    msg.transforms = [transform(T)]
    return msg


def pose_stamped(base: MultiDOFJointState, stamp) -> PoseStamped:
    """Return the first base entry of ``base`` as a PoseStamped in its header's frame.

    What a mobile base's controller takes as a goal (rviz's 2D Goal Pose, Nav2's simple
    goal), and what the whole-body servo commands.
    """
    tf = base.transforms[0]
    msg = PoseStamped()
    msg.header.frame_id, msg.header.stamp = base.header.frame_id, stamp
    msg.pose.position.x, msg.pose.position.y = tf.translation.x, tf.translation.y
    msg.pose.position.z, msg.pose.orientation = tf.translation.z, tf.rotation
    return msg


def base_of_pose(group, msg: PoseStamped) -> MultiDOFJointState:
    """Return a PoseStamped of the base as the group's base entry (for :func:`with_base`)."""
    tf = Transform()
    p = msg.pose.position
    tf.translation.x, tf.translation.y, tf.translation.z = p.x, p.y, p.z
    tf.rotation = msg.pose.orientation
    out = MultiDOFJointState(joint_names=[group.base_joint], transforms=[tf])
    out.header.frame_id = msg.header.frame_id
    return out


def transform(T: pin.SE3) -> Transform:
    """Return the ``geometry_msgs/Transform`` of ``T``."""
    out = Transform()
    t, quat = T.translation, pin.Quaternion(T.rotation)
    out.translation.x, out.translation.y, out.translation.z = (float(v) for v in t)
    out.rotation.x, out.rotation.y = float(quat.x), float(quat.y)
    out.rotation.z, out.rotation.w = float(quat.z), float(quat.w)
    return out


def with_base(group, q: np.ndarray, msg: MultiDOFJointState, parent_frame: str,
              field: str, code: int = IKErrorCode.INVALID_SEED, *,
              in_world: bool = True) -> np.ndarray:
    """Return ``q`` with the base set from ``msg`` (unchanged when ``msg`` is empty).

    ``msg`` may hold other multi-DoF joints (a MoveIt robot state): the group's base joint
    is read, the others ignored.  Raises :class:`RequestError` (``code``) naming the field:
    a base given to a fixed-base group, a message without the group's base joint (an
    unknown virtual joint), a frame other than the parent frame, NaN, a non-unit
    quaternion, a planar base given height, roll or pitch, and with ``in_world`` a base
    farther than ``MAX_COORDINATE_M`` [m] from the parent frame's origin (the core's
    ``WholeBodyGroup.beyond_world``: a seed there would run to the timeout).
    """
    names = list(msg.joint_names)
    if not names and not len(msg.transforms):
        return q
    if not has_base(group):
        raise RequestError(code, f"{field}: the group has no floating or planar base; leave "
                                 f"it empty (got joints {names})")
    if len(names) != len(msg.transforms):
        raise RequestError(code, f"{field}: {len(names)} joint_names but "
                                 f"{len(msg.transforms)} transforms")
    if group.base_joint not in names:
        raise RequestError(code, f"{field}.joint_names: unknown virtual joint(s) {names}; "
                                 f"this group's base joint is '{group.base_joint}'")
    frame = msg.header.frame_id
    if frame and frame not in (parent_frame, "universe"):
        raise RequestError(code, f"{field}.header.frame_id: '{frame}' is not the base "
                                 f"joint's parent frame '{parent_frame}'")
    i = names.index(group.base_joint)
    xyz, quat = _checked_transform(msg.transforms[i], f"{field}.transforms[{i}]", code)
    q = np.array(q, dtype=float)
    if group.base_kind == "planar":
        q[:3] = _planar(xyz, quat, f"{field}.transforms[{i}]", code)
    else:
        q[:7] = np.concatenate((xyz, quat))
    far = group.beyond_world(q.tolist()) if in_world else ""
    if far:
        raise RequestError(code, f"{field}.transforms[{i}].translation: {far}")
    return q


def _checked_transform(tf: Transform, field: str, code: int):
    """(xyz, unit quaternion xyzw) of a transform; RequestError naming the field."""
    t, r = tf.translation, tf.rotation
    xyz = np.array([t.x, t.y, t.z], dtype=float)
    quat = np.array([r.x, r.y, r.z, r.w], dtype=float)
    if not np.isfinite(xyz).all():
        raise RequestError(code, f"{field}.translation has NaN or infinite components")
    if not np.isfinite(quat).all():
        raise RequestError(code, f"{field}.rotation has NaN or infinite components")
    norm = float(np.linalg.norm(quat))
    if abs(norm - 1.0) > QUATERNION_NORM_TOLERANCE:
        raise RequestError(code, f"{field}.rotation: quaternion norm is {norm:.6g}; it must "
                                 f"be 1 within {QUATERNION_NORM_TOLERANCE}")
    return xyz, quat / norm


#: A planar base's pose may leave its plane by this much (round-off) [m, rad].
PLANAR_TOLERANCE = 1e-6


def _planar(xyz: np.ndarray, quat: np.ndarray, field: str, code: int) -> np.ndarray:
    """Return ``[x, y, theta]`` of a pose in the base's plane; RequestError if it leaves it."""
    R = pin.Quaternion(quat[3], quat[0], quat[1], quat[2]).toRotationMatrix()
    tilt = math.acos(max(-1.0, min(1.0, R[2, 2])))
    if abs(xyz[2]) > PLANAR_TOLERANCE or tilt > PLANAR_TOLERANCE:
        raise RequestError(code, f"{field}: a planar base moves in x, y and yaw only; got "
                                 f"z={xyz[2]:.6g} m and a tilt of {tilt:.6g} rad")
    return np.array([xyz[0], xyz[1], math.atan2(R[1, 0], R[0, 0])])


def split(group, names: Sequence[str], q: np.ndarray) -> Tuple[list, np.ndarray]:
    """Return the joint names and values of a group vector without the base coordinates."""
    start = base_size(group)
    return list(names[start:]), np.asarray(q)[start:]


def sent_vector(group, q_solver: np.ndarray, joint_values: np.ndarray,
                msg: MultiDOFJointState, parent_frame: str) -> np.ndarray:
    """Return the group vector as a reply carries it: base from ``msg``, then ``joint_values``.

    (What the node re-verifies: the values sent, not the solver's, wherever the solver
    put the base.)
    """
    q = with_base(group, np.array(q_solver, dtype=float), msg, parent_frame, "solution_base",
                  IKErrorCode.INTERNAL_ERROR, in_world=False)
    q[base_size(group):] = joint_values
    return q


def reply_vector(group, solution, solution_base: MultiDOFJointState) -> np.ndarray:
    """Return the group vector of a reply (``solution`` JointState + ``solution_base``)."""
    q = np.asarray(solution.position, dtype=float)
    if not has_base(group):
        return q
    return sent_vector(group, group.mid_configuration(), q, solution_base,
                       solution_base.header.frame_id)


class JointLimits(NamedTuple):
    """The limits of a group's 1-DoF joints (what execution checks and times).

    ``wraps``: the group's own (:attr:`Group.wraps`: every angle has an equivalent inside
    the limits).
    """

    lower: np.ndarray
    upper: np.ndarray
    velocity_limits: np.ndarray
    acceleration_limits: np.ndarray
    wraps: np.ndarray


def joint_limits(group) -> JointLimits:
    """Return the limits of the group's 1-DoF joints (without the base coordinates)."""
    names, part = joint_part(group)
    velocity = np.asarray(group.velocity_limits, dtype=float)
    acceleration = np.asarray(group.acceleration_limits, dtype=float)
    return JointLimits(np.asarray(group.lower)[part], np.asarray(group.upper)[part],
                       velocity[len(velocity) - len(names):],
                       acceleration[len(acceleration) - len(names):],
                       np.asarray(group.wraps)[part])


def robot_base_joint(robot) -> str:
    """Return the name of the model's base joint (a floating or planar root), or ''."""
    return robot.model.names[1] if getattr(robot, "base_kind", None) else ""


def whole_body_seed(group, seed_msg, seed_base: MultiDOFJointState, joints, cfg,
                    parent_frame: str, tolerance: float, notes: Optional[list] = None):
    """Return a whole-body group's seed: joints as the fixed-base seed, the base from seed_base.

    Joints: the request's (every group joint named; farther than ``tolerance`` outside a
    limit: INVALID_SEED), else joint_states however old (clamped), else mid-range.  Base: from
    ``seed_base`` (:func:`with_base`), else the identity.
    """
    names, part = joint_part(group)
    q = np.array(group.mid_configuration(), dtype=float)
    lower, upper = np.asarray(group.lower)[part], np.asarray(group.upper)[part]
    if seed_msg.name:
        if len(seed_msg.position) != len(seed_msg.name):
            raise RequestError(IKErrorCode.INVALID_SEED,
                               f"seed: {len(seed_msg.name)} names but "
                               f"{len(seed_msg.position)} positions")
        given = dict(zip(seed_msg.name, (float(v) for v in seed_msg.position)))
        missing = [n for n in names if n not in given]
        if missing:
            raise RequestError(IKErrorCode.INVALID_SEED, f"seed: misses group joints {missing}")
        values = np.array([given[n] for n in names])
        bad = [f"{n}={v:.6g}" for n, v, lo, hi in zip(names, values, lower, upper)
               if not lo - tolerance <= v <= hi + tolerance]
        if bad:
            raise RequestError(IKErrorCode.INVALID_SEED,
                               f"seed outside the joint limits (by more than {tolerance}): "
                               + ", ".join(bad))
        q[part] = np.clip(values, lower, upper)
    else:
        current = seed_readings(joints, names, cfg.joint_state_timeout, notes)
        if current is not None:
            q[part] = np.clip([current[n] for n in names], lower, upper)
    return with_base(group, q, seed_base, parent_frame, "seed_base")
