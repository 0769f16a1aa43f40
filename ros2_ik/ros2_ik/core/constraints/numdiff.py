"""Central finite differences of any constraint or cost along the tangent space.

For testing analytic Jacobians, ours and third parties': column ``k`` is
``(g(q + eps e_k) - g(q - eps e_k)) / (2 eps)`` with ``+`` being ``pin.integrate``.
"""
from __future__ import annotations

from typing import Union

import numpy as np
import pinocchio as pin

from ..terms import Constraint, Cost


def update_kinematics(model: pin.Model, data: pin.Data, q: np.ndarray) -> None:
    """Run the precondition of ``evaluate``: joint Jacobians and frame placements at ``q``."""
    pin.computeJointJacobians(model, data, q)
    pin.updateFramePlacements(model, data)


def _value(term: Union[Constraint, Cost], model, data, q) -> np.ndarray:
    update_kinematics(model, data, q)
    return np.atleast_1d(np.asarray(term.evaluate(model, data, q)[0], dtype=float))


def finite_difference(
    term: Union[Constraint, Cost], model: pin.Model, data: pin.Data, q: np.ndarray,
    eps: float = 1e-6,
) -> np.ndarray:
    """Numerical Jacobian ``(m, nv)`` of a constraint, or gradient ``(nv,)`` of a cost.

    Leaves ``data`` updated at ``q``.
    """
    columns = []
    for k in range(model.nv):
        step = np.zeros(model.nv)
        step[k] = eps
        plus = _value(term, model, data, pin.integrate(model, q, step))
        minus = _value(term, model, data, pin.integrate(model, q, -step))
        columns.append((plus - minus) / (2.0 * eps))
    update_kinematics(model, data, q)
    jacobian = np.stack(columns, axis=1)
    return jacobian[0] if isinstance(term, Cost) else jacobian
