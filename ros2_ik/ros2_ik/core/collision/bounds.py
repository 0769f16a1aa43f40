"""Cheap lower bounds on pair distances, vectorised in numpy, to skip far pairs.

For a pair (a, b): ``A`` lies in a ball (centre ``c_a``, radius ``r_a``) and ``B`` in its
oriented local AABB, so ``d(A, B) >= dist(c_a, AABB_b) - r_a``.  Robot geometries are side a
and scene shapes side b, so a large table is bounded by its box, not by a huge sphere.
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin

from .compiled import CompiledScene


def geometry_placements(compiled: CompiledScene, data: pin.Data) -> np.ndarray:
    """World placements ``T_world_geom`` (G, 4, 4) from the joint placements in ``data``."""
    tables = compiled.bounds
    oMi = data.oMi
    T_world_joint = np.array([oMi[j].homogeneous for j in tables.joint_list])
    return np.matmul(T_world_joint[tables.geom_slot], tables.T_joint_geom)


def pair_lower_bounds(compiled: CompiledScene, data: pin.Data) -> np.ndarray:
    """Lower bounds (P,) [m] on the signed padded distance of every pair."""
    tables = compiled.bounds
    if compiled.num_pairs == 0:
        return np.zeros(0)
    T = geometry_placements(compiled, data)
    centers = np.matmul(T, tables.center_h)[:, :3, 0]              # (G, 3) world
    a, b = tables.pair_a, tables.pair_b
    T_b = T[b]
    offset = centers[a] - T_b[:, :3, 3]                             # (P, 3) world
    local = np.einsum("pi,pij->pj", offset, T_b[:, :3, :3]) - tables.center[b]  # R_b^T off
    excess = np.maximum(np.abs(local) - tables.half_extent[b], 0.0)
    return np.sqrt((excess * excess).sum(axis=1)) - tables.radius[a] - compiled.padding_m
