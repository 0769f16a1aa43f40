"""Drake's PointToPointDistanceConstraint and PointToLineDistanceConstraint.

As in Drake, the row is the *squared* distance [m^2] (smooth also at distance 0, where
a point-on-point or point-on-line solution sits); the constructors take the bounds in
[m] and square them, so ``lower_bound``, ``upper_bound`` and ``violation`` are in [m^2].
The bounds in [m] stay available as ``distance_lower`` / ``distance_upper``.

In physical units (what solvers drive and verification reports) the row is the distance
[m] itself, within ``[distance_lower, distance_upper]``.
"""
from __future__ import annotations

import functools
import math
from typing import Optional, Tuple

import numpy as np
import pinocchio as pin

from ros2_ik.core.kinematics import relative
from ros2_ik.core.kinematics.frames import (Placements, frame_id, perpendicular,
                                            perpendicular_floats, point_in_frame,
                                            point_in_world, point_seen, projection_off,
                                            projection_off_floats)
from ros2_ik.core.runtime.compiled import jit

from . import checks as check
from . import compiled as kernel
from . import _samples as samples
from ._base import BoundedConstraint, outside

_X = np.array([1.0, 0.0, 0.0])


def _norm_and_gradient(d: np.ndarray, J: np.ndarray, away: np.ndarray):
    """``[|d|]`` (1,) [m] and its Jacobian (1, nv); at ``d = 0`` the slope along ``away``."""
    norm = math.sqrt(float(d @ d))
    direction = d / norm if norm > 1e-12 else away
    return np.array([norm]), (direction @ J)[np.newaxis, :]


def _bend(d: np.ndarray, J: np.ndarray) -> Optional[np.ndarray]:
    """``(I - u u^T) J / |d|`` (3, nv): how the direction ``u = d / |d|`` turns (None at 0).

    A row ``|d|`` is flat in the directions that turn ``d`` at constant length; a step on
    the row alone overshoots there (:meth:`PointToPointDistanceConstraint.bend`).
    """
    norm = math.sqrt(float(d @ d))
    if norm <= 1e-12:
        return None
    u = d / norm
    return (J - np.outer(u, u @ J)) / norm


def _squared(lower: float, upper: float) -> Tuple[list, list]:
    """Return ``[lower^2], [upper^2]`` [m^2] (the rows' bounds).

    ``x * x`` is inf beyond the float range, where ``x ** 2`` raised OverflowError (a
    bound of 1e300 m).
    """
    return [lower * lower], [upper * upper]


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

    _p_B1P1 = check.lazy_array("_p_B1P1_list")
    _p_B2P2 = check.lazy_array("_p_B2P2_list")

    def __init__(
        self, model: pin.Model, frame1: str, p_B1P1, frame2: str, p_B2P2,
        distance_lower: float, distance_upper: float, *, name: Optional[str] = None,
    ):
        self._fid_1 = frame_id(model, frame1)
        self._fid_2 = frame_id(model, frame2)
        self._p_B1P1_list, self._p_B2P2_list = check.vector_lists((p_B1P1, p_B2P2),
                                                                  ("p_B1P1", "p_B2P2"))
        self.distance_lower, self.distance_upper = _distance_bounds(distance_lower,
                                                                    distance_upper)
        default = f"point_to_point({frame1},{frame2})"
        super().__init__(check.term_name(name, default),
                         *_squared(self.distance_lower, self.distance_upper),
                         physical=([self.distance_lower], [self.distance_upper]))

    def _difference(self, model: pin.Model, data: pin.Data):
        p_B2P1, J = point_in_frame(model, data, self._fid_2, None,
                                   self._fid_1, self._p_B1P1)
        return p_B2P1 - self._p_B2P2, J

    def evaluate(
        self, model: pin.Model, data: pin.Data, q: np.ndarray
    ) -> Tuple[np.ndarray, np.ndarray]:
        """``[|p_P1P2|^2]`` (1,) [m^2] and its Jacobian ``(1, nv)``."""
        d, J = self._difference(model, data)
        return np.array([float(d @ d)]), (2.0 * d @ J)[np.newaxis, :]

    def evaluate_physical(
        self, model: pin.Model, data: pin.Data, q: np.ndarray
    ) -> Tuple[np.ndarray, np.ndarray]:
        """``[|p_P1P2|]`` (1,) [m] and its Jacobian ``(1, nv)``."""
        return _norm_and_gradient(*self._difference(model, data), _X)

    def bend(self, model: pin.Model, data: pin.Data, q: np.ndarray) -> Optional[np.ndarray]:
        """Rows ``T`` (3, nv) [1/m x m/rad] of the turn of ``p_P1P2``'s direction, or None.

        The physical row is a norm: its Gauss-Newton model is flat in the two directions
        that turn ``p_P1P2`` at constant length.  Outside the upper bound by ``r`` [m], a
        step adds ``r^2 T^T T`` to its normal matrix: the curvature of the vector excess
        ``p_P1P2 (1 - upper / |p_P1P2|)``, whose step a point drawn into a small ball needs
        (the scalar row's step overshoots sideways and zig-zags).
        """
        return _bend(*self._difference(model, data))

    def measure_rows(self, placements: Placements) -> list:
        """Distance [m] of ``|p_P1P2|`` outside ``[distance_lower, distance_upper]``.

        ``|p_P1P2|`` from P1 and P2 in the world (distances do not depend on the frame).
        """
        x, y, z = point_in_world(placements.pose(self._fid_1), self._p_B1P1_list)
        a, b, c = point_in_world(placements.pose(self._fid_2), self._p_B2P2_list)
        x, y, z = x - a, y - b, z - c
        return [outside(math.sqrt(x * x + y * y + z * z), self.distance_lower,
                        self.distance_upper)]

    def sample_violation(self, frames) -> np.ndarray:
        """Squared distance [m^2] of each sample's ``|p_P1P2|`` outside the bounds."""
        d = (samples.point_world(frames.placement(self._fid_1), self._p_B1P1)
             - samples.point_world(frames.placement(self._fid_2), self._p_B2P2))
        return samples.outside(samples.norms(d)[None], self.distance_lower,
                               self.distance_upper)


class PointToLineDistanceConstraint(BoundedConstraint):
    """``distance_lower^2 <= dist(P, line)^2 <= distance_upper^2`` (one row, [m^2]).

    P is fixed in ``frame_point`` at ``p_B1P``; the line passes through Q (``p_B2Q``)
    with direction ``n_B2`` (non-zero), both fixed in ``frame_line``.  Bounds in [m].
    """

    _p_B1P = check.lazy_array("_p_B1P_list")
    _p_B2Q = check.lazy_array("_p_B2Q_list")
    _n_B2 = check.lazy_array("_n_B2_list")

    def __init__(
        self, model: pin.Model, frame_point: str, p_B1P, frame_line: str, p_B2Q, n_B2,
        distance_lower: float, distance_upper: float, *, name: Optional[str] = None,
    ):
        self._fid_point = frame_id(model, frame_point)
        self._fid_line = frame_id(model, frame_line)
        self._p_B1P_list, self._p_B2Q_list, self._n_B2_list = check.vector_lists(
            (p_B1P, p_B2Q, n_B2), ("p_B1P", "p_B2Q", "n_B2"), units=(2,))
        self.distance_lower, self.distance_upper = _distance_bounds(distance_lower,
                                                                    distance_upper)
        default = f"point_to_line({frame_point},{frame_line})"
        super().__init__(check.term_name(name, default),
                         *_squared(self.distance_lower, self.distance_upper),
                         physical=([self.distance_lower], [self.distance_upper]))

    @functools.cached_property
    def _away(self) -> np.ndarray:
        """A unit direction perpendicular to the line: the slope's direction at distance 0."""
        return check.read_only(perpendicular(self._n_B2))

    @functools.cached_property
    def _projection(self) -> np.ndarray:
        """``I - n n^T`` (3, 3): projection off the line (made when first used)."""
        return check.read_only(projection_off(self._n_B2))

    def _projected(self, model: pin.Model, data: pin.Data):
        p_B2P, J = point_in_frame(model, data, self._fid_line, None,
                                  self._fid_point, self._p_B1P)
        return self._projection @ (p_B2P - self._p_B2Q), self._projection @ J

    def evaluate(
        self, model: pin.Model, data: pin.Data, q: np.ndarray
    ) -> Tuple[np.ndarray, np.ndarray]:
        """``[u^T (I - n n^T) u]`` (1,) [m^2], ``u = p_B2P - p_B2Q``, and ``(1, nv)``."""
        projected, J = self._projected(model, data)
        return np.array([float(projected @ projected)]), (2.0 * projected @ J)[np.newaxis, :]

    def evaluate_physical(
        self, model: pin.Model, data: pin.Data, q: np.ndarray
    ) -> Tuple[np.ndarray, np.ndarray]:
        """``[dist(P, line)]`` (1,) [m] and its Jacobian ``(1, nv)``."""
        return _norm_and_gradient(*self._projected(model, data), self._away)

    def bend(self, model: pin.Model, data: pin.Data, q: np.ndarray) -> Optional[np.ndarray]:
        """Rows (3, nv) of the turn of P's offset from the line, or None (see point to point)."""
        return _bend(*self._projected(model, data))

    def measure_rows(self, placements: Placements) -> list:
        """Distance [m] of ``dist(P, line)`` outside the bounds: ``|u x n_B2|`` (n unit).

        ``u = p_B2P - p_B2Q``: P relative to the line's point Q, expressed in B2.
        """
        x, y, z = point_seen(placements, self._fid_line, self._fid_point, self._p_B1P_list)
        a, b, c = self._p_B2Q_list
        x, y, z = x - a, y - b, z - c
        n0, n1, n2 = self._n_B2_list
        u, v, w = y * n2 - z * n1, z * n0 - x * n2, x * n1 - y * n0
        return [outside(math.sqrt(u * u + v * v + w * w), self.distance_lower,
                        self.distance_upper)]

    def sample_violation(self, frames) -> np.ndarray:
        """Squared distance [m^2] of each sample's ``dist(P, line)`` outside the bounds."""
        p_WP = samples.point_world(frames.placement(self._fid_point), self._p_B1P)
        u = samples.in_frame(frames.placement(self._fid_line), p_WP) - self._p_B2Q[:, None]
        off_line = u - np.outer(self._n_B2, self._n_B2 @ u)
        return samples.outside(samples.norms(off_line)[None], self.distance_lower,
                               self.distance_upper)


__all__ = ["PointToPointDistanceConstraint", "PointToLineDistanceConstraint"]


# The kernels' form (``registry``).  Point to point: frame A is frame 2, B frame 1,
# parameters ``p_B1P1`` (3), ``p_B2P2`` (3).  Point to line: A is the line's frame, B the
# point's, parameters ``p_B1P`` (3), ``p_B2Q`` (3), the projection off the line (9, row by
# row), a unit vector perpendicular to the line (3).


def _encode_point(c: PointToPointDistanceConstraint, tolerance) -> tuple:
    return c._fid_2, c._fid_1, c._p_B1P1_list + c._p_B2P2_list


def _encode_line(c: PointToLineDistanceConstraint, tolerance) -> tuple:
    n = c._n_B2_list
    return c._fid_line, c._fid_point, (c._p_B1P_list + c._p_B2Q_list
                                       + projection_off_floats(n)
                                       + list(perpendicular_floats(n)))


@jit(inline="always")  # a thin step of the dispatch: no call of its own
def point_rows(oMf, Jf, fa, fb, prm, g, Jg, row, p3, J3):  # pragma: no cover - compiled
    """Point to point ``evaluate_physical``: ``|p_P1P2|`` [m] into row ``row``; 1.

    ``p3`` (3,), ``J3`` (3, n): scratch (P1 seen in frame 2).
    """
    relative.point_in_frame(oMf, Jf, fa, fb, prm, -1, 0, p3, J3, 0)
    dx, dy, dz = p3[0] - prm[3], p3[1] - prm[4], p3[2] - prm[5]
    norm = math.sqrt(dx * dx + dy * dy + dz * dz)
    if norm > 1e-12:
        kernel.row_from(dx / norm, dy / norm, dz / norm, J3, 0, Jg[row])
    else:
        kernel.row_from(1.0, 0.0, 0.0, J3, 0, Jg[row])
    g[row] = norm
    return 1


@jit(inline="always")  # a thin step of the dispatch: no call of its own
def line_rows(oMf, Jf, fa, fb, prm, g, Jg, row, p3, J3):  # pragma: no cover - compiled
    """Point to line ``evaluate_physical``: ``dist(P, line)`` [m] into row ``row``; 1.

    ``|P d|`` with ``d = p_AP - p_AQ`` and ``P`` the projection off the line; its row is
    ``(u @ P) @ J`` along ``u = P d / |P d|`` (the stored perpendicular at distance 0).
    """
    relative.point_in_frame(oMf, Jf, fa, fb, prm, -1, 0, p3, J3, 0)
    dx, dy, dz = p3[0] - prm[3], p3[1] - prm[4], p3[2] - prm[5]
    P = prm[6:15]
    ux = P[0] * dx + P[1] * dy + P[2] * dz
    uy = P[3] * dx + P[4] * dy + P[5] * dz
    uz = P[6] * dx + P[7] * dy + P[8] * dz
    norm = math.sqrt(ux * ux + uy * uy + uz * uz)
    if norm > 1e-12:
        ux, uy, uz = ux / norm, uy / norm, uz / norm
    else:
        ux, uy, uz = prm[15], prm[16], prm[17]
    kernel.row_from(ux * P[0] + uy * P[3] + uz * P[6], ux * P[1] + uy * P[4] + uz * P[7],
                    ux * P[2] + uy * P[5] + uz * P[8], J3, 0, Jg[row])
    g[row] = norm
    return 1


@jit
def _bend_rows(dx, dy, dz, J3, T):  # pragma: no cover - compiled
    """``_bend`` of ``d = (dx, dy, dz)`` with Jacobian ``J3`` (3, n) into ``T``; 3 or 0 rows."""
    norm = math.sqrt(dx * dx + dy * dy + dz * dz)
    if norm <= 1e-12:
        return 0
    ux, uy, uz = dx / norm, dy / norm, dz / norm
    for col in range(J3.shape[1]):
        s = ux * J3[0, col] + uy * J3[1, col] + uz * J3[2, col]
        T[0, col] = (J3[0, col] - ux * s) / norm
        T[1, col] = (J3[1, col] - uy * s) / norm
        T[2, col] = (J3[2, col] - uz * s) / norm
    return 3


@jit
def point_bend(oMf, Jf, fa, fb, prm, T, S33, p3, J3):  # pragma: no cover - compiled
    """Point to point ``bend`` into ``T`` (3, n); its rows (3, or 0 at distance 0)."""
    relative.point_in_frame(oMf, Jf, fa, fb, prm, -1, 0, p3, J3, 0)
    return _bend_rows(p3[0] - prm[3], p3[1] - prm[4], p3[2] - prm[5], J3, T)


@jit
def line_bend(oMf, Jf, fa, fb, prm, T, S33, p3, J3):  # pragma: no cover - compiled
    """Point to line ``bend`` into ``T`` (3, n): of ``P d`` and ``P J`` (:func:`line_rows`)."""
    relative.point_in_frame(oMf, Jf, fa, fb, prm, -1, 0, p3, J3, 0)
    dx, dy, dz = p3[0] - prm[3], p3[1] - prm[4], p3[2] - prm[5]
    P = prm[6:15]
    for col in range(J3.shape[1]):
        x, y, z = J3[0, col], J3[1, col], J3[2, col]
        J3[0, col] = P[0] * x + P[1] * y + P[2] * z
        J3[1, col] = P[3] * x + P[4] * y + P[5] * z
        J3[2, col] = P[6] * x + P[7] * y + P[8] * z
    return _bend_rows(P[0] * dx + P[1] * dy + P[2] * dz, P[3] * dx + P[4] * dy + P[5] * dz,
                      P[6] * dx + P[7] * dy + P[8] * dz, J3, T)


POINT_TO_POINT = kernel.Kind(PointToPointDistanceConstraint, _encode_point,
                             kernel.physical_rows, point_rows, bend=point_bend)
POINT_TO_LINE = kernel.Kind(PointToLineDistanceConstraint, _encode_line, kernel.physical_rows,
                            line_rows, bend=line_bend)
