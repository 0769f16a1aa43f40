"""Collision as a cost, for solvers that only minimise (least squares, gradient descent).

``c(q) = weight / 2 * sum_i max(0, influence_distance_m - d_i(q))^2`` over every candidate pair,
C1 in ``q``; zero when every pair is farther than ``influence_distance_m``.  A cost does not
guarantee clearance: pair it with :class:`~.constraint.MinimumDistanceConstraint` where the
solver takes constraints, and re-check the answer with ``CollisionChecker.in_collision``.
"""
from __future__ import annotations

from typing import Tuple

import numpy as np
import pinocchio as pin

from ros2_ik.core.collision.checker import CollisionChecker
from ros2_ik.core.constraints.collision import pair_gradients
from ros2_ik.core.errors import InvalidArgument
from ros2_ik.core.terms import Cost


class MinimumDistanceCost(Cost):
    """Squared hinge on the signed padded distance of every pair closer than the influence.

    Args:
        checker: the robot's collision checker.
        influence_distance_m: distance [m] below which a pair is penalised.
        weight: cost per squared metre of intrusion, in [1/m^2].
    """

    name = "minimum_distance_cost"

    def __init__(self, checker: CollisionChecker, influence_distance_m: float = 0.05,
                 weight: float = 1.0):
        if not np.isfinite(influence_distance_m):
            raise InvalidArgument(f"influence_distance_m must be finite, got "
                                  f"{influence_distance_m}")
        if not (np.isfinite(weight) and weight >= 0.0):
            raise InvalidArgument(f"weight must be finite and >= 0, got {weight}")
        self.checker = checker
        self.influence_distance_m = float(influence_distance_m)
        self.weight = float(weight)

    def evaluate(
        self, model: pin.Model, data: pin.Data, q: np.ndarray
    ) -> Tuple[float, np.ndarray]:
        """Return the cost and its gradient (nv,); needs the caller's kinematics/Jacobians."""
        pairs = self.checker.distances_from_data(data, self.influence_distance_m)
        near = np.flatnonzero(pairs.distances_m < self.influence_distance_m)
        intrusion = self.influence_distance_m - pairs.distances_m[near]
        gradient = -self.weight * (intrusion @ pair_gradients(model, data, pairs, near))
        return 0.5 * self.weight * float(intrusion @ intrusion), gradient.reshape(model.nv)
