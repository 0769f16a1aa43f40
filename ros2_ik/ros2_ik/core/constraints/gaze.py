"""Drake's GazeTargetConstraint: a target point inside a cone fixed in another frame."""
from __future__ import annotations

import math
from typing import Optional, Tuple

import numpy as np
import pinocchio as pin

from . import _checks as check
from . import _samples as samples
from ._base import BoundedConstraint
from ._frames import cross, frame_id, perpendicular, point_in_frame, vector_angle


class GazeTargetConstraint(BoundedConstraint):
    """Target T (fixed in B at ``p_BT``) inside the cone from S (``p_AS``) along ``n_A``.

    Drake's two rows, both ``>= 0``, with ``p = p_AT - p_AS`` and ``n`` = unit ``n_A``::

        g0 = p . n                              [m]
        g1 = (p . n)^2 - cos(theta)^2 |p|^2     [m^2]

    ``cone_half_angle`` (theta) in [rad] must lie in ``[0, pi/2]``: Drake's documentation
    says ``[0, pi]`` but its code rejects more than pi/2, because for a wider cone these
    rows describe the cone of half angle ``pi - theta`` instead.

    In physical units: one row, the angle ``alpha`` [rad] between ``p`` and ``n``,
    ``alpha <= cone_half_angle`` (``alpha = 0`` when T coincides with S, which Drake's
    rows accept too).
    """

    unit = "rad"

    _p_AS = check.lazy_array("_p_AS_list")
    _n_A = check.lazy_array("_n_A_list")
    _p_BT = check.lazy_array("_p_BT_list")

    def __init__(
        self, model: pin.Model, frame_A: str, p_AS, n_A, frame_B: str, p_BT,
        cone_half_angle: float, *, name: Optional[str] = None,
    ):
        self._fid_A = frame_id(model, frame_A)
        self._fid_B = frame_id(model, frame_B)
        self._p_AS_list, self._n_A_list, self._p_BT_list = check.vector_lists(
            (p_AS, n_A, p_BT), ("p_AS", "n_A", "p_BT"), units=(1,))
        self.cone_half_angle = check.angle(
            cone_half_angle, "cone_half_angle", math.pi / 2, "pi/2")
        self._cos2 = math.cos(self.cone_half_angle) ** 2
        default = f"gaze({frame_A}->{frame_B})"
        super().__init__(check.term_name(name, default), [0.0, 0.0], [math.inf, math.inf],
                         physical=([-math.inf], [self.cone_half_angle]))

    @property
    def units(self):
        """One row in [rad] (the two Drake rows are measured as one angle)."""
        return ("rad",)

    def evaluate(
        self, model: pin.Model, data: pin.Data, q: np.ndarray
    ) -> Tuple[np.ndarray, np.ndarray]:
        """``[g0, g1]`` (2,) and the Jacobian ``(2, nv)``."""
        p_AT, J = point_in_frame(
            model, data, self._fid_A, None, self._fid_B, self._p_BT)
        p = p_AT - self._p_AS
        p_dot_n = float(p @ self._n_A)
        value = np.array([p_dot_n, p_dot_n * p_dot_n - self._cos2 * float(p @ p)])
        dg_dp = np.empty((2, 3))
        dg_dp[0] = self._n_A
        dg_dp[1] = 2.0 * (p_dot_n * self._n_A - self._cos2 * p)
        return value, dg_dp @ J

    def evaluate_physical(
        self, model: pin.Model, data: pin.Data, q: np.ndarray
    ) -> Tuple[np.ndarray, np.ndarray]:
        """``[alpha]`` (1,) [rad] and its Jacobian ``(1, nv)``.

        ``d alpha / dp = (c (n x (p x n)) / s - s n) / |p|^2`` with ``c = p . n``,
        ``s = |p x n|``; on the axis behind S (alpha = pi) the one-sided slope along an
        axis perpendicular to n.
        """
        p_AT, J = point_in_frame(model, data, self._fid_A, None, self._fid_B, self._p_BT)
        p, n = p_AT - self._p_AS, self._n_A
        pxn = cross(p, n)
        s, c, pp = math.sqrt(float(pxn @ pxn)), float(p @ n), float(p @ p)
        alpha = math.atan2(s, c)
        if pp < 1e-24:
            return np.array([alpha]), np.zeros((1, J.shape[1]))
        if s > 1e-12 * math.sqrt(pp):
            grad_p = (c * cross(n, pxn) / s - s * n) / pp
        elif c < 0.0:
            grad_p = -perpendicular(n) / math.sqrt(pp)
        else:
            grad_p = np.zeros(3)
        return np.array([alpha]), (grad_p @ J)[np.newaxis, :]

    def linearisation(self, model: pin.Model, data: pin.Data, q: np.ndarray, margin: float):
        """Return rows for a QP step ``(g, J, lower, upper)``.

        ``n x p / |p|`` (3) within a cube of half-side ``sin(cone_half_angle - margin)``
        and the angle below the shrunk bound (the angle alone is flat in the directions
        that turn ``p`` around ``n``).
        """
        alpha, J_alpha = self.evaluate_physical(model, data, q)
        p_AT, J = point_in_frame(model, data, self._fid_A, None, self._fid_B, self._p_BT)
        p, n = p_AT - self._p_AS, self._n_A
        norm = math.sqrt(float(p @ p))
        bound = self.cone_half_angle - margin
        if norm < 1e-12:
            return alpha, J_alpha, np.array([-math.inf]), np.array([bound])
        u = p / norm
        J_v = pin.skew(n) @ ((np.eye(3) - np.outer(u, u)) / norm) @ J
        s = math.sin(bound)
        return (np.concatenate((cross(n, u), alpha)), np.vstack((J_v, J_alpha)),
                np.array([-s, -s, -s, -math.inf]), np.array([s, s, s, bound]))

    def measure(self, model: pin.Model, data: pin.Data, q: np.ndarray) -> np.ndarray:
        """``[max(alpha - cone_half_angle, 0)]`` [rad]."""
        X_WA, X_WB = data.oMf[self._fid_A], data.oMf[self._fid_B]
        p = X_WA.actInv(X_WB.act(self._p_BT)) - self._p_AS
        return np.array([max(vector_angle(p, self._n_A) - self.cone_half_angle, 0.0)])

    def sample_violation(self, frames) -> np.ndarray:
        """Weighted squared angle [rad^2] of each sample's target outside the cone."""
        p_WT = samples.point_world(frames.placement(self._fid_B), self._p_BT)
        p = samples.in_frame(frames.placement(self._fid_A), p_WT) - self._p_AS[:, None]
        cosine = (self._n_A @ p) / np.maximum(samples.norms(p), 1e-12)
        return samples.angle_outside(cosine, 0.0, self.cone_half_angle)
