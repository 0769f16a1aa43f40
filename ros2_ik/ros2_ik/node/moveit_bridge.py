"""MoveIt interoperability: serve ``moveit_msgs/srv/GetPositionIK`` with our solver.

MoveIt's ``srv_kinematics_plugin`` (and any other GetPositionIK client) can then use
ik_node as its IK solver; ``config/kinematics_srv.yaml`` shows the ``kinematics.yaml``.

The mapping is pure functions over message-shaped data (anything with the moveit_msgs
attribute names), so it is unit-tested where moveit_msgs is not installed; only
:func:`attach` imports ``moveit_msgs``.

Mapping of ``PositionIKRequest``:

- ``group_name``: one of our ``group_names``, else a group of the SRDF (chains, joint
  lists, subgroups; core/model/srdf_groups.py); empty: the default group.  Unknown:
  INVALID_GROUP_NAME.
- ``robot_state.joint_state``: the seed (joints outside the group are ignored); empty:
  the latest ``joint_states``.  The answer is this joint state with the group joints
  replaced by the solution (group joints it lacks are appended).
- Whole-body groups (an SRDF group that lists the ``virtual_joint``, floating or planar):
  ``robot_state.multi_dof_joint_state``'s entry of the virtual joint seeds the base; the
  answer's ``multi_dof_joint_state`` is the request's with that entry set to the solved
  base pose (``header.frame_id``: the virtual joint's parent frame).  Other groups ignore
  ``multi_dof_joint_state`` and return it unchanged.
- ``pose_stamped_vector`` (when not empty, else ``pose_stamped``) with ``ik_link_names``
  (when not empty, else ``ik_link_name``; empty: the group's tip).  Several poses (as
  srv_kinematics_plugin sends for a multi-tip group such as pr2's ``arms``) are solved
  as one problem with one pose goal per tip, as the ConstrainedIK action solves them;
  without ``ik_link_names`` the tips are the group's, in the SRDF's order.
- ``avoid_collisions``, ``timeout`` (sec + nanosec; zero, as srv_kinematics_plugin always
  sends: the group's ``robot_description_kinematics.<group>.kinematics_solver_timeout``
  where given, else the node's ``timeout``).
- ``robot_description_kinematics.<group>.position_only_ik: true``: the orientation of
  every pose is ignored, as MoveIt's own solvers do.
- ``constraints``: joint, position (one box, sphere or cylinder) and orientation
  constraints become terms of one ConstrainedIK problem with the poses, with MoveIt's
  meaning (:mod:`moveit_constraints`); visibility constraints, and regions MoveIt would
  take as a union or a mesh, are refused (INVALID_GOAL_CONSTRAINTS, the message naming
  the field), never ignored.

GetPositionIK never publishes to the controller: MoveIt calls IK while it samples plans.
"""
from __future__ import annotations

from types import MappingProxyType
from typing import Any, Mapping, Optional, Sequence, Tuple

from rclpy.callback_groups import ReentrantCallbackGroup

from ros2_ik.node import moveit_constraints
from ros2_ik.node.base_pose import has_base
from ros2_ik.node.compute_ik import compute_ik, resolve_group
from ros2_ik.node.constrained_ik import solve_goal
from ros2_ik.node.moveit_codes import MoveItCode, MoveItRequestError
from ros2_ik.node.request_frames import world_names
from ros2_ik_interfaces.action import ConstrainedIK
from ros2_ik_interfaces.msg import IKErrorCode, MinimumDistanceConstraint, PoseGoal
from ros2_ik_interfaces.srv import ComputeIK


#: Our IKErrorCode -> MoveItErrorCodes.  Anything else (no model, internal error, ...)
#: is FAILURE, with our message in ``message`` where MoveItErrorCodes has that field.
IK_TO_MOVEIT = {
    IKErrorCode.SUCCESS: MoveItCode.SUCCESS,
    IKErrorCode.NO_SOLUTION: MoveItCode.NO_IK_SOLUTION,
    IKErrorCode.JUMP_TOO_LARGE: MoveItCode.NO_IK_SOLUTION,
    IKErrorCode.TIMED_OUT: MoveItCode.TIMED_OUT,
    IKErrorCode.CANCELLED: MoveItCode.PREEMPTED,
    IKErrorCode.IN_COLLISION: MoveItCode.GOAL_IN_COLLISION,
    IKErrorCode.INVALID_GROUP: MoveItCode.INVALID_GROUP_NAME,
    IKErrorCode.INVALID_SEED: MoveItCode.INVALID_ROBOT_STATE,
    IKErrorCode.INVALID_GOAL: MoveItCode.INVALID_GOAL_CONSTRAINTS,
    IKErrorCode.FRAME_NOT_FOUND: MoveItCode.FRAME_TRANSFORM_FAILURE,
}


def moveit_code(ik_code: int) -> int:
    """Return the MoveItErrorCodes value of one of our IKErrorCode values."""
    return IK_TO_MOVEIT.get(ik_code, MoveItCode.FAILURE)


def timeout_s(duration) -> float:
    """Seconds of a ``builtin_interfaces/Duration`` (sec + nanosec); <= 0 means default."""
    return max(float(duration.sec) + float(duration.nanosec) * 1e-9, 0.0)


def targets_and_links(ik_request, group_tips: Sequence[str] = ()) -> Tuple[list, list]:
    """Return the (PoseStamped, link name) pairs of a PositionIKRequest (link '' = group tip).

    ``group_tips``: the group's tips, for several poses without ``ik_link_names``.
    """
    poses = list(ik_request.pose_stamped_vector) or [ik_request.pose_stamped]
    links = [name for name in ik_request.ik_link_names if name]
    if not links:
        links = [ik_request.ik_link_name] if len(poses) == 1 else list(group_tips)
    if len(links) != len(poses):
        raise MoveItRequestError(
            MoveItCode.INVALID_LINK_NAME,
            f"{len(poses)} poses in pose_stamped_vector but {len(links)} links "
            f"(ik_link_names {list(ik_request.ik_link_names)}, group tips "
            f"{list(group_tips)})")
    return poses, links


def refuse_constraints(ik_request) -> None:
    """Raise INVALID_GOAL_CONSTRAINTS when the request carries constraints.

    For :func:`to_compute_ik`, which has no place for them: :func:`answer` sends such a
    request to :func:`to_constrained_goal` instead.
    """
    if moveit_constraints.has_constraints(ik_request.constraints):
        raise MoveItRequestError(MoveItCode.INVALID_GOAL_CONSTRAINTS,
                                 "PositionIKRequest.constraints need the constrained path "
                                 "(to_constrained_goal)")


def checked_links(ik_request, frame_names: Sequence[str] = (),
                  group_tips: Sequence[str] = ()) -> Tuple[list, list]:
    """:func:`targets_and_links`, each link checked against the model's ``frame_names``."""
    poses, links = targets_and_links(ik_request, group_tips)
    for link in links:
        if link and frame_names and link not in frame_names:
            raise MoveItRequestError(MoveItCode.INVALID_LINK_NAME,
                                     f"ik_link_name '{link}' is not a frame of the robot model")
    return poses, links


def kinematics_timeout_s(ik_request, settings: Mapping[str, Any]) -> float:
    """Return the request's timeout [s], else the group's kinematics_solver_timeout, else 0."""
    return timeout_s(ik_request.timeout) or max(
        float(settings.get("kinematics_solver_timeout", 0.0)), 0.0)


def to_constrained_goal(ik_request, cfg, frame_names: Sequence[str] = (),
                        group_tips: Sequence[str] = (),
                        limits: Optional[moveit_constraints.JointLimits] = None,
                        root_names: Sequence[str] = ()) -> ConstrainedIK.Goal:
    """Our ConstrainedIK goal for a PositionIKRequest: one pose goal per pose, and its constraints.

    The request's ``constraints`` become terms of the goal (:mod:`moveit_constraints`;
    ``limits``: the model's joints', ``root_names``: the names that stand for the model's
    root frame, node/request_frames.world_names).
    """
    poses, links = checked_links(ik_request, frame_names, group_tips)
    goal = ConstrainedIK.Goal()
    goal.group_name = ik_request.group_name
    goal.tip_link = links[0]
    settings = cfg.kinematics.get(ik_request.group_name, {})
    position_only = bool(settings.get("position_only_ik", False))
    # Poses after the first are constraints (core.problem.pose_constraints), met within
    # their tolerance plus the constraint tolerance: half the node's tolerance for each
    # keeps every tip within the node's.  One pose: the node's tolerances.
    share = 1.0 if len(poses) == 1 else 0.5
    tol_m, tol_rad = cfg.position_tolerance * share, cfg.orientation_tolerance * share
    goal.pose_goals = [PoseGoal(tip_link=link, target=pose, position_only=position_only,
                                position_tolerance=tol_m, orientation_tolerance=tol_rad)
                       for pose, link in zip(poses, links)]
    goal.position_tolerance, goal.orientation_tolerance = tol_m, tol_rad
    moveit_constraints.add_to_goal(goal, ik_request.constraints, frame_names, limits,
                                   root_names)
    seed = ik_request.robot_state.joint_state
    goal.seed.name = list(seed.name)
    goal.seed.position = [float(v) for v in seed.position]
    if ik_request.avoid_collisions:
        goal.minimum_distance_constraints = [
            MinimumDistanceConstraint(name="avoid_collisions",
                                      minimum_distance=float(cfg.minimum_distance))]
    goal.timeout = kinematics_timeout_s(ik_request, settings)
    goal.num_solutions = 1
    return goal


def to_compute_ik(ik_request, frame_names: Sequence[str] = (),
                  settings: Mapping[str, Any] = MappingProxyType({})) -> ComputeIK.Request:
    """Our ComputeIK request for a ``moveit_msgs/PositionIKRequest``.

    ``frame_names``: the model's frames, to tell an unknown ik_link_name
    (INVALID_LINK_NAME) from an unknown pose frame (FRAME_TRANSFORM_FAILURE).
    ``settings``: the group's kinematics.yaml keys (``NodeConfig.kinematics``).
    Raises :class:`MoveItRequestError` for requests refused before solving.
    """
    refuse_constraints(ik_request)
    (pose,), (link,) = checked_links(ik_request, frame_names)
    request = ComputeIK.Request()
    request.group_name = ik_request.group_name
    request.tip_link = link
    request.target.header.frame_id = pose.header.frame_id
    request.target.pose = pose.pose
    seed = ik_request.robot_state.joint_state
    request.seed.name = list(seed.name)
    request.seed.position = [float(v) for v in seed.position]
    request.avoid_collisions = bool(ik_request.avoid_collisions)
    request.timeout = kinematics_timeout_s(ik_request, settings)
    request.position_only = bool(settings.get("position_only_ik", False))
    request.execute = False
    return request


def merged_state(seed_names: Sequence[str], seed_positions: Sequence[float],
                 names: Sequence[str], positions: Sequence[float]) -> Tuple[list, list]:
    """Return the seed joint state with ``names`` set to ``positions`` (new names appended)."""
    out_names = list(seed_names)
    out_positions = [float(v) for v in seed_positions]
    if len(out_positions) != len(out_names):
        out_names, out_positions = [], []
    index = {name: i for i, name in enumerate(out_names)}
    for name, value in zip(names, positions):
        if name in index:
            out_positions[index[name]] = float(value)
        else:
            out_names.append(name)
            out_positions.append(float(value))
    return out_names, out_positions


def merged_multi_dof(seed, base) -> None:
    """Set ``seed`` (a MultiDOFJointState) to itself with ``base``'s one entry set or added."""
    name, tf = base.joint_names[0], base.transforms[0]
    names, transforms = list(seed.joint_names), list(seed.transforms)
    if len(names) != len(transforms):
        names, transforms = [], []
    if name in names:
        transforms[names.index(name)] = tf
    else:
        names.append(name)
        transforms.append(tf)
    seed.joint_names, seed.transforms = names, transforms
    seed.header.frame_id = base.header.frame_id
    seed.twist, seed.wrench = [], []


def fill_response(response, code: int, message: str, seed_state=None, solution=None,
                  seed_multi_dof=None, base=None):
    """Write the MoveIt code (and message) and, on SUCCESS, the solution state.

    ``base``: a whole-body solution's base entry (MultiDOFJointState), merged into
    ``seed_multi_dof`` (the request's) as the answer's ``multi_dof_joint_state``.
    """
    error = response.error_code
    error.val = code
    # ROS 2 moveit_msgs after Humble: message/source; Humble has neither.
    for text_field, source_field in (("message", "source"),
                                     ("error_message", "error_source")):
        if hasattr(error, text_field):
            setattr(error, text_field, message)
            setattr(error, source_field, "ros2_ik")
    if code == MoveItCode.SUCCESS and solution is not None:
        state = response.solution.joint_state
        state.name, state.position = merged_state(seed_state.name, seed_state.position,
                                                  solution.name, solution.position)
        multi = response.solution.multi_dof_joint_state
        if seed_multi_dof is not None:
            multi.header.frame_id = seed_multi_dof.header.frame_id
            multi.joint_names = list(seed_multi_dof.joint_names)
            multi.transforms = list(seed_multi_dof.transforms)
        if base is not None and len(base.joint_names):
            merged_multi_dof(multi, base)
    return response


def answer(snapshot, model_error: str, cfg, joints, request, response):
    """Answer one GetPositionIK ``request`` into ``response`` with our core solver.

    Never raises: a bug answers FAILURE with its message, and the node keeps serving.
    """
    try:
        return _answer(snapshot, model_error, cfg, joints, request, response)
    except Exception as exc:  # noqa: BLE001 - every failure becomes an error code
        return fill_response(response, MoveItCode.FAILURE,
                             f"internal error: {type(exc).__name__}: {exc}")


def _answer(snapshot, model_error: str, cfg, joints, request, response):
    """:func:`answer`, which may raise on a bug."""
    ik_request = request.ik_request
    frames = snapshot.robot.frame_names if snapshot is not None else ()
    try:
        if len(ik_request.pose_stamped_vector) > 1 \
                or moveit_constraints.has_constraints(ik_request.constraints):
            return _answer_goal(snapshot, model_error, cfg, joints, ik_request, response)
        ours = to_compute_ik(ik_request, frames, cfg.kinematics.get(ik_request.group_name, {}))
    except MoveItRequestError as exc:
        return fill_response(response, exc.code, str(exc))
    if _whole_body(snapshot, cfg, ours.group_name, ours.base_link, ours.tip_link):
        ours.seed_base = ik_request.robot_state.multi_dof_joint_state
    result = compute_ik(snapshot, model_error, cfg, joints, ours).response
    state = ik_request.robot_state
    return fill_response(response, moveit_code(result.error_code.val), result.message,
                         state.joint_state, result.solution, state.multi_dof_joint_state,
                         result.solution_base)


def _whole_body(snapshot, cfg, group_name: str, base_link: str = "",
                tip_link: str = "") -> bool:
    """Return True when the request's group moves a base (errors: left to the solve)."""
    try:
        group, _ = resolve_group(snapshot, cfg, group_name, base_link, tip_link)
    except Exception:  # noqa: BLE001 - the solve answers with the same error
        return False
    return has_base(group)


def _answer_goal(snapshot, model_error, cfg, joints, ik_request, response):
    """Several poses, or constraints: one ConstrainedIK problem; its first verified solution.

    One pose without ``ik_link_name`` is the group's tip, as ComputeIK takes it.
    """
    srdf = snapshot.srdf_groups.get(ik_request.group_name) if snapshot is not None else None
    whole_body = _whole_body(snapshot, cfg, ik_request.group_name)
    robot = snapshot.robot if snapshot is not None else None
    goal = to_constrained_goal(
        ik_request, cfg, robot.frame_names if robot is not None else (),
        srdf.tips if srdf is not None else (),
        moveit_constraints.joint_limits(robot.model) if robot is not None else None,
        world_names(snapshot, whole_body) if snapshot is not None else ())
    if whole_body:
        goal.seed_base = ik_request.robot_state.multi_dof_joint_state
    result = solve_goal(snapshot, model_error, cfg, joints, goal, lambda: False)
    solution = next((s for s in result.solutions
                     if s.error_code.val == IKErrorCode.SUCCESS), None)
    state = ik_request.robot_state
    return fill_response(response, moveit_code(result.error_code.val), result.message,
                         state.joint_state, solution and solution.joint_state,
                         state.multi_dof_joint_state, solution and solution.base)


class MoveItBridge:
    """The GetPositionIK service of one node, in its own reentrant callback group.

    Solved on the node's executor thread like ComputeIK (node/spinning.py), never
    behind a ConstrainedIK goal, which has its own thread.  The reentrant group only
    matters on a multi-threaded executor (a node embedded in someone else's process).
    """

    def __init__(self, node, srv_type, name: str) -> None:
        self._node = node
        self.callback_group = ReentrantCallbackGroup()
        self.service = node.create_service(srv_type, name, self._on_request,
                                           callback_group=self.callback_group)

    def _on_request(self, request, response):
        node = self._node
        return answer(node.robot.snapshot, node.robot.error, node.config, node.joints,
                      request, response)


def attach(node) -> Optional[MoveItBridge]:
    """Serve GetPositionIK on ``moveit_ik_service`` when set and moveit_msgs imports."""
    name = node.config.moveit_ik_service
    if not name:
        return None
    try:
        from moveit_msgs.srv import GetPositionIK
    except ImportError:
        node.get_logger().info("moveit_msgs is not installed: GetPositionIK not served")
        return None
    bridge = MoveItBridge(node, GetPositionIK, name)
    node.get_logger().info(f"serving moveit_msgs/GetPositionIK on "
                           f"{node.resolve_service_name(name)}")
    return bridge
