"""Restart configurations whose tip is already near the target: a library of FK samples.

When the seed's attempt fails, uniform random restarts often end pinned at a limit on
arms with narrow limits (panda, z1), and the tail of the solve time is those restarts.
A start whose frame placement is already near the target usually lies in the basin of a
solution inside the limits.  So each group keeps
``SAMPLES`` configurations drawn uniformly in its limits (fixed numpy seed: deterministic)
with the world placement of the target frame, built once per (group, frame); a solve
ranks them by::

    d = |p - p_target|^2 + w * (3 - trace(R_target^T R))    [m^2]

(``3 - trace = 2 (1 - cos theta)``, ~theta^2 for small angles) and its restarts 1..k start
from the k nearest (:func:`nearest_starts`), then uniform random.  The orientation weight
``w`` scales with the arm: ``ORIENTATION_WEIGHT * s^2`` with ``s^2`` the spread of the
frame's sample positions (mean squared distance to their centroid), so a 0.3 m arm and a
2 m arm weigh one radian alike relative to their size (the panda's ``w`` is ~0.04 m^2).

The size of the library sets how often the nearest samples lie in the basin of the one
or two solutions a 6-joint arm with narrow limits has: more samples and more library
starts shorten the tail of attempts to a first verified solution (docs/design.md).
Ranking is one matrix-vector product on precomputed columns.
"""
from __future__ import annotations

import math
import threading
from typing import Dict, List, Optional, Tuple

import numpy as np
import pinocchio as pin

from ros2_ik.core.runtime.compiled import jit
from ros2_ik.core.runtime.per_object import PerObject
from ros2_ik.core.solvers import chain_kernel

#: Library size per (group, frame): built once (compiled FK), ranked by one product per
#: solve (the costs: docs/design.md).
SAMPLES = 8000
#: Restarts per solve from the library, by default (``solve``'s, batch IK's, the node's).
LIBRARY_STARTS = 32
#: Samples the constraint ranking reads (a prefix: its per-constraint cost grows with it).
CONSTRAINT_SAMPLES = 2000
#: The first ``QUICK_STARTS`` restarts come from the nearest of the first ``QUICK_SAMPLES``
#: samples (a quarter of the ranking cost): most solves need
#: one library start; those that need more rank every sample (:class:`LibraryStarts`).
QUICK_SAMPLES = 2000
QUICK_STARTS = 4
#: Weight of the orientation term, relative to the spread of the sample positions
#: [per (2 (1 - cos theta))]: w = ORIENTATION_WEIGHT * spread [m^2].
ORIENTATION_WEIGHT = 0.1
_NUMPY_SEED = 0x5EED


class SeedLibrary:
    """``SAMPLES`` group vectors of one group and the placements of its frames at them."""

    def __init__(self, group):
        """Draw the samples of ``group`` now (uniform in the limits, as the random restarts).

        The library keeps no reference to the group (it is the value of a weak-keyed cache).
        """
        rng = np.random.default_rng(_NUMPY_SEED)
        self.q = group.random_configurations(rng, SAMPLES)
        self.q.setflags(write=False)
        self._frames: Dict[int, Tuple[np.ndarray, np.ndarray]] = {}
        self._columns: Dict[int, Tuple[np.ndarray, np.ndarray]] = {}
        self._rankings: Dict[int, _Ranking] = {}
        self._lock = threading.Lock()

    def placements(self, group, frame: str) -> Tuple[np.ndarray, np.ndarray]:
        """``p`` (SAMPLES, 3) [m] and row-major ``R`` (SAMPLES, 9) of ``T_world_frame``.

        ``group`` is the group this library was built for.
        """
        return self._placements(group, group.reduced_frame_id(frame))

    def _placements(self, group, fid: int) -> Tuple[np.ndarray, np.ndarray]:
        found = self._frames.get(fid)
        if found is None:
            with self._lock:
                found = self._frames.get(fid)
                if found is None:
                    found = self._frames[fid] = self._forward_kinematics(group, fid)
        return found

    def columns(self, group, full_fid: int) -> Tuple[np.ndarray, np.ndarray]:
        """Return the placements of the full model's frame ``full_fid``, transposed.

        ``p`` (3, CONSTRAINT_SAMPLES) [m], ``R`` (9, CONSTRAINT_SAMPLES); one column for a
        frame fixed in the world.  The frame in the reduced model:
        :meth:`Group.reduced_frame_of`.
        """
        fid = group.reduced_frame_of(full_fid)
        found = self._columns.get(fid)
        if found is None:
            # The prefix only (a quarter of the FK of a frame the pose ranking never reads).
            p, R = self._frames[fid] if fid in self._frames else \
                self._forward_kinematics(group, fid, CONSTRAINT_SAMPLES)
            p, R = p[:CONSTRAINT_SAMPLES], R[:CONSTRAINT_SAMPLES]
            if group.reduced_model.frames[fid].parentJoint == 0:  # fixed: one column
                p, R = p[:1], R[:1]  # (broadcasts against the samples' columns)
            found = self._columns[fid] = (np.ascontiguousarray(p.T),
                                          np.ascontiguousarray(R.T))
        return found

    def ranking(self, group, frame: str) -> "_Ranking":
        """Precomputed ranking data of ``frame`` (built once, shared by threads)."""
        fid = group.reduced_frame_id(frame)
        found = self._rankings.get(fid)
        if found is None:
            found = self._rankings[fid] = _Ranking(*self._placements(group, fid))
        return found

    def _forward_kinematics(self, group, fid: int,
                            count: int = SAMPLES) -> Tuple[np.ndarray, np.ndarray]:
        """``p`` (count, 3) [m] and row-major ``R`` (count, 9) of reduced frame ``fid``.

        :func:`frame_poses`: compiled, as pinocchio per sample made the first ranking of
        a frame a noticeable part of the solve that builds it.
        """
        T = frame_poses(group, fid, self.q[:count])
        p, R = np.ascontiguousarray(T[:, :3, 3]), T[:, :3, :3].reshape(count, 9)
        for a in (p, R):
            a.setflags(write=False)
        return p, R


def frame_poses(group, fid: int, qs: np.ndarray) -> np.ndarray:
    """``T_world_frame`` (S, 4, 4) of reduced-model frame ``fid`` at group vectors ``qs``.

    Compiled (:func:`chain_kernel.forward_many`) when the frame's chain is one the kernel
    takes, else pinocchio per configuration; a frame fixed in the world
    is one placement, repeated.
    """
    chain = chain_kernel.chain_of(group.angle_model, fid)
    if chain is not None:
        return chain_kernel.forward_many(chain, qs)
    model = group.reduced_model
    data = model.createData()
    if model.frames[fid].parentJoint == 0:
        return np.repeat(pin.updateFramePlacement(model, data, fid).homogeneous[None],
                         len(qs), axis=0)
    out = np.empty((len(qs), 4, 4))
    for s, q in enumerate(group.to_reduced_qs(qs)):
        pin.forwardKinematics(model, data, q)
        out[s] = pin.updateFramePlacement(model, data, fid).homogeneous
    return out


#: A target's first three rows (4 floats each: ``R`` [-], ``p`` [m]), ``T_world_target``'s.
Rows = List[List[float]]


class _Ranking:
    """The ranking distance as one product: ``d = [p, R] @ [-2 p_t, -w R_t] + |p|^2``.

    (The constant ``|p_t|^2 + 3 w`` is left out: it does not change the order.)  The
    product is numpy's einsum on (12, S) rows, not BLAS: an (S, 12) matrix-vector
    product makes OpenBLAS wake its threads, which then spin and slow every solve
    after it.  :meth:`nearest` ranks with the same product in one compiled pass
    (:func:`_nearest_k`): with the caches another solver left, the einsum, partition and
    sort cost about a median request, the pass a third of that (docs/design.md).
    """

    def __init__(self, p: np.ndarray, R: np.ndarray):
        self.rows = np.ascontiguousarray(np.hstack((p, R)).T)  # (12, S)
        self.p_squared = (p * p).sum(axis=1)
        self._zeros = np.zeros(len(p))
        spread = float(((p - p.mean(axis=0)) ** 2).sum(axis=1).mean())
        #: Orientation weight [m^2 per (2 (1 - cos theta))]; a tiny floor for a still frame.
        self.weight = ORIENTATION_WEIGHT * max(spread, 1e-6)

    def _product(self, T_rows: Rows, position: bool, rotation: bool
                 ) -> Optional[Tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """``(rows, v, offset)``: ``d = v @ rows + offset`` over every sample; None: no term.

        ``T_rows``: the target's :func:`target_rows`; ``v`` made from its floats in one
        array (an SE3's ``translation`` and ``rotation`` are a binding call each).
        """
        if not (position or rotation):
            return None
        (a, b, c, x), (d, e, f, y), (g, h, i, z) = T_rows
        w = -self.weight
        v = ((-2.0 * x, -2.0 * y, -2.0 * z) if position else ()) + (
            (w * a, w * b, w * c, w * d, w * e, w * f, w * g, w * h, w * i) if rotation else ())
        rows = self.rows if position and rotation else self.rows[:3] if position \
            else self.rows[3:]
        return rows, np.array(v), self.p_squared if position else self._zeros

    def distances(self, T_rows: Rows, position: bool, rotation: bool,
                  samples: int = SAMPLES) -> np.ndarray:
        """Ranking distance of the first ``samples`` samples to the target [m^2, up to a constant].

        ``T_rows``: the target's :func:`target_rows`.
        """
        product = self._product(T_rows, position, rotation)
        if product is None:
            return np.zeros(min(samples, len(self.p_squared)))
        rows, v, offset = product
        return np.einsum("ji,j->i", rows[:, :samples], v) + offset[:samples]

    def nearest(self, T_rows: Rows, position: bool, rotation: bool, count: int,
                samples: int = SAMPLES) -> Optional[np.ndarray]:
        """Return the ``count`` samples nearest the target (indices), nearest first, compiled.

        ``T_rows``: the target's :func:`target_rows`.  As :func:`np.argpartition` then a
        stable sort of :meth:`distances` (equal distances: the lower index first).  None
        when numba is absent or no term counts.
        """
        product = self._product(T_rows, position, rotation)
        if product is None or chain_kernel.jit() is None:
            return None
        if count <= 0:
            return np.zeros(0, dtype=np.intp)
        idx = _nearest_k(*product, min(samples, len(self.p_squared)), count)
        return idx[idx >= 0]  # a NaN distance is never among the nearest


@jit
def _nearest_k(rows, v, offset, samples, count):  # pragma: no cover - compiled
    """Return the indices (count,) of the smallest ``v @ rows[:, i] + offset[i]``, i < samples.

    Smallest first, equal ones by index; -1 where fewer qualify (NaN).  The sum runs
    over the rows in order, then adds the offset, as the einsum of ``distances``.
    """
    d = np.zeros(samples)
    for j in range(rows.shape[0]):
        vj = v[j]
        for i in range(samples):
            d[i] += rows[j, i] * vj
    best, idx = np.full(count, np.inf), np.full(count, -1)
    for i in range(samples):
        x = d[i] + offset[i]
        if x < best[count - 1]:
            m = count - 1
            while m > 0 and best[m - 1] > x:
                best[m], idx[m] = best[m - 1], idx[m - 1]
                m -= 1
            best[m], idx[m] = x, i
    return idx


_LIBRARIES: PerObject = PerObject()
_LIBRARIES_LOCK = threading.Lock()


def library(group) -> SeedLibrary:
    """Return the library of ``group`` (built on first use, then shared by every thread)."""
    lib = _LIBRARIES.get(group)
    if lib is None:
        with _LIBRARIES_LOCK:
            lib = _LIBRARIES.get(group)
            if lib is None:
                lib = _LIBRARIES[group] = SeedLibrary(group)
    return lib


def _owner(group, frame: str):
    """Return the group whose library serves ``group``'s pose ranking of ``frame``.

    ``Group.shape_owner``: a group held elsewhere whose changed joints move neither its
    joints nor the frame (a second arm, the fingers), or carry the whole chain (a lift),
    has the same samples (same joints, same limits) and the same placements of that
    frame, moved by ``Group.source_motion`` (:func:`_in_owner`): its source's library
    serves it.
    """
    return group.shape_owner(group.robot.frame_id(frame))


def target_rows(T_world_target: pin.SE3) -> Rows:
    """Return the first three rows of ``T_world_target`` (4 floats each): a ranking reads them."""
    return T_world_target.homogeneous.tolist()[:3]


def _in_owner(group, owner, pose) -> Rows:
    """:func:`target_rows` of ``pose``'s target for ``owner``'s placements.

    ``D^-1 T`` (``Group.source_motion``) when another group's library serves; the
    compiled pose's own rows (no SE3 made) when the group's own does.
    """
    if owner is group:
        return pose.world_target_rows
    return target_rows(group.source_motion().actInv(pose.T_world_target))


def prepare(group, frame: str) -> None:
    """Build the library of ``group`` for ``frame`` now (e.g. at start-up, outside a solve).

    Cheap once built (two dictionary lookups).  Also compiles or loads the ranking's pass
    (:func:`_nearest_k`, once per process).
    """
    owner = _owner(group, frame)
    library(owner).ranking(owner, frame).nearest(target_rows(pin.SE3.Identity()), True, True,
                                                 1, 1)


def nearest_starts(group, pose, count: int, seed: np.ndarray,
                   max_jump: float = math.inf, samples: int = SAMPLES) -> np.ndarray:
    """Return up to ``count`` library configurations (k, n) nearest to ``pose``, nearest first.

    ``pose`` is a :class:`~ros2_ik.core.pose.CompiledPose`: the orientation term counts only
    when every rotation axis is constrained, the position term when some position axis is.
    With a finite ``max_jump`` [rad or m] only samples within it of ``seed`` (L-inf) qualify.
    Only the first ``samples`` samples are ranked.
    """
    lib = library(_owner(group, pose.target.frame))
    return lib.q[nearest_indices(group, pose, count, seed, max_jump, samples)]


def nearest_indices(group, pose, count: int, seed: np.ndarray, max_jump: float = math.inf,
                    samples: int = SAMPLES) -> np.ndarray:
    """Return the indices into the library of :func:`nearest_starts`' configurations."""
    owner = _owner(group, pose.target.frame)
    lib = library(owner)
    ranking = lib.ranking(owner, pose.target.frame)
    rows = _in_owner(group, owner, pose)
    position, rotation = bool(pose.mask[:3].any()), pose.full_rotation
    if count > 0 and not math.isfinite(max_jump):
        idx = ranking.nearest(rows, position, rotation, count, samples)
        if idx is not None:
            return idx
    d = ranking.distances(rows, position, rotation, samples)
    if math.isfinite(max_jump):
        d[np.abs(lib.q[:samples] - seed).max(axis=1) > max_jump] = np.inf
    count = min(count, int(np.isfinite(d).sum()))
    if count <= 0:
        return np.zeros(0, dtype=np.intp)
    idx = np.argpartition(d, count - 1)[:count]
    return idx[np.argsort(d[idx], kind="stable")]


class LibraryStarts:
    """The library restarts of one pose solve, ranked lazily in two rounds.

    Starts 1..``QUICK_STARTS``: the nearest of the first ``QUICK_SAMPLES`` samples; the
    rest, up to ``count``: the nearest of all samples not returned yet.
    """

    def __init__(self, group, pose, count: int, seed: np.ndarray, max_jump: float):
        """Rank nothing yet: the first :meth:`get` does."""
        self._args = (group, pose, seed, max_jump)
        self._count = count
        self._indices: Optional[list] = None
        self._samples: Optional[np.ndarray] = None  # the serving library's (:func:`_owner`)
        self._complete = False

    def get(self, k: int) -> Optional[np.ndarray]:
        """Return library start ``k`` (0-based) as a fresh array, or None past the last."""
        if k >= self._count:
            return None
        group, pose, seed, max_jump = self._args
        if self._indices is None:
            self._indices = nearest_indices(group, pose, min(QUICK_STARTS, self._count), seed,
                                            max_jump, QUICK_SAMPLES).tolist()
            self._samples = library(_owner(group, pose.target.frame)).q
        if k >= len(self._indices) and not self._complete:
            self._complete = True
            seen = set(self._indices)
            more = nearest_indices(group, pose, self._count, seed, max_jump).tolist()
            self._indices += [i for i in more if i not in seen][:self._count - len(seen)]
        if k >= len(self._indices):
            return None
        return self._samples[self._indices[k]].copy()


class _SampleFrames:
    """World placements of model frames at the library samples, or at the seed alone.

    Columns per configuration: ``p`` (3, S) [m], ``R`` (9, S) row-major (the layout of
    :mod:`ros2_ik.core.constraints._samples`).
    """

    def __init__(self, group, lib: SeedLibrary, seed: Optional[np.ndarray] = None):
        self._group, self._lib = group, lib
        self._model = group.robot.model
        self._data = None
        if seed is not None:
            self._data = group.full_data()  # this thread's; FK overwrites what is read
            pin.framesForwardKinematics(self._model, self._data, group.to_full_q(seed))

    def placement(self, fid: int) -> Tuple[np.ndarray, np.ndarray]:
        """``p`` (3, S) [m] and ``R`` (9, S) of frame ``fid`` (full-model id)."""
        if self._data is None:
            return self._lib.columns(self._group, fid)
        X = self._data.oMf[fid]
        return X.translation.reshape(3, 1), X.rotation.reshape(9, 1)


def _ranking(group, lib: SeedLibrary, constraints, seed: Optional[np.ndarray]) -> np.ndarray:
    """Sum of the constraints' sample violations at the samples (or at the seed alone)."""
    frames = _SampleFrames(group, lib, seed)
    d = np.zeros(1 if seed is not None else CONSTRAINT_SAMPLES)
    for c in constraints:
        v = c.sample_violation(frames)
        if v is not None:
            d += v
    return d


def constraint_starts(group, constraints, count: int, seed: np.ndarray,
                      max_jump: float = math.inf, with_seed: bool = True) -> np.ndarray:
    """Return the seed and up to ``count`` library samples, nearest to the constraints first.

    The distance of a configuration is the sum of the constraints' squared physical
    violations there (``Constraint.sample_violation``: [m^2], radians weighed as in the
    pose ranking; a constraint that cannot rank adds 0).  The seed's distance is halved:
    it goes first unless a sample is markedly nearer, and is always among the starts.
    Shape ``(k, n)``, ``k <= count + 1``.  ``with_seed`` False (the seed was tried
    already): the same samples in the same order, without the seed (nor its kinematics).
    """
    lib = library(group)
    d = _ranking(group, lib, constraints, None)
    if math.isfinite(max_jump):
        d[np.abs(lib.q[:CONSTRAINT_SAMPLES] - seed).max(axis=1) > max_jump] = np.inf
    if with_seed:  # index 0: the seed (first among equals), then the samples
        d = np.concatenate((0.5 * _ranking(group, lib, constraints, seed), d))
    count = min(count + with_seed, int(np.isfinite(d).sum()))
    if count == 0:
        return np.empty((0, group.n))
    idx = np.argpartition(d, count - 1)[:count]
    idx = idx[np.argsort(d[idx], kind="stable")]
    if not with_seed:
        return lib.q[idx]
    if 0 not in idx:  # the seed is tried after the nearer samples
        idx = np.append(idx[:count - 1], 0)
    return np.array([seed if i == 0 else lib.q[i - 1] for i in idx.tolist()])
