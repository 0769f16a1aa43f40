"""Problems feasible by construction on robots nobody tuned for (issue 38).

Robots (:func:`robot_cases`): chains of every example-robot-data URDF that pinocchio and
Drake both load (root link -> a leaf link with 3 or more joints, up to two chains per
URDF), the vendor arms of shared/real_urdfs when present (``vendor_arms``), and generated
arms (``random_arms.random_arm(seed, mixed=True)``: 3-8 joints,
revolute, continuous and prismatic, unaligned axes, narrow and +-2 pi limits, on a body
whose other joints are locked).

Problems (:class:`FeasibleProblems`): each from a uniform configuration ``q_star`` that
satisfies every term by construction, one of the combinations of :data:`COMBOS`:

pose        the tip's pose (1e-4 m, 1e-4 rad)
position    the tip's position only, or the pose with one position axis of the
            target frame free (per-axis weights)
windows     a 1 mm box on the tip + joint windows of +-0.05 rad (or m) on up to two
            joints, wide-range (>= 2 pi) and continuous ones first (a continuous joint's
            window shifted by -2 pi, 0 or 2 pi: across +-pi too)
constraints 1-3 constraints of random kinds (every kind of ``constrained_random``, bounds
            drawn around ``q_star``) on random links
two_frames  a box on a mid-chain link + the tip's pose
costs       ``constraints`` + a posture and a position cost (feasibility is judged)
tight_axis  a tip axis within an angle <= 2 deg of a root-frame vector + the tip origin
            within a distance <= 2 mm of a point (issue 48: a tool axis and a point)
tight_orientation  the tip's orientation within <= 2 deg + a box of half-width <= 2 mm
tight_line  a tip axis within <= 2 deg of a line's direction + the tip origin <= 2 mm
            from that line (an insertion)
            The tight bounds are uniform in [0, 2 deg] / [0, 2 mm]; q_star sits anywhere
            inside them, often near the boundary.
windows_pi  (robots with a continuous joint only) a 1 mm box on the tip + windows of
            half-width 0.05-0.3 rad on up to two continuous joints, each containing
            +-pi (or an equivalent, +-3 pi), ``q_star`` inside (issue 48: "keep this
            joint within +-0.3 rad of where it is" when it sits near +-pi)
scene       (the Panda in ``bench/panda_scene.yaml`` only) a 5 mm box on the tip + one of
            a minimum distance (lower bound <= the clearance at ``q_star``), Drake's
            minimum-distance upper bound, or a named pair's distance band
            (``constrained_distances.draw``)

Terms are :class:`constrained_problems.Term`; the pose is a ``pose`` term (frame,
``T_world_target`` as a 4x4 array, the free position axis or -1, position only) that
``constrained_ours``, ``constrained_drake`` and ``constrained_check`` all read.
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import List, NamedTuple

import numpy as np
import pinocchio as pin

import constrained_distances as distances
import vendor_arms
from constrained_problems import Kinematics, ProblemSpec, Term, tilt, unit
from constrained_random import RandomProblems
from random_arms import random_arm
from ros2_ik.core import Robot, errors, robots

COMBOS = ("pose", "position", "windows", "constraints", "two_frames", "costs",
          "tight_axis", "tight_orientation", "tight_line")
#: The tight families (issue 48): angles <= 2 deg, distances <= 2 mm, combined.
TIGHT_COMBOS = ("tight_axis", "tight_orientation", "tight_line")
TIGHT_RAD, TIGHT_M = math.radians(2.0), 2e-3
#: The combination of the scene robot (:class:`SceneProblems`).
SCENE_COMBO = "scene"
#: Joint windows across +-pi (robots with a continuous joint; a pass of their own).
WINDOWS_PI_COMBO = "windows_pi"


class RobotCase(NamedTuple):
    """One robot of the fuzz: ``kind`` is its cell's robot class."""

    name: str
    kind: str
    urdf: str
    base: str
    tip: str


def root_link_of(model: pin.Model) -> str:
    """Return the first BODY frame (the URDF's root link)."""
    return next(f.name for f in model.frames if f.type == pin.FrameType.BODY)


def _chains(path: Path, per_urdf: int) -> List[RobotCase]:
    text = path.read_text()
    try:
        robot = Robot.from_urdf(text)
    except Exception:  # noqa: BLE001 - test_every_chain checks the reason
        return []
    model = robot.model
    parents = {model.parents[j] for j in range(1, model.njoints)}
    leaves = [f for f in model.frames if f.type == pin.FrameType.BODY and f.parentJoint > 0
              and f.parentJoint not in parents]
    out, seen = [], set()
    for frame in leaves:
        joints = tuple(j for j in model.supports[frame.parentJoint] if model.nvs[j] == 1)
        if len(joints) < 3 or joints in seen or any(model.nvs[j] > 1 for j in
                                                    model.supports[frame.parentJoint]):
            continue
        if _through_mimic(robot, frame.name):
            continue
        seen.add(joints)
        out.append(RobotCase(f"{path.parent.parent.name}/{path.stem}:{frame.name}",
                             "example-robot-data", text, root_link_of(model), frame.name))
    step = max(1, len(out) // per_urdf)
    return out[::step][:per_urdf]


def _through_mimic(robot: Robot, frame: str) -> bool:
    """Whether the group of the chain to ``frame`` moves a mimic joint with its leader.

    No problem on such a chain (a finger that follows another, on the chain or beside
    it): ``Robot.group`` moves the mimic joint with its leader (``Group.coupled``) or
    refuses it, where the oracle's plant holds every joint outside the group where it is
    (ros2_ik/test/test_mimic.py checks the coupled groups against pinocchio's mimic model).
    """
    try:
        group = robot.group(tip=frame)
    except errors.InvalidArgument as exc:
        return "URDF <mimic>" in str(exc)
    return bool(group.coupled)


#: Generated arms whose prismatic joints reach 8 m (rails, gantry axes longer than 2 pi m),
#: their seeds: each moves one to three such joints besides the 0.4 m lift.
LONG_SLIDES = (2, 5, 7)
LONG_SLIDE_M = 8.0


def robot_cases(random_count: int, per_urdf: int = 2) -> List[RobotCase]:
    """example-robot-data chains, ``random_count`` generated (mixed) arms, the vendor arms.

    The generated arms include those of :data:`LONG_SLIDES` (class "random" too).  The
    vendor arms (``vendor_arms``: shared/real_urdfs, each manifest entry's base to tip,
    class "vendor") when their folder is present.
    """
    cases: List[RobotCase] = []
    for path in sorted(robots.data_dir().rglob("*.urdf")):
        cases += _chains(path, per_urdf)
    arms = [random_arm(seed, mixed=True) for seed in range(random_count)]
    arms += [random_arm(seed, mixed=True, slide_m=LONG_SLIDE_M) for seed in LONG_SLIDES]
    for arm in arms:
        cases.append(RobotCase(arm.name, "random", arm.urdf, "world_link", arm.tip))
    for arm in vendor_arms.arms():
        cases.append(RobotCase(arm.name, "vendor", arm.path.read_text(), arm.base, arm.tip))
    return cases


def pose_term(kin: Kinematics, q: np.ndarray, frame: str, free_axis: int = -1,
              position_only: bool = False) -> Term:
    """Return the pose of ``frame`` at ``q`` (world frame), optionally one axis free."""
    return Term("pose", dict(frame=frame, T=kin.placement(q, frame).homogeneous,
                             free_axis=free_axis, position_only=position_only))


def box_term(kin: Kinematics, q: np.ndarray, root: str, frame: str, half_m: float) -> Term:
    """Return a box of half-width ``half_m`` [m] about ``frame``'s origin, in the root frame."""
    p = kin.relative(q, root, frame).translation
    return Term("position", dict(frame_A=root, frame_B=frame, p_BQ=np.zeros(3),
                                 p_AQ_lower=p - half_m, p_AQ_upper=p + half_m))


class FeasibleProblems:
    """Problems of one robot's group, each feasible at its ``q_star`` (module docstring)."""

    def __init__(self, case: RobotCase, group):
        self.case, self.group = case, group
        self.kin = Kinematics(group)
        self.random = RandomProblems(case.name, group, modes=("feasible",))
        self.root = root_link_of(group.robot.model)
        self.links = [n for n in self.random.links if n != group.tip] or [group.tip]

    def problem(self, rng: np.random.Generator, index: int, combo: str) -> ProblemSpec:
        """One problem of ``combo`` (see :data:`COMBOS`)."""
        g = self.group
        q = g.random_configuration(rng)
        constraints, costs = getattr(self, "_" + combo)(rng, q)
        seed = g.mid_configuration() if rng.random() < 0.5 else g.random_configuration(rng)
        return ProblemSpec(combo, self.case.name, index, q, seed, tuple(constraints),
                           tuple(costs), meta={"robot_kind": self.case.kind,
                                               "across_pi": self.across_pi(constraints)})

    def across_pi(self, constraints) -> bool:
        """Whether a continuous joint's window in ``constraints`` straddles +-pi.

        That is, holds an odd multiple of pi.
        """
        continuous = {n for n, c in zip(self.group.joint_names, self.group.continuous) if c}
        for term in constraints:
            if term.kind != "joint_bounds":
                continue
            for name, (lo, hi) in term.args["bounds"].items():
                odd = 2 * math.floor((hi - math.pi) / (2 * math.pi)) + 1  # largest <= hi
                if name in continuous and lo <= odd * math.pi <= hi:
                    return True
        return False

    def _pose(self, rng, q):
        return [pose_term(self.kin, q, self.group.tip)], []

    def _position(self, rng, q):
        if rng.random() < 0.5:
            return [pose_term(self.kin, q, self.group.tip, position_only=True)], []
        return [pose_term(self.kin, q, self.group.tip, free_axis=int(rng.integers(3)))], []

    def _windows(self, rng, q):
        g = self.group
        wide = [i for i in range(g.n) if g.wraps[i]]
        rest = [i for i in range(g.n) if not g.wraps[i]]
        picked = (list(rng.permutation(wide)) + list(rng.permutation(rest)))[:2]
        value = np.where(g.continuous, (q + math.pi) % (2 * math.pi) - math.pi, q)
        bounds = {}
        for i in picked:
            centre = value[i]
            if g.continuous[i]:  # a window on the circle, anywhere on the line: [3.1, 3.2],
                centre += 2 * math.pi * int(rng.integers(-1, 2))  # [-3.2, -3.1], [9.4, 9.5]
            lo, hi = centre - 0.05, centre + 0.05
            bounds[g.joint_names[i]] = (float(max(lo, g.lower[i])), float(min(hi, g.upper[i])))
        return [box_term(self.kin, q, self.root, g.tip, 1e-3),
                Term("joint_bounds", dict(bounds=bounds))], []

    def _windows_pi(self, rng, q):
        """Windows containing +-pi on up to two continuous joints (``q``, edited, inside)."""
        g = self.group
        cont = [int(i) for i in rng.permutation(np.flatnonzero(g.continuous))][:2]
        if not cont:
            raise ValueError(f"{self.case.name}: no continuous joint for {WINDOWS_PI_COMBO}")
        bounds = {}
        for i in cont:
            half = float(rng.uniform(0.05, 0.3))
            centre = math.pi * rng.choice((-1, 1)) + rng.uniform(-0.8, 0.8) * half
            centre += 2 * math.pi * int(rng.integers(-1, 2))  # [2.9, 3.4], [-3.4, -2.9], ...
            q[i] = centre + rng.uniform(-half, half)
            bounds[g.joint_names[i]] = (centre - half, centre + half)
        return [box_term(self.kin, q, self.root, g.tip, 1e-3),
                Term("joint_bounds", dict(bounds=bounds))], []

    def _constraints(self, rng, q):
        return list(self.random.problem_terms(rng, q, int(rng.integers(1, 4)))), []

    def _two_frames(self, rng, q):
        mid = str(rng.choice(self.links))
        return [box_term(self.kin, q, self.root, mid, 0.01),
                pose_term(self.kin, q, self.group.tip)], []

    def _costs(self, rng, q):
        constraints, _ = self._constraints(rng, q)
        return constraints, list(self.random.costs(rng, q))

    def _tight_axis(self, rng, q):
        """Return a tool axis within <= 2 deg of a root axis + the tip <= 2 mm from a point."""
        T = self.kin.relative(q, self.root, self.group.tip)
        p = T.translation
        bound = float(rng.uniform(0.0, TIGHT_M))
        point = p + bound * rng.random() * unit(rng)
        return [self._tight_angle(rng, T),
                Term("point_to_point", dict(frame1=self.group.tip, p_B1P1=np.zeros(3),
                                            frame2=self.root, p_B2P2=point,
                                            distance_lower=0.0, distance_upper=bound))], []

    def _tight_orientation(self, rng, q):
        """Return the tip's orientation within <= 2 deg + its origin in a box of <= 2 mm."""
        T = self.kin.relative(q, self.root, self.group.tip)
        theta = float(rng.uniform(0.0, TIGHT_RAD))
        axis = unit(rng)
        R_AbarA = T.rotation @ pin.exp3(theta * rng.random() * axis)
        return [Term("orientation", dict(frame_Abar=self.root, R_AbarA=R_AbarA,
                                         frame_Bbar=self.group.tip, R_BbarB=np.eye(3),
                                         theta_bound=theta)),
                box_term(self.kin, q, self.root, self.group.tip,
                         float(rng.uniform(0.0, TIGHT_M)))], []

    def _tight_line(self, rng, q):
        """Return a tool axis within <= 2 deg of a line + the tip <= 2 mm from that line."""
        T = self.kin.relative(q, self.root, self.group.tip)
        angle = self._tight_angle(rng, T)
        n = np.asarray(angle.args["a_A"])
        bound = float(rng.uniform(0.0, TIGHT_M))
        on_line = T.translation + rng.normal(scale=0.05) * n + \
            bound * rng.random() * tilt(n, math.pi / 2, rng)
        return [angle, Term("point_to_line", dict(
            frame_point=self.group.tip, p_B1P=np.zeros(3), frame_line=self.root,
            p_B2Q=on_line, n_B2=n, distance_lower=0.0, distance_upper=bound))], []

    def _tight_angle(self, rng, T) -> Term:
        """Return an angle <= a bound of <= 2 deg between a root vector and a tip axis at ``T``."""
        b_B = np.eye(3)[int(rng.integers(3))] if rng.random() < 0.5 else unit(rng)
        bound = float(rng.uniform(0.0, TIGHT_RAD))
        a_A = tilt(T.rotation @ b_B, bound * rng.random(), rng)
        return Term("angle", dict(frame_A=self.root, a_A=a_A, frame_B=self.group.tip,
                                  b_B=b_B, angle_lower=0.0, angle_upper=bound))


class SceneProblems(FeasibleProblems):
    """``scene`` problems of the Panda in its bench scene (``collision``: (checker, to_full_q))."""

    def __init__(self, case: RobotCase, group, collision):
        super().__init__(case, group)
        self.collision = collision

    def problem(self, rng: np.random.Generator, index: int, combo: str) -> ProblemSpec:
        """Return a ``scene`` problem whatever ``combo`` (the cell is this robot's)."""
        checker, to_full = self.collision
        while True:  # q_star clear of the scene and itself: a lower bound can hold there
            q = self.group.random_configuration(rng)
            clearance = checker.min_distance(to_full(q)).distance_m
            if clearance > 1e-3:
                break
        terms = [box_term(self.kin, q, self.root, self.group.tip, 5e-3)]
        if rng.random() < 1 / 3:
            terms.append(Term("min_distance", dict(
                min_distance_m=float(min(0.01, clearance - 5e-4)),
                influence_distance_m=0.05)))
        else:
            terms.append(distances.draw(rng, self.collision, q, "feasible"))
        seed = self.group.mid_configuration()
        return ProblemSpec("scene", self.case.name, index, q, seed, tuple(terms), (),
                           meta={"robot_kind": self.case.kind})
