"""The ladder graph of a path: IK candidates per waypoint, joined by dynamic programming.

Layer ``i`` holds distinct verified solutions of waypoint ``i`` (group vectors).  Layer 0
gets several from :func:`ros2_ik.core.solve.solve` (``num_solutions``, random restarts);
each later layer is seeded from the live candidates of the one before (one attempt from
each: the solution on the same branch), with restarts inside the ``max_joint_step`` box
when no candidate connects.  An edge joins two candidates of consecutive layers when no
joint moves more than its ``max_joint_step`` (wrapping joints: the difference modulo
2 pi, :func:`path_segments.wrapped_difference`) and the joint-linear motion between them
passes :meth:`Segments.segment`.  Its weight is the joint motion (Euclidean norm of the
difference, [rad or m]); each candidate keeps its cheapest live predecessor.
"""
from __future__ import annotations

import math
from typing import Callable, List, Optional, Tuple

import numpy as np

from ros2_ik.core.model.group import Group
from ros2_ik.core.path.segments import Failure, Segments, wrapped_difference
from ros2_ik.core.result import IKResult

#: A solve from a seed: ``(waypoint index, seed, attempts, solutions[, anywhere]) ->
#: IKResult`` (see :func:`ros2_ik.core.path.solve_path._solver_calls`).
SolveFrom = Callable[..., IKResult]


class Layer:
    """One waypoint's candidates: ``q`` (k, n), cumulative ``cost`` (k,), ``parent`` (k,).

    ``cost`` is inf for a candidate no live path reaches; ``parent`` indexes the previous
    layer (-1: none).  ``failure`` tells why no candidate is live (when none is).
    """

    def __init__(self, q: np.ndarray):
        """Hold candidates ``q`` (k, n), none reached yet."""
        self.q = q
        self.cost = np.full(len(q), math.inf)
        self.parent = np.full(len(q), -1, dtype=int)
        self.failure = Failure("")

    @property
    def live(self) -> np.ndarray:
        """Indices of reached candidates, cheapest first."""
        idx = np.flatnonzero(np.isfinite(self.cost))
        return idx[np.argsort(self.cost[idx], kind="stable")]

    def add(self, q: np.ndarray, cost: float, parent: int) -> int:
        """Append candidate ``q`` (n,) reached at ``cost`` from ``parent``; return its index."""
        self.q = np.vstack([self.q.reshape(-1, len(q)), q])
        self.cost = np.append(self.cost, cost)
        self.parent = np.append(self.parent, parent)
        return len(self.q) - 1


def distinct(group: Group, qs: List[np.ndarray], within: np.ndarray) -> np.ndarray:
    """``qs`` (as (k, n)) without any that lies inside the ``within`` box of an earlier one.

    ``within`` (n,) [rad or m]: two candidates closer than this on every joint (wrapping
    joints modulo 2 pi) would follow the same branch.
    """
    q = np.array(qs, dtype=float).reshape(len(qs), group.n)
    if len(q) < 2:
        return q
    d = np.abs(wrapped_difference(group, q[:, None, :], q[None, :, :]))
    same = np.all(d <= within, axis=2)
    keep = [0]
    for j in range(1, len(q)):
        if not same[j, keep].any():
            keep.append(j)
    return q[keep]


def no_solution(i: int, result: Optional[IKResult]) -> Failure:
    """Say that waypoint ``i`` has no IK solution, naming the worst violated constraint."""
    if result is None:
        return Failure(f"waypoint {i}: no IK solution")
    worst = max(result.violations, key=lambda v: v[1], default=None)
    return Failure(f"waypoint {i}: no IK solution ({result.message})",
                   constraint=worst[0] if worst else "")


#: Two tracked candidates closer than this on every joint [rad or m] are one branch.
MERGE_TOLERANCE = 1e-2


class Ladder:
    """Builds the layers of one path and joins them (see the module docstring).

    ``step`` (n,): ``max_joint_step`` per joint; ``beam``: at most this many live
    candidates are carried from a layer to the next (the cheapest), and the first layer's
    candidates are followed in groups of that many (:meth:`groups`, :meth:`rewind`).
    """

    def __init__(self, group: Group, segments: Segments, step: np.ndarray, beam: int,
                 solve_from: SolveFrom, data):
        """Keep the pieces; no layer yet."""
        self.group, self.segments, self.step, self.beam = group, segments, step, beam
        self.solve_from, self.data = solve_from, data
        self.layers: List[Layer] = []
        self._first: Optional[Layer] = None  # layer 0 as sampled, before any rewind
        #: Why the last failed solve failed (why a waypoint had no candidate).
        self.last_failure: Optional[IKResult] = None

    # -------------------------------------------------------------- layers
    def start(self, seed: np.ndarray, starts: int, start_at_seed: bool) -> Layer:
        """Layer 0: ``starts`` distinct solutions (cost: the motion from ``seed``).

        With ``start_at_seed`` only those within one step of the seed (and whose motion
        from it passes no check: the seed is not a waypoint) are live.
        """
        result = self.solve_from(0, seed, 0, starts)
        qs = [s.q for s in result.solutions]
        layer = Layer(distinct(self.group, qs, self.step))
        if not len(layer.q):
            layer.failure = no_solution(0, result)
        else:
            d = wrapped_difference(self.group, layer.q, seed)
            layer.cost = np.linalg.norm(d, axis=1)
            if start_at_seed:
                far = np.any(np.abs(d) > self.step, axis=1)
                layer.cost[far] = math.inf
                if far.all():
                    layer.failure = self._jump_failure(0, d, "the seed")
        self.layers.append(layer)
        return layer

    def groups(self) -> List[np.ndarray]:
        """Return the first layer's live candidates, cheapest first, in groups of ``beam``."""
        live = self.layers[0].live
        return [live[k:k + self.beam] for k in range(0, len(live), self.beam)]

    def rewind(self, chosen: np.ndarray) -> Layer:
        """Drop every layer after the first; only its ``chosen`` candidates stay live."""
        first = self._first if self._first is not None else self.layers[0]
        self._first = first
        layer = Layer(first.q)
        layer.cost[chosen] = first.cost[chosen]
        layer.failure = first.failure
        self.layers = [layer]
        return layer

    def reach(self) -> int:
        """Index of the farthest layer with a live candidate (-1: none)."""
        return max((k for k, layer in enumerate(self.layers) if len(layer.live)), default=-1)

    def extend(self, i: int, recovery_attempts: int) -> Layer:
        """Layer ``i``: candidates tracked from layer ``i - 1``'s live ones, then joined.

        When none connects, restarts inside the step box around each live predecessor
        (``recovery_attempts`` each) and joins again.
        """
        prev = self.layers[-1]
        seeds = prev.q[prev.live[:self.beam]]
        layer = self._join(i, self._candidates(i, seeds, 1, 1))
        if not len(layer.live) and recovery_attempts:
            more = self._candidates(i, seeds, recovery_attempts, 2)
            layer = self._join(i, np.vstack([layer.q, more]) if len(layer.q) else more)
        self.layers.append(layer)
        return layer

    def _candidates(self, i: int, seeds: np.ndarray, attempts: int, solutions: int
                    ) -> np.ndarray:
        qs: List[np.ndarray] = []
        for seed in seeds:
            result = self.solve_from(i, seed, attempts, solutions)
            if result.solutions:
                qs.extend(s.q for s in result.solutions)
            else:
                self.last_failure = result
        return distinct(self.group, qs, np.full(self.group.n, MERGE_TOLERANCE))

    def _join(self, i: int, q: np.ndarray) -> Layer:
        """Each candidate's cheapest live predecessor whose edge holds."""
        layer, prev = Layer(q), self.layers[-1]
        live = prev.live[:self.beam]
        if not len(q) or not len(live):
            layer.failure = no_solution(i, self.last_failure)
            return layer
        d = wrapped_difference(self.group, q[:, None, :], prev.q[live][None, :, :])
        fits = np.all(np.abs(d) <= self.step, axis=2)
        total = prev.cost[live][None, :] + np.linalg.norm(d, axis=2)
        total[~fits] = math.inf
        segment_failure: Optional[Failure] = None
        for j in range(len(q)):
            for k in np.argsort(total[j], kind="stable"):
                if not math.isfinite(total[j, k]):
                    break
                failure = self._segment(i, prev.q[live[k]], q[j], d[j, k])
                if not failure.reason:
                    layer.cost[j], layer.parent[j] = total[j, k], live[k]
                    break
                segment_failure = segment_failure or failure
        if not len(layer.live):
            layer.failure = segment_failure or self._jump_failure(
                i, d.reshape(-1, self.group.n), f"waypoint {i - 1}")
        return layer

    def edge(self, i: int, q_a: np.ndarray, q_b: np.ndarray) -> Optional[float]:
        """Joint motion of the edge ``q_a`` (waypoint ``i - 1``) -> ``q_b`` (waypoint ``i``).

        [rad or m]; None when a joint moves more than its step or the segment fails.
        """
        d = wrapped_difference(self.group, q_b, q_a)
        if np.any(np.abs(d) > self.step) or self._segment(i, q_a, q_b, d).reason:
            return None
        return float(np.linalg.norm(d))

    def _segment(self, i: int, q_a: np.ndarray, q_b: np.ndarray, d: np.ndarray) -> Failure:
        if not self.segments.needs_checks(i):
            return Failure("")
        return self.segments.segment(i, q_a, q_a + d, self.data)

    def _jump_failure(self, i: int, d: np.ndarray, origin: str) -> Failure:
        """Describe the least bad move into waypoint ``i``: the joint farthest over its step."""
        ratio = np.abs(d) / self.step
        pair = int(np.argmin(ratio.max(axis=1)))
        joint = int(np.argmax(ratio[pair]))
        name = self.group.joint_names[joint]
        return Failure(f"waypoint {i}: every solution moves joint {name} by at least "
                       f"{abs(d[pair, joint]):.3g} from {origin} (max_joint_step "
                       f"{self.step[joint]:.3g})", joint=name)

    # ---------------------------------------------------------------- path
    def best_path(self) -> Tuple[np.ndarray, Failure]:
        """Return the cheapest path to the farthest layer reached, (m, n), and why it ends.

        Wrapping joints as the candidates hold them (each value within (-pi, pi] of its
        neighbour's, modulo 2 pi): :func:`unwind` makes them continuous.
        """
        last = self.reach()
        failure = Failure("")
        if last + 1 < len(self.layers):
            failure = self.layers[last + 1].failure
        if last < 0:
            return np.empty((0, self.group.n)), failure
        rows, node = [], int(self.layers[last].live[0])
        for k in range(last, -1, -1):
            rows.append(self.layers[k].q[node])
            node = int(self.layers[k].parent[node])
        return np.array(rows[::-1]), failure
