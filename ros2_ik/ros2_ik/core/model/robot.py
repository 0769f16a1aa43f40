"""A robot model built from URDF text: the one door into pinocchio for the core.

``Robot`` owns the full pinocchio ``Model`` and hands out kinematic groups
(:class:`ros2_ik.core.model.group.Group`): a chain base->tip or an explicit joint list,
every other joint locked (Drake's ``Joint::Lock``).
"""
from __future__ import annotations

import logging
import math
import os
import sys
import threading
import xml.etree.ElementTree as ET
from typing import Callable, Dict, Iterable, List, Mapping, NamedTuple, Optional, Sequence, \
    Tuple

import numpy as np
import pinocchio as pin

from ros2_ik.core import errors
from ros2_ik.core.model import floating_base
from ros2_ik.core.model.floating_base import BaseBounds, WholeBodyGroup
from ros2_ik.core.model.frame_names import nameable_frames
from ros2_ik.core.model.group import Group
from ros2_ik.core.model.joint_limits_yaml import apply_planning_limits
from ros2_ik.core.model.joint_values import motion_subspace

_LOG = logging.getLogger(__name__)


def _is_movable_1dof(model: pin.Model, joint_id: int) -> bool:
    """Return True for revolute, continuous and prismatic joints (one velocity each)."""
    return model.nvs[joint_id] == 1 and model.joints[joint_id].shortname() != "JointModelMimic"


class Mimic(NamedTuple):
    """A URDF ``<mimic>``: the joint's value is ``multiplier * leader + offset`` [rad or m]."""

    leader: str
    multiplier: float
    offset: float

    def of(self, leader: float) -> float:
        """Return the joint's value [rad or m] with its leader at ``leader``."""
        return self.multiplier * leader + self.offset


class Coupling(NamedTuple):
    """A mimic joint a group moves with its leader: ``follower = multiplier * leader + offset``.

    Joint ids of the full model; [rad or m].
    """

    follower: int
    leader: int
    multiplier: float
    offset: float


class Robot:
    """A kinematic model: ``model`` (full pinocchio model), frame and joint names.

    A URDF mimic joint (``<mimic joint="leader">``: a parallelogram's link, a gripper's
    second finger, a torso's twin) follows its leader on the robot, so it is never a
    joint of a group: locked, it is held at its value (``locked``), else at its leader's
    through the mimic relation.  A mimic joint whose leader a group moves (a parallelogram
    of a palletiser, of a surgical arm) moves with it (:meth:`coupled`): the group's
    kinematics hold the coupling; a whole-body group through one is refused.
    """

    def __init__(self, model: pin.Model, srdf_xml: Optional[str] = None,
                 mimics: Optional[Mapping[str, Mimic]] = None, hard_limits=None,
                 acceleration_limits: Optional[np.ndarray] = None):
        """Wrap an existing pinocchio ``model``; prefer :meth:`from_urdf`.

        ``mimics``: the URDF's mimic joints by name (:func:`mimic_joints`).
        ``hard_limits``: ``(lower, upper)`` (nq,) where the joints can be, when the
        model's limits are narrower (soft limits: :func:`_apply_soft_limits`); the model's
        by default.  ``acceleration_limits``: (nv,) [rad/s^2 or m/s^2], inf where none
        is known (a URDF gives none: joint_limits.yaml's,
        :func:`~ros2_ik.core.model.joint_limits_yaml.apply_planning_limits`).
        """
        self._model = model
        #: Per velocity coordinate, the acceleration limit [rad/s^2 or m/s^2]; inf: none.
        self.acceleration_limits = np.full(model.nv, np.inf) if acceleration_limits is None \
            else np.asarray(acceleration_limits, dtype=float)
        self.acceleration_limits.setflags(write=False)
        self.srdf_xml = srdf_xml
        #: The model's mimic joints by name (their relation to their leaders).
        self.mimics: Dict[str, Mimic] = dict(mimics or {})
        self._frame_names = tuple(f.name for f in model.frames)
        # First frame of each name (pinocchio's getFrameId picks the same one).
        self._frame_ids: Dict[str, int] = {}
        for i, name in enumerate(self._frame_names):
            self._frame_ids.setdefault(name, i)
        self._joint_ids = tuple(
            j for j in range(1, model.njoints)
            if _is_movable_1dof(model, j) and model.names[j] not in self.mimics)
        self._joint_names = tuple(model.names[j] for j in self._joint_ids)
        self._joint_set = frozenset(self._joint_ids)
        self._mimic_ids = tuple(j for j in range(1, model.njoints)
                                if model.names[j] in self.mimics and model.nvs[j] == 1)
        #: Per one-axis joint id, where it can be (:meth:`joint_limits`): read once, not
        #: per group held elsewhere (each reading of the model's arrays costs microseconds).
        self._limits_of: Dict[int, Tuple[float, float]] = {
            j: _limits(model, j, hard_limits) for j in range(1, model.njoints)
            if model.nvs[j] == 1}

    @classmethod
    def from_urdf(cls, urdf_xml: str, srdf_xml: Optional[str] = None,
                  root_joint: Optional[str] = None,
                  planning_limits: Optional[Mapping[str, Sequence]] = None) -> "Robot":
        """Build from URDF text (and optional SRDF text, kept for collision users).

        ``root_joint``: None (the URDF's root is fixed in the world), ``"floating"`` (a
        free-flyer, pinocchio's ``JointModelFreeFlyer``), ``"planar"`` (x, y, theta), or
        ``"srdf"`` (the SRDF's ``virtual_joint``, named as there; a fixed one adds none).
        A floating or planar root is the base of :meth:`whole_body` groups; the other
        groups keep it locked at the origin.
        ``planning_limits``: joint name ->
        :class:`~ros2_ik.core.model.joint_limits_yaml.PlanningLimits` (or its first fields
        as a tuple: ``(min_position, max_position)``), the limits of MoveIt's
        ``joint_limits.yaml``
        (:func:`~ros2_ik.core.model.joint_limits_yaml.apply_planning_limits`).
        Raises :class:`errors.RobotModelError` on empty or unparsable XML, and on a
        planning limit that is not a finite number, a velocity or acceleration not above
        0, or positions that leave a joint no value.
        """
        if not isinstance(urdf_xml, str) or not urdf_xml.strip():
            raise errors.RobotModelError("robot_description is empty: expected URDF XML text")
        if srdf_xml is not None and not isinstance(srdf_xml, str):
            raise errors.RobotModelError("robot_description_semantic must be XML text")
        _check_srdf(srdf_xml)
        kind, name = _root_joint(root_joint, srdf_xml)
        try:
            if kind is None:
                model = pin.buildModelFromXML(urdf_xml)
            else:
                model = pin.buildModelFromXML(
                    urdf_xml, floating_base.root_joint_model(kind), name)
        except errors.IKError:
            raise
        except Exception as exc:  # pinocchio raises plain ValueError/RuntimeError
            raise errors.RobotModelError(
                "cannot parse URDF: "
                + ("; ".join(parser_errors(lambda: pin.buildModelFromXML(urdf_xml)))
                   or str(exc))) from exc
        if model.njoints <= 1:
            raise errors.RobotModelError("URDF has no movable joint")
        if root_joint == "srdf" and kind is not None:
            _check_child_link(model, srdf_xml)
        root = _xml_root(urdf_xml)  # one reading for the three below
        _warn_unread_inertials(root, urdf_xml, model)
        hard = (model.lowerPositionLimit.copy(), model.upperPositionLimit.copy())
        _apply_soft_limits(root, model)
        acceleration = apply_planning_limits(model, planning_limits, hard) \
            if planning_limits else None
        return cls(model, srdf_xml, mimic_joints(root, model), hard, acceleration)

    @property
    def base_kind(self) -> Optional[str]:
        """``"floating"`` or ``"planar"`` when the model's root joint is a base, else None."""
        return floating_base.base_kind(self._model)

    @property
    def model(self) -> pin.Model:
        """Return the full pinocchio model, to be treated as read-only."""
        return self._model

    @property
    def frame_names(self) -> Tuple[str, ...]:
        """Names of every frame of the model (links, joints, fixed frames)."""
        return self._frame_names

    @property
    def joint_names(self) -> Tuple[str, ...]:
        """Movable 1-DoF joints (revolute, continuous, prismatic), model order."""
        return self._joint_names

    def has_frame(self, name: str) -> bool:
        """Whether the model has a frame ``name`` (:meth:`frame_id` would find it)."""
        return isinstance(name, str) and name in self._frame_ids

    def frame_id(self, name: str) -> int:
        """Id of frame ``name``; :class:`errors.InvalidFrame` lists valid names."""
        fid = self._frame_ids.get(name) if isinstance(name, str) else None
        if fid is None:
            raise errors.InvalidFrame(str(name), nameable_frames(self._model))
        return fid

    def joint_limits(self, name: str) -> Tuple[float, float]:
        """Return one-axis joint ``name``'s position limits [rad or m] (+-inf: continuous).

        Where the joint can be: the URDF's ``<limit>``, not narrowed by soft limits nor
        by planning limits (a locked joint is held where ``joint_states`` say, a group's
        search keeps inside the narrower ones); widened by wider planning limits.  Mimic
        joints included; :class:`errors.InvalidJoint` for any other name.
        """
        j = self._model.getJointId(name) if isinstance(name, str) else 0
        if not 0 < j < self._model.njoints or self._model.nvs[j] != 1:
            raise errors.InvalidJoint(str(name), self._joint_names)
        return self._limits_of[j]

    def joint_id(self, name: str) -> int:
        """Pinocchio joint id of movable joint ``name`` (:class:`errors.InvalidJoint`)."""
        if not isinstance(name, str) or name not in self._joint_names:
            raise errors.InvalidJoint(str(name), self._joint_names)
        return int(self._model.getJointId(name))

    def group(
        self,
        base: Optional[str] = None,
        tip: Optional[str] = None,
        joints: Optional[Sequence[str]] = None,
        locked: Optional[Mapping[str, float]] = None,
    ) -> Group:
        """Return a kinematic group: the chain ``base``->``tip`` or the explicit ``joints``.

        Every movable joint outside the group is locked at ``locked[name]`` (default:
        0 clipped into its limits).  ``tip`` is the frame the group is usually solved
        for; ``base`` defaults to the world frame for a chain.
        """
        if tip is None:
            raise errors.InvalidArgument("group needs a tip frame")
        tip_id = self.frame_id(tip)
        if joints is None:
            base_name = base if base else self._frame_names[0]
            joint_ids = self._chain(self.frame_id(base_name), tip_id)
        else:
            base_name = base if base else self._frame_names[0]
            self.frame_id(base_name)
            joint_ids = self._explicit(joints)
        coupled = self.coupled(joint_ids)
        followers = {c.follower for c in coupled}
        self._check_mimics(joint_ids, tip_id, followers)
        self._check_limits(joint_ids)
        locked_values = self._locked_values(joint_ids, locked or {}, followers)
        return Group(self, base_name, tip, joint_ids, locked_values, coupled)

    def whole_body(
        self,
        tip: Optional[str] = None,
        joints: Optional[Sequence[str]] = None,
        locked: Optional[Mapping[str, float]] = None,
        base_bounds: Optional[BaseBounds] = None,
    ) -> WholeBodyGroup:
        """Return a whole-body group: the model's floating or planar root joint plus ``joints``.

        ``joints`` default to every movable joint (``[]``: the base alone); the others are
        locked as in
        :meth:`group`.  ``tip`` (the frame a pose target defaults to) defaults to the
        base's link.  ``base_bounds`` (:class:`floating_base.BaseBounds`): an optional
        position box and yaw range of the base; the URDF's limits of a free-flyer are
        not used.  Group vectors: :mod:`ros2_ik.core.model.floating_base`.
        """
        if self.base_kind is None:
            raise errors.InvalidArgument(
                "whole_body needs a floating or planar root joint: build the Robot with "
                "Robot.from_urdf(..., root_joint='floating' | 'planar' | 'srdf') or from a "
                "pinocchio model loaded with pin.JointModelFreeFlyer()")
        if base_bounds is not None and not isinstance(base_bounds, BaseBounds):
            raise errors.InvalidArgument(
                f"base_bounds must be a BaseBounds, got {type(base_bounds).__name__}")
        model = self._model
        if tip is None:
            tip = next(f.name for f in model.frames
                       if f.parentJoint == 1 and f.type == pin.FrameType.BODY)
        self.frame_id(tip)
        if joints is None:
            joint_ids = self._joint_ids
        elif not isinstance(joints, str) and len(joints) == 0:
            joint_ids = ()  # the base alone (an SRDF group of the virtual joint)
        else:
            joint_ids = self._explicit(joints)
        self._check_mimics(joint_ids, self.frame_id(tip))
        self._check_limits(joint_ids)
        locked_values = self._locked_values(joint_ids, locked or {})
        return WholeBodyGroup(self, tip, joint_ids, locked_values, base_bounds)

    def _chain(self, base_id: int, tip_id: int) -> Tuple[int, ...]:
        model = self._model
        base_joint = model.frames[base_id].parentJoint
        tip_support = list(model.supports[model.frames[tip_id].parentJoint])
        if base_joint not in tip_support:
            raise errors.InvalidArgument(
                f"frame '{self._frame_names[base_id]}' is not an ancestor of "
                f"'{self._frame_names[tip_id]}': no chain between them")
        below = tip_support[tip_support.index(base_joint) + 1:]
        chain = tuple(j for j in below if j in self._joint_set)
        if not chain:
            raise errors.InvalidArgument(
                f"no movable joint between '{self._frame_names[base_id]}' and "
                f"'{self._frame_names[tip_id]}'")
        return chain

    def _check_limits(self, joint_ids: Tuple[int, ...]) -> None:
        """Refuse a group joint whose URDF limits are inverted or whose axis is zero.

        A lower limit above the upper one leaves no value; a zero axis (``xyz="0 0 0"``)
        moves nothing, so the robot's own joint would be solved as if it did not move.
        """
        for j in joint_ids:
            lo, hi = _limits(self._model, j)
            if not lo <= hi:
                raise errors.InvalidArgument(
                    f"joint '{self._model.names[j]}' has lower limit {lo:g} above its upper "
                    f"limit {hi:g} in the URDF: no value is within them (fix the URDF)")
            joint = self._model.joints[j]
            if joint.nv == 1 and not np.abs(motion_subspace(joint)).max() > 1e-9:
                raise errors.InvalidArgument(
                    f"joint '{self._model.names[j]}' has a zero axis in the URDF: it moves "
                    f"nothing (give its <axis xyz> a direction)")

    def coupled(self, joint_ids: Tuple[int, ...]) -> Tuple[Coupling, ...]:
        """Return the mimic joints that group joints ``joint_ids`` lead, as :class:`Coupling`.

        Through mimics of mimics too (the relations composed).  A group moves them with
        their leaders (:class:`Group`: its reduced model holds them as pinocchio mimic
        joints, which must come after their leaders in the model: one before is held as a
        locked joint is, and refused on the tip's chain).  Each must be a revolute or
        prismatic joint, and so must its leader (one coordinate each: a continuous joint's
        is a (cos, sin) pair); else InvalidArgument.
        """
        model, moved, out = self._model, set(joint_ids), []
        for name, mimic in self.mimics.items():
            multiplier, offset, leader = mimic.multiplier, mimic.offset, mimic.leader
            while leader in self.mimics:  # f = m (m' l' + o') + o
                inner = self.mimics[leader]
                multiplier, offset = multiplier * inner.multiplier, \
                    multiplier * inner.offset + offset
                leader = inner.leader
            follower_id, leader_id = model.getJointId(name), model.getJointId(leader)
            if leader_id not in moved or follower_id < leader_id:
                continue  # pinocchio's mimic joint comes after its leader: not coupled
            if model.nqs[follower_id] != 1 or model.nqs[leader_id] != 1:
                raise errors.InvalidArgument(
                    f"joint '{name}' follows '{leader}' (URDF <mimic>), which the group "
                    f"moves; ros2_ik couples revolute and prismatic joints only, not a "
                    f"continuous one")
            out.append(Coupling(follower_id, leader_id, multiplier, offset))
        return tuple(sorted(out))

    def _check_mimics(self, joint_ids: Tuple[int, ...], tip_id: int,
                      coupled: Iterable[int] = ()) -> None:
        """Refuse a tip that hangs below a mimic joint whose leader ``joint_ids`` move.

        Unless the group moves it with its leader (``coupled``: :meth:`coupled`; a
        whole-body group none).
        """
        model = self._model
        moved = {model.names[j] for j in joint_ids}
        for j in model.supports[model.frames[tip_id].parentJoint]:
            name = model.names[j]
            leader = self._leader(name)
            if leader in moved and j not in coupled:
                raise errors.InvalidArgument(
                    f"joint '{name}' follows '{leader}' (URDF <mimic>), which the group "
                    f"moves, and carries '{self._frame_names[tip_id]}': ros2_ik does not "
                    f"solve a chain through a mimic joint")

    def _leader(self, name: str) -> str:
        """Return the joint that drives ``name`` through mimic relations ('' when none).

        The relations have no cycle (:func:`mimic_joints`).
        """
        leader = ""
        while name in self.mimics:
            leader = name = self.mimics[name].leader
        return leader

    def _explicit(self, joints: Sequence[str]) -> Tuple[int, ...]:
        if isinstance(joints, str) or len(joints) == 0:
            raise errors.InvalidArgument("joints must be a non-empty list of joint names")
        if len(set(joints)) != len(joints):
            raise errors.InvalidArgument(f"duplicated joint names in {list(joints)}")
        for name in joints:
            if name in self.mimics:
                raise errors.InvalidArgument(
                    f"joint '{name}' follows '{self._leader(name)}' (URDF <mimic>): a group "
                    f"moves the leader, not the mimic joint")
        return tuple(sorted(self.joint_id(name) for name in joints))

    def _locked_values(self, group_ids: Tuple[int, ...], locked: Mapping[str, float],
                       coupled: Iterable[int] = ()) -> Dict[int, float]:
        """Return each locked joint's value [rad or m]: outside the group and not ``coupled``.

        ``locked``'s, else 0 (a mimic joint: its leader's through the relation), clipped
        into the joint's limits.  ``coupled``: the mimic joints the group moves.
        """
        outside = [j for j in self._joint_ids if j not in group_ids] + [
            j for j in self._mimic_ids if j not in coupled]
        outside_names = {self._model.names[j]: j for j in outside}
        for name in locked:
            if name not in outside_names:
                moved = any(self._model.names[j] == name for j in group_ids)
                raise errors.InvalidJoint(
                    str(name), outside_names, "locked",
                    "is one the group moves: only joints outside the group are locked"
                    if moved else "")
        values, by_name = {}, {}
        for name, j in outside_names.items():  # mimic joints last: their leaders first
            lo, hi = self._limits_of[j]
            value = float(locked[name]) if name in locked else self._mimicked(name, by_name)
            if not math.isfinite(value):
                raise errors.InvalidArgument(f"locked value of '{name}' is not finite")
            values[j] = by_name[name] = min(max(value, lo), hi)  # floats: np.clip is dearer
        return values

    def _mimicked(self, name: str, values: Mapping[str, float]) -> float:
        """Return a locked joint's default [rad or m]: 0, or a mimic joint's by its leader's."""
        mimic = self.mimics.get(name)
        if mimic is None:
            return 0.0
        leader = values.get(mimic.leader)
        if leader is None:  # a leader the group moves, or a mimic of a mimic not yet set
            leader = self._mimicked(mimic.leader, values)
        return mimic.of(leader)

    def followers(self, values: Mapping[str, float]) -> Dict[str, float]:
        """Return the mimic joints ``values`` [rad or m] lead but do not name, at their values.

        A mimic joint follows its leader's value there, or the value its own leader
        takes (a mimic of a mimic); one whose chain of leaders reaches no joint of
        ``values`` is left out.  The relations have no cycle (:func:`mimic_joints`).
        """
        out: Dict[str, float] = {}
        for name in self.mimics:
            chain = [name]
            while chain[-1] in self.mimics and chain[-1] not in values \
                    and chain[-1] not in out:
                chain.append(self.mimics[chain[-1]].leader)
            value = values.get(chain[-1], out.get(chain[-1]))
            if value is None or chain[-1] == name:
                continue
            for follower in reversed(chain[:-1]):
                value = out[follower] = self.mimics[follower].of(float(value))
        return out


#: One capture of file descriptor 2 at a time: two interleaved would leave it pointing
#: at the other's temporary file.
_STDERR_CAPTURE = threading.Lock()


def parser_errors(parse: Callable[[], object]) -> List[str]:
    """Return the URDF parser's error messages while ``parse()`` runs, in its own words.

    urdfdom names the culprit ("Joint [j4] is of type REVOLUTE but it does not specify
    limits", "child link [tool] of joint [j6] not found") only on stderr, through
    console_bridge; pinocchio then raises "The XML stream does not contain a valid URDF
    model", or, for a ``<collision>`` it cannot read, goes on without it.  ``parse`` (a
    pinocchio call on URDF text) runs with file descriptor 2 read into a temporary file;
    the parser's error lines are returned without their source locations, anything else
    written there meanwhile (another thread's log) is written back.  For the error paths
    only: ``parse`` runs again, its result and any exception dropped.
    """
    import tempfile  # noqa: PLC0415 (error paths only: not an import-time cost)
    with _STDERR_CAPTURE, tempfile.TemporaryFile() as captured:
        sys.stderr.flush()
        try:
            saved = os.dup(2)
        except OSError:  # no stderr (a daemon): nothing to read the reasons from
            return []
        os.dup2(captured.fileno(), 2)
        try:
            parse()
        except Exception:  # the refusal being explained
            pass
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        captured.seek(0)
        lines = captured.read().decode(errors="replace").splitlines()
    reasons, others = [], []
    for line in lines:
        text = line.strip()
        if text.startswith("Error:"):
            reasons.append(text[len("Error:"):].strip())
        elif not (text.startswith("at line ") and reasons):
            others.append(line)
    if others:
        sys.stderr.write("\n".join(others) + "\n")
    return reasons


#: The URDF elements :func:`_xml_root` is read for (a text without them is not parsed).
_READ_TAGS = ("<mimic", "<inertial", "<safety_controller")


def _xml_root(urdf_xml: str) -> Optional[ET.Element]:
    """Return the URDF's root element, for what pinocchio's model does not keep; or None.

    None when the text has none of :data:`_READ_TAGS`, or when ElementTree cannot read
    what tinyxml2 did (a stray ``<xacro:...>`` with its prefix unbound): the soft limits
    and the inertial check are then skipped with a warning.  Mimic relations cannot be:
    without them every mimic joint would move on its own, so a RobotModelError says so.
    """
    if not any(tag in urdf_xml for tag in _READ_TAGS):
        return None
    try:
        return ET.fromstring(urdf_xml)
    except ET.ParseError as exc:
        if "<mimic" in urdf_xml:
            raise errors.RobotModelError(
                f"cannot read the URDF's <mimic> relations: the text is not well-formed "
                f"XML ({exc})") from None
        _LOG.warning("URDF: not well-formed XML (%s): its <safety_controller> soft limits "
                     "and the <inertial> check are skipped", exc)
        return None


def _apply_soft_limits(root: Optional[ET.Element], model: pin.Model) -> None:
    """Narrow ``model``'s position limits to the URDF's ``<safety_controller>`` soft limits.

    A revolute or prismatic joint's range is then ``[max(lower, soft_lower_limit),
    min(upper, soft_upper_limit)]`` [rad or m], as MoveIt bounds it (``jointBoundsFromURDF``)
    and as the robot's safety controller holds it: PR2 and TIAGo keep 0.07-0.15 rad inside
    their hard limits.  The groups' ranges, so every search, check and proof; a locked
    joint is held, and a default clipped, within the hard ones (:meth:`Robot.joint_limits`).
    An attribute the element does not give narrows nothing (urdfdom would read it as 0);
    soft limits that leave no value are ignored with a warning.  Continuous joints have
    no limits to narrow.
    """
    if root is None:
        return
    lower, upper = model.lowerPositionLimit.copy(), model.upperPositionLimit.copy()
    for joint in root.iter("joint"):
        safety, name = joint.find("safety_controller"), joint.get("name", "")
        if safety is None or joint.get("type") not in ("revolute", "prismatic") \
                or not model.existJointName(name):
            continue
        j = model.getJointId(name)
        if model.nqs[j] != 1:
            continue
        iq = model.idx_qs[j]
        lo = max(lower[iq], float(safety.get("soft_lower_limit", "-inf")))
        hi = min(upper[iq], float(safety.get("soft_upper_limit", "inf")))
        if lo <= hi:
            lower[iq], upper[iq] = lo, hi
        else:
            _LOG.warning("URDF: joint '%s': its soft limits leave no value inside its limits "
                         "[%g, %g]: the limits are kept", name, lower[iq], upper[iq])
    model.lowerPositionLimit, model.upperPositionLimit = lower, upper


def _warn_unread_inertials(root: Optional[ET.Element], urdf_xml: str,
                           model: pin.Model) -> None:
    """Log a warning when the model's mass is not the URDF's: urdfdom dropped an ``<inertial>``.

    urdfdom keeps a link whose ``<inertial>`` it cannot read ("2 kg" as a mass), massless,
    saying so only on stderr: the kinematics are right, centre-of-mass terms are not.  The
    URDF's masses summed against the model's (equal on every URDF of example-robot-data
    and shared/real_urdfs); the warning names urdfdom's reasons.
    """
    if root is None:
        return
    total = 0.0
    for link in root.iter("link"):
        mass = link.find("inertial/mass")
        if mass is not None:
            try:
                total += float(mass.get("value", "nan"))
            except ValueError:
                total = math.nan
    read = sum(inertia.mass for inertia in model.inertias)
    if math.isclose(total, read, rel_tol=1e-9, abs_tol=1e-12):
        return
    reasons = parser_errors(lambda: pin.buildModelFromXML(urdf_xml))
    _LOG.warning("URDF: the links' <inertial> sum to %s kg, the model read %.6g kg: %s. "
                 "Those links count as massless: centre-of-mass terms would be wrong",
                 total, read, "; ".join(reasons) or "an <inertial> was not read")


def mimic_joints(root: Optional[ET.Element], model: pin.Model) -> Dict[str, Mimic]:
    """Return the URDF's mimic joints of ``model`` by name (one-axis joints of the model).

    A ``<mimic>`` whose leader is no one-axis joint of the model is left out (the joint
    then moves on its own, as pinocchio reads it); mimic joints that lead each other round
    in a cycle raise :class:`errors.RobotModelError` naming them.  Read after pinocchio's
    parser, which refuses a multiplier or offset that is not a finite number.  ``root``:
    the URDF's root element (:func:`_xml_root`; None: no mimic joint).
    """
    if root is None:
        return {}
    names = {model.names[j] for j in range(1, model.njoints) if model.nvs[j] == 1}
    out = {}
    for joint in root.findall("joint"):
        mimic, name = joint.find("mimic"), joint.get("name", "")
        if mimic is None or name not in names or mimic.get("joint") not in names:
            continue
        out[name] = Mimic(mimic.get("joint"), float(mimic.get("multiplier", 1.0)),
                          float(mimic.get("offset", 0.0)))
    for name in out:
        seen = [name]
        while seen[-1] in out:
            seen.append(out[seen[-1]].leader)
            if seen[-1] in seen[:-1]:
                raise errors.RobotModelError(
                    f"mimic joints lead each other in a cycle: {' -> '.join(seen)}")
    return out


def _root_joint(root_joint: Optional[str], srdf_xml: Optional[str]
                ) -> Tuple[Optional[str], str]:
    """``(kind, name)`` of the root joint to add: kind None for a fixed root."""
    if root_joint is None:
        return None, "root_joint"
    if root_joint != "srdf":
        floating_base.root_joint_model(root_joint)  # InvalidArgument on an unknown kind
        return root_joint, "root_joint"
    if not srdf_xml or not srdf_xml.strip():
        raise errors.InvalidArgument("root_joint='srdf' needs the SRDF text")
    for vj in ET.fromstring(srdf_xml).iter("virtual_joint"):
        kind = vj.get("type", "")
        if kind in (floating_base.FLOATING, floating_base.PLANAR):
            return kind, vj.get("name") or "root_joint"
        if kind == "fixed":
            return None, "root_joint"
        raise errors.RobotModelError(f"SRDF virtual_joint type {kind!r} is not supported")
    return None, "root_joint"


def _check_child_link(model: pin.Model, srdf_xml: str) -> None:
    """Raise RobotModelError unless the virtual joint's child_link is the URDF's root link."""
    for vj in ET.fromstring(srdf_xml).iter("virtual_joint"):
        if vj.get("type") in (floating_base.FLOATING, floating_base.PLANAR):
            child = vj.get("child_link", "")
            roots = [f.name for f in model.frames
                     if f.parentJoint == 1 and f.type == pin.FrameType.BODY]
            if child not in roots[:1]:
                raise errors.RobotModelError(
                    f"SRDF virtual_joint '{vj.get('name')}' moves child_link '{child}', but "
                    f"the URDF's root link is {roots[:1]}")
            return


def _check_srdf(srdf_xml: Optional[str]) -> None:
    """Raise RobotModelError unless the SRDF is empty or XML with a <robot> root."""
    if not srdf_xml or not srdf_xml.strip():
        return
    try:
        root = ET.fromstring(srdf_xml)
    except ET.ParseError as exc:
        raise errors.RobotModelError(
            f"robot_description_semantic is not XML: {exc}") from None
    if root.tag != "robot":
        raise errors.RobotModelError(
            f"robot_description_semantic: root element is <{root.tag}>, expected <robot>")


def _limits(model: pin.Model, joint_id: int, arrays=None) -> Tuple[float, float]:
    """Position limits of a 1-DoF joint; +-inf for continuous joints.

    ``arrays``: ``(lower, upper)`` (nq,) to read instead of the model's.
    """
    if model.nqs[joint_id] == 2:
        return -np.inf, np.inf
    iq = model.idx_qs[joint_id]
    lower, upper = arrays if arrays is not None else (model.lowerPositionLimit,
                                                      model.upperPositionLimit)
    return float(lower[iq]), float(upper[iq])
