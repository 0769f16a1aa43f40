"""Cheap lower bounds on pair distances, vectorised in numpy, to skip far pairs.

Every geometry is enclosed in a ball (centre of its local AABB, half diagonal).  Two kinds
of pairs:

* side b fixed in the world (world scene shapes, robot links on the universe): side b is
  bounded by its oriented AABB, whose inverse placement is constant and precomputed, so
  ``d >= dist(c_a, AABB_b) - r_a`` (a large table is not a huge ball);
* both sides moving: ball against ball, ``d >= |c_a - c_b| - r_a - r_b``.

Per call this costs one read of each moving joint's placement and a dozen numpy operations.
A positive bound certifies separation; a penetration can be deeper than a non-positive
bound suggests (a small shape deep inside a large one), so callers must treat bounds <= 0
as "unknown, compute" (the checker maps them to ``-inf``).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Sequence, Tuple

import numpy as np
import pinocchio as pin


def _frozen(values, dtype, shape=None) -> np.ndarray:
    array = np.array(values, dtype=dtype)
    if shape is not None:
        array = array.reshape(shape)
    array.setflags(write=False)
    return array


@dataclass(frozen=True)
class BoundTables:
    """Constant tables of one compiled scene (G geometries, P pairs, W fixed boxes).

    Shaped for a few dense products per call (numpy's cost is per call, not per pair).
    """

    joints: Tuple[int, ...]      # moving joints whose placements are read (joint 0: identity)
    center_joint: np.ndarray     # (4, G) homogeneous ball centre in its joint frame [m]
    gather: np.ndarray           # (4, G) flat index of each centre in (T_world_joints @ ^)
    box_rows: np.ndarray         # (3W, 4) [R_world_box^T | -R^T p - c_box]: world -> box
    box_half: np.ndarray         # (3W, 1) half extents of each box [m]
    ball_diff: np.ndarray        # (G, B) +1 / -1: centre differences of the B ball pairs
    order: np.ndarray            # (P,) index of each pair in [W x G box bounds, B balls]
    radius: np.ndarray           # (P,) r_a (box pairs) or r_a + r_b (ball pairs) [m]
    geometry_radius: np.ndarray  # (G,) each geometry's ball radius [m]
    geometry_centre: np.ndarray  # (G, 3) its ball centre in the geometry's own frame [m]
    geometry_half: np.ndarray    # (G, 3) its local AABB's half extents [m]
    box_geometries: Tuple[int, ...]  # (W,) the geometry of each fixed box


def ensure_local_aabb(geometry) -> None:
    """Compute a geometry's local AABB once (coal leaves it unset, radius -1, until asked).

    Robot geometries are shared by every compiled scene and read by other threads, so
    they are never written again once set.
    """
    if geometry.aabb_radius < 0.0:
        geometry.computeLocalAABB()


def _local_aabb(geometry) -> Tuple[np.ndarray, np.ndarray]:
    ensure_local_aabb(geometry)
    box = geometry.aabb_local
    low, high = np.array(box.min_), np.array(box.max_)
    return (high + low) / 2.0, (high - low) / 2.0


def _box_tables(geoms, fixed: Sequence[int], centers, halves):
    rows, half = [], []
    for j in fixed:  # fixed b: T_world_geom is its placement in joint 0
        R, p = geoms[j].placement.rotation, geoms[j].placement.translation
        rows.append(np.hstack((R.T, (-R.T @ p - centers[j])[:, None])))
        half.append(halves[j])
    return (_frozen(rows, float, (-1, 4)), _frozen(half, float, (-1, 1)))


def _placed(geoms, fixed: Sequence[int], centers, halves) -> dict:
    """Return the tables' fields that hold the geometries' placements in their joints."""
    box_rows, box_half = _box_tables(geoms, fixed, centers, halves)
    return dict(center_joint=_frozen([list(g.placement.act(c)) + [1.0]
                                      for g, c in zip(geoms, centers)], float, (-1, 4)).T,
                box_rows=box_rows, box_half=box_half)


def placed_bound_tables(tables: BoundTables, geom_model: pin.GeometryModel) -> BoundTables:
    """``tables`` for ``geom_model``: the geometries and pairs they were built on, moved.

    Only the placement fields are computed again (:func:`_placed`); the rest is kept.
    """
    return replace(tables, **_placed(geom_model.geometryObjects, tables.box_geometries,
                                     tables.geometry_centre, tables.geometry_half))


def build_bound_tables(
    geom_model: pin.GeometryModel, pairs: Sequence[Tuple[int, int]]
) -> BoundTables:
    """Tables for :func:`lower_bounds` (``pairs`` as geometry index tuples, in order).

    Per pair in numpy (a scene version of a robot with ~2,000 candidate pairs is compiled
    anew at every change of the scene); per geometry in Python.
    """
    geoms = geom_model.geometryObjects
    G = len(geoms)
    centers, halves = zip(*(_local_aabb(g.geometry) for g in geoms)) if geoms else ((), ())
    radius = np.array([float(np.linalg.norm(h)) for h in halves])
    parent = np.array([g.parentJoint for g in geoms], dtype=np.int64)
    joints = tuple(sorted(set(parent.tolist()) - {0}))
    slot = [joints.index(j) + 1 if j else 0 for j in parent.tolist()]
    ij = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    i, j = ij[:, 0], ij[:, 1]
    # A pair with one side fixed in the world: ball a against box b (b the fixed side).
    fixed_i, fixed_j = parent[i] == 0, parent[j] == 0
    box = fixed_i != fixed_j
    a, b = np.where(fixed_j, i, j)[box], np.where(fixed_j, j, i)[box]
    fixed = np.unique(b)
    W, ball = len(fixed), np.flatnonzero(~box)
    order, pair_radius = np.zeros(len(ij), np.int64), np.zeros(len(ij))
    order[box], pair_radius[box] = np.searchsorted(fixed, b) * G + a, radius[a]
    n = np.arange(len(ball))
    order[ball], pair_radius[ball] = W * G + n, radius[i[ball]] + radius[j[ball]]
    ball_diff = np.zeros((G, len(ball)))
    np.add.at(ball_diff, (i[ball], n), 1.0)
    np.add.at(ball_diff, (j[ball], n), -1.0)
    return BoundTables(
        joints=joints,
        **_placed(geoms, fixed.tolist(), centers, halves),
        gather=_frozen([[(4 * slot[g] + r) * G + g for g in range(G)] for r in range(4)],
                       np.int64, (4, G)),
        ball_diff=_frozen(ball_diff, float),
        order=_frozen(order, np.int64), radius=_frozen(pair_radius, float),
        geometry_radius=_frozen(radius, float),
        geometry_centre=_frozen(centers, float, (-1, 3)),
        geometry_half=_frozen(halves, float, (-1, 3)),
        box_geometries=tuple(fixed.tolist()),
    )


_EYE4 = np.eye(4)


def lower_bounds(tables: BoundTables, data: pin.Data, num_pairs: int) -> np.ndarray:
    """Lower bounds (P,) [m] on the unpadded distance of every pair, valid where positive."""
    return np.sqrt(squared_gaps(tables, data)) - tables.radius


def reach_squared(tables: BoundTables, padding_m: np.ndarray, threshold_m: float) -> np.ndarray:
    """Squared gaps (P,) [m^2] up to which a pair may be closer than ``threshold_m``.

    A pair is wanted when its padded bound ``gap - r - pad`` is below ``threshold_m`` or its
    bound ``gap - r`` is not positive (unknown): ``gap <= r + max(pad + threshold_m, 0)``
    covers both (plus the equality cases, which only cost a computed pair).
    """
    reach = tables.radius + np.maximum(padding_m + threshold_m, 0.0)
    return reach * reach


def squared_gaps(tables: BoundTables, data: pin.Data) -> np.ndarray:
    """Squared gap (P,) [m^2] per pair: ball centre to box, or centre to centre (``data.oMi``)."""
    oMi = data.oMi
    T_world_joints = np.concatenate([_EYE4] + [oMi[j].homogeneous for j in tables.joints])
    c_world = (T_world_joints @ tables.center_joint).take(tables.gather)  # (4, G), row 3 = 1
    excess = tables.box_rows @ c_world  # (3W, G): each centre in each box's frame
    np.abs(excess, out=excess)
    excess -= tables.box_half
    np.maximum(excess, 0.0, out=excess)
    excess *= excess
    gap = c_world @ tables.ball_diff  # (4, B), row 3 = 0
    gap *= gap
    boxes, geoms = excess.shape
    squared = np.concatenate((excess.reshape(boxes // 3, 3, geoms).sum(axis=1).ravel(),
                              gap.sum(axis=0)))
    return squared.take(tables.order)
