"""A constraint with fixed bounds, the common shape of every constraint here."""
from __future__ import annotations

import numpy as np

from ..terms import Constraint
from ._checks import read_only


class BoundedConstraint(Constraint):
    """Stores ``lower_bound`` / ``upper_bound`` once, read-only."""

    def __init__(self, name: str, lower, upper, physical=None):
        """``physical``: ``(lower, upper)`` of the physical rows when they differ."""
        self.name = name
        self._lower = read_only(np.array(lower, dtype=float).reshape(-1))
        self._upper = read_only(np.array(upper, dtype=float).reshape(-1))
        self._physical = (self._lower, self._upper) if physical is None else tuple(
            read_only(np.array(b, dtype=float).reshape(-1)) for b in physical)

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
