"""Drake's AngleBetweenVectorsConstraint."""
from __future__ import annotations

import math
from typing import Optional, Tuple

import numpy as np
import pinocchio as pin

from . import _checks as check
from . import _samples as samples
from ._base import BoundedConstraint
from ._frames import (cross, frame_id, frame_jacobian, vector_angle,
                      vectors_angle_and_gradient, vectors_dot)


class AngleBetweenVectorsConstraint(BoundedConstraint):
    """``angle_lower <= angle(a, b) <= angle_upper`` for ``a_A`` fixed in A, ``b_B`` in B.

    Imposed as Drake does, on the cosine: ``cos(angle_upper) <= a^T R_AB b <= cos(angle_lower)``
    with ``a``, ``b`` normalised.  One row, dimensionless; angles in [rad] in ``[0, pi]``.

    In physical units: one row, the angle [rad] itself, ``atan2(|a x b|, a . b)``.
    """

    unit = "rad"

    _a_A = check.lazy_array("_a_A_list")
    _b_B = check.lazy_array("_b_B_list")

    def __init__(
        self, model: pin.Model, frame_A: str, a_A, frame_B: str, b_B,
        angle_lower: float, angle_upper: float, *, name: Optional[str] = None,
    ):
        self._fid_A = frame_id(model, frame_A)
        self._fid_B = frame_id(model, frame_B)
        self._a_A_list, self._b_B_list = check.vector_lists((a_A, b_B), ("a_A", "b_B"),
                                                            units=(0, 1))
        self.angle_lower = check.angle(angle_lower, "angle_lower")
        self.angle_upper = check.angle(angle_upper, "angle_upper")
        check.ordered(self.angle_lower, self.angle_upper, "angle_lower", "angle_upper")
        default = f"angle({frame_A},{frame_B})"
        super().__init__(check.term_name(name, default),
                         [math.cos(self.angle_upper)], [math.cos(self.angle_lower)],
                         physical=([self.angle_lower], [self.angle_upper]))

    def evaluate(
        self, model: pin.Model, data: pin.Data, q: np.ndarray
    ) -> Tuple[np.ndarray, np.ndarray]:
        """``[cos(angle)]`` (1,) and its Jacobian ``(1, nv)``."""
        cosine, gradient = vectors_dot(model, data, self._fid_A, self._a_A,
                                       self._fid_B, self._b_B)
        return np.array([cosine]), gradient[np.newaxis, :]

    def evaluate_physical(
        self, model: pin.Model, data: pin.Data, q: np.ndarray
    ) -> Tuple[np.ndarray, np.ndarray]:
        """``[angle]`` (1,) [rad] and its Jacobian ``(1, nv)``."""
        angle, gradient = vectors_angle_and_gradient(
            model, data, self._fid_A, self._a_A, self._fid_B, self._b_B)
        return np.array([angle]), gradient[np.newaxis, :]

    @property
    def cube_rows(self) -> bool:
        """Whether :meth:`linearisation` adds the cube rows (a bound from 0 below pi/2)."""
        return not (self.angle_lower > 0.0 or self.angle_upper >= math.pi / 2)

    def linearisation(self, model: pin.Model, data: pin.Data, q: np.ndarray, margin: float):
        """Return rows for a QP step ``(g, J, lower, upper)``.

        The angle within its bounds shrunk by ``margin`` and, with :attr:`cube_rows`,
        ``a x b`` (3) within a cube of half-side ``sin(angle_upper - margin)`` (the angle
        alone is flat in the directions that turn ``b`` around ``a``).
        """
        angle, gradient = vectors_angle_and_gradient(
            model, data, self._fid_A, self._a_A, self._fid_B, self._b_B)
        g, J = np.array([angle]), gradient[np.newaxis, :]
        lower, upper = [self.angle_lower + margin], [self.angle_upper - margin]
        if not self.cube_rows:
            return g, J, np.array(lower), np.array(upper)
        a = data.oMf[self._fid_A].rotation @ self._a_A
        b = data.oMf[self._fid_B].rotation @ self._b_B
        c = float(a @ b)
        J_A = frame_jacobian(model, data, self._fid_A)[3:]
        J_B = frame_jacobian(model, data, self._fid_B)[3:]
        eye = np.eye(3)
        J_v = (np.outer(a, b) - c * eye) @ J_A + (c * eye - np.outer(b, a)) @ J_B
        s = math.sin(self.angle_upper - margin)
        return (np.concatenate((cross(a, b), g)), np.vstack((J_v, J)),
                np.array([-s, -s, -s] + lower), np.array([s, s, s] + upper))

    def measure(self, model: pin.Model, data: pin.Data, q: np.ndarray) -> np.ndarray:
        """Distance [rad] of the angle outside ``[angle_lower, angle_upper]``."""
        angle = vector_angle(data.oMf[self._fid_A].rotation @ self._a_A,
                             data.oMf[self._fid_B].rotation @ self._b_B)
        return np.array([max(self.angle_lower - angle, angle - self.angle_upper, 0.0)])

    def sample_violation(self, frames) -> np.ndarray:
        """Weighted squared angle [rad^2] of each sample outside the bounds."""
        a_W = samples.rotate(frames.placement(self._fid_A)[1], self._a_A)
        b_W = samples.rotate(frames.placement(self._fid_B)[1], self._b_B)
        return samples.angle_outside((a_W * b_W).sum(axis=0), self.angle_lower,
                                     self.angle_upper)
