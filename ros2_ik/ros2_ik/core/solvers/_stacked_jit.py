"""The stacked rows' pieces of the compiled LM loop (:func:`_lm_jit.stacked_attempt_in`).

The Python oracle: :class:`active_set.StackedRows` on :func:`lm_loop.run`.  Hinge rows
outside their shrunk bounds (:func:`hinge`); the step (:func:`predicted`): the pose rows
(when there is a target) and the orientation excesses always in the system, a predicted
active set (rows the step would carry outside join as equalities, at most
``PREDICTIONS`` re-solves), solved in joint space (``(J^T J + damping I) dq = -J^T e``, a
Cholesky factorisation; the Python loop picks the smaller of the two equivalent systems:
the same step to rounding), plus the curvature of the norm rows outside their upper
bound (``Residuals.curvature``).  The arrays an attempt writes: :func:`work`.
"""
import numpy as np

from ros2_ik.core.kinematics.jit import jit
from ros2_ik.core.kinematics.linalg import cholesky_solve
from ros2_ik.core.solvers._constraint_jit import scratch
from ros2_ik.core.solvers.active_set import PREDICTIONS


@jit
def _solve(xJ, xe, Jg, e, active, keep, lam, A, b, dq, hinged, Tb, nb):  # pragma: no cover
    """``dq`` minimising ``|M dq + e|^2 + lam |dq|^2`` over the excess and active rows.

    Plus ``dq^T C dq``, the norm rows' curvature (``Residuals.curvature``):
    ``r_i^2 T_i^T T_i`` for each row ``i`` above its upper bound (``r_i = hinged[i] > 0``)
    with ``nb[i]`` bend rows ``T_i = Tb[i, :nb[i]]``.
    Columns with ``keep`` False are left out (their ``dq`` is 0).  By index, without row
    views or helper calls (faster in numba, as in ``kinematics.forward.kinematics``).
    """
    n = dq.shape[0]
    for r in range(n):  # the lower triangle of J^T J and J^T e, kept columns
        b[r] = 0.0
        for c in range(r + 1):
            A[r, c] = 0.0
        if not keep[r]:
            continue
        for i in range(xJ.shape[0]):
            x = xJ[i, r]
            b[r] += x * xe[i]
            for c in range(r + 1):
                if keep[c]:
                    A[r, c] += x * xJ[i, c]
        for i in range(Jg.shape[0]):
            if active[i]:
                x = Jg[i, r]
                b[r] += x * e[i]
                for c in range(r + 1):
                    if keep[c]:
                        A[r, c] += x * Jg[i, c]
    _curvature(hinged, Tb, nb, keep, A)
    for r in range(n):
        A[r, r] += lam
    cholesky_solve(A, n, b, dq)
    for r in range(n):  # dq = -(J^T J + lam I)^-1 J^T e
        dq[r] = -dq[r]


@jit
def _curvature(r, Tb, nb, keep, A):  # pragma: no cover - compiled
    """Add ``r_i^2 T_i^T T_i`` of the norm rows above their bound to ``A``'s lower triangle."""
    for i in range(r.shape[0]):
        if r[i] <= 0.0 or nb[i] == 0:
            continue
        w = r[i] * r[i]
        for k in range(nb[i]):
            T = Tb[i, k]
            for row in range(A.shape[0]):
                if keep[row]:
                    x = w * T[row]
                    for c in range(row + 1):
                        if keep[c]:
                            A[row, c] += x * T[c]


@jit
def predicted(xJ, xe, g, Jg, r, lo, hi, lam, keep, active, e, A, b, dq, Tb,
              nb):  # pragma: no cover - compiled
    """Solve the step on the violated rows, re-solved with the rows it would carry outside."""
    for i in range(g.shape[0]):
        active[i] = r[i] != 0.0
        e[i] = r[i]
    for _ in range(PREDICTIONS + 1):
        _solve(xJ, xe, Jg, e, active, keep, lam, A, b, dq, r, Tb, nb)
        new = False
        for i in range(g.shape[0]):
            if active[i]:
                continue
            p = g[i]
            for c in range(dq.shape[0]):
                p += Jg[i, c] * dq[c]
            if p < lo[i]:
                e[i], active[i], new = g[i] - lo[i], True, True
            elif p > hi[i]:
                e[i], active[i], new = g[i] - hi[i], True, True
        if not new:
            return


@jit
def hinge(g, lo, hi, margin, r):  # pragma: no cover - compiled
    """Rows outside their bounds into ``r``; returns ``(sum r^2, max |r| / margin)``."""
    rr, worst = 0.0, 0.0
    for i in range(g.shape[0]):
        v = g[i]
        if v < lo[i]:
            x = v - lo[i]
        elif v > hi[i]:
            x = v - hi[i]
        else:
            x = 0.0 if v == v else np.inf
        r[i] = x
        rr += x * x
        worst = max(worst, abs(x) / margin[i])
    return rr, worst


@jit
def work(n, k, f, n_rows, n_always):  # pragma: no cover - compiled
    """Return the arrays an attempt writes, for ``n`` tangent columns.

    Those of :func:`_lm_jit.stacked_attempt_in`: ``k`` tree joints, ``f`` frames,
    ``n_rows`` row-constraint rows, ``n_always`` rows always in the system (the pose's
    six, three per orientation bound).
    """
    S33, J3 = scratch(n)
    return (np.empty((k, 4, 4)), np.empty((f, 4, 4)), np.empty((f, 6, n)),
            np.empty((k, 3)), np.empty(n_rows),
            np.empty((n_rows, n)), np.empty(n_rows), np.empty(n_rows), np.empty(n_always),
            np.empty((n_always, n)), np.empty((n, n)), np.empty(n), np.empty(n), np.empty(3),
            np.empty((4, 4)), np.ones(n, dtype=np.bool_), np.empty(n_rows, dtype=np.bool_),
            np.empty((n_rows, 3, n)), np.zeros(n_rows, dtype=np.int64), S33, J3)
