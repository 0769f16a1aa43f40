"""Backtracking in the ladder: reach a waypoint that no followed branch reaches.

When no live candidate of waypoint ``i - 1`` connects to a solution of waypoint ``i``
(every branch followed so far ends there), :func:`bridge` samples solutions of waypoint
``i`` anywhere (random restarts, not near the predecessors) and follows each one
*backwards*, seeding waypoint ``j - 1`` with its solution at ``j``, until it meets a live
candidate of an earlier layer (an edge that holds: every joint within its step, the
segment checks pass) or reaches waypoint 0 as a new start.  The chain's solutions join
the ladder as candidates of the layers it crossed, so the dynamic programming can route
the path over a branch that the forward pass never sampled (a redundant arm's other
elbow or wrist posture that stays inside the joint limits farther along the path).
"""
from __future__ import annotations

from typing import Callable, List, Optional, Tuple

import numpy as np

from ros2_ik.core.path.ladder import Ladder, distinct
from ros2_ik.core.path.segments import wrapped_difference

#: Solutions of the unreached waypoint sampled by one bridge (each followed backwards).
BRIDGE_STARTS = 8
#: Restarts (anywhere in the limits) that sample them: a bound, so that a waypoint with
#: no solution at all (out of reach, in collision) costs little.
BRIDGE_ATTEMPTS = 32
#: Restarts inside the step box when following a chain backwards finds no solution.
BRIDGE_RECOVERY = 4


def bridge(ladder: Ladder, i: int, seed: np.ndarray, start_at_seed: bool,
           expired: Callable[[], bool]) -> bool:
    """Add live candidates to layer ``i`` (the last) by chains followed backwards.

    ``seed`` (n,): the configuration layer 0's costs are measured from (with
    ``start_at_seed`` a chain may only start within one step of it).  ``expired()``:
    True when the path's time budget is spent.  Returns True when layer ``i`` has a live
    candidate afterwards.
    """
    anchor = _anchor(ladder, i)
    result = ladder.solve_from(i, anchor, BRIDGE_ATTEMPTS, BRIDGE_STARTS, True)
    starts = distinct(ladder.group, [s.q for s in result.solutions], ladder.step)
    for q_i in starts:
        if expired():
            break
        found = _chain(ladder, i, q_i, seed, start_at_seed, expired)
        if found is not None:
            _splice(ladder, i, *found)
            return True
    return False


def _anchor(ladder: Ladder, i: int) -> np.ndarray:
    """Return the cheapest live candidate of layer ``i - 1`` (the sampler's first seed)."""
    prev = ladder.layers[i - 1]
    return prev.q[prev.live[0]] if len(prev.live) else prev.q[0]


def _chain(ladder: Ladder, i: int, q_i: np.ndarray, seed: np.ndarray, start_at_seed: bool,
           expired: Callable[[], bool]) -> Optional[Tuple[List[np.ndarray], int, int, float]]:
    """Follow ``q_i`` backwards until an edge meets a live candidate (or waypoint 0).

    Returns ``(chain, j, parent, cost)``: the chain's configurations for waypoints
    ``j .. i`` (each one step from the next, its segment checked), the live candidate of
    layer ``j - 1`` it joins (-1: ``j`` is 0, a new start) and the cost of its first
    configuration; None when the chain dies.
    """
    chain = [q_i]
    for j in range(i, -1, -1):
        q_j = chain[0]
        if j == 0:
            return _as_start(ladder, chain, seed, start_at_seed)
        joined = _join_live(ladder, j, q_j)
        if joined is not None:
            return (chain, j) + joined
        if expired():
            return None
        q_prev = _step_back(ladder, j, q_j)
        if q_prev is None:
            return None
        chain.insert(0, q_prev)
    return None


def _as_start(ladder: Ladder, chain: List[np.ndarray], seed: np.ndarray,
              start_at_seed: bool) -> Optional[Tuple[List[np.ndarray], int, int, float]]:
    d = wrapped_difference(ladder.group, chain[0], seed)
    if start_at_seed and np.any(np.abs(d) > ladder.step):
        return None
    return chain, 0, -1, float(np.linalg.norm(d))


def _join_live(ladder: Ladder, j: int, q_j: np.ndarray) -> Optional[Tuple[int, float]]:
    """Return the cheapest live candidate of layer ``j - 1`` whose edge into ``q_j`` holds.

    As ``(index, cost through it)``; None when no edge holds.
    """
    prev = ladder.layers[j - 1]
    for k in prev.live:
        motion = ladder.edge(j, prev.q[k], q_j)
        if motion is not None:
            return int(k), float(prev.cost[k] + motion)
    return None


def _step_back(ladder: Ladder, j: int, q_j: np.ndarray) -> Optional[np.ndarray]:
    """Solve waypoint ``j - 1`` from ``q_j`` for a solution whose edge into it holds (or None)."""
    for attempts in (1, BRIDGE_RECOVERY):
        result = ladder.solve_from(j - 1, q_j, attempts, 2 if attempts > 1 else 1)
        for solution in result.solutions:
            if ladder.edge(j, solution.q, q_j) is not None:
                return np.asarray(solution.q, dtype=float)
    return None


def _splice(ladder: Ladder, i: int, chain: List[np.ndarray], j: int, parent: int,
            cost: float) -> None:
    """Add the chain (waypoints ``j .. i``) to the layers, each joined to the one before."""
    for offset, q in enumerate(chain):
        k = j + offset
        if offset:
            cost += float(np.linalg.norm(wrapped_difference(ladder.group, q, chain[offset - 1])))
        parent = ladder.layers[k].add(q, cost, parent)
