"""The constraint types the compiled kernels take: one line per type.

Each type is defined in one file (its Python class, its encoding for the kernels, its
compiled rows and linearisation), which ends
with the type's :class:`Kind`.  Its line in :data:`TYPES` gives it its type code, its
place in the list; the compiled dispatch, ``solvers/_dispatch_jit.py``, is generated
from this list and the costs' (:mod:`ros2_ik.core.costs.registry`) (``make dispatch``;
``test/test_dispatch_source.py`` fails while the checked-in file is stale).  The solvers
look a constraint up here by exact class (:func:`kind_of`); a constraint of a class not
listed, or registered at run time (:func:`register`: no type code, the generated
dispatch cannot call it), runs the solvers' Python path.
"""
from __future__ import annotations

from typing import Dict, Optional, Tuple

from . import angle, com, distance, gaze, orientation, polyhedron, position
from . import rotation_box, support_polygon
from .compiled import Kind

#: The constraint types, one line each: a compiled type's code is its place here.
TYPES: Tuple[Kind, ...] = (
    position.KIND,
    orientation.KIND,
    gaze.KIND,
    angle.KIND,
    distance.POINT_TO_POINT,
    distance.POINT_TO_LINE,
    support_polygon.KIND,
    com.KIND,
    polyhedron.KIND,
    rotation_box.KIND,
)
_KINDS: Dict[type, Kind] = {}


def register(kind: Kind) -> Kind:
    """Add ``kind``; raises ValueError when its class is registered already.

    A class not listed in :data:`TYPES` gets no type code: its problems run the Python
    path (the generated dispatch cannot call it; a compiled type is a line of
    :data:`TYPES`).  A listed class registered again (a test swapping its ``encode``)
    keeps its code: the dispatch calls the listed type's compiled functions.
    """
    if kind.cls in _KINDS:
        raise ValueError(f"{kind.cls.__name__} is registered already")
    code = _LISTED.get(kind.cls) if kind.compiled else None
    _KINDS[kind.cls] = kind if kind.code == code else kind._replace(code=code)
    return _KINDS[kind.cls]


def unregister(cls: type) -> None:
    """Remove the kind of class ``cls`` (a type registered for a while, in a test)."""
    _KINDS.pop(cls, None)


def kind_of(constraint) -> Optional[Kind]:
    """Return the kind of ``constraint``'s exact class, or None (not registered)."""
    return _KINDS.get(type(constraint))


def kinds() -> Tuple[Kind, ...]:
    """Return every registered kind: :data:`TYPES` in code order, then those of run time."""
    return tuple(_KINDS.values())


#: The type code of each listed compiled class: its place in :data:`TYPES`.
_LISTED: Dict[type, int] = {k.cls: code for code, k in enumerate(TYPES) if k.compiled}
if len({k.cls for k in TYPES}) != len(TYPES):
    raise ValueError("a constraint type is listed twice")
for _kind in TYPES:
    register(_kind)
