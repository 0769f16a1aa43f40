"""Independent verification of a returned configuration.

A fresh ``pin.Data`` on the *full* model, forward kinematics of exactly the values
returned, the pose tolerances, every constraint and the joint limits.  Solvers'
own bookkeeping is not trusted.
"""
from __future__ import annotations

import math
from typing import Iterable, List, Optional, Sequence, Tuple, Union

import numpy as np
import pinocchio as pin

from ros2_ik.core import terms
from ros2_ik.core.group import Group
from ros2_ik.core.pose import CompiledPose, PoseTarget

#: Default tolerance on constraint violations, in the constraint's own unit.
CONSTRAINT_TOLERANCE = 1e-4


def verify_pose(group: Group, target: Optional[Union[PoseTarget, CompiledPose]],
                q: np.ndarray, constraints: Iterable[terms.Constraint] = (),
                constraint_tolerance: float = CONSTRAINT_TOLERANCE,
                ) -> Tuple[bool, float, float, str]:
    """Check group vector ``q``: returns (ok, position_error_m, orientation_error_rad, reason).

    ``reason`` is '' when ok, else says what failed.  ``target`` None checks only
    limits and constraints; there is no pose error then, reported as nan.
    """
    pose = target.compile(group) if isinstance(target, PoseTarget) else target
    data = group.robot.model.createData()
    return check(group, pose, np.asarray(q, dtype=float), tuple(constraints),
                 data, constraint_tolerance)[:4]


def check(group: Group, pose: Optional[CompiledPose], q: np.ndarray,
          constraints: Sequence[terms.Constraint], data: pin.Data,
          tol: float) -> Tuple[bool, float, float, str, List[Tuple[str, float]]]:
    """:func:`verify_pose` on a caller-owned ``data``; also returns the violations."""
    model = group.robot.model
    q_full = group.to_full_q(q)
    if constraints:
        pin.computeJointJacobians(model, data, q_full)
        pin.updateFramePlacements(model, data)
    else:
        pin.forwardKinematics(model, data, q_full)
        if pose is not None:
            pin.updateFramePlacement(model, data, pose.frame_id)
    pos, ori, reasons = math.nan, math.nan, []
    if pose is not None:
        pos, ori = pose.errors(data.oMf[pose.frame_id])
        if not pose.within_tolerance(pos, ori):
            reasons.append(f"pose error {pos:.3g} m / {ori:.3g} rad above tolerance")
    if not group.within_limits(q):
        names = [n for n, v, lo, hi in zip(group.joint_names, q, group.lower, group.upper)
                 if not lo <= v <= hi]
        reasons.append(f"outside joint limits: {names}")
    violations = constraint_violations(model, data, q_full, constraints, tol) \
        if constraints else []
    if violations:
        reasons.append("violated: " + ", ".join(f"{n} by {v:.3g}" for n, v in violations))
    return not reasons, pos, ori, "; ".join(reasons), violations


def constraint_violations(model: pin.Model, data: pin.Data, q_full: np.ndarray,
                          constraints: Sequence[terms.Constraint],
                          tol: float) -> List[Tuple[str, float]]:
    """(name, largest violation) of each constraint violated by more than ``tol``."""
    out = []
    for c in constraints:
        if c.holds(model, data, q_full):  # cheap when clear (no Jacobian, fewer pairs)
            continue
        amount = float(np.max(c.violation(c.value(model, data, q_full)), initial=0.0))
        if not amount <= tol:
            out.append((c.name, amount))
    return out
