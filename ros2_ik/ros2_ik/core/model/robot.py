"""A robot model built from URDF text: the one door into pinocchio for the core.

``Robot`` owns the full pinocchio ``Model`` and hands out kinematic groups
(:class:`ros2_ik.core.model.group.Group`): a chain base->tip or an explicit joint list,
every other joint locked (Drake's ``Joint::Lock``).
"""
from __future__ import annotations

import logging
import xml.etree.ElementTree as ET
from typing import Dict, Mapping, Optional, Sequence, Tuple

import numpy as np
import pinocchio as pin

from ros2_ik.core import errors
from ros2_ik.core.model.frame_names import nameable_frames
from ros2_ik.core.model.group import Group

_LOG = logging.getLogger(__name__)


def _is_movable_1dof(model: pin.Model, joint_id: int) -> bool:
    """Return True for revolute, continuous and prismatic joints (one velocity each)."""
    return model.nvs[joint_id] == 1 and model.joints[joint_id].shortname() != "JointModelMimic"


class Robot:
    """A kinematic model: ``model`` (full pinocchio model), frame and joint names."""

    def __init__(self, model: pin.Model, srdf_xml: Optional[str] = None):
        """Wrap an existing pinocchio ``model``; prefer :meth:`from_urdf`."""
        self._model = model
        self.srdf_xml = srdf_xml
        self._frame_names = tuple(f.name for f in model.frames)
        # First frame of each name (pinocchio's getFrameId picks the same one).
        self._frame_ids: Dict[str, int] = {}
        for i, name in enumerate(self._frame_names):
            self._frame_ids.setdefault(name, i)
        self._joint_ids = tuple(
            j for j in range(1, model.njoints) if _is_movable_1dof(model, j))
        self._joint_names = tuple(model.names[j] for j in self._joint_ids)

    @classmethod
    def from_urdf(cls, urdf_xml: str, srdf_xml: Optional[str] = None) -> "Robot":
        """Build from URDF text (and optional SRDF text, kept for collision users).

        Raises :class:`errors.RobotModelError` on empty or unparsable XML.
        """
        if not isinstance(urdf_xml, str) or not urdf_xml.strip():
            raise errors.RobotModelError("robot_description is empty: expected URDF XML text")
        try:
            model = pin.buildModelFromXML(urdf_xml)
        except Exception as exc:  # pinocchio raises plain ValueError/RuntimeError
            raise errors.RobotModelError(f"cannot parse URDF: {exc}") from exc
        if model.njoints <= 1:
            raise errors.RobotModelError("URDF has no movable joint")
        if srdf_xml is not None and not isinstance(srdf_xml, str):
            raise errors.RobotModelError("robot_description_semantic must be XML text")
        _check_srdf(srdf_xml)
        return cls(model, srdf_xml)

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

    def frame_id(self, name: str) -> int:
        """Id of frame ``name``; :class:`errors.InvalidFrame` lists valid names."""
        fid = self._frame_ids.get(name) if isinstance(name, str) else None
        if fid is None:
            raise errors.InvalidFrame(str(name), nameable_frames(self._model))
        return fid

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
        locked_values = self._locked_values(joint_ids, locked or {})
        return Group(self, base_name, tip, joint_ids, locked_values)

    def _chain(self, base_id: int, tip_id: int) -> Tuple[int, ...]:
        model = self._model
        base_joint = model.frames[base_id].parentJoint
        tip_support = list(model.supports[model.frames[tip_id].parentJoint])
        if base_joint not in tip_support:
            raise errors.InvalidArgument(
                f"frame '{self._frame_names[base_id]}' is not an ancestor of "
                f"'{self._frame_names[tip_id]}': no chain between them")
        below = tip_support[tip_support.index(base_joint) + 1:]
        chain = tuple(j for j in below if _is_movable_1dof(model, j))
        if not chain:
            raise errors.InvalidArgument(
                f"no movable joint between '{self._frame_names[base_id]}' and "
                f"'{self._frame_names[tip_id]}'")
        return chain

    def _explicit(self, joints: Sequence[str]) -> Tuple[int, ...]:
        if isinstance(joints, str) or len(joints) == 0:
            raise errors.InvalidArgument("joints must be a non-empty list of joint names")
        if len(set(joints)) != len(joints):
            raise errors.InvalidArgument(f"duplicated joint names in {list(joints)}")
        return tuple(sorted(self.joint_id(name) for name in joints))

    def _locked_values(self, group_ids: Tuple[int, ...],
                       locked: Mapping[str, float]) -> Dict[int, float]:
        outside = [j for j in self._joint_ids if j not in group_ids]
        outside_names = {self._model.names[j]: j for j in outside}
        for name in locked:
            if name not in outside_names:
                raise errors.InvalidJoint(str(name), outside_names)
        values = {}
        for name, j in outside_names.items():
            lo, hi = _limits(self._model, j)
            value = float(locked.get(name, 0.0))
            if not np.isfinite(value):
                raise errors.InvalidArgument(f"locked value of '{name}' is not finite")
            values[j] = float(np.clip(value, lo, hi))
        return values


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


def _limits(model: pin.Model, joint_id: int) -> Tuple[float, float]:
    """Position limits of a 1-DoF joint; +-inf for continuous joints."""
    if model.nqs[joint_id] == 2:
        return -np.inf, np.inf
    iq = model.idx_qs[joint_id]
    return float(model.lowerPositionLimit[iq]), float(model.upperPositionLimit[iq])
