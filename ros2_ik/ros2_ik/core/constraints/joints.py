"""Extra joint bounds (inside the URDF limits) and locked joints, on 1-DoF joints.

The row of a joint is its position: ``q`` for revolute [rad] and prismatic [m]
joints; ``atan2(sin, cos)`` in ``(-pi, pi]`` [rad] for continuous (unbounded
revolute) joints, whose pinocchio configuration is ``(cos, sin)``.  Bounds of a
continuous joint must lie in ``[-pi, pi]`` (an interval across the +-pi seam cannot
be expressed as one row).  Multi-DoF joints (free-flyer, spherical, planar) are
rejected.
"""
from __future__ import annotations

import math
from typing import List, Mapping, Optional, Tuple

import numpy as np
import pinocchio as pin

from ..errors import InvalidGoal, InvalidJoint
from . import _checks as check
from ._base import BoundedConstraint


def _joint(model: pin.Model, name: str):
    if not isinstance(name, str) or not model.existJointName(name) or name == "universe":
        raise InvalidJoint(str(name), [n for n in model.names[1:]])
    joint = model.joints[model.getJointId(name)]
    if joint.nv != 1 or joint.nq not in (1, 2):
        raise InvalidGoal(
            f"joint '{name}' has {joint.nv} degrees of freedom; joint bounds apply to "
            f"1-DoF joints only (revolute, continuous, prismatic)")
    return joint


def _check_bounds(model: pin.Model, name: str, joint, lower, upper) -> Tuple[float, float]:
    lower = check.scalar(lower, f"lower bound of joint '{name}'")
    upper = check.scalar(upper, f"upper bound of joint '{name}'")
    check.ordered(lower, upper, f"lower bound of joint '{name}'", f"upper bound of '{name}'")
    if joint.nq == 2:
        if lower < -math.pi or upper > math.pi:
            raise InvalidGoal(f"bounds of continuous joint '{name}' must lie in [-pi, pi], "
                              f"got [{lower}, {upper}]")
        return lower, upper
    urdf_lower = model.lowerPositionLimit[joint.idx_q]
    urdf_upper = model.upperPositionLimit[joint.idx_q]
    if upper < urdf_lower or lower > urdf_upper:
        raise InvalidGoal(f"bounds [{lower}, {upper}] of joint '{name}' lie outside its "
                          f"URDF limits [{urdf_lower}, {urdf_upper}]: never satisfiable")
    return lower, upper


class JointBoundsConstraint(BoundedConstraint):
    """``lower_i <= position of joint i <= upper_i``, one row per named joint (in given order).

    ``bounds`` maps joint names to ``(lower, upper)`` in [rad] or [m].  Bounds wider
    than the URDF limits are allowed (the limits still apply); disjoint ones raise.
    """

    def __init__(self, model: pin.Model, bounds: Mapping[str, Tuple[float, float]],
                 *, name: Optional[str] = None):
        if not isinstance(bounds, Mapping) or not bounds:
            raise InvalidGoal("bounds must be a non-empty mapping joint name -> (lower, upper)")
        self.joint_names: Tuple[str, ...] = tuple(bounds)
        self._idx_q: List[int] = []
        self._idx_v: List[int] = []
        self._continuous: List[bool] = []
        self._units: List[str] = []
        lowers, uppers = [], []
        for joint_name, pair in bounds.items():
            joint = _joint(model, joint_name)
            try:
                lower, upper = pair
            except (TypeError, ValueError):
                raise InvalidGoal(f"bounds of joint '{joint_name}' must be a pair "
                                  f"(lower, upper), got {pair!r}") from None
            lower, upper = _check_bounds(model, joint_name, joint, lower, upper)
            lowers.append(lower)
            uppers.append(upper)
            self._idx_q.append(joint.idx_q)
            self._idx_v.append(joint.idx_v)
            self._continuous.append(joint.nq == 2)
            self._units.append("m" if "P" in joint.shortname().replace("JointModel", "")
                               else "rad")
        selector = np.zeros((len(lowers), model.nv))
        selector[np.arange(len(lowers)), self._idx_v] = 1.0
        self._selector = check.read_only(selector)
        default = f"joint_bounds({','.join(self.joint_names)})"
        super().__init__(check.term_name(name, default), lowers, uppers)

    @property
    def units(self) -> Tuple[str, ...]:
        """Per row: [rad] for revolute and continuous joints, [m] for prismatic ones."""
        return tuple(self._units)

    def joint_positions(self, q: np.ndarray) -> np.ndarray:
        """Joint positions (m,) [rad or m] of the named joints in configuration ``q``."""
        values = np.empty(len(self._idx_q))
        for row, (i, continuous) in enumerate(zip(self._idx_q, self._continuous)):
            values[row] = math.atan2(q[i + 1], q[i]) if continuous else q[i]
        return values

    def evaluate(
        self, model: pin.Model, data: pin.Data, q: np.ndarray
    ) -> Tuple[np.ndarray, np.ndarray]:
        """Joint positions (m,) and the Jacobian ``(m, nv)`` (one 1 per row)."""
        return self.joint_positions(q), self._selector.copy()


class LockedJointConstraint(JointBoundsConstraint):
    """``position of joint i == value_i``: joint bounds with equal lower and upper bounds.

    ``positions`` maps joint names to values in [rad] or [m].  Prefer locking joints in
    the kinematic group (they then leave the problem); this is for a solver-side lock.
    Do not lock a continuous joint at +-pi: its row jumps across the atan2 seam there.
    """

    def __init__(self, model: pin.Model, positions: Mapping[str, float],
                 *, name: Optional[str] = None):
        if not isinstance(positions, Mapping) or not positions:
            raise InvalidGoal("positions must be a non-empty mapping joint name -> value")
        bounds = {joint: (value, value) for joint, value in positions.items()}
        default = f"locked({','.join(positions)})"
        super().__init__(model, bounds, name=check.term_name(name, default))
