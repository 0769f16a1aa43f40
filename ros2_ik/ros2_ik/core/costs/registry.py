"""The cost types the compiled polishing takes: one line per type.

Each type is defined in one file of this package, which ends with the type's
:class:`~ros2_ik.core.constraints.compiled.CostKind`; the polishing kernel looks a cost
up here by exact class (:func:`cost_kind_of`), and a cost of another class runs the
Python polishing.
"""
from __future__ import annotations

from typing import Dict, Optional, Tuple

from ros2_ik.core.constraints.compiled import CostKind
from ros2_ik.core.costs import angle, orientation, position, posture

#: The cost types the polishing kernel takes, by exact class.
_COST_KINDS: Dict[type, CostKind] = {k.cls: k for k in (
    posture.POSTURE, position.POSITION, orientation.ORIENTATION, angle.ANGLE)}


def cost_kind_of(cost) -> Optional[CostKind]:
    """Return the kind of ``cost``'s exact class, or None (the Python polishing runs)."""
    return _COST_KINDS.get(type(cost))


def cost_kinds() -> Tuple[CostKind, ...]:
    """Return every cost kind."""
    return tuple(_COST_KINDS.values())
