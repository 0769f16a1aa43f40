"""Frame lookups and the kinematic quantities every term is built from.

All functions read ``data.oMf`` and frame Jacobians that the caller has already
computed (see :mod:`ros2_ik.core.terms`); none runs forward kinematics.
Jacobians are ``LOCAL_WORLD_ALIGNED``: rows 0-2 are the linear velocity of the
frame origin, rows 3-5 the angular velocity, both expressed in the world frame W.
"""
from __future__ import annotations

import math
from typing import Optional, Tuple

import numpy as np
import pinocchio as pin

from ros2_ik.core.errors import InvalidFrame
from ros2_ik.core.model.frame_names import nameable_frames
from ros2_ik.core.runtime.per_object import PerObject

_LWA = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED


#: Per model: (number of frames, {name: first frame id}); rebuilt when frames are added.
_FRAME_IDS: PerObject = PerObject()


def frame_id(model: pin.Model, name: str) -> int:
    """Index of the frame called ``name``; raises ``InvalidFrame`` listing all frame names.

    The first frame of that name, as Robot.frame_id: a joint and its child link may share
    a name, and pinocchio's getFrameId then raises instead of choosing.  Looked up in a
    table per model (cheaper than a scan of its frames).  A name found there is answered
    without asking the model anything (each pinocchio attribute read is a boost.python
    call): frames are only ever appended, so a
    found id stays the first frame of its name; a name not found rebuilds the table when
    frames were added.
    """
    ids = _FRAME_IDS.get(model)
    if ids is not None and isinstance(name, str):
        fid = ids[1].get(name)
        if fid is not None:
            return fid
    if ids is None or ids[0] != model.nframes:
        names: dict = {}
        for i, frame in enumerate(model.frames):
            names.setdefault(frame.name, i)
        ids = _FRAME_IDS[model] = (model.nframes, names)
    fid = ids[1].get(name) if isinstance(name, str) else None
    if fid is None:
        raise InvalidFrame(str(name), nameable_frames(model))
    return fid


def frame_jacobian(model: pin.Model, data: pin.Data, fid: int) -> np.ndarray:
    """Jacobian of frame ``fid``, shape ``(6, nv)``, ``LOCAL_WORLD_ALIGNED``."""
    return pin.getFrameJacobian(model, data, fid, _LWA).reshape(6, -1)  # (6,) when nv = 1


def point_jacobian(J_F: np.ndarray, p_WF: np.ndarray, p_WP: np.ndarray) -> np.ndarray:
    """Jacobian ``(3, nv)`` of the world position of a point P fixed in frame F.

    ``J_F`` is F's ``LOCAL_WORLD_ALIGNED`` Jacobian, ``p_WF`` F's origin and ``p_WP``
    the point, both in world coordinates [m]: ``v_P = v_F + w_F x (p_WP - p_WF)``.
    """
    return J_F[:3] - pin.skew(p_WP - p_WF) @ J_F[3:]


def point_in_frame(
    model: pin.Model, data: pin.Data,
    fid_A: int, X_FA: Optional[pin.SE3], fid_B: int, p_BQ: np.ndarray,
) -> Tuple[np.ndarray, np.ndarray]:
    """Return ``p_AQ`` (3,) [m] of Q fixed in B, measured and expressed in A, and ``(3, nv)``.

    Frame A is fixed to the model frame ``fid_A`` with offset ``X_FA`` (``None``: none).
    """
    X_WF = data.oMf[fid_A]
    X_WB = data.oMf[fid_B]
    X_WA = X_WF if X_FA is None else X_WF * X_FA
    p_WQ = X_WB.act(p_BQ)
    J = point_jacobian(frame_jacobian(model, data, fid_B), X_WB.translation, p_WQ)
    if model.frames[fid_A].parentJoint != 0:
        # Q as seen from A moves with Q's velocity minus that of the A-fixed point at Q.
        J -= point_jacobian(frame_jacobian(model, data, fid_A), X_WF.translation, p_WQ)
    return X_WA.actInv(p_WQ), X_WA.rotation.T @ J


def placement_rows(model: pin.Model, data: pin.Data, fid_A: int, fid_B: int,
                   X_AbarA: Optional[pin.SE3] = None) -> list:
    """``X_AB`` as floats: rows ``[R_AB | p_AB]`` (4 lists of 4; [m]), B's placement in A.

    A is model frame ``fid_A`` offset by ``X_AbarA`` (None: none).  Needs forward
    kinematics only (``data.oMi``).  Each placement as ``updateFramePlacement`` returns it
    (a copy: several times cheaper than reading ``data.oMf``), one product in pinocchio,
    then plain floats, on which the verification's measures compute (cheaper than numpy
    on 3-vectors).
    """
    X_AB = relative_placement(model, data, fid_A, fid_B)
    if X_AbarA is not None:
        X_AB = X_AbarA.actInv(X_AB)
    return X_AB.homogeneous.tolist()


def relative_placement(model: pin.Model, data: pin.Data, fid_A: int, fid_B: int) -> pin.SE3:
    """``X_AB`` of two model frames (forward kinematics only; see :func:`placement_rows`)."""
    return _placement(model, data, fid_A).actInv(_placement(model, data, fid_B))


_placement = pin.updateFramePlacement


def transform_point(rows: list, p) -> list:
    """``R p + t`` [m] of :func:`placement_rows`' ``rows`` and a point ``p`` (3 floats)."""
    (a, b, c, x), (d, e, f, y), (g, h, i, z) = rows[0], rows[1], rows[2]
    p0, p1, p2 = p
    return [a * p0 + b * p1 + c * p2 + x, d * p0 + e * p1 + f * p2 + y,
            g * p0 + h * p1 + i * p2 + z]


def rotate_vector(rows: list, v) -> list:
    """``R v`` of :func:`placement_rows`' ``rows`` (or a 3x3's) and a vector ``v`` (3 floats)."""
    (a, b, c), (d, e, f), (g, h, i) = rows[0][:3], rows[1][:3], rows[2][:3]
    v0, v1, v2 = v
    return [a * v0 + b * v1 + c * v2, d * v0 + e * v1 + f * v2, g * v0 + h * v1 + i * v2]


def rotation_product(rows: list, K: list) -> list:
    """``R K`` (3 rows of 3 floats): ``R`` of :func:`placement_rows`' ``rows``, ``K`` 9 floats."""
    k0, k1, k2, k3, k4, k5, k6, k7, k8 = K
    return [[r0 * k0 + r1 * k3 + r2 * k6, r0 * k1 + r1 * k4 + r2 * k7,
             r0 * k2 + r1 * k5 + r2 * k8] for r0, r1, r2, *_ in rows[:3]]


def relative_rotation(
    model: pin.Model, data: pin.Data,
    fid_Abar: int, R_AbarA: np.ndarray, fid_Bbar: int, R_BbarB: np.ndarray,
) -> Tuple[np.ndarray, np.ndarray]:
    """``R_AB`` (3, 3) and the Jacobian ``(3, nv)`` of ``w_AB`` expressed in A.

    ``d/dt R_AB = skew(w_AB_A) R_AB`` with ``w_AB_A = R_WA^T (w_WB - w_WA)``.
    """
    R_WA = data.oMf[fid_Abar].rotation @ R_AbarA
    R_WB = data.oMf[fid_Bbar].rotation @ R_BbarB
    J_w = frame_jacobian(model, data, fid_Bbar)[3:]
    if model.frames[fid_Abar].parentJoint != 0:  # else A is fixed in the world
        J_w = J_w - frame_jacobian(model, data, fid_Abar)[3:]
    return R_WA.T @ R_WB, R_WA.T @ J_w


def trace_and_gradient(
    model: pin.Model, data: pin.Data,
    fid_Abar: int, R_AbarA: np.ndarray, fid_Bbar: int, R_BbarB: np.ndarray,
) -> Tuple[float, np.ndarray]:
    """``tr(R_AB) = 1 + 2 cos(theta)`` and its gradient ``(nv,)`` (Drake's formulation).

    ``d tr(R_AB) = r^T w_AB_A`` with ``r = (R23 - R32, R31 - R13, R12 - R21)``.
    """
    R_AB, J_w_AB = relative_rotation(model, data, fid_Abar, R_AbarA, fid_Bbar, R_BbarB)
    r = np.array([R_AB[1, 2] - R_AB[2, 1], R_AB[2, 0] - R_AB[0, 2], R_AB[0, 1] - R_AB[1, 0]])
    return float(np.trace(R_AB)), r @ J_w_AB


def vectors_dot(
    model: pin.Model, data: pin.Data,
    fid_A: int, a_A: np.ndarray, fid_B: int, b_B: np.ndarray,
) -> Tuple[float, np.ndarray]:
    """Return ``a . b`` of unit vectors fixed in A and B (cos of their angle), gradient (nv,).

    ``d(a . b) = (a x b) . (w_A - w_B)`` with everything in world coordinates.
    """
    a_W = data.oMf[fid_A].rotation @ a_A
    b_W = data.oMf[fid_B].rotation @ b_B
    J_w = frame_jacobian(model, data, fid_A)[3:] - frame_jacobian(model, data, fid_B)[3:]
    return float(a_W @ b_W), (pin.skew(a_W) @ b_W) @ J_w  # not np.cross: dear on 3-vectors


def rotation_angle(R) -> float:
    """Angle [rad] of rotation matrix ``R`` in ``[0, pi]``: ``atan2(sin, cos)`` from its entries.

    ``R``: a (3, 3) array or 3 rows of (at least) 3 floats.  ``2 sin(theta) = |(R32 - R23,
    R13 - R31, R21 - R12)|``, ``2 cos(theta) = tr(R) - 1``: accurate near 0 and pi,
    unlike ``arccos`` of the trace.
    """
    rows = R.tolist() if type(R) is np.ndarray else R  # floats: cheaper than indexing
    (a, b, c), (d, e, f), (g, h, i) = rows[0][:3], rows[1][:3], rows[2][:3]
    x, y, z = h - f, c - g, d - b
    return math.atan2(0.5 * math.sqrt(x * x + y * y + z * z), 0.5 * (a + e + i - 1.0))


def cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Return ``a x b`` of two 3-vectors (``np.cross`` is dear on 3-vectors)."""
    a0, a1, a2 = a.tolist()
    b0, b1, b2 = b.tolist()
    return np.array((a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0))


def vector_angle(a, b) -> float:
    """Angle [rad] between 3-vectors ``a`` and ``b`` in ``[0, pi]`` (0 if either is zero).

    ``a``, ``b``: arrays or sequences of three floats.
    """
    a0, a1, a2 = a.tolist() if type(a) is np.ndarray else a
    b0, b1, b2 = b.tolist() if type(b) is np.ndarray else b
    x, y, z = a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0
    return math.atan2(math.sqrt(x * x + y * y + z * z), a0 * b0 + a1 * b1 + a2 * b2)


def perpendicular_floats(n) -> Tuple[float, float, float]:
    """Return a unit vector perpendicular to the non-zero 3-vector ``n``, as three floats.

    ``n x e`` with ``e`` the axis of ``n``'s smallest component (the first of equal ones),
    normalised.
    """
    x, y, z = n.tolist() if isinstance(n, np.ndarray) else n
    ax, ay, az = abs(x), abs(y), abs(z)
    if ax <= ay and ax <= az:
        v = (0.0, z, -y)  # n x e_x
    elif ay <= az:
        v = (-z, 0.0, x)  # n x e_y
    else:
        v = (y, -x, 0.0)  # n x e_z
    norm = math.sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2])
    return v[0] / norm, v[1] / norm, v[2] / norm


def perpendicular(n: np.ndarray) -> np.ndarray:
    """Return :func:`perpendicular_floats` of ``n`` as an array (3,) (floats: cheaper)."""
    return np.array(perpendicular_floats(n))


def projection_off_floats(n) -> list:
    """Return ``I - n n^T`` of the unit 3-vector ``n`` row by row, nine floats."""
    x, y, z = n.tolist() if isinstance(n, np.ndarray) else n
    return [1.0 - x * x, -(x * y), -(x * z),
            -(y * x), 1.0 - y * y, -(y * z),
            -(z * x), -(z * y), 1.0 - z * z]


def projection_off(n: np.ndarray) -> np.ndarray:
    """Return ``I - n n^T`` (3, 3) of the unit 3-vector ``n``: projection onto its normal plane."""
    return np.array(projection_off_floats(n)).reshape(3, 3)


def vectors_angle_and_gradient(
    model: pin.Model, data: pin.Data,
    fid_A: int, a_A: np.ndarray, fid_B: int, b_B: np.ndarray,
) -> Tuple[float, np.ndarray]:
    """Angle [rad] between unit vectors fixed in A and B, and its gradient ``(nv,)``.

    ``d angle = -(a x b) . (w_A - w_B) / |a x b|`` (world coordinates).  At 0 or pi,
    where the angle has a kink, the gradient is the one-sided slope along an axis
    perpendicular to ``a`` (any such axis turns ``a`` away from or toward ``b``).
    """
    a_W = data.oMf[fid_A].rotation @ a_A
    b_W = data.oMf[fid_B].rotation @ b_B
    J_w = frame_jacobian(model, data, fid_A)[3:]
    if model.frames[fid_B].parentJoint != 0:  # else B is fixed in the world
        J_w = J_w - frame_jacobian(model, data, fid_B)[3:]
    axb = cross(a_W, b_W)
    s, c = math.sqrt(float(axb @ axb)), float(a_W @ b_W)
    angle = math.atan2(s, c)
    if s > 1e-9:
        return angle, (axb * (-1.0 / s)) @ J_w
    # Parallel: turning A about e (perpendicular to a) by t changes the angle by ~|t|.
    e = perpendicular(a_W)
    return angle, (e if c > 0.0 else -e) @ J_w
