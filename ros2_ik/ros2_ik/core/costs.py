"""Drake's inverse-kinematics costs, plus a posture cost (see ``ros2_ik.core.terms``).

Each ``evaluate`` returns the cost (float) and its gradient ``(nv,)`` in the tangent
space.  Names are resolved and arguments validated once in ``__init__``.
"""
from __future__ import annotations

import math
from typing import Optional, Tuple

import numpy as np
import pinocchio as pin

from .constraints import _checks as check
from .constraints._frames import frame_id, point_in_frame, trace_and_gradient, vectors_dot
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


__all__ = ["AngleBetweenVectorsCost", "OrientationCost", "PositionCost", "PostureCost"]
