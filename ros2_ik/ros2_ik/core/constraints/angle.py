"""Drake's AngleBetweenVectorsConstraint."""
from __future__ import annotations

import math
from typing import Optional, Tuple

import numpy as np
import pinocchio as pin

from ros2_ik.core.kinematics import relative
from ros2_ik.core.kinematics.frames import (Placements, cross, frame_id, frame_jacobian,
                                            vector_angle, vector_in_world,
                                            vectors_angle_and_gradient, vectors_dot)
from ros2_ik.core.runtime.compiled import jit

from . import checks as check
from . import compiled as kernel
from . import _samples as samples
from ._base import BoundedConstraint, outside


class AngleBetweenVectorsConstraint(BoundedConstraint):
    """``angle_lower <= angle(a, b) <= angle_upper`` for ``a_A`` fixed in A, ``b_B`` in B.

    Imposed as Drake does, on the cosine: ``cos(angle_upper) <= a^T R_AB b <= cos(angle_lower)``
    with ``a``, ``b`` normalised.  One row, dimensionless; angles in [rad] in ``[0, pi]``.

    In physical units: one row, the angle [rad] itself, ``atan2(|a x b|, a . b)``.
    """

    unit = "rad"

    _a_A = check.lazy_array("_a_A_list")
    _b_B = check.lazy_array("_b_B_list")

    def __init__(
        self, model: pin.Model, frame_A: str, a_A, frame_B: str, b_B,
        angle_lower: float, angle_upper: float, *, name: Optional[str] = None,
    ):
        self._fid_A = frame_id(model, frame_A)
        self._fid_B = frame_id(model, frame_B)
        self._a_A_list, self._b_B_list = check.vector_lists((a_A, b_B), ("a_A", "b_B"),
                                                            units=(0, 1))
        self.angle_lower = check.angle(angle_lower, "angle_lower")
        self.angle_upper = check.angle(angle_upper, "angle_upper")
        check.ordered(self.angle_lower, self.angle_upper, "angle_lower", "angle_upper")
        default = f"angle({frame_A},{frame_B})"
        self._inside_cos = (math.cos(self.angle_upper) + 1e-12,  # beyond rounding: inside
                            math.cos(self.angle_lower) - 1e-12)
        super().__init__(check.term_name(name, default),
                         [math.cos(self.angle_upper)], [math.cos(self.angle_lower)],
                         physical=([self.angle_lower], [self.angle_upper]))

    def evaluate(
        self, model: pin.Model, data: pin.Data, q: np.ndarray
    ) -> Tuple[np.ndarray, np.ndarray]:
        """``[cos(angle)]`` (1,) and its Jacobian ``(1, nv)``."""
        cosine, gradient = vectors_dot(model, data, self._fid_A, self._a_A,
                                       self._fid_B, self._b_B)
        return np.array([cosine]), gradient[np.newaxis, :]

    def evaluate_physical(
        self, model: pin.Model, data: pin.Data, q: np.ndarray
    ) -> Tuple[np.ndarray, np.ndarray]:
        """``[angle]`` (1,) [rad] and its Jacobian ``(1, nv)``."""
        angle, gradient = vectors_angle_and_gradient(
            model, data, self._fid_A, self._a_A, self._fid_B, self._b_B)
        return np.array([angle]), gradient[np.newaxis, :]

    def bend(self, model: pin.Model, data: pin.Data, q: np.ndarray) -> Optional[np.ndarray]:
        """Row ``T`` (1, nv) [1/rad x rad/rad]: how fast ``b`` turns around ``a``, or None.

        The angle is flat in the direction that turns ``b`` around ``a`` (the azimuth);
        outside the upper bound by ``r`` [rad], a step adds ``r^2 T^T T``, the curvature of
        the excess as a vector on the sphere (the polish's cube rows' reason,
        :meth:`linearisation`).  ``T = (a - (a.b) b) . (w_B - w_A) / |a x b|^2``.
        """
        a = data.oMf[self._fid_A].rotation @ self._a_A
        b = data.oMf[self._fid_B].rotation @ self._b_B
        x = cross(a, b)
        s2 = float(x @ x)
        if s2 <= 1e-18:
            return None
        w = frame_jacobian(model, data, self._fid_B)[3:] - \
            frame_jacobian(model, data, self._fid_A)[3:]
        return ((a - float(a @ b) * b) @ w / s2)[np.newaxis, :]

    @property
    def cube_rows(self) -> bool:
        """Whether :meth:`linearisation` adds the cube rows (a bound from 0 below pi/2)."""
        return not (self.angle_lower > 0.0 or self.angle_upper >= math.pi / 2)

    def linearisation(self, model: pin.Model, data: pin.Data, q: np.ndarray, margin: float):
        """Return rows for a QP step ``(g, J, lower, upper)``.

        The angle within its bounds shrunk by ``margin`` and, with :attr:`cube_rows`,
        ``a x b`` (3) within a cube of half-side ``sin(angle_upper - margin)`` (the angle
        alone is flat in the directions that turn ``b`` around ``a``).
        """
        angle, gradient = vectors_angle_and_gradient(
            model, data, self._fid_A, self._a_A, self._fid_B, self._b_B)
        g, J = np.array([angle]), gradient[np.newaxis, :]
        lower, upper = [self.angle_lower + margin], [self.angle_upper - margin]
        if not self.cube_rows:
            return g, J, np.array(lower), np.array(upper)
        a = data.oMf[self._fid_A].rotation @ self._a_A
        b = data.oMf[self._fid_B].rotation @ self._b_B
        c = float(a @ b)
        J_A = frame_jacobian(model, data, self._fid_A)[3:]
        J_B = frame_jacobian(model, data, self._fid_B)[3:]
        eye = np.eye(3)
        J_v = (np.outer(a, b) - c * eye) @ J_A + (c * eye - np.outer(b, a)) @ J_B
        s = math.sin(self.angle_upper - margin)
        return (np.concatenate((cross(a, b), g)), np.vstack((J_v, J)),
                np.array([-s, -s, -s] + lower), np.array([s, s, s] + upper))

    def measure_rows(self, placements: Placements) -> list:
        """Distance [rad] of the angle outside ``[angle_lower, angle_upper]``.

        The angle between ``a_A`` and ``b_B`` both expressed in the world.  Their cosine
        (unit vectors) inside ``[cos(angle_upper), cos(angle_lower)]`` by more than
        rounding (1e-12) proves the angle inside its bounds: 0 without the angle.
        """
        a = vector_in_world(placements.pose(self._fid_A), self._a_A_list)
        b = vector_in_world(placements.pose(self._fid_B), self._b_B_list)
        low, high = self._inside_cos
        if low <= a[0] * b[0] + a[1] * b[1] + a[2] * b[2] <= high:
            return [0.0]
        return [outside(vector_angle(a, b), self.angle_lower, self.angle_upper)]

    def sample_violation(self, frames) -> np.ndarray:
        """Weighted squared angle [rad^2] of each sample outside the bounds."""
        a_W = samples.rotate(frames.placement(self._fid_A)[1], self._a_A)
        b_W = samples.rotate(frames.placement(self._fid_B)[1], self._b_B)
        return samples.angle_outside((a_W * b_W).sum(axis=0), self.angle_lower,
                                     self.angle_upper)


# The kernels' form (``registry``): parameters ``a_A`` (3), ``b_B`` (3).


def _encode(c: AngleBetweenVectorsConstraint, tolerance) -> tuple:
    return c._fid_A, c._fid_B, c._a_A_list + c._b_B_list


def _polish_rows(c: AngleBetweenVectorsConstraint) -> Tuple[int, bool]:
    return (4 if c.cube_rows else 1), c.cube_rows


@jit
def _perpendicular(x, y, z):  # pragma: no cover - compiled
    """Return a unit vector perpendicular to ``(x, y, z)``, as ``frames.perpendicular``.

    ``(x, y, z) x e_k`` for the axis ``e_k`` of its smallest entry, normalised.
    """
    if abs(y) < abs(x) and abs(y) <= abs(z):
        vx, vy, vz = -z, 0.0, x  # x e_y
    elif abs(z) < abs(x) and abs(z) < abs(y):
        vx, vy, vz = y, -x, 0.0  # x e_z
    else:
        vx, vy, vz = 0.0, z, -y  # x e_x
    norm = math.sqrt(vx * vx + vy * vy + vz * vz)
    return vx / norm, vy / norm, vz / norm


@jit
def _angle_row(oMf, Jf, fa, fb, prm, Jrow):  # pragma: no cover - compiled
    """``evaluate_physical``: the angle [rad], its row into ``Jrow`` (n,)."""
    A, B = oMf[fa], oMf[fb]
    a0 = A[0, 0] * prm[0] + A[0, 1] * prm[1] + A[0, 2] * prm[2]
    a1 = A[1, 0] * prm[0] + A[1, 1] * prm[1] + A[1, 2] * prm[2]
    a2 = A[2, 0] * prm[0] + A[2, 1] * prm[1] + A[2, 2] * prm[2]
    b0 = B[0, 0] * prm[3] + B[0, 1] * prm[4] + B[0, 2] * prm[5]
    b1 = B[1, 0] * prm[3] + B[1, 1] * prm[4] + B[1, 2] * prm[5]
    b2 = B[2, 0] * prm[3] + B[2, 1] * prm[4] + B[2, 2] * prm[5]
    x0, x1, x2 = a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0  # a x b
    s = math.sqrt(x0 * x0 + x1 * x1 + x2 * x2)
    c = a0 * b0 + a1 * b1 + a2 * b2
    if s > 1e-9:
        gx, gy, gz = -x0 / s, -x1 / s, -x2 / s
    else:
        gx, gy, gz = _perpendicular(a0, a1, a2)
        if not c > 0.0:
            gx, gy, gz = -gx, -gy, -gz
    JA, JB = Jf[fa], Jf[fb]
    for col in range(Jrow.shape[0]):  # the row on w_A - w_B
        Jrow[col] = (gx * (JA[3, col] - JB[3, col]) + gy * (JA[4, col] - JB[4, col])
                     + gz * (JA[5, col] - JB[5, col]))
    return math.atan2(s, c)


@jit(inline="always")  # a thin step of the dispatch: no call of its own
def rows(oMf, Jf, fa, fb, prm, g, Jg, row, p3, J3):  # pragma: no cover - compiled
    """``evaluate_physical``: the angle [rad] into row ``row`` of ``g``, ``Jg``; 1."""
    g[row] = _angle_row(oMf, Jf, fa, fb, prm, Jg[row])
    return 1


@jit
def _cube(oMf, Jf, fa, fb, prm, g, J, out, S):  # pragma: no cover - compiled
    """Write ``a x b`` (3) and ``(a b^T - c I) J_A + (c I - b a^T) J_B`` at rows ``out..``.

    ``S`` (6, 3, 3): scratch.
    """
    c = relative.world_vectors(oMf, fa, fb, prm, S)
    a, b = S[5, 0], S[5, 1]
    g[out], g[out + 1], g[out + 2] = (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2],
                                      a[0] * b[1] - a[1] * b[0])
    for r in range(3):
        for col in range(J.shape[1]):
            s = -c * Jf[fa, 3 + r, col] + c * Jf[fb, 3 + r, col]
            for k in range(3):
                s += a[r] * b[k] * Jf[fa, 3 + k, col] - b[r] * a[k] * Jf[fb, 3 + k, col]
            J[out + r, col] = s


@jit
def bend(oMf, Jf, fa, fb, prm, T, S33, p3, J3):  # pragma: no cover - compiled
    """``bend`` into ``T[0]`` (n,); its rows (1, or 0 when ``a x b`` vanishes)."""
    c = relative.world_vectors(oMf, fa, fb, prm, S33)
    a, b = S33[5, 0], S33[5, 1]
    x0, x1, x2 = a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]
    s2 = x0 * x0 + x1 * x1 + x2 * x2
    if s2 <= 1e-18:
        return 0
    v0, v1, v2 = (a[0] - c * b[0]) / s2, (a[1] - c * b[1]) / s2, (a[2] - c * b[2]) / s2
    JA, JB = Jf[fa], Jf[fb]
    for col in range(T.shape[1]):
        T[0, col] = (v0 * (JB[3, col] - JA[3, col]) + v1 * (JB[4, col] - JA[4, col])
                     + v2 * (JB[5, col] - JA[5, col]))
    return 1


@jit(inline="always")  # a thin step of the dispatch: no call of its own
def linearise(oMf, Jf, fa, fb, prm, cube, lo, hi, margin, x_margin, row, out, g, J, glo,
              ghi, gm, S33, p3, J3):  # pragma: no cover - compiled
    """``linearisation``: with ``cube``, ``a x b`` in a cube, then the angle; (1, 1 or 4)."""
    k = 0
    if cube:
        _cube(oMf, Jf, fa, fb, prm, g, J, out, S33)
        kernel.cube_bounds(math.sin(hi[row]), glo, ghi, gm, out)
        k = 3
    g[out + k] = _angle_row(oMf, Jf, fa, fb, prm, J[out + k])
    kernel.bound_rows(lo, hi, margin, row, 1, glo, ghi, gm, out + k)
    return 1, k + 1


KIND = kernel.Kind(AngleBetweenVectorsConstraint, _encode, _polish_rows, rows, linearise,
                   bend=bend)
