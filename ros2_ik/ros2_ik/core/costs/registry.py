"""The cost types the compiled polishing takes: one line per type.

Each type is defined in one file of this package, which ends with the type's
:class:`~ros2_ik.core.constraints.compiled.CostKind`.  Its line in :data:`COST_TYPES`
gives it its type code, its place in the list (the generated dispatch,
``solvers/_dispatch_jit.py``, calls its compiled value by that code: ``make dispatch``).
The polishing kernel looks a cost up here by exact class (:func:`cost_kind_of`); a cost
of another class runs the Python polishing.
"""
from __future__ import annotations

from typing import Dict, Optional, Tuple

from ros2_ik.core.constraints.compiled import CostKind
from ros2_ik.core.costs import angle, base_motion, orientation, position, posture

#: The cost types the polishing kernel takes, one line each: a type's code is its place.
COST_TYPES: Tuple[CostKind, ...] = (
    posture.POSTURE,
    position.POSITION,
    orientation.ORIENTATION,
    angle.ANGLE,
    base_motion.BASE_MOTION,
)
_COST_KINDS: Dict[type, CostKind] = {
    k.cls: k._replace(code=code) for code, k in enumerate(COST_TYPES)}


def cost_kind_of(cost) -> Optional[CostKind]:
    """Return the kind of ``cost``'s exact class, or None (the Python polishing runs)."""
    return _COST_KINDS.get(type(cost))


def cost_kinds() -> Tuple[CostKind, ...]:
    """Return every cost kind, in code order."""
    return tuple(_COST_KINDS.values())
