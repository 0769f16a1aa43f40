"""Independent verification of a returned configuration.

A ``pin.Data`` of the *full* model that no solver is handed (one per thread:
:func:`verify_pose`'s, or the caller's), forward kinematics of exactly the values
returned, the pose tolerances, every constraint and the joint limits.  Solvers'
own bookkeeping is not trusted.
"""
from __future__ import annotations

import math
from typing import Iterable, List, NamedTuple, Optional, Sequence, Tuple, Union

import numpy as np
import pinocchio as pin

from ros2_ik.core import terms
from ros2_ik.core.kinematics.frames import Placements
from ros2_ik.core.model.group import Group
from ros2_ik.core.model.joint_values import outside_limits
from ros2_ik.core.pose import CompiledPose, PoseTarget
from ros2_ik.core.runtime.thread_data import PerThreadData

#: Default tolerances on constraint violations: [m] for positions, distances and
#: polyhedra; [rad] for orientation, gaze and angle bounds.
CONSTRAINT_TOLERANCE_M = 1e-4
CONSTRAINT_TOLERANCE_RAD = 1e-4

#: :func:`verify_pose`'s ``Data`` per thread and model (no solver's).
_VERIFY_DATA = PerThreadData()


class ConstraintTolerance(NamedTuple):
    """How far outside its bounds a constraint may end: ``m`` [m] and ``rad`` [rad]."""

    m: float = CONSTRAINT_TOLERANCE_M
    rad: float = CONSTRAINT_TOLERANCE_RAD

    def of(self, unit: str) -> float:
        """Return the tolerance of ``unit`` ("m" or "rad")."""
        return self.rad if unit == "rad" else self.m


class Violation(NamedTuple):
    """A constraint that does not hold: its name, by how much, in ``unit`` ("m" or "rad")."""

    name: str
    amount: float
    unit: str

    def __str__(self) -> str:
        return f"{self.name} by {self.amount:.3g} {self.unit}"


DEFAULT_TOLERANCE = ConstraintTolerance()


def verify_pose(group: Group, target: Optional[Union[PoseTarget, CompiledPose]],
                q: np.ndarray, constraints: Iterable[terms.Constraint] = (),
                tolerance: ConstraintTolerance = DEFAULT_TOLERANCE,
                ) -> Tuple[bool, float, float, str]:
    """Check group vector ``q``: returns (ok, position_error_m, orientation_error_rad, reason).

    ``reason`` is '' when ok, else says what failed.  ``target`` None checks only
    limits and constraints; there is no pose error then, reported as nan.  Every
    constraint is measured in [m] or [rad] (``Constraint.measure``) against ``tolerance``.
    """
    pose = target.compile(group) if isinstance(target, PoseTarget) else target
    data = _VERIFY_DATA(group.robot.model)
    return check(group, pose, np.asarray(q, dtype=float), tuple(constraints),
                 data, tolerance)[:4]


def check(group: Group, pose: Optional[CompiledPose], q: np.ndarray,
          constraints: Sequence[terms.Constraint], data: pin.Data,
          tol: ConstraintTolerance, values: Optional[list] = None
          ) -> Tuple[bool, float, float, str, List[Violation]]:
    """:func:`verify_pose` on a caller-owned ``data``; also returns the violations.

    ``values``: ``q`` as a list of Python floats when the caller has it (else made here).
    """
    model = group.robot.model
    q_full = group.to_full_q(q)
    if values is None:
        values = q.tolist() if type(q) is np.ndarray else np.asarray(q, dtype=float).tolist()
    if constraints:
        placements = update_for_measures(model, data, q_full, constraints)
        placement = data.oMf[pose.frame_id] if pose is not None else None
        violations = constraint_violations(placements, constraints, tol)
    else:
        pin.forwardKinematics(model, data, q_full)
        placement = pin.updateFramePlacement(model, data, pose.frame_id) \
            if pose is not None else None
        violations = []
    pos = ori = math.nan
    pose_ok = True
    if pose is not None:
        pos, ori = pose.errors(placement)
        pose_ok = pose.within_tolerance(pos, ori)
    limits_ok = group.within_limits_values(values)
    if pose_ok and limits_ok and not violations:
        return True, pos, ori, "", violations
    return _rejected(group, q, pos, ori, pose_ok, limits_ok, violations)


def _rejected(group: Group, q: np.ndarray, pos: float, ori: float, pose_ok: bool,
              limits_ok: bool, violations: List[Violation]
              ) -> Tuple[bool, float, float, str, List[Violation]]:
    """:func:`check`'s answer for a rejected ``q``: the reason names what failed."""
    reasons = []
    if not pose_ok:
        reasons.append(f"pose error {pos:.3g} m / {ori:.3g} rad above tolerance")
    if not limits_ok:
        names = outside_limits(group.joint_names, q, group.lower, group.upper)
        reasons.append(f"outside joint limits: {names}")
    if violations:
        reasons.append("violated: " + ", ".join(str(v) for v in violations))
    return False, pos, ori, "; ".join(reasons), violations


def update_for_measures(model: pin.Model, data: pin.Data, q_full: np.ndarray,
                        constraints: Sequence[terms.Constraint]) -> Placements:
    """One forward kinematics of ``q_full`` (nq,) shared by every constraint's measure.

    The frame placements ``data.oMf`` alone (:meth:`Constraint.measure_rows`'
    precondition) when every constraint measures without a Jacobian; the joint Jacobians
    too when one measures through :meth:`Constraint.evaluate`
    (:attr:`~ros2_ik.core.terms.Constraint.measured_through_evaluate`).  Returns the
    placements the measures read.
    """
    for c in constraints:
        if c.measured_through_evaluate:
            pin.computeJointJacobians(model, data, q_full)
            pin.updateFramePlacements(model, data)
            break
    else:
        pin.framesForwardKinematics(model, data, q_full)
    return Placements.of(model, data, q_full)


def constraint_violations(placements: Placements, constraints: Sequence[terms.Constraint],
                          tol: ConstraintTolerance) -> List[Violation]:
    """Each constraint some row of which lies outside its bounds by more than its tolerance.

    A row's violation is :meth:`~ros2_ik.core.terms.Constraint.measure_rows`', in its unit
    ([m] or [rad]), at ``placements`` (:func:`update_for_measures` run); the reported
    amount is that of the row farthest out (relative to its unit's tolerance).
    """
    out = []
    smallest = min(tol)  # of [m] and [rad]
    for c in constraints:
        values = c.measure_rows(placements)
        if sum(values) <= smallest:  # rows >= 0: each is within; NaN or inf: not
            continue
        units = c.units
        over = [k for k, (v, u) in enumerate(zip(values, units))
                if not v <= tol.of(u)]  # NaN counts as violated
        if over:
            k = max(over, key=lambda i: math.inf if math.isnan(values[i])
                    else values[i] / tol.of(units[i]))
            amount = values[k] if not math.isnan(values[k]) else math.inf
            out.append(Violation(c.name, float(amount), units[k]))
    return out
