"""Datasets of (q, T) pairs for learning, streamed to an .npz with memory flat in N.

Two modes:

- ``fk``: ``q`` uniform in the limits (continuous joints in [-pi, pi]), ``T`` its tip
  pose ``T_base_tip`` (4, 4) in the group's base frame (compiled FK when available);
- ``ik``: targets ``T`` are the tip poses of random configurations (reachable by
  construction), ``q`` the IK solution from mid-limits (:func:`batch.solve_batch`), with
  its ``status`` (index into :data:`batch.STATUS_CODES`; NaN rows where not solved).

Rows are written ``chunk`` at a time into ``.npy`` files opened as memory maps, then
stored (uncompressed) into the ``.npz`` zip and the temporary files removed; the
result appears under its name only when complete (``os.replace``).  Deterministic in
``seed``.
"""
from __future__ import annotations

import os
import shutil
import tempfile
import zipfile
from pathlib import Path
from typing import Dict

import numpy as np
from numpy.lib.format import open_memmap

from ros2_ik.core import errors
from ros2_ik.core.maps import workspace
from ros2_ik.core.maps.batch import GroupSpec, solve_batch, worker_pool

MODES = ("fk", "ik")


def write_dataset(spec: GroupSpec, out: Path, count: int, mode: str = "fk", seed: int = 0,
                  chunk: int = 10_000, timeout_s: float = 0.005, workers: int = 1) -> Path:
    """Write ``count`` rows of ``mode`` to ``out`` (.npz: q, T[, status], joint_names).

    Raises :class:`errors.InvalidArgument` naming the field for a bad count, mode, chunk
    or an unwritable ``out``; nothing is left under ``out`` unless complete.
    """
    out = Path(out)
    _check(out, count, mode, chunk)
    _, group = spec.build()
    tmp = Path(tempfile.mkdtemp(prefix=".dataset-", dir=out.parent if str(out.parent) else "."))
    pool = worker_pool(spec, workers) if mode == "ik" and workers > 1 else None
    try:
        files = _open(tmp, count, group.n, mode)
        rng = np.random.default_rng(seed)
        for a in range(0, count, chunk):
            b = min(a + chunk, count)
            _fill(spec, group, mode, rng, files, a, b, seed, timeout_s, pool)
        names = np.array(group.joint_names)
        np.save(tmp / "joint_names.npy", names)
        for arr in files.values():
            arr.flush()
        del files
        _zip(tmp, out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        if pool is not None:
            pool.shutdown()
    return out


def _check(out: Path, count: int, mode: str, chunk: int) -> None:
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise errors.InvalidArgument(f"count: must be an integer >= 1, got {count!r}")
    if mode not in MODES:
        raise errors.InvalidArgument(f"mode: must be one of {list(MODES)}, got {mode!r}")
    if isinstance(chunk, bool) or not isinstance(chunk, int) or chunk < 1:
        raise errors.InvalidArgument(f"chunk: must be an integer >= 1, got {chunk!r}")
    parent = out.parent if str(out.parent) else Path(".")
    if not parent.is_dir() or not os.access(parent, os.W_OK):
        raise errors.InvalidArgument(f"out: directory '{parent}' does not exist or is "
                                     "not writable")
    if out.suffix != ".npz":
        raise errors.InvalidArgument(f"out: expected a .npz path, got '{out}'")


def _open(tmp: Path, count: int, n: int, mode: str) -> Dict[str, np.ndarray]:
    files = {"q": open_memmap(tmp / "q.npy", "w+", np.float64, (count, n)),
             "T": open_memmap(tmp / "T.npy", "w+", np.float64, (count, 4, 4))}
    if mode == "ik":
        files["status"] = open_memmap(tmp / "status.npy", "w+", np.int8, (count,))
    return files


def _fill(spec, group, mode, rng, files, a: int, b: int, seed: int, timeout_s: float,
          pool) -> None:
    qs = group.random_configurations(rng, b - a)
    T_base_world = group.locked_placement(group.robot.frame_id(group.base)).inverse()
    T = np.einsum("ij,sjk->sik", T_base_world.homogeneous, workspace.tip_poses(group, qs))
    files["T"][a:b] = T
    if mode == "fk":
        files["q"][a:b] = qs
        return
    res = solve_batch(spec, T, timeout_s=timeout_s, batch_seed=seed, first_index=a,
                      executor=pool)
    files["q"][a:b] = np.where(res.success[:, None], res.q, np.nan)
    files["status"][a:b] = res.status


def _zip(tmp: Path, out: Path) -> None:
    """Store the .npy files of ``tmp`` in ``out`` (a zip np.load reads), atomically."""
    partial = out.with_name(out.name + ".tmp")
    with zipfile.ZipFile(partial, "w", zipfile.ZIP_STORED, allowZip64=True) as z:
        for path in sorted(tmp.glob("*.npy")):
            z.write(path, path.name)
    os.replace(partial, out)


def load(path: Path) -> Dict[str, np.ndarray]:
    """Return a dataset's arrays (memory-mapped reads are up to the caller's np.load)."""
    try:
        with np.load(Path(path), allow_pickle=False) as f:
            return {k: f[k] for k in f.files}
    except Exception as exc:
        raise errors.InvalidArgument(f"dataset {path}: not readable ({exc})") from exc
