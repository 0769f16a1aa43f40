"""Drake's GazeTargetConstraint: a target point inside a cone fixed in another frame."""
from __future__ import annotations

import math
from typing import Optional, Tuple

import numpy as np
import pinocchio as pin

from . import _checks as check
from ._base import BoundedConstraint
from ._frames import frame_id, point_in_frame


class GazeTargetConstraint(BoundedConstraint):
    """Target T (fixed in B at ``p_BT``) inside the cone from S (``p_AS``) along ``n_A``.

    Drake's two rows, both ``>= 0``, with ``p = p_AT - p_AS`` and ``n`` = unit ``n_A``::

        g0 = p . n                              [m]
        g1 = (p . n)^2 - cos(theta)^2 |p|^2     [m^2]

    ``cone_half_angle`` (theta) in [rad] must lie in ``[0, pi/2]``: Drake's documentation
    says ``[0, pi]`` but its code rejects more than pi/2, because for a wider cone these
    rows describe the cone of half angle ``pi - theta`` instead.
    """

    def __init__(
        self, model: pin.Model, frame_A: str, p_AS, n_A, frame_B: str, p_BT,
        cone_half_angle: float, *, name: Optional[str] = None,
    ):
        self._fid_A = frame_id(model, frame_A)
        self._fid_B = frame_id(model, frame_B)
        self._p_AS = check.vector3(p_AS, "p_AS")
        self._n_A = check.unit_vector3(n_A, "n_A")
        self._p_BT = check.vector3(p_BT, "p_BT")
        self.cone_half_angle = check.angle(
            cone_half_angle, "cone_half_angle", math.pi / 2, "pi/2")
        self._cos2 = math.cos(self.cone_half_angle) ** 2
        default = f"gaze({frame_A}->{frame_B})"
        super().__init__(check.term_name(name, default), [0.0, 0.0], [math.inf, math.inf])

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
