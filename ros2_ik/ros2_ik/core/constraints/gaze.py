"""Drake's GazeTargetConstraint: a target point inside a cone fixed in another frame."""
from __future__ import annotations

import math
from typing import Optional, Tuple

import numpy as np
import pinocchio as pin

from ros2_ik.core.kinematics import relative
from ros2_ik.core.kinematics.frames import (Placements, cross, frame_id, perpendicular,
                                            perpendicular_floats, point_in_frame, point_seen,
                                            vector_angle)
from ros2_ik.core.runtime.compiled import jit

from . import checks as check
from . import compiled as kernel
from . import _samples as samples
from ._base import BoundedConstraint


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
        self._inside_cos2 = self._cos2 + 1e-12  # beyond rounding: inside the cone
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

    def measure_rows(self, placements: Placements) -> list:
        """``[max(alpha - cone_half_angle, 0)]`` [rad], ``alpha`` the angle of ``n_A`` to S->T.

        ``p = p_AT - p_AS``; ``(p . n)^2 >= cos^2(cone) |p|^2`` with ``p . n > 0`` and a
        margin above rounding (``1e-12 |p|^2``) proves ``alpha < cone_half_angle``: 0
        without the angle.
        """
        x, y, z = point_seen(placements, self._fid_A, self._fid_B, self._p_BT_list)
        s0, s1, s2 = self._p_AS_list
        x, y, z = x - s0, y - s1, z - s2
        n0, n1, n2 = self._n_A_list
        c = x * n0 + y * n1 + z * n2
        if c > 0.0 and c * c >= self._inside_cos2 * (x * x + y * y + z * z):
            return [0.0]
        return [max(vector_angle((x, y, z), self._n_A_list) - self.cone_half_angle, 0.0)]

    def sample_violation(self, frames) -> np.ndarray:
        """Weighted squared angle [rad^2] of each sample's target outside the cone."""
        p_WT = samples.point_world(frames.placement(self._fid_B), self._p_BT)
        p = samples.in_frame(frames.placement(self._fid_A), p_WT) - self._p_AS[:, None]
        cosine = (self._n_A @ p) / np.maximum(samples.norms(p), 1e-12)
        return samples.angle_outside(cosine, 0.0, self.cone_half_angle)


# The kernels' form (``registry``): parameters ``p_BT`` (3), ``p_AS`` (3), ``n_A`` (3), a
# unit vector perpendicular to ``n_A`` (3).


def _encode(c: GazeTargetConstraint, tolerance) -> tuple:
    return c._fid_A, c._fid_B, (c._p_BT_list + c._p_AS_list + c._n_A_list
                                + list(perpendicular_floats(c._n_A_list)))


def _polish_rows(c: GazeTargetConstraint) -> Tuple[int, bool]:
    return 4, True


@jit
def _alpha_row(p, J, prm, Jrow):  # pragma: no cover - compiled
    """``evaluate_physical`` from ``p_AT`` (3,), (3, n): ``alpha`` [rad], its row ``Jrow``.

    ``prm``: ``p_AS`` (3), ``n_A`` (3), a unit vector perpendicular to it (3).
    """
    vx, vy, vz = p[0] - prm[0], p[1] - prm[1], p[2] - prm[2]
    nx, ny, nz = prm[3], prm[4], prm[5]
    cx, cy, cz = vy * nz - vz * ny, vz * nx - vx * nz, vx * ny - vy * nx  # v x n
    s = math.sqrt(cx * cx + cy * cy + cz * cz)
    c, pp = vx * nx + vy * ny + vz * nz, vx * vx + vy * vy + vz * vz
    alpha = math.atan2(s, c)
    if pp < 1e-24:
        Jrow[:] = 0.0
    elif s > 1e-12 * math.sqrt(pp):
        mx, my, mz = ny * cz - nz * cy, nz * cx - nx * cz, nx * cy - ny * cx  # n x (v x n)
        kernel.row_from((c * mx / s - s * nx) / pp, (c * my / s - s * ny) / pp,
                        (c * mz / s - s * nz) / pp, J, 0, Jrow)
    elif c < 0.0:
        root = math.sqrt(pp)
        kernel.row_from(-prm[6] / root, -prm[7] / root, -prm[8] / root, J, 0, Jrow)
    else:
        Jrow[:] = 0.0
    return alpha


@jit(inline="always")  # a thin step of the dispatch: no call of its own
def rows(oMf, Jf, fa, fb, prm, g, Jg, row, p3, J3):  # pragma: no cover - compiled
    """``evaluate_physical``: ``alpha`` [rad] into row ``row`` of ``g``, ``Jg``; 1.

    ``p3`` (3,), ``J3`` (3, n): scratch (the target seen in A).
    """
    relative.point_in_frame(oMf, Jf, fa, fb, prm, -1, 0, p3, J3, 0)
    g[row] = _alpha_row(p3, J3, prm[3:], Jg[row])
    return 1


@jit
def _cube(p, Jp, prm, g, J, out, S):  # pragma: no cover - compiled
    """``n x p / |p|`` (3) and its rows ``(3, n)`` at ``out``; inert rows when ``p`` = 0.

    ``prm``: ``p_AS`` (3), ``n_A`` (3).  ``S`` (6, 3, 3): scratch.  Returns False when
    the rows are inert (``|p| < 1e-12``; the caller writes the bounds).
    """
    v0, v1, v2 = p[0] - prm[0], p[1] - prm[1], p[2] - prm[2]
    nx, ny, nz = prm[3], prm[4], prm[5]
    norm = math.sqrt(v0 * v0 + v1 * v1 + v2 * v2)
    if norm < 1e-12:
        for r in range(3):
            g[out + r] = 0.0
            for c in range(J.shape[1]):
                J[out + r, c] = 0.0
        return False
    u, K, P = S[5, 0], S[0], S[1]
    u[0], u[1], u[2] = v0 / norm, v1 / norm, v2 / norm
    K[0, 0], K[0, 1], K[0, 2] = 0.0, -nz, ny  # skew(n)
    K[1, 0], K[1, 1], K[1, 2] = nz, 0.0, -nx
    K[2, 0], K[2, 1], K[2, 2] = -ny, nx, 0.0
    for r in range(3):  # skew(n) (I - u u^T) / |p|
        Ku = K[r, 0] * u[0] + K[r, 1] * u[1] + K[r, 2] * u[2]
        g[out + r] = Ku
        for c in range(3):
            P[r, c] = (K[r, c] - Ku * u[c]) / norm
    for r in range(3):
        for c in range(J.shape[1]):
            J[out + r, c] = P[r, 0] * Jp[0, c] + P[r, 1] * Jp[1, c] + P[r, 2] * Jp[2, c]
    return True


@jit(inline="always")  # a thin step of the dispatch: no call of its own
def linearise(oMf, Jf, fa, fb, prm, cube, lo, hi, margin, x_margin, row, out, g, J, glo,
              ghi, gm, S33, p3, J3):  # pragma: no cover - compiled
    """``linearisation``: the cube rows of ``n x p``, then ``alpha``'s row; (1, 4) rows."""
    relative.point_in_frame(oMf, Jf, fa, fb, prm, -1, 0, p3, J3, 0)
    if _cube(p3, J3, prm[3:9], g, J, out, S33):
        kernel.cube_bounds(math.sin(hi[row]), glo, ghi, gm, out)
    else:  # |p| = 0: rows 0 dq within [-1, 1], always met
        kernel.cube_bounds(1.0, glo, ghi, gm, out)
    g[out + 3] = _alpha_row(p3, J3, prm[3:], J[out + 3])
    kernel.bound_rows(lo, hi, margin, row, 1, glo, ghi, gm, out + 3)
    return 1, 4


KIND = kernel.Kind(GazeTargetConstraint, _encode, _polish_rows, rows, linearise)
