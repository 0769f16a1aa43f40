"""ComputeIKPath: request message -> core ``solve_path`` -> JointTrajectory response.

Thin like :mod:`compute_ik`, whose group, seed and collision pieces it reuses: it converts
the waypoints, calls the core and copies the (independently checked) result back.  Bad
input answers an error code with a message naming the field.
"""
from __future__ import annotations

import time
from typing import NamedTuple, Optional

import numpy as np
import pinocchio as pin
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from ros2_ik.core import errors
from ros2_ik.core.path import PathResult, PathStatus, solve_path
from ros2_ik.core.pose import PoseTarget
from ros2_ik.node.base_pose import has_base
from ros2_ik.node.compute_ik import collision_checker, minimum_distance, resolve_group, \
    seed_for
from ros2_ik.node.conversions import finite_or, pose_to_se3
from ros2_ik.node.error_codes import CODE_NAMES, RequestError, code_for_exception, \
    error_reply
from ros2_ik.core.path.timing import path_times, point_velocities
from ros2_ik.node.execution import MAX_DURATION_S, duration_msg
from ros2_ik.node.parameters import NodeConfig
from ros2_ik.node.request_frames import resolve
from ros2_ik.node.robot_source import JointStateCache, RobotSnapshot
from ros2_ik.node.upstream import beside, held_group
from ros2_ik_interfaces.msg import IKErrorCode
from ros2_ik_interfaces.srv import ComputeIKPath

#: Defaults of the request's "<= 0" fields: path tolerances [m], [rad]; check steps [m],
#: [rad]; the budget per waypoint [s] when ``timeout`` is not given.
PATH_TOLERANCE_M, PATH_TOLERANCE_RAD = 1e-3, 1e-2
CHECK_STEP_M, CHECK_STEP_RAD = 5e-3, 5e-2
TIMEOUT_PER_WAYPOINT_S = 0.05

_STATUS_CODES = {PathStatus.COMPLETE: IKErrorCode.SUCCESS,
                 PathStatus.PARTIAL: IKErrorCode.NO_SOLUTION,
                 PathStatus.NO_PATH: IKErrorCode.NO_SOLUTION,
                 PathStatus.TIMED_OUT: IKErrorCode.TIMED_OUT}


class PathAnswer(NamedTuple):
    """What :func:`compute_ik_path` returns: the response, the group and the path (m, n).

    ``group`` and ``result`` are None on errors before solving.
    """

    response: ComputeIKPath.Response
    group: Optional[object] = None
    result: Optional[PathResult] = None
    seed: Optional[np.ndarray] = None


def compute_ik_path(snapshot: Optional[RobotSnapshot], model_error: str, cfg: NodeConfig,
                    joints: JointStateCache, request: ComputeIKPath.Request) -> PathAnswer:
    """Answer one ComputeIKPath request; never raises (a bug answers INTERNAL_ERROR)."""
    response = ComputeIKPath.Response()
    response.failed_waypoint = -1
    try:
        return _compute(snapshot, model_error, cfg, joints, request, response)
    except Exception as exc:  # noqa: BLE001 - the node must keep serving
        return PathAnswer(error_reply(response, code_for_exception(exc), str(exc)))


def _compute(snapshot, model_error, cfg, joints, request, response) -> PathAnswer:
    started = time.perf_counter()
    if snapshot is None:
        return PathAnswer(error_reply(response, IKErrorCode.NO_ROBOT_MODEL, model_error))
    try:
        group, tip = resolve_group(snapshot, cfg, request.group_name, request.base_link,
                                   request.tip_link)
    except errors.InvalidFrame as exc:
        raise RequestError(IKErrorCode.FRAME_NOT_FOUND, f"base_link/tip_link: {exc}") from exc
    group = held_group(snapshot, group, request.seed.name, request.seed.position, joints, cfg,
                       every=request.avoid_collisions or beside(group,
                                                                (request.header.frame_id,)))
    waypoints = path_targets(snapshot, request, tip, cfg, has_base(group))
    if not len(request.max_joint_step):
        raise RequestError(IKErrorCode.INVALID_GOAL, "max_joint_step: required (> 0 [rad or "
                           "m], one value or one per group joint)")
    seed = seed_for(group, request.seed, joints, cfg)
    constraints = []
    if request.avoid_collisions:
        constraints.append(minimum_distance(collision_checker(snapshot, cfg), cfg,
                                            tolerance_m=waypoints[0].position_tolerance_m))
    timeout = min(finite_or(request.timeout, TIMEOUT_PER_WAYPOINT_S * len(waypoints),
                            "timeout"), cfg.max_timeout)
    scaling = finite_or(request.velocity_scaling, 1.0, "velocity_scaling")  # before solving
    if scaling > 1.0:
        raise RequestError(IKErrorCode.INVALID_GOAL, f"velocity_scaling: {scaling:g}; it "
                           "is a fraction of the velocity limits in (0, 1] (<= 0: 1.0)")
    result = solve_path(
        group, waypoints, seed, list(request.max_joint_step), constraints=constraints,
        start_at_seed=request.start_at_seed,
        path_tolerance_m=finite_or(request.path_position_tolerance, PATH_TOLERANCE_M,
                                   "path_position_tolerance"),
        path_tolerance_rad=finite_or(request.path_orientation_tolerance, PATH_TOLERANCE_RAD,
                                     "path_orientation_tolerance"),
        check_step_m=finite_or(request.check_step_m, CHECK_STEP_M, "check_step_m"),
        check_step_rad=finite_or(request.check_step_rad, CHECK_STEP_RAD, "check_step_rad"),
        timeout_s=timeout,
        random_seed=0 if request.random_seed < 0 else int(request.random_seed))
    _fill(response, group, result, seed if request.start_at_seed else None,
          scaling if request.time_from_velocity_limits else 0.0, cfg.acceleration_scaling)
    response.solve_time = time.perf_counter() - started
    return PathAnswer(response, group, result, seed)


def path_targets(snapshot: RobotSnapshot, request, tip: str, cfg: NodeConfig,
                 base_moves: bool = False):
    """Return the request's waypoints as pose targets of ``tip`` (errors name the field).

    Waypoints in a frame the model's world stands for, or outside the model, are put in
    the world, as in ComputeIK (node/request_frames.py; ``base_moves``: the group moves
    the base).
    """
    if not request.waypoints:
        raise RequestError(IKErrorCode.INVALID_GOAL, "waypoints: empty path (give at least "
                           "one pose)")
    # The header once: its placement in the frame the targets take (identity if the same).
    frame, T_ref_header = resolve(snapshot, request.header.frame_id, pin.SE3.Identity(),
                                  base_moves)
    if frame:
        try:
            snapshot.robot.frame_id(frame)
        except errors.InvalidFrame as exc:
            raise RequestError(IKErrorCode.FRAME_NOT_FOUND, f"header.frame_id: {exc}") from exc
    pos_tol = finite_or(request.position_tolerance, cfg.position_tolerance,
                        "position_tolerance")
    ori_tol = finite_or(request.orientation_tolerance, cfg.orientation_tolerance,
                        "orientation_tolerance")
    return [PoseTarget(tip, T_ref_header * pose_to_se3(pose, f"waypoints[{k}]"), frame,
                       position_tolerance_m=pos_tol, orientation_tolerance_rad=ori_tol)
            for k, pose in enumerate(request.waypoints)]


def trajectory_msg(names, q_path: np.ndarray, times_s: np.ndarray,
                   start: Optional[np.ndarray] = None) -> JointTrajectory:
    """Return a JointTrajectory of ``q_path`` (m, n) at ``times_s`` (m,) [s] from its start.

    Timed (a last time above 0), the points carry velocities
    (:func:`ros2_ik.core.path.timing.point_velocities` from ``start``); untimed, positions
    only.
    """
    msg = JointTrajectory()
    msg.joint_names = list(names)
    timed = len(times_s) > 0 and times_s[-1] > 0
    velocities = point_velocities(q_path, times_s, start).tolist() if timed else None
    for k, (q, t) in enumerate(zip(q_path, times_s)):
        msg.points.append(JointTrajectoryPoint(
            positions=[float(v) for v in q],
            velocities=velocities[k] if timed else [],
            time_from_start=duration_msg(t)))
    return msg


def _fill(response, group, result: PathResult, start, scaling: float,
          acceleration_scaling: float) -> None:
    times = path_times(result.q_path, start, group.velocity_limits, scaling,
                       group.acceleration_limits, acceleration_scaling) if scaling > 0 \
        else np.zeros(len(result.q_path))
    if len(times) and not times[-1] <= MAX_DURATION_S:  # inf too
        raise RequestError(IKErrorCode.INVALID_GOAL, f"velocity_scaling: {scaling:g} (and "
                           f"the node's acceleration_scaling {acceleration_scaling:g}) make "
                           f"the path last {times[-1]:.3g} s; a time_from_start holds at "
                           f"most {MAX_DURATION_S} s")
    response.trajectory = trajectory_msg(group.joint_names, result.q_path, times, start)
    response.fraction = float(result.fraction)
    response.failed_waypoint = int(result.failed_waypoint)
    response.position_errors = [float(v) for v in result.position_errors_m]
    response.orientation_errors = [float(v) for v in result.orientation_errors_rad]
    code = _STATUS_CODES[result.status]
    response.error_code.val = code
    response.message = result.message if code == IKErrorCode.SUCCESS else \
        f"{CODE_NAMES[code]}: {result.message}"
