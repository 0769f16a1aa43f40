"""Drake's other two distance constraints: the nearest pair's upper bound and one named pair.

``MinimumDistanceUpperBoundConstraint`` (Drake's ``AddMinimumDistanceUpperBoundConstraint``):
at least one candidate pair (robot/robot or robot/scene: the pairs
:class:`~.constraint.MinimumDistanceConstraint` keeps apart) has a signed padded distance
``<= bound_m``, as in contact or a grasp approach.  One row, the distance of the nearest
pair, found exactly (:meth:`.CollisionChecker.nearest_from_data`), bounds
``[-inf, bound_m]``; its gradient is that pair's.  There is no influence distance: Drake's
smoothed row is flat once every pair is farther than the bound plus its offset, this row
has a gradient from any configuration.

``DistanceConstraint`` (Drake's ``AddDistanceConstraint``): the signed padded distance
between two named geometries stays in ``[distance_lower, distance_upper]`` [m].  A name is a
robot link with collision geometry or a scene object; one made of several shapes is their
union, its distance the smallest over their pairs (one row, that pair's gradient).  The
pair need not be one the checker tests (adjacent links, a pair the SRDF disables).  Two
names on one rigid body (two world objects, say) are rejected, as Drake rejects two static
geometries: no configuration changes their distance.

Both rows are continuous in ``q`` and differentiable except where the nearest pair (or the
nearest features) changes, as the ``"pairs"`` rows of the minimum-distance constraint;
gradients by :func:`.constraint.distance_gradients`.  Like every term they hold no
``pin.Data``; the checker gives each thread its own geometry data.
"""
from __future__ import annotations

import math
from typing import Optional, Tuple

import numpy as np
import pinocchio as pin

from ros2_ik.core.collision.checker import CollisionChecker, PairDistances
from ros2_ik.core.collision.coal_calls import geometry_distances
from ros2_ik.core.collision.compiled import CompiledScene
from ros2_ik.core.constraints import checks as check
from ros2_ik.core.constraints._base import BoundedConstraint
from ros2_ik.core.constraints.collision import check_model, distance_gradients, pair_gradients
from ros2_ik.core.errors import InvalidGeometry, InvalidGoal


class MinimumDistanceUpperBoundConstraint(BoundedConstraint):
    """The nearest candidate pair's signed padded distance <= ``bound_m`` (module docstring).

    Args:
        checker: the robot's collision checker (scene changes are picked up live).
        bound_m: upper bound [m] on the smallest distance (may be < 0: a penetration).
        name: the name results report (default ``minimum_distance_upper_bound``).
    """

    def __init__(self, checker: CollisionChecker, bound_m: float, *,
                 name: Optional[str] = None):
        self.bound_m = check.scalar(bound_m, "bound_m")
        if checker.compiled().num_pairs == 0:
            raise InvalidGoal("bound_m: no pair to bring within it (the robot has no "
                              "candidate self pair and the scene no object)")
        self.checker = checker
        super().__init__(check.term_name(name, "minimum_distance_upper_bound"),
                         [-math.inf], [self.bound_m])

    def evaluate(self, model: pin.Model, data: pin.Data, q: np.ndarray):
        """Nearest distance (1,) [m] and its gradient (1, nv); kinematics and Jacobians."""
        pairs, k = self._nearest(model, data)
        if k < 0:
            return np.array([math.inf]), np.zeros((1, model.nv))
        return np.array([pairs.distances_m[k]]), pair_gradients(model, data, pairs, [k])

    def value(self, model: pin.Model, data: pin.Data, q: np.ndarray) -> np.ndarray:
        """Nearest distance (1,) [m] alone; needs forward kinematics only."""
        pairs, k = self._nearest(model, data)
        return np.array([pairs.distances_m[k] if k >= 0 else math.inf])

    def _nearest(self, model: pin.Model, data: pin.Data) -> Tuple[PairDistances, int]:
        check_model(self.checker, model)
        return self.checker.nearest_from_data(data)


def geometry_pairs(compiled: CompiledScene, name_a: str, name_b: str) -> np.ndarray:
    """Geometry index pairs (k, 2) between the shapes named ``name_a`` and ``name_b``.

    Raises ``InvalidGeometry`` (listing the valid names) for an unknown name, and
    ``InvalidGoal`` when no pair of their shapes is on two rigid bodies.
    """
    names, joints = compiled.geometry_names, compiled.geometry_joint
    sides = []
    for name, argument in ((name_a, "geometry_a"), (name_b, "geometry_b")):
        side = [i for i, n in enumerate(names) if n == name]
        if not side:
            raise InvalidGeometry(name, names, argument)
        sides.append(side)
    pairs = [(i, j) for i in sides[0] for j in sides[1] if joints[i] != joints[j]]
    if not pairs:
        raise InvalidGoal(f"geometry_a '{name_a}' and geometry_b '{name_b}' are on one rigid "
                          "body: no configuration changes their distance")
    return np.array(pairs, dtype=np.int64)


class DistanceConstraint(BoundedConstraint):
    """``distance_lower <= d(geometry_a, geometry_b) <= distance_upper`` (module docstring).

    The names are looked up in each scene version the checker compiles: a name the scene
    no longer has raises ``InvalidGeometry`` at the next evaluation.

    Args:
        checker: the robot's collision checker; its current scene must know both names.
        geometry_a, geometry_b: a robot link with collision geometry or a scene object.
        distance_lower, distance_upper: bounds [m] on the signed padded distance (< 0: a
            penetration; ``-inf`` / ``inf`` for a one-sided bound).
        name: the name results report (default ``distance(geometry_a,geometry_b)``).
    """

    def __init__(self, checker: CollisionChecker, geometry_a: str, geometry_b: str,
                 distance_lower: float, distance_upper: float, *,
                 name: Optional[str] = None):
        lower = check.scalar(distance_lower, "distance_lower", allow_inf=True)
        upper = check.scalar(distance_upper, "distance_upper", allow_inf=True)
        check.ordered(lower, upper, "distance_lower", "distance_upper")
        if lower == math.inf or upper == -math.inf:
            raise InvalidGoal(f"distance_lower ({lower}) and distance_upper ({upper}) leave "
                              "no distance")
        self.checker, self.geometry_a, self.geometry_b = checker, geometry_a, geometry_b
        self.distance_lower, self.distance_upper = lower, upper
        self._pairs: Tuple[Optional[CompiledScene], np.ndarray] = (None, np.zeros((0, 2)))
        self._pairs_of(checker.compiled())  # the names are checked now
        super().__init__(check.term_name(name, f"distance({geometry_a},{geometry_b})"),
                         [lower], [upper])

    def evaluate(self, model: pin.Model, data: pin.Data, q: np.ndarray):
        """Distance (1,) [m] and its gradient (1, nv); needs kinematics and joint Jacobians."""
        compiled, pairs, found = self._distances(model, data)
        k = int(np.argmin(found.distances_m))
        joints = compiled.geometry_joint
        gradient = distance_gradients(
            model, data, found.normals[k:k + 1], found.p_world_a[k:k + 1],
            found.p_world_b[k:k + 1], joints[pairs[k:k + 1, 0]], joints[pairs[k:k + 1, 1]])
        return np.array([found.distances_m[k]]), gradient

    def value(self, model: pin.Model, data: pin.Data, q: np.ndarray) -> np.ndarray:
        """Distance (1,) [m] alone; needs forward kinematics only."""
        return np.array([self._distances(model, data)[2].distances_m.min()])

    def _distances(self, model: pin.Model, data: pin.Data):
        check_model(self.checker, model)
        compiled, geom_data = self.checker.placed_from_data(data)
        pairs = self._pairs_of(compiled)
        return compiled, pairs, geometry_distances(compiled, geom_data, pairs)

    def _pairs_of(self, compiled: CompiledScene) -> np.ndarray:
        """Geometry pairs of the two names in ``compiled`` (kept for its scene version)."""
        known, pairs = self._pairs
        if known is not compiled:
            pairs = geometry_pairs(compiled, self.geometry_a, self.geometry_b)
            self._pairs = (compiled, pairs)  # one tuple: threads see a consistent pair
        return pairs
