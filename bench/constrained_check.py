"""Independent check of constrained-IK answers, in physical units (issue 10).

Its own code: a second pinocchio model built from the URDF text, forward kinematics of
exactly the values returned, and one formula per constraint kind written here from its
definition (not from ros2_ik's residuals, ``verify`` or ``violation``):

========== =================================================================== ======
position   distance of p_AQ outside the box, per axis                          m
orientation angle of R_AB, as ``|log3(R_AB)|`` and as ``arccos((tr - 1) / 2)``  rad
           clipped (the larger of the two is used; both are reported)
rot. box   each component of R_AB beyond its tolerance, as MoveIt's decide      rad
           reads it (``moveit_orientation``, written from MoveIt's source)
gaze       angle between p = p_AT - p_AS and n, ``atan2(|p x n|, p . n)``      rad
           (0 when p = 0: the apex belongs to the cone)
angle      ``atan2(|a x b|, a . b)`` outside [angle_lower, angle_upper]          rad
distances  |P1 - P2| or the distance of P to the line, outside the bounds      m
polyhedron ``max(A p - b)``, rows of A with unit norm -> m                      m
joints     bound or lock violation of the joint position (continuous: atan2)   rad/m
min dist.  min_distance_m - (signed distance by coal, ros2_ik CollisionChecker)  m
upper b.   nearest checked pair (pinocchio's brute-force pass) - bound_m         m
distance   a named pair's coal distance outside [distance_lower, distance_upper] m
========== =================================================================== ======

An answer is verified when it is finite, inside the joint limits exactly, and every
violation is <= ``TOL_M`` (metre kinds) or ``TOL_RAD`` (radian kinds).  Costs are
re-evaluated here too (posture with the wrapped joint difference, position cost), so
both our answers and Drake's are scored by the same code.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Dict, List, Sequence, Tuple

import numpy as np
import pinocchio as pin

import constrained_distances as distances
import moveit_orientation

TOL_M, TOL_RAD = 1e-4, 1e-4
RADIAN_KINDS = ("orientation", "gaze", "angle", "rotation_box")


@dataclass(frozen=True)
class Verdict:
    """Outcome of :meth:`Checker.check`: ok, the reason, the violations, the objective."""

    ok: bool
    reason: str
    violations: Tuple[Tuple[str, float], ...]
    objective: float
    log3_vs_arccos_rad: float = 0.0


def _outside(value: float, lower: float, upper: float) -> float:
    return max(lower - value, value - upper, 0.0)


def _angle(a: np.ndarray, b: np.ndarray) -> float:
    return math.atan2(float(np.linalg.norm(np.cross(a, b))), float(a @ b))


class Checker:
    """Judge group vectors of one arm's group (its own model, data and joint map)."""

    def __init__(self, urdf_xml: str, joint_names: Sequence[str], locked: Dict[str, float],
                 lower: np.ndarray, upper: np.ndarray, collision=None):
        self.model = pin.buildModelFromXML(urdf_xml)
        self.data = self.model.createData()
        self.joint_names = tuple(joint_names)
        self.lower, self.upper = np.asarray(lower, float), np.asarray(upper, float)
        self.collision = collision  # (checker, full-q function) or None
        self._slots = [self._slot(n) for n in self.joint_names]
        self._base_q = pin.neutral(self.model)
        for name, value in locked.items():
            self._write(self._base_q, self._slot(name), value)

    def _slot(self, name: str) -> Tuple[int, bool]:
        jid = self.model.getJointId(name)
        return self.model.idx_qs[jid], self.model.nqs[jid] == 2

    @staticmethod
    def _write(q: np.ndarray, slot: Tuple[int, bool], value: float) -> None:
        iq, continuous = slot
        if continuous:
            q[iq], q[iq + 1] = math.cos(value), math.sin(value)
        else:
            q[iq] = value

    def full_q(self, q: np.ndarray) -> np.ndarray:
        """Group vector (n,) -> this model's configuration (nq,)."""
        out = self._base_q.copy()
        for slot, value in zip(self._slots, q):
            self._write(out, slot, float(value))
        return out

    def frame(self, name: str) -> pin.SE3:
        """``T_world_frame`` after :meth:`check`'s forward kinematics."""
        return self.data.oMf[self.model.getFrameId(name, pin.BODY)]

    def joint_position(self, q_full: np.ndarray, name: str) -> float:
        """Position of joint ``name`` [rad or m] (continuous: atan2 in (-pi, pi])."""
        iq, continuous = self._slot(name)
        return math.atan2(q_full[iq + 1], q_full[iq]) if continuous else float(q_full[iq])

    def _joint_outside(self, q_full: np.ndarray, name: str, lower: float, upper: float
                       ) -> float:
        """How far joint ``name`` lies outside ``[lower, upper]`` [rad or m].

        A continuous joint's angle is a point of the circle: the least distance over its
        2 pi equivalents (a window such as ``[2.67, 3.27]`` holds ``atan2 = -3.1``).
        """
        value = self.joint_position(q_full, name)
        if not self._slot(name)[1]:
            return _outside(value, lower, upper)
        turns = math.floor((0.5 * (lower + upper) - value) / (2 * math.pi))
        return min(_outside(value + 2 * math.pi * k, lower, upper)
                   for k in range(turns - 1, turns + 3))

    def check(self, q, spec) -> Verdict:
        """Verify group vector ``q`` (or None) against the problem ``spec``."""
        if q is None:
            return Verdict(False, "none", (), math.nan)
        q = np.asarray(q, dtype=float).reshape(-1)
        if q.shape != self.lower.shape or not np.all(np.isfinite(q)):
            return Verdict(False, "invalid", (), math.nan)
        q_full = self.full_q(q)
        pin.framesForwardKinematics(self.model, self.data, q_full)
        violations, gap = [], 0.0
        for term in spec.constraints:
            amount, extra = self.violation(term, q, q_full)
            gap = max(gap, extra)
            violations.append((term.kind, amount))
        reasons = [f"{k} by {v:.3g}" for k, v in violations
                   if not v <= (TOL_RAD if k in RADIAN_KINDS else TOL_M)]
        if np.any(q < self.lower) or np.any(q > self.upper):
            reasons.insert(0, "limits")
        objective = sum(self.cost(term, q) for term in spec.costs)
        return Verdict(not reasons, "; ".join(reasons) or "ok", tuple(violations),
                       objective, gap)

    def violation(self, term, q, q_full) -> Tuple[float, float]:
        """(violation of one constraint [m or rad], |log3 - arccos| [rad] for orientation)."""
        a = term.args
        kind = term.kind
        if kind == "pose":
            return self._pose(a), 0.0
        if kind == "position":
            p = self.frame(a["frame_A"]).actInv(self.frame(a["frame_B"]).act(
                np.asarray(a["p_BQ"], float)))
            return max(_outside(v, lo, hi) for v, lo, hi in
                       zip(p, a["p_AQ_lower"], a["p_AQ_upper"])), 0.0
        if kind == "orientation":
            R = (self.frame(a["frame_Abar"]).rotation @ a["R_AbarA"]).T \
                @ self.frame(a["frame_Bbar"]).rotation @ a["R_BbarB"]
            by_log = float(np.linalg.norm(pin.log3(R)))
            by_cos = math.acos(min(1.0, max(-1.0, (float(np.trace(R)) - 1.0) / 2.0)))
            return max(0.0, max(by_log, by_cos) - a["theta_bound"]), abs(by_log - by_cos)
        if kind == "rotation_box":
            R = (self.frame(a["frame_Abar"]).rotation @ a["R_AbarA"]).T \
                @ self.frame(a["frame_Bbar"]).rotation @ a["R_BbarB"]
            code = (moveit_orientation.XYZ_EULER_ANGLES if a["parameterization"] == "xyz_euler"
                    else moveit_orientation.ROTATION_VECTOR)
            return moveit_orientation.excess(R, a["tolerances"], code), 0.0
        return self._other(kind, a, q, q_full), 0.0

    def _pose(self, a) -> float:
        """Return a ``pose`` term's max(position error [m], orientation error [rad]).

        The position error in the target frame's axes (the free one left out), as a
        Euclidean norm; the orientation error as the angle of ``R_target^T R``.
        """
        T_target = pin.SE3(np.asarray(a["T"], dtype=float))
        T = self.frame(a["frame"])
        e = T_target.rotation.T @ (T.translation - T_target.translation)
        if a["free_axis"] >= 0:
            e[a["free_axis"]] = 0.0
        position = float(np.linalg.norm(e))
        if a["position_only"]:
            return position
        return max(position, float(np.linalg.norm(pin.log3(T_target.rotation.T @ T.rotation))))

    def _other(self, kind: str, a, q, q_full) -> float:
        if kind == "gaze":
            X_WA = self.frame(a["frame_A"])
            p = X_WA.actInv(self.frame(a["frame_B"]).act(np.asarray(a["p_BT"], float))) \
                - np.asarray(a["p_AS"], float)
            if not np.linalg.norm(p) > 0.0:
                return 0.0
            n = np.asarray(a["n_A"], float) / np.linalg.norm(a["n_A"])
            return max(0.0, _angle(p, n) - a["cone_half_angle"])
        if kind == "angle":
            va = self.frame(a["frame_A"]).rotation @ _unit(a["a_A"])
            vb = self.frame(a["frame_B"]).rotation @ _unit(a["b_B"])
            return _outside(_angle(va, vb), a["angle_lower"], a["angle_upper"])
        if kind in ("point_to_point", "point_to_line"):
            return _outside(self._distance(kind, a), a["distance_lower"], a["distance_upper"])
        if kind == "polyhedron":
            X_WF, X_WG = self.frame(a["frame_F"]), self.frame(a["frame_G"])
            P = np.asarray(a["p_GP"], float)
            p = np.concatenate([X_WF.actInv(X_WG.act(P[:, i])) for i in range(P.shape[1])])
            A = np.asarray(a["A"], float)
            A_unit = A / np.linalg.norm(A, axis=1, keepdims=True)
            b_unit = np.asarray(a["b"], float) / np.linalg.norm(A, axis=1)
            return max(0.0, float(np.max(A_unit @ p - b_unit)))
        if kind == "joint_bounds":
            return max(self._joint_outside(q_full, n, lo, hi)
                       for n, (lo, hi) in a["bounds"].items())
        if kind == "locked":
            return max(self._joint_outside(q_full, n, v, v) for n, v in a["positions"].items())
        if kind == "min_distance":
            checker, to_full = self.collision
            return max(0.0, a["min_distance_m"] - checker.min_distance(to_full(q)).distance_m)
        if kind in ("min_distance_upper", "distance"):
            return distances.violation(kind, a, self.collision, q)
        raise ValueError(f"unknown constraint kind {kind!r}")

    def _distance(self, kind: str, a) -> float:
        if kind == "point_to_point":
            p1 = self.frame(a["frame1"]).act(np.asarray(a["p_B1P1"], float))
            p2 = self.frame(a["frame2"]).act(np.asarray(a["p_B2P2"], float))
            return float(np.linalg.norm(p1 - p2))
        X_WL = self.frame(a["frame_line"])
        u = X_WL.actInv(self.frame(a["frame_point"]).act(np.asarray(a["p_B1P"], float))) \
            - np.asarray(a["p_B2Q"], float)
        n = _unit(a["n_B2"])
        return float(np.linalg.norm(u - (u @ n) * n))

    def cost(self, term, q) -> float:
        """Value of a cost term at ``q`` (forward kinematics already done)."""
        a = term.args
        if term.kind == "posture":
            dq = np.asarray(q, float) - np.asarray(a["q_nominal"], float)
            wrap = np.array([c for _, c in self._slots])
            dq[wrap] = (dq[wrap] + math.pi) % (2 * math.pi) - math.pi
            return 0.5 * float(np.sum(np.asarray(a["weights"], float) * dq * dq))
        if term.kind == "position_cost":
            p_AQ = self.frame(a["frame_A"]).actInv(
                self.frame(a["frame_B"]).act(np.asarray(a["p_BQ"], float)))
            e = np.asarray(a["p_AP"], float) - p_AQ
            return float(e @ np.asarray(a["C"], float) @ e)
        raise ValueError(f"unknown cost kind {term.kind!r}")


def _unit(v) -> np.ndarray:
    v = np.asarray(v, dtype=float)
    return v / np.linalg.norm(v)


def checker_for(group, urdf_xml: str, collision=None) -> Checker:
    """Return a :class:`Checker` for ``group`` (reads its joint names, locks and limits)."""
    return Checker(urdf_xml, group.joint_names, group.locked, group.lower, group.upper,
                   collision)


def summarise(verdicts: List[Verdict]) -> Dict[str, int]:
    """Count of reasons (``ok`` or the first failing part)."""
    out: Dict[str, int] = {}
    for v in verdicts:
        key = v.reason.split(" by ")[0].split(";")[0]
        out[key] = out.get(key, 0) + 1
    return out


__all__ = ["Checker", "Verdict", "checker_for", "summarise", "TOL_M", "TOL_RAD"]
