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

from dataclasses import dataclass
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
    """Constant tables of one compiled scene (G geometries, P pairs)."""

    joints: Tuple[int, ...]    # (J,) joints whose placements are read; joints[0] == 0
    slot: np.ndarray           # (G,) index into ``joints`` of each geometry's joint
    center_joint: np.ndarray   # (G, 4) homogeneous ball centre in the joint frame [m]
    radius: np.ndarray         # (G,) ball radius [m]
    ball_pairs: Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]  # idx, a, b, r_a + r_b
    box_pairs: Tuple[np.ndarray, ...]  # idx, a, R_world_b^T (W,3,3), offset (W,3), half, r_a


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


def _box_pair_tables(geoms, box_rows, centers, halves, radius):
    idx = [k for k, _, _ in box_rows]
    a = [i for _, i, _ in box_rows]
    rotations_t, offsets = [], []
    for _, _, j in box_rows:  # fixed b: T_world_geom is its placement in joint 0
        R, p = geoms[j].placement.rotation, geoms[j].placement.translation
        rotations_t.append(R.T)
        offsets.append(-R.T @ p - centers[j])
    return (_frozen(idx, np.int64), _frozen(a, np.int64),
            _frozen(rotations_t, float, (-1, 3, 3)), _frozen(offsets, float, (-1, 3)),
            _frozen([halves[j] for _, _, j in box_rows], float, (-1, 3)),
            _frozen([radius[i] for _, i, _ in box_rows], float))


def build_bound_tables(
    geom_model: pin.GeometryModel, pairs: Sequence[Tuple[int, int]]
) -> BoundTables:
    """Tables for :func:`lower_bounds` (``pairs`` as geometry index tuples, in order)."""
    geoms = geom_model.geometryObjects
    centers, halves = zip(*(_local_aabb(g.geometry) for g in geoms)) if geoms else ((), ())
    radius = [float(np.linalg.norm(h)) for h in halves]
    joints = tuple(sorted({0} | {g.parentJoint for g in geoms}))
    center_joint = [g.placement.act(c) for g, c in zip(geoms, centers)]
    ball_rows, box_rows = [], []
    for k, (i, j) in enumerate(pairs):
        if geoms[j].parentJoint == 0 and geoms[i].parentJoint != 0:
            box_rows.append((k, i, j))
        elif geoms[i].parentJoint == 0 and geoms[j].parentJoint != 0:
            box_rows.append((k, j, i))
        else:
            ball_rows.append((k, i, j, radius[i] + radius[j]))
    return BoundTables(
        joints=joints,
        slot=_frozen([joints.index(g.parentJoint) for g in geoms], np.int64),
        center_joint=_frozen([list(c) + [1.0] for c in center_joint], float, (-1, 4)),
        radius=_frozen(radius, float),
        ball_pairs=tuple(_frozen([row[n] for row in ball_rows], dt)
                         for n, dt in enumerate((np.int64, np.int64, np.int64, float))),
        box_pairs=_box_pair_tables(geoms, box_rows, centers, halves, radius),
    )


def lower_bounds(tables: BoundTables, data: pin.Data, num_pairs: int) -> np.ndarray:
    """Lower bounds (P,) [m] on the unpadded distance of every pair, valid where positive."""
    oMi = data.oMi
    T_world_joint = np.array([oMi[j].homogeneous[:3] for j in tables.joints])  # (J, 3, 4)
    centers = np.einsum("gij,gj->gi", T_world_joint[tables.slot], tables.center_joint)
    bounds = np.empty(num_pairs)
    idx, a, b, radii = tables.ball_pairs
    gap = centers[a] - centers[b]
    bounds[idx] = np.sqrt(np.einsum("pi,pi->p", gap, gap)) - radii
    idx, a, rotation_t, offset, half, radius_a = tables.box_pairs
    local = np.einsum("pij,pj->pi", rotation_t, centers[a]) + offset
    excess = np.maximum(np.abs(local) - half, 0.0)
    bounds[idx] = np.sqrt(np.einsum("pi,pi->p", excess, excess)) - radius_a
    return bounds
