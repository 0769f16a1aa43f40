"""The servo QP's small dense terms as plain loops, compiled by numba when it is installed.

A servo step works on short joint vectors, where each numpy operation is mostly
interpreter and dispatch: the operations of the bounds and the cost took over half of a
step.  These loops do the same arithmetic in one compiled call each.
Without numba the same functions run as Python (slower, same results).
"""
import importlib.util
import math
from pathlib import Path

import numpy as np

from ros2_ik.core.kinematics.linalg import cholesky

if importlib.util.find_spec("numba") is not None:
    import numba

    from ros2_ik.core.kinematics.jit import drop_stale_cache
    # manipulability inlines kinematics.linalg's Cholesky: numba checks only this file.
    drop_stale_cache([Path(__file__).resolve()])

    def _jit(function):
        return numba.njit(cache=True, nogil=True)(function)
else:  # pragma: no cover - numba is in requirements.txt
    def _jit(function):
        return function


@_jit
def velocity_box(q, qd_prev, lower, upper, vmax, a_max, dt, lo, hi):  # pragma: no cover
    """Fill ``lo``/``hi`` (n,) [rad/s] with the servo's velocity box; return True if relaxed.

    Per joint ``i``: ``+-vmax``; a braking bound ``sqrt(a_max d)`` toward a limit ``d``
    away (the joint stops on the limit with half the allowed deceleration); ``d / dt``
    (never past the limit within one period); the acceleration bound ``qd_prev +- a_max
    dt``; ``a_max`` (n,) [rad/s^2 or m/s^2] per joint.
    Where the acceleration bound contradicts the others, the others win (the velocity
    nearest ``qd_prev`` inside them is forced) and the step is flagged relaxed.
    """
    relaxed = False
    for i in range(q.shape[0]):
        d_up = max(upper[i] - q[i], 0.0)  # inf for an unbounded joint
        d_lo = max(q[i] - lower[i], 0.0)
        a = a_max[i]
        h = min(vmax[i], math.sqrt(a * d_up), d_up / dt)
        w = max(-vmax[i], -math.sqrt(a * d_lo), -d_lo / dt)
        h2 = min(h, qd_prev[i] + a * dt)
        w2 = max(w, qd_prev[i] - a * dt)
        if w2 > h2:
            near = min(max(qd_prev[i], w), h)
            w2 = h2 = near
            relaxed = True
        lo[i], hi[i] = w2, h2
    return relaxed


@_jit
def least_squares_cost(J, v, w2, diag, posture_term, H, f):  # pragma: no cover
    """``H = J^T W J + diag I`` (n, n) and ``f = -J^T W v - posture_term`` (n,), W = diag(w2).

    ``J`` (6, n) the task Jacobian, ``v`` (6,) the desired task velocity; the cost of the
    QP is ``0.5 qd^T H qd + f^T qd``.
    """
    n = J.shape[1]
    JT, WJT = np.empty((n, 6)), np.empty((n, 6))  # rows contiguous in the inner loops
    for r in range(n):
        for k in range(6):
            JT[r, k] = J[k, r]
            WJT[r, k] = J[k, r] * w2[k]
    for r in range(n):
        s = 0.0
        for k in range(6):
            s += WJT[r, k] * v[k]
        f[r] = -s - posture_term[r]
        for c in range(r + 1):
            s = 0.0
            for k in range(6):
                s += WJT[r, k] * JT[c, k]
            H[r, c] = s
            H[c, r] = s
        H[r, r] += diag


@_jit
def manipulability(J, rows):  # pragma: no cover
    """Yoshikawa's ``sqrt(det(J_r J_r^T))`` of the rows ``rows`` of ``J`` (0 if singular).

    By Cholesky of the (m, m) Gram matrix: its determinant is the product of the squared
    pivots; a pivot that is not positive means rank deficiency (0).
    """
    m, n = rows.shape[0], J.shape[1]
    G = np.empty((m, m))
    for a in range(m):
        for b in range(a + 1):
            s = 0.0
            for k in range(n):
                s += J[rows[a], k] * J[rows[b], k]
            G[a, b] = s
    if not cholesky(G, m):
        return 0.0
    out = 1.0
    for a in range(m):
        out *= G[a, a]
    return out


_WARM = []


def warm_up() -> None:
    """Compile (or load from numba's cache) every kernel now, once per process.

    :class:`ros2_ik.core.servo.Servo` calls it on construction so the first control period
    does not pay seconds of compilation.
    """
    if _WARM:
        return
    n = 2
    J, v, w2 = np.ones((6, n)), np.zeros(6), np.ones(6)
    H, f, lo, hi = np.empty((n, n)), np.empty(n), np.empty(n), np.empty(n)
    least_squares_cost(J, v, w2, 1.0, np.zeros(n), H, f)
    velocity_box(np.zeros(n), np.zeros(n), -np.ones(n), np.ones(n), np.ones(n), np.ones(n),
                 0.004, lo, hi)
    manipulability(J, np.arange(6))
    _WARM.append(True)
