"""The posture cost: a weighted pull toward a nominal configuration [1/rad^2 or 1/m^2]."""
from __future__ import annotations

import math
from typing import Optional, Tuple

import numpy as np
import pinocchio as pin

from ros2_ik.core.constraints import checks as check
from ros2_ik.core.constraints import compiled as kernel
from ros2_ik.core.costs._base import NamedCost
from ros2_ik.core.errors import InvalidGoal
from ros2_ik.core.runtime.compiled import jit
from ros2_ik.core.runtime.per_object import PerObject


_SIZES: PerObject = PerObject()


def _sizes(model: pin.Model) -> Tuple[int, int, int]:
    """``(nq, nv, njoints)`` of ``model``, kept per model (a loaded model's joints are fixed).

    Each read of a pinocchio attribute is a boost.python call.
    """
    sizes = _SIZES.get(model)
    if sizes is None:
        sizes = _SIZES[model] = (model.nq, model.nv, model.njoints)
    return sizes


class PostureCost(NamedCost):
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


def encode_posture(c: PostureCost, group) -> Optional[Tuple[list, float]]:
    """Per group column (continuous, nominal or its cos, its sin or 0, weight); constant.

    The constant is the cost of the joints outside the group, which stay locked.  None
    for a group with a base (the compiled value knows 1-DoF columns only).
    """
    if group.has_base:
        return None
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
def value(oMf, Jf, fa, fb, prm, q, grad, H, S33, Sn):  # pragma: no cover
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


POSTURE = kernel.CostKind(PostureCost, lambda c: (), encode_posture, value)
