"""The servo step's QP, assembled in one compiled call (numba when installed).

Plain loops on preallocated arrays: a dozen numpy operations on 7-vectors cost ~40 us
in the interpreter, this ~1 us compiled.  Without numba the same function runs as plain
Python (slower, same numbers).
"""
import importlib.util
import math


def _identity(function):
    function.py_func = function
    return function


if importlib.util.find_spec("numba") is not None:
    import numba

    def _jit(function):
        return numba.njit(cache=True, nogil=True)(function)
else:  # pragma: no cover - numba is a requirement; kept for a bare install
    _jit = _identity


@_jit
def assemble(J, v_task, w2, mu, posture_weight, posture_gain, posture, q, lower, upper,
             vmax, qd_prev, accel, dt, H, f, lo, hi):  # pragma: no cover - compiled
    """Fill the QP ``min 1/2 qd'H qd + f'qd, lo <= qd <= hi``; return True if relaxed.

    Cost ``|W (J qd - v_task)|^2 + mu |qd|^2 + w_p |qd - k_p (posture - q)|^2`` (halved),
    ``w2`` the squared per-row weights.  Bounds per joint: velocity, a braking bound
    ``sqrt(a d)`` and ``d / dt`` toward each limit (``d`` the distance to it), then the
    acceleration box around ``qd_prev``; where the acceleration box misses the others,
    the nearest velocity within the others wins (``relaxed``).
    """
    m, n = J.shape
    for i in range(n):
        for j in range(i, n):
            s = 0.0
            for r in range(m):
                s += J[r, i] * w2[r] * J[r, j]
            H[i, j] = s
            H[j, i] = s
        H[i, i] += mu + posture_weight
        s = 0.0
        for r in range(m):
            s += J[r, i] * w2[r] * v_task[r]
        f[i] = -s - posture_weight * posture_gain * (posture[i] - q[i])
    relaxed = False
    for i in range(n):
        d_up = max(upper[i] - q[i], 0.0)
        d_lo = max(q[i] - lower[i], 0.0)
        h = min(vmax[i], math.sqrt(accel * d_up), d_up / dt)
        low = max(-vmax[i], -math.sqrt(accel * d_lo), -d_lo / dt)
        a_lo, a_hi = qd_prev[i] - accel * dt, qd_prev[i] + accel * dt
        low2, h2 = max(low, a_lo), min(h, a_hi)
        if low2 > h2:
            near = min(max(qd_prev[i], low), h)
            low2 = h2 = near
            relaxed = True
        lo[i], hi[i] = low2, h2
    return relaxed


@_jit
def manipulability(J, work):  # pragma: no cover - compiled
    """Return ``sqrt(det(J J^T))`` of a (6, n) Jacobian (0 when rank-deficient).

    By a Cholesky factorisation of ``J J^T`` in ``work`` (6, 6): the product of its
    diagonal.
    """
    m, n = J.shape
    for i in range(m):
        for j in range(i + 1):
            s = 0.0
            for k in range(n):
                s += J[i, k] * J[j, k]
            work[i, j] = s
    product = 1.0
    for j in range(m):
        s = work[j, j]
        for k in range(j):
            s -= work[j, k] * work[j, k]
        if s <= 1e-300:
            return 0.0
        d = math.sqrt(s)
        product *= d
        for i in range(j + 1, m):
            t = work[i, j]
            for k in range(j):
                t -= work[i, k] * work[j, k]
            work[i, j] = t / d
    return product
