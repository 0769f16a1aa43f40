"""Drake's OrientationConstraint: the angle between frames A and B is at most theta_bound."""
from __future__ import annotations

import math
from typing import Optional, Tuple

import numpy as np
import pinocchio as pin

from . import _checks as check
from . import _samples as samples
from ._base import BoundedConstraint
from ._frames import (frame_id, relative_rotation, rotation_angle,
                      rotation_angle_and_gradient, rotation_between, trace_and_gradient)


_ZERO3 = np.zeros(3)


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
        theta, gradient = rotation_angle_and_gradient(
            model, data, self._fid_Abar, self._R_AbarA, self._fid_Bbar, self._R_BbarB)
        return np.array([theta]), gradient[np.newaxis, :]

    def evaluate_excess(
        self, model: pin.Model, data: pin.Data, q: np.ndarray, bound_rad: float
    ) -> Tuple[np.ndarray, np.ndarray]:
        """Return the rotation beyond ``bound_rad`` as a vector (3,) [rad], and (3, nv).

        ``e = u (theta - bound_rad)`` (``u`` the axis of ``R_AB``, zero inside the bound):
        three rows ask the whole rotation back, where the single angle row leaves the step
        free to add rotation about other axes (a linear convergence rate, measured).
        ``de = (s (I - u u^T) + u u^T) Jlog3 dw_B`` with ``s = 1 - bound_rad / theta``.
        """
        R_AB, J_w_AB = relative_rotation(model, data, self._fid_Abar, self._R_AbarA,
                                         self._fid_Bbar, self._R_BbarB)
        w = pin.log3(R_AB)
        theta = math.sqrt(float(w @ w))
        if theta <= bound_rad:
            return _ZERO3, np.zeros((3, J_w_AB.shape[1]))
        if theta < 1e-12:  # beyond a bound below 0 (a bound of 0, shrunk): no axis yet
            return _ZERO3, J_w_AB  # the derivative of w at R_AB = I
        u = w / theta
        s = 1.0 - bound_rad / theta
        J_log = pin.Jlog3(R_AB) @ (R_AB.T @ J_w_AB)
        return w * s, s * J_log + (1.0 - s) * np.outer(u, u @ J_log)

    def linearisation(self, model: pin.Model, data: pin.Data, q: np.ndarray, margin: float):
        """Return rows for a QP step ``(g, J, lower, upper)``.

        The rotation vector ``w`` (3) within a cube of half-side ``theta_bound - margin``
        and the angle ``theta`` below it.  The angle alone is flat in the directions that
        turn the axis (its gradient is radial), so a step could turn the frame freely; the
        cube rows bound every axis.
        """
        R_AB, J_w_AB = relative_rotation(model, data, self._fid_Abar, self._R_AbarA,
                                         self._fid_Bbar, self._R_BbarB)
        w = pin.log3(R_AB)
        theta = math.sqrt(float(w @ w))
        J_w = pin.Jlog3(R_AB) @ (R_AB.T @ J_w_AB)
        bound = self.theta_bound - margin
        grad = (w / theta) @ J_w_AB if theta > 1e-12 else np.zeros(J_w_AB.shape[1])
        return (np.append(w, theta), np.vstack((J_w, grad)),
                np.array([-bound, -bound, -bound, -math.inf]), np.full(4, bound))

    def measure(self, model: pin.Model, data: pin.Data, q: np.ndarray) -> np.ndarray:
        """``[max(theta - theta_bound, 0)]`` [rad], theta from ``R_AB``'s entries."""
        R_AB = rotation_between(data, self._fid_Abar, self._R_AbarA, self._fid_Bbar,
                                self._R_BbarB)
        return np.array([max(rotation_angle(R_AB) - self.theta_bound, 0.0)])

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
