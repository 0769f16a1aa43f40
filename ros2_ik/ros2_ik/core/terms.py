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

import math

from abc import ABC, abstractmethod
from typing import Optional, Tuple

import numpy as np
import pinocchio as pin

from ros2_ik.core.kinematics.frames import Placements


class Constraint(ABC):
    """``lower_bound <= g(q) <= upper_bound`` with ``g`` of shape ``(m,)``."""

    #: A short human-readable name, used in results ("violated constraints").
    name: str = "constraint"

    #: Whether :meth:`measure_rows` needs :meth:`evaluate`'s precondition (the Jacobians):
    #: a class with neither ``measure_rows`` nor :meth:`value` of its own (set per class).
    measured_through_evaluate: bool = True

    def __init_subclass__(cls, **kwargs) -> None:
        """Set :attr:`measured_through_evaluate` of the new class.

        A class that defines :meth:`measure` alone (the check's measure before
        :meth:`measure_rows`) is measured by it: its ``measure_rows`` reads it.
        """
        super().__init_subclass__(**kwargs)
        if cls.measure is not Constraint.measure and cls.measure_rows is Constraint.measure_rows:
            cls.measure_rows = _rows_of_measure
        cls.measured_through_evaluate = (cls.measure_rows is Constraint.measure_rows
                                         and cls.value is Constraint.value)

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

        Same precondition as :meth:`evaluate`; a subclass that defines it computes less
        (no Jacobian) and needs only forward kinematics and frame placements.
        """
        return np.asarray(self.evaluate(model, data, q)[0])

    def holds(self, model: pin.Model, data: pin.Data, q: np.ndarray) -> bool:
        """Return whether ``g(q)`` is within the bounds, with no tolerance.

        Same precondition as :meth:`evaluate`; a subclass may answer without computing
        every row (a minimum-distance constraint only looks at the pairs that may violate).
        """
        return bool(np.all(self.violation(self.value(model, data, q)) <= 0.0))  # NaN: no

    def impossible(self) -> Optional[str]:
        """Return why no configuration at all meets this constraint, or None (cannot tell).

        A proof from the constraint alone (its bounds, its fixed data), whatever the
        joints do; a solve answers NO_SOLUTION with it before iterating
        (:mod:`ros2_ik.core.solvers.proofs`).  Cheap on a constraint that can hold.
        """
        return None

    def bound_lists(self) -> Tuple[list, list]:
        """:attr:`lower_bound` and :attr:`upper_bound` as lists of floats."""
        return self.lower_bound.tolist(), self.upper_bound.tolist()

    def violation(self, value: np.ndarray) -> np.ndarray:
        """Per-row distance outside the bounds, shape ``(m,)``, zero when satisfied.

        ``value``: shape ``(m,)``, an array or a list of floats.
        """
        values = value if type(value) is list else np.asarray(value, dtype=float).tolist()
        if len(values) <= 8 and math.isfinite(sum(values)):  # floats: cheaper here
            lower, upper = self.bound_lists()  # a bounded constraint's makes no array
            return np.array([max(lo - v, v - hi, 0.0) for v, lo, hi in zip(
                values, lower, upper)])
        value = np.asarray(values, dtype=float)
        below = self.lower_bound - value
        above = value - self.upper_bound
        return np.maximum(np.maximum(below, above), 0.0)

    # ------------------------------------------------ physical units (m, rad)
    #: Unit of every row of :meth:`measure` and :meth:`evaluate_physical`: "m" or "rad".
    unit: str = "m"

    @property
    def units(self) -> Tuple[str, ...]:
        """Unit of each row of :meth:`measure`, ``"m"`` or ``"rad"`` (shape ``(m,)``)."""
        return (self.unit,) * self.num_constraints

    @property
    def physical_bounds(self) -> Tuple[np.ndarray, np.ndarray]:
        """Bounds ``(lower, upper)`` of :meth:`evaluate_physical`'s rows [m or rad]."""
        return self.lower_bound, self.upper_bound

    def evaluate_physical(
        self, model: pin.Model, data: pin.Data, q: np.ndarray
    ) -> Tuple[np.ndarray, np.ndarray]:
        """Rows in physical units [m or rad] (:attr:`units`) and their Jacobian ``(m, nv)``.

        What a solver drives, against :attr:`physical_bounds`: a row that is off by
        1e-4 is 1e-4 m or 1e-4 rad away from the set.  The default is :meth:`evaluate`,
        right for constraints whose rows already are positions or distances.
        """
        return self.evaluate(model, data, q)

    def sample_violation(self, frames) -> Optional[np.ndarray]:
        """Squared physical violation (S,) of many sample configurations, or None.

        ``frames.placement(frame_id)`` gives the world placements of a model frame at the
        samples (see :mod:`ros2_ik.core.constraints._samples`); restarts start from the
        samples nearest to satisfying every constraint.  None: this constraint does not
        rank samples (the default).
        """
        return None

    def linearisation(self, model: pin.Model, data: pin.Data, q: np.ndarray, margin: float):
        """Rows ``(g, J, lower, upper)`` whose linearisation a QP step keeps in bounds.

        The default is :meth:`evaluate_physical` against :attr:`physical_bounds` shrunk by
        ``margin`` [this constraint's unit]; an angle bound adds rows that are not flat
        in the directions that turn its axis (see OrientationConstraint).
        """
        g, J = self.evaluate_physical(model, data, q)
        lower, upper = self.physical_bounds
        return g, J, np.asarray(lower) + margin, np.asarray(upper) - margin

    def measure(self, model: pin.Model, data: pin.Data, q: np.ndarray) -> np.ndarray:
        """Per-row violation in physical units [m or rad] (:attr:`units`), zero when it holds.

        The verification's figure, computed from the geometry by its own formula (not
        the residual a solver drives): an angle bound reports radians, a distance metres.
        :meth:`measure_rows` as an array, with the same precondition.
        """
        return np.array(self.measure_rows(Placements.of(model, data, q)), dtype=float)

    def measure_rows(self, placements: Placements) -> list:
        """:meth:`measure` as a list of floats (each >= 0, NaN where undefined) [m or rad].

        Computed from the frames' world placements (``placements.pose``) on floats.

        What :func:`ros2_ik.core.verify.check` reads.  Precondition: forward kinematics
        and frame placements of ``placements.q`` in ``placements.data``
        (``pin.framesForwardKinematics``), no Jacobians, when the class defines
        ``measure_rows`` or :meth:`value`; else :meth:`evaluate`'s (the default measures
        through it).  :func:`ros2_ik.core.verify.check` runs what each needs.
        """
        return self.violation(self.value(placements.model, placements.data,
                                         placements.q)).tolist()


def _rows_of_measure(self: Constraint, placements: Placements) -> list:
    """``measure_rows`` of a class that defines :meth:`Constraint.measure` alone."""
    return np.asarray(self.measure(placements.model, placements.data, placements.q),
                      dtype=float).reshape(-1).tolist()


class Cost(ABC):
    """A scalar cost ``c(q)`` the solver minimises (weighted sum of all costs)."""

    name: str = "cost"

    @abstractmethod
    def evaluate(
        self, model: pin.Model, data: pin.Data, q: np.ndarray
    ) -> Tuple[float, np.ndarray]:
        """Return ``c(q)`` (a float) and its gradient, shape ``(nv,)``."""

    def gauss_newton(
        self, model: pin.Model, data: pin.Data, q: np.ndarray
    ) -> Optional[Tuple[np.ndarray, np.ndarray]]:
        """``(r, J_r)`` with ``c(q) = 1/2 |r(q)|^2`` when the cost is a sum of squares, or None.

        A solver then models the cost's curvature as ``J_r^T J_r`` (Gauss-Newton); None
        (the default) leaves it to the solver's own curvature estimate.
        """
        return None

    def preferred_configuration(self) -> Optional[np.ndarray]:
        """Return a full configuration (nq,) where this cost is lowest, or None (the default).

        A solver may start from it besides the seed (:meth:`Solver.first_attempt`): the
        local optimum nearest the seed's is not always the lowest one.
        """
        return None
