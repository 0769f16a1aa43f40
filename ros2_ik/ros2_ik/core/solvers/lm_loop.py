"""The one Python Levenberg-Marquardt attempt loop (the no-numba fallback and the oracle).

Step: ``(J^T J + (s E + bias) I) dq = -J^T e`` with ``E = e^T e`` the weighted squared
error (Chan's damping, scaled by ``s``), every step accepted, the iterate clamped into the
limits.  What differs between problems is what the loop is given (:class:`Rows`): the
residual and Jacobian (a pose on ``log6`` or in target axes, :class:`pose_state.PoseState`;
pose and constraint rows with a predicted active set, :class:`active_set.StackedRows`),
their convergence test, and their step (which rows and joints take part).  The loop owns
the iteration: the test, the stall and progress tests, the damping.  The compiled loop
(:mod:`_lm_jit`) runs the same iteration; ``test_lm_loops.py`` compares the two.
"""
from __future__ import annotations

import math
from functools import lru_cache
from typing import NamedTuple, Protocol, Tuple

import numpy as np
from scipy.linalg.blas import dsyrk
from scipy.linalg.lapack import dposv

from ros2_ik.core.solvers.budget import Budget

_Attempt = Tuple[np.ndarray, int, bool, float]  # (q, iterations, converged, merit)
_EYES = {m: np.eye(m) for m in range(1, 13)}


class Rule(NamedTuple):
    """The loop's constants (those of ``LevenbergMarquardt``)."""

    damping_scale: float
    bias: float
    stall_ratio: float
    #: Largest E allowed at each iteration 0..last (index = iteration; inf: no bound).
    bounds: Tuple[float, ...]
    #: Re-solve without the joints a step pushes beyond their limits.
    active_set: bool

    @property
    def last(self) -> int:
        """The attempt's last iteration."""
        return len(self.bounds) - 1


@lru_cache(maxsize=32)
def bounds(schedule: Tuple[Tuple[int, float], ...], last: int) -> Tuple[float, ...]:
    """Largest squared error allowed at each iteration 0..last (index = iteration)."""
    return tuple(min((bound for k, bound in schedule if k <= it), default=math.inf)
                 for it in range(last + 1))


class Rows(Protocol):
    """What the loop is given: residual rows at ``q`` and the step they take."""

    def evaluate(self, q: np.ndarray) -> Tuple[bool, float, float]:
        """Rows at ``q``: ``(converged, E, merit)``; keeps what :meth:`step` needs."""

    def step(self, q: np.ndarray, scale: float, bias: float, active_set: bool
             ) -> np.ndarray:
        """Return the next iterate from ``q`` (damping ``scale * E + bias``), in its limits."""


def run(rows: Rows, q: np.ndarray, budget: Budget, rule: Rule) -> _Attempt:
    """One attempt from ``q``: ``(q, iterations, converged, merit)``.

    Ends converged, at the last iteration, after three steps in a row that shrank E by
    less than ``stall_ratio``, when E exceeds the progress bound of its iteration (or is
    not finite), or when the budget expires.
    """
    E_prev, stalls, last, limits = math.inf, 0, rule.last, rule.bounds
    scale, bias, stall, active = rule.damping_scale, rule.bias, rule.stall_ratio, \
        rule.active_set
    expired = budget.expired
    for it in range(1, last + 1):
        done, E, merit = rows.evaluate(q)
        if done:
            return q, it, True, merit
        stalls = stalls + 1 if E > stall * E_prev else 0
        if it == last or stalls >= 3 or expired() or not E <= limits[it] or E == math.inf:
            return q, it, False, merit
        E_prev = E
        q = rows.step(q, scale, bias, active)
    raise AssertionError("unreachable")


def damped_step(J: np.ndarray, e: np.ndarray, damping: float) -> np.ndarray:
    """``dq`` minimising ``|J dq + e|^2 + damping |dq|^2`` (the smaller normal system).

    A zero step without rows.  The one Cholesky of the Python loop (LAPACK ``dposv``).
    """
    m, n = J.shape
    if m == 0:
        return np.zeros(n)
    if n < m:
        A = J.T @ J
        A.flat[::n + 1] += damping
        return -dposv(A.T, J.T @ e, overwrite_a=1, overwrite_b=1)[1]
    eye = _EYES.get(m)
    if eye is None:
        eye = np.eye(m)
    # J J^T + damping I in one BLAS call (upper triangle, what dposv reads).
    return -(dposv(dsyrk(1.0, J, beta=damping, c=eye), e, overwrite_a=1)[1] @ J)
