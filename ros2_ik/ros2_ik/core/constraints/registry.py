"""The constraint and cost types the compiled kernels take: one line per type.

Each type is defined in one file (its Python class, its encoding for the kernels, its
compiled rows, linearisation and measure, its unit: the class's ``unit``), which ends
with the type's :class:`Kind`.  The solvers look a constraint up here by exact class
(:func:`kind_of`); a constraint of a class not registered, or registered without a
type code, runs the solvers' Python path.  The compiled dispatch
(``solvers._dispatch_jit``) calls each coded type's functions from its file.  The costs'
kinds are in :mod:`ros2_ik.core.costs.registry`.
"""
from __future__ import annotations

from typing import Dict, Optional, Tuple

from . import angle, distance, gaze, orientation, polyhedron, position
from .compiled import Kind

_KINDS: Dict[type, Kind] = {}


def register(kind: Kind) -> Kind:
    """Add ``kind``; raises ValueError when its class or type code is registered already."""
    if kind.cls in _KINDS:
        raise ValueError(f"{kind.cls.__name__} is registered already")
    if kind.code is not None and any(k.code == kind.code for k in _KINDS.values()):
        raise ValueError(f"type code {kind.code} is registered already")
    _KINDS[kind.cls] = kind
    return kind


def unregister(cls: type) -> None:
    """Remove the kind of class ``cls`` (a type registered for a while, in a test)."""
    _KINDS.pop(cls, None)


def kind_of(constraint) -> Optional[Kind]:
    """Return the kind of ``constraint``'s exact class, or None (not registered)."""
    return _KINDS.get(type(constraint))


def kinds() -> Tuple[Kind, ...]:
    """Return every registered kind, in registration order."""
    return tuple(_KINDS.values())


for _kind in (position.KIND, orientation.KIND, gaze.KIND, angle.KIND,
              distance.POINT_TO_POINT, distance.POINT_TO_LINE, polyhedron.KIND):
    register(_kind)
