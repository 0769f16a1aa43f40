"""Independent check of whole-body IK answers, in metres and radians (issue 47).

Its own code, outside every solver: a second pinocchio model built from the URDF text with
the problem's root joint (``wholebody_problems.root_joint``), forward kinematics of exactly
the configuration returned (full model, (nq,)), and one formula per term written here:

============== ================================================================ ======
frame_pose     ``|p - p_target|`` and ``|log3(R_target^T R)|``                    m, rad
frame_position ``|p - p_target|``                                                 m
com_in_support margin - (signed distance of the CoM's (x, y) inside the convex     m
               hull of the contact points' (x, y), from the answer's own FK;
               negative outside)
limits         every bounded joint inside its limits exactly (the URDF's, narrowed rad/m
               to its soft limits: ``wholebody_problems.urdf_text``)
unit           free-flyer quaternion / planar (cos, sin) / continuous (cos, sin)   -
               norms within ``TOL_UNIT`` of 1
locked         joints not in the problem's ``moving`` at the seed's values        rad/m
               (``TOL_LOCKED``)
============== ================================================================ ======

Tolerances: ``TOL_M`` = 1e-4 m and ``TOL_RAD`` = 1e-3 rad, the core's pose defaults
(``ros2_ik.core.pose``: 1e-4 m, 1e-3 rad).  Costs are reported, not judged: the base's
planar displacement from the seed [m].  The convex-hull helpers are plain geometry, used
also to give Drake and Pink the polygon of the target footholds.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple

import numpy as np
import pinocchio as pin

import wholebody_problems as wb

TOL_M, TOL_RAD = 1e-4, 1e-3
TOL_UNIT = 1e-6
TOL_LOCKED = 1e-6


def convex_hull(points_xy: np.ndarray) -> np.ndarray:
    """Counter-clockwise convex hull (m, 2) of (k, 2) points (Andrew's monotone chain)."""
    pts = sorted(set(map(tuple, np.round(np.asarray(points_xy, float), 12))))
    if len(pts) < 3:
        return np.array(pts, float)

    def half(seq):
        out: List[tuple] = []
        for p in seq:
            while len(out) >= 2 and _cross(out[-2], out[-1], p) <= 0.0:
                out.pop()
            out.append(p)
        return out[:-1]
    return np.array(half(pts) + half(reversed(pts)), float)


def _cross(o, a, b) -> float:
    return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])


def halfplanes(hull: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """(N (m, 2), d (m,)): unit inward normals and offsets, inside <=> N x >= d."""
    edges = np.roll(hull, -1, axis=0) - hull
    normals = np.stack([-edges[:, 1], edges[:, 0]], axis=1)
    normals /= np.linalg.norm(normals, axis=1, keepdims=True)
    return normals, np.einsum("ij,ij->i", normals, hull)


def inside_distance(hull: np.ndarray, p_xy: np.ndarray) -> float:
    """Signed distance [m] of ``p_xy`` inside the convex ``hull`` (negative outside).

    Inside, the distance to the nearest edge; outside, minus the largest edge violation
    (a lower bound of the distance outside, with the right sign).  A hull of fewer than
    three points has no inside: -inf.
    """
    if len(hull) < 3:
        return -math.inf
    normals, offsets = halfplanes(hull)
    return float(np.min(normals @ np.asarray(p_xy, float) - offsets))


@dataclass(frozen=True)
class Verdict:
    """Outcome of :meth:`WholeBodyChecker.check`: ok, reason, violations, costs."""

    ok: bool
    reason: str
    violations: Tuple[Tuple[str, float], ...] = ()
    base_displacement_m: float = math.nan


class WholeBodyChecker:
    """Judge full-model configurations of one robot (its own pinocchio model and data)."""

    def __init__(self, robot: str):
        self.robot = robot
        spec = wb.ROBOTS[robot]
        self.model = pin.buildModelFromXML(wb.urdf_text(robot), wb.root_joint(spec))
        self.data = self.model.createData()
        m = self.model
        # the unit part of each Lie-group joint: a quaternion (free-flyer) or (cos, sin)
        self._units = [(m.idx_qs[j] + m.nqs[j] - (4 if m.nqs[j] == 7 else 2),
                        4 if m.nqs[j] == 7 else 2)
                       for j in range(1, m.njoints) if m.nqs[j] != m.nvs[j]]
        lo, hi = self.model.lowerPositionLimit, self.model.upperPositionLimit
        self._bounded = np.zeros(self.model.nq, bool)
        for j in range(1, self.model.njoints):
            if self.model.nqs[j] == 1 and self.model.nvs[j] == 1:  # revolute / prismatic
                i = self.model.idx_qs[j]
                self._bounded[i] = np.isfinite(lo[i]) and np.isfinite(hi[i])
        self.lower, self.upper = lo, hi

    def frame(self, name: str) -> pin.SE3:
        """``T_world_frame`` after the check's forward kinematics."""
        return self.data.oMf[self.model.getFrameId(name)]

    def within_limits(self, q: np.ndarray) -> bool:
        """Whether every bounded joint of ``q`` (nq,) is inside its limits, exactly."""
        b = self._bounded
        return bool(np.all(q[b] >= self.lower[b]) and np.all(q[b] <= self.upper[b]))

    def locked_slots(self, moving: Sequence[str]) -> np.ndarray:
        """Return the indices of q of the joints not in ``moving``."""
        out = []
        for j in range(1, self.model.njoints):
            if self.model.names[j] not in moving:
                i = self.model.idx_qs[j]
                out += list(range(i, i + self.model.nqs[j]))
        return np.array(out, int)

    def check(self, q: Optional[np.ndarray], problem) -> Verdict:
        """Verify configuration ``q`` (nq,) or None against ``problem``."""
        if q is None:
            return Verdict(False, "none")
        q = np.asarray(q, float).reshape(-1)
        if q.shape != (self.model.nq,) or not np.all(np.isfinite(q)):
            return Verdict(False, "invalid")
        reasons = self._structure(q, problem)
        pin.framesForwardKinematics(self.model, self.data, q)
        violations = self.violations(q, problem)
        reasons += [f"{name} by {value:.3g}" for name, value, tol in violations
                    if not value <= tol]
        return Verdict(not reasons, "; ".join(reasons) or "ok",
                       tuple((name, value) for name, value, _ in violations),
                       self.base_displacement(q, problem))

    def _structure(self, q: np.ndarray, problem) -> List[str]:
        out = []
        for i, n in self._units:
            if abs(float(np.linalg.norm(q[i:i + n])) - 1.0) > TOL_UNIT:
                out.append(f"unit norm of q[{i}:{i + n}]")
        if not self.within_limits(q):
            out.append("limits")
        locked = self.locked_slots(problem.moving)
        if locked.size and np.max(np.abs(q[locked] - problem.seed[locked])) > TOL_LOCKED:
            out.append("locked joints moved")
        return out

    def violations(self, q: np.ndarray, problem) -> List[Tuple[str, float, float]]:
        """(name, violation, tolerance) of every term at ``q`` (after FK) [m] or [rad]."""
        out = []
        for term in problem.constraints:
            a = term.args
            if term.kind == "frame_pose":
                m, rad = self.pose_error(a)
                out += [(f"{a['frame']} position", m, TOL_M),
                        (f"{a['frame']} orientation", rad, TOL_RAD)]
            elif term.kind == "frame_position":
                out.append((f"{a['frame']} position", float(np.linalg.norm(
                    self.frame(a["frame"]).translation - a["p"])), TOL_M))
            elif term.kind == "com_in_support":
                out.append(("CoM in support polygon",
                            max(0.0, a["margin_m"] - self.com_margin(q, a["contacts"])), TOL_M))
            else:
                raise ValueError(f"unknown whole-body term {term.kind!r}")
        return out

    def pose_error(self, a) -> Tuple[float, float]:
        """(position error [m], orientation error [rad]) of a ``frame_pose`` term."""
        T, target = self.frame(a["frame"]), pin.SE3(np.asarray(a["T"], float))
        return (float(np.linalg.norm(T.translation - target.translation)),
                float(np.linalg.norm(pin.log3(target.rotation.T @ T.rotation))))

    def com_margin(self, q: np.ndarray, contacts) -> float:
        """Signed distance [m] of the CoM inside the support polygon at ``q`` (FK done)."""
        pts = np.vstack([wb.contact_points_world(self.model, self.data, c) for c in contacts])
        com = pin.centerOfMass(self.model, self.data, q)
        return inside_distance(convex_hull(pts[:, :2]), com[:2])

    def base_displacement(self, q: np.ndarray, problem) -> float:
        """Planar distance [m] between the base at ``q`` and at the seed."""
        return float(np.linalg.norm(q[:2] - problem.seed[:2]))
