"""MoveIt's OrientationConstraint: each component of the rotation from A to B within a bound.

``R_AB = R_WA^T R_WB`` (frame A fixed to ``frame_Abar`` with orientation ``R_AbarA``, B to
``frame_Bbar`` with ``R_BbarB``), read as three components [rad] by ``parameterization``:

- ``"xyz_euler"``: the angles ``(roll, pitch, yaw)`` of ``R_AB = Rx(roll) Ry(pitch)
  Rz(yaw)``, roll and yaw in ``(-pi, pi]``, pitch in ``[-pi/2, pi/2]`` (MoveIt's
  ``calcEulerAngles``);
- ``"rotation_vector"``: ``w = log3(R_AB)``, ``|w| <= pi``.

Each component's magnitude is at most its tolerance: a box, where Drake's
OrientationConstraint bounds the angle ``|w|`` (a ball).  A tolerance at or above the
component's largest magnitude (pi; pi/2 for the pitch) bounds nothing and has no row.  At
the Euler angles' singularity (pitch at +-pi/2, which only a pitch tolerance >= pi/2
allows) MoveIt splits roll and yaw its own way; the rows here read its regular formula.
"""
from __future__ import annotations

import math
from typing import Optional, Sequence, Tuple

import numpy as np
import pinocchio as pin

from ros2_ik.core.errors import InvalidGoal
from ros2_ik.core.kinematics import lie, relative
from ros2_ik.core.kinematics.frames import frame_id, relative_rotation, rotation_between
from ros2_ik.core.runtime.compiled import jit

from . import checks as check
from . import compiled as kernel
from ._base import BoundedConstraint
from .orientation import log_jacobian

PARAMETERIZATIONS = ("xyz_euler", "rotation_vector")
#: The largest magnitude of each component [rad], by parameterization.
_LARGEST = {"xyz_euler": (math.pi, math.pi / 2, math.pi),
            "rotation_vector": (math.pi, math.pi, math.pi)}
_GENERATORS = [pin.skew(e) for e in np.eye(3)]


class RotationBoxConstraint(BoundedConstraint):
    """``|component_k(R_AB)| <= tolerances[k]`` [rad] on the bounded components (module doc).

    One row per component whose tolerance bounds it, in x, y, z order; the row is the
    component itself [rad], within ``[-tolerance, tolerance]``.
    """

    unit = "rad"

    def __init__(
        self, model: pin.Model, frame_Abar: str, R_AbarA, frame_Bbar: str, R_BbarB,
        tolerances: Sequence[float], parameterization: str = "xyz_euler", *,
        name: Optional[str] = None,
    ):
        self._fid_Abar = frame_id(model, frame_Abar)
        self._fid_Bbar = frame_id(model, frame_Bbar)
        self._R_AbarA = np.array(check.rotation_list(R_AbarA, "R_AbarA")).reshape(3, 3)
        self._R_BbarB = np.array(check.rotation_list(R_BbarB, "R_BbarB")).reshape(3, 3)
        if parameterization not in PARAMETERIZATIONS:
            raise InvalidGoal(f"parameterization must be one of {PARAMETERIZATIONS}, got "
                              f"{parameterization!r}")
        self.parameterization = parameterization
        values = check.array_of_shape(tolerances, (3,), "tolerances", allow_inf=True)
        if np.any(values < 0):
            raise InvalidGoal(f"tolerances must be >= 0 [rad], got {values.tolist()}")
        self.tolerances = tuple(float(t) for t in values)
        #: The components with a row (x, y, z = 0, 1, 2).
        self.rows = bounded_components(self.tolerances, parameterization)
        if not self.rows:
            raise InvalidGoal(f"tolerances {self.tolerances} bound no component of the "
                              f"{parameterization} rotation: the constraint always holds")
        bounds = [self.tolerances[k] for k in self.rows]
        default = f"rotation_box({frame_Abar},{frame_Bbar})"
        super().__init__(check.term_name(name, default), [-b for b in bounds], bounds)

    def components(self, R_AB: np.ndarray) -> np.ndarray:
        """Return rotation ``R_AB`` read as three angles [rad] in this parameterization."""
        if self.parameterization == "rotation_vector":
            return pin.log3(R_AB)
        return euler_xyz(R_AB)

    def value(self, model: pin.Model, data: pin.Data, q: np.ndarray) -> np.ndarray:
        """Return the bounded components (m,) [rad]; needs the frame placements alone."""
        _, R_AB = rotation_between(data, self._fid_Abar, self._R_AbarA, self._fid_Bbar,
                                   self._R_BbarB)
        return self.components(R_AB)[list(self.rows)]

    def evaluate(
        self, model: pin.Model, data: pin.Data, q: np.ndarray
    ) -> Tuple[np.ndarray, np.ndarray]:
        """Return the bounded components (m,) [rad] and their Jacobian ``(m, nv)``."""
        R_AB, J_w_AB = relative_rotation(model, data, self._fid_Abar, self._R_AbarA,
                                         self._fid_Bbar, self._R_BbarB)
        rows = list(self.rows)
        if self.parameterization == "rotation_vector":
            return pin.log3(R_AB)[rows], log_jacobian(R_AB, J_w_AB)[rows]
        return euler_xyz(R_AB)[rows], (euler_xyz_rates(R_AB) @ J_w_AB)[rows]


def bounded_components(tolerances: Sequence[float], parameterization: str) -> Tuple[int, ...]:
    """Return the components (0, 1, 2 = x, y, z) ``tolerances`` [rad] bound (module doc)."""
    return tuple(k for k, (t, most) in enumerate(zip(tolerances, _LARGEST[parameterization]))
                 if t < most)


def euler_xyz(R: np.ndarray) -> np.ndarray:
    """``(roll, pitch, yaw)`` [rad] with ``R = Rx(roll) Ry(pitch) Rz(yaw)`` (MoveIt's formula).

    Pitch from ``atan2(R02, sqrt((R00^2 + R01^2 + R12^2 + R22^2) / 2))``; away from the
    singularity roll ``atan2(-R12, R22)`` and yaw ``atan2(-R01, R00)``.
    """
    cos_pitch = math.sqrt((R[0, 0] ** 2 + R[0, 1] ** 2 + R[1, 2] ** 2 + R[2, 2] ** 2) / 2)
    return np.array([math.atan2(-R[1, 2], R[2, 2]), math.atan2(R[0, 2], cos_pitch),
                     math.atan2(-R[0, 1], R[0, 0])])


def euler_xyz_rates(R: np.ndarray) -> np.ndarray:
    """``d(roll, pitch, yaw) / dw`` (3, 3) where ``dR = skew(w) R`` (w in the first frame).

    Rows of zeros where a denominator vanishes (the singularity, pitch at +-pi/2).
    """
    D = np.zeros((3, 3))
    roll_den = R[1, 2] ** 2 + R[2, 2] ** 2  # cos(pitch)^2
    yaw_den = R[0, 0] ** 2 + R[0, 1] ** 2
    if roll_den < 1e-20 or yaw_den < 1e-20:
        return D
    cos_pitch = math.sqrt(roll_den)
    for k, G in enumerate(_GENERATORS):
        dR = G @ R
        D[0, k] = (R[1, 2] * dR[2, 2] - R[2, 2] * dR[1, 2]) / roll_den
        D[1, k] = dR[0, 2] / cos_pitch
        D[2, k] = (R[0, 1] * dR[0, 0] - R[0, 0] * dR[0, 1]) / yaw_den
    return D


# The kernels' form (``registry``): parameters ``R_AbarA``, ``R_BbarB`` (9 each, row by
# row), the parameterization's index in PARAMETERIZATIONS, then 1.0 or 0.0 for each
# component: whether it has a row.


def _encode(c: RotationBoxConstraint, tolerance) -> tuple:
    bounded = [1.0 if k in c.rows else 0.0 for k in range(3)]
    return (c._fid_Abar, c._fid_Bbar, c._R_AbarA.ravel().tolist() + c._R_BbarB.ravel().tolist()
            + [float(PARAMETERIZATIONS.index(c.parameterization))] + bounded)


@jit
def _euler_map(R, wa):  # pragma: no cover - compiled
    """``euler_xyz(R)`` and the map ``M`` (9, row by row): ``d angles = M (w_B - w_A)``.

    ``R = R_AB`` and ``wa = R_WA`` (row by row); ``M = euler_xyz_rates(R) R_WA^T`` on world
    angular velocities, ``euler_xyz_rates``' entries written out (``dR = skew(e_k) R``).
    """
    r00, r01, r02, r10, r11, r12, r20, r21, r22 = R
    roll_den = r12 * r12 + r22 * r22
    yaw_den = r00 * r00 + r01 * r01
    cos_pitch = math.sqrt((r00 * r00 + r01 * r01 + r12 * r12 + r22 * r22) / 2)
    angles = (math.atan2(-r12, r22), math.atan2(r02, cos_pitch), math.atan2(-r01, r00))
    if roll_den < 1e-20 or yaw_den < 1e-20:
        return angles, (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    c = math.sqrt(roll_den)
    D = ((r12 * r12 + r22 * r22) / roll_den, -r12 * r02 / roll_den, -r22 * r02 / roll_den,
         0.0, r22 / c, -r12 / c,
         0.0, (r01 * r20 - r00 * r21) / yaw_den, (r00 * r11 - r01 * r10) / yaw_den)
    return angles, relative.times_transposed(D, wa)


@jit
def _log_map(R, wb):  # pragma: no cover - compiled
    """``log3(R)`` and the map ``M`` (9, row by row): ``d w = M (w_B - w_A)``.

    ``R = R_AB`` and ``wb = R_WB`` (row by row): ``log_jacobian``'s ``Jlog3 R_AB^T R_WA^T``
    is ``Jlog3 R_WB^T``.
    """
    wx, wy, wz, theta = lie.log3_of(R[0], R[1], R[2], R[3], R[4], R[5], R[6], R[7], R[8])
    return (wx, wy, wz), relative.times_transposed(lie.jlog3_entries(wx, wy, wz, theta), wb)


@jit(inline="always")  # a thin step of the dispatch: no call of its own
def rows(oMf, Jf, fa, fb, prm, g, Jg, row, p3, J3):  # pragma: no cover - compiled
    """``evaluate``: the bounded components [rad] into rows ``row..`` of ``g``, ``Jg``."""
    wa, wb, R = relative.rotation_entries(oMf, fa, fb, prm)  # R_WA, R_WB, R_AB
    if prm[18] == 0.0:
        values, M = _euler_map(R, wa)
    else:
        values, M = _log_map(R, wb)
    k = 0
    for i in range(3):
        if prm[19 + i] == 0.0:
            continue
        g[row + k] = values[i]
        for c in range(Jg.shape[1]):
            d0 = Jf[fb, 3, c] - Jf[fa, 3, c]
            d1 = Jf[fb, 4, c] - Jf[fa, 4, c]
            d2 = Jf[fb, 5, c] - Jf[fa, 5, c]
            Jg[row + k, c] = M[3 * i] * d0 + M[3 * i + 1] * d1 + M[3 * i + 2] * d2
        k += 1
    return k


KIND = kernel.Kind(RotationBoxConstraint, _encode, kernel.physical_rows, rows)
