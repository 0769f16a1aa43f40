"""Candidate self-collision pairs: all link pairs minus adjacent links minus SRDF entries.

Adjacency is decided on pinocchio's rigid bodies: links merged through fixed joints into one
body never get a pair (their distance cannot change), and two bodies joined by a single
joint (parent and child) are adjacent, as MoveIt's setup assistant marks them.
"""
from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import FrozenSet, List, Optional, Tuple

import pinocchio as pin

from ..errors import RobotModelError

LinkPair = FrozenSet[str]


def srdf_disabled_link_pairs(srdf_xml: Optional[str]) -> FrozenSet[LinkPair]:
    """Unordered link-name pairs of the SRDF's ``<disable_collisions>`` entries."""
    if not srdf_xml:
        return frozenset()
    try:
        root = ET.fromstring(srdf_xml)
    except ET.ParseError as exc:
        raise RobotModelError(f"SRDF is not valid XML: {exc}") from exc
    pairs = set()
    for entry in root.iter("disable_collisions"):
        link1, link2 = entry.get("link1"), entry.get("link2")
        if not link1 or not link2:
            raise RobotModelError("SRDF <disable_collisions> needs both link1 and link2")
        pairs.add(frozenset((link1, link2)))
    return frozenset(pairs)


def geometry_link_name(model: pin.Model, geom: pin.GeometryObject) -> str:
    """Name of the URDF link (pinocchio frame) a geometry hangs on."""
    return model.frames[geom.parentFrame].name


def bodies_adjacent(model: pin.Model, joint_a: int, joint_b: int) -> bool:
    """Return whether two bodies are the same rigid body or parent and child."""
    parents = model.parents
    return joint_a == joint_b or parents[joint_a] == joint_b or parents[joint_b] == joint_a


def candidate_self_pairs(
    model: pin.Model, geom_model: pin.GeometryModel, srdf_xml: Optional[str] = None
) -> List[Tuple[int, int]]:
    """Geometry index pairs ``(i, j)``, ``i < j``, that self-collision checking must test."""
    disabled = srdf_disabled_link_pairs(srdf_xml)
    geoms = geom_model.geometryObjects
    links = [geometry_link_name(model, g) for g in geoms]
    pairs = []
    for i in range(len(geoms)):
        for j in range(i + 1, len(geoms)):
            if bodies_adjacent(model, geoms[i].parentJoint, geoms[j].parentJoint):
                continue
            if frozenset((links[i], links[j])) in disabled:
                continue
            pairs.append((i, j))
    return pairs
