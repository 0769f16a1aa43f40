"""Capability (reachability) maps: a voxel grid x a set of orientations, solved in batch.

Every voxel centre ``p_base_voxel`` [m] inside a sphere of ``radius_m`` around
``center_m`` (base frame) is tried with every orientation of a Fibonacci sphere of
approach directions (the tip's z axis) x roll steps about it.  The reachability
index of a voxel is the fraction of its orientations solved (SUCCESS, verified in
[m] and [rad] inside :func:`solve.solve`).

Work is done in chunks of voxels; after each chunk the partial map is rewritten
atomically (temporary file + ``os.replace``) next to the output, so an interrupted
run resumes where it stopped and recomputes nothing already written.
"""
from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable, Dict, Optional

import numpy as np

from ros2_ik.core import errors
from ros2_ik.core.batch import GroupSpec, solve_batch, worker_pool


@dataclass(frozen=True)
class MapSettings:
    """What a map is made of; a resume file must have been made with the same."""

    resolution_m: float
    radius_m: float
    center_m: tuple
    directions: int
    rolls: int
    timeout_s: float
    batch_seed: int
    chunk_voxels: int


def fibonacci_directions(count: int) -> np.ndarray:
    """(count, 3) unit vectors spread evenly on the sphere (Fibonacci lattice)."""
    k = np.arange(count) + 0.5
    z = 1.0 - 2.0 * k / count
    phi = np.pi * (1.0 + 5.0 ** 0.5) * k
    r = np.sqrt(1.0 - z * z)
    return np.column_stack([r * np.cos(phi), r * np.sin(phi), z])


def orientations(directions: int, rolls: int) -> np.ndarray:
    """(directions * rolls, 3, 3) rotations R_base_tip whose z axis is each direction."""
    out = []
    for z in fibonacci_directions(directions):
        helper = np.array([1.0, 0.0, 0.0]) if abs(z[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
        x = np.cross(helper, z)
        x /= np.linalg.norm(x)
        y = np.cross(z, x)
        for a in np.arange(rolls) * 2.0 * np.pi / rolls:
            xr = np.cos(a) * x + np.sin(a) * y
            out.append(np.column_stack([xr, np.cross(z, xr), z]))
    return np.array(out)


def voxel_centers(center_m, radius_m: float, resolution_m: float) -> np.ndarray:
    """(V, 3) voxel centres [m] of a grid of pitch ``resolution_m`` inside the sphere."""
    if not (np.isfinite(resolution_m) and resolution_m > 0):
        raise errors.InvalidArgument(f"resolution_m: must be > 0, got {resolution_m}")
    if not (np.isfinite(radius_m) and radius_m > 0):
        raise errors.InvalidArgument(f"radius_m: must be > 0, got {radius_m}")
    half = int(np.floor(radius_m / resolution_m))
    axis = np.arange(-half, half + 1) * resolution_m
    g = np.stack(np.meshgrid(axis, axis, axis, indexing="ij"), -1).reshape(-1, 3)
    g = g[np.linalg.norm(g, axis=1) <= radius_m]
    if len(g) == 0:
        raise errors.InvalidArgument("resolution_m/radius_m: the grid is empty")
    return g + np.asarray(center_m, dtype=float)


def estimate_reach_m(group, samples: int = 2000, seed: int = 0) -> float:
    """Largest tip distance [m] from the base over random configurations, +5 %."""
    rng = np.random.default_rng(seed)
    return 1.05 * max(float(np.linalg.norm(group.fk(q, group.tip).translation))
                      for q in group.random_configurations(rng, samples))


def _targets(voxels: np.ndarray, R: np.ndarray) -> np.ndarray:
    T = np.zeros((len(voxels), len(R), 4, 4))
    T[:, :, :3, :3] = R[None]
    T[:, :, :3, 3] = voxels[:, None, :]
    T[:, :, 3, 3] = 1.0
    return T.reshape(-1, 4, 4)


def _partial_path(out: Path) -> Path:
    return out.with_name(out.name + ".partial.npz")


def _save_atomic(path: Path, arrays: Dict[str, np.ndarray]) -> None:
    tmp = path.with_name(path.name + ".tmp.npz")
    np.savez(tmp, **arrays)
    os.replace(tmp, path)


def _load_resume(path: Path, settings: MapSettings, shape) -> Dict[str, np.ndarray]:
    """Load and check a partial file; a corrupt or mismatched one is an error."""
    try:
        with np.load(path, allow_pickle=False) as f:
            data = {k: f[k] for k in ("settings", "done", "reach_index", "q", "solved")}
    except Exception as exc:  # zip, pickle or key errors: all mean corrupt
        raise errors.InvalidArgument(f"resume file {path}: corrupt ({exc}); delete it") from exc
    if json.loads(str(data["settings"])) != json.loads(json.dumps(asdict(settings))):
        raise errors.InvalidArgument(
            f"resume file {path}: made with other settings {data['settings']}; delete it")
    if data["q"].shape != shape or data["done"].shape != (shape[0],):
        raise errors.InvalidArgument(f"resume file {path}: corrupt (array shapes)")
    return data


def _writable(out: Path) -> None:
    parent = out.parent if str(out.parent) else Path(".")
    if not parent.is_dir() or not os.access(parent, os.W_OK):
        raise errors.InvalidArgument(f"out: directory '{parent}' does not exist or is "
                                     "not writable")


def build_map(spec: GroupSpec, out: Path, settings: MapSettings, workers: int = 1,
              progress: Optional[Callable[[int, int], None]] = None) -> Dict[str, np.ndarray]:
    """Compute (or resume) a map and write ``out`` (.npz); returns its arrays.

    Arrays: ``voxels`` (V, 3) [m] in the base frame, ``rotations`` (M, 3, 3),
    ``reach_index`` (V,) in [0, 1], ``solved`` (V, M) bool, ``q`` (V, M, n) float32
    (NaN where unsolved), ``settings`` (JSON text).  ``progress(done, total)`` is
    called with voxel counts after each chunk.
    """
    out = Path(out)
    _writable(out)
    _, group = spec.build()
    voxels = voxel_centers(settings.center_m, settings.radius_m, settings.resolution_m)
    R = orientations(settings.directions, settings.rolls)
    shape = (len(voxels), len(R), group.n)
    partial = _partial_path(out)
    data = _load_resume(partial, settings, shape) if partial.exists() else {
        "settings": np.array(json.dumps(asdict(settings))),
        "done": np.zeros(len(voxels), bool), "reach_index": np.zeros(len(voxels)),
        "q": np.full(shape, np.nan, np.float32), "solved": np.zeros(shape[:2], bool)}
    pool = worker_pool(spec, workers) if workers > 1 else None
    try:
        _fill(spec, voxels, R, settings, data, partial, pool, progress)
    finally:
        if pool is not None:
            pool.shutdown()
    arrays = {"voxels": voxels, "rotations": R, "reach_index": data["reach_index"],
              "solved": data["solved"], "q": data["q"], "settings": data["settings"],
              "joint_names": np.array(group.joint_names)}
    _save_atomic(out, arrays)
    partial.unlink()
    return arrays


def _fill(spec, voxels, R, settings, data, partial, pool, progress) -> None:
    step = settings.chunk_voxels
    for a in range(0, len(voxels), step):
        b = min(a + step, len(voxels))
        if data["done"][a:b].all():
            continue
        res = solve_batch(spec, _targets(voxels[a:b], R), timeout_s=settings.timeout_s,
                          batch_seed=settings.batch_seed, first_index=a * len(R),
                          executor=pool)
        ok = res.success.reshape(b - a, len(R))
        q = np.where(res.success[:, None], res.q, np.nan).astype(np.float32)
        data["q"][a:b] = q.reshape(b - a, len(R), -1)
        data["solved"][a:b] = ok
        data["reach_index"][a:b] = ok.mean(axis=1)
        data["done"][a:b] = True
        _save_atomic(partial, data)
        if progress is not None:
            progress(b, len(voxels))
