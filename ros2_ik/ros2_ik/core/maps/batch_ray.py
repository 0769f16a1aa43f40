"""The Ray path of :func:`batch.solve_batch`: Ray actors each holding the group.

``ray`` is an optional extra (``pip install -r requirements-extras.txt``, or ``make
extras``). With an address (``"ray://head:10001"`` or ``"auto"`` on a cluster node) the
same chunks run on a cluster; without one a local Ray instance is started (or the one
already running in this process is used). Chunks and per-target seeds are those of the
local path, so the answers are the same for the same batch seed. The actors of a group
are started on the first call and reused until ``ray.shutdown()``.
"""
from __future__ import annotations

from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from ros2_ik.core import errors


class _Worker:
    """One Ray actor: builds the group once, then solves chunks.

    ``build(spec)`` builds the actor's group, ``solve_chunk(spec, options, T, seeds,
    random_seeds)`` solves one chunk (:mod:`.batch`'s, passed in: this module imports
    nothing of it).
    """

    def __init__(self, spec, build: Callable, solve_chunk: Callable):
        self.spec = spec
        self.solve_chunk = solve_chunk
        build(spec)

    def solve(self, options, T, seeds, random_seeds) -> Tuple[np.ndarray, ...]:
        return self.solve_chunk(self.spec, options, T, seeds, random_seeds)


def _ray():
    try:
        import ray
    except ImportError as exc:
        raise errors.InvalidArgument(
            "use_ray/ray_address: the 'ray' package is not installed "
            "(pip install ray==2.60.0, or make extras in a clone)") from exc
    return ray


def run_ray(spec, options, T: np.ndarray, seeds: np.ndarray, random_seeds: np.ndarray,
            parts: Sequence[slice], actors: int, address: Optional[str],
            worker: Tuple[Callable, Callable]) -> List[Tuple]:
    """Solve ``parts`` (slices of the arrays) on ``actors`` Ray actors, in order.

    ``worker``: ``(build, solve_chunk)`` of :class:`_Worker`.
    """
    ray = _ray()
    if not ray.is_initialized():
        ray.init(address=address or None, log_to_driver=False)
    pool = _actors(ray, spec, actors, worker)
    options_ref = ray.put(options)
    return _pipelined(ray, pool, lambda a, s: a.solve.remote(
        options_ref, T[s], seeds[s], random_seeds[s]), parts)


#: Chunks queued on each actor: one running, the next already there when it ends.
QUEUE_DEPTH = 2


def _pipelined(ray, pool: list, call, parts: Sequence[slice]) -> List[Tuple]:
    """Run ``call(actor, part)`` for every part, ``QUEUE_DEPTH`` per actor; results in order.

    An actor runs its tasks one after another, so with a second chunk queued it starts
    it at once instead of idling for the result's trip to the driver and the next
    submission (``ActorPool.map`` keeps one task per actor: Ray / local 2 workers was
    0.79x with one, 1.03x with two, medians of 7 alternating runs of 6000 Panda targets).
    """
    results: List = [None] * len(parts)
    pending: Dict = {}
    following = iter(range(len(parts)))

    def submit(actor) -> None:
        index = next(following, None)
        if index is not None:
            pending[call(actor, parts[index])] = (index, actor)

    for actor in pool:
        for _ in range(QUEUE_DEPTH):
            submit(actor)
    while pending:
        done, _ = ray.wait(list(pending), num_returns=1)
        index, actor = pending.pop(done[0])
        results[index] = ray.get(done[0])
        submit(actor)
    return results


_ACTORS: Dict[tuple, list] = {}


def _actors(ray, spec, count: int, worker: Tuple[Callable, Callable]) -> list:
    """Actors of this Ray job for ``spec``, started once and kept until ray.shutdown()."""
    key = (ray.get_runtime_context().get_job_id(), spec, count)
    if key not in _ACTORS:
        actor_class = ray.remote(num_cpus=1)(_Worker)
        _ACTORS[key] = [actor_class.remote(spec, *worker) for _ in range(count)]
    return _ACTORS[key]
