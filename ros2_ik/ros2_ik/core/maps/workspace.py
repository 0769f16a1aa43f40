"""Forward-sampled workspace of a group, binned into a capability map's cells.

A capability map asks, for every voxel centre and every orientation of a set, whether
the tip can be placed there.  Most cells of a bounding sphere are out of reach, and an
IK solve spends its whole budget proving nothing.  Sampling the forward kinematics first
(configurations uniform in the limits, cheap compiled) tells which cells some
configuration comes near: a cell (voxel ``v``, orientation ``k``) is *hit* by a sample
whose tip lies in the voxel (within half a pitch along each axis) and whose rotation is
nearer to orientation ``k`` than to any other and within ``max_angle_rad`` of it.  Each
hit cell keeps its best sample (nearest in ``|dp|^2 / pitch^2 + (angle / max_angle)^2``)
as the seed of its solve.  The map (:mod:`capability`) solves hit cells with the full
budget, tries cells near a hit voxel briefly, and leaves the rest unsolved: a verdict
its benchmark checks against a generous re-solve of random cells.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ros2_ik.core.solvers import seed_library

#: Samples binned per round (memory ~ 200 B each).
CHUNK = 200_000


class Grid(NamedTuple):
    """The map's voxels as a lookup: ``index[i, j, k]`` is a voxel number or -1.

    Voxel centres are ``center + (ijk - half) * pitch`` [m] in the group's base frame.
    """

    center: np.ndarray
    pitch: float
    half: int
    index: np.ndarray

    @classmethod
    def of(cls, voxels: np.ndarray, center, pitch: float) -> "Grid":
        """Lookup of ``voxels`` (V, 3) [m], centres of a grid of ``pitch`` around ``center``."""
        center = np.asarray(center, dtype=float)
        ijk = np.rint((voxels - center) / pitch).astype(np.int64)
        half = int(np.abs(ijk).max()) if len(ijk) else 0
        index = np.full((2 * half + 1,) * 3, -1, dtype=np.int64)
        index[tuple((ijk + half).T)] = np.arange(len(voxels))
        return cls(center, float(pitch), half, index)

    def voxel_of(self, p: np.ndarray) -> np.ndarray:
        """Voxel number (S,) of points ``p`` (S, 3) [m], -1 outside the grid."""
        ijk = np.rint((p - self.center) / self.pitch).astype(np.int64) + self.half
        inside = np.all((ijk >= 0) & (ijk <= 2 * self.half), axis=1)
        out = np.full(len(p), -1, dtype=np.int64)
        i = ijk[inside]
        out[inside] = self.index[i[:, 0], i[:, 1], i[:, 2]]
        return out


class Hits(NamedTuple):
    """Per cell (V, M): ``hit`` bool, ``score`` of its best sample, ``seed`` (V, M, n)."""

    hit: np.ndarray
    score: np.ndarray
    seed: np.ndarray


def tip_poses(group, qs: np.ndarray) -> np.ndarray:
    """``T_world_tip`` (S, 4, 4) at group vectors ``qs`` (S, n): compiled when possible."""
    return seed_library.frame_poses(group, group.reduced_frame_id(group.tip), qs)


def sample_hits(group, voxels: np.ndarray, rotations: np.ndarray, center, pitch: float,
                samples: int, seed: int, max_angle_rad: float) -> Hits:
    """Bin ``samples`` random configurations' tip poses into the cells (voxels x rotations).

    ``voxels`` (V, 3) [m] and ``rotations`` (M, 3, 3) are ``R_base_tip`` in the group's
    base frame; deterministic in ``seed``.
    """
    grid = Grid.of(voxels, center, pitch)
    V, M = len(voxels), len(rotations)
    score = np.full(V * M, np.inf)
    best = np.full((V * M, group.n), np.nan)
    T_base_world = group.locked_placement(group.robot.frame_id(group.base)).inverse()
    H_bw = T_base_world.homogeneous
    rot_rows = rotations.reshape(M, 9)
    rng = np.random.default_rng(seed)
    for start in range(0, samples, CHUNK):
        qs = group.random_configurations(rng, min(CHUNK, samples - start))
        T = np.einsum("ij,sjk->sik", H_bw, tip_poses(group, qs))
        v = grid.voxel_of(T[:, :3, 3])
        keep = v >= 0
        qs, T, v = qs[keep], T[keep], v[keep]
        traces = np.einsum("sj,mj->sm", T[:, :3, :3].reshape(-1, 9), rot_rows)
        k = traces.argmax(axis=1)
        angle = np.arccos(np.clip((traces[np.arange(len(k)), k] - 1.0) / 2.0, -1.0, 1.0))
        near = angle <= max_angle_rad
        dp = (T[:, :3, 3] - voxels[v]) / pitch
        s = (dp * dp).sum(axis=1) + (angle / max_angle_rad) ** 2
        cell, s, qs = (v * M + k)[near], s[near], qs[near]
        order = np.lexsort((s, cell))  # by cell, best first
        cell, s, qs = cell[order], s[order], qs[order]
        first = np.ones(len(cell), bool)
        first[1:] = cell[1:] != cell[:-1]
        cell, s, qs = cell[first], s[first], qs[first]
        better = s < score[cell]
        score[cell[better]] = s[better]
        best[cell[better]] = qs[better]
    return Hits(np.isfinite(score).reshape(V, M), score.reshape(V, M),
                best.reshape(V, M, group.n))


def near_voxels(grid_voxels: np.ndarray, hit_voxel: np.ndarray, center, pitch: float
                ) -> np.ndarray:
    """(V,) bool: voxels with a hit or a face/edge/corner neighbour with one."""
    grid = Grid.of(grid_voxels, center, pitch)
    out = hit_voxel.copy()
    dense = np.zeros(grid.index.shape, bool)
    ijk = np.rint((grid_voxels - grid.center) / pitch).astype(np.int64) + grid.half
    dense[tuple(ijk[hit_voxel].T)] = True
    size = dense.shape[0]
    grown = dense.copy()
    for axis in range(3):  # 3x3x3 dilation, one axis at a time
        shifted = grown.copy()
        lo = [slice(None)] * 3
        hi = [slice(None)] * 3
        lo[axis], hi[axis] = slice(0, size - 1), slice(1, size)
        shifted[tuple(lo)] |= grown[tuple(hi)]
        shifted[tuple(hi)] |= grown[tuple(lo)]
        grown = shifted
    out |= grown[tuple(ijk.T)]
    return out
