"""Drake's PolyhedronConstraint: ``A [p_FP1; ...; p_FPN] <= b``."""
from __future__ import annotations

import math
from typing import Optional, Tuple

import numpy as np
import pinocchio as pin

from ros2_ik.core.kinematics import relative
from ros2_ik.core.kinematics.frames import (Placements, frame_id, frame_jacobian,
                                            point_jacobian, point_seen)
from ros2_ik.core.runtime.compiled import jit

from . import checks as check
from . import compiled as kernel
from . import _samples as samples
from ._base import BoundedConstraint


class PolyhedronConstraint(BoundedConstraint):
    """``A @ [p_FP1; p_FP2; ...; p_FPN] <= b`` (``k`` rows, [m] times the units of A).

    Points ``P_i`` are fixed in ``frame_G`` at the columns of ``p_GP`` (3, N) [m] and
    measured and expressed in ``frame_F``; ``A`` has shape ``(k, 3N)`` and ``b`` ``(k,)``.
    Lower bounds are ``-inf``.

    In physical units each row is divided by the norm of its row of ``A``:
    ``(A_i p - b_i) / |A_i|`` is the distance [m] of the stacked points ``p`` (3N,) from
    the half-space ``A_i p <= b_i`` (a row of zeros is left as it is).
    """

    def __init__(
        self, model: pin.Model, frame_F: str, frame_G: str, p_GP, A, b,
        *, name: Optional[str] = None,
    ):
        self._fid_F = frame_id(model, frame_F)
        self._fid_G = frame_id(model, frame_G)
        self._p_GP = check.read_only(check.matrix(p_GP, "p_GP", rows=3))
        n_points = self._p_GP.shape[1]
        self._A = check.read_only(check.matrix(A, "A", cols=3 * n_points))
        rows = self._A.shape[0]
        b = check.array_of_shape(b, (rows,), "b")
        default = f"polyhedron({frame_G} in {frame_F})"
        scale = np.abs(self._A).max(axis=1, initial=0.0)  # rows' norms without overflow
        norms = scale * np.linalg.norm(self._A / np.where(scale > 0.0, scale, 1.0)[:, None],
                                       axis=1)
        self._inv_norms = check.read_only(1.0 / np.where(norms > 0.0, norms, 1.0))
        b_unit = b * self._inv_norms
        super().__init__(check.term_name(name, default), np.full(rows, -math.inf), b,
                         physical=(np.full(rows, -math.inf), b_unit))
        # The measure's: each point p_GP (three floats), and the rows A_i / |A_i| (k, 3N)
        # and b_i / |A_i| (k floats [m]).
        self._p_GP_lists = self._p_GP.T.tolist()
        self._unit_rows = self._A * self._inv_norms[:, None], b_unit.tolist()

    def evaluate(
        self, model: pin.Model, data: pin.Data, q: np.ndarray
    ) -> Tuple[np.ndarray, np.ndarray]:
        """Return ``A @ p`` (k,) and its Jacobian ``(k, nv)``."""
        X_WF, X_WG = data.oMf[self._fid_F], data.oMf[self._fid_G]
        J_F = frame_jacobian(model, data, self._fid_F)
        J_G = frame_jacobian(model, data, self._fid_G)
        R_FW = X_WF.rotation.T
        n_points = self._p_GP.shape[1]
        positions = np.empty(3 * n_points)
        jacobian = np.empty((3 * n_points, model.nv))
        for i in range(n_points):
            p_WP = X_WG.act(self._p_GP[:, i])
            rows = slice(3 * i, 3 * i + 3)
            positions[rows] = R_FW @ (p_WP - X_WF.translation)
            jacobian[rows] = R_FW @ (point_jacobian(J_G, X_WG.translation, p_WP)
                                     - point_jacobian(J_F, X_WF.translation, p_WP))
        return self._A @ positions, self._A @ jacobian

    def evaluate_physical(
        self, model: pin.Model, data: pin.Data, q: np.ndarray
    ) -> Tuple[np.ndarray, np.ndarray]:
        """Return ``(A @ p) / |A_i|`` (k,) [m] and its Jacobian ``(k, nv)``."""
        value, jacobian = self.evaluate(model, data, q)
        return value * self._inv_norms, jacobian * self._inv_norms[:, None]

    def measure_rows(self, placements: Placements) -> list:
        """Per-row distance [m] of the stacked points outside each half-space.

        ``(A_i p - b_i) / |A_i|`` clipped at 0, ``p`` the points of G seen in F (3N,).
        """
        p = []
        for p_GP in self._p_GP_lists:
            p += point_seen(placements, self._fid_F, self._fid_G, p_GP)
        A_unit, b_unit = self._unit_rows
        return [max(v - b, 0.0) for v, b in zip(np.dot(A_unit, p).tolist(), b_unit)]

    def sample_violation(self, frames) -> np.ndarray:
        """Squared distance [m^2] of each sample's stacked points outside the half-spaces."""
        X_F, X_G = frames.placement(self._fid_F), frames.placement(self._fid_G)
        stacked = np.concatenate([samples.in_frame(X_F, samples.point_world(X_G, p_GP))
                                  for p_GP in self._p_GP.T])  # (3N, S)
        rows = (self._A @ stacked) * self._inv_norms[:, None]
        return samples.outside(rows, -np.inf, self.physical_bounds[1])


# The kernels' form (``registry``): parameters N, k, ``p_GP`` (3N, point by point),
# ``A`` (k, 3N), 1/|A_i| (k).


def _encode(c: PolyhedronConstraint, tolerance) -> tuple:
    p_GP, A = c._p_GP, c._A
    return c._fid_F, c._fid_G, ([float(p_GP.shape[1]), float(A.shape[0])]
                                + p_GP.T.ravel().tolist() + A.ravel().tolist()
                                + c._inv_norms.tolist())


@jit
def rows(oMf, Jf, fa, fb, prm, g, Jg, row, p3, J3):  # pragma: no cover - compiled
    """``evaluate_physical`` into rows ``row..row+k`` of ``g``, ``Jg`` [m]; returns k.

    ``p3`` (3,), ``J3`` (3, n): scratch.
    """
    n_pts, k, n = int(prm[0]), int(prm[1]), Jg.shape[1]
    a0, i0 = 2 + 3 * n_pts, 2 + 3 * n_pts + 3 * k * n_pts
    g[row:row + k] = 0.0
    Jg[row:row + k, :] = 0.0
    for i in range(n_pts):
        relative.point_in_frame(oMf, Jf, fa, fb, prm, -1, 2 + 3 * i, p3, J3, 0)
        for r in range(k):
            at = a0 + r * 3 * n_pts + 3 * i
            x, y, z = prm[at], prm[at + 1], prm[at + 2]
            g[row + r] += x * p3[0] + y * p3[1] + z * p3[2]
            for c in range(n):
                Jg[row + r, c] += x * J3[0, c] + y * J3[1, c] + z * J3[2, c]
    for r in range(k):
        inv = prm[i0 + r]
        g[row + r] *= inv
        for c in range(n):
            Jg[row + r, c] *= inv
    return k


KIND = kernel.Kind(PolyhedronConstraint, _encode, kernel.physical_rows, rows)
