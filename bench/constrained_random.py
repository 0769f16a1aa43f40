"""Arbitrary constrained-IK problems for the property test and ``make fuzz`` (issue 10).

Each problem: one of several arms, a uniform configuration ``q_star``, one to four
constraints of random kinds (every kind of ros2_ik: position, orientation, gaze, angle,
point-to-point, point-to-line, polyhedron, joint bounds, locked joints, MoveIt's rotation
box; minimum distance on the panda with the scene when a collision checker is given, and
then the upper bound on the nearest pair and one named pair's distance:
:mod:`constrained_distances`), on random links of the group (its moving links and its
base), and sometimes costs.  Bounds are drawn three ways: around ``q_star`` with random
slack (feasible), arbitrary (often infeasible), or degenerate (theta_bound 0, cone
half-angle pi/2 or 0, distance 0, equal angle bounds, zero-width boxes, rotation
components held at 0 or bounded at pi/2).  Every input is valid for the constructors, so
``solve`` must never raise on it (except ``InvalidArgument`` for costs on a solver that
documents it does not minimise them: ``lm`` and ``dls``).  Polyhedron rows have unit norm
(the convention under which ``A p - b`` is in metres).
"""
from __future__ import annotations

import math
from typing import List

import numpy as np
import pinocchio as pin

import constrained_distances as distances
from constrained_problems import Kinematics, ProblemSpec, Term, moving_links, tilt, unit
from moveit_orientation import rotation_inside
from ros2_ik.core.constraints.rotation_box import PARAMETERIZATIONS, bounded_components

KINDS = ("position", "orientation", "gaze", "angle", "point_to_point", "point_to_line",
         "polyhedron", "joint_bounds", "locked", "rotation_box")


MODES = ("feasible", "feasible", "arbitrary", "degenerate")


def _point(rng) -> np.ndarray:
    return rng.normal(scale=0.05, size=3) if rng.random() < 0.7 else np.zeros(3)


def turned(param: str, tol, rng) -> np.ndarray:
    """Return a rotation whose components (``param``) lie inside the box ``tol`` [rad].

    Each within 0.9 of its tolerance (:func:`moveit_orientation.rotation_inside`).
    """
    factors = [rng.uniform(-0.9, 0.9) for _ in tol]
    return rotation_inside(tol, factors, param == "rotation_vector")


def _slack(rng, mode: str, scale: float) -> float:
    if mode == "degenerate":
        return 0.0
    return float(rng.choice([0.0, 1e-3, 1e-2, 0.1])) * scale / 0.1 * rng.random()


class RandomProblems:
    """Generator of arbitrary problems on one group (deterministic from an rng)."""

    def __init__(self, arm: str, group, with_min_distance: bool = False, collision=None,
                 modes=MODES):
        """``collision``: (checker, to_full_q) to draw the two other distance kinds as well.

        ``modes``: the ways bounds are drawn, chosen uniformly (repeats weigh more).
        """
        self.arm, self.group, self.modes = arm, group, tuple(modes)
        self.kin = Kinematics(group)
        self.links = moving_links(group) + [group.base]
        self.with_min_distance = with_min_distance
        self.collision = collision

    def problem(self, rng: np.random.Generator, index: int) -> ProblemSpec:
        """Draw one arbitrary problem, as the module docstring describes."""
        q = self.group.random_configuration(rng)
        constraints = self.problem_terms(rng, q, int(rng.integers(1, 5)))
        if self.with_min_distance and rng.random() < 0.3:
            constraints.append(Term("min_distance", dict(
                min_distance_m=float(rng.choice([0.0, 0.005, 0.02])),
                influence_distance_m=0.05)))
        if self.collision is not None and rng.random() < 0.3:
            constraints.append(distances.draw(rng, self.collision, q,
                                              str(rng.choice(self.modes))))
        costs = self.costs(rng, q) if rng.random() < 0.2 else ()
        seed = self.group.mid_configuration() if rng.random() < 0.5 \
            else self.group.random_configuration(rng)
        return ProblemSpec("random", self.arm, index, q, seed, tuple(constraints), costs)

    def problem_terms(self, rng: np.random.Generator, q: np.ndarray, count: int) -> List[Term]:
        """``count`` constraints of random kinds, each with bounds drawn in a random mode."""
        kinds = rng.choice(KINDS, size=count)
        return [getattr(self, "_" + kind)(rng, q, str(rng.choice(self.modes)))
                for kind in kinds]

    def _frames(self, rng, q):
        A, B = (str(x) for x in rng.choice(self.links, size=2))
        return A, B, self.kin.relative(q, A, B)

    def _position(self, rng, q, mode):
        A, B, T = self._frames(rng, q)
        p_BQ = _point(rng)
        p = T.act(p_BQ) if mode != "arbitrary" else rng.normal(scale=0.5, size=3)
        half = np.array([_slack(rng, mode, 0.02) for _ in range(3)])
        free = rng.random(3) < 0.2
        return Term("position", dict(frame_A=A, frame_B=B, p_BQ=p_BQ,
                                     p_AQ_lower=np.where(free, -np.inf, p - half),
                                     p_AQ_upper=np.where(free, np.inf, p + half)))

    def _orientation(self, rng, q, mode):
        A, B, T = self._frames(rng, q)
        R_BbarB = pin.exp3(rng.normal(size=3))
        R_AbarA = T.rotation @ R_BbarB if mode != "arbitrary" else pin.exp3(rng.normal(size=3))
        theta = {"feasible": rng.uniform(0.0, 0.3), "arbitrary": rng.uniform(0.0, math.pi),
                 "degenerate": float(rng.choice([0.0, math.pi]))}[mode]
        return Term("orientation", dict(frame_Abar=A, R_AbarA=R_AbarA, frame_Bbar=B,
                                        R_BbarB=R_BbarB, theta_bound=theta))

    def _rotation_box(self, rng, q, mode):
        """Draw MoveIt's orientation box: each component of ``R_AB`` within its tolerance.

        Feasible: ``R_AB`` at ``q`` a rotation inside the box; degenerate: ``R_AB = I``
        at ``q``, tolerances of 0 or pi/2 (or free); arbitrary: any offset and tolerances.
        """
        A, B, T = self._frames(rng, q)
        param = str(rng.choice(PARAMETERIZATIONS))
        choices = {"feasible": lambda: float(rng.choice([rng.uniform(0.01, 0.5), math.pi])),
                   "degenerate": lambda: float(rng.choice([0.0, math.pi / 2, math.inf])),
                   "arbitrary": lambda: float(rng.uniform(0.0, math.pi))}[mode]
        tol = [choices() for _ in range(3)]
        if not bounded_components(tol, param):
            tol[int(rng.integers(3))] = 0.0 if mode == "degenerate" else 0.1
        R_BbarB = pin.exp3(rng.normal(size=3))
        inside = np.eye(3) if mode == "degenerate" else turned(param, tol, rng)
        R_AbarA = T.rotation @ R_BbarB @ inside.T if mode != "arbitrary" \
            else pin.exp3(rng.normal(size=3))
        return Term("rotation_box", dict(frame_Abar=A, R_AbarA=R_AbarA, frame_Bbar=B,
                                         R_BbarB=R_BbarB, tolerances=tuple(tol),
                                         parameterization=param))

    def _gaze(self, rng, q, mode):
        A, B, T = self._frames(rng, q)
        cone = {"feasible": rng.uniform(0.01, 1.0), "arbitrary": rng.uniform(0.0, math.pi / 2),
                "degenerate": float(rng.choice([0.0, math.pi / 2]))}[mode]
        p_AS, n_A = _point(rng), unit(rng)
        p_AT = p_AS + rng.uniform(0.05, 0.8) * tilt(n_A, 0.9 * cone * rng.random(), rng)
        p_BT = T.actInv(p_AT) if mode != "arbitrary" else rng.normal(scale=0.5, size=3)
        return Term("gaze", dict(frame_A=A, p_AS=p_AS, n_A=n_A, frame_B=B, p_BT=p_BT,
                                 cone_half_angle=cone))

    def _angle(self, rng, q, mode):
        A, B, T = self._frames(rng, q)
        b_B = unit(rng) * rng.uniform(0.1, 3.0)  # not unit: the constructors normalise
        b_A = T.rotation @ b_B / np.linalg.norm(b_B)
        a_A = tilt(b_A, rng.uniform(0, math.pi), rng)
        current = math.atan2(float(np.linalg.norm(np.cross(a_A, b_A))), float(a_A @ b_A))
        if mode == "feasible":
            lo = max(0.0, current - rng.uniform(0, 0.2))
            hi = min(math.pi, current + rng.uniform(0, 0.2))
        elif mode == "degenerate":
            lo = hi = float(rng.choice([0.0, math.pi, current]))
        else:
            lo, hi = sorted(rng.uniform(0.0, math.pi, 2))
        return Term("angle", dict(frame_A=A, a_A=a_A * rng.uniform(0.1, 3.0), frame_B=B,
                                  b_B=b_B, angle_lower=lo, angle_upper=hi))

    def _point_to_point(self, rng, q, mode):
        A, B, T = self._frames(rng, q)
        p1 = _point(rng)
        p2 = T.act(p1) + (0.0 if mode == "degenerate" else rng.uniform(0, 0.3)) * unit(rng)
        d = float(np.linalg.norm(T.act(p1) - p2))
        lo, hi = (max(0.0, d - _slack(rng, mode, 0.02)), d + _slack(rng, mode, 0.02))
        if mode == "arbitrary":
            lo, hi = sorted(rng.uniform(0.0, 0.5, 2))
            hi = math.inf if rng.random() < 0.2 else hi
        return Term("point_to_point", dict(frame1=B, p_B1P1=p1, frame2=A, p_B2P2=p2,
                                           distance_lower=lo, distance_upper=hi))

    def _point_to_line(self, rng, q, mode):
        A, B, T = self._frames(rng, q)
        p, n = _point(rng), unit(rng)
        on_line = T.act(p) + rng.normal(scale=0.1) * n
        offset = 0.0 if mode == "degenerate" else rng.uniform(0, 0.2)
        line_q = on_line + offset * tilt(n, math.pi / 2, rng)
        lo, hi = max(0.0, offset - _slack(rng, mode, 0.02)), offset + _slack(rng, mode, 0.02)
        if mode == "arbitrary":
            lo, hi = sorted(rng.uniform(0.0, 0.4, 2))
        return Term("point_to_line", dict(frame_point=B, p_B1P=p, frame_line=A, p_B2Q=line_q,
                                          n_B2=n, distance_lower=lo, distance_upper=hi))

    def _polyhedron(self, rng, q, mode):
        F, G, T = self._frames(rng, q)
        n_points = int(rng.integers(1, 4))
        p_GP = rng.normal(scale=0.05, size=(3, n_points))
        p = np.concatenate([T.act(p_GP[:, i]) for i in range(n_points)])
        A = rng.normal(size=(int(rng.integers(1, 7)), 3 * n_points))
        A /= np.linalg.norm(A, axis=1, keepdims=True)
        b = A @ p + np.array([_slack(rng, mode, 0.02) for _ in range(len(A))])
        if mode == "arbitrary":
            b = rng.normal(scale=0.3, size=len(A))
        return Term("polyhedron", dict(frame_F=F, frame_G=G, p_GP=p_GP, A=A, b=b))

    def _joint_values(self, rng, q):
        g = self.group
        idx = rng.choice(g.n, size=int(rng.integers(1, g.n + 1)), replace=False)
        lo = np.where(g.continuous, -math.pi, g.lower)
        hi = np.where(g.continuous, math.pi, g.upper)
        wrapped = np.where(g.continuous, (q + math.pi) % (2 * math.pi) - math.pi, q)
        return idx, lo, hi, wrapped

    def _joint_bounds(self, rng, q, mode):
        idx, lo, hi, value = self._joint_values(rng, q)
        bounds = {}
        for i in idx:
            if mode == "arbitrary":
                a, b = sorted(rng.uniform(lo[i], hi[i], 2))
            else:
                s = _slack(rng, mode, 0.5)
                a, b = max(lo[i], value[i] - s), min(hi[i], value[i] + s)
            bounds[self.group.joint_names[i]] = (float(a), float(b))
        return Term("joint_bounds", dict(bounds=bounds))

    def _locked(self, rng, q, mode):
        """Lock 1-2 joints: at ``q``'s values, or at random ones in the arbitrary mode.

        A feasible mode keeps ``q``'s value even within 1e-3 of a limit (``q`` must still
        hold); the arbitrary mode's values lie 1e-3 inside the limits.
        """
        idx, lo, hi, value = self._joint_values(rng, q)
        if mode != "arbitrary":
            chosen = idx[:int(rng.integers(1, 3))]
            return Term("locked", dict(positions={self.group.joint_names[i]: float(value[i])
                                                  for i in chosen}))
        margin = 1e-3
        pick = rng.uniform(lo + margin, hi - margin)  # drawn before the count, as always

        def inside(i: int) -> float:
            if hi[i] - lo[i] > 2 * margin:
                return float(np.clip(pick[i], lo[i] + margin, hi[i] - margin))
            return 0.5 * float(lo[i] + hi[i])
        positions = {self.group.joint_names[i]: inside(i) for i in idx[:int(rng.integers(1, 3))]}
        return Term("locked", dict(positions=positions))

    def costs(self, rng: np.random.Generator, q: np.ndarray) -> tuple:
        """Return a posture cost and/or a position cost (random nominal and target)."""
        g, out = self.group, []
        if rng.random() < 0.7:
            lo = np.where(g.continuous, -math.pi, g.lower)
            hi = np.where(g.continuous, math.pi, g.upper)
            out.append(Term("posture", dict(q_nominal=lo + (hi - lo) * rng.random(g.n),
                                            weights=float(rng.choice([0.0, 0.1, 1.0])))))
        if rng.random() < 0.7 or not out:
            A, B, _ = self._frames(rng, q)
            out.append(Term("position_cost", dict(frame_A=A, p_AP=rng.normal(scale=0.3, size=3),
                                                  frame_B=B, p_BQ=_point(rng),
                                                  C=float(rng.uniform(0, 10)) * np.eye(3))))
        return tuple(out)


def problems(generators: List[RandomProblems], count: int, seed: int = 0):
    """Yield ``count`` problems cycling over ``generators`` (deterministic from ``seed``)."""
    rng = np.random.default_rng(seed)
    for i in range(count):
        yield generators[i % len(generators)].problem(rng, i)
