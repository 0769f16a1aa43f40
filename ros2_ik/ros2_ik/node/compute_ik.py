"""ComputeIK: request message -> core problem -> verified response message.

Thin on purpose: validation that needs the model is done by the core (which raises the
errors in ``core.errors``); this module only converts and maps codes.  Every SUCCESS is
re-verified here with an independent forward-kinematics check on exactly the values
returned, outside the solver.
"""
from __future__ import annotations

import math
import time
from typing import Optional, Tuple

import numpy as np

from ros2_ik.core.pose import PoseTarget
from ros2_ik.core.solve import solve
from ros2_ik.core.verify import verify_pose
from ros2_ik.node.conversions import finite_or, joint_state, pose_to_se3, weights_array
from ros2_ik.node.error_codes import (
    CODE_NAMES, RequestError, code_for_exception, code_for_status)
from ros2_ik.node.parameters import NodeConfig
from ros2_ik.node.robot_source import JointStateCache, RobotSnapshot
from ros2_ik_interfaces.msg import IKErrorCode
from ros2_ik_interfaces.srv import ComputeIK


def resolve_group(snapshot: RobotSnapshot, cfg: NodeConfig, group_name: str,
                  base_link: str, tip_link: str):
    """The core group of a request: by name, by base/tip, or the default group."""
    if not group_name and not base_link:
        group_name = cfg.default_group_name
        if not group_name:
            raise RequestError(IKErrorCode.INVALID_GROUP,
                               "no group_name or base_link given and no group is configured")
    if group_name:
        group_cfg = cfg.groups.get(group_name)
        if group_cfg is None:
            raise RequestError(IKErrorCode.INVALID_GROUP,
                               f"unknown group '{group_name}'; valid: {sorted(cfg.groups)}")
        base_link, joints = group_cfg.base_link, group_cfg.joints
        tip = tip_link or group_cfg.tip_link
        if not tip:
            raise RequestError(IKErrorCode.INVALID_GROUP,
                               f"group '{group_name}' has no tip_link; set tip_link")
    else:
        joints, tip = (), tip_link
        if not tip:
            raise RequestError(IKErrorCode.INVALID_GROUP, "base_link given without tip_link")
    robot = snapshot.robot
    if joints:
        return snapshot.group(("joints", joints, tip),
                              lambda: robot.group(joints=list(joints), tip=tip)), tip
    return snapshot.group(("chain", base_link, tip),
                          lambda: robot.group(base=base_link, tip=tip)), tip


def seed_for(group, seed_msg, joints: JointStateCache, cfg: NodeConfig) -> np.ndarray:
    """The seed: the request's, else fresh joint_states (clamped to limits), else mid."""
    if seed_msg.name:
        if len(seed_msg.position) != len(seed_msg.name):
            raise RequestError(IKErrorCode.INVALID_SEED,
                               f"seed: {len(seed_msg.name)} names but "
                               f"{len(seed_msg.position)} positions")
        return group.seed_from(list(seed_msg.name), list(seed_msg.position))
    mid = group.mid_configuration()
    current = joints.fresh(group.joint_names, cfg.joint_state_timeout)
    if current is None:
        return mid
    q = group.seed_from(list(current), list(current.values()), default=mid)
    return np.clip(q, group.lower, group.upper)


def pose_target(request: ComputeIK.Request, tip: str, cfg: NodeConfig) -> PoseTarget:
    """The core pose target of a request (tolerances defaulted from the config)."""
    return PoseTarget(
        frame=tip,
        T_ref_target=pose_to_se3(request.target.pose, "target.pose"),
        reference_frame=request.target.header.frame_id,
        weights=weights_array(request.weights),
        position_tolerance_m=finite_or(request.position_tolerance, cfg.position_tolerance),
        orientation_tolerance_rad=finite_or(request.orientation_tolerance,
                                            cfg.orientation_tolerance),
        position_only=request.position_only,
    )


def solve_options(request, cfg: NodeConfig) -> dict:
    """Timeout, attempts, solver, random seed and jump limit, capped by the config."""
    timeout = min(finite_or(request.timeout, cfg.timeout), cfg.max_timeout)
    attempts = int(request.max_attempts) or int(cfg.max_attempts)
    return dict(
        solver=request.solver or cfg.solver,
        timeout_s=timeout,
        max_attempts=min(attempts, int(cfg.max_attempts_cap)),
        random_seed=None if request.random_seed < 0 else int(request.random_seed),
        max_joint_jump_rad=cfg.max_joint_jump if cfg.max_joint_jump > 0 else math.inf,
    )


def compute_ik(snapshot: Optional[RobotSnapshot], model_error: str, cfg: NodeConfig,
               joints: JointStateCache, request: ComputeIK.Request,
               extra_constraints=()) -> Tuple[ComputeIK.Response, Optional[object]]:
    """Answer one ComputeIK request: (response, the group solved, or None on early errors).

    Never raises (a bug answers INTERNAL_ERROR).
    """
    try:
        return _compute_ik(snapshot, model_error, cfg, joints, request, extra_constraints)
    except Exception as exc:  # noqa: BLE001 - the node must keep serving
        response = ComputeIK.Response()
        return _error(response, IKErrorCode.INTERNAL_ERROR,
                      f"{type(exc).__name__}: {exc}"), None


def _compute_ik(snapshot, model_error, cfg, joints, request, extra_constraints):
    response = ComputeIK.Response()
    response.min_distance = float("nan")
    response.random_seed = int(request.random_seed)
    started = time.perf_counter()
    if snapshot is None:
        return _error(response, IKErrorCode.NO_ROBOT_MODEL, model_error), None
    group = None
    try:
        group, tip = resolve_group(snapshot, cfg, request.group_name, request.base_link,
                                   request.tip_link)
        target = pose_target(request, tip, cfg)
        seed = seed_for(group, request.seed, joints, cfg)
        result = solve(group, target, seed, constraints=extra_constraints,
                       **solve_options(request, cfg))
    except Exception as exc:  # noqa: BLE001 - every failure becomes an error code
        return _error(response, code_for_exception(exc), str(exc)), group
    _fill(response, group, target, result, extra_constraints)
    response.solve_time = time.perf_counter() - started
    return response, group


def _fill(response, group, target: PoseTarget, result, constraints=()) -> None:
    """Copy a core result into the response, re-verifying any SUCCESS independently."""
    response.iterations = int(result.iterations)
    response.restarts = int(result.restarts)
    response.random_seed = int(result.random_seed)
    code = code_for_status(result.status.name)
    message = result.message
    if result.q is not None and len(result.q):
        response.solution = joint_state(result.joint_names, result.q)
        ok, pos_err, rot_err, reason = verify_pose(group, target, np.asarray(result.q),
                                                   constraints)
        response.position_error, response.orientation_error = pos_err, rot_err
        if code == IKErrorCode.SUCCESS and not ok:
            code = IKErrorCode.NO_SOLUTION
            message = f"solver claimed success but the independent check failed: {reason}"
    response.error_code.val = code
    response.message = message or CODE_NAMES.get(code, "")


def _error(response, code: int, message: str):
    response.error_code.val = code
    response.message = f"{CODE_NAMES.get(code, code)}: {message}"
    return response
