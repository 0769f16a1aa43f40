"""The node's one parameter schema, feeding one frozen :class:`NodeConfig`.

Every ROS parameter is declared once, with a description, a unit and a validation rule.

The node re-reads the snapshot on every solve, so ``ros2 param set`` on any value here
takes effect on the next request.  Groups are declared from ``group_names``:
``groups.<name>.base_link``, ``groups.<name>.tip_link`` and ``groups.<name>.joints``.

MoveIt's ``kinematics.yaml``, given to ik_node as move_group gets it
(``robot_description_kinematics.<group>.<key>``), is read for the keys of
:data:`KINEMATICS_KEYS`, where present; GetPositionIK honours them (moveit_bridge.py).
MoveIt's ``joint_limits.yaml`` (``robot_description_planning.joint_limits.<joint>.<key>``)
is read for the position bounds, velocity and acceleration limits of
:data:`PLANNING_LIMIT_KEYS`: they replace the URDF's in the model, as in move_group's (read
once, at start: read-only); the accelerations time what the node sends.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Mapping, Optional, Tuple

from rcl_interfaces.msg import FloatingPointRange, IntegerRange, ParameterDescriptor

from ros2_ik.core.model.joint_limits_yaml import PlanningLimits, planning_limits_of, \
    planning_value_problem
from ros2_ik.core.pose import ORIENTATION_TOLERANCE_RAD, POSITION_TOLERANCE_M
from ros2_ik.core.solvers import registry
from ros2_ik.core.solvers.seed_library import LIBRARY_STARTS
from ros2_ik.node.tf_tree import TOPICS as TF_TOPICS

_Check = Callable[[Any], Optional[str]]


def _positive(value: Any) -> Optional[str]:
    return None if value > 0 and math.isfinite(value) else "must be > 0 and finite"


def _non_negative(value: Any) -> Optional[str]:
    return None if value >= 0 and math.isfinite(value) else "must be >= 0 and finite"


def _jump(value: Any) -> Optional[str]:
    return None if value >= 0 else "must be >= 0 (0 disables the check)"


def _one_of(*choices: str) -> _Check:
    def check(value: Any) -> Optional[str]:
        return None if value in choices else f"must be one of {list(choices)}"
    return check


def _known_solver(value: Any) -> Optional[str]:
    names = registry.available()
    return None if value in names else f"must be a registered solver: {list(names)}"


def _rate(value: Any) -> Optional[str]:
    return None if 1.0 <= value <= 2000.0 else "must be in [1, 2000] Hz"


def _priority(value: Any) -> Optional[str]:
    return None if 0 <= value <= 99 else "must be in [0, 99]"


def _fraction(value: Any) -> Optional[str]:
    return None if 0 < value <= 1 else "must be in (0, 1]"


_ROS_NAME = re.compile(r"^(~/|/)?[A-Za-z_][A-Za-z0-9_]*(/[A-Za-z_][A-Za-z0-9_]*)*$")


def _ros_name_or_empty(value: Any) -> Optional[str]:
    return None if value == "" or _ROS_NAME.match(value) else (
        "must be empty or a ROS name (letters, digits, _ and /, not starting with a digit)")


@dataclass(frozen=True)
class ParamSpec:
    """One declared parameter: its name, default, description (with unit) and check."""

    name: str
    default: Any
    description: str
    check: Optional[_Check] = None
    read_only: bool = False

    def descriptor(self) -> ParameterDescriptor:
        """Return the ROS descriptor, with ranges where the check is a simple bound."""
        desc = ParameterDescriptor(description=self.description, read_only=self.read_only)
        if isinstance(self.default, float) and self.check is _fraction:
            desc.floating_point_range = [FloatingPointRange(from_value=0.0, to_value=1.0)]
        if isinstance(self.default, int) and not isinstance(self.default, bool):
            desc.integer_range = [IntegerRange(from_value=0, to_value=2**31 - 1)]
        return desc


SCHEMA: Tuple[ParamSpec, ...] = (
    # --- robot model -----------------------------------------------------------------
    ParamSpec("robot_description", "", "URDF XML. Empty: listen on the robot_description "
              "topic (or use robot_description_file).", read_only=True),
    ParamSpec("robot_description_file", "", "Path of a URDF file to load at start "
              "(used when robot_description is empty).", read_only=True),
    ParamSpec("robot_description_semantic", "", "SRDF XML (collision pairs to disable, "
              "groups). Empty: listen on robot_description_semantic or use srdf_file.",
              read_only=True),
    ParamSpec("srdf_file", "", "Path of an SRDF file to load at start.", read_only=True),
    ParamSpec("root_joint", "srdf", "The robot's base joint: 'srdf' (the SRDF's "
              "virtual_joint: floating or planar, named as there; fixed or none: no base), "
              "'floating' or 'planar' (a base joint 'root_joint' under the URDF's root "
              "link, e.g. a humanoid without an SRDF virtual joint), or 'none'. Groups that "
              "list the base joint are whole-body groups.",
              _one_of("srdf", "floating", "planar", "none"), read_only=True),
    # --- groups ----------------------------------------------------------------------
    ParamSpec("group_names", [""], "Names of the kinematic groups; each is configured by "
              "groups.<name>.base_link / tip_link / joints, and prepared at start-up for "
              "its tip_link and the default solver.", read_only=True),
    ParamSpec("default_group", "", "Group used when a request names none (and gives no "
              "base/tip). Empty: the first of group_names."),
    # --- solver ----------------------------------------------------------------------
    ParamSpec("solver", "lm", "Default solver plugin (lm, dls, bfgs, sqp or a "
              "third-party ros2_ik.solvers entry point).", _known_solver),
    ParamSpec("timeout", 0.05, "Default solve budget [s] when a request gives <= 0.",
              _positive),
    ParamSpec("max_timeout", 10.0, "Upper cap on a request's timeout [s]; larger requests "
              "are clamped to it.", _positive),
    ParamSpec("max_attempts", 0, "Default cap on restarts (0: restart until the timeout)."),
    ParamSpec("max_attempts_cap", 100000, "Upper cap on a request's max_attempts."),
    ParamSpec("library_starts", LIBRARY_STARTS, "Restarts that start from the group's sample "
              "library (8000 configurations) nearest to the target, before uniform random "
              "ones; 0: uniform random restarts only."),
    ParamSpec("position_tolerance", POSITION_TOLERANCE_M, "Default position tolerance [m].",
              _positive),
    ParamSpec("orientation_tolerance", ORIENTATION_TOLERANCE_RAD,
              "Default orientation tolerance [rad].", _positive),
    ParamSpec("max_joint_jump", 0.0, "Reject solutions that move any joint more than this "
              "from the seed [rad or m]; 0 disables the check.", _jump),
    # --- joint states ----------------------------------------------------------------
    ParamSpec("joint_states_topic", "joint_states", "Topic of sensor_msgs/JointState used "
              "as the default seed and as the current state for execution.", read_only=True),
    ParamSpec("joint_state_timeout", 1.0, "joint_states older than this [s] are stale: "
              "execution is refused; a seed still reads them (the reply says how old).",
              _positive),
    # --- collision -------------------------------------------------------------------
    ParamSpec("collision_padding", 0.0, "Padding added to every robot collision geometry "
              "[m].", _non_negative),
    ParamSpec("minimum_distance", 0.0, "Required clearance for avoid_collisions [m].",
              _non_negative),
    ParamSpec("influence_distance", 0.05, "Pairs farther apart than this [m] are ignored by "
              "the in-solve collision constraint.", _positive),
    ParamSpec("scene_file", "", "YAML planning scene loaded at start.", read_only=True),
    ParamSpec("capability_map_file", "", "Capability map (.npz written by reach) published "
              "as a latched MarkerArray on ~/capability_map ('' for none); a change loads "
              "the new file."),
    ParamSpec("mesh_search_paths", [""], "Extra directories where package:// meshes are "
              "looked up.", read_only=True),
    ParamSpec("allowed_mesh_dirs", [""], "Directories from which mesh files named in scene "
              "input may be read; other paths are refused.", read_only=True),
    ParamSpec("monitored_scene_topic", "/monitored_planning_scene", "moveit_msgs/"
              "PlanningScene topic followed when moveit_msgs is installed.", read_only=True),
    ParamSpec("tf_frames", "static", "TF frames a request may name outside the model "
              "(docs/moveit.md, \"Frames\"; needs tf2_msgs): static follows /tf_static "
              "(calibrated cameras, tables: latched, nearly free), all also /tf (moving "
              "frames; ~0.6 ms of node CPU per message of 30 transforms), none neither.",
              _one_of(*TF_TOPICS), read_only=True),
    ParamSpec("skip_missing_meshes", False, "Warn and skip a collision mesh that cannot be "
              "found instead of refusing the robot model.", read_only=True),
    # --- execution -------------------------------------------------------------------
    ParamSpec("controller_mode", "trajectory", "How solutions are executed: 'trajectory' "
              "(trajectory_msgs/JointTrajectory) or 'position' "
              "(std_msgs/Float64MultiArray for a forward position controller).",
              _one_of("trajectory", "position"), read_only=True),
    ParamSpec("controller_topic", "/joint_trajectory_controller/joint_trajectory",
              "Topic the solution is published to when executed.", read_only=True),
    ParamSpec("controller_action", "", "FollowJointTrajectory action of the controller (e.g. "
              "/joint_trajectory_controller/follow_joint_trajectory); when set and "
              "control_msgs is installed, trajectories go there and the outcome is reported "
              "on ~/execution_result. Empty: publish on controller_topic.", read_only=True),
    ParamSpec("position_rate", 100.0, "Commands per second [Hz] of controller_mode "
              "'position': a move is sent as the spline a JointTrajectoryController would "
              "draw, sampled at this rate.", _rate, read_only=True),
    ParamSpec("controller_joints", [""], "Joint order of the position controller's "
              "Float64MultiArray (empty: the group's joints)."),
    ParamSpec("velocity_scaling", 0.2, "Fraction (0, 1] of the URDF velocity limits a "
              "trajectory may reach at its peak (an executed solution, a timed path).", _fraction),
    ParamSpec("acceleration_scaling", 0.2, "Fraction (0, 1] of joint_limits.yaml's "
              "max_acceleration a trajectory may reach (an executed solution, a timed path); "
              "joints without one are timed by their velocity limits alone.", _fraction),
    ParamSpec("min_trajectory_duration", 0.5, "Lower bound on the trajectory duration [s].",
              _positive),
    ParamSpec("execute_max_joint_jump", 0.5, "Refuse to execute a solution that moves any "
              "joint more than this from the current joint_states [rad or m].", _positive),
    ParamSpec("execute_follow_tolerance", 0.05, "How far joint_states may read from the "
              "move under way [rad or m], beyond 0.1 s of its speed (the readings' lag), "
              "before a stop or a new execute takes it as stopped by the controller (an "
              "e-stop, a controller switch) and brakes from joint_states, not from the "
              "move's plan.", _positive),
    ParamSpec("execute_watch", False, "Watch each move under way against joint_states "
              "(every 50 ms) and stop it when they read it off by more than "
              "execute_follow_tolerance: the arm is held where they put it, so that a "
              "controller stopped without telling the node (an e-stop) resumes nothing "
              "after a reset. Off by default: a controller that tracks more loosely would "
              "see its moves stopped."),
    ParamSpec("execute_by_default", False, "Execute every successful solution, as if each "
              "request had execute=true (an rviz marker drag: where the marker is released)."),
    ParamSpec("base_goal_topic", "~/base_goal", "geometry_msgs/PoseStamped topic on which "
              "an executed whole-body solution's base pose is published (the goal of a "
              "mobile base's controller), in the base joint's parent frame.",
              _ros_name_or_empty, read_only=True),
    ParamSpec("goal_topic", "goal_pose", "geometry_msgs/PoseStamped topic (e.g. from rviz) "
              "that triggers a solve.", read_only=True),
    # --- limits on requests ----------------------------------------------------------
    ParamSpec("max_constraints", 1000, "Largest number of constraints and costs in one "
              "request; larger requests get REQUEST_TOO_LARGE."),
    ParamSpec("max_mesh_triangles", 200000, "Largest mesh (triangles) accepted in scene "
              "input."),
    # --- servo (servo_loop.py) ----------------------------------------------------------
    ParamSpec("servo_autostart", False, "Start servoing as soon as the model and fresh "
              "joint_states are there (else call ~/servo/start).", read_only=True),
    ParamSpec("servo_rate", 250.0, "Servo loop rate [Hz].", _rate, read_only=True),
    ParamSpec("servo_thread_priority", 40, "SCHED_FIFO priority [1-99] of the servo's "
              "loop thread, as MoveIt Servo's thread_priority (40, under ros2_control's "
              "50); needs the rtprio permission (refused: a warning, normal scheduling). "
              "0: normal scheduling.",
              _priority, read_only=True),
    ParamSpec("servo_group", "", "Group the servo moves ('' : the default group); read "
              "at ~/servo/start."),
    ParamSpec("servo_frame", "", "Frame the servo drives ('' : the group's tip); read at "
              "~/servo/start."),
    ParamSpec("servo_output", "position", "What the servo sends on servo_command_topic: "
              "'position' (Float64MultiArray for a forward position controller), "
              "'velocity' (Float64MultiArray for a forward velocity controller) or "
              "'trajectory' (a one-point JointTrajectory per tick).",
              _one_of("position", "velocity", "trajectory"), read_only=True),
    ParamSpec("servo_command_topic", "/forward_position_controller/commands", "Topic of "
              "the servo's commands (joint order: controller_joints, else the group's).",
              read_only=True),
    ParamSpec("servo_gain", 10.0, "Pose-target gain [1/s]: the error decays as "
              "exp(-gain t) while no limit binds.", _positive),
    ParamSpec("servo_velocity_scaling", 0.5, "Fraction (0, 1] of the URDF velocity "
              "limits the servo may use.", _fraction),
    ParamSpec("servo_acceleration_limit", 5.0, "Joint acceleration limit of the servo "
              "[rad/s^2 or m/s^2] (joint_limits.yaml's max_acceleration where lower).",
              _positive),
    ParamSpec("servo_target_timeout", 0.5, "A target (pose or twist) older than this [s] "
              "is stale: the servo halts, holding position, until a new one arrives.",
              _positive),
    ParamSpec("servo_joint_state_timeout", 0.1, "joint_states older than this [s] halt "
              "the servo.", _positive),
    ParamSpec("servo_max_tracking_error", 0.2, "Halt when a joint is farther than this "
              "from the servo's command [rad or m] (the controller is not following).",
              _positive),
    ParamSpec("servo_avoid_collisions", True, "Keep servo_clearance from the planning "
              "scene and between links (velocity dampers); read at ~/servo/start."),
    ParamSpec("servo_clearance", 0.01, "Smallest distance the servo keeps [m].",
              _non_negative),
    ParamSpec("servo_influence_distance", 0.1, "Obstacles nearer than this [m] start to "
              "slow the approach.", _positive),
    # --- whole-body servo (a servo_group with a floating or planar base) --------------
    ParamSpec("servo_contacts", [""], "Whole-body servo: frames held where they are at "
              "~/servo/start (the feet); their support points span the CoM's polygon. "
              "Read at ~/servo/start."),
    ParamSpec("servo_contact_points", [0.0, 0.0, 0.0], "Whole-body servo: support points "
              "of each contact in its own frame, x y z per point [m] (a sole's corners; "
              "the default: the frame's origin, a point foot)."),
    ParamSpec("servo_com_margin", 0.02, "Whole-body servo: the CoM stays this far inside "
              "the support polygon [m].", _non_negative),
    ParamSpec("servo_base_command_topic", "~/servo/base_command", "Whole-body servo: "
              "geometry_msgs/PoseStamped of the commanded base pose, each tick, in the "
              "base's parent frame (the measured base pose comes on ~/servo/base_pose).",
              read_only=True),
    # --- MoveIt and rviz (moveit_bridge.py, interactive_goal.py) ---------------------
    ParamSpec("moveit_ik_service", "moveit/compute_ik", "Name of the moveit_msgs/"
              "GetPositionIK service (for MoveIt's srv_kinematics_plugin), served when "
              "moveit_msgs is installed. Not 'compute_ik': that is our ComputeIK (and "
              "move_group's own service). Empty: not served.", _ros_name_or_empty,
              read_only=True),
    ParamSpec("interactive_marker", True, "Offer a 6-DoF interactive marker at the tip "
              "(namespace ~/goal_marker) when interactive_markers is installed; dragging "
              "it solves, seeded from the last answer.", read_only=True),
    ParamSpec("interactive_marker_scale", 0.2, "Size of the interactive marker [m].",
              _positive),
    ParamSpec("goal_avoid_collisions", True, "Solve goals from rviz (goal_pose, the "
              "interactive marker) collision-aware, as requests with avoid_collisions: "
              "their answers keep minimum_distance, and an executed one's move there too."),
)

_BY_NAME: Dict[str, ParamSpec] = {spec.name: spec for spec in SCHEMA}


def group_specs(group: str) -> Tuple[ParamSpec, ...]:
    """Return the three parameters that configure group ``group``."""
    prefix = f"groups.{group}."
    return (
        ParamSpec(prefix + "base_link", "", f"Root link of group '{group}'."),
        ParamSpec(prefix + "tip_link", "", f"Tip link of group '{group}' (default target "
                  "frame)."),
        ParamSpec(prefix + "joints", [""], f"Joints of group '{group}' (empty: the chain "
                  "base_link -> tip_link)."),
    )


#: Where MoveIt's kinematics.yaml puts a group's settings.
KINEMATICS_PREFIX = "robot_description_kinematics."
#: The kinematics.yaml keys ros2_ik honours: the solve budget [s] and position-only IK.
KINEMATICS_KEYS = ("kinematics_solver_timeout", "position_only_ik")


def kinematics_parameter(name: str) -> Optional[Tuple[str, str]]:
    """(group, key) of a ``robot_description_kinematics.<group>.<key>`` name ros2_ik reads."""
    return _moveit_parameter(name, KINEMATICS_PREFIX, KINEMATICS_KEYS)


#: Where MoveIt's joint_limits.yaml puts a joint's limits (move_group's parameters).
PLANNING_LIMITS_PREFIX = "robot_description_planning.joint_limits."
#: The joint_limits.yaml keys ros2_ik honours: the position bounds [rad or m], the
#: velocity limit [rad/s or m/s] (applied unless ``has_velocity_limits`` is false) and the
#: acceleration limit [rad/s^2 or m/s^2] (unless ``has_acceleration_limits`` is false).
PLANNING_LIMIT_KEYS = ("min_position", "max_position", "has_velocity_limits", "max_velocity",
                       "has_acceleration_limits", "max_acceleration")


def planning_limit_parameter(name: str) -> Optional[Tuple[str, str]]:
    """(joint, key) of a ``robot_description_planning.joint_limits.<joint>.<key>`` it reads."""
    return _moveit_parameter(name, PLANNING_LIMITS_PREFIX, PLANNING_LIMIT_KEYS)


def _moveit_parameter(name: str, prefix: str, keys: Tuple[str, ...]
                      ) -> Optional[Tuple[str, str]]:
    """``(owner, key)`` of ``<prefix><owner>.<key>`` with ``key`` in ``keys``, else None."""
    if not name.startswith(prefix):
        return None
    owner, _, key = name[len(prefix):].rpartition(".")
    return (owner, key) if owner and key in keys else None


def check_planning_limit(name: str, value: Any) -> Optional[str]:
    """Return why ``value`` cannot be joint_limits.yaml parameter ``name``, or None.

    The core's rule (:func:`~ros2_ik.core.model.joint_limits_yaml.planning_value_problem`).
    """
    return planning_value_problem(planning_limit_parameter(name)[1], value)


def planning_limits(values: Mapping[str, Any]) -> Dict[str, PlanningLimits]:
    """Joint -> :class:`PlanningLimits` of the joint_limits.yaml parameters ``values``.

    ``values``: parameter name -> value, for names :func:`planning_limit_parameter` reads;
    read as the yaml's section (:func:`planning_limits_of`).
    """
    given: Dict[str, Dict[str, Any]] = {}
    for name, value in values.items():
        joint, key = planning_limit_parameter(name)
        given.setdefault(joint, {})[key] = value
    return planning_limits_of(given)


def check_value(name: str, value: Any) -> Optional[str]:
    """Return why setting ``name`` to ``value`` is invalid, or None when it is valid."""
    spec = _BY_NAME.get(name)
    if spec is None or spec.check is None:
        return None
    return spec.check(value)


@dataclass(frozen=True)
class GroupConfig:
    """A configured kinematic group: a chain base->tip, or explicit joints."""

    name: str
    base_link: str
    tip_link: str
    joints: Tuple[str, ...] = ()


@dataclass(frozen=True)
class NodeConfig:
    """A snapshot of every parameter; rebuilt whenever a parameter changes."""

    values: Mapping[str, Any]
    groups: Mapping[str, GroupConfig] = field(default_factory=dict)
    #: MoveIt's kinematics.yaml settings: group -> {key of KINEMATICS_KEYS: value}.
    kinematics: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    #: MoveIt's joint_limits.yaml: joint -> its PlanningLimits (:func:`planning_limits`).
    planning_limits: Mapping[str, PlanningLimits] = field(default_factory=dict)

    def __post_init__(self) -> None:
        """Copy the values into the instance: ``cfg.timeout`` is then a plain attribute.

        (Every request reads about 15 values: a plain attribute is the cheapest read.)
        """
        for name, value in self.values.items():
            if name.isidentifier() and name not in self.__dict__ \
                    and not hasattr(type(self), name):
                self.__dict__[name] = value

    def __getattr__(self, name: str) -> Any:
        try:
            return self.values[name]
        except KeyError as exc:
            raise AttributeError(name) from exc

    @property
    def default_group_name(self) -> str:
        """The group a request without group/base/tip uses ('' when none is configured)."""
        if self.values["default_group"]:
            return self.values["default_group"]
        return next(iter(self.groups), "")


def clean_list(values: Any) -> Tuple[str, ...]:
    """Return a string-array parameter without the empty placeholder entries."""
    return tuple(v for v in (values or ()) if v)
