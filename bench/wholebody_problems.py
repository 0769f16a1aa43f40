"""Whole-body IK problems (issue 47): feasible by construction, deterministic from a seed.

Each problem comes from a configuration ``q_star`` of the robot's full pinocchio model
(URDF + a root joint: a free-flyer, or a planar joint (x, y, theta) for mobile bases)
that satisfies every term; the targets are computed from it.  Robots and families
(:data:`ROBOTS`, example-robot-data, each in its SRDF's reference posture when it has one):

humanoid    talos, g1, romeo: both soles held in 6D, level on the ground (z = 0), the CoM
            inside the support polygon (the convex hull of both soles' corner points on the
            ground) with a 2 cm margin, one hand at a pose (6D).
quadruped   solo12, anymal, go2: four feet held (3D) on the ground, the base at a pose (6D),
            the CoM inside the polygon of the feet with a 2 cm margin.
mobile      pr2 (the planar virtual joint of its SRDF), tiago (a planar base given here):
            the right hand / tool at a pose beyond the arm's reach from the seed (the base
            must move), a base-motion cost; the other joints (head, second arm, hand,
            wheels) locked at the reference posture.
legged_arm  b1_z1: four feet held (3D) on the ground, the gripper (link06) at a pose.

Construction of ``q_star`` (legged robots): the reference posture placed on the ground
(lowest contact point at z = 0) is the nominal stance; the base is moved from it (a few cm,
+-0.1 rad roll / pitch, +-0.3 rad yaw, lowered by up to 10 % of its height), every joint
that no contact frame depends on alone (arms, torso, head) drawn uniformly in its limits,
the leg joints near nominal; each contact target is its nominal footprint moved on the
ground (+-3 cm, and +-0.15 rad of yaw for soles); then the leg joints alone are solved
(damped Newton, pinocchio FK) so that every contact meets its target.  ``q_star`` is
rejected and drawn again when the legs do not converge, a joint leaves its limits or the
CoM is less than margin + 1 mm inside the polygon.  Mobile robots: the base is put 1-2.5 m
away (any heading), torso and arm joints uniform in their limits, rejected unless the hand
target is farther from the first moving joint than the chain's reach bound (sum of the
joint-to-joint distances along it plus prismatic ranges) at the seed.

Seeds: the nominal stance (legged robots) or the reference posture at the origin (mobile),
the same for every method.  Terms are :class:`constrained_problems.Term`:

``frame_pose``       frame, ``T`` (4x4 ``T_world_target``): 6D
``frame_position``   frame, ``p`` (3,) [m]: 3D
``com_in_support``   ``contacts`` ((frame, points (k, 3) [m] in the frame), ...), the ground
                     plane z = 0, ``margin_m``
``base_motion`` (a cost) ``weight`` [1/m^2] on the squared planar base displacement from the
                     seed (x, y [m] and theta [rad])
"""
from __future__ import annotations

import dataclasses
import math
import zlib
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np
import pinocchio as pin

from constrained_problems import Term
from ros2_ik.core import robots

COM_MARGIN_M = 0.02
#: Extra clearance [m] of ``q_star``'s CoM inside the shrunk polygon (not on its boundary).
COM_SLACK_M = 1e-3


def _rectangle(x: Tuple[float, float], y: Tuple[float, float], z: float) -> tuple:
    return tuple((a, b, z) for a in x for b in y)


@dataclass(frozen=True)
class Contact:
    """A contact frame and its points [m] in that frame (on the sole: on the ground)."""

    frame: str
    points: tuple = ((0.0, 0.0, 0.0),)
    six_d: bool = False


@dataclass(frozen=True)
class RobotSpec:
    """One robot of the benchmark: files, root joint, contacts, hand, moving joints."""

    family: str
    urdf: str
    srdf: Optional[str]
    posture: str
    root: str                       # "floating" or "planar"
    contacts: Tuple[Contact, ...] = ()
    hand: str = ""
    base_frame: str = ""            # a base pose target on this frame (quadrupeds)
    com: bool = False
    moving: Tuple[str, ...] = ()    # () = every joint of the URDF

    @property
    def planar(self) -> bool:
        """Whether the root joint is a planar joint (x, y, theta)."""
        return self.root == "planar"


def _soles(left: str, right: str, x, y, z=0.0) -> Tuple[Contact, ...]:
    return tuple(Contact(f, _rectangle(x, y, z), True) for f in (left, right))


def _feet(*names: str) -> Tuple[Contact, ...]:
    return tuple(Contact(n) for n in names)


_PR2_ARM = ("torso_lift_joint", "r_shoulder_pan_joint", "r_shoulder_lift_joint",
            "r_upper_arm_roll_joint", "r_elbow_flex_joint", "r_forearm_roll_joint",
            "r_wrist_flex_joint", "r_wrist_roll_joint")
_TIAGO_ARM = ("torso_lift_joint",) + tuple(f"arm_{i}_joint" for i in range(1, 8))

#: The robots.  Sole rectangles [m]: talos and romeo inside their soles (sole frames on the
#: sole), g1 the four contact spheres of its ankle-roll link (centres at z = -0.03, radius
#: 5 mm).
ROBOTS: Dict[str, RobotSpec] = {
    "talos": RobotSpec("humanoid", "talos_data/robots/talos_reduced.urdf",
                       "talos_data/srdf/talos.srdf", "half_sitting", "floating",
                       _soles("left_sole_link", "right_sole_link", (-0.1, 0.1), (-0.065, 0.065)),
                       hand="gripper_left_base_link", com=True),
    "g1": RobotSpec("humanoid", "g1_description/urdf/g1_29dof_rev_1_0.urdf", None, "",
                    "floating", _soles("left_ankle_roll_link", "right_ankle_roll_link",
                                       (-0.05, 0.12), (-0.025, 0.025), -0.035),
                    hand="left_rubber_hand", com=True),
    "romeo": RobotSpec("humanoid", "romeo_description/urdf/romeo.urdf",
                       "romeo_description/srdf/romeo.srdf", "half_sitting", "floating",
                       _soles("l_sole", "r_sole", (-0.07, 0.11), (-0.04, 0.04)),
                       hand="l_gripper", com=True),
    "solo12": RobotSpec("quadruped", "solo_description/robots/solo12.urdf",
                        "solo_description/srdf/solo.srdf", "standing", "floating",
                        _feet("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"),
                        base_frame="base_link", com=True),
    "anymal": RobotSpec("quadruped", "anymal_b_simple_description/robots/anymal.urdf",
                        "anymal_b_simple_description/srdf/anymal.srdf", "standing", "floating",
                        _feet("LF_FOOT", "RF_FOOT", "LH_FOOT", "RH_FOOT"),
                        base_frame="base", com=True),
    "go2": RobotSpec("quadruped", "go2_description/urdf/go2.urdf",
                     "go2_description/srdf/go2.srdf", "standing", "floating",
                     _feet("FL_foot", "FR_foot", "RL_foot", "RR_foot"), base_frame="base",
                     com=True),
    "pr2": RobotSpec("mobile", "pr2_description/urdf/pr2.urdf",
                     "pr2_description/srdf/pr2.srdf", "tuck_left_arm", "planar",
                     hand="r_gripper_tool_frame", moving=_PR2_ARM),
    "tiago": RobotSpec("mobile", "tiago_description/robots/tiago.urdf", None, "", "planar",
                       hand="arm_tool_link", moving=_TIAGO_ARM),
    "b1_z1": RobotSpec("legged_arm", "b1_description/urdf/b1-z1.urdf",
                       "b1_description/srdf/b1-z1.srdf", "standing_with_arm_home", "floating",
                       _feet("FL_foot", "FR_foot", "RL_foot", "RR_foot"), hand="link06"),
}
FAMILIES: Dict[str, Tuple[str, ...]] = {}
for _name, _spec in ROBOTS.items():
    FAMILIES[_spec.family] = FAMILIES.get(_spec.family, ()) + (_name,)


@dataclass(frozen=True)
class WholeBodyProblem:
    """A whole-body IK problem on ``robot``'s full model (module docstring).

    ``q_star`` and ``seed`` are configurations of :func:`full_model` (nq,): [m], [rad],
    the free-flyer's quaternion (x, y, z, w) or the planar joint's (cos, sin).  Joints not
    in ``moving`` stay at the seed's values.
    """

    family: str
    robot: str
    index: int
    q_star: np.ndarray
    seed: np.ndarray
    constraints: Tuple[Term, ...]
    costs: Tuple[Term, ...] = ()
    moving: Tuple[str, ...] = ()
    meta: Dict[str, object] = field(default_factory=dict)


@lru_cache(maxsize=None)
def urdf_text(robot: str) -> str:
    """URDF XML of ``robot`` (a key of :data:`ROBOTS`), its ranges those a controller keeps.

    Each revolute or prismatic joint's ``<limit>`` is narrowed to its
    ``<safety_controller>`` soft limits, ``[max(lower, soft_lower_limit), min(upper,
    soft_upper_limit)]``, as MoveIt bounds the joint and ros2_ik searches it: every
    method, the sampled ``q_star`` and the check then share one range (PR2 and TIAGo keep
    0.07-0.15 rad inside their hard limits; with the hard ones a target may need the band
    the controller refuses).  An absent attribute narrows nothing; soft limits that leave
    no value are ignored.  Written here, not read from the solver.
    """
    return _soft_limited((robots.data_dir() / ROBOTS[robot].urdf).read_text())


def _soft_limited(text: str) -> str:
    root, changed = ET.fromstring(text), False
    for joint in root.iter("joint"):
        safety, limit = joint.find("safety_controller"), joint.find("limit")
        kind = joint.get("type")
        if safety is None or limit is None or kind not in ("revolute", "prismatic"):
            continue
        lower = float(limit.get("lower", "0"))
        upper = float(limit.get("upper", "0"))
        lo = max(lower, float(safety.get("soft_lower_limit", "-inf")))
        hi = min(upper, float(safety.get("soft_upper_limit", "inf")))
        if lo <= hi and (lo, hi) != (lower, upper):
            limit.set("lower", repr(lo))
            limit.set("upper", repr(hi))
            changed = True
    return ET.tostring(root, encoding="unicode") if changed else text


def srdf_text(robot: str) -> str:
    """SRDF XML of ``robot`` ('' without one)."""
    spec = ROBOTS[robot]
    return (robots.data_dir() / spec.srdf).read_text() if spec.srdf else ""


def root_joint(spec: RobotSpec):
    """Return pinocchio's root joint model of ``spec`` (free-flyer or planar)."""
    return pin.JointModelPlanar() if spec.planar else pin.JointModelFreeFlyer()


@lru_cache(maxsize=None)
def full_model(robot: str) -> pin.Model:
    """Return the robot's full pinocchio model: its URDF under ``root_joint``."""
    spec = ROBOTS[robot]
    model = pin.buildModelFromXML(urdf_text(robot), root_joint(spec))
    if spec.srdf:
        pin.loadReferenceConfigurationsFromXML(model, srdf_text(robot), False)
    return model


def moving_joints(robot: str) -> Tuple[str, ...]:
    """Names of the joints that move (the root joint first)."""
    model, spec = full_model(robot), ROBOTS[robot]
    names = [model.names[j] for j in range(1, model.njoints) if model.nvs[j] > 0]
    return (names[0],) + (spec.moving or tuple(names[1:]))


def reference_posture(robot: str) -> np.ndarray:
    """Return the reference posture (else neutral), root at the origin, in the limits."""
    model, spec = full_model(robot), ROBOTS[robot]
    q = pin.neutral(model)
    if spec.posture:
        q = model.referenceConfigurations[spec.posture].copy()
    q[:model.joints[1].nq] = pin.neutral(model)[:model.joints[1].nq]
    bounded = np.isfinite(model.lowerPositionLimit) & np.isfinite(model.upperPositionLimit)
    bounded[:model.joints[1].nq] = False
    q[bounded] = np.clip(q[bounded], model.lowerPositionLimit[bounded],
                         model.upperPositionLimit[bounded])
    return q


def contact_points_world(model, data, contact: Contact) -> np.ndarray:
    """(k, 3) world positions [m] of ``contact``'s points (after frame placements)."""
    T = data.oMf[model.getFrameId(contact.frame)]
    return np.array([T.act(np.asarray(p, float)) for p in contact.points])


def nominal(robot: str) -> np.ndarray:
    """Return the nominal stance: the reference posture, lowest contact point at z = 0."""
    model, spec = full_model(robot), ROBOTS[robot]
    q = reference_posture(robot)
    if spec.contacts:
        data = model.createData()
        pin.framesForwardKinematics(model, data, q)
        low = min(contact_points_world(model, data, c)[:, 2].min() for c in spec.contacts)
        q[2] -= low
    return q


def problems(robot: str, count: int, seed: int = 0) -> List[WholeBodyProblem]:
    """``count`` problems of ``robot``, deterministic from ``seed`` (and the robot's name)."""
    rng = np.random.default_rng([seed, zlib.crc32(robot.encode())])
    generator = Generator(robot)
    return [generator.problem(rng, i) for i in range(count)]


class Generator:
    """Problems of one robot, each from a ``q_star`` that satisfies every term."""

    MAX_DRAWS = 500

    def __init__(self, robot: str):
        self.robot, self.spec = robot, ROBOTS[robot]
        self.model = full_model(robot)
        self.data = self.model.createData()
        self.seed = nominal(robot)
        self.moving = moving_joints(robot)
        ids = [self.model.getJointId(n) for n in self.moving[1:]]
        self.legs = self._leg_joints()
        self.free = [j for j in ids if j not in self.legs]
        from wholebody_check import WholeBodyChecker  # its CoM margin, not a solver's
        self.checker = WholeBodyChecker(robot)

    def _leg_joints(self) -> List[int]:
        """Joints that move one contact frame alone (not the hand nor another contact)."""
        m = self.model
        chains = {c.frame: set(m.supports[m.frames[m.getFrameId(c.frame)].parentJoint])
                  for c in self.spec.contacts}
        if self.spec.hand:
            chains["hand"] = set(m.supports[m.frames[m.getFrameId(self.spec.hand)].parentJoint])
        out = []
        for c in self.spec.contacts:
            others = set().union(*(v for k, v in chains.items() if k != c.frame))
            out += sorted(j for j in chains[c.frame] - others if j > 1)
        return out

    def problem(self, rng: np.random.Generator, index: int) -> WholeBodyProblem:
        """Draw one whole-body problem, ``q_star`` drawn again until it meets every term."""
        draw = self._mobile if self.spec.planar else self._legged
        for attempt in range(1, self.MAX_DRAWS + 1):
            found = draw(rng)
            if found is not None:
                q_star, constraints, costs = found
                return WholeBodyProblem(self.spec.family, self.robot, index, q_star,
                                        self.seed.copy(), tuple(constraints), tuple(costs),
                                        self.moving, meta={"draws": attempt})
        raise RuntimeError(f"{self.robot}: no feasible q_star in {self.MAX_DRAWS} draws")

    # --- legged robots -------------------------------------------------------------
    def _legged(self, rng):
        q = self._uniform(self.seed.copy(), self.free, rng)
        for j in self.legs:
            i = self.model.idx_qs[j]
            q[i] = self.seed[i] + rng.uniform(-0.15, 0.15)
        q[:3] += [rng.uniform(-0.03, 0.03), rng.uniform(-0.03, 0.03),
                  -rng.uniform(0.0, 0.1) * self.seed[2]]
        rpy = [rng.uniform(-0.1, 0.1), rng.uniform(-0.1, 0.1), rng.uniform(-0.2, 0.2)]
        q[3:7] = pin.Quaternion(pin.rpy.rpyToMatrix(*rpy)).coeffs()
        targets = [self._foothold(c, rng) for c in self.spec.contacts]
        q, converged = self._place_feet(q, targets)
        if not converged or not self._within_limits(q):
            return None
        constraints = [_contact_term(c, t) for c, t in zip(self.spec.contacts, targets)]
        pin.framesForwardKinematics(self.model, self.data, q)
        if self.spec.com:
            com = Term("com_in_support", dict(contacts=self.spec.contacts,
                                              margin_m=COM_MARGIN_M))
            pin.framesForwardKinematics(self.checker.model, self.checker.data, q)
            if self.checker.com_margin(q, self.spec.contacts) < COM_MARGIN_M + COM_SLACK_M:
                return None
            constraints.append(com)
        for frame in (self.spec.base_frame, self.spec.hand):
            if frame:
                constraints.append(self._pose_term(frame))
        return q, constraints, []

    def _foothold(self, contact: Contact, rng):
        """Return the contact's nominal footprint moved on the ground: SE3 or point (3D).

        On the ground: the contact's points at z = 0 (a sole level, its frame's z axis
        vertical), at the nominal (x, y, yaw) moved by +-3 cm and +-0.15 rad.
        """
        pin.framesForwardKinematics(self.model, self.data, self.seed)
        T0 = self.data.oMf[self.model.getFrameId(contact.frame)]
        p = T0.translation + [rng.uniform(-0.03, 0.03), rng.uniform(-0.03, 0.03), 0.0]
        p[2] = -contact.points[0][2]
        if not contact.six_d:
            return p
        yaw = math.atan2(T0.rotation[1, 0], T0.rotation[0, 0]) + rng.uniform(-0.15, 0.15)
        return pin.SE3(pin.rpy.rpyToMatrix(0.0, 0.0, yaw), p)

    def _place_feet(self, q: np.ndarray, targets) -> Tuple[np.ndarray, bool]:
        """Damped Newton on the leg joints alone until every contact is on its target."""
        m, d = self.model, self.data
        cols = [m.idx_vs[j] for j in self.legs]
        for _ in range(100):
            pin.computeJointJacobians(m, d, q)
            pin.updateFramePlacements(m, d)
            errors, rows = [], []
            for contact, target in zip(self.spec.contacts, targets):
                fid = m.getFrameId(contact.frame)
                if contact.six_d:
                    errors.append(pin.log6(target.actInv(d.oMf[fid])).vector)
                    rows.append(pin.getFrameJacobian(m, d, fid, pin.LOCAL))
                else:
                    errors.append(d.oMf[fid].translation - target)
                    rows.append(pin.getFrameJacobian(m, d, fid, pin.LOCAL_WORLD_ALIGNED)[:3])
            e, J = np.concatenate(errors), np.vstack(rows)[:, cols]
            if np.linalg.norm(e) < 1e-12:
                return q, True
            step = np.zeros(m.nv)
            step[cols] = -J.T @ np.linalg.solve(J @ J.T + 1e-12 * np.eye(len(e)), e)
            q = pin.integrate(m, q, step)
        return q, False

    # --- mobile manipulators -------------------------------------------------------
    def _mobile(self, rng):
        q = self._uniform(self.seed.copy(), self.free, rng)
        r, phi, theta = rng.uniform(1.0, 2.5), *rng.uniform(-np.pi, np.pi, 2)
        q[:4] = [r * math.cos(phi), r * math.sin(phi), math.cos(theta), math.sin(theta)]
        if not self._within_limits(q):
            return None
        pin.framesForwardKinematics(self.model, self.data, q)
        target = self._pose_term(self.spec.hand)
        anchor, reach = self._reach()
        if np.linalg.norm(np.asarray(target.args["T"])[:3, 3] - anchor) <= reach:
            return None
        return q, [target], [Term("base_motion", dict(weight=1.0))]

    def _reach(self) -> Tuple[np.ndarray, float]:
        """Return the reach bound of the hand's chain: (anchor [m], bound [m]).

        The anchor is the first moving joint's origin at the seed; the bound the sum of the
        joint-to-joint distances (plus prismatic ranges) from it to the hand.
        """
        m = self.model
        frame = m.frames[m.getFrameId(self.spec.hand)]
        chain = [j for j in m.supports[frame.parentJoint] if j > 1]
        first = next(k for k, j in enumerate(chain) if m.names[j] in self.moving)
        chain = chain[first:]
        pin.framesForwardKinematics(m, self.data, self.seed)
        reach = float(np.linalg.norm(frame.placement.translation))
        for j in chain[1:]:
            reach += float(np.linalg.norm(m.jointPlacements[j].translation))
        for j in chain:
            if m.joints[j].shortname().startswith("JointModelP"):
                i = m.idx_qs[j]
                reach += float(m.upperPositionLimit[i] - m.lowerPositionLimit[i])
        return self.data.oMi[chain[0]].translation.copy(), reach

    # --- shared --------------------------------------------------------------------
    def _pose_term(self, frame: str) -> Term:
        """``frame``'s pose at the configuration of the last ``framesForwardKinematics``."""
        T = self.data.oMf[self.model.getFrameId(frame)]
        return Term("frame_pose", dict(frame=frame, T=T.homogeneous.copy()))

    def _uniform(self, q: np.ndarray, joints: Sequence[int], rng) -> np.ndarray:
        """``q`` with ``joints`` uniform in their limits (continuous: any angle)."""
        m = self.model
        for j in joints:
            i = m.idx_qs[j]
            if m.nqs[j] == 2:
                a = rng.uniform(-np.pi, np.pi)
                q[i:i + 2] = math.cos(a), math.sin(a)
            elif m.nqs[j] == 1:
                q[i] = rng.uniform(m.lowerPositionLimit[i], m.upperPositionLimit[i])
        return q

    def _within_limits(self, q: np.ndarray) -> bool:
        return self.checker.within_limits(q)


def _contact_term(contact: Contact, target) -> Term:
    if contact.six_d:
        return Term("frame_pose", dict(frame=contact.frame, T=target.homogeneous.copy()))
    return Term("frame_position", dict(frame=contact.frame, p=np.asarray(target, float).copy()))


def target_footholds(problem: WholeBodyProblem, contacts) -> np.ndarray:
    """(k, 3) world points [m] of ``contacts`` with each frame at its target in ``problem``.

    Every contact of a ``com_in_support`` term is held by a ``frame_pose`` or
    ``frame_position`` term, so this is the support polygon any answer must stand on.
    """
    targets = {t.args["frame"]: t.args for t in problem.constraints
               if t.kind in ("frame_pose", "frame_position")}
    out = []
    for contact in contacts:
        a = targets[contact.frame]
        if "T" in a:
            T = pin.SE3(np.asarray(a["T"], float))
            out += [T.act(np.asarray(p, float)) for p in contact.points]
        else:
            out += [np.asarray(a["p"], float) + np.asarray(p, float) for p in contact.points]
    return np.array(out)


def with_impossible_com(problem: WholeBodyProblem) -> Optional[WholeBodyProblem]:
    """``problem`` with its CoM margin past any point of the polygon (None without a CoM term).

    The margin becomes half the footholds' largest distance plus 1 cm: more than the
    polygon's inradius, so no configuration meets it whatever the rest of the problem.
    """
    terms = list(problem.constraints)
    k = next((i for i, t in enumerate(terms) if t.kind == "com_in_support"), None)
    if k is None:
        return None
    points = target_footholds(problem, terms[k].args["contacts"])[:, :2]
    diameter = max(float(np.linalg.norm(a - b)) for a in points for b in points)
    terms[k] = Term("com_in_support", dict(terms[k].args, margin_m=0.5 * diameter + 0.01))
    return dataclasses.replace(problem, constraints=tuple(terms),
                               meta=dict(problem.meta, infeasible="com_in_support"))


#: How far [m] :func:`with_far_contact` moves a contact: beyond any robot's leg span here.
FAR_CONTACT_M = 3.0


def with_far_contact(problem: WholeBodyProblem) -> Optional[WholeBodyProblem]:
    """``problem`` with its last contact's target moved 3 m along world x (None: no contact).

    The other contacts stay, so the two targets are farther apart than the legs reach:
    no configuration holds both, whatever the rest of the problem.  ``meta["infeasible"]``
    names the contact frame moved.
    """
    contacts = ROBOTS[problem.robot].contacts
    if not contacts:
        return None
    frame = contacts[-1].frame
    terms = list(problem.constraints)
    k = next(i for i, t in enumerate(terms)
             if t.kind in ("frame_pose", "frame_position") and t.args["frame"] == frame)
    args = dict(terms[k].args)
    if "T" in args:
        args["T"] = np.array(args["T"], float)
        args["T"][0, 3] += FAR_CONTACT_M
    else:
        args["p"] = np.asarray(args["p"], float) + [FAR_CONTACT_M, 0.0, 0.0]
    terms[k] = dataclasses.replace(terms[k], args=args)
    return dataclasses.replace(problem, constraints=tuple(terms),
                               meta=dict(problem.meta, infeasible=frame))


#: How far [m] :func:`with_far_base` moves a mobile problem's answer: an aisle, a building.
FAR_BASE_M = (30.0, 300.0)


def with_far_base(problem: WholeBodyProblem) -> Optional[WholeBodyProblem]:
    """``problem`` with its answer moved 30-300 m across the floor (None: not a mobile robot).

    ``q_star``'s base and every target move by one horizontal vector (its length and
    direction drawn from the problem's index), so the problem stays feasible by
    construction; the seed stays at the origin, so the base must travel that far.
    ``meta["far_m"]``: the distance.
    """
    if not ROBOTS[problem.robot].planar:
        return None
    rng = np.random.default_rng([problem.index, 47])
    distance, heading = rng.uniform(*FAR_BASE_M), rng.uniform(-np.pi, np.pi)
    shift = distance * np.array([math.cos(heading), math.sin(heading), 0.0])
    q_star = problem.q_star.copy()
    q_star[:2] += shift[:2]
    terms = []
    for term in problem.constraints:
        args = dict(term.args)
        if "T" in args:
            args["T"] = np.array(args["T"], float)
            args["T"][:3, 3] += shift
        elif "p" in args:
            args["p"] = np.asarray(args["p"], float) + shift
        terms.append(dataclasses.replace(term, args=args))
    return dataclasses.replace(problem, q_star=q_star, constraints=tuple(terms),
                               meta=dict(problem.meta, far_m=float(distance)))
