"""Contacts: a frame held at a pose (6D), and a point on a plane with its normal in a cone.

:class:`FramePlacementConstraint` holds frame F at ``T_world_target`` (a sole flat on
the ground where it stands, a hand on a handle): rows ``p_WF - p_target`` [m] (world) and
``log3(R_target^T R_WF)`` [rad].  :meth:`FramePlacementConstraint.at_current` holds the
frame where a configuration puts it.

:class:`PointOnPlaneConstraint` keeps a point fixed in F on a plane (world point ``o``,
unit normal ``n``) and the frame's axis ``a_F`` within ``cone_rad`` of ``n``: rows
``n . (p_WP - o)`` [m] (within ``[height_lower, height_upper]``, default 0) and the angle
[rad] between ``R_WF a_F`` and ``n``, at most ``cone_rad`` (a foot on uneven ground).
"""
from __future__ import annotations

import math
from typing import Optional, Tuple

import numpy as np
import pinocchio as pin

from ros2_ik.core.kinematics.frames import Placements, frame_id, frame_jacobian, \
    placements_at, point_jacobian, rotation_angle, rotation_product, rotation_rows, vector_angle, \
    vectors_angle_and_gradient

from ..errors import InvalidGoal
from . import checks as check
from ._base import BoundedConstraint

_UNITS6 = ("m", "m", "m", "rad", "rad", "rad")


def pose_argument(value, arg: str) -> pin.SE3:
    """Return a pose (``pin.SE3`` or 4x4 matrix) as ``pin.SE3``; InvalidGoal naming ``arg``."""
    if value is None:
        raise InvalidGoal(f"{arg} must be a pose (pin.SE3 or 4x4)")
    return check.transform(value, arg) or pin.SE3.Identity()


def placement_error(model: pin.Model, data: pin.Data, fid: int, p_target: np.ndarray,
                    Rt_target: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """``[p_WF - p_t, log3(R_t^T R_WF)]`` (6,) [m, rad] of frame ``fid`` and ``(6, nv)``.

    ``Rt_target``: the target rotation transposed.  Rotation rows' Jacobian:
    ``Jlog3(R_err) R_WF^T J_w`` (the frame's angular velocity in F).
    """
    X = data.oMf[fid]
    R_err = Rt_target @ X.rotation
    J = frame_jacobian(model, data, fid)
    Jr = pin.Jlog3(R_err) @ (X.rotation.T @ J[3:])
    return (np.concatenate((X.translation - p_target, pin.log3(R_err))),
            np.vstack((J[:3], Jr)))


class FramePlacementConstraint(BoundedConstraint):
    """Frame F at ``T_world_target``: 3 position rows [m] and 3 rotation rows [rad], all 0.

    ``position_tolerance`` [m] / ``angle_tolerance`` [rad] widen the rows to a box (0: an
    equality, met within the solve's constraint tolerance).  The verification measures the
    position error's norm [m] and the rotation angle [rad] (:meth:`measure`).
    """

    def __init__(self, model: pin.Model, frame: str, T_world_target,
                 position_tolerance: float = 0.0, angle_tolerance: float = 0.0, *,
                 name: Optional[str] = None):
        self._fid = frame_id(model, frame)
        T = pose_argument(T_world_target, "T_world_target")
        self.T_world_target = T
        self._p, self._Rt = T.translation.copy(), T.rotation.T.copy()
        self._p_list, self._Rt_rows = self._p.tolist(), self._Rt.tolist()
        tp = check.non_negative(position_tolerance, "position_tolerance")
        ta = check.angle(angle_tolerance, "angle_tolerance")
        self._tols = (tp, ta)
        super().__init__(check.term_name(name, f"contact({frame})"),
                         [-tp] * 3 + [-ta] * 3, [tp] * 3 + [ta] * 3)

    @classmethod
    def at_current(cls, model: pin.Model, frame: str, q: np.ndarray, **kwargs
                   ) -> "FramePlacementConstraint":
        """Hold ``frame`` where full configuration ``q`` (nq,) puts it."""
        q = check.array_of_shape(q, (model.nq,), "q")
        T = pin.SE3(placements_at(model, q)[frame_id(model, frame)])
        return cls(model, frame, T, **kwargs)

    @property
    def units(self) -> Tuple[str, ...]:
        """Three rows in [m], three in [rad]."""
        return _UNITS6

    def evaluate(self, model: pin.Model, data: pin.Data, q: np.ndarray
                 ) -> Tuple[np.ndarray, np.ndarray]:
        """``[p_WF - p_t, log3(R_t^T R_WF)]`` (6,) and the Jacobian ``(6, nv)``."""
        return placement_error(model, data, self._fid, self._p, self._Rt)

    def value(self, model: pin.Model, data: pin.Data, q: np.ndarray) -> np.ndarray:
        """Return the six rows alone."""
        X = data.oMf[self._fid]
        return np.concatenate((X.translation - self._p, pin.log3(self._Rt @ X.rotation)))

    def measure_rows(self, placements: Placements) -> list:
        """``[|dp| - tol_p, 0, 0, angle - tol_a, 0, 0]`` clipped at 0 [m, rad]: norms, not rows."""
        X_WF = placements.pose(self._fid)
        x, y, z = X_WF[9:]
        a, b, c = self._p_list
        dist = math.hypot(x - a, y - b, z - c)  # no OverflowError: a target 1e300 m away
        angle = rotation_angle(rotation_product(self._Rt_rows, rotation_rows(X_WF)))
        tp, ta = self._tols
        return [max(dist - tp, 0.0) if dist == dist else math.inf, 0.0, 0.0,
                max(angle - ta, 0.0) if angle == angle else math.inf, 0.0, 0.0]


class PointOnPlaneConstraint(BoundedConstraint):
    """Point ``p_FP`` of frame F on a plane, the frame's axis ``a_F`` within a cone of its normal.

    Rows: the point's height ``n . (p_WP - o)`` [m] in ``[height_lower, height_upper]``
    and the angle [rad] between ``R_WF a_F`` and ``n`` in ``[0, cone_rad]``.
    """

    units = ("m", "rad")

    def __init__(self, model: pin.Model, frame: str, p_FP=(0.0, 0.0, 0.0),
                 plane_point=(0.0, 0.0, 0.0), plane_normal=(0.0, 0.0, 1.0),
                 a_F=(0.0, 0.0, 1.0), cone_rad: float = 0.0, height_lower: float = 0.0,
                 height_upper: float = 0.0, *, name: Optional[str] = None):
        self._fid = frame_id(model, frame)
        self._p_FP, self._o, self._n, self._a_F = (np.array(v) for v in check.vector_lists(
            (p_FP, plane_point, plane_normal, a_F),
            ("p_FP", "plane_point", "plane_normal", "a_F"), units=(2, 3)))
        self.cone_rad = check.angle(cone_rad, "cone_rad")
        lo = check.scalar(height_lower, "height_lower")
        hi = check.scalar(height_upper, "height_upper")
        check.ordered(lo, hi, "height_lower", "height_upper")
        super().__init__(check.term_name(name, f"point_on_plane({frame})"),
                         [lo, 0.0], [hi, self.cone_rad])

    def evaluate(self, model: pin.Model, data: pin.Data, q: np.ndarray
                 ) -> Tuple[np.ndarray, np.ndarray]:
        """``[height, angle]`` (2,) [m, rad] and the Jacobian ``(2, nv)``."""
        X = data.oMf[self._fid]
        p = X.act(self._p_FP)
        Jp = point_jacobian(frame_jacobian(model, data, self._fid), X.translation, p)
        angle, grad = vectors_angle_and_gradient(model, data, self._fid, self._a_F, 0,
                                                 self._n)
        return (np.array([float(self._n @ (p - self._o)), angle]),
                np.vstack((self._n @ Jp, grad)))

    def value(self, model: pin.Model, data: pin.Data, q: np.ndarray) -> np.ndarray:
        """``[height, angle]`` (2,) [m, rad] alone."""
        X = data.oMf[self._fid]
        return np.array([float(self._n @ (X.act(self._p_FP) - self._o)),
                         vector_angle(X.rotation @ self._a_F, self._n)])
