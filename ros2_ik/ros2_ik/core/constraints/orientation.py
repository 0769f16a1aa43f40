"""Drake's OrientationConstraint: the angle between frames A and B is at most theta_bound."""
from __future__ import annotations

import math
from typing import Optional, Tuple

import numpy as np
import pinocchio as pin

from ros2_ik.core.kinematics import lie, relative
from ros2_ik.core.kinematics.frames import (Placements, frame_id, relative_rotation,
                                            rotation_angle, rotation_product, rotation_rows,
                                            trace_and_gradient, transposed_rows)
from ros2_ik.core.runtime.compiled import jit

from . import checks as check
from . import compiled as kernel
from . import _samples as samples
from ._base import BoundedConstraint


_ZERO3 = np.zeros(3)
_EYE9 = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]


class OrientationConstraint(BoundedConstraint):
    """``theta(A, B) <= theta_bound``, as Drake: ``tr(R_AB) >= 2 cos(theta_bound) + 1``.

    Frame A is fixed to model frame ``frame_Abar`` with orientation ``R_AbarA``; frame B
    to ``frame_Bbar`` with ``R_BbarB`` (3x3 rotation matrices).  ``theta_bound`` in
    [rad], within ``[0, pi]``.  One row; the value is ``tr(R_AB) = 1 + 2 cos(theta)``
    (dimensionless, in ``[-1, 3]``).  The upper bound is ``+inf`` rather than Drake's 3:
    the same set, but rounding can never report ``tr = 3 + 1e-16`` as a violation.

    In physical units (what solvers drive and verification reports): one row, the angle
    ``theta`` [rad] itself, ``theta <= theta_bound``.
    """

    unit = "rad"

    _R_AbarA = check.lazy_array("_R_AbarA_list", (3, 3))
    _R_BbarB = check.lazy_array("_R_BbarB_list", (3, 3))

    def __init__(
        self, model: pin.Model, frame_Abar: str, R_AbarA, frame_Bbar: str, R_BbarB,
        theta_bound: float, *, name: Optional[str] = None,
    ):
        self._fid_Abar = frame_id(model, frame_Abar)
        self._fid_Bbar = frame_id(model, frame_Bbar)
        self._R_AbarA_list = check.rotation_list(R_AbarA, "R_AbarA")
        self._R_BbarB_list = check.rotation_list(R_BbarB, "R_BbarB")
        self.theta_bound = check.angle(theta_bound, "theta_bound")
        lower = 2.0 * math.cos(self.theta_bound) + 1.0
        self._inside_trace = lower + 1e-12  # a trace above it: inside, beyond rounding
        default = f"orientation({frame_Abar},{frame_Bbar})"
        super().__init__(check.term_name(name, default), [lower], [math.inf],
                         physical=([-math.inf], [self.theta_bound]))

    def evaluate(
        self, model: pin.Model, data: pin.Data, q: np.ndarray
    ) -> Tuple[np.ndarray, np.ndarray]:
        """``[tr(R_AB)]`` (1,) and its Jacobian ``(1, nv)``."""
        trace, gradient = trace_and_gradient(
            model, data, self._fid_Abar, self._R_AbarA, self._fid_Bbar, self._R_BbarB)
        return np.array([trace]), gradient[np.newaxis, :]

    def evaluate_physical(
        self, model: pin.Model, data: pin.Data, q: np.ndarray
    ) -> Tuple[np.ndarray, np.ndarray]:
        """``[theta]`` (1,) [rad] and its Jacobian ``(1, nv)``."""
        _, J_w_AB, w, theta = self._log(model, data)
        return np.array([theta]), _angle_gradient(w, theta, J_w_AB)[np.newaxis, :]

    def evaluate_excess(
        self, model: pin.Model, data: pin.Data, q: np.ndarray, bound_rad: float
    ) -> Tuple[np.ndarray, np.ndarray]:
        """Return the rotation beyond ``bound_rad`` as a vector (3,) [rad], and (3, nv).

        ``e = u (theta - bound_rad)`` (``u`` the axis of ``R_AB``, zero inside the bound):
        three rows ask the whole rotation back, where the single angle row leaves the step
        free to add rotation about other axes (a linear convergence rate, measured).
        ``de = (s (I - u u^T) + u u^T) Jlog3 dw_B`` with ``s = 1 - bound_rad / theta``.
        """
        R_AB, J_w_AB, w, theta = self._log(model, data)
        if theta <= bound_rad:
            return _ZERO3, np.zeros((3, J_w_AB.shape[1]))
        if theta < 1e-12:  # beyond a bound below 0 (a bound of 0, shrunk): no axis yet
            return _ZERO3, J_w_AB  # the derivative of w at R_AB = I
        u = w / theta
        s = 1.0 - bound_rad / theta
        J_log = log_jacobian(R_AB, J_w_AB)
        return w * s, s * J_log + (1.0 - s) * np.outer(u, u @ J_log)

    def linearisation(self, model: pin.Model, data: pin.Data, q: np.ndarray, margin: float):
        """Return rows for a QP step ``(g, J, lower, upper)``.

        The rotation vector ``w`` (3) within a cube of half-side ``theta_bound - margin``
        and the angle ``theta`` below it.  The angle alone is flat in the directions that
        turn the axis (its gradient is radial), so a step could turn the frame freely; the
        cube rows bound every axis.
        """
        R_AB, J_w_AB, w, theta = self._log(model, data)
        bound = self.theta_bound - margin
        return (np.append(w, theta),
                np.vstack((log_jacobian(R_AB, J_w_AB), _angle_gradient(w, theta, J_w_AB))),
                np.array([-bound, -bound, -bound, -math.inf]), np.full(4, bound))

    def _log(self, model: pin.Model, data: pin.Data):
        """Return the one definition the rows derive from: ``(R_AB, J_w_AB, w, theta)``.

        ``w = log3(R_AB)`` [rad], ``theta = |w|``, ``J_w_AB`` (3, nv): B's angular velocity
        relative to A, expressed in A (``relative_rotation``).
        """
        R_AB, J_w_AB = relative_rotation(model, data, self._fid_Abar, self._R_AbarA,
                                         self._fid_Bbar, self._R_BbarB)
        w = pin.log3(R_AB)
        return R_AB, J_w_AB, w, math.sqrt(float(w @ w))

    def measure_rows(self, placements: Placements) -> list:
        """``[max(theta - theta_bound, 0)]`` [rad], theta from the entries of a rotation.

        ``R_AB = R_AbarA^T R_WAbar^T R_WBbar R_BbarB`` is similar to ``R_WBbar M`` with
        ``M = R_BbarB R_AbarA^T R_WAbar^T`` (conjugate by ``R_WAbar R_AbarA``): the same
        angle.  Its trace ``1 + 2 cos(theta)`` above that of the bound by more than
        rounding (1e-12) proves ``theta < theta_bound``: 0 without the other entries.
        """
        X_WB = placements.pose(self._fid_Bbar)
        M = self._M(placements.pose(self._fid_Abar))
        a, d, g, b, e, h, c, f, i = X_WB[:9]  # R_WB: rows (a b c), (d e f), (g h i)
        (m0, m1, m2), (m3, m4, m5), (m6, m7, m8) = M
        if (a * m0 + b * m3 + c * m6) + (d * m1 + e * m4 + f * m7) \
                + (g * m2 + h * m5 + i * m8) >= self._inside_trace:
            return [0.0]
        N = rotation_product(rotation_rows(X_WB), M)
        return [max(rotation_angle(N) - self.theta_bound, 0.0)]

    def _M(self, X_WAbar: list) -> list:
        """``R_BbarB R_AbarA^T R_WAbar^T`` (rows of floats), kept while ``X_WAbar`` is.

        A frame fixed in the world gives the same list every time (:class:`Placements`):
        its product is made once.
        """
        pose, M = self._last_M
        if pose is not X_WAbar:
            a, b = self._R_AbarA_list, self._R_BbarB_list
            K = [a[0:9:3], a[1:9:3], a[2:9:3]]  # R_AbarA^T
            if b != _EYE9:
                K = rotation_product((b[0:3], b[3:6], b[6:9]), K)
            M = rotation_product(K, transposed_rows(X_WAbar))
            self._last_M = (X_WAbar, M)
        return M

    #: ``(X_WAbar, M)`` of the last :meth:`_M` (none yet).
    _last_M: tuple = (None, None)

    def sample_violation(self, frames) -> np.ndarray:
        """Weighted squared angle [rad^2] of each sample beyond ``theta_bound``."""
        R_WAbar = frames.placement(self._fid_Abar)[1]
        R_WBbar = frames.placement(self._fid_Bbar)[1]
        # tr(R_AB) = sum_ij R_WAbar[i, j] (R_WBbar K)[i, j] with K = R_BbarB R_AbarA^T.
        K = self._R_BbarB @ self._R_AbarA.T
        M = np.zeros((9, 9))
        for i in range(3):
            M[3 * i:3 * i + 3, 3 * i:3 * i + 3] = K.T
        trace = (R_WAbar * (M @ R_WBbar)).sum(axis=0)
        return samples.angle_outside(0.5 * (trace - 1.0), 0.0, self.theta_bound)


def _angle_gradient(w: np.ndarray, theta: float, J_w_AB: np.ndarray) -> np.ndarray:
    """Return the gradient (nv,) of ``theta = |w|``: ``u^T J_w_AB``.

    ``u = w / theta``: the axis of ``R_AB``, the same in A and B.  Zero at ``theta = 0``,
    where it is not defined.
    """
    return (w / theta) @ J_w_AB if theta > 1e-12 else np.zeros(J_w_AB.shape[1])


def log_jacobian(R_AB: np.ndarray, J_w_AB: np.ndarray) -> np.ndarray:
    """Jacobian (3, nv) of ``w = log3(R_AB)``: ``Jlog3(R_AB) R_AB^T J_w_AB``."""
    return pin.Jlog3(R_AB) @ (R_AB.T @ J_w_AB)


# The kernels' form (``registry``): parameters ``R_AbarA``, ``R_BbarB`` (9 each, row by
# row), the bound [rad] shrunk as ``Residuals``' excess rows shrink it.


def _encode(c: OrientationConstraint, tolerance) -> tuple:
    bound = c.theta_bound - 0.25 * tolerance.rad  # as Residuals' excess rows
    return c._fid_Abar, c._fid_Bbar, c._R_AbarA_list + c._R_BbarB_list + [bound]


def _polish_rows(c: OrientationConstraint) -> Tuple[int, bool]:
    return 4, True


@jit
def _rotation_log(oMf, fa, fb, prm, S):  # pragma: no cover - compiled
    """Return ``_log``'s compiled form: ``(wx, wy, wz, theta)``, ``w = log3(R_AB)`` [rad].

    ``S`` (6, 3, 3): scratch; ``S[0]`` receives ``R_WA``, ``S[2]`` ``R_AB``.
    """
    relative.rotations(oMf, fa, fb, prm, S)
    wx, wy, wz, _ = lie.log3_at(S, 2)
    return wx, wy, wz, math.sqrt(wx * wx + wy * wy + wz * wz)


@jit
def _rotation_log_rows(Jf, fa, fb, wx, wy, wz, theta, J, r0, S):  # pragma: no cover - compiled
    """``log_jacobian``'s compiled form: rows ``r0..r0+2`` of ``J`` (k, n).

    After :func:`_rotation_log`. ``Jlog3 R_AB^T R_WA^T (w_B - w_A)`` (world angular
    velocities): one 3x3 map ``M`` (``S[4]``) applied column by column, no (3, n)
    temporaries. At ``theta < 1e-12`` (no axis yet) the derivative of ``w`` at ``R_AB =
    I``: ``M = R_WA^T``.
    """
    if theta < 1e-12:
        for r in range(3):
            for c in range(3):
                S[4, r, c] = S[0, c, r]
    else:
        lie.log_map(wx, wy, wz, theta, S)
    M = S[4]
    for c in range(J.shape[1]):
        d0 = Jf[fb, 3, c] - Jf[fa, 3, c]
        d1 = Jf[fb, 4, c] - Jf[fa, 4, c]
        d2 = Jf[fb, 5, c] - Jf[fa, 5, c]
        for r in range(3):
            J[r0 + r, c] = M[r, 0] * d0 + M[r, 1] * d1 + M[r, 2] * d2


@jit
def excess(oMf, Jf, fa, fb, prm, xe, xJ, r0, S):  # pragma: no cover - compiled
    """``evaluate_excess``: rotation beyond the bound [rad] and (3, n).

    Into rows ``r0..r0+2`` of ``xe``, ``xJ``.  ``S`` (6, 3, 3) is scratch.  Returns
    ``|e|`` [rad].  ``(s (I - u u^T) + u u^T)`` applied to :func:`_rotation_log_rows`' rows.
    """
    bound = prm[18]
    wx, wy, wz, theta = _rotation_log(oMf, fa, fb, prm, S)
    n = xJ.shape[1]
    for r in range(r0, r0 + 3):
        xe[r] = 0.0
    if theta <= bound:
        for r in range(r0, r0 + 3):
            for c in range(n):
                xJ[r, c] = 0.0
        return 0.0
    _rotation_log_rows(Jf, fa, fb, wx, wy, wz, theta, xJ, r0, S)
    if theta < 1e-12:  # beyond a bound below 0 (a bound of 0, shrunk): e stays 0
        return 0.0
    s = 1.0 - bound / theta
    ux, uy, uz = wx / theta, wy / theta, wz / theta
    xe[r0], xe[r0 + 1], xe[r0 + 2] = wx * s, wy * s, wz * s
    for c in range(n):
        l0, l1, l2 = xJ[r0, c], xJ[r0 + 1, c], xJ[r0 + 2, c]
        proj = (1.0 - s) * (ux * l0 + uy * l1 + uz * l2)
        xJ[r0, c] = s * l0 + ux * proj
        xJ[r0 + 1, c] = s * l1 + uy * proj
        xJ[r0 + 2, c] = s * l2 + uz * proj
    return math.sqrt(xe[r0] * xe[r0] + xe[r0 + 1] * xe[r0 + 1] + xe[r0 + 2] * xe[r0 + 2])


@jit
def _linear_rows(oMf, Jf, fa, fb, prm, g, J, out, S):  # pragma: no cover - compiled
    """``w`` (3) then ``theta`` into rows ``out..out+3`` of ``g``, ``J`` (``linearisation``).

    ``S`` (6, 3, 3): scratch.  ``theta``'s row is ``_angle_gradient``: ``w . J_w / theta``
    with ``J_w = R_WA^T (w_B - w_A)``, zero at ``theta = 0``.
    """
    wx, wy, wz, theta = _rotation_log(oMf, fa, fb, prm, S)
    g[out], g[out + 1], g[out + 2], g[out + 3] = wx, wy, wz, theta
    _rotation_log_rows(Jf, fa, fb, wx, wy, wz, theta, J, out, S)
    RWA = S[0]
    for c in range(J.shape[1]):
        J[out + 3, c] = 0.0
        if theta > 1e-12:
            d0 = Jf[fb, 3, c] - Jf[fa, 3, c]
            d1 = Jf[fb, 4, c] - Jf[fa, 4, c]
            d2 = Jf[fb, 5, c] - Jf[fa, 5, c]
            j0 = RWA[0, 0] * d0 + RWA[1, 0] * d1 + RWA[2, 0] * d2
            j1 = RWA[0, 1] * d0 + RWA[1, 1] * d1 + RWA[2, 1] * d2
            j2 = RWA[0, 2] * d0 + RWA[1, 2] * d1 + RWA[2, 2] * d2
            J[out + 3, c] = (wx * j0 + wy * j1 + wz * j2) / theta


@jit(inline="always")  # a thin step of the dispatch: no call of its own
def linearise(oMf, Jf, fa, fb, prm, cube, lo, hi, margin, x_margin, row, out, g, J, glo,
              ghi, gm, S33, p3, J3):  # pragma: no cover - compiled
    """``linearisation``: ``w`` in a cube, ``theta`` below the bound; (0, 4) rows."""
    _linear_rows(oMf, Jf, fa, fb, prm, g, J, out, S33)
    kernel.cube_bounds(prm[18], glo, ghi, gm, out)
    glo[out + 3], ghi[out + 3], gm[out + 3] = -np.inf, prm[18], x_margin
    return 0, 4


KIND = kernel.Kind(OrientationConstraint, _encode, _polish_rows, excess, linearise,
                   excess=True)
