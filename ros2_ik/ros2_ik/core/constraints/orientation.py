"""Drake's OrientationConstraint: the angle between frames A and B is at most theta_bound."""
from __future__ import annotations

import math
from typing import Optional, Tuple

import numpy as np
import pinocchio as pin

from . import _checks as check
from ._base import BoundedConstraint
from ._frames import frame_id, trace_and_gradient


class OrientationConstraint(BoundedConstraint):
    """``theta(A, B) <= theta_bound``, as Drake: ``tr(R_AB) >= 2 cos(theta_bound) + 1``.

    Frame A is fixed to model frame ``frame_Abar`` with orientation ``R_AbarA``; frame B
    to ``frame_Bbar`` with ``R_BbarB`` (3x3 rotation matrices).  ``theta_bound`` in
    [rad], within ``[0, pi]``.  One row; the value is ``tr(R_AB) = 1 + 2 cos(theta)``
    (dimensionless, in ``[-1, 3]``).  The upper bound is ``+inf`` rather than Drake's 3:
    the same set, but rounding can never report ``tr = 3 + 1e-16`` as a violation.
    """

    def __init__(
        self, model: pin.Model, frame_Abar: str, R_AbarA, frame_Bbar: str, R_BbarB,
        theta_bound: float, *, name: Optional[str] = None,
    ):
        self._fid_Abar = frame_id(model, frame_Abar)
        self._fid_Bbar = frame_id(model, frame_Bbar)
        self._R_AbarA = check.rotation(R_AbarA, "R_AbarA")
        self._R_BbarB = check.rotation(R_BbarB, "R_BbarB")
        self.theta_bound = check.angle(theta_bound, "theta_bound")
        lower = 2.0 * math.cos(self.theta_bound) + 1.0
        default = f"orientation({frame_Abar},{frame_Bbar})"
        super().__init__(check.term_name(name, default), [lower], [math.inf])

    def evaluate(
        self, model: pin.Model, data: pin.Data, q: np.ndarray
    ) -> Tuple[np.ndarray, np.ndarray]:
        """``[tr(R_AB)]`` (1,) and its Jacobian ``(1, nv)``."""
        trace, gradient = trace_and_gradient(
            model, data, self._fid_Abar, self._R_AbarA, self._fid_Bbar, self._R_BbarB)
        return np.array([trace]), gradient[np.newaxis, :]
