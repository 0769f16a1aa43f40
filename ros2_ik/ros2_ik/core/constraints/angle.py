"""Drake's AngleBetweenVectorsConstraint."""
from __future__ import annotations

import math
from typing import Optional, Tuple

import numpy as np
import pinocchio as pin

from . import _checks as check
from ._base import BoundedConstraint
from ._frames import frame_id, vectors_dot


class AngleBetweenVectorsConstraint(BoundedConstraint):
    """``angle_lower <= angle(a, b) <= angle_upper`` for ``a_A`` fixed in A, ``b_B`` in B.

    Imposed as Drake does, on the cosine: ``cos(angle_upper) <= a^T R_AB b <= cos(angle_lower)``
    with ``a``, ``b`` normalised.  One row, dimensionless; angles in [rad] in ``[0, pi]``.
    """

    def __init__(
        self, model: pin.Model, frame_A: str, a_A, frame_B: str, b_B,
        angle_lower: float, angle_upper: float, *, name: Optional[str] = None,
    ):
        self._fid_A = frame_id(model, frame_A)
        self._fid_B = frame_id(model, frame_B)
        self._a_A = check.unit_vector3(a_A, "a_A")
        self._b_B = check.unit_vector3(b_B, "b_B")
        self.angle_lower = check.angle(angle_lower, "angle_lower")
        self.angle_upper = check.angle(angle_upper, "angle_upper")
        check.ordered(self.angle_lower, self.angle_upper, "angle_lower", "angle_upper")
        default = f"angle({frame_A},{frame_B})"
        super().__init__(check.term_name(name, default),
                         [math.cos(self.angle_upper)], [math.cos(self.angle_lower)])

    def evaluate(
        self, model: pin.Model, data: pin.Data, q: np.ndarray
    ) -> Tuple[np.ndarray, np.ndarray]:
        """``[cos(angle)]`` (1,) and its Jacobian ``(1, nv)``."""
        cosine, gradient = vectors_dot(model, data, self._fid_A, self._a_A,
                                       self._fid_B, self._b_B)
        return np.array([cosine]), gradient[np.newaxis, :]
