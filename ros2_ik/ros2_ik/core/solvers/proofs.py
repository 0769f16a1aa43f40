"""Proofs that a problem has no solution, checked by the driver before any attempt.

A proof is a function ``(problem, options) -> reason or None``: a reason (a sentence,
the result's message) only when no configuration within the joint limits meets the
problem within its tolerances; None when it cannot tell.  It runs on every solve, so it
is cheap on the usual problem (its per-group work cached), and it never raises on a
valid problem.  :meth:`Solver.solve <ros2_ik.core.solvers.base.Solver.solve>` answers
NO_SOLUTION with the first reason (:func:`no_solution`) before its first attempt.

A constraint that cannot hold by itself says so (``Constraint.impossible``, e.g. a
CoM margin deeper than the support polygon): :func:`term_proof`.  The other proof
registered here is the reach bound (:mod:`ros2_ik.core.kinematics.reach`): a
pose target, or the point of a position constraint in a box fixed in the world, farther
from the sphere holding every placement of its frame than the tolerance allows.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Callable, List, Optional

import numpy as np

from ros2_ik.core.constraints.position import PositionConstraint
from ros2_ik.core.kinematics.reach import reach_bound

if TYPE_CHECKING:  # pragma: no cover
    from ros2_ik.core.problem import Problem

#: ``(problem, options) -> reason or None``; ``options``: the solve's
#: :class:`~ros2_ik.core.solvers.base.SolveOptions` (its tolerances).
Proof = Callable[["Problem", Any], Optional[str]]

#: Relative and absolute slack [m] of the comparisons: rounding never proves anything.
_SLACK_REL, _SLACK_M = 1e-9, 1e-9


def _beyond(distance: float, reach: float) -> bool:
    """Whether ``distance`` [m] exceeds ``reach`` [m] by more than rounding."""
    return distance > reach + _SLACK_M + _SLACK_REL * (distance + reach)


def reach_proof(problem: "Problem", options: Any) -> Optional[str]:
    """Return why the pose target or a world-fixed position box is out of reach, or None.

    Pose target: the distance [m] from the bound's centre to the set of positions the
    target accepts (its constrained axes; a free axis makes a line or a plane), beyond
    the bound's radius plus ``position_tolerance_m``.  Position constraint (frame A not
    moved by the group): the distance from the centre to its box widened by the
    constraint tolerance, beyond the radius of frame B plus ``|p_BQ|``.
    """
    group = problem.group
    pose = problem.pose
    if pose is not None:
        bound = reach_bound(group, pose.frame_id)
        if bound is not None:
            distance = _to_target(pose, bound.centre)
            reach = bound.radius_m + pose.target.position_tolerance_m
            if _beyond(distance, reach):
                return (f"target {distance:.2f} m from {bound.centre_name}, "
                        f"reach {bound.radius_m:.2f} m (frame '{pose.target.frame}')")
    for c in problem.row_constraints:
        if type(c) is PositionConstraint:
            reason = _position_beyond(group, c, options.constraint_tolerance.m)
            if reason is not None:
                return reason
    return None


def _to_target(pose, centre: tuple) -> float:
    """Distance [m] from ``centre`` (world) to the positions ``pose`` accepts, in its axes.

    Every position axis constrained: the distance to the target's position (a rotation
    keeps lengths), on floats; else in the target's axes, the free ones left out.
    """
    mask = pose.mask
    if pose.full_pose or mask[0] and mask[1] and mask[2]:
        x, y, z = pose.T_world_target.translation.tolist()
        cx, cy, cz = centre
        return math.hypot(cx - x, cy - y, cz - z)  # no OverflowError on a huge target
    d = pose.T_target_world.act(np.array(centre))  # R_t^T (centre - p_t): the error's axes
    d = d[mask[:3]]
    return math.sqrt(d.dot(d))


def _position_beyond(group, c: PositionConstraint, tolerance_m: float) -> Optional[str]:
    """:func:`reach_proof`'s reason for one position constraint, or None."""
    fid_A, fid_B = c._fid_A, c._fid_B
    if group.moves_frame(fid_A):
        return None
    bound = reach_bound(group, fid_B)
    if bound is None:
        return None
    X_WA = group.locked_placement(fid_A)
    if c._X_AbarA is not None:
        X_WA = X_WA * c._X_AbarA
    centre_A = X_WA.actInv(bound.centre_array).tolist()
    lower, upper = c.bound_lists()
    outside = [max(lo - tolerance_m - x, 0.0, x - hi - tolerance_m)
               for x, lo, hi in zip(centre_A, lower, upper)]
    distance = math.sqrt(sum(v * v for v in outside))
    reach = bound.radius_m + math.sqrt(sum(v * v for v in c._p_BQ_list))
    if not _beyond(distance, reach):
        return None
    return (f"{c.name}: box {distance:.2f} m from {bound.centre_name}, reach "
            f"{reach:.2f} m (frame '{group.robot.model.frames[fid_B].name}')")


def term_proof(problem: "Problem", options: Any) -> Optional[str]:
    """Return the first constraint's own proof that it cannot hold (its ``impossible``)."""
    for c in problem.constraints:
        reason = c.impossible()
        if reason is not None:
            return reason
    return None


_PROOFS: List[Proof] = [reach_proof, term_proof]


def register(proof: Proof) -> Proof:
    """Add ``proof`` after the others (once: registering it again changes nothing)."""
    if proof not in _PROOFS:
        _PROOFS.append(proof)
    return proof


def unregister(proof: Proof) -> None:
    """Remove ``proof`` (a proof registered for a while, in a test)."""
    if proof in _PROOFS:
        _PROOFS.remove(proof)


def no_solution(problem: "Problem", options: Any) -> Optional[str]:
    """Return the first registered proof's reason that ``problem`` has no solution, or None."""
    for proof in _PROOFS:
        reason = proof(problem, options)
        if reason is not None:
            return reason
    return None
