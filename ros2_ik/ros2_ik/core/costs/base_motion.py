"""The base-motion cost: a frame (the base) kept near a reference pose."""
from __future__ import annotations

import math
from typing import Optional, Tuple

import numpy as np
import pinocchio as pin

from ros2_ik.core.constraints import checks as check
from ros2_ik.core.constraints import compiled as kernel
from ros2_ik.core.costs._base import NamedCost
from ros2_ik.core.constraints.contact import placement_error, pose_argument
from ros2_ik.core.kinematics.frames import frame_id
from ros2_ik.core.kinematics.lie import jlog3, log3_of
from ros2_ik.core.runtime.compiled import jit


class BaseMotionCost(NamedCost):
    """``w_p |p - p_ref|^2 + w_r |log3(R_ref^T R)|^2``: the base away from a reference pose.

    ``frame``: the base's frame (its joint's name, e.g. a whole-body group's
    ``base_joint``); ``T_world_reference``: where it was (e.g. the seed's base pose,
    ``group.base_world_placement(seed)``).  Weights [1/m^2], [1/rad^2], >= 0.  For a mobile
    manipulator: the least base displacement that reaches a target.
    """

    def __init__(self, model: pin.Model, frame: str, T_world_reference,
                 position_weight: float = 1.0, rotation_weight: float = 1.0, *,
                 name: Optional[str] = None):
        self._fid = frame_id(model, frame)
        T = pose_argument(T_world_reference, "T_world_reference")
        self._p, self._Rt = T.translation.copy(), T.rotation.T.copy()
        wp = check.non_negative(position_weight, "position_weight")
        wr = check.non_negative(rotation_weight, "rotation_weight")
        #: ``sqrt(2 w)`` of the position and the rotation rows.
        self._sp, self._sr = math.sqrt(2.0 * wp), math.sqrt(2.0 * wr)
        self._s = np.array([self._sp] * 3 + [self._sr] * 3)
        self.name = check.term_name(name, "base_motion_cost")

    def gauss_newton(self, model: pin.Model, data: pin.Data, q: np.ndarray
                     ) -> Tuple[np.ndarray, np.ndarray]:
        """``r = s [p - p_ref, log3(R_ref^T R)]`` (6,) and ``(6, nv)``."""
        r, J = placement_error(model, data, self._fid, self._p, self._Rt)
        return self._s * r, self._s[:, None] * J

    def evaluate(self, model: pin.Model, data: pin.Data, q: np.ndarray
                 ) -> Tuple[float, np.ndarray]:
        """Return the cost and its gradient ``(nv,)``."""
        r, J = self.gauss_newton(model, data, q)
        return 0.5 * float(r @ r), r @ J


# The kernels' form of each cost (``constraints.registry``): ``encode(c, group)`` returns
# its parameters and a constant (the part of its value the group's joints do not move);
# its compiled value adds its gradient to ``grad`` (n,) and its Gauss-Newton curvature
# (when it has one) to ``H`` (n, n) at group vector ``q``, kinematics computed.
# ``S33`` (6, 3, 3), ``Sn`` (2, 3, n): scratch.


def _encode_base_motion(c: BaseMotionCost, group) -> Tuple[list, float]:
    """``p_ref`` (3), ``R_ref^T`` (9, row by row), ``sqrt(2 w_p)``, ``sqrt(2 w_r)``."""
    return c._p.tolist() + c._Rt.ravel().tolist() + [c._sp, c._sr], 0.0


@jit
def value(oMf, Jf, fa, fb, prm, q, grad, H, S33, Sn):  # pragma: no cover - compiled
    """``1/2 |r|^2``, ``r = s [p - p_ref, log3(R_ref^T R)]``; gradient, Gauss-Newton curvature.

    The rotation rows' Jacobian is ``Jlog3(R_err) R^T J_w`` (:func:`placement_error`'s).
    """
    n = grad.shape[0]
    sp, sr = prm[12], prm[13]
    E, M, Jp, Jr = S33[0], S33[2], Sn[0], Sn[1]
    for r in range(3):  # R_err = R_ref^T R
        a0, a1, a2 = prm[3 + 3 * r], prm[4 + 3 * r], prm[5 + 3 * r]
        for c in range(3):
            E[r, c] = a0 * oMf[fa, 0, c] + a1 * oMf[fa, 1, c] + a2 * oMf[fa, 2, c]
    wx, wy, wz, theta = log3_of(E[0, 0], E[0, 1], E[0, 2], E[1, 0], E[1, 1], E[1, 2],
                                E[2, 0], E[2, 1], E[2, 2])
    jlog3(wx, wy, wz, theta, S33, 1)
    for r in range(3):  # M = Jlog3 R^T
        for c in range(3):
            M[r, c] = sr * (S33[1, r, 0] * oMf[fa, c, 0] + S33[1, r, 1] * oMf[fa, c, 1]
                            + S33[1, r, 2] * oMf[fa, c, 2])
    rp0, rp1, rp2 = (sp * (oMf[fa, 0, 3] - prm[0]), sp * (oMf[fa, 1, 3] - prm[1]),
                     sp * (oMf[fa, 2, 3] - prm[2]))
    rr0, rr1, rr2 = sr * wx, sr * wy, sr * wz
    for c in range(n):
        w0, w1, w2 = Jf[fa, 3, c], Jf[fa, 4, c], Jf[fa, 5, c]
        for r in range(3):
            Jp[r, c] = sp * Jf[fa, r, c]
            Jr[r, c] = M[r, 0] * w0 + M[r, 1] * w1 + M[r, 2] * w2
        grad[c] += (Jp[0, c] * rp0 + Jp[1, c] * rp1 + Jp[2, c] * rp2
                    + Jr[0, c] * rr0 + Jr[1, c] * rr1 + Jr[2, c] * rr2)
    for a_ in range(n):
        for b_ in range(n):
            H[a_, b_] += (Jp[0, a_] * Jp[0, b_] + Jp[1, a_] * Jp[1, b_] + Jp[2, a_] * Jp[2, b_]
                          + Jr[0, a_] * Jr[0, b_] + Jr[1, a_] * Jr[1, b_]
                          + Jr[2, a_] * Jr[2, b_])
    return 0.5 * (rp0 * rp0 + rp1 * rp1 + rp2 * rp2 + rr0 * rr0 + rr1 * rr1 + rr2 * rr2)


BASE_MOTION = kernel.CostKind(BaseMotionCost, lambda c: (c._fid, c._fid),
                              _encode_base_motion, value)
