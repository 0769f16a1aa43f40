"""The compiled LM attempt of :mod:`constraint_kernel`: the stacked rows' loop in numba.

The Python oracle: :func:`lm_loop.run` on :class:`active_set.StackedRows`.

The same iteration as the Python loop: hinge rows outside their shrunk bounds, the
pose rows (when there is a target) and the orientation excesses always in the system, a
predicted active set (rows the step would carry outside join as equalities, at most
``PREDICTIONS`` re-solves), joints on a limit pushed outward dropped, Chan's damping,
the stall test, clamping into the limits.  The normal system is solved in joint space
(``(J^T J + damping I) dq = -J^T e``, a Cholesky factorisation; the Python loop picks the
smaller of the two equivalent systems: the same step to rounding), plus the curvature of
the norm rows outside their upper bound (``Residuals.curvature``).
"""
import math

import numpy as np

from ros2_ik.core.kinematics.configuration import integrate, pushed_out, tangent_size
from ros2_ik.core.kinematics.forward import kinematics
from ros2_ik.core.kinematics.jit import jit
from ros2_ik.core.kinematics.linalg import cholesky_solve
from ros2_ik.core.solvers._constraint_jit import (layout_views, scratch, shrunk, value_views,
                                                  weighted_pose_rows)
from ros2_ik.core.solvers._dispatch_jit import rows
from ros2_ik.core.solvers.active_set import PREDICTIONS
from ros2_ik.core.solvers.residuals import DONE_FRACTION


@jit
def _solve(xJ, xe, Jg, e, active, keep, lam, A, b, dq, hinge, Tb, nb):  # pragma: no cover
    """``dq`` minimising ``|M dq + e|^2 + lam |dq|^2`` over the excess and active rows.

    Plus ``dq^T C dq``, the norm rows' curvature (``Residuals.curvature``):
    ``r_i^2 T_i^T T_i`` for each row ``i`` above its upper bound (``r_i = hinge[i] > 0``)
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
    _curvature(hinge, Tb, nb, keep, A)
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
def _predicted(xJ, xe, g, Jg, r, lo, hi, lam, keep, active, e, A, b, dq, Tb,
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
def _hinge(g, lo, hi, margin, r):  # pragma: no cover - compiled
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
    """Return the arrays an attempt writes (:func:`attempt_in`), for ``n`` tangent columns.

    ``k`` tree joints, ``f`` frames, ``n_rows`` row-constraint rows, ``n_always`` rows
    always in the system (the pose's six, three per orientation bound).
    """
    S33, J3 = scratch(n)
    return (np.empty((k, 4, 4)), np.empty((f, 4, 4)), np.empty((f, 6, n)),
            np.empty((k, 3)), np.empty(n_rows),
            np.empty((n_rows, n)), np.empty(n_rows), np.empty(n_rows), np.empty(n_always),
            np.empty((n_always, n)), np.empty((n, n)), np.empty(n), np.empty(n), np.empty(3),
            np.empty((4, 4)), np.ones(n, dtype=np.bool_), np.empty(n_rows, dtype=np.bool_),
            np.empty((n_rows, 3, n)), np.zeros(n_rows, dtype=np.int64), S33, J3)


@jit
def attempt(parents, placements, kinds, axes, columns, fparent, fplace, ctype, cfa, cfb,
            coff, params, pose, n_rows, n_excess, q, lower, upper, lo, hi, margin, x_margin,
            scale, bias, stall, last, active_set):  # pragma: no cover - compiled
    """Run the stacked rows' loop in place on ``q``: ``(it, done, E)`` (:func:`attempt_in`)."""
    p6 = 6 if pose.shape[0] else 0
    arrays = work(tangent_size(kinds, q.shape[0]), parents.shape[0], fparent.shape[0],
                  n_rows, p6 + 3 * n_excess)
    return attempt_in(arrays, parents, placements, kinds, axes, columns, fparent, fplace,
                      ctype, cfa, cfb, coff, params, pose, q, lower, upper, lo, hi, margin,
                      x_margin, scale, bias, stall, last, active_set)


@jit
def attempt_packed(ints, consts, values, q, lower, upper, scale, bias, stall, last,
                   active_set):  # pragma: no cover - compiled
    """:func:`attempt` on a packed problem (:func:`_constraint_jit.layout_views`).

    Six arrays instead of twenty: each array argument costs the call its unboxing.
    """
    t, v = layout_views(ints, consts), value_views(ints, values)
    lo, hi, margin = shrunk(ints, values)
    arrays = work(tangent_size(t[2], q.shape[0]), ints[0], ints[1], ints[3],
                  (6 if ints[6] else 0) + 3 * ints[4])
    return attempt_in(arrays, t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], t[8], t[9],
                      t[10], v[0], v[3], q, lower, upper, lo, hi, margin, v[5], scale, bias,
                      stall, last, active_set)


@jit
def attempt_in(arrays, parents, placements, kinds, axes, columns, fparent, fplace, ctype,
               cfa, cfb, coff, params, pose, q, lower, upper, lo, hi, margin, x_margin,
               scale, bias, stall, last, active_set):  # pragma: no cover - compiled
    """Run the stacked rows' loop in place on ``q`` with :func:`work`'s ``arrays``.

    ``pose``: empty without a pose target, else the parameters of
    :func:`_constraint_jit.weighted_pose_rows`; its six rows stand before the excess
    rows, always in the system.  Returns ``(it, done, E)``;
    allocates nothing (a polishing step restores with it, several times per polish).
    """
    (oMi, oMf, Jf, waxes, g, Jg, r, e, xe, xJ, A, b, dq, w, T, keep, active, Tb, nb, S33,
     J3) = arrays
    p6 = 6 if pose.shape[0] else 0
    excess = xe.shape[0] > p6  # orientation bounds
    E_prev, stalls = np.inf, 0
    for it in range(1, last + 1):
        kinematics(parents, placements, kinds, axes, columns, q, fparent, fplace, oMi, oMf,
                   Jf, waxes)
        pose_done = True
        if p6:
            pose_done = weighted_pose_rows(oMf, Jf, pose, xe[:6], xJ[:6], w, T) <= 1.0
        x_max = rows(ctype, cfa, cfb, coff, params, oMf, Jf, g, Jg, xe[p6:], xJ[p6:], hi, Tb,
                     nb, S33, J3)
        x_worst = 0.25 * x_max / x_margin - 0.25 if excess else 0.0
        rr, worst_rows = _hinge(g, lo, hi, margin, r)
        E = rr
        for i in range(xe.shape[0]):
            E += xe[i] * xe[i]
        if pose_done and max(0.25 * worst_rows - 0.25, x_worst) <= DONE_FRACTION:
            return it, True, E
        stalls = stalls + 1 if E > stall * E_prev else 0
        if it == last or stalls >= 3 or not math.isfinite(E):
            return it, False, E
        E_prev = E
        lam = scale * E + bias
        keep[:] = True
        _predicted(xJ, xe, g, Jg, r, lo, hi, lam, keep, active, e, A, b, dq, Tb, nb)
        if active_set and pushed_out(kinds, q, dq, lower, upper, keep):
            _predicted(xJ, xe, g, Jg, r, lo, hi, lam, keep, active, e, A, b, dq, Tb, nb)
        integrate(kinds, q, dq, lower, upper)
    return last, False, np.inf


@jit
def evaluate(parents, placements, kinds, axes, columns, fparent, fplace, ctype, cfa, cfb,
             coff, params, pose, q, g, Jg, xe, xJ):  # pragma: no cover - compiled
    """Every row at ``q`` into ``g``, ``Jg``, ``xe``, ``xJ`` (the tests').

    With a pose target its six rows come first in ``xe``, ``xJ``.  Returns the largest
    excess norm [rad].
    """
    n, k, f = tangent_size(kinds, q.shape[0]), parents.shape[0], fparent.shape[0]
    oMi, oMf, Jf = np.empty((k, 4, 4)), np.empty((f, 4, 4)), np.empty((f, 6, n))
    waxes = np.empty((k, 3))
    kinematics(parents, placements, kinds, axes, columns, q, fparent, fplace, oMi, oMf, Jf,
               waxes)
    p6 = 6 if pose.shape[0] else 0
    if p6:
        weighted_pose_rows(oMf, Jf, pose, xe[:6], xJ[:6], np.empty(3), np.empty((4, 4)))
    S33, J3 = scratch(n)
    m = g.shape[0]
    return rows(ctype, cfa, cfb, coff, params, oMf, Jf, g, Jg, xe[p6:], xJ[p6:],
                np.full(m, np.inf), np.empty((m, 3, n)), np.zeros(m, dtype=np.int64), S33, J3)
