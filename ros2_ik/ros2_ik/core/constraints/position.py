"""Drake's PositionConstraint: a point fixed in B inside a box expressed in A."""
from __future__ import annotations

import functools
from typing import Optional, Tuple

import numpy as np
import pinocchio as pin

from ros2_ik.core.kinematics import relative
from ros2_ik.core.kinematics.frames import (Placements, flat_pose, frame_id, point_in_frame,
                                            point_seen, world_in_frame)
from ros2_ik.core.runtime.compiled import jit

from . import checks as check
from . import compiled as kernel
from . import _samples as samples
from ._base import BoundedConstraint


class PositionConstraint(BoundedConstraint):
    """``p_AQ_lower <= p_AQ <= p_AQ_upper`` (3 rows, [m]).

    ``p_AQ`` is the position of point Q, fixed in frame B at ``p_BQ``, measured and
    expressed in frame A.  Frame A is the model frame ``frame_A`` (Drake's A-bar)
    offset by ``X_AbarA`` (``pin.SE3`` or 4x4 matrix; ``None`` = identity).  Use
    ``-inf`` / ``+inf`` bounds to leave an axis free.
    """

    _p_BQ = check.lazy_array("_p_BQ_list")

    def __init__(
        self, model: pin.Model, frame_A: str, p_AQ_lower, p_AQ_upper,
        frame_B: str, p_BQ, X_AbarA=None, *, name: Optional[str] = None,
    ):
        self._fid_A = frame_id(model, frame_A)
        self._fid_B = frame_id(model, frame_B)
        lower, upper, self._p_BQ_list = check.box_and_point(
            p_AQ_lower, p_AQ_upper, p_BQ, "p_AQ_lower", "p_AQ_upper", "p_BQ")
        self._X_AbarA = check.transform(X_AbarA, "X_AbarA")  # None: the identity
        super().__init__(check.term_name(name, f"position({frame_B})"), lower, upper)

    def evaluate(
        self, model: pin.Model, data: pin.Data, q: np.ndarray
    ) -> Tuple[np.ndarray, np.ndarray]:
        """``p_AQ`` (3,) [m] and its Jacobian ``(3, nv)``."""
        return point_in_frame(model, data, self._fid_A, self._X_AbarA, self._fid_B, self._p_BQ)

    def value(self, model: pin.Model, data: pin.Data, q: np.ndarray) -> np.ndarray:
        """``p_AQ`` (3,) [m] alone (no Jacobian)."""
        return np.array(self._p_AQ(Placements.of(model, data, q)))

    def measure_rows(self, placements: Placements) -> list:
        """Distance [m] of each of ``p_AQ``'s coordinates outside the box (3 floats)."""
        x, y, z = self._p_AQ(placements)
        (l0, l1, l2), (u0, u1, u2) = self._given[:2]  # lists (box_and_point's)
        return [max(l0 - x, x - u0, 0.0), max(l1 - y, y - u1, 0.0),
                max(l2 - z, z - u2, 0.0)]  # as outside(), written out

    def _p_AQ(self, placements: Placements) -> list:
        """``p_AQ`` [m] from the placements, as three floats: the verification's figure."""
        p = point_seen(placements, self._fid_A, self._fid_B, self._p_BQ_list)
        X = self._X_AbarA
        return p if X is None else world_in_frame(self._X_AbarA_floats, p)

    @functools.cached_property
    def _X_AbarA_floats(self) -> list:
        """``X_AbarA`` as :meth:`Placements.pose` gives a placement (12 floats)."""
        return flat_pose(self._X_AbarA)

    def world_goal(self, group) -> Optional[Tuple[int, list, np.ndarray]]:
        """``(frame B's id, p_BQ [m], the box's centre in the world [m])``, or None.

        Where point Q should go, for ``group``'s restarts: None when ``group`` moves frame
        A or an axis of the box is unbounded.
        """
        if group.moves_frame(self._fid_A):
            return None
        lower, upper = self.bound_lists()
        if not all(map(np.isfinite, lower + upper)):
            return None
        X_WA = group.locked_placement(self._fid_A)
        if self._X_AbarA is not None:
            X_WA = X_WA * self._X_AbarA
        return self._fid_B, self._p_BQ_list, X_WA.act(0.5 * (np.array(lower) + upper))

    def sample_violation(self, frames) -> np.ndarray:
        """Squared distance [m^2] of each sample's ``p_AQ`` outside the box."""
        p_WQ = samples.point_world(frames.placement(self._fid_B), self._p_BQ)
        p_AQ = samples.in_frame(frames.placement(self._fid_A), p_WQ, self._X_AbarA)
        return samples.outside(p_AQ, self.lower_bound, self.upper_bound)


# The kernels' form (``registry``): parameters ``X_AbarA`` (16, row by row), ``p_BQ`` (3).
_EYE4 = np.eye(4).ravel().tolist()


def _encode(c: PositionConstraint, tolerance) -> tuple:
    X = _EYE4 if c._X_AbarA is None else c._X_AbarA.homogeneous.ravel().tolist()
    return c._fid_A, c._fid_B, X + c._p_BQ_list


@jit(inline="always")  # a thin step of the dispatch: no call of its own
def rows(oMf, Jf, fa, fb, prm, g, Jg, row, p3, J3):  # pragma: no cover - compiled
    """``evaluate_physical``: ``p_AQ`` [m] into rows ``row..row+2`` of ``g``, ``Jg``; 3."""
    relative.point_in_frame(oMf, Jf, fa, fb, prm, 0, 16, g, Jg, row)
    return 3


KIND = kernel.Kind(PositionConstraint, _encode, kernel.physical_rows, rows)
