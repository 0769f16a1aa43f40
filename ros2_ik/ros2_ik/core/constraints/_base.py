"""A constraint with fixed bounds, the common shape of every constraint here."""
from __future__ import annotations

import numpy as np

from ..terms import Constraint
from ._checks import read_only


def _bounds(values) -> np.ndarray:
    """``values`` as a read-only 1-D float array (an array already so is kept, not copied)."""
    if type(values) is np.ndarray and values.ndim == 1 and values.dtype == np.float64 \
            and not values.flags.writeable:
        return values
    return read_only(np.array(values, dtype=float).reshape(-1))


def _all_bounds(parts) -> tuple:
    """:func:`_bounds` of each of ``parts``: one array construction for lists of one length."""
    if all(type(p) is list for p in parts) and len(set(map(len, parts))) == 1:
        rows = np.array(parts, dtype=float)
        if rows.ndim == 2:
            rows.setflags(write=False)  # its rows are read-only views
            return tuple(rows)
    return tuple(_bounds(p) for p in parts)


class BoundedConstraint(Constraint):
    """Stores ``lower_bound`` / ``upper_bound`` once, read-only."""

    def __init__(self, name: str, lower, upper, physical=None):
        """``physical``: ``(lower, upper)`` of the physical rows when they differ."""
        self.name = name
        bounds = _all_bounds((lower, upper) if physical is None else (lower, upper, *physical))
        self._lower, self._upper = bounds[:2]
        self._physical = bounds[:2] if physical is None else bounds[2:]

    @property
    def lower_bound(self) -> np.ndarray:
        """Lower bounds, shape ``(m,)`` (read-only)."""
        return self._lower

    @property
    def upper_bound(self) -> np.ndarray:
        """Upper bounds, shape ``(m,)`` (read-only)."""
        return self._upper

    @property
    def physical_bounds(self):
        """Bounds ``(lower, upper)`` of the physical rows [m or rad] (read-only)."""
        return self._physical

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"
