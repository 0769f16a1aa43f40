"""Drake's PointToPointDistanceConstraint and PointToLineDistanceConstraint.

As in Drake, the row is the *squared* distance [m^2] (smooth also at distance 0, where
a point-on-point or point-on-line solution sits); the constructors take the bounds in
[m] and square them, so ``lower_bound``, ``upper_bound`` and ``violation`` are in [m^2].
The bounds in [m] stay available as ``distance_lower`` / ``distance_upper``.
"""
from __future__ import annotations

from typing import Optional, Tuple

import numpy as np
import pinocchio as pin

from . import _checks as check
from ._base import BoundedConstraint
from ._frames import frame_id, point_in_frame


def _distance_bounds(distance_lower, distance_upper) -> Tuple[float, float]:
    lower = check.non_negative(distance_lower, "distance_lower")
    upper = check.non_negative(distance_upper, "distance_upper", allow_inf=True)
    check.ordered(lower, upper, "distance_lower", "distance_upper")
    return lower, upper


class PointToPointDistanceConstraint(BoundedConstraint):
    """``distance_lower^2 <= |p_P1P2|^2 <= distance_upper^2`` (one row, [m^2]).

    P1 is fixed in ``frame1`` at ``p_B1P1``, P2 in ``frame2`` at ``p_B2P2`` ([m]);
    ``0 <= distance_lower <= distance_upper`` in [m] (``distance_upper`` may be ``inf``).
    """

    def __init__(
        self, model: pin.Model, frame1: str, p_B1P1, frame2: str, p_B2P2,
        distance_lower: float, distance_upper: float, *, name: Optional[str] = None,
    ):
        self._fid_1 = frame_id(model, frame1)
        self._fid_2 = frame_id(model, frame2)
        self._p_B1P1 = check.vector3(p_B1P1, "p_B1P1")
        self._p_B2P2 = check.vector3(p_B2P2, "p_B2P2")
        self.distance_lower, self.distance_upper = _distance_bounds(distance_lower,
                                                                    distance_upper)
        default = f"point_to_point({frame1},{frame2})"
        super().__init__(check.term_name(name, default),
                         [self.distance_lower ** 2], [self.distance_upper ** 2])

    def evaluate(
        self, model: pin.Model, data: pin.Data, q: np.ndarray
    ) -> Tuple[np.ndarray, np.ndarray]:
        """``[|p_P1P2|^2]`` (1,) [m^2] and its Jacobian ``(1, nv)``."""
        p_B2P1, J = point_in_frame(model, data, self._fid_2, None,
                                   self._fid_1, self._p_B1P1)
        d = p_B2P1 - self._p_B2P2
        return np.array([float(d @ d)]), (2.0 * d @ J)[np.newaxis, :]


class PointToLineDistanceConstraint(BoundedConstraint):
    """``distance_lower^2 <= dist(P, line)^2 <= distance_upper^2`` (one row, [m^2]).

    P is fixed in ``frame_point`` at ``p_B1P``; the line passes through Q (``p_B2Q``)
    with direction ``n_B2`` (non-zero), both fixed in ``frame_line``.  Bounds in [m].
    """

    def __init__(
        self, model: pin.Model, frame_point: str, p_B1P, frame_line: str, p_B2Q, n_B2,
        distance_lower: float, distance_upper: float, *, name: Optional[str] = None,
    ):
        self._fid_point = frame_id(model, frame_point)
        self._fid_line = frame_id(model, frame_line)
        self._p_B1P = check.vector3(p_B1P, "p_B1P")
        self._p_B2Q = check.vector3(p_B2Q, "p_B2Q")
        n = check.unit_vector3(n_B2, "n_B2")
        self._projection = check.read_only(np.eye(3) - np.outer(n, n))
        self.distance_lower, self.distance_upper = _distance_bounds(distance_lower,
                                                                    distance_upper)
        default = f"point_to_line({frame_point},{frame_line})"
        super().__init__(check.term_name(name, default),
                         [self.distance_lower ** 2], [self.distance_upper ** 2])

    def evaluate(
        self, model: pin.Model, data: pin.Data, q: np.ndarray
    ) -> Tuple[np.ndarray, np.ndarray]:
        """``[u^T (I - n n^T) u]`` (1,) [m^2], ``u = p_B2P - p_B2Q``, and ``(1, nv)``."""
        p_B2P, J = point_in_frame(model, data, self._fid_line, None,
                                  self._fid_point, self._p_B1P)
        projected = self._projection @ (p_B2P - self._p_B2Q)
        return np.array([float(projected @ projected)]), (2.0 * projected @ J)[np.newaxis, :]


__all__ = ["PointToPointDistanceConstraint", "PointToLineDistanceConstraint"]
