"""Frame lookups and the kinematic quantities every term is built from.

All functions but :func:`placements_at` read ``data.oMf`` and frame Jacobians that the
caller has already computed (see :mod:`ros2_ik.core.terms`); none other runs forward
kinematics.
Jacobians are ``LOCAL_WORLD_ALIGNED``: rows 0-2 are the linear velocity of the
frame origin, rows 3-5 the angular velocity, both expressed in the world frame W.
"""
from __future__ import annotations

import math
import weakref
from typing import Optional, Tuple

import numpy as np
import pinocchio as pin

from ros2_ik.core.errors import InvalidFrame
from ros2_ik.core.model.frame_names import nameable_frames
from ros2_ik.core.runtime.per_object import PerObject
from ros2_ik.core.runtime.thread_data import PerThreadData

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
    fid = frame_table(model).get(name) if isinstance(name, str) else None
    if fid is None:
        raise InvalidFrame(str(name), nameable_frames(model))
    return fid


def frame_table(model: pin.Model) -> dict:
    """``{name: first frame id}`` of ``model``'s frames, the table :func:`frame_id` reads.

    Built at the first lookup on a model (every frame read through the bindings: ~0.1 ms
    on a humanoid's hundreds), or by :func:`ros2_ik.core.solve.prepare` with
    ``constrained``; again when frames were added since.
    """
    ids = _FRAME_IDS.get(model)
    if ids is None or ids[0] != model.nframes:
        names: dict = {}
        for i, frame in enumerate(model.frames):
            names.setdefault(frame.name, i)
        ids = _FRAME_IDS[model] = (model.nframes, names)
    return ids[1]


#: :func:`placements_at`'s ``Data`` per thread and model.
_PLACEMENT_DATA = PerThreadData()


def placements_at(model: pin.Model, q: np.ndarray):
    """``T_world_frame`` of every frame of ``model`` at full configuration ``q`` (nq,).

    This thread's ``data.oMf`` (by frame id), valid until the next call in the thread:
    copy what is kept (``pin.SE3(X)``).  For a term placed where a configuration puts a
    frame, once per goal, without making a ``Data`` each time.
    """
    data = _PLACEMENT_DATA(model)
    pin.framesForwardKinematics(model, data, q)
    return data.oMf


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


class Placements:
    """World placements of the frames of one ``pin.Data``, read as floats: the check's input.

    ``pose(fid)`` gives frame ``fid``'s placement ``X_WF`` as 12 floats, pinocchio's
    order: ``R_WF`` column by column, then ``p_WF`` [m].  Read through one numpy view of
    ``data.oMf[fid]`` made once per frame: it follows the placement each forward
    kinematics writes (no copy, no ``SE3``).  A frame on the world (parent joint 0) does
    not move: its floats are read once from the model (the same list each time).
    Precondition: ``data.oMf`` holds the placements of :attr:`q` (nq,), the configuration
    :meth:`of` was given.  One per ``Data`` (:meth:`of`), used by the thread that owns
    that ``Data``; it holds the ``Data`` weakly (its views are read only while it lives).
    """

    __slots__ = ("model", "q", "_data", "_views")

    def __init__(self, model: pin.Model, data: pin.Data) -> None:
        """Placements of ``data`` (a ``Data`` of ``model``); no view is made yet."""
        self.model = model
        self.q: Optional[np.ndarray] = None
        self._data = weakref.ref(data)
        self._views: dict = {}

    @classmethod
    def of(cls, model: pin.Model, data: pin.Data, q: np.ndarray) -> "Placements":
        """Return the placements of ``data`` (one per ``Data``), at configuration ``q`` (nq,)."""
        placements = _PLACEMENTS.get(data)
        if placements is None or placements.model is not model:
            placements = _PLACEMENTS[data] = cls(model, data)
        placements.q = q
        return placements

    @property
    def data(self) -> pin.Data:
        """The ``Data`` read (for terms measured through their ``value`` or ``evaluate``)."""
        return self._data()

    def pose(self, fid: int) -> list:
        """``X_WF`` of frame ``fid``: ``R_WF`` column by column, then ``p_WF`` [m] (12 floats).

        A list the caller must not change (a fixed frame's is shared).
        """
        view = self._views.get(fid)
        if view is None:
            view = self._views[fid] = self._make(fid)
        return view if type(view) is list else view.tolist()

    def _make(self, fid: int):
        frame = self.model.frames[fid]
        if frame.parentJoint == 0:  # fixed in the world: oMf = the frame's placement
            return flat_pose(frame.placement)
        X = self._data().oMf[fid]  # a reference into data.oMf: its arrays are views
        R, p = X.rotation, X.translation
        start = R.__array_interface__["data"][0]
        if R.strides == (8, 24) and p.__array_interface__["data"][0] == start + 72:
            # Eigen's layout of an SE3: the rotation's columns then the translation.
            return np.lib.stride_tricks.as_strided(R, shape=(12,), strides=(8,))
        return _Joined(R, p)  # pragma: no cover - another layout


def flat_pose(X: pin.SE3) -> list:
    """:meth:`Placements.pose`'s 12 floats of a ``pin.SE3``."""
    return X.rotation.ravel(order="F").tolist() + X.translation.tolist()


class _Joined:
    """A rotation view and a translation view that ``tolist`` as one :meth:`Placements.pose`."""

    __slots__ = ("R", "p")

    def __init__(self, R: np.ndarray, p: np.ndarray) -> None:
        self.R, self.p = R, p

    def tolist(self) -> list:
        return self.R.ravel(order="F").tolist() + self.p.tolist()


#: One :class:`Placements` per ``pin.Data``, while it lives.
_PLACEMENTS: PerObject = PerObject()


def point_in_world(X: list, p) -> list:
    """``R p + t`` [m]: point ``p`` (3 floats) of a :meth:`Placements.pose` ``X``'s frame."""
    a, d, g, b, e, h, c, f, i, x, y, z = X
    p0, p1, p2 = p
    return [a * p0 + b * p1 + c * p2 + x, d * p0 + e * p1 + f * p2 + y,
            g * p0 + h * p1 + i * p2 + z]


def world_in_frame(X: list, p_W) -> list:
    """``R^T (p_W - t)`` [m]: world point ``p_W`` (3 floats) in pose ``X``'s frame."""
    a, d, g, b, e, h, c, f, i, x, y, z = X
    x, y, z = p_W[0] - x, p_W[1] - y, p_W[2] - z
    return [a * x + d * y + g * z, b * x + e * y + h * z, c * x + f * y + i * z]


def point_seen(placements: Placements, fid_A: int, fid_B: int, p_BQ) -> list:
    """``p_AQ`` [m] of point Q fixed in frame B at ``p_BQ`` (3 floats), expressed in frame A.

    :func:`world_in_frame` of :func:`point_in_world`, written out (no list between); A the
    world (frame 0, ``universe``): the point in the world as it is.
    """
    a, d, g, b, e, h, c, f, i, x, y, z = placements.pose(fid_B)
    p0, p1, p2 = p_BQ
    x += a * p0 + b * p1 + c * p2
    y += d * p0 + e * p1 + f * p2
    z += g * p0 + h * p1 + i * p2
    if fid_A == 0:
        return [x, y, z]
    a, d, g, b, e, h, c, f, i, u, v, w = placements.pose(fid_A)
    x, y, z = x - u, y - v, z - w
    return [a * x + d * y + g * z, b * x + e * y + h * z, c * x + f * y + i * z]


def vector_in_world(X: list, v) -> list:
    """``R v`` of a :meth:`Placements.pose` ``X`` and a vector ``v`` (3 floats)."""
    a, d, g, b, e, h, c, f, i = X[:9]
    v0, v1, v2 = v
    return [a * v0 + b * v1 + c * v2, d * v0 + e * v1 + f * v2, g * v0 + h * v1 + i * v2]


def rotation_rows(X: list) -> list:
    """``R`` of a :meth:`Placements.pose` ``X`` as rows of three floats."""
    return [X[0:9:3], X[1:9:3], X[2:9:3]]


def transposed_rows(X: list) -> list:
    """``R^T`` of a :meth:`Placements.pose` ``X`` as rows of three floats (its columns)."""
    return [X[0:3], X[3:6], X[6:9]]


def rotation_product(A, B) -> list:
    """Return ``A B`` of two 3x3 matrices given as rows of floats."""
    (a0, a1, a2), (a3, a4, a5), (a6, a7, a8) = A
    (b0, b1, b2), (b3, b4, b5), (b6, b7, b8) = B
    return [[a0 * b0 + a1 * b3 + a2 * b6, a0 * b1 + a1 * b4 + a2 * b7,
             a0 * b2 + a1 * b5 + a2 * b8],
            [a3 * b0 + a4 * b3 + a5 * b6, a3 * b1 + a4 * b4 + a5 * b7,
             a3 * b2 + a4 * b5 + a5 * b8],
            [a6 * b0 + a7 * b3 + a8 * b6, a6 * b1 + a7 * b4 + a8 * b7,
             a6 * b2 + a7 * b5 + a8 * b8]]


def relative_rotation(
    model: pin.Model, data: pin.Data,
    fid_Abar: int, R_AbarA: np.ndarray, fid_Bbar: int, R_BbarB: np.ndarray,
) -> Tuple[np.ndarray, np.ndarray]:
    """``R_AB`` (3, 3) and the Jacobian ``(3, nv)`` of ``w_AB`` expressed in A.

    ``d/dt R_AB = skew(w_AB_A) R_AB`` with ``w_AB_A = R_WA^T (w_WB - w_WA)``.
    """
    R_WA, R_AB = rotation_between(data, fid_Abar, R_AbarA, fid_Bbar, R_BbarB)
    J_w = frame_jacobian(model, data, fid_Bbar)[3:]
    if model.frames[fid_Abar].parentJoint != 0:  # else A is fixed in the world
        J_w = J_w - frame_jacobian(model, data, fid_Abar)[3:]
    return R_AB, R_WA.T @ J_w


def rotation_between(data: pin.Data, fid_Abar: int, R_AbarA: np.ndarray, fid_Bbar: int,
                     R_BbarB: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """``R_WA`` and ``R_AB = R_WA^T R_WB`` (3, 3) from the frame placements alone.

    Frame A is model frame ``fid_Abar`` turned by ``R_AbarA``, B ``fid_Bbar`` by ``R_BbarB``.
    """
    R_WA = data.oMf[fid_Abar].rotation @ R_AbarA
    return R_WA, R_WA.T @ (data.oMf[fid_Bbar].rotation @ R_BbarB)


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
    return _angle(h - f, c - g, d - b, a + e + i)


def relative_angle(A: list, B: list) -> float:
    """Angle [rad] in ``[0, pi]`` of ``R_A^T R_B``, from two placements' first three rows.

    ``A``, ``B``: 3 rows of 4 floats (a homogeneous matrix's, ``tolist()``).  As
    :func:`rotation_angle` of the product, without making it: ``tr(R_A^T R_B)`` sums the
    entries' products, and its skew part (up to sign) is the sum of the rows' cross products.
    """
    (a0, a1, a2, _), (a3, a4, a5, _), (a6, a7, a8, _) = A[0], A[1], A[2]
    (b0, b1, b2, _), (b3, b4, b5, _), (b6, b7, b8, _) = B[0], B[1], B[2]
    return _angle(a1 * b2 - a2 * b1 + a4 * b5 - a5 * b4 + a7 * b8 - a8 * b7,
                  a2 * b0 - a0 * b2 + a5 * b3 - a3 * b5 + a8 * b6 - a6 * b8,
                  a0 * b1 - a1 * b0 + a3 * b4 - a4 * b3 + a6 * b7 - a7 * b6,
                  a0 * b0 + a1 * b1 + a2 * b2 + a3 * b3 + a4 * b4 + a5 * b5 + a6 * b6
                  + a7 * b7 + a8 * b8)


def _angle(x: float, y: float, z: float, trace: float) -> float:
    """Rotation angle [rad] from twice its axis times sine ``(x, y, z)`` and its trace."""
    return math.atan2(0.5 * math.sqrt(x * x + y * y + z * z), 0.5 * (trace - 1.0))


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
