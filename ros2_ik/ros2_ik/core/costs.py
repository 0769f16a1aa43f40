"""Drake's inverse-kinematics costs, plus a posture cost (see ``ros2_ik.core.terms``).

Each ``evaluate`` returns the cost (float) and its gradient ``(nv,)`` in the tangent
space.  Names are resolved and arguments validated once in ``__init__``.
"""
from __future__ import annotations

import math
from typing import Optional, Tuple

import numpy as np
import pinocchio as pin

from .compiled import jit
from .constraints import _checks as check
from .constraints import _compiled as kernel
from .constraints._frames import frame_id, point_in_frame, trace_and_gradient, vectors_dot
from .constraints.com import com_world
from .constraints.contact import placement_error, pose_argument
from .errors import InvalidGoal
from .per_object import PerObject
from .terms import Cost


class _NamedCost(Cost):
    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


class PositionCost(_NamedCost):
    """``(p_AP - p_AQ)^T C (p_AP - p_AQ)`` [m^2 times the units of C].

    P is fixed in ``frame_A`` at ``p_AP``; Q is fixed in ``frame_B`` at ``p_BQ``; the
    difference is expressed in frame A.  ``C`` (3, 3) must be positive semidefinite
    (only its symmetric part matters and is kept).
    """

    _p_AP = check.lazy_array("_p_AP_list")
    _p_BQ = check.lazy_array("_p_BQ_list")
    _Lt = check.lazy_array("_Lt_list", (3, 3))

    def __init__(self, model: pin.Model, frame_A: str, p_AP, frame_B: str, p_BQ, C,
                 *, name: Optional[str] = None):
        self._fid_A = frame_id(model, frame_A)
        self._fid_B = frame_id(model, frame_B)
        self._p_AP_list, self._p_BQ_list = check.vector_lists((p_AP, p_BQ), ("p_AP", "p_BQ"))
        self._C, eigenvalues, vectors = check.psd_matrix3(C, "C")  # C = V l V^T
        #: ``L^T`` (3, 3) row by row, ``C = L L^T`` [sqrt of C's units]: its rows are the
        #: eigenvectors scaled by ``sqrt(2 l)``.
        self._Lt_list = [math.sqrt(2.0 * max(w, 0.0)) * v for w, row in
                         zip(eigenvalues.tolist(), vectors.T.tolist()) for v in row]
        self.name = check.term_name(name, f"position_cost({frame_B})")

    def gauss_newton(self, model: pin.Model, data: pin.Data, q: np.ndarray
                     ) -> Tuple[np.ndarray, np.ndarray]:
        """``r = sqrt(2) L^T (p_AP - p_AQ)`` (3,) with ``C = L L^T``, and ``(3, nv)``."""
        p_AQ, J_AQ = point_in_frame(model, data, self._fid_A, None,
                                    self._fid_B, self._p_BQ)
        return self._Lt @ (self._p_AP - p_AQ), -self._Lt @ J_AQ

    def evaluate(self, model: pin.Model, data: pin.Data, q: np.ndarray
                 ) -> Tuple[float, np.ndarray]:
        """Return the cost and its gradient ``(nv,)``."""
        p_AQ, J_AQ = point_in_frame(model, data, self._fid_A, None,
                                    self._fid_B, self._p_BQ)
        error = self._p_AP - p_AQ
        weighted = self._C @ error
        return float(error @ weighted), -2.0 * weighted @ J_AQ


class OrientationCost(_NamedCost):
    """``c (1 - cos(theta))``, theta the angle between frames A and B.

    Frames as in :class:`~ros2_ik.core.constraints.OrientationConstraint`;
    ``cos(theta) = (tr(R_AB) - 1) / 2``.  ``c >= 0``.
    """

    _R_AbarA = check.lazy_array("_R_AbarA_list", (3, 3))
    _R_BbarB = check.lazy_array("_R_BbarB_list", (3, 3))

    def __init__(self, model: pin.Model, frame_Abar: str, R_AbarA, frame_Bbar: str, R_BbarB,
                 c: float, *, name: Optional[str] = None):
        self._fid_Abar = frame_id(model, frame_Abar)
        self._fid_Bbar = frame_id(model, frame_Bbar)
        self._R_AbarA_list = check.rotation_list(R_AbarA, "R_AbarA")
        self._R_BbarB_list = check.rotation_list(R_BbarB, "R_BbarB")
        self.c = check.non_negative(c, "c")
        self.name = check.term_name(name, f"orientation_cost({frame_Abar},{frame_Bbar})")

    def evaluate(self, model: pin.Model, data: pin.Data, q: np.ndarray
                 ) -> Tuple[float, np.ndarray]:
        """Return the cost and its gradient ``(nv,)``."""
        trace, gradient = trace_and_gradient(
            model, data, self._fid_Abar, self._R_AbarA, self._fid_Bbar, self._R_BbarB)
        return 0.5 * self.c * (3.0 - trace), -0.5 * self.c * gradient


class AngleBetweenVectorsCost(_NamedCost):
    """``c (1 - cos(theta))``, theta the angle between ``a_A`` fixed in A and ``b_B`` in B.

    The vectors must be non-zero (they are normalised).  ``c >= 0``.
    """

    _a_A = check.lazy_array("_a_A_list")
    _b_B = check.lazy_array("_b_B_list")

    def __init__(self, model: pin.Model, frame_A: str, a_A, frame_B: str, b_B, c: float,
                 *, name: Optional[str] = None):
        self._fid_A = frame_id(model, frame_A)
        self._fid_B = frame_id(model, frame_B)
        self._a_A_list, self._b_B_list = check.vector_lists((a_A, b_B), ("a_A", "b_B"),
                                                            units=(0, 1))
        self.c = check.non_negative(c, "c")
        self.name = check.term_name(name, f"angle_cost({frame_A},{frame_B})")

    def evaluate(self, model: pin.Model, data: pin.Data, q: np.ndarray
                 ) -> Tuple[float, np.ndarray]:
        """Return the cost and its gradient ``(nv,)``."""
        cosine, gradient = vectors_dot(model, data, self._fid_A, self._a_A,
                                       self._fid_B, self._b_B)
        return self.c * (1.0 - cosine), -self.c * gradient


_SIZES: PerObject = PerObject()


def _sizes(model: pin.Model) -> Tuple[int, int, int]:
    """``(nq, nv, njoints)`` of ``model``, kept per model (a loaded model's joints are fixed).

    Each read of a pinocchio attribute is a boost.python call.
    """
    sizes = _SIZES.get(model)
    if sizes is None:
        sizes = _SIZES[model] = (model.nq, model.nv, model.njoints)
    return sizes


class PostureCost(_NamedCost):
    """``1/2 sum_i w_i dq_i^2`` with ``dq = pin.difference(model, q_nominal, q)`` (nv,).

    Pulls toward a nominal posture (or the seed).  ``q_nominal`` is a full pinocchio
    configuration (nq,) (continuous joints as normalised ``(cos, sin)``); ``weights``
    is a scalar or an array (nv,), all ``>= 0``, in [1/rad^2] or [1/m^2].
    """

    def __init__(self, model: pin.Model, q_nominal, weights=1.0,
                 *, name: Optional[str] = None):
        nq, nv, njoints = _sizes(model)
        q_nominal = check.array_of_shape(q_nominal, (nq,), "q_nominal")
        # nq = nv: no joint has (cos, sin) or quaternion parts, every vector is normalised.
        if nq != nv and not pin.isNormalized(model, q_nominal, 1e-6):
            raise InvalidGoal("q_nominal is not a valid configuration: the (cos, sin) or "
                              "quaternion parts of its unbounded joints must have norm 1")
        self._q_nominal = check.read_only(q_nominal)
        self._weights = check.read_only(self._read_weights(nv, weights))
        self._pulls = any(self._weights.tolist())  # some weight > 0 (all are >= 0)
        # Every joint has nv >= 1: all have nv = 1 when they add up to one per joint.
        self._identity = nv == njoints - 1
        self.name = check.term_name(name, "posture")

    @staticmethod
    def _read_weights(nv: int, weights) -> np.ndarray:
        if type(weights) is float and weights >= 0.0 and weights != math.inf:  # usual case
            return np.array([weights] * nv)  # np.full is Python-level: dearer cold
        if np.ndim(weights) == 0:
            weights = np.full(nv, check.scalar(weights, "weights"))
        weights = check.array_of_shape(weights, (nv,), "weights")
        if (weights < 0.0).any():
            raise InvalidGoal(f"weights must be >= 0, got {weights.tolist()}")
        return weights

    def preferred_configuration(self) -> Optional[np.ndarray]:
        """``q_nominal`` (nq,) [rad or m], where this cost is 0; None when every weight is 0."""
        return self._q_nominal if self._pulls else None

    def gauss_newton(self, model: pin.Model, data: pin.Data, q: np.ndarray
                     ) -> Tuple[np.ndarray, np.ndarray]:
        """``r = sqrt(w) dq`` (nv,) and its Jacobian ``(nv, nv)``."""
        dq = pin.difference(model, self._q_nominal, q)
        root = np.sqrt(self._weights)
        if self._identity:
            return root * dq, np.diag(root)
        jacobian = pin.dDifference(model, self._q_nominal, q, pin.ArgumentPosition.ARG1)
        return root * dq, root[:, None] * jacobian

    def evaluate(self, model: pin.Model, data: pin.Data, q: np.ndarray
                 ) -> Tuple[float, np.ndarray]:
        """Return the cost and its gradient ``(nv,)`` (needs no kinematics)."""
        dq = pin.difference(model, self._q_nominal, q)
        weighted = self._weights * dq
        if self._identity:
            return 0.5 * float(dq @ weighted), weighted
        jacobian = pin.dDifference(model, self._q_nominal, q, pin.ArgumentPosition.ARG1)
        return 0.5 * float(dq @ weighted), weighted @ jacobian


# The kernels' form of each cost (``constraints.registry``): ``encode(c, group)`` returns
# its parameters and a constant (the part of its value the group's joints do not move);
# its compiled value adds its gradient to ``grad`` (n,) and its Gauss-Newton curvature
# (when it has one) to ``H`` (n, n) at group vector ``q``, kinematics computed.
# ``S33`` (6, 3, 3), ``Sn`` (2, 3, n): scratch.


def _encode_position(c: PositionCost, group) -> Tuple[list, float]:
    """``p_AP`` (3), ``p_BQ`` (3), ``L^T`` (9) with ``C = L L^T / 2``."""
    return c._p_AP_list + c._p_BQ_list + c._Lt_list, 0.0


@jit(inline="always")  # once inline code of the dispatch: no call of its own
def position_value(oMf, Jf, fa, fb, prm, q, grad, H, S33, Sn):  # pragma: no cover
    """``1/2 |L^T (p_AP - p_AQ)|^2``; its gradient and Gauss-Newton curvature."""
    n = q.shape[0]
    p, r, Jp, Jr = S33[5, 2], S33[5, 1], Sn[0], Sn[1]
    kernel.point_in_frame(oMf, Jf, fa, fb, prm, -1, 3, p, Jp, 0)
    for k in range(3):  # L^T rows at prm[6 + 3 k]
        L0, L1, L2 = prm[6 + 3 * k], prm[7 + 3 * k], prm[8 + 3 * k]
        r[k] = L0 * (prm[0] - p[0]) + L1 * (prm[1] - p[1]) + L2 * (prm[2] - p[2])
        for c in range(n):
            Jr[k, c] = -(L0 * Jp[0, c] + L1 * Jp[1, c] + L2 * Jp[2, c])
    for a_ in range(n):
        grad[a_] += Jr[0, a_] * r[0] + Jr[1, a_] * r[1] + Jr[2, a_] * r[2]
        for b_ in range(n):
            H[a_, b_] += Jr[0, a_] * Jr[0, b_] + Jr[1, a_] * Jr[1, b_] + Jr[2, a_] * Jr[2, b_]
    return 0.5 * (r[0] * r[0] + r[1] * r[1] + r[2] * r[2])


def _encode_orientation(c: OrientationCost, group) -> Tuple[list, float]:
    """``R_AbarA`` (9), ``R_BbarB`` (9), ``c``."""
    return c._R_AbarA_list + c._R_BbarB_list + [float(c.c)], 0.0


@jit
def orientation_value(oMf, Jf, fa, fb, prm, q, grad, H, S33, Sn):  # pragma: no cover
    """``c/2 (3 - tr R_AB)``; its gradient on ``J_w = R_WA^T (w_B - w_A)`` (no curvature)."""
    kernel.rotations(oMf, fa, fb, prm, S33)
    RWA, R = S33[0], S33[2]
    half_c = 0.5 * prm[18]
    r0, r1, r2 = R[1, 2] - R[2, 1], R[2, 0] - R[0, 2], R[0, 1] - R[1, 0]
    JA, JB = Jf[fa], Jf[fb]
    for c in range(grad.shape[0]):
        d0, d1, d2 = JB[3, c] - JA[3, c], JB[4, c] - JA[4, c], JB[5, c] - JA[5, c]
        j0 = RWA[0, 0] * d0 + RWA[1, 0] * d1 + RWA[2, 0] * d2
        j1 = RWA[0, 1] * d0 + RWA[1, 1] * d1 + RWA[2, 1] * d2
        j2 = RWA[0, 2] * d0 + RWA[1, 2] * d1 + RWA[2, 2] * d2
        grad[c] -= half_c * (r0 * j0 + r1 * j1 + r2 * j2)
    return half_c * (3.0 - (R[0, 0] + R[1, 1] + R[2, 2]))


def _encode_angle(c: AngleBetweenVectorsCost, group) -> Tuple[list, float]:
    """``a_A`` (3), ``b_B`` (3), ``c``."""
    return c._a_A_list + c._b_B_list + [float(c.c)], 0.0


@jit
def angle_value(oMf, Jf, fa, fb, prm, q, grad, H, S33, Sn):  # pragma: no cover
    """``c (1 - a . b)``; its gradient (no curvature)."""
    dot = kernel.world_vectors(oMf, fa, fb, prm, S33)
    a, b = S33[5, 0], S33[5, 1]
    x0, x1, x2 = a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]
    c = prm[6]
    for col in range(grad.shape[0]):
        d = (x0 * (Jf[fa, 3, col] - Jf[fb, 3, col]) + x1 * (Jf[fa, 4, col] - Jf[fb, 4, col])
             + x2 * (Jf[fa, 5, col] - Jf[fb, 5, col]))
        grad[col] -= c * d
    return c * (1.0 - dot)


class CenterOfMassCost(_NamedCost):
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


class BaseMotionCost(_NamedCost):
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


_COLUMNS: PerObject = PerObject()


def posture_columns(group) -> tuple:
    """Per group column: q index, second q index or -1, v index, continuous (lists).

    Also the v indices outside the group (an array), and ``(q index, v index)`` of each
    of them when every joint outside the group has one coordinate and one velocity
    (revolute or prismatic: pinocchio's difference is then ``q1 - q0``), else None.
    Cached per group.
    """
    if group not in _COLUMNS:
        model = group.robot.model
        first = [model.idx_qs[j] for j in group.joint_ids]
        second = [f + 1 if c else -1 for f, c in zip(first, group.continuous.tolist())]
        outside = np.ones(model.nv, dtype=bool)
        outside[group.iv_full] = False
        inside = set(group.joint_ids)
        others = [j for j in range(1, model.njoints) if j not in inside]
        simple = None
        if all(model.nqs[j] == 1 and model.nvs[j] == 1 for j in others):
            simple = [(model.idx_qs[j], model.idx_vs[j]) for j in others]
        _COLUMNS[group] = (first, second, [int(v) for v in group.iv_full],
                           [float(c) for c in group.continuous.tolist()],
                           np.flatnonzero(outside), simple)
    return _COLUMNS[group]


def encode_posture(c: PostureCost, group) -> Tuple[list, float]:
    """Per group column (continuous, nominal or its cos, its sin or 0, weight); constant.

    The constant is the cost of the joints outside the group, which stay locked.
    """
    q_nom, w = c._q_nominal.tolist(), c._weights.tolist()
    first, second, iv, continuous, outside, simple = posture_columns(group)
    params: list = []
    for a, b, v, cont in zip(first, second, iv, continuous):
        params += (cont, q_nom[a], q_nom[b] if b >= 0 else 0.0, w[v])
    constant = 0.0
    if simple is not None:  # floats, as pin.difference for one-number joints
        locked = group.q_full_locked
        for iq, v in simple:
            d = float(locked[iq]) - q_nom[iq]
            constant += w[v] * d * d
        constant *= 0.5
    elif outside.size:
        d = pin.difference(group.robot.model, c._q_nominal, group.q_full_locked)[outside]
        constant = 0.5 * float(np.sum(c._weights[outside] * d * d))
    return params, constant


@jit(inline="always")  # once inline code of the dispatch: no call of its own
def posture_value(oMf, Jf, fa, fb, prm, q, grad, H, S33, Sn):  # pragma: no cover
    """``1/2 w d^2`` per group column, ``d`` pinocchio's difference; gradient, curvature."""
    total = 0.0
    for j in range(q.shape[0]):
        cont, a, b, w = prm[4 * j], prm[4 * j + 1], prm[4 * j + 2], prm[4 * j + 3]
        if cont:
            c1, s1 = math.cos(q[j]), math.sin(q[j])
            d = math.atan2(a * s1 - b * c1, a * c1 + b * s1)
        else:
            d = q[j] - a
        total += 0.5 * w * d * d
        grad[j] += w * d
        H[j, j] += w
    return total


POSTURE = kernel.CostKind(PostureCost, 0, lambda c: (), encode_posture)
POSITION = kernel.CostKind(PositionCost, 1, lambda c: (c._fid_A, c._fid_B), _encode_position)
ORIENTATION = kernel.CostKind(OrientationCost, 2, lambda c: (c._fid_Abar, c._fid_Bbar),
                              _encode_orientation)
ANGLE = kernel.CostKind(AngleBetweenVectorsCost, 3, lambda c: (c._fid_A, c._fid_B),
                        _encode_angle)

__all__ = ["AngleBetweenVectorsCost", "BaseMotionCost", "CenterOfMassCost", "OrientationCost",
           "PositionCost", "PostureCost"]
