"""The position cost: a point of one frame drawn to a point of another [m^2]."""
from __future__ import annotations

import math
from typing import Optional, Tuple

import numpy as np
import pinocchio as pin

from ros2_ik.core.constraints import checks as check
from ros2_ik.core.constraints import compiled as kernel
from ros2_ik.core.costs._base import NamedCost
from ros2_ik.core.kinematics import relative
from ros2_ik.core.kinematics.frames import frame_id, point_in_frame
from ros2_ik.core.runtime.compiled import jit


class PositionCost(NamedCost):
    """``(p_AP - p_AQ)^T C (p_AP - p_AQ)`` [m^2 times the units of C].

    P is fixed in ``frame_A`` at ``p_AP``; Q is fixed in ``frame_B`` at ``p_BQ``; the
    difference is expressed in frame A.  ``C`` (3, 3) must be positive semidefinite
    (only its symmetric part matters and is kept).
    """

    _p_AP = check.lazy_array("_p_AP_list")
    _p_BQ = check.lazy_array("_p_BQ_list")
    _Lt = check.lazy_array("_Lt_list", (3, 3))

    def __init__(self, model: pin.Model, frame_A: str, p_AP, frame_B: str, p_BQ, C,
                 *, name: Optional[str] = None):
        self._fid_A = frame_id(model, frame_A)
        self._fid_B = frame_id(model, frame_B)
        self._p_AP_list, self._p_BQ_list = check.vector_lists((p_AP, p_BQ), ("p_AP", "p_BQ"))
        self._C, eigenvalues, vectors = check.psd_matrix3(C, "C")  # C = V l V^T
        #: ``L^T`` (3, 3) row by row, ``C = L L^T`` [sqrt of C's units]: its rows are the
        #: eigenvectors scaled by ``sqrt(2 l)``.
        self._Lt_list = [math.sqrt(2.0 * max(w, 0.0)) * v for w, row in
                         zip(eigenvalues.tolist(), vectors.T.tolist()) for v in row]
        self.name = check.term_name(name, f"position_cost({frame_B})")

    def gauss_newton(self, model: pin.Model, data: pin.Data, q: np.ndarray
                     ) -> Tuple[np.ndarray, np.ndarray]:
        """``r = sqrt(2) L^T (p_AP - p_AQ)`` (3,) with ``C = L L^T``, and ``(3, nv)``."""
        p_AQ, J_AQ = point_in_frame(model, data, self._fid_A, None,
                                    self._fid_B, self._p_BQ)
        return self._Lt @ (self._p_AP - p_AQ), -self._Lt @ J_AQ

    def evaluate(self, model: pin.Model, data: pin.Data, q: np.ndarray
                 ) -> Tuple[float, np.ndarray]:
        """Return the cost and its gradient ``(nv,)``."""
        p_AQ, J_AQ = point_in_frame(model, data, self._fid_A, None,
                                    self._fid_B, self._p_BQ)
        error = self._p_AP - p_AQ
        weighted = self._C @ error
        return float(error @ weighted), -2.0 * weighted @ J_AQ


# The kernels' form of each cost (``constraints.registry``): ``encode(c, group)`` returns
# its parameters and a constant (the part of its value the group's joints do not move);
# its compiled value adds its gradient to ``grad`` (n,) and its Gauss-Newton curvature
# (when it has one) to ``H`` (n, n) at group vector ``q``, kinematics computed.
# ``S33`` (6, 3, 3), ``Sn`` (2, 3, n): scratch.


def _encode_position(c: PositionCost, group) -> Tuple[list, float]:
    """``p_AP`` (3), ``p_BQ`` (3), ``L^T`` (9) with ``C = L L^T / 2``."""
    return c._p_AP_list + c._p_BQ_list + c._Lt_list, 0.0


@jit(inline="always")  # once inline code of the dispatch: no call of its own
def value(oMf, Jf, fa, fb, prm, q, grad, H, S33, Sn):  # pragma: no cover
    """``1/2 |L^T (p_AP - p_AQ)|^2``; its gradient and Gauss-Newton curvature."""
    n = q.shape[0]
    p, r, Jp, Jr = S33[5, 2], S33[5, 1], Sn[0], Sn[1]
    relative.point_in_frame(oMf, Jf, fa, fb, prm, -1, 3, p, Jp, 0)
    for k in range(3):  # L^T rows at prm[6 + 3 k]
        L0, L1, L2 = prm[6 + 3 * k], prm[7 + 3 * k], prm[8 + 3 * k]
        r[k] = L0 * (prm[0] - p[0]) + L1 * (prm[1] - p[1]) + L2 * (prm[2] - p[2])
        for c in range(n):
            Jr[k, c] = -(L0 * Jp[0, c] + L1 * Jp[1, c] + L2 * Jp[2, c])
    for a_ in range(n):
        grad[a_] += Jr[0, a_] * r[0] + Jr[1, a_] * r[1] + Jr[2, a_] * r[2]
        for b_ in range(n):
            H[a_, b_] += Jr[0, a_] * Jr[0, b_] + Jr[1, a_] * Jr[1, b_] + Jr[2, a_] * Jr[2, b_]
    return 0.5 * (r[0] * r[0] + r[1] * r[1] + r[2] * r[2])


POSITION = kernel.CostKind(PositionCost, lambda c: (c._fid_A, c._fid_B), _encode_position,
                           value)
