"""Capability (reachability) maps: a voxel grid x a set of orientations, solved in batch.

Every voxel centre ``p_base_voxel`` [m] inside a sphere of ``radius_m`` around
``center_m`` (base frame) is tried with every orientation of a Fibonacci sphere of
approach directions (the tip's z axis) x roll steps about it.  The reachability
index of a voxel is the fraction of its orientations solved (SUCCESS, verified in
[m] and [rad] inside :func:`solve.solve`).

Rejecting fast: most cells of the sphere are out of reach, and a solve spends its whole
budget proving nothing.  So the workspace is sampled first (:mod:`workspace`:
``samples`` random configurations' tip poses): a cell some sample comes near (in its
voxel, within ``max_angle_rad`` of the orientation) is solved from that sample with
``marked_attempts`` attempts (``method`` 2); a cell of a voxel next to such a voxel gets
``near_attempts`` attempts from mid-limits (``method`` 1); the others are not solved
(``method`` 0, unreachable).  Both are capped by ``timeout_s``.  A few attempts solve
about as many cells as a whole time budget, and far unmarked cells stay unsolved with one
(docs/design.md); the benchmark checks the verdicts of a whole map the same way.

Work is done in chunks of voxels; each finished chunk is saved at once, atomically
(temporary file + ``os.replace``), as its own small file in a folder next to the output
(``<out>.partial/``: ``settings.json`` and one ``chunk_<first voxel>.npz`` per chunk), so
an interrupted run resumes where it stopped and recomputes no finished chunk.  (Rewriting
a whole map after every chunk cost more than the solves: docs/design.md.)
"""
from __future__ import annotations

import json
import os
import shutil
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable, Dict, Optional

import numpy as np

from ros2_ik.core import errors
from ros2_ik.core.maps import scene as map_scene, workspace
from ros2_ik.core.maps.batch import GroupSpec, solve_batch, worker_pool

#: The arrays a partial map saves per chunk (rows: the chunk's voxels).
CHUNK_ARRAYS = ("reach_index", "q", "solved", "method")


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
    #: Random configurations whose tip poses mark the cells worth solving.
    samples: int = 2_000_000
    #: A sample marks an orientation within this angle of its rotation [rad].
    max_angle_rad: float = 0.8
    #: Attempts given to a cell a sample marked (the first from that sample).
    marked_attempts: int = 8
    #: Attempts given to a cell no sample marked, in a voxel next to a marked one.
    near_attempts: int = 4
    #: Scene YAML file: cells must keep ``clearance_m`` [m] to it (:mod:`map_scene`).
    scene_file: str = ""
    clearance_m: float = 0.0


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
    return out.with_name(out.name + ".partial")


def _save_atomic(path: Path, arrays: Dict[str, np.ndarray]) -> None:
    tmp = path.with_name(path.name + ".tmp.npz")
    np.savez(tmp, **arrays)
    os.replace(tmp, path)


def _chunk_path(partial: Path, first: int) -> Path:
    return partial / f"chunk_{first:08d}.npz"


def _start_partial(partial: Path, settings: MapSettings) -> None:
    """Create the partial folder with its settings (kept to check a resume against)."""
    partial.mkdir()
    (partial / "settings.json").write_text(json.dumps(asdict(settings)))


def _save_chunk(partial: Path, data: Dict[str, np.ndarray], a: int, b: int) -> None:
    _save_atomic(_chunk_path(partial, a), {k: data[k][a:b] for k in CHUNK_ARRAYS})


def _load_resume(partial: Path, settings: MapSettings, data: Dict[str, np.ndarray],
                 step: int) -> int:
    """Fill ``data`` from a partial folder's chunks; returns the voxels already done.

    A corrupt or mismatched folder is an error naming what to delete.
    """
    try:
        saved = json.loads((partial / "settings.json").read_text())
    except (OSError, ValueError) as exc:
        raise errors.InvalidArgument(f"resume folder {partial}: corrupt ({exc}); "
                                     "delete it") from exc
    if saved != json.loads(json.dumps(asdict(settings))):
        raise errors.InvalidArgument(
            f"resume folder {partial}: made with other settings {saved}; delete it")
    n = len(data["done"])
    for path in sorted(partial.glob("chunk_*.npz")):
        a = int(path.stem.split("_")[1])
        b = min(a + step, n)
        try:
            with np.load(path, allow_pickle=False) as f:
                chunk = {k: f[k] for k in CHUNK_ARRAYS}
        except Exception as exc:  # zip, pickle or key errors: all mean corrupt
            raise errors.InvalidArgument(f"resume file {path}: corrupt ({exc}); "
                                         "delete it") from exc
        if a % step or a >= n or any(chunk[k].shape != data[k][a:b].shape
                                     for k in CHUNK_ARRAYS):
            raise errors.InvalidArgument(f"resume file {path}: corrupt (array shapes); "
                                         "delete it")
        for k in CHUNK_ARRAYS:
            data[k][a:b] = chunk[k]
        data["done"][a:b] = True
    return int(data["done"].sum())


def _writable(out: Path) -> None:
    parent = out.parent if str(out.parent) else Path(".")
    if not parent.is_dir() or not os.access(parent, os.W_OK):
        raise errors.InvalidArgument(f"out: directory '{parent}' does not exist or is "
                                     "not writable")


def build_map(spec: GroupSpec, out: Path, settings: MapSettings, workers: int = 1,
              progress: Optional[Callable[[int, int], None]] = None,
              resumed: Optional[Callable[[Path, int, int], None]] = None
              ) -> Dict[str, np.ndarray]:
    """Compute (or resume) a map and write ``out`` (.npz); returns its arrays.

    Arrays: ``voxels`` (V, 3) [m] in the base frame, ``rotations`` (M, 3, 3),
    ``reach_index`` (V,) in [0, 1], ``solved`` (V, M) bool, ``q`` (V, M, n) float32
    (NaN where unsolved), ``settings`` (JSON text).  ``progress(done, total)`` is
    called with voxel counts after each chunk; ``resumed(folder, done, total)`` once
    when a partial map is picked up.
    """
    out = Path(out)
    _writable(out)
    _, group = spec.build()
    if settings.scene_file:
        map_scene.checker_for(group, spec, settings.scene_file)  # a bad file fails here
    voxels = voxel_centers(settings.center_m, settings.radius_m, settings.resolution_m)
    R = orientations(settings.directions, settings.rolls)
    shape = (len(voxels), len(R), group.n)
    partial = _partial_path(out)
    data = {"settings": np.array(json.dumps(asdict(settings))),
            "done": np.zeros(len(voxels), bool), "reach_index": np.zeros(len(voxels)),
            "q": np.full(shape, np.nan, np.float32), "solved": np.zeros(shape[:2], bool),
            "method": np.zeros(shape[:2], np.int8)}
    if partial.exists():
        done = _load_resume(partial, settings, data, settings.chunk_voxels)
        if resumed is not None:
            resumed(partial, done, len(voxels))
    else:
        _start_partial(partial, settings)
    hits = workspace.sample_hits(group, voxels, R, settings.center_m, settings.resolution_m,
                                 settings.samples, settings.batch_seed, settings.max_angle_rad)
    near = workspace.near_voxels(voxels, hits.hit.any(axis=1), settings.center_m,
                                 settings.resolution_m)
    pool = worker_pool(spec, workers) if workers > 1 else None
    try:
        _fill(spec, voxels, R, settings, data, partial, pool, progress, (hits, near))
    finally:
        if pool is not None:
            pool.shutdown()
    arrays = {"voxels": voxels, "rotations": R, "reach_index": data["reach_index"],
              "solved": data["solved"], "q": data["q"], "method": data["method"],
              "settings": data["settings"], "base_frame": np.array(group.base),
              "joint_names": np.array(group.joint_names)}
    _save_atomic(out, arrays)
    shutil.rmtree(partial)
    return arrays


def _fill(spec, voxels, R, settings, data, partial, pool, progress, marks) -> None:
    hits, near = marks
    step, M = settings.chunk_voxels, len(R)
    for a in range(0, len(voxels), step):
        b = min(a + step, len(voxels))
        if data["done"][a:b].all():
            continue
        T = _targets(voxels[a:b], R)
        full = hits.hit[a:b].ravel()
        brief = ~full & np.repeat(near[a:b], M)
        q = np.full((len(T), hits.seed.shape[2]), np.nan)
        ok = np.zeros(len(T), bool)
        method = np.where(full, 2, np.where(brief, 1, 0)).astype(np.int8)
        for cells, kind in ((np.flatnonzero(full), "full"), (np.flatnonzero(brief), "brief")):
            if len(cells) == 0:
                continue
            res = _solve_cells(spec, settings, T[cells], kind, hits.seed[a:b].reshape(
                -1, hits.seed.shape[2])[cells], a * M + (0 if kind == "full" else len(T)),
                pool)
            ok[cells] = res.success
            q[cells] = np.where(res.success[:, None], res.q, np.nan)
        data["q"][a:b] = q.astype(np.float32).reshape(b - a, M, -1)
        data["solved"][a:b] = ok.reshape(b - a, M)
        data["method"][a:b] = method.reshape(b - a, M)
        data["reach_index"][a:b] = ok.reshape(b - a, M).mean(axis=1)
        data["done"][a:b] = True
        _save_chunk(partial, data, a, b)
        if progress is not None:
            progress(b, len(voxels))


def _solve_cells(spec, settings, T, kind, seeds, first_index, pool):
    """Solves from the marking samples, or ``near_attempts`` brief ones from mid-limits.

    With a scene file each cell is a pose target plus the clearance (:mod:`map_scene`).
    """
    scene = {}
    if settings.scene_file:
        scene = {"template": map_scene.template(spec, settings.scene_file,
                                                settings.clearance_m)}
        T = T.reshape(len(T), 16)
    if kind == "full":
        return solve_batch(spec, T, seed=seeds, timeout_s=settings.timeout_s,
                           batch_seed=settings.batch_seed, first_index=first_index,
                           max_attempts=settings.marked_attempts, executor=pool, **scene)
    return solve_batch(spec, T, timeout_s=settings.timeout_s, batch_seed=settings.batch_seed,
                       first_index=first_index, max_attempts=settings.near_attempts,
                       executor=pool, **scene)


def load_map(path: Path) -> Dict[str, np.ndarray]:
    """Return a map written by :func:`build_map` (InvalidArgument naming the problem).

    Checks what a viewer needs: ``voxels`` (V, 3), ``reach_index`` (V,) in [0, 1],
    ``base_frame`` and the pitch in ``settings``.
    """
    try:
        with np.load(Path(path), allow_pickle=False) as f:
            arrays = {k: f[k] for k in ("voxels", "reach_index", "base_frame", "settings")}
        pitch = float(json.loads(str(arrays["settings"]))["resolution_m"])
    except FileNotFoundError:
        raise errors.InvalidArgument(f"capability map {path}: no such file") from None
    except Exception as exc:  # zip, key, JSON errors: not a map of ours
        raise errors.InvalidArgument(
            f"capability map {path}: not a map written by reach ({exc})") from exc
    v, idx = arrays["voxels"], arrays["reach_index"]
    if v.ndim != 2 or v.shape[1] != 3 or idx.shape != (len(v),) or not (
            np.isfinite(v).all() and ((idx >= 0) & (idx <= 1)).all() and pitch > 0):
        raise errors.InvalidArgument(f"capability map {path}: corrupt arrays")
    arrays["pitch_m"] = np.array(pitch)
    return arrays
