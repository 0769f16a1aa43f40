"""The base-motion cost: a frame (the base) kept near a reference pose."""
from __future__ import annotations

import math
from typing import Optional, Tuple

import numpy as np
import pinocchio as pin

from ros2_ik.core.constraints import checks as check
from ros2_ik.core.costs._base import NamedCost
from ros2_ik.core.constraints.contact import placement_error, pose_argument
from ros2_ik.core.kinematics.frames import frame_id


class BaseMotionCost(NamedCost):
    """``w_p |p - p_ref|^2 + w_r |log3(R_ref^T R)|^2``: the base away from a reference pose.

    ``frame``: the base's frame (its joint's name, e.g. a whole-body group's
    ``base_joint``); ``T_world_reference``: where it was (e.g. the seed's base pose,
    ``group.base_placement(seed)``).  Weights [1/m^2], [1/rad^2], >= 0.  For a mobile
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
        self._s = np.array([math.sqrt(2.0 * wp)] * 3 + [math.sqrt(2.0 * wr)] * 3)
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
