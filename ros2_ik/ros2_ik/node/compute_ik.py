"""ComputeIK: request message -> core problem -> verified response message.

Thin on purpose: validation that needs the model is done by the core (which raises the
errors in ``core.errors``); this module only converts and maps codes.  Every SUCCESS is
re-verified here with an independent forward-kinematics check on exactly the values
returned, outside the solver.
"""
from __future__ import annotations

import math
import time
from typing import NamedTuple, Optional, Tuple

import numpy as np
from sensor_msgs.msg import MultiDOFJointState

from ros2_ik.core import errors
from ros2_ik.core.constraints import MinimumDistanceConstraint
from ros2_ik.core.model.srdf_groups import unresolved_reason
from ros2_ik.core.pose import CompiledPose, PoseTarget
from ros2_ik.core.solve import solve
from ros2_ik.core.verify import CONSTRAINT_TOLERANCE_M, ConstraintTolerance, check
from ros2_ik.node.base_pose import (
    base_state, has_base, reply_vector, robot_base_joint, sent_vector, split, whole_body_seed,
    with_base)
from ros2_ik.node.conversions import SEED_LIMIT_TOLERANCE, finite_or, joint_state, \
    near_limits, pose_to_se3, weights_array
from ros2_ik.node.error_codes import (
    CODE_NAMES, RequestError, code_for_exception, code_for_status, error_reply)
from ros2_ik.node.parameters import GroupConfig, NodeConfig, clean_list
from ros2_ik.node.request_frames import resolve
from ros2_ik.node.robot_source import JointStateCache, RobotSnapshot, seed_readings
from ros2_ik.node.upstream import beside, held_group
from ros2_ik_interfaces.msg import IKErrorCode
from ros2_ik_interfaces.srv import ComputeIK


def resolve_group(snapshot: RobotSnapshot, cfg: NodeConfig, group_name: str,
                  base_link: str, tip_link: str):
    """Return the core group of a request and its tip: by name, by base/tip, or the default.

    Resolved once per model, configuration and names (``snapshot.resolved``): a parameter
    change makes a new ``cfg``, which resolves again.  Errors are not cached.
    """
    key = (group_name, base_link, tip_link)
    known = snapshot.resolved.get(key)
    if known is not None and known[0] is cfg:
        return known[1], known[2]
    group, tip = _resolve_group(snapshot, cfg, group_name, base_link, tip_link)
    snapshot.resolved[key] = (cfg, group, tip)
    return group, tip


def default_group(cfg: NodeConfig, snapshot: Optional[RobotSnapshot]) -> str:
    """Return the group a request naming none (no group, no base) uses ('': none).

    ``default_group``, else the first of ``group_names``, else the SRDF's first group.
    """
    return cfg.default_group_name or (
        next(iter(snapshot.srdf_groups), "") if snapshot is not None else "")


def served_groups(cfg: NodeConfig, snapshot: Optional[RobotSnapshot]) -> Tuple[str, ...]:
    """Names of the groups the node serves without being told more: prepared at start-up.

    The :func:`default_group`, then every one of ``group_names``.
    """
    default = default_group(cfg, snapshot)
    return tuple(dict.fromkeys(([default] if default else []) + list(cfg.groups)))


def _resolve_group(snapshot: RobotSnapshot, cfg: NodeConfig, group_name: str,
                   base_link: str, tip_link: str):
    if not group_name and not base_link:
        group_name = default_group(cfg, snapshot)
        if not group_name:
            raise RequestError(IKErrorCode.INVALID_GROUP,
                               "no group_name or base_link given and no group is configured")
    if group_name:
        group_cfg = group_config(snapshot, cfg, group_name)
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
    base = robot_base_joint(robot)
    try:
        if base and base in joints:  # a whole-body group: the base joint and the others
            rest = [j for j in joints if j != base]
            # ros2_ik's group of the base joint alone: every joint (an SRDF's: the base alone)
            every = not rest and group_name in cfg.groups
            return snapshot.group(("whole_body", tuple(rest), tip, every),
                                  lambda: robot.whole_body(
                                      tip=tip, joints=None if every else rest)), tip
        if joints:
            return snapshot.group(("joints", joints, tip),
                                  lambda: robot.group(joints=list(joints), tip=tip)), tip
        return snapshot.group(("chain", base_link, tip),
                              lambda: robot.group(base=base_link, tip=tip)), tip
    except errors.InvalidArgument as exc:  # no chain base -> tip, bad joint list
        raise RequestError(IKErrorCode.INVALID_GROUP, f"group: {exc}") from exc


def group_config(snapshot: RobotSnapshot, cfg: NodeConfig, name: str) -> GroupConfig:
    """Return group ``name``: ros2_ik's configuration of it, else the SRDF's.

    An SRDF chain is a chain; any other SRDF group lists its joints, with its first tip.
    """
    group_cfg = cfg.groups.get(name)
    if group_cfg is not None:
        return group_cfg
    srdf = snapshot.srdf_groups.get(name)
    if srdf is None:
        valid = sorted(set(cfg.groups) | set(snapshot.srdf_groups))
        unresolved = unresolved_reason(snapshot.robot, snapshot.srdf, name)
        if unresolved:
            raise RequestError(IKErrorCode.INVALID_GROUP,
                               f"group '{name}' of the SRDF does not fit the robot "
                               f"description: {unresolved}; valid: {valid}")
        why = "" if snapshot.srdf else " (no SRDF yet: none received on " \
            "robot_description_semantic nor given as srdf_file)"
        raise RequestError(IKErrorCode.INVALID_GROUP,
                           f"unknown group '{name}'{why}; valid: {valid}")
    if srdf.base_joint:  # a whole-body group: the base joint first, then the others
        return GroupConfig(name, srdf.base_link, srdf.tips[0],
                           (srdf.base_joint,) + tuple(srdf.joints))
    return GroupConfig(name, srdf.base_link, srdf.tips[0], () if srdf.chain else srdf.joints)


def seed_for(group, seed_msg, joints: JointStateCache, cfg: NodeConfig,
             notes: Optional[list] = None, seed_base: Optional[MultiDOFJointState] = None,
             parent_frame: str = "universe") -> np.ndarray:
    """Return the seed: the request's, else joint_states (clamped to limits), else mid.

    A request seed farther than :data:`SEED_LIMIT_TOLERANCE` outside a limit is
    refused (INVALID_SEED); closer, the core clamps it.  joint_states are read however
    old (:func:`seed_readings`); old or missing ones go to ``notes`` (the reply's
    message).  ``seed_base``: the base pose of a whole-body group (node/base_pose.py);
    given to another group, INVALID_SEED.
    """
    seed_base = MultiDOFJointState() if seed_base is None else seed_base
    if has_base(group):
        return whole_body_seed(group, seed_msg, seed_base, joints, cfg, parent_frame,
                               SEED_LIMIT_TOLERANCE, notes)
    with_base(group, None, seed_base, parent_frame, "seed_base")  # refuses a base here
    if seed_msg.name:
        if len(seed_msg.position) != len(seed_msg.name):
            raise RequestError(IKErrorCode.INVALID_SEED,
                               f"seed: {len(seed_msg.name)} names but "
                               f"{len(seed_msg.position)} positions")
        q = _exact_seed(group, seed_msg)
        if q is None:
            q = group.seed_from(list(seed_msg.name), list(seed_msg.position))
        return q if group.within_limits(q) else _within_limits(group, q)
    mid = group.mid_configuration()
    current = seed_readings(joints, group.joint_names, cfg.joint_state_timeout, notes)
    if current is None:
        return mid
    q = group.seed_from(list(current), list(current.values()), default=mid)
    return np.clip(q, group.lower, group.upper)


def _exact_seed(group, seed_msg) -> Optional[np.ndarray]:
    """Return the seed if it names exactly the group's joints in order and is finite.

    The usual request (a client echoing the group).  None otherwise: the caller then
    goes through ``Group.seed_from`` and its checks.
    """
    if tuple(seed_msg.name) != group.joint_names:
        return None
    position = seed_msg.position  # an array('d'): a float sum beats numpy's on 7 values
    return np.array(position, dtype=float) if math.isfinite(sum(position)) else None


def _within_limits(group, q: np.ndarray) -> np.ndarray:
    out = [f"{n}={v:.6g} not in [{lo:.6g}, {hi:.6g}]" for n, v, lo, hi
           in zip(group.joint_names, q.tolist(), group.lower, group.upper)
           if not near_limits(v, lo, hi)]
    if out:
        raise RequestError(IKErrorCode.INVALID_SEED,
                           f"seed outside the joint limits (by more than "
                           f"{SEED_LIMIT_TOLERANCE}): "
                           + ", ".join(out))
    return q


def pose_target(request: ComputeIK.Request, tip: str, cfg: NodeConfig,
                snapshot: RobotSnapshot, base_moves: bool) -> PoseTarget:
    """Return the core pose target of a request (tolerances defaulted from the config).

    A target in a frame the model's world stands for, or outside the model, is put in
    the world (node/request_frames.py; ``base_moves``: the group moves the base).
    """
    frame, T_ref_target = resolve(snapshot, request.target.header.frame_id,
                                  pose_to_se3(request.target.pose, "target.pose"), base_moves)
    return PoseTarget(
        frame=tip,
        T_ref_target=T_ref_target,
        reference_frame=frame,
        weights=weights_array(request.weights),
        position_tolerance_m=finite_or(request.position_tolerance, cfg.position_tolerance,
                                       "position_tolerance"),
        orientation_tolerance_rad=finite_or(request.orientation_tolerance,
                                            cfg.orientation_tolerance,
                                            "orientation_tolerance"),
        position_only=request.position_only,
    )


def solve_options(request, cfg: NodeConfig, notes: Optional[list] = None) -> dict:
    """Timeout, attempts, solver, random seed, jump limit, library starts, capped by the config.

    Each cap applied is described in ``notes`` (for the reply's message).
    """
    asked = finite_or(request.timeout, cfg.timeout, "timeout")
    timeout = min(asked, cfg.max_timeout)
    attempts = int(request.max_attempts) or int(cfg.max_attempts)
    cap = int(cfg.max_attempts_cap)
    if notes is not None and asked > timeout:
        notes.append(f"timeout {asked:g} s capped at max_timeout={timeout:g} s")
    if notes is not None and attempts > cap > 0:
        notes.append(f"max_attempts {attempts} capped at max_attempts_cap={cap}")
    return dict(
        solver=request.solver or cfg.solver,
        timeout_s=timeout,
        max_attempts=min(attempts, cap) if cap > 0 else attempts,
        random_seed=None if request.random_seed < 0 else int(request.random_seed),
        max_joint_jump_rad=cfg.max_joint_jump if cfg.max_joint_jump > 0 else math.inf,
        library_starts=int(cfg.library_starts),
    )


class Answer(NamedTuple):
    """What :func:`compute_ik` returns.

    ``group``: the group solved (None on early errors); ``closest``: the independent
    re-check's closest pair at the returned solution (a ``DistanceReport``, witness points
    in the world frame) when the request avoided collisions, else None.
    """

    response: ComputeIK.Response
    group: Optional[object] = None
    closest: Optional[object] = None


def compute_ik(snapshot: Optional[RobotSnapshot], model_error: str, cfg: NodeConfig,
               joints: JointStateCache, request: ComputeIK.Request,
               extra_constraints=(), response: Optional[ComputeIK.Response] = None) -> Answer:
    """Answer one ComputeIK request (see :class:`Answer`), into ``response`` when given.

    ``response``: a fresh message to fill (the executor's), else one is made.
    Never raises (a bug answers INTERNAL_ERROR).
    """
    try:
        return _compute_ik(snapshot, model_error, cfg, joints, request, extra_constraints,
                           ComputeIK.Response() if response is None else response)
    except Exception as exc:  # noqa: BLE001 - the node must keep serving
        response = ComputeIK.Response()
        return Answer(error_reply(response, IKErrorCode.INTERNAL_ERROR,
                                  f"{type(exc).__name__}: {exc}"))


def _compute_ik(snapshot, model_error, cfg, joints, request, extra_constraints, response):
    started = time.perf_counter()
    response.min_distance = math.nan
    response.random_seed = int(request.random_seed)
    if snapshot is None:
        return Answer(error_reply(response, IKErrorCode.NO_ROBOT_MODEL, model_error))
    group = None
    notes: list = []
    try:
        group, tip = resolve_group(snapshot, cfg, request.group_name, request.base_link,
                                   request.tip_link)
        group = held_group(snapshot, group, request.seed.name, request.seed.position, joints,
                           cfg, notes, every=request.avoid_collisions or beside(
                               group, (request.target.header.frame_id,)))
        # The base's parent frame stands for the root frame only where the base moves (a
        # fixed-base group's base is locked at the origin, not where the robot is).
        parent = snapshot.base_parent_frame if has_base(group) else ""
        target = pose_target(request, tip, cfg, snapshot, has_base(group))
        # Constraints (the clearance) are held to the request's tolerances too.
        tolerance = ConstraintTolerance(target.position_tolerance_m,
                                        target.orientation_tolerance_rad)
        seed = seed_for(group, request.seed, joints, cfg, notes, request.seed_base, parent)
        checker = collision_checker(snapshot, cfg) if request.avoid_collisions else None
        constraints = list(extra_constraints)
        if checker is not None:
            constraints.append(minimum_distance(checker, cfg, tolerance_m=tolerance.m))
        # Held across the solve: the solve and the re-check below read one resolution.
        pose = target.compile(group)
        result = solve(group, target, seed, constraints=constraints,
                       constraint_tolerance_m=tolerance.m,
                       constraint_tolerance_rad=tolerance.rad,
                       **solve_options(request, cfg, notes))
    except Exception as exc:  # noqa: BLE001 - every failure becomes an error code
        return Answer(error_reply(response, code_for_exception(exc), str(exc)), group)
    _fill(response, group, pose, result, snapshot.verification_data(), constraints,
          tolerance, snapshot.base_parent_frame)
    if notes:
        response.message = "; ".join([response.message] + notes)
    closest = None
    if checker is not None and response.solution.name:
        closest = report_collision(response, checker, group, cfg)
    response.solve_time = time.perf_counter() - started
    return Answer(response, group, closest)


def collision_checker(snapshot: RobotSnapshot, cfg: NodeConfig):
    """Return the snapshot's collision checker with the configured meshes and padding."""
    return snapshot.checker(clean_list(cfg.mesh_search_paths), cfg.skip_missing_meshes,
                            cfg.collision_padding)


def minimum_distance(checker, cfg: NodeConfig, minimum_m: Optional[float] = None,
                     influence_m: float = 0.0, tolerance_m: float = CONSTRAINT_TOLERANCE_M,
                     ) -> MinimumDistanceConstraint:
    """Return the in-solve clearance constraint (node defaults where the request gives none).

    Its bound carries a margin of the solve's constraint tolerance ``tolerance_m`` [m], so
    that an answer the solver accepts is never closer than ``minimum_m`` (never touching
    when it is 0).
    """
    minimum_m = cfg.minimum_distance if minimum_m is None else minimum_m
    influence_m = influence_m if influence_m > 0 else cfg.influence_distance
    bound_m = minimum_m + tolerance_m
    return MinimumDistanceConstraint(checker, bound_m, max(influence_m, bound_m + 0.01))


def report_collision(response, checker, group, cfg: NodeConfig):
    """Independent re-check of the returned values: closest pair, IN_COLLISION if too close.

    The values as the reply carries them (a whole-body group: the base from
    ``solution_base``).  Returns the checker's ``DistanceReport`` (the markers draw its
    witness points).
    """
    q = reply_vector(group, response.solution, response.solution_base)
    report = checker.min_distance(group.to_full_q(q))
    response.min_distance = float(report.distance_m)
    response.closest_pair = [str(n) for n in report.pair]
    if report.distance_m < cfg.minimum_distance:
        if response.error_code.val in (IKErrorCode.SUCCESS, IKErrorCode.NO_SOLUTION):
            response.error_code.val = IKErrorCode.IN_COLLISION
            response.message = (f"IN_COLLISION: {report.pair[0]} and {report.pair[1]} are "
                                f"{report.distance_m:.4f} m apart (required "
                                f"{cfg.minimum_distance} m); " + response.message)
    return report


def _fill(response, group, pose: CompiledPose, result, data, constraints=(),
          tolerance: ConstraintTolerance = ConstraintTolerance(),
          base_parent: str = "universe") -> None:
    """Copy a core result into the response, re-verifying any SUCCESS independently.

    ``pose``: the request's target as the solve resolved it (held by the caller across
    the solve: :meth:`PoseTarget.compile` finds it again only while it is held).
    ``data``: the verification's own pinocchio ``Data`` of the full model (not the
    solver's); forward kinematics overwrites all of it that the check reads.  Constraints
    are held to ``tolerance`` ([m] and [rad]).
    """
    response.iterations = int(result.iterations)
    response.restarts = int(result.restarts)
    response.random_seed = int(result.random_seed)
    code = code_for_status(result.status)
    message = result.message
    if result.q is not None and len(result.q):
        names, values = split(group, result.joint_names, result.q)
        joint_state(names, values, msg=response.solution)
        # Checked on the reply's own array (a read-only view, no copy): exactly what is sent
        # (a whole-body group: the base as sent, rebuilt from solution_base, too).
        q = np.frombuffer(response.solution.position, dtype=float)
        if has_base(group):
            base_state(group, result.q, base_parent, response.solution_base)
            q = sent_vector(group, result.q, q, response.solution_base, base_parent)
        ok, pos_err, rot_err, reason, _ = check(group, pose, q,
                                                tuple(constraints), data, tolerance)
        response.position_error, response.orientation_error = pos_err, rot_err
        if code == IKErrorCode.SUCCESS and not ok:
            code = IKErrorCode.NO_SOLUTION
            message = f"solver claimed success but the independent check failed: {reason}"
    response.error_code.val = code
    response.message = message or CODE_NAMES.get(code, "")
