"""Kinematic groups of an SRDF (MoveIt's planning groups), resolved on a robot model.

An SRDF ``<group>`` lists any of ``<chain base_link tip_link/>``, ``<joint name/>``,
``<link name/>`` and ``<group name/>`` (a subgroup).  Here a group becomes:

- its movable joints: the joints of its chains (base -> tip), its listed joints, the
  joints that move the links it lists, and those of its subgroups, in model order;
- its tips: the tip links of its chains, else of its subgroups; a group of joints alone
  ends at the child link of each joint no other group joint lies below (or at the
  ``parent_link`` of an ``<end_effector parent_group="...">`` of the group);
- its base: the chain's base link for a group that is one chain, else the model root.

Groups without a movable joint (a gripper's links, a fixed base) are left out, as are
groups the model cannot resolve (a link it does not have).  A group that lists the SRDF's
floating or planar ``virtual_joint`` (itself or through a subgroup) has ``base_joint`` set
when the robot was built with that root joint (``Robot.from_urdf(..., root_joint="srdf")``):
its whole-body group is ``robot.whole_body(tip, joints)``.  No ROS here.
"""
from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass
from typing import Dict, List, Optional, Set, Tuple

import pinocchio as pin

from ros2_ik.core import errors
from ros2_ik.core.model.robot import Robot


@dataclass(frozen=True)
class SrdfGroup:
    """A group of the SRDF: its base frame, its tip frames and its movable joints."""

    name: str
    base_link: str
    tips: Tuple[str, ...]
    joints: Tuple[str, ...]
    #: True when the group is exactly one chain base_link -> tips[0].
    chain: bool
    #: The robot's floating or planar root joint when the group lists it (the SRDF's
    #: virtual joint), else None.
    base_joint: Optional[str] = None


def srdf_groups(robot: Robot, srdf_xml: Optional[str]) -> Dict[str, SrdfGroup]:
    """Return the SRDF's groups that have movable joints on ``robot``'s model, by name."""
    if not srdf_xml:
        return {}
    elements, end_effectors, base, virtual = _parsed(robot, srdf_xml)
    out: Dict[str, SrdfGroup] = {}
    for name in elements:
        try:
            group = _resolve(robot, elements, end_effectors, name, set(), base, virtual)
        except (errors.IKError, KeyError, ValueError):
            continue
        if _usable(group):
            out[name] = group
    return out


def unresolved_reason(robot: Robot, srdf_xml: Optional[str], name: str) -> Optional[str]:
    """Return why the SRDF's group ``name`` is not among :func:`srdf_groups`, or None.

    None when the SRDF has no group of that name (or it resolves).  For the error a
    request naming it gets: an SRDF written for another description of the robot (a link
    renamed, a joint the URDF lacks) otherwise reads as an unknown group.
    """
    if not srdf_xml:
        return None
    elements, end_effectors, base, virtual = _parsed(robot, srdf_xml)
    if name not in elements:
        return None
    try:
        group = _resolve(robot, elements, end_effectors, name, set(), base, virtual)
    except errors.IKError as exc:
        return str(exc)
    except KeyError as exc:
        return f"its subgroup '{exc.args[0]}' is not defined, or its subgroups form a cycle"
    except ValueError as exc:
        return str(exc)
    if _usable(group):
        return None
    return "it moves no joint of this model" if group is None or not (
        group.joints or group.base_joint) else "it has no tip link"


def _parsed(robot: Robot, srdf_xml: str):
    """Return the groups with content by name, end effectors' parent links, the base joint.

    And the names of the SRDF's virtual joints (a group may list one the model lacks).
    """
    root = ET.fromstring(srdf_xml)
    elements = {g.get("name"): g for g in root.iter("group") if g.get("name") and len(g)}
    end_effectors = {e.get("parent_group"): e.get("parent_link")
                     for e in root.iter("end_effector")
                     if e.get("parent_group") and e.get("parent_link")}
    virtual = frozenset(vj.get("name", "") for vj in root.iter("virtual_joint"))
    return elements, end_effectors, _base_joint(robot, root), virtual


def _usable(group: Optional[SrdfGroup]) -> bool:
    """Whether a resolved group moves something and has a tip."""
    return group is not None and bool(group.joints or group.base_joint) and bool(group.tips)


def _base_joint(robot: Robot, root: ET.Element) -> Optional[str]:
    """Return the robot's root joint's name when it is the SRDF's floating/planar virtual joint."""
    if robot.base_kind is None:
        return None
    name = robot.model.names[1]
    virtual = {vj.get("name") for vj in root.iter("virtual_joint")
               if vj.get("type") in ("floating", "planar")}
    return name if name in virtual else None


def _resolve(robot: Robot, elements: Dict[str, ET.Element], end_effectors: Dict[str, str],
             name: str, seen: Set[str], base: Optional[str] = None,
             virtual: frozenset = frozenset()) -> Optional[SrdfGroup]:
    if name in seen or name not in elements:  # a cycle or an undefined subgroup
        raise KeyError(name)
    seen = seen | {name}
    model = robot.model
    joint_ids: Set[int] = set()
    chain_tips: List[str] = []
    sub_tips: List[str] = []
    chains = []
    has_base = False
    for child in elements[name]:
        if child.tag == "chain":
            start, tip = child.get("base_link", ""), child.get("tip_link", "")
            chains.append((start, tip))
            joint_ids |= {robot.joint_id(j)
                          for j in robot.group(base=start, tip=tip).joint_names}
            chain_tips.append(tip)
        elif child.tag == "joint":
            has_base = has_base or (base is not None and child.get("name") == base)
            joint_ids |= _movable(robot, [child.get("name", "")], virtual)
        elif child.tag == "link":
            joint_ids |= _moving(robot, child.get("name", ""))
        elif child.tag == "group":
            sub = _resolve(robot, elements, end_effectors, child.get("name", ""), seen, base,
                           virtual)
            if sub is not None:
                has_base = has_base or sub.base_joint is not None
                joint_ids |= {robot.joint_id(j) for j in sub.joints}
                sub_tips += [t for t in sub.tips if t not in sub_tips]
    base_joint = base if has_base else None
    if not joint_ids and base_joint is None:
        return None
    if name in end_effectors:
        tips: Tuple[str, ...] = (end_effectors[name],)
    elif chain_tips or sub_tips:
        tips = tuple(dict.fromkeys(chain_tips + sub_tips))
    else:
        tips = tuple(_child_link(model, j) for j in _leaves(model, joint_ids | (
            {1} if base_joint else set())))
    one_chain = len(chains) == 1 and len(elements[name]) == 1
    return SrdfGroup(name, chains[0][0] if one_chain else robot.frame_names[0], tips,
                     tuple(model.names[j] for j in sorted(joint_ids)), one_chain, base_joint)


def _movable(robot: Robot, names: List[str], virtual: frozenset = frozenset()) -> Set[int]:
    """Return the ids of the named joints that are movable.

    Fixed and mimic joints are skipped (a group lists them; the robot moves a mimic joint
    through its leader), as are the SRDF's ``virtual`` joints (a fixed root adds none to
    the model).  A name the model does not have at all raises :class:`errors.InvalidJoint`:
    MoveIt refuses such a group, and dropping the joint would lock it unseen.
    """
    model = robot.model
    for n in names:
        if n not in virtual and n not in model.names and not model.existFrame(n):
            raise errors.InvalidJoint(n, robot.joint_names, "joint")
    return {robot.joint_id(n) for n in names if n in robot.joint_names}


def _moving(robot: Robot, link: str) -> Set[int]:
    """Return the movable joint whose child is ``link`` (none: a fixed joint attaches it)."""
    model = robot.model
    frame = model.frames[robot.frame_id(link)]
    if model.frames[frame.parentFrame].type != pin.FrameType.JOINT:
        return set()
    return _movable(robot, [model.names[frame.parentJoint]])


def _leaves(model: pin.Model, joint_ids: Set[int]) -> List[int]:
    """Return the joints of ``joint_ids`` with none of the others below them, in model order."""
    return [j for j in sorted(joint_ids)
            if not any(j != k and j in model.supports[k] for k in joint_ids)]


def _child_link(model: pin.Model, joint_id: int) -> str:
    """Return the link a joint moves: the first body frame placed on it."""
    for frame in model.frames:
        if frame.parentJoint == joint_id and frame.type == pin.FrameType.BODY:
            return frame.name
    raise ValueError(f"joint {model.names[joint_id]} moves no link")
