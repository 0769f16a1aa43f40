"""MoveIt's ``joint_limits.yaml``: read as MoveIt's launch helpers read it, and applied.

The file's ``joint_limits`` mapping (joint -> its keys), with the ``!degrees`` and
``!radians`` tags MoveIt's configs use for angles (:func:`read_section`); what the keys
mean and which apply (:func:`planning_limits_of`, :class:`PlanningLimits`); a model's
limits replaced by them as MoveIt's RobotModelLoader does (:func:`apply_planning_limits`,
which :meth:`~ros2_ik.core.model.robot.Robot.from_urdf` calls).
"""
from __future__ import annotations

import logging
import math
from typing import Any, Dict, Mapping, NamedTuple, Optional, Sequence, Tuple

import numpy as np
import pinocchio as pin

from ros2_ik.core import errors

_LOG = logging.getLogger(__name__)


def read_section(text: str, source: str) -> Dict[str, Dict[str, Any]]:
    """Return the ``joint_limits`` mapping of joint_limits.yaml ``text``.

    Raises :class:`errors.InvalidArgument` starting with ``source`` (the file as the user
    named it) for text that is no YAML or has no ``joint_limits`` mapping.
    """
    import yaml

    class Loader(yaml.SafeLoader):
        pass
    Loader.add_constructor("!degrees", lambda loader, node: math.radians(
        float(loader.construct_scalar(node))))
    Loader.add_constructor("!radians", lambda loader, node: float(
        loader.construct_scalar(node)))
    try:
        data = yaml.load(text, Loader=Loader)
    except (yaml.YAMLError, ValueError) as exc:
        raise errors.InvalidArgument(f"{source} is not YAML: {exc}") from None
    section = data.get("joint_limits") if isinstance(data, dict) else None
    if not isinstance(section, dict):
        raise errors.InvalidArgument(f"{source} has no 'joint_limits' mapping")
    return section


class PlanningLimits(NamedTuple):
    """A joint's limits in MoveIt's ``joint_limits.yaml``; None keeps the URDF's."""

    min_position: Optional[float] = None  # [rad or m]
    max_position: Optional[float] = None  # [rad or m]
    max_velocity: Optional[float] = None  # [rad/s or m/s]
    max_acceleration: Optional[float] = None  # [rad/s^2 or m/s^2]


def planning_limits_of(joint_limits: Mapping[str, Mapping[str, Any]]
                       ) -> Dict[str, PlanningLimits]:
    """Joint -> :class:`PlanningLimits` of the ``joint_limits`` section of joint_limits.yaml.

    Per joint: ``min_position``, ``max_position`` [rad or m], ``max_velocity`` [rad/s
    or m/s] unless ``has_velocity_limits`` is false (today's MoveIt reads it only when
    true, earlier releases without it) and ``max_acceleration`` [rad/s^2 or m/s^2] unless
    ``has_acceleration_limits`` is false (unset, a limit written down is kept: it times
    what is sent to a physical arm); the other keys (jerks, decelerations) are MoveIt's.
    Raises :class:`errors.RobotModelError` naming the joint and key for an entry that is
    not a mapping or a ``has_*_limits`` flag that is not true or false (the numbers are
    checked where they apply, :meth:`~ros2_ik.core.model.robot.Robot.from_urdf`).
    """
    out = {}
    for joint, keys in joint_limits.items():
        if not isinstance(keys, Mapping):
            raise errors.RobotModelError(
                f"joint_limits: joint '{joint}': expected its keys (min_position, ...), "
                f"got {keys!r}")
        velocity, acceleration = (_flagged(joint, keys, kind)
                                  for kind in ("velocity", "acceleration"))
        out[joint] = PlanningLimits(keys.get("min_position"), keys.get("max_position"),
                                    velocity, acceleration)
    return out


def _flagged(joint: str, keys: Mapping[str, Any], kind: str) -> Any:
    """Joint's ``max_<kind>`` unless its ``has_<kind>_limits`` is false (unset: true)."""
    flag = keys.get(f"has_{kind}_limits")
    flag = True if flag is None else flag  # unset (or null)
    problem = planning_value_problem(f"has_{kind}_limits", flag)
    if problem:
        raise errors.RobotModelError(
            f"joint_limits: joint '{joint}': has_{kind}_limits {problem}")
    return keys.get(f"max_{kind}") if flag else None


#: The unit of each number a joint's joint_limits.yaml entry gives.
PLANNING_UNITS = {"min_position": "[rad or m]", "max_position": "[rad or m]",
                  "max_velocity": "[rad/s or m/s]", "max_acceleration": "[rad/s^2 or m/s^2]"}


def planning_value_problem(key: str, value: Any) -> Optional[str]:
    """Why ``value`` cannot be a joint's joint_limits.yaml ``key``, or None (None: unset).

    ``has_velocity_limits`` and ``has_acceleration_limits`` are true or false; the numbers
    of :data:`PLANNING_UNITS` are finite.  A velocity or acceleration not above 0 is
    refused where it applies (:meth:`~ros2_ik.core.model.robot.Robot.from_urdf`).
    The one rule: the node checks its parameters with it, the core the values it applies.
    """
    if value is None:
        return None
    if key in ("has_velocity_limits", "has_acceleration_limits"):
        return None if isinstance(value, bool) else f"must be true or false, got {value!r}"
    try:
        finite = not isinstance(value, bool) \
            and isinstance(value, (int, float, np.floating)) and math.isfinite(value)
    except OverflowError:  # an int beyond every float
        finite = False
    return None if finite else f"must be a finite number {PLANNING_UNITS[key]}, got {value!r}"


def apply_planning_limits(model: pin.Model, limits: Mapping[str, Sequence],
                          hard: Tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """Replace the limits of the joints ``limits`` names, as MoveIt's joint_limits.yaml does.

    MoveIt's RobotModelLoader replaces each bound ``robot_description_planning.joint_limits
    .<joint>.min_position`` / ``max_position`` / ``max_velocity`` gives, after the URDF's
    (and its soft limits), narrower or wider; its planners and IK keep inside the result.
    Here the same on ``model``'s limits: the positions bound every search, check and proof
    of the groups (``hard``, where the joints can be,
    :meth:`~ros2_ik.core.model.robot.Robot.joint_limits`, widens to hold a wider range),
    the velocities time what the node sends and the servo.  A
    continuous joint has no positions to bound and a name that is no one-axis joint of the
    model bounds nothing: both are skipped with a warning, as MoveIt skips them.  Returns
    the acceleration limits (nv,) [rad/s^2 or m/s^2] (inf where none is given: a
    pinocchio model holds none), which time what the node sends too.  Raises
    :class:`errors.RobotModelError` naming the joint for a value that is not a finite
    number, a velocity or acceleration not above 0, or positions that leave no value.
    """
    lower, upper = model.lowerPositionLimit.copy(), model.upperPositionLimit.copy()
    velocity = model.velocityLimit.copy()
    acceleration = np.full(model.nv, np.inf)
    for name, given in limits.items():
        try:
            given = PlanningLimits(*given)
        except TypeError:  # not a sequence of up to four values
            raise errors.RobotModelError(
                f"joint_limits: joint '{name}': expected (min_position, max_position"
                f"[, max_velocity[, max_acceleration]]), got {given!r}") from None
        j = model.getJointId(name) if isinstance(name, str) \
            and model.existJointName(name) else 0
        if not 0 < j < model.njoints or model.nvs[j] != 1:
            _LOG.warning("joint_limits: '%s' is not a one-axis joint of the model: its "
                         "limits are skipped", name)
            continue
        if given.max_velocity is not None:
            velocity[model.idx_vs[j]] = _positive_limit(name, "max_velocity",
                                                        given.max_velocity)
        if given.max_acceleration is not None:
            acceleration[model.idx_vs[j]] = _positive_limit(name, "max_acceleration",
                                                            given.max_acceleration)
        if given.min_position is None and given.max_position is None:
            continue
        if model.nqs[j] != 1:
            _LOG.warning("joint_limits: '%s' is a continuous joint: its position limits are "
                         "skipped", name)
            continue
        iq = model.idx_qs[j]
        lo = _planning_value(name, "min_position", given.min_position, lower[iq])
        hi = _planning_value(name, "max_position", given.max_position, upper[iq])
        if not lo <= hi:
            raise errors.RobotModelError(
                f"joint_limits: joint '{name}': min_position {lo} > max_position {hi}")
        lower[iq], upper[iq] = lo, hi
        hard[0][iq], hard[1][iq] = min(hard[0][iq], lo), max(hard[1][iq], hi)
    model.lowerPositionLimit, model.upperPositionLimit = lower, upper
    model.velocityLimit = velocity
    if hasattr(model, "lowerVelocityLimit"):  # pinocchio 4: the URDF's magnitude both ways
        model.lowerVelocityLimit = velocity
    return acceleration


def _positive_limit(name: str, key: str, value) -> float:
    """Return joint ``name``'s planning limit ``key`` (a rate above 0), or raise naming both."""
    v = _planning_value(name, key, value, None)
    if not v > 0:
        raise errors.RobotModelError(f"joint_limits: joint '{name}': {key} must be > 0, got {v}")
    return v


def _planning_value(name: str, key: str, value, default: Optional[float]) -> float:
    """Return joint ``name``'s planning limit ``value`` (``default`` when None).

    Raises :class:`errors.RobotModelError` naming the joint and key for a value
    :func:`planning_value_problem` refuses.
    """
    if value is None:
        return float(default)
    problem = planning_value_problem(key, value)
    if problem:
        raise errors.RobotModelError(f"joint_limits: joint '{name}': {key} {problem}")
    return float(value)
