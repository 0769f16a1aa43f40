"""A constraint with fixed bounds, the common shape of every constraint here."""
from __future__ import annotations

from typing import Optional, Tuple

import numpy as np

from ..terms import Constraint
from .checks import read_only


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


def _floats(values) -> list:
    """Return ``values`` (a list of floats, a 1-D array, a number) as a list of floats."""
    return values if type(values) is list else \
        np.asarray(values, dtype=float).reshape(-1).tolist()


def outside(value: float, lower: float, upper: float) -> float:
    """Distance of ``value`` outside ``[lower, upper]`` (0 inside; NaN stays NaN)."""
    return max(lower - value, value - upper, 0.0)


class BoundedConstraint(Constraint):
    """Stores ``lower_bound`` / ``upper_bound`` once, read-only.

    The arrays are made when first read: a compiled solver reads the bounds as floats
    (:meth:`bound_lists`, :meth:`physical_lists`) and never needs them, and making them
    was a large part of each constructor.
    """

    def __init__(self, name: str, lower, upper, physical=None):
        """``physical``: ``(lower, upper)`` of the physical rows when they differ.

        Bounds: lists of floats or 1-D float arrays, already checked by the subclass.
        """
        self.name = name
        self._given = (lower, upper) if physical is None else (lower, upper, *physical)
        self._arrays: Optional[tuple] = None

    def _bound_arrays(self) -> tuple:
        """``(lower, upper, (physical lower, physical upper))``, made on first use."""
        arrays = self._arrays
        if arrays is None:  # two threads may both make them: equal arrays, either kept
            bounds = _all_bounds(self._given)
            arrays = self._arrays = (bounds[0], bounds[1],
                                     bounds[:2] if len(bounds) == 2 else bounds[2:])
        return arrays

    @property
    def lower_bound(self) -> np.ndarray:
        """Lower bounds, shape ``(m,)`` (read-only)."""
        return self._bound_arrays()[0]

    @property
    def upper_bound(self) -> np.ndarray:
        """Upper bounds, shape ``(m,)`` (read-only)."""
        return self._bound_arrays()[1]

    @property
    def physical_bounds(self):
        """Bounds ``(lower, upper)`` of the physical rows [m or rad] (read-only)."""
        return self._bound_arrays()[2]

    @property
    def num_constraints(self) -> int:
        """Number of scalar rows ``m`` (without making the arrays for lists of bounds)."""
        lower = self._given[0]
        return len(lower) if type(lower) is list else int(self.lower_bound.shape[0])

    def bound_lists(self) -> Tuple[list, list]:
        """:attr:`lower_bound` and :attr:`upper_bound` as lists of floats."""
        lower, upper = self._given[0], self._given[1]
        if type(lower) is list and type(upper) is list:  # the usual case: no call
            return lower, upper
        return _floats(lower), _floats(upper)

    def physical_lists(self) -> Tuple[list, list]:
        """:attr:`physical_bounds` as two lists of floats [m or rad]."""
        given = self._given
        return self.bound_lists() if len(given) == 2 else (_floats(given[2]),
                                                           _floats(given[3]))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"
