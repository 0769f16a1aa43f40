"""The CoM cost: the centre of mass drawn to a point in the world [m^2]."""
from __future__ import annotations

from typing import Optional, Tuple

import numpy as np
import pinocchio as pin

from ros2_ik.core.constraints import checks as check
from ros2_ik.core.constraints.com import com_world
from ros2_ik.core.costs._base import NamedCost
from ros2_ik.core.errors import InvalidGoal


class CenterOfMassCost(NamedCost):
    """``sum_i w_i (c_i - t_i)^2`` [w m^2]: the CoM ``c`` (world) near target ``t`` (3,).

    ``weights``: a number or one per world axis (>= 0; 0 leaves an axis free).
    """

    def __init__(self, model: pin.Model, target, weights=1.0, *, name: Optional[str] = None):
        (self._target,) = (np.array(v) for v in check.vector_lists((target,), ("target",)))
        w = np.broadcast_to(np.asarray(weights, dtype=float), (3,)) if np.ndim(weights) == 0 \
            else check.vector3(weights, "weights")
        if not np.all(np.isfinite(w)) or np.any(w < 0):
            raise InvalidGoal(f"weights must be finite and >= 0, got {np.asarray(w).tolist()}")
        self._sqrt_2w = np.sqrt(2.0 * w)
        check.has_mass(model, "com_cost")
        self.name = check.term_name(name, "com_cost")

    def gauss_newton(self, model: pin.Model, data: pin.Data, q: np.ndarray
                     ) -> Tuple[np.ndarray, np.ndarray]:
        """``r = sqrt(2 w) (c - t)`` (3,) and ``(3, nv)``."""
        c, J = com_world(model, data)
        return self._sqrt_2w * (c - self._target), self._sqrt_2w[:, None] * J

    def evaluate(self, model: pin.Model, data: pin.Data, q: np.ndarray
                 ) -> Tuple[float, np.ndarray]:
        """Return the cost and its gradient ``(nv,)``."""
        r, J = self.gauss_newton(model, data, q)
        return 0.5 * float(r @ r), r @ J
