"""Proofs that a problem has no solution, checked by the driver before any attempt.

A proof is a function ``(problem, options, deadline) -> reason or None``: a reason (a
sentence, the result's message) only when no configuration within the joint limits meets
the problem within its tolerances; None when it cannot tell.  It runs on every solve, so
it is cheap on the usual problem (its per-group work cached), and it never raises on a
valid problem.  Work it caches for later solves (a bound between two frames, ~0.3-1.5 ms
each on a humanoid) it does before ``deadline`` (``time.perf_counter()``) only: a proof
is never needed, the solve's budget is kept, and a later solve builds the rest.
:meth:`Solver.solve <ros2_ik.core.solvers.base.Solver.solve>` answers NO_SOLUTION with
the first reason (:func:`no_solution`) after its first attempt fails.

A constraint that cannot hold by itself says so (``Constraint.impossible``, e.g. a
CoM margin deeper than the support polygon): :func:`term_proof`.  A joint bound on a
joint the group does not move, missed where the group holds it: :func:`held_joint_proof`.
A clearance that no configuration of the group keeps (two links its joints never move
apart, overlapping; the hand at its target inside the table): :func:`clearance_proof`.
The other proof registered here is the reach bound (:mod:`ros2_ik.core.kinematics.reach`):
a pose target, or the point of a position constraint in a box fixed in the world, farther
from the sphere holding every placement of its frame than the tolerance allows; on a
whole-body group with ``base_bounds``, a pose target farther from the box its base keeps
to than the frame reaches from the base.

:func:`held_proof` compares the terms that hold a frame's point in a set fixed in the
world (a contact, a pose target, a position box, a point on a plane): two such sets
farther apart than the bound on the distance between their frames (the two feet held 3 m
apart, a hand target beyond reach of the held feet), and a CoM box or ball farther from a
held frame than the CoM can be from it.  :func:`relative_proof`: a position box in a
moving frame farther from it than its point's frame can be (two hands held 3 m apart).
"""
from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING, Any, Callable, List, Optional

import numpy as np
import pinocchio as pin

from ros2_ik.core.constraints.collision import MinimumDistanceConstraint
from ros2_ik.core.constraints.com import CenterOfMassConstraint, \
    CenterOfMassDistanceConstraint
from ros2_ik.core.constraints.contact import FramePlacementConstraint, \
    PointOnPlaneConstraint
from ros2_ik.core.constraints.joints import JointBoundsConstraint
from ros2_ik.core.constraints.position import PositionConstraint
from ros2_ik.core.kinematics.reach import base_distance_bound, distance_bound, \
    distance_bound_built, frame_distance_bound, reach_bound
from ros2_ik.core.runtime.per_object import PerObject

if TYPE_CHECKING:  # pragma: no cover
    from ros2_ik.core.problem import Problem

#: ``(problem, options, deadline) -> reason or None``; ``options``: the solve's
#: :class:`~ros2_ik.core.solvers.options.SolveOptions` (its tolerances); ``deadline``: the
#: ``time.perf_counter()`` after which it builds no new bound.
Proof = Callable[["Problem", Any, float], Optional[str]]

#: Relative and absolute slack [m] of the comparisons: rounding never proves anything.
_SLACK_REL, _SLACK_M = 1e-9, 1e-9


def _m(length: float) -> str:
    """Return ``length`` [m] for a message: 2 decimals, or 3 digits when huge (1e+300)."""
    return f"{length:.2f}" if abs(length) < 1e6 else f"{length:.3g}"


def _beyond(distance: float, reach: float) -> bool:
    """Whether ``distance`` [m] exceeds ``reach`` [m] by more than rounding."""
    return distance > reach + _SLACK_M + _SLACK_REL * (distance + reach)


def _box_distance(x, lower, upper, widen: float) -> float:
    """Distance [m] from point ``x`` to the box ``lower <= p <= upper`` widened by ``widen``.

    ``x`` and the box in one frame, on floats; 0 inside.
    """
    return math.hypot(*(max(lo - widen - v, 0.0, v - hi - widen)
                        for v, lo, hi in zip(x, lower, upper)))


def reach_proof(problem: "Problem", options: Any, deadline: float = math.inf
                ) -> Optional[str]:
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
                return (f"target {_m(distance)} m from {bound.centre_name}, "
                        f"reach {_m(bound.radius_m)} m (frame '{pose.target.frame}')")
        elif group.has_base:
            reason = _beyond_base_bounds(group, pose)
            if reason is not None:
                return reason
    for c in problem.row_constraints:
        if type(c) is PositionConstraint:
            reason = _position_beyond(group, c, options.constraint_tolerance.m)
            if reason is not None:
                return reason
    return None


def _beyond_base_bounds(group, pose) -> Optional[str]:
    """Why a whole-body pose target lies beyond its frame's reach from every base allowed.

    The base joint's origin stays in its position bounds (``base_bounds``: a box in the
    joint's parent frame; a planar base's at height 0 there) and the frame within
    :func:`reach.base_distance_bound` of it: a target farther from that box than the bound
    plus the tolerance has no solution.  None when the base is unbounded (a farther
    target is reached by moving it), the bound is unknown or a position axis is free.
    """
    reach_m = base_distance_bound(group, pose.frame_id)
    if reach_m is None or not (pose.mask[0] and pose.mask[1] and pose.mask[2]):
        return None
    lower, upper = list(group.bounds.position_lower), list(group.bounds.position_upper)
    if group.base_kind == "planar":
        lower[2] = upper[2] = 0.0
    p = group.robot.model.jointPlacements[1].actInv(pose.T_world_target.translation)
    distance = _box_distance(p.tolist(), lower, upper, 0.0)
    if not _beyond(distance, reach_m + pose.target.position_tolerance_m):
        return None
    return (f"target {_m(distance)} m from the positions base_bounds allow the base, reach "
            f"{_m(reach_m)} m from the base (frame '{pose.target.frame}')")


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
    distance = _box_distance(centre_A, *c.bound_lists(), tolerance_m)
    reach = bound.radius_m + math.sqrt(sum(v * v for v in c._p_BQ_list))
    if not _beyond(distance, reach):
        return None
    return (f"{c.name}: box {_m(distance)} m from {bound.centre_name}, reach "
            f"{_m(reach)} m (frame '{group.robot.model.frames[fid_B].name}')")


def clearance_proof(problem: "Problem", options: Any, deadline: float = math.inf
                    ) -> Optional[str]:
    """Return why a clearance cannot hold: a pair no group joint moves apart, too close.

    :meth:`MinimumDistanceConstraint.apart_wherever` of each clearance constraint, then
    :meth:`~MinimumDistanceConstraint.apart_at_target` and each contact's
    :meth:`~MinimumDistanceConstraint.apart_placed`: what the group carries with the pose
    target's or a contact's frame, placed there, too close to what it does not move.
    """
    tolerance = options.constraint_tolerance
    for c in problem.constraints:
        if isinstance(c, MinimumDistanceConstraint):
            reason = c.apart_wherever(problem.group, tolerance.m) \
                or c.apart_at_target(problem.group, problem.pose, tolerance.m) \
                or _apart_at_contacts(c, problem, tolerance)
            if reason is not None:
                return reason
    return None


def _apart_at_contacts(c: MinimumDistanceConstraint, problem: "Problem", tolerance
                       ) -> Optional[str]:
    """:meth:`~MinimumDistanceConstraint.apart_placed` of each contact's frame, or None.

    A contact (:class:`FramePlacementConstraint`) holds its frame within its own position
    and angle tolerances plus the solve's constraint tolerances (its measure).
    """
    for k in problem.constraints:
        if type(k) is FramePlacementConstraint:
            tp, ta = k._tols
            frame = problem.group.robot.model.frames[k._fid].name
            reason = c.apart_placed(problem.group, k._fid, k.T_world_target,
                                    tp + tolerance.m, ta + tolerance.rad, tolerance.m,
                                    f"frame '{frame}' at {k.name}")
            if reason is not None:
                return reason
    return None


def term_proof(problem: "Problem", options: Any, deadline: float = math.inf
               ) -> Optional[str]:
    """Return the first constraint's own proof that it cannot hold (its ``impossible``)."""
    for c in problem.constraints:
        reason = c.impossible()
        if reason is not None:
            return reason
    return None


def held_joint_proof(problem: "Problem", options: Any, deadline: float = math.inf
                     ) -> Optional[str]:
    """Return why a bound on a joint the group holds fails, or None.

    A joint of the model that is not one of the group's (a finger beside an arm) stays
    where the group holds it in every configuration: a joint bound or lock on it that
    its held value misses by more than the constraint tolerance ([m] or [rad], the
    joint's unit) holds nowhere.
    """
    group, held = problem.group, None
    for c in problem.constraints:
        if not isinstance(c, JointBoundsConstraint):
            continue
        rows = [k for k, name in enumerate(c.joint_names) if name in group.locked]
        if not rows:
            continue
        if held is None:  # any configuration: the held joints are the same in all
            held = group.to_full_q(group.mid_configuration())
        values = c.joint_positions(held)
        excess, (lower, upper) = c.violation(values), c.bound_lists()
        for k in rows:
            unit = c.units[k]
            if excess[k] > options.constraint_tolerance.of(unit):
                return (f"{c.name}: joint '{c.joint_names[k]}' is held at {values[k]:.6g} "
                        f"{unit}, outside [{lower[k]:.6g}, {upper[k]:.6g}]; it is not a "
                        f"joint of the group")
    return None


#: The constraint types that hold a point in a set fixed in the world (:class:`_Held`).
_HOLDING = (FramePlacementConstraint, PositionConstraint, CenterOfMassConstraint,
            CenterOfMassDistanceConstraint, PointOnPlaneConstraint)
_SQRT3 = math.sqrt(3.0)
_WORLD = pin.SE3.Identity()


class _Held:
    """The points a problem holds in sets fixed in the world, tolerances included.

    Per point, in parallel lists: ``terms`` (the term's name), ``frames`` (the model frame
    carrying it; -1: the CoM), ``offsets`` [m] (its distance from that frame's origin);
    its set lies in the ball ``centres`` (world [m]) of radius ``radii`` [m]; an unbounded
    set (radius inf) is the box ``boxes``: ``(X_WA, lower, upper)``, ``lower <= X_WA^-1 p
    <= upper`` [m] in frame A (else None).  Plain lists: it is made on every solve.
    """

    def __init__(self, problem: "Problem", tolerance_m: float) -> None:
        """Collect the pose target and the constraints fixed in the world of ``problem``.

        A constraint whose frame A the group moves holds nothing fixed: left out.
        """
        self.terms, self.frames, self.offsets = [], [], []
        self.centres, self.radii, self.boxes = [], [], []
        group, pose = problem.group, problem.pose
        if pose is not None:
            tol, T = pose.target.position_tolerance_m, pose.T_world_target
            if pose.full_pose or all(pose.mask[:3]):
                self._ball("pose target", pose.frame_id, 0.0, T.translation.tolist(), tol)
            else:
                box = [tol if m else math.inf for m in pose.mask[:3].tolist()]
                self._box("pose target", pose.frame_id, 0.0, T, [-v for v in box], box, 0.0)
        for c in problem.constraints:
            kind = type(c)
            if kind is FramePlacementConstraint:
                self._ball(c.name, c._fid, 0.0, c._p.tolist(),
                           _SQRT3 * (c._tols[0] + tolerance_m))
            elif kind is PositionConstraint or kind is CenterOfMassConstraint:
                X_WA = _fixed_frame(group, c._fid_A, getattr(c, "_X_AbarA", None))
                if X_WA is False:
                    continue
                lower, upper = c.bound_lists()
                if kind is CenterOfMassConstraint:
                    self._box(c.name, -1, 0.0, X_WA, lower, upper, tolerance_m)
                else:
                    self._box(c.name, c._fid_B, math.hypot(*c._p_BQ_list), X_WA, lower,
                              upper, tolerance_m)
            elif kind is PointOnPlaneConstraint:
                (lo, _), (hi, _) = c.bound_lists()
                self._box(c.name, c._fid, float(np.linalg.norm(c._p_FP)), _plane_frame(c),
                          [-math.inf, -math.inf, lo], [math.inf, math.inf, hi], tolerance_m)
            elif kind is CenterOfMassDistanceConstraint:
                r = c.bound_lists()[1][0] + tolerance_m
                X_WA = _fixed_frame(group, c._fid_A, None)
                if X_WA is not False and math.isfinite(r):
                    p = np.asarray(c._p_A, dtype=float)
                    self._ball(c.name, -1, 0.0, p if X_WA is None else X_WA.act(p), r)

    def _ball(self, term: str, frame: int, offset: float, centre, radius: float) -> None:
        self.terms.append(term)
        self.frames.append(frame)
        self.offsets.append(offset)
        self.centres.append(centre)
        self.radii.append(radius)
        self.boxes.append(None)

    def _box(self, term: str, frame: int, offset: float, X_WA, lower: list, upper: list,
             widen: float) -> None:
        """Add a box in A (``X_WA``, None: the world), each side widened by ``widen`` [m]."""
        (lx, ly, lz), (ux, uy, uz) = lower, upper
        radius = 0.5 * math.hypot(ux - lx, uy - ly, uz - lz) + _SQRT3 * widen
        if not radius < math.inf:
            lower, upper = [v - widen for v in lower], [v + widen for v in upper]
            self._ball(term, frame, offset, (0.0, 0.0, 0.0), math.inf)
            self.boxes[-1] = (_WORLD if X_WA is None else X_WA, lower, upper)
            return
        mid = [0.5 * (lx + ux), 0.5 * (ly + uy), 0.5 * (lz + uz)]
        self._ball(term, frame, offset, mid if X_WA is None else X_WA.act(np.array(mid)),
                   radius)

    def apart(self, i: int, j: int) -> float:
        """Return a lower bound [m] on the distance between sets ``i`` and ``j`` (<= 0: none).

        Both bounded: between their balls.  One unbounded: from the other's ball to its
        box.  Both unbounded: none.
        """
        box_i, box_j = self.boxes[i], self.boxes[j]
        if box_i is None and box_j is None:
            return math.dist(self.centres[i], self.centres[j]) - self.radii[i] - self.radii[j]
        if box_i is not None and box_j is not None:
            return 0.0
        ball, (X_WA, lower, upper) = (i, box_j) if box_i is None else (j, box_i)
        x = X_WA.actInv(np.asarray(self.centres[ball], dtype=float)).tolist()
        return _box_distance(x, lower, upper, 0.0) - self.radii[ball]


def held_proof(problem: "Problem", options: Any, deadline: float = math.inf
               ) -> Optional[str]:
    """Return why two held points, or a held point and the CoM, cannot be where held.

    Two points held in sets fixed in the world (:class:`_Held`) farther apart than the
    bound on their frames' distance (:func:`~ros2_ik.core.kinematics.reach.
    frame_distance_bound`, plus the points' offsets); a CoM box (or ball) farther from a
    held point than the bound on the CoM's distance to its frame
    (:func:`~ros2_ik.core.kinematics.reach.com_distance_bound`).  None otherwise.
    The bounds not built by ``deadline`` are left out (module docstring).
    """
    holding = sum(1 for c in problem.constraints if type(c) in _HOLDING)
    if holding + (problem.pose is not None) < 2:
        return None
    held = _Held(problem, options.constraint_tolerance.m)
    offsets = held.offsets
    for i, j, bound in _pair_bounds(problem.group, tuple(held.frames), deadline):
        apart, reach = held.apart(i, j), bound + offsets[i] + offsets[j]
        if _beyond(apart, reach):
            return _reason(problem.group, held, i, j, apart, reach)
    return None


def relative_proof(problem: "Problem", options: Any, deadline: float = math.inf
                   ) -> Optional[str]:
    """Return why a position box in a moving frame A cannot hold its point, or None.

    Point Q (fixed in B at ``p_BQ``) in a box of frame A, A fixed to model frame F that the
    group moves (two hands on one box): ``|p_Q - p_F|`` is at most the bound on the
    distance between F and B plus ``|p_BQ|``, and at least the distance from F's origin
    (in A) to the box widened by the constraint tolerance.
    """
    for c in problem.constraints:
        if type(c) is not PositionConstraint or not problem.group.moves_frame(c._fid_A):
            continue
        if not _may_build(problem.group, c._fid_A, c._fid_B, deadline):
            continue
        pair = frame_distance_bound(problem.group, c._fid_A, c._fid_B)
        if pair is None:
            continue
        tol = options.constraint_tolerance.m
        o = [0.0] * 3 if c._X_AbarA is None else c._X_AbarA.actInv(np.zeros(3)).tolist()
        distance = _box_distance(o, *c.bound_lists(), tol)
        reach = pair.radius_m + math.hypot(*c._p_BQ_list)
        if _beyond(distance, reach):
            frames = problem.group.robot.model.frames
            return (f"{c.name}: box {_m(distance)} m from frame "
                    f"'{frames[c._fid_A].name}', reach {_m(reach)} m to frame "
                    f"'{frames[c._fid_B].name}'")
    return None


def _plane_frame(c: PointOnPlaneConstraint) -> pin.SE3:
    """Return a frame on ``c``'s plane: origin its point, z its (unit) normal."""
    n = np.asarray(c._n, dtype=float)
    x = np.cross(n, [1.0, 0.0, 0.0] if abs(n[0]) < 0.9 else [0.0, 1.0, 0.0])
    x /= np.linalg.norm(x)
    return pin.SE3(np.column_stack((x, np.cross(n, x), n)), np.asarray(c._o, dtype=float))


def _fixed_frame(group, fid_A: int, X_AbarA):
    """``X_WA`` of a constraint's frame A (None: the world), or False when the group moves it."""
    if fid_A == 0 and X_AbarA is None:
        return None
    if group.moves_frame(fid_A):
        return False
    X_WA = group.locked_placement(fid_A)
    return X_WA if X_AbarA is None else X_WA * X_AbarA


def _pair_bounds(group, frames: tuple, deadline: float) -> list:
    """``(i, j, bound [m])`` for each pair of ``frames`` (-1: the CoM) that has a bound.

    Without the pairs whose bound is not built by ``deadline`` (:func:`_may_build`); the
    list is kept per group and frames once it is whole.
    """
    whole = _PAIR_BOUNDS.get(group)
    if whole is not None and frames in whole:
        return whole[frames]
    out, left_out = [], False
    for j, fb in enumerate(frames):
        for i, fa in enumerate(frames[:j]):
            if fa < 0 and fb < 0:
                continue
            if not _may_build(group, fa, fb, deadline):
                left_out = True
                continue
            bound = distance_bound(group, fa, fb)
            if bound is not None:
                out.append((i, j, bound))
    if not left_out:
        if whole is None:
            whole = _PAIR_BOUNDS[group] = {}
        whole[frames] = out
    return out


def _may_build(group, frame_a: int, frame_b: int, deadline: float) -> bool:
    """Whether the bound between two frames (-1: the CoM) is built, or may be now."""
    return time.perf_counter() < deadline or distance_bound_built(group, frame_a, frame_b)


#: Per group, per tuple of held frames: :func:`_pair_bounds`' whole list.
_PAIR_BOUNDS: PerObject = PerObject()


def _reason(group, held: _Held, i: int, j: int, apart: float, reach: float) -> str:
    """:func:`held_proof`'s sentence: the terms, their distance and the reach [m]."""
    frames, names = held.frames, group.robot.model.frames
    if frames[i] < 0 or frames[j] < 0:
        com, point = (i, j) if frames[i] < 0 else (j, i)
        return (f"{held.terms[com]} and {held.terms[point]}: {_m(apart)} m apart, the CoM "
                f"is at most {_m(reach)} m from frame '{names[frames[point]].name}'")
    return (f"{held.terms[i]} and {held.terms[j]}: targets {_m(apart)} m apart, reach "
            f"{_m(reach)} m between frames '{names[frames[i]].name}' and "
            f"'{names[frames[j]].name}'")


_PROOFS: List[Proof] = [reach_proof, term_proof, held_joint_proof, clearance_proof, held_proof,
                        relative_proof]


def register(proof: Proof) -> Proof:
    """Add ``proof`` after the others (once: registering it again changes nothing)."""
    if proof not in _PROOFS:
        _PROOFS.append(proof)
    return proof


def unregister(proof: Proof) -> None:
    """Remove ``proof`` (a proof registered for a while, in a test)."""
    if proof in _PROOFS:
        _PROOFS.remove(proof)


def no_solution(problem: "Problem", options: Any, deadline: float = math.inf
                ) -> Optional[str]:
    """Return the first registered proof's reason that ``problem`` has no solution, or None.

    ``deadline``: ``time.perf_counter()`` after which no proof builds a new bound.
    """
    for proof in _PROOFS:
        reason = proof(problem, options, deadline)
        if reason is not None:
            return reason
    return None
