"""The angle cost: ``c (1 - cos(theta))`` between a vector of one frame and one of another."""
from __future__ import annotations

from typing import Optional, Tuple

import numpy as np
import pinocchio as pin

from ros2_ik.core.constraints import checks as check
from ros2_ik.core.constraints import compiled as kernel
from ros2_ik.core.costs._base import NamedCost
from ros2_ik.core.kinematics import relative
from ros2_ik.core.kinematics.frames import frame_id, vectors_dot
from ros2_ik.core.runtime.compiled import jit


class AngleBetweenVectorsCost(NamedCost):
    """``c (1 - cos(theta))``, theta the angle between ``a_A`` fixed in A and ``b_B`` in B.

    The vectors must be non-zero (they are normalised).  ``c >= 0``.
    """

    _a_A = check.lazy_array("_a_A_list")
    _b_B = check.lazy_array("_b_B_list")

    def __init__(self, model: pin.Model, frame_A: str, a_A, frame_B: str, b_B, c: float,
                 *, name: Optional[str] = None):
        self._fid_A = frame_id(model, frame_A)
        self._fid_B = frame_id(model, frame_B)
        self._a_A_list, self._b_B_list = check.vector_lists((a_A, b_B), ("a_A", "b_B"),
                                                            units=(0, 1))
        self.c = check.non_negative(c, "c")
        self.name = check.term_name(name, f"angle_cost({frame_A},{frame_B})")

    def evaluate(self, model: pin.Model, data: pin.Data, q: np.ndarray
                 ) -> Tuple[float, np.ndarray]:
        """Return the cost and its gradient ``(nv,)``."""
        cosine, gradient = vectors_dot(model, data, self._fid_A, self._a_A,
                                       self._fid_B, self._b_B)
        return self.c * (1.0 - cosine), -self.c * gradient


# The kernels' form of each cost (``constraints.registry``): ``encode(c, group)`` returns
# its parameters and a constant (the part of its value the group's joints do not move);
# its compiled value adds its gradient to ``grad`` (n,) and its Gauss-Newton curvature
# (when it has one) to ``H`` (n, n) at group vector ``q``, kinematics computed.
# ``S33`` (6, 3, 3), ``Sn`` (2, 3, n): scratch.


def _encode_angle(c: AngleBetweenVectorsCost, group) -> Tuple[list, float]:
    """``a_A`` (3), ``b_B`` (3), ``c``."""
    return c._a_A_list + c._b_B_list + [float(c.c)], 0.0


@jit
def value(oMf, Jf, fa, fb, prm, q, grad, H, S33, Sn):  # pragma: no cover
    """``c (1 - a . b)``; its gradient (no curvature)."""
    dot = relative.world_vectors(oMf, fa, fb, prm, S33)
    a, b = S33[5, 0], S33[5, 1]
    x0, x1, x2 = a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]
    c = prm[6]
    for col in range(grad.shape[0]):
        d = (x0 * (Jf[fa, 3, col] - Jf[fb, 3, col]) + x1 * (Jf[fa, 4, col] - Jf[fb, 4, col])
             + x2 * (Jf[fa, 5, col] - Jf[fb, 5, col]))
        grad[col] -= c * d
    return c * (1.0 - dot)


ANGLE = kernel.CostKind(AngleBetweenVectorsCost, lambda c: (c._fid_A, c._fid_B),
                        _encode_angle, value)
