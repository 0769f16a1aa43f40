"""``ik_node``: the ROS 2 adapter over the solver core.

Its ``__init__`` only wires: parameters, subscriptions, services.  Callbacks convert,
call the core, and convert back.  ComputeIK is solved on the executor thread, with
joint_states and the timers; ConstrainedIK goals on the action's worker thread
(threads: node/spinning.py).  Each thread owns its pinocchio ``Data``.
"""
from __future__ import annotations

import pathlib
import time
from typing import Any, Dict, List, Optional

import numpy as np
from geometry_msgs.msg import PoseStamped
from rcl_interfaces.msg import ParameterDescriptor, SetParametersResult
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup, ReentrantCallbackGroup
from rclpy.logging import LoggingSeverity
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import String

from ros2_ik.node.action_server import ConstrainedIKServer
from ros2_ik.node.capability_markers import CapabilityMapPublisher
from ros2_ik.node import execution, interactive_goal, moveit_bridge
from ros2_ik.node.base_pose import has_base, joint_limits, marker_frames, reply_vector
from ros2_ik.node.request_frames import placed_in_world
from ros2_ik.node.tf_tree import follow_tf
from ros2_ik.core.errors import InvalidGoal
from ros2_ik.core.runtime.memory import settle_memory
from ros2_ik.core.solve import prepare
from ros2_ik.core.solvers import registry
from ros2_ik.node.compute_ik import Answer, collision_checker, compute_ik, resolve_group, \
    served_groups
from ros2_ik.node.diagnostics import Diagnostics
from ros2_ik.node.conversions import pose_to_se3
from ros2_ik.node.outputs import Outputs
from ros2_ik.node.error_codes import CODE_NAMES
from ros2_ik.node.long_solves import INLINE_SOLVE_MAX_S, LongSolves, budget_s
from ros2_ik.node.spinning import answered
from ros2_ik.node.moveit_scene import follow_monitored_scene
from ros2_ik.node.path_server import PathServer
from ros2_ik.node.parameters import (
    SCHEMA, GroupConfig, NodeConfig, check_planning_limit, check_value, clean_list, group_specs,
    kinematics_parameter, planning_limit_parameter, planning_limits)
from ros2_ik.node.robot_source import JointStateCache, RobotSource
from ros2_ik.node.scene_server import SceneServer
from ros2_ik.node.servo_loop import ServoLoop
from ros2_ik_interfaces.msg import IKErrorCode
from ros2_ik_interfaces.srv import ComputeIK

#: robot_state_publisher publishes the description once, reliable + transient local.
LATCHED = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.TRANSIENT_LOCAL)


#: Deeper than the default 10 (harmless). make load lost ~1 answer in 100,000 on 2
#: busy cores with depth 10 here and still with 100; what removed the losses was a
#: 1000-deep response history in the *clients* (bench/load_clients.py), so clients that
#: share this service under load should use one too.
SERVICE_QOS = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)


class IKNode(Node):
    """Serves ComputeIK on the robot model received on ``robot_description``."""

    def __init__(self, **kwargs) -> None:
        super().__init__("ik_node", **kwargs)
        self._declare_parameters()
        self.robot = RobotSource(self.config.root_joint, self.config.planning_limits)
        self.joints = JointStateCache()
        self.solve_group = ReentrantCallbackGroup()
        self._state_group = MutuallyExclusiveCallbackGroup()
        self._model_group = MutuallyExclusiveCallbackGroup()
        self.diagnostics = Diagnostics(self, self._model_group)
        self._subscribe()
        self.long_solves = LongSolves(self, self.solve_group)
        self.create_service(ComputeIK, "compute_ik", self._on_compute_ik_request,
                            qos_profile=SERVICE_QOS, callback_group=self.solve_group)
        self.action_server = ConstrainedIKServer(self, self.solve_group)
        self.path_server = PathServer(self, self.solve_group, SERVICE_QOS)
        self.outputs = Outputs(self)
        self.scene = SceneServer(self, self._model_group)
        if follow_monitored_scene(self, self.scene, self._model_group):
            self.get_logger().info(f"following {self.config.monitored_scene_topic}")
        topics = follow_tf(self, self.robot.tf, self.config.tf_frames, self._model_group)
        if topics:
            self.get_logger().info(f"following {' and '.join(topics)}")
        self.create_subscription(PoseStamped, self.config.goal_topic, self._on_goal_pose, 10,
                                 callback_group=self.solve_group)
        self.moveit = moveit_bridge.attach(self)            # GetPositionIK, if installed
        self.interactive_goal = interactive_goal.attach(self)  # rviz marker, if installed
        self.capability_map = CapabilityMapPublisher(self)
        self.servo = ServoLoop(self, self.solve_group)
        self._load_initial_model()
        settle_memory()
        self.get_logger().info("ik_node ready: service compute_ik, action constrained_ik"
                               if self.robot.snapshot else
                               "ik_node waiting for robot_description")

    # --- wiring --------------------------------------------------------------------
    def _declare_parameters(self) -> None:
        for spec in SCHEMA:
            self.declare_parameter(spec.name, spec.default, spec.descriptor())
        self._group_names = clean_list(self.get_parameter("group_names").value)
        for group in self._group_names:
            for spec in group_specs(group):
                self.declare_parameter(spec.name, spec.default, spec.descriptor())
        # MoveIt's kinematics.yaml and joint_limits.yaml, where given: rclpy lists the
        # overrides only here.
        overrides = getattr(self, "_parameter_overrides", {})
        self._kinematics_names = [name for name in overrides if kinematics_parameter(name)]
        for name in self._kinematics_names:
            self.declare_parameter(name, overrides[name].value)
        self._limit_names = [name for name in overrides if planning_limit_parameter(name)]
        for name in self._limit_names:
            self.declare_parameter(name, overrides[name].value, ParameterDescriptor(
                description="MoveIt's joint_limits.yaml: replaces the URDF's limit [rad or "
                            "m, per s for a velocity] in the model (read at start)",
                read_only=True))
        problems = [f"{name} {problem}" for name in self._limit_names
                    if (problem := check_planning_limit(name, self.get_parameter(name).value))]
        if not problems:
            self.config = self._read_config()
            problems = [f"{name} {problem}" for name, value in self.config.values.items()
                        if (problem := check_value(name, value))]
        if problems:
            raise ValueError("invalid parameters: " + "; ".join(problems))
        self.add_on_set_parameters_callback(self._validate_parameters)
        self.add_post_set_parameters_callback(lambda _: self._refresh_config())

    def _subscribe(self) -> None:
        self.create_subscription(String, "robot_description", self._on_description,
                                 LATCHED, callback_group=self._model_group)
        self.create_subscription(String, "robot_description_semantic", self._on_semantic,
                                 LATCHED, callback_group=self._model_group)
        self.create_subscription(JointState, self.config.joint_states_topic,
                                 self._on_joint_states, 50,
                                 callback_group=self._state_group)

    def _load_initial_model(self) -> None:
        try:
            srdf = self.config.robot_description_semantic or _read(self.config.srdf_file)
            urdf = self.config.robot_description or _read(
                self.config.robot_description_file)
        except OSError as exc:
            self.robot.error = f"cannot read the configured robot description: {exc}"
            self.get_logger().error(self.robot.error)
            return
        if srdf:
            self.robot.set_srdf(srdf)
        if urdf:
            self._apply_urdf(urdf)

    # --- parameters ----------------------------------------------------------------
    def _read_config(self) -> NodeConfig:
        values = {spec.name: self.get_parameter(spec.name).value for spec in SCHEMA}
        groups: Dict[str, GroupConfig] = {}
        for name in self._group_names:
            get = lambda key: self.get_parameter(f"groups.{name}.{key}").value  # noqa: E731
            groups[name] = GroupConfig(name, get("base_link"), get("tip_link"),
                                       clean_list(get("joints")))
        kinematics: Dict[str, Dict[str, Any]] = {}
        for name in self._kinematics_names:
            group, key = kinematics_parameter(name)
            kinematics.setdefault(group, {})[key] = self.get_parameter(name).value
        limits = planning_limits({name: self.get_parameter(name).value
                                  for name in self._limit_names})
        return NodeConfig(values, groups, kinematics, limits)

    def _validate_parameters(self, params: List) -> SetParametersResult:
        for param in params:
            problem = check_value(param.name, param.value)
            if problem:
                return SetParametersResult(successful=False,
                                           reason=f"{param.name} {problem}")
        return SetParametersResult(successful=True)

    def _refresh_config(self) -> None:
        self.config = self._read_config()
        if hasattr(self, "capability_map"):
            self.capability_map.refresh()

    # --- callbacks -----------------------------------------------------------------
    def _on_description(self, msg: String) -> None:
        self._apply_urdf(msg.data)

    def _on_semantic(self, msg: String) -> None:
        try:
            self.robot.set_srdf(msg.data)
        except Exception as exc:  # noqa: BLE001 - a bad SRDF must not kill the node
            self.get_logger().error(f"robot_description_semantic rejected (the previous "
                                    f"SRDF stays in use): {exc}")
        if self.robot.snapshot is not None:
            self._model_changed()

    def _apply_urdf(self, urdf: str) -> None:
        try:
            self.robot.set_urdf(urdf)
        except Exception as exc:  # noqa: BLE001 - a bad URDF must not kill the node
            self.get_logger().error(self.robot.error)
            self.get_logger().debug(f"{type(exc).__name__}: {exc}")
            return
        self._model_changed()

    def _model_changed(self) -> None:
        """After a new snapshot: log dropped scene objects, load the scene file, warm up."""
        for dropped in self.robot.dropped:
            self.get_logger().warning(f"scene object dropped with the old model: {dropped}")
        self.robot.dropped.clear()
        self.scene.load_file_once()
        self._warm_up()
        settle_memory()
        robot = self.robot.snapshot.robot
        bounded = sorted(name for name, limits in self.robot.planning_limits.items()
                         if name in robot.joint_names and any(v is not None for v in limits))
        self.get_logger().info(f"robot model v{self.robot.snapshot.version}: "
                               f"{len(robot.joint_names)} joints, "
                               f"{len(robot.frame_names)} frames"
                               + (f", joint_limits.yaml limits on {bounded}"
                                  if bounded else ""))

    def _warm_up(self) -> None:
        """Prepare every group the node serves, load the default solver: now.

        The default group (a request naming none uses it) and each of ``group_names``: each
        one's restart library, reach bound and closed-form or sweep detection for its tip
        (:func:`ros2_ik.core.solve.prepare`), not in its first request, whose budget they
        would take (docs/design.md, ``node/``).  A group first named in a request (an SRDF
        group not configured, a base and tip) does that work in its first request, before
        its clock starts.
        """
        cfg = self.config
        for name in served_groups(cfg, self.robot.snapshot):
            started = time.perf_counter()
            try:
                group, tip = resolve_group(self.robot.snapshot, cfg, name, "", "")
                prepare(group, tip, constrained=True, solver=cfg.solver)
            except Exception as exc:  # noqa: BLE001 - a request will report the same error
                self.get_logger().warning(f"group '{name}' not usable: {exc}")
                continue
            self.get_logger().info(f"group '{name}' prepared for frame '{tip}' in "
                                   f"{time.perf_counter() - started:.2f} s")
        try:
            registry.solver_class(cfg.solver)
        except Exception as exc:  # noqa: BLE001 - a request will report the same error
            self.get_logger().warning(f"solver '{cfg.solver}' not usable: {exc}")
        self._warm_up_collisions()

    def _warm_up_collisions(self) -> None:
        """Build the collision model (meshes, BVHs) now, not in a first avoid_collisions solve.

        A mesh that cannot be found is said here, at start-up; a request that checks
        collisions then answers NO_ROBOT_MODEL with the same reason (it tries again).
        """
        try:
            collision_checker(self.robot.snapshot, self.config)
        except Exception as exc:  # noqa: BLE001 - the node keeps serving without them
            self.get_logger().warning(f"collision checks unavailable: {exc}")

    def _on_joint_states(self, msg: JointState) -> None:
        self.diagnostics.joint_states.tick()
        self.joints.update(msg.name, msg.position, msg.velocity)

    async def _on_compute_ik_request(self, request: ComputeIK.Request,
                                     response: ComputeIK.Response) -> ComputeIK.Response:
        """Reply inline, or from the long-solve thread past INLINE_SOLVE_MAX_S (long_solves).

        Never raises (:func:`spinning.answered`: the executor would end the process).
        """
        cfg = self.config
        try:
            if budget_s(request.timeout, cfg.timeout, cfg.max_timeout) <= INLINE_SOLVE_MAX_S:
                return self._on_compute_ik(request, response)
            return await self.long_solves.run(self._on_compute_ik, request, response)
        except Exception as exc:  # noqa: BLE001 - the node must keep serving
            return answered(response, exc)

    def _on_compute_ik(self, request: ComputeIK.Request, response: ComputeIK.Response,
                       execute: Optional[bool] = None) -> ComputeIK.Response:
        """Answer ``request``, sending a SUCCESS to the controller when ``execute``.

        ``execute`` None: the request's ``execute`` or ``execute_by_default``.
        """
        answer = compute_ik(self.robot.snapshot, self.robot.error, self.config,
                            self.joints, request, response=response)
        if execute is None:
            execute = request.execute or self.config.execute_by_default
        if answer.group is not None and answer.response.solution.name:
            if execute:
                self._execute(answer, request.avoid_collisions)  # part of the reply
            if self.outputs.wants_solution() or self.outputs.wants_markers():
                self._after_reply(self._publish, request, answer)
        self._log_answer(answer.response)
        return answer.response

    def _on_goal_pose(self, msg: PoseStamped) -> None:
        """Solve a goal from rviz (or any PoseStamped publisher) with the defaults.

        Collision-aware when ``goal_avoid_collisions`` is set (the default).
        """
        request = ComputeIK.Request(avoid_collisions=self.config.goal_avoid_collisions)
        request.target = msg
        request.execute = self.config.execute_by_default
        self._on_compute_ik(request, ComputeIK.Response())

    def _after_reply(self, job, *args) -> None:
        """Run ``job(*args)`` on the executor thread once the current callback returned.

        For what the reply does not wait for (``~/solution``, ``~/markers``).
        """
        def run() -> None:
            try:
                job(*args)
            except Exception as exc:  # noqa: BLE001 - a display failure must not stop us
                self.get_logger().error(f"{job.__name__}: {type(exc).__name__}: {exc}",
                                        throttle_duration_sec=1.0)
        if self.executor is None or self.long_solves.on_worker():
            run()
        else:
            self.executor.create_task(run)

    def _publish(self, request: ComputeIK.Request, computed: Answer) -> None:
        """``~/solution`` and ``~/markers`` of an answer, when someone subscribes."""
        answer, group = computed.response, computed.group
        self.outputs.solution(answer.solution.name, answer.solution.position)
        if not self.outputs.wants_markers():
            return
        q = reply_vector(group, answer.solution, answer.solution_base)
        snapshot = self.robot.snapshot
        parent, shown = snapshot.base_parent_frame, request.target.header.frame_id
        T_world_ref = placed_in_world(snapshot, shown, has_base(group))
        if T_world_ref is None:  # a model frame, or none
            ref, shown = marker_frames(group, shown, parent)
            T_world_ref = group.fk(q, ref)
        world = marker_frames(group, "", parent)[1]  # where the root's points are shown
        T_ref_reached = T_world_ref.actInv(group.fk(q, group.tip))
        try:
            T_ref_target = pose_to_se3(request.target.pose, "target")
        except InvalidGoal:
            T_ref_target = T_ref_reached
        closest = computed.closest  # the re-check's pair: no second distance pass
        witnesses = None if closest is None or not np.isfinite(closest.distance_m) else (
            closest.p_world_a, closest.p_world_b)
        T_ref_base = T_world_ref.actInv(group.base_world_placement(q)) \
            if has_base(group) else None
        self.outputs.markers(shown, T_ref_target, T_ref_reached, witnesses, T_ref_base,
                             world)

    def _execute(self, computed: Answer, avoid_collisions: bool = False) -> None:
        """Send the solution to the controller when safe; the outcome goes in the reply.

        ``avoid_collisions``: the move there is checked too (:meth:`Outputs.move_check`).
        """
        answer, group = computed.response, computed.group
        q = np.asarray(answer.solution.position)
        ok = answer.error_code.val == IKErrorCode.SUCCESS
        notes: list = []
        reason = self.outputs.execute(joint_limits(group), answer.solution.name, q,
                                      ok, answer.error_code.val == IKErrorCode.IN_COLLISION,
                                      self.outputs.move_check(group, avoid_collisions), notes)
        if not reason and has_base(group):
            reason = self.outputs.base_goal(answer.solution_base)
        execution.note_outcome(answer, reason, ok, IKErrorCode.EXECUTION_REFUSED, notes)

    def _log_answer(self, answer: ComputeIK.Response) -> None:
        code = answer.error_code.val
        logger = self.get_logger()
        if code > 0 and not logger.is_enabled_for(LoggingSeverity.DEBUG):
            return
        text = (f"compute_ik: {CODE_NAMES.get(code, code)} "
                f"({answer.solve_time * 1e3:.2f} ms) {answer.message}")
        if code > 0:
            logger.debug(text)
        else:
            logger.warning(text, throttle_duration_sec=1.0)

    def destroy_node(self) -> None:
        """Stop the servo loop and the action's worker (ending a solve) before the node goes."""
        self.servo.stop("ik_node shutting down")
        if self.outputs.stream is not None:
            self.outputs.stream.stop()
        self.long_solves.stop()
        self.action_server.destroy()
        super().destroy_node()


def _read(path: str) -> str:
    return pathlib.Path(path).read_text() if path else ""
