"""The orientation cost: ``c (1 - cos(theta))`` between two frames."""
from __future__ import annotations

from typing import Optional, Tuple

import numpy as np
import pinocchio as pin

from ros2_ik.core.constraints import checks as check
from ros2_ik.core.constraints import compiled as kernel
from ros2_ik.core.costs._base import NamedCost
from ros2_ik.core.kinematics import relative
from ros2_ik.core.kinematics.frames import frame_id, trace_and_gradient
from ros2_ik.core.runtime.compiled import jit


class OrientationCost(NamedCost):
    """``c (1 - cos(theta))``, theta the angle between frames A and B.

    Frames as in :class:`~ros2_ik.core.constraints.OrientationConstraint`;
    ``cos(theta) = (tr(R_AB) - 1) / 2``.  ``c >= 0``.
    """

    _R_AbarA = check.lazy_array("_R_AbarA_list", (3, 3))
    _R_BbarB = check.lazy_array("_R_BbarB_list", (3, 3))

    def __init__(self, model: pin.Model, frame_Abar: str, R_AbarA, frame_Bbar: str, R_BbarB,
                 c: float, *, name: Optional[str] = None):
        self._fid_Abar = frame_id(model, frame_Abar)
        self._fid_Bbar = frame_id(model, frame_Bbar)
        self._R_AbarA_list = check.rotation_list(R_AbarA, "R_AbarA")
        self._R_BbarB_list = check.rotation_list(R_BbarB, "R_BbarB")
        self.c = check.non_negative(c, "c")
        self.name = check.term_name(name, f"orientation_cost({frame_Abar},{frame_Bbar})")

    def evaluate(self, model: pin.Model, data: pin.Data, q: np.ndarray
                 ) -> Tuple[float, np.ndarray]:
        """Return the cost and its gradient ``(nv,)``."""
        trace, gradient = trace_and_gradient(
            model, data, self._fid_Abar, self._R_AbarA, self._fid_Bbar, self._R_BbarB)
        return 0.5 * self.c * (3.0 - trace), -0.5 * self.c * gradient


# The kernels' form of each cost (``constraints.registry``): ``encode(c, group)`` returns
# its parameters and a constant (the part of its value the group's joints do not move);
# its compiled value adds its gradient to ``grad`` (n,) and its Gauss-Newton curvature
# (when it has one) to ``H`` (n, n) at group vector ``q``, kinematics computed.
# ``S33`` (6, 3, 3), ``Sn`` (2, 3, n): scratch.


def _encode_orientation(c: OrientationCost, group) -> Tuple[list, float]:
    """``R_AbarA`` (9), ``R_BbarB`` (9), ``c``."""
    return c._R_AbarA_list + c._R_BbarB_list + [float(c.c)], 0.0


@jit
def value(oMf, Jf, fa, fb, prm, q, grad, H, S33, Sn):  # pragma: no cover
    """``c/2 (3 - tr R_AB)``; its gradient on ``J_w = R_WA^T (w_B - w_A)`` (no curvature)."""
    relative.rotations(oMf, fa, fb, prm, S33)
    RWA, R = S33[0], S33[2]
    half_c = 0.5 * prm[18]
    r0, r1, r2 = R[1, 2] - R[2, 1], R[2, 0] - R[0, 2], R[0, 1] - R[1, 0]
    JA, JB = Jf[fa], Jf[fb]
    for c in range(grad.shape[0]):
        d0, d1, d2 = JB[3, c] - JA[3, c], JB[4, c] - JA[4, c], JB[5, c] - JA[5, c]
        j0 = RWA[0, 0] * d0 + RWA[1, 0] * d1 + RWA[2, 0] * d2
        j1 = RWA[0, 1] * d0 + RWA[1, 1] * d1 + RWA[2, 1] * d2
        j2 = RWA[0, 2] * d0 + RWA[1, 2] * d1 + RWA[2, 2] * d2
        grad[c] -= half_c * (r0 * j0 + r1 * j1 + r2 * j2)
    return half_c * (3.0 - (R[0, 0] + R[1, 1] + R[2, 2]))


ORIENTATION = kernel.CostKind(OrientationCost, lambda c: (c._fid_Abar, c._fid_Bbar),
                              _encode_orientation, value)
