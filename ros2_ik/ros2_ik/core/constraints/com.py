"""The centre of mass (CoM) of the whole model: in a box, or within a distance of a point.

``c`` is pinocchio's ``centerOfMass`` of the full model (every body, the locked joints'
too), measured and expressed in frame A (default: the world).  Its Jacobian comes from
``jacobianCenterOfMass`` on the kinematics the caller computed (no forward kinematics
here); a moving frame A adds the terms of its motion.
"""
from __future__ import annotations

import math
from typing import Optional, Tuple

import numpy as np
import pinocchio as pin

from ros2_ik.core.kinematics.frames import frame_id, frame_jacobian
from ros2_ik.core.kinematics.model import COM_FRAME

from . import checks as check
from . import compiled as kernel
from . import position
from ._base import BoundedConstraint

_WORLD = 0


def com_world(model: pin.Model, data: pin.Data) -> Tuple[np.ndarray, np.ndarray]:
    """Return the CoM in the world (3,) [m] and its Jacobian ``(3, nv)`` (kinematics computed).

    ``jacobianCenterOfMass(model, data)`` reads the joint placements the caller's
    ``computeJointJacobians`` left in ``data`` and fills ``data.com[0]``.
    """
    J = pin.jacobianCenterOfMass(model, data, False)
    return data.com[0].copy(), np.array(J)


def com_in_frame(model: pin.Model, data: pin.Data, fid_A: int
                 ) -> Tuple[np.ndarray, np.ndarray]:
    """Return the CoM in frame A, ``R_WA^T (c - p_WA)`` (3,) [m], and its Jacobian ``(3, nv)``.

    ``d p_A = R^T (J_c - J_pA + [c - p_WA]x J_wA) dq`` (A's LOCAL_WORLD_ALIGNED Jacobian).
    """
    c, Jc = com_world(model, data)
    if fid_A == _WORLD:
        return c, Jc
    X = data.oMf[fid_A]
    R, d = X.rotation, c - X.translation
    if model.frames[fid_A].parentJoint == 0:  # A fixed in the world
        return R.T @ d, R.T @ Jc
    JA = frame_jacobian(model, data, fid_A)
    return R.T @ d, R.T @ (Jc - JA[:3] + pin.skew(d) @ JA[3:])


def com_value(model: pin.Model, data: pin.Data, fid_A: int) -> np.ndarray:
    """Return the CoM in frame A (3,) [m] alone, by ``centerOfMass`` on the placements."""
    c = pin.centerOfMass(model, data, pin.KinematicLevel.POSITION, False).copy()
    if fid_A == _WORLD:
        return c
    return data.oMf[fid_A].actInv(c)


class CenterOfMassConstraint(BoundedConstraint):
    """``lower <= c_A <= upper``: the CoM in frame A inside a box (3 rows, [m]).

    A point target is a box of zero width (``lower == upper``); ``-inf``/``inf`` leave
    an axis free (e.g. only x, y in the box, the height free).
    """

    unit = "m"

    def __init__(self, model: pin.Model, lower, upper, frame_A: str = "universe", *,
                 name: Optional[str] = None):
        self._fid_A = frame_id(model, frame_A) if frame_A != "universe" else _WORLD
        lo, hi = check.box_bounds(lower, upper, "lower", "upper")
        check.has_mass(model, "com")
        super().__init__(check.term_name(name, "com"), lo, hi)

    def evaluate(self, model: pin.Model, data: pin.Data, q: np.ndarray
                 ) -> Tuple[np.ndarray, np.ndarray]:
        """``c_A`` (3,) [m] and its Jacobian ``(3, nv)``."""
        return com_in_frame(model, data, self._fid_A)

    def value(self, model: pin.Model, data: pin.Data, q: np.ndarray) -> np.ndarray:
        """``c_A`` (3,) [m] alone: the verification's figure (``centerOfMass``)."""
        return com_value(model, data, self._fid_A)


class CenterOfMassDistanceConstraint(BoundedConstraint):
    """``lower <= |c_A - p_A| <= upper``: the CoM's distance [m] to point ``p_A`` (1 row).

    ``p_A`` fixed in frame A (default: the world).
    """

    unit = "m"

    def __init__(self, model: pin.Model, p_A, lower: float, upper: float,
                 frame_A: str = "universe", *, name: Optional[str] = None):
        self._fid_A = frame_id(model, frame_A) if frame_A != "universe" else _WORLD
        (self._p_A,) = check.vector_lists((p_A,), ("p_A",))
        lo = check.non_negative(lower, "lower")
        hi = check.non_negative(upper, "upper", allow_inf=True)
        check.ordered(lo, hi, "lower", "upper")
        check.has_mass(model, "com_distance")
        super().__init__(check.term_name(name, "com_distance"), [lo], [hi])

    def evaluate(self, model: pin.Model, data: pin.Data, q: np.ndarray
                 ) -> Tuple[np.ndarray, np.ndarray]:
        """``|c_A - p_A|`` (1,) [m] and its Jacobian ``(1, nv)`` (zero at the point)."""
        c, J = com_in_frame(model, data, self._fid_A)
        d = c - np.array(self._p_A)
        r = math.sqrt(float(d @ d))
        grad = (d / r) @ J if r > 1e-12 else np.zeros(J.shape[1])
        return np.array([r]), grad.reshape(1, -1)

    def value(self, model: pin.Model, data: pin.Data, q: np.ndarray) -> np.ndarray:
        """``|c_A - p_A|`` (1,) [m] alone (``centerOfMass``)."""
        d = com_value(model, data, self._fid_A) - np.array(self._p_A)
        return np.array([math.sqrt(float(d @ d))])


# The kernels' form (``registry``): the CoM is a frame of the kernels (``COM_FRAME``,
# ``kinematics.forward.center_of_mass``), so the box is a position constraint on that
# frame's origin seen in A: PositionConstraint's compiled rows and measure, parameters
# ``X_AbarA`` (the identity) and ``p_BQ`` (0).  The compiled part of this file (helper
# wb-jit); the classes above are the Python ones.
def _encode(c: CenterOfMassConstraint, tolerance) -> tuple:
    return c._fid_A, COM_FRAME, _EYE4 + [0.0, 0.0, 0.0]


_EYE4 = np.eye(4).ravel().tolist()
KIND = kernel.Kind(CenterOfMassConstraint, _encode, kernel.physical_rows, position.KIND.rows)
