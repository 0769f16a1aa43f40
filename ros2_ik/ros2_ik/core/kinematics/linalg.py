"""The kernels' one dense Cholesky factorisation and solve (compiled, plain loops).

The LM steps (the pose attempt's 6x6 ``J J^T + lam I``, the constrained attempt's
``J^T J + lam I``) and the servo's manipulability factor small symmetric matrices; each
used to write its own Cholesky.  In place on the lower triangle, by index, inlined into
the callers (no call, no array temporaries), as :mod:`.forward`.
"""
import math

from ros2_ik.core.runtime.compiled import jit  # deferred: numba loads with the first kernel


@jit(inline="always")  # a step of its callers' loops: no call of its own
def cholesky(A, m):  # pragma: no cover - compiled
    """Factor ``A[:m, :m] = L L^T`` in place (its lower triangle becomes ``L``).

    Reads the lower triangle only.  Returns False at the first pivot that is not positive
    (``A`` not positive definite, or NaN): ``L`` is then incomplete.
    """
    for r in range(m):
        for c in range(r + 1):
            s = A[r, c]
            for k in range(c):
                s -= A[r, k] * A[c, k]
            if r == c:
                if not s > 0.0:
                    return False
                A[r, r] = math.sqrt(s)
            else:
                A[r, c] = s / A[c, c]
    return True


@jit(inline="always")  # a step of its callers' loops: no call of its own
def cholesky_solve(A, m, b, x):  # pragma: no cover - compiled
    """Solve ``A[:m, :m] x = b`` by :func:`cholesky` (``A``'s lower triangle is overwritten).

    ``x`` (m,) may be ``b``.  A matrix that is not positive definite gives NaN in ``x``
    (an attempt then ends: its error is not finite).  Returns whether it was.
    """
    if not cholesky(A, m):
        for r in range(m):
            x[r] = math.nan
        return False
    for r in range(m):  # L y = b
        s = b[r]
        for c in range(r):
            s -= A[r, c] * x[c]
        x[r] = s / A[r, r]
    for r in range(m - 1, -1, -1):  # L^T x = y
        s = x[r]
        for c in range(r + 1, m):
            s -= A[c, r] * x[c]
        x[r] = s / A[r, r]
    return True
