"""Constrained-IK problems (issue 10): plain descriptions, deterministic from a seed, ROS-free.

A :class:`ProblemSpec` names its family, arm, a reachable configuration ``q_star`` that
satisfies every constraint (group vector, sampled uniformly in the group's limits;
continuous joints in [-pi, pi]), the seed (mid-limits) and its terms as :class:`Term`
(a kind and plain numbers: frame names, points [m], unit vectors, bounds [m] / [rad]).
Two builders read the same description: ``constrained_ours.build`` (ros2_ik terms) and
``constrained_drake`` (a Drake ``InverseKinematics`` program); ``constrained_check``
judges any answer from it.  Frames are link names (a pinocchio BODY frame and a Drake
body frame), so both sides agree on them.

Families (each from a fresh ``q_star``):

a  position box +-5 mm of the tip point + orientation bound 0.02 rad (frame A = base link)
b  gaze: a point fixed in the base inside a 5 deg cone along an axis of the tip + box +-1 cm
c  angle between a base vector and a tip vector <= 0.1 rad + position box +-5 mm
d  point-to-point distance (a band of +-5 mm) + point-to-line distance (band of +-5 mm)
   + orientation bound 0.02 rad
e  polyhedron: two points of the tip in the base frame, 4 half-spaces around each and one
   coupling row; every row of ``A`` has unit norm, so ``A p - b`` is in [m] (a distance in
   R^6 for the coupling row, in R^3 for the others)
f  two frames: a mid-chain link's height (base z) within +-1 cm + the tip box +-5 mm
g  (a), (b) or (c) in turn, plus a posture cost toward a nominal configuration that is not
   ``q_star`` (``q_star`` + uniform +-0.5 rad, clipped) and a position cost pulling the tip
   3 cm outside its box: the optimum lies on the constraints' boundary
h  (a) + minimum distance >= 1 cm to the scene of ``bench/panda_scene.yaml`` and between
   the links (panda only; ``q_star`` collision-free by that margin)
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Mapping, Optional, Tuple

import numpy as np
import pinocchio as pin

FAMILIES = ("a", "b", "c", "d", "e", "f", "g", "h")
FAMILY_TITLES = {
    "a": "position box +-5 mm + orientation 0.02 rad",
    "b": "gaze cone 5 deg + position box +-1 cm",
    "c": "angle between vectors <= 0.1 rad + box +-5 mm",
    "d": "point-to-point + point-to-line distance + orientation",
    "e": "polyhedron (unit rows, [m])",
    "f": "mid-chain height band + hand box (two frames)",
    "g": "(a)/(b)/(c) + posture and position costs",
    "h": "(a) + minimum distance 1 cm (panda scene)",
}
ARMS = ("panda", "ur5", "kinova", "xarm7")
MIN_DISTANCE_M, INFLUENCE_M = 0.01, 0.05


@dataclass(frozen=True)
class Term:
    """One constraint or cost: ``kind`` and its arguments (frames, [m], [rad], unit vectors).

    Kinds: position, orientation, gaze, angle, point_to_point, point_to_line, polyhedron,
    joint_bounds, locked, min_distance, min_distance_upper, distance (constraints);
    posture, position_cost (costs).
    The argument names are those of the ros2_ik constructors.
    """

    kind: str
    args: Mapping[str, object]


@dataclass(frozen=True)
class ProblemSpec:
    """A constrained-IK problem on ``arm``'s usual group (see module docstring)."""

    family: str
    arm: str
    index: int
    q_star: np.ndarray
    seed: np.ndarray
    constraints: Tuple[Term, ...]
    costs: Tuple[Term, ...] = ()
    note: str = ""
    meta: Dict[str, object] = field(default_factory=dict)


class Kinematics:
    """FK of an arm's group from its own model (frames by link name), for the generators."""

    def __init__(self, group):
        self.group = group
        self.model = group.robot.model
        self.data = self.model.createData()
        self.links = moving_links(group) + [group.base]

    def placement(self, q: np.ndarray, frame: str) -> pin.SE3:
        """``T_world_frame`` at group vector ``q``."""
        pin.framesForwardKinematics(self.model, self.data, self.group.to_full_q(q))
        return pin.SE3(self.data.oMf[self.model.getFrameId(frame, pin.BODY)])

    def relative(self, q: np.ndarray, frame_A: str, frame_B: str) -> pin.SE3:
        """``T_A_B`` at ``q``."""
        return self.placement(q, frame_A).actInv(self.placement(q, frame_B))


def moving_links(group) -> List[str]:
    """Links (BODY frames) moved by the group's joints, in model order."""
    model = group.robot.model
    out = []
    for frame in model.frames:
        if frame.type == pin.FrameType.BODY and frame.parentJoint != 0 \
                and any(j in group.joint_ids for j in model.supports[frame.parentJoint]):
            out.append(frame.name)
    return out


def sample_q(group, rng: np.random.Generator) -> np.ndarray:
    """Uniform in the limits (continuous joints in [-pi, pi])."""
    return group.random_configuration(rng)


def unit(rng: np.random.Generator) -> np.ndarray:
    """Uniform random unit vector (3,)."""
    v = rng.normal(size=3)
    return v / np.linalg.norm(v)


def tilt(v: np.ndarray, angle: float, rng: np.random.Generator) -> np.ndarray:
    """Rotate unit ``v`` by ``angle`` [rad] about a random axis perpendicular to it."""
    axis = np.cross(v, unit(rng))
    axis /= np.linalg.norm(axis)
    return pin.exp3(angle * axis) @ v


def box(kin: Kinematics, q, frame_B: str, half_m: float, p_BQ=(0.0, 0.0, 0.0)) -> Term:
    """Position box of half-width ``half_m`` around Q(q) in the base frame."""
    p = kin.relative(q, kin.group.base, frame_B).act(np.asarray(p_BQ, dtype=float))
    return Term("position", dict(frame_A=kin.group.base, frame_B=frame_B, p_BQ=list(p_BQ),
                                 p_AQ_lower=p - half_m, p_AQ_upper=p + half_m))


def orientation(kin: Kinematics, q, theta: float, frame_B: Optional[str] = None) -> Term:
    """Tip within ``theta`` [rad] of its orientation at ``q`` (A = base, B = tip)."""
    frame_B = frame_B or kin.group.tip
    R = kin.relative(q, kin.group.base, frame_B).rotation
    return Term("orientation", dict(frame_Abar=kin.group.base, R_AbarA=R, frame_Bbar=frame_B,
                                    R_BbarB=np.eye(3), theta_bound=theta))


def gaze(kin: Kinematics, q, cone: float, rng) -> Term:
    """Gaze at a base-fixed target 0.3-0.8 m along a random tip axis, tilted inside the cone."""
    tip, base = kin.group.tip, kin.group.base
    n_A = unit(rng)
    direction = tilt(n_A, rng.uniform(0.0, 0.8) * cone, rng)
    p_tip_T = rng.uniform(0.3, 0.8) * direction
    p_BT = kin.relative(q, base, tip).act(p_tip_T)
    return Term("gaze", dict(frame_A=tip, p_AS=np.zeros(3), n_A=n_A, frame_B=base, p_BT=p_BT,
                             cone_half_angle=cone))


def angle(kin: Kinematics, q, upper: float, rng) -> Term:
    """Keep a tip vector within ``upper`` of a base vector (its value at q, tilted <= upper/2)."""
    tip, base = kin.group.tip, kin.group.base
    b_B = unit(rng)
    a_A = tilt(kin.relative(q, base, tip).rotation @ b_B, rng.uniform(0, 0.5) * upper, rng)
    return Term("angle", dict(frame_A=base, a_A=a_A, frame_B=tip, b_B=b_B,
                              angle_lower=0.0, angle_upper=upper))


def distances(kin: Kinematics, q, band_m: float, rng) -> Tuple[Term, Term]:
    """Point-to-point and point-to-line distances of tip points, each in a band of +-band_m."""
    tip, base = kin.group.tip, kin.group.base
    T = kin.relative(q, base, tip)
    p1, p2 = 0.05 * rng.normal(size=3), 0.05 * rng.normal(size=3)
    target = T.act(p1) + rng.uniform(0.05, 0.3) * unit(rng)
    d = float(np.linalg.norm(T.act(p1) - target))
    line_q, line_n = T.act(p2) + rng.uniform(0.05, 0.3) * unit(rng), unit(rng)
    u = T.act(p2) - line_q
    dl = float(np.linalg.norm(u - (u @ line_n) * line_n))
    return (Term("point_to_point", dict(frame1=tip, p_B1P1=p1, frame2=base, p_B2P2=target,
                                        distance_lower=max(0.0, d - band_m),
                                        distance_upper=d + band_m)),
            Term("point_to_line", dict(frame_point=tip, p_B1P=p2, frame_line=base, p_B2Q=line_q,
                                       n_B2=line_n, distance_lower=max(0.0, dl - band_m),
                                       distance_upper=dl + band_m)))


def polyhedron(kin: Kinematics, q, margin_m: float, rng) -> Term:
    """Two tip points in the base frame: 4 unit half-spaces each + one coupling row."""
    tip, base = kin.group.tip, kin.group.base
    p_GP = np.array([[0.0, 0.0], [0.0, 0.0], [0.0, 0.1]])
    p = np.concatenate([kin.relative(q, base, tip).act(p_GP[:, i]) for i in range(2)])
    normals = np.array([[1, 1, 1], [1, -1, -1], [-1, 1, -1], [-1, -1, 1]]) / math.sqrt(3.0)
    rows = []
    for i in range(2):
        R = pin.exp3(rng.normal(size=3))  # a random tetrahedron around each point
        for n in normals:
            row = np.zeros(6)
            row[3 * i:3 * i + 3] = R @ n
            rows.append(row)
    coupling = rng.normal(size=6)
    rows.append(coupling / np.linalg.norm(coupling))
    A = np.array(rows)
    return Term("polyhedron", dict(frame_F=base, frame_G=tip, p_GP=p_GP, A=A,
                                   b=A @ p + margin_m))


def height_band(kin: Kinematics, q, half_m: float) -> Term:
    """Keep a mid-chain link's origin height (base z) within +-half_m, x and y free."""
    links = [name for name in moving_links(kin.group) if name != kin.group.tip]
    mid = links[len(links) // 2]
    z = kin.relative(q, kin.group.base, mid).translation[2]
    return Term("position", dict(frame_A=kin.group.base, frame_B=mid, p_BQ=np.zeros(3),
                                 p_AQ_lower=np.array([-np.inf, -np.inf, z - half_m]),
                                 p_AQ_upper=np.array([np.inf, np.inf, z + half_m])))


def costs(kin: Kinematics, q, box_term: Term, rng) -> Tuple[Term, Term]:
    """Posture toward ``q + U(-0.5, 0.5)`` (clipped) and the tip pulled 3 cm out of its box."""
    g = kin.group
    lo = np.where(g.continuous, -math.pi, g.lower)
    hi = np.where(g.continuous, math.pi, g.upper)
    nominal = np.clip(q + rng.uniform(-0.5, 0.5, g.n), lo, hi)
    args = box_term.args
    centre = 0.5 * (np.asarray(args["p_AQ_lower"]) + np.asarray(args["p_AQ_upper"]))
    return (Term("posture", dict(q_nominal=nominal, weights=1.0)),
            Term("position_cost", dict(frame_A=g.base, p_AP=centre + 0.03 * unit(rng),
                                       frame_B=args["frame_B"], p_BQ=np.asarray(args["p_BQ"]),
                                       C=10.0 * np.eye(3))))


def family_terms(family: str, kin: Kinematics, q, rng, index: int) -> Tuple[tuple, tuple]:
    """(constraints, costs) of one problem of ``family`` around ``q``."""
    tip = kin.group.tip
    if family == "g":
        base_family = "abc"[index % 3]
        constraints, _ = family_terms(base_family, kin, q, rng, index)
        box_term = next(t for t in constraints if t.kind == "position")
        return constraints, costs(kin, q, box_term, rng)
    if family in ("a", "h"):
        cons = (box(kin, q, tip, 0.005), orientation(kin, q, 0.02))
        if family == "h":
            cons += (Term("min_distance", dict(min_distance_m=MIN_DISTANCE_M,
                                               influence_distance_m=INFLUENCE_M)),)
        return cons, ()
    builders: Dict[str, Callable[[], tuple]] = {
        "b": lambda: (gaze(kin, q, math.radians(5.0), rng), box(kin, q, tip, 0.01)),
        "c": lambda: (angle(kin, q, 0.1, rng), box(kin, q, tip, 0.005)),
        "d": lambda: distances(kin, q, 0.005, rng) + (orientation(kin, q, 0.02),),
        "e": lambda: (polyhedron(kin, q, 0.005, rng),),
        "f": lambda: (height_band(kin, q, 0.01), box(kin, q, tip, 0.005)),
    }
    if family not in builders:
        raise ValueError(f"unknown family {family!r}; valid: {list(FAMILIES)}")
    return builders[family](), ()


def generate(family: str, arm: str, group, n: int, seed: int = 0,
             clearance: Optional[Callable[[np.ndarray], float]] = None) -> List[ProblemSpec]:
    """``n`` problems of ``family`` on ``group`` (arm ``arm``), deterministic from ``seed``.

    ``clearance(q) -> m`` (family h): configurations closer than ``MIN_DISTANCE_M`` to a
    collision are resampled.
    """
    rng = np.random.default_rng([seed, FAMILIES.index(family), ARMS.index(arm)
                                 if arm in ARMS else 99])
    kin, out, rejected = Kinematics(group), [], 0
    while len(out) < n:
        q = sample_q(group, rng)
        if family == "h" and clearance is not None and clearance(q) < MIN_DISTANCE_M:
            rejected += 1
            continue
        constraints, cost_terms = family_terms(family, kin, q, rng, len(out))
        out.append(ProblemSpec(family, arm, len(out), q, group.mid_configuration(),
                               constraints, cost_terms, meta={"rejected": rejected}))
    return out
