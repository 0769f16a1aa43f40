"""Base classes of the constraints and costs a solver stacks (Drake's vocabulary).

Every term is evaluated on the *full* pinocchio configuration ``q`` (shape ``(nq,)``)
and differentiated in the tangent space (shape ``(nv,)``): a Jacobian column ``k``
is the derivative along ``pin.integrate(model, q, e_k * t)`` at ``t = 0``.  Solvers
select the columns of the joints they move.

Precondition of ``evaluate``: the caller has run, for this ``q`` and this ``data``::

    pin.computeJointJacobians(model, data, q)   # also does forward kinematics
    pin.updateFramePlacements(model, data)

so that ``data.oMf`` and ``pin.getFrameJacobian(model, data, frame_id, ...)`` are
valid.  Terms must not call forward kinematics themselves (one update per iterate is
shared by every term).  A term holds no ``pin.Data``: it is safe to share between
threads, each of which owns its ``Data``.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Tuple

import numpy as np
import pinocchio as pin


class Constraint(ABC):
    """``lower_bound <= g(q) <= upper_bound`` with ``g`` of shape ``(m,)``."""

    #: A short human-readable name, used in results ("violated constraints").
    name: str = "constraint"

    @property
    @abstractmethod
    def lower_bound(self) -> np.ndarray:
        """Lower bounds, shape ``(m,)`` (``-inf`` where unbounded)."""

    @property
    @abstractmethod
    def upper_bound(self) -> np.ndarray:
        """Upper bounds, shape ``(m,)`` (``+inf`` where unbounded)."""

    @property
    def num_constraints(self) -> int:
        """Number of scalar rows ``m``."""
        return int(self.lower_bound.shape[0])

    @abstractmethod
    def evaluate(
        self, model: pin.Model, data: pin.Data, q: np.ndarray
    ) -> Tuple[np.ndarray, np.ndarray]:
        """Return ``g(q)`` with shape ``(m,)`` and its Jacobian, shape ``(m, nv)``."""

    def value(self, model: pin.Model, data: pin.Data, q: np.ndarray) -> np.ndarray:
        """Return ``g(q)`` alone, shape ``(m,)``; the default drops :meth:`evaluate`'s Jacobian.

        Same precondition as :meth:`evaluate`; a subclass may compute less (no Jacobian).
        """
        return np.asarray(self.evaluate(model, data, q)[0])

    def holds(self, model: pin.Model, data: pin.Data, q: np.ndarray) -> bool:
        """Return whether ``g(q)`` is within the bounds, with no tolerance.

        Same precondition as :meth:`evaluate`; a subclass may answer without computing
        every row (a minimum-distance constraint only looks at the pairs that may violate).
        """
        return bool(np.all(self.violation(self.value(model, data, q)) <= 0.0))  # NaN: no

    def violation(self, value: np.ndarray) -> np.ndarray:
        """Per-row distance outside the bounds, shape ``(m,)``, zero when satisfied."""
        below = self.lower_bound - value
        above = value - self.upper_bound
        return np.maximum(np.maximum(below, above), 0.0)


class Cost(ABC):
    """A scalar cost ``c(q)`` the solver minimises (weighted sum of all costs)."""

    name: str = "cost"

    @abstractmethod
    def evaluate(
        self, model: pin.Model, data: pin.Data, q: np.ndarray
    ) -> Tuple[float, np.ndarray]:
        """Return ``c(q)`` (a float) and its gradient, shape ``(nv,)``."""
