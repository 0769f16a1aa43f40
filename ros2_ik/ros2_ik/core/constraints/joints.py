"""Extra joint bounds (inside the URDF limits) and locked joints, on 1-DoF joints.

The row of a joint is its position: ``q`` for revolute [rad] and prismatic [m]
joints.  A continuous (unbounded revolute) joint, whose pinocchio configuration is
``(cos, sin)``, has an angle only up to 2 pi: its bounds are a window on the circle, a
centre ``c = (lower + upper) / 2`` and a half-width, and its row is the angle taken
within pi of the centre, ``c + wrap(atan2(sin, cos) - c)`` in ``(c - pi, c + pi]``
[rad].  Any finite window works, across the +-pi seam too (``[2.67, 3.27]``): the row
jumps only at ``c + pi``, the point of the circle farthest from the window, and a window
2 pi wide or wider holds every angle.  Multi-DoF joints (free-flyer, spherical, planar)
are rejected.
"""
from __future__ import annotations

import math
from typing import List, Mapping, NamedTuple, Optional, Tuple

import numpy as np
import pinocchio as pin

from ..errors import InvalidGoal, InvalidJoint
from . import checks as check
from ros2_ik.core.kinematics.model import model_joint_axis
from ros2_ik.core.runtime.per_object import PerObject
from ._base import BoundedConstraint

TWO_PI = 2.0 * math.pi


class _Joint(NamedTuple):
    """What a joint bound needs of a 1-DoF joint, read from the model once."""

    idx_q: int
    idx_v: int
    continuous: bool
    unit: str
    urdf_lower: float
    urdf_upper: float


#: Per model: {joint name: _Joint, or the InvalidGoal of a multi-DoF joint}.
_JOINTS: PerObject = PerObject()


def joint_table(model: pin.Model) -> dict:
    """``{joint name: what a bound needs of it, or the InvalidGoal of a multi-DoF joint}``.

    Read from ``model`` once (every joint: ~10-25 us each, ~0.25-0.6 ms on an arm or a
    humanoid), at the first joint bound or lock on it, or by
    :func:`ros2_ik.core.solve.prepare` with ``constrained`` (start-up, not a request).
    """
    table = _JOINTS.get(model)
    if table is None:
        table = _JOINTS[model] = {model.names[j]: _read_joint(model, j)
                                  for j in range(1, model.njoints)}
    return table


def _joint(model: pin.Model, name: str) -> _Joint:
    """Return the 1-DoF joint ``name`` (InvalidJoint lists valid names; InvalidGoal: not 1-DoF)."""
    joint = joint_table(model).get(name) if isinstance(name, str) else None
    if joint is None:
        raise InvalidJoint(str(name), [n for n in model.names[1:]])
    if isinstance(joint, InvalidGoal):
        raise joint
    return joint


def _read_joint(model: pin.Model, j: int):
    joint, name = model.joints[j], model.names[j]
    if joint.nv != 1 or joint.nq not in (1, 2):
        return InvalidGoal(
            f"joint '{name}' has {joint.nv} degrees of freedom; joint bounds apply to "
            f"1-DoF joints only (revolute, continuous, prismatic)")
    axis = model_joint_axis(model, j)
    unit = "m" if axis is not None and axis[0] else "rad"  # a helical joint turns: rad
    return _Joint(joint.idx_q, joint.idx_v, joint.nq == 2, unit,
                  float(model.lowerPositionLimit[joint.idx_q]),
                  float(model.upperPositionLimit[joint.idx_q]))


def _check_bounds(name: str, joint: _Joint, lower, upper) -> Tuple[float, float]:
    lower = check.scalar(lower, f"lower bound of joint '{name}'")
    upper = check.scalar(upper, f"upper bound of joint '{name}'")
    check.ordered(lower, upper, f"lower bound of joint '{name}'", f"upper bound of '{name}'")
    if joint.continuous:  # a window on the circle: any finite one (module docstring)
        return lower, upper
    if upper < joint.urdf_lower or lower > joint.urdf_upper:
        raise InvalidGoal(f"bounds [{lower}, {upper}] of joint '{name}' lie outside its "
                          f"URDF limits [{joint.urdf_lower}, {joint.urdf_upper}]: never "
                          f"satisfiable")
    return lower, upper


def window_angle(angle: float, centre: float) -> float:
    """``angle`` [rad] shifted by a multiple of 2 pi into ``(centre - pi, centre + pi]``."""
    d = math.remainder(angle - centre, TWO_PI)  # in [-pi, pi]
    return centre + (d if d > -math.pi else math.pi)


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
        self._nv = model.nv
        self._joints: List[_Joint] = []
        lowers, uppers = [], []
        for joint_name, pair in bounds.items():
            joint = _joint(model, joint_name)
            try:
                lower, upper = pair
            except (TypeError, ValueError):
                raise InvalidGoal(f"bounds of joint '{joint_name}' must be a pair "
                                  f"(lower, upper), got {pair!r}") from None
            lower, upper = _check_bounds(joint_name, joint, lower, upper)
            lowers.append(lower)
            uppers.append(upper)
            self._joints.append(joint)
        #: Per row, the centre of the window [rad or m] (continuous joints' rows use it).
        self._centres = [0.5 * (lo + hi) for lo, hi in zip(lowers, uppers)]
        self._selector: Optional[np.ndarray] = None  # made when evaluate first needs it
        default = f"joint_bounds({','.join(self.joint_names)})"
        super().__init__(check.term_name(name, default), lowers, uppers)

    @property
    def units(self) -> Tuple[str, ...]:
        """Per row: [rad] for revolute and continuous joints, [m] for prismatic ones."""
        return tuple(j.unit for j in self._joints)

    def joint_positions(self, q: np.ndarray) -> np.ndarray:
        """Joint positions (m,) [rad or m] of the named joints in configuration ``q``.

        A continuous joint's angle within pi of its window's centre (module docstring).
        """
        return np.array([window_angle(math.atan2(q[j.idx_q + 1], q[j.idx_q]), c)
                         if j.continuous else q[j.idx_q]
                         for j, c in zip(self._joints, self._centres)], dtype=float)

    def value(self, model: pin.Model, data: pin.Data, q: np.ndarray) -> np.ndarray:
        """Joint positions (m,) [rad or m]: :meth:`evaluate`'s rows without the Jacobian."""
        return self.joint_positions(q)

    def evaluate(
        self, model: pin.Model, data: pin.Data, q: np.ndarray
    ) -> Tuple[np.ndarray, np.ndarray]:
        """Joint positions (m,) and the Jacobian ``(m, nv)`` (one 1 per row)."""
        if self._selector is None:
            selector = np.zeros((len(self._joints), self._nv))
            selector[np.arange(len(self._joints)), [j.idx_v for j in self._joints]] = 1.0
            self._selector = check.read_only(selector)
        return self.joint_positions(q), self._selector.copy()


class LockedJointConstraint(JointBoundsConstraint):
    """``position of joint i == value_i``: joint bounds with equal lower and upper bounds.

    ``positions`` maps joint names to values in [rad] or [m].  Prefer locking joints in
    the kinematic group (they then leave the problem); this is for a solver-side lock.
    A continuous joint may be locked at any angle, +-pi included (its row is measured
    within pi of the value).
    """

    def __init__(self, model: pin.Model, positions: Mapping[str, float],
                 *, name: Optional[str] = None):
        if not isinstance(positions, Mapping) or not positions:
            raise InvalidGoal("positions must be a non-empty mapping joint name -> value")
        bounds = {joint: (value, value) for joint, value in positions.items()}
        default = f"locked({','.join(positions)})"
        super().__init__(model, bounds, name=check.term_name(name, default))
