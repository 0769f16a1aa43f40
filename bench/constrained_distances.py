"""Distance constraints on a collision checker, for the fuzz and the oracle (issue 38).

Two :class:`constrained_problems.Term` kinds, Drake's two distance constraints:

``min_distance_upper``  ``MinimumDistanceUpperBoundConstraint(bound_m)``: the nearest
                        checked pair (robot/robot, robot/scene) within ``bound_m`` [m]
``distance``            ``DistanceConstraint(geometry_a, geometry_b, distance_lower,
                        distance_upper)``: one named pair (links, scene objects) [m]

Measured here with coal on the compiled scene's shapes at placements of our own forward
kinematics, not through the checker's distance code: every checked pair by pinocchio's
brute-force pass (no bounds, no pruning), a named pair by ``coal.distance`` on each of its
shape pairs.  The generator names only links and objects of one shape each (what Drake's
``AddDistanceConstraint`` takes: one geometry pair) on two rigid bodies, one moving.
"""
from __future__ import annotations

import math
from collections import Counter
from typing import List, Tuple

import coal
import numpy as np
import pinocchio as pin

from constrained_problems import Term


def pair_distances(checker, q_full: np.ndarray) -> np.ndarray:
    """Signed padded distances (P,) [m] of every pair the checker tests, brute force."""
    compiled = checker.compiled()
    data, geom_data = checker.model.createData(), pin.GeometryData(compiled.geom_model)
    pin.computeDistances(checker.model, data, compiled.geom_model, geom_data, q_full)
    raw = np.array([r.min_distance for r in geom_data.distanceResults])
    return raw - np.asarray(compiled.padding_m)


def named_distance(checker, q_full: np.ndarray, name_a: str, name_b: str) -> float:
    """Smallest signed padded distance [m] between the shapes named ``name_a``, ``name_b``."""
    compiled = checker.compiled()
    data = checker.model.createData()
    pin.forwardKinematics(checker.model, data, q_full)
    objects, names = compiled.geom_model.geometryObjects, compiled.geometry_names

    def placed(i):
        X = data.oMi[objects[i].parentJoint] * objects[i].placement
        return objects[i].geometry, coal.Transform3s(X.rotation, X.translation)

    side_a = [i for i, n in enumerate(names) if n == name_a]
    side_b = [i for i, n in enumerate(names) if n == name_b]
    if not side_a or not side_b:
        raise ValueError(f"no shape named {name_a!r} or {name_b!r}")
    pad = compiled.geometry_padding_m
    return min(coal.distance(*placed(i), *placed(j), coal.DistanceRequest(),
                             coal.DistanceResult()) - pad[i] - pad[j]
               for i in side_a for j in side_b)


def one_shape_names(checker) -> Tuple[List[str], List[str]]:
    """Return (moving, all): names of one shape each; moving: not fixed in the world."""
    compiled = checker.compiled()
    count = Counter(compiled.geometry_names)
    single = [(n, int(j)) for n, j in zip(compiled.geometry_names, compiled.geometry_joint)
              if count[n] == 1]
    return [n for n, j in single if j != 0], [n for n, _ in single]


def _slack(rng) -> float:
    return float(rng.choice([0.0, 1e-3, 1e-2, 0.05])) * rng.random()


def draw(rng: np.random.Generator, collision, q: np.ndarray, mode: str) -> Term:
    """One distance term at group vector ``q`` (``collision``: (checker, to_full_q)).

    ``mode`` as constrained_random's: "feasible" (bounds around the value at ``q``),
    "arbitrary" or "degenerate" (a bound equal to the value at ``q``, or both).
    """
    checker, to_full = collision
    q_full = to_full(q)
    if rng.random() < 0.5:
        nearest = float(pair_distances(checker, q_full).min())
        bound = {"feasible": nearest + _slack(rng), "arbitrary": rng.uniform(-0.01, 0.1),
                 "degenerate": nearest}[mode]
        return Term("min_distance_upper", dict(bound_m=float(bound)))
    moving, every = one_shape_names(checker)
    joint = dict(zip(checker.compiled().geometry_names, checker.compiled().geometry_joint))
    a = str(rng.choice(moving))
    b = str(rng.choice([n for n in every if joint[n] != joint[a]]))
    d = named_distance(checker, q_full, a, b)
    lower, upper = d - _slack(rng), d + _slack(rng)
    if mode == "arbitrary":
        lower, upper = sorted(rng.uniform(-0.02, 0.4, 2))
    elif mode == "degenerate":
        lower, upper = d, (d if rng.random() < 0.5 else math.inf)
    if rng.random() < 0.2:
        lower, upper = (-math.inf, upper) if rng.random() < 0.5 else (lower, math.inf)
    return Term("distance", dict(geometry_a=a, geometry_b=b, distance_lower=float(lower),
                                 distance_upper=float(upper)))


def violation(kind: str, a, collision, q: np.ndarray) -> float:
    """Violation [m] of a ``min_distance_upper`` or ``distance`` term at group vector ``q``."""
    checker, to_full = collision
    if kind == "min_distance_upper":
        return max(0.0, float(pair_distances(checker, to_full(q)).min()) - a["bound_m"])
    d = named_distance(checker, to_full(q), a["geometry_a"], a["geometry_b"])
    return max(a["distance_lower"] - d, d - a["distance_upper"], 0.0)
