"""The compiled entries of :mod:`constraint_kernel`: a packed problem's attempt, its rows.

The attempt is the stacked rows' loop (:func:`_lm_jit.stacked_attempt_in`, generated;
its Python oracle :func:`lm_loop.run` on :class:`active_set.StackedRows`) on the views of
a packed problem (:func:`_constraint_jit.layout_views`).
"""
import numpy as np

from ros2_ik.core.kinematics.configuration import tangent_size
from ros2_ik.core.kinematics.forward import kinematics
from ros2_ik.core.kinematics.jit import jit
from ros2_ik.core.solvers._constraint_jit import (layout_views, scratch, shrunk, value_views,
                                                  weighted_pose_rows)
from ros2_ik.core.solvers._dispatch_jit import rows
from ros2_ik.core.solvers._lm_jit import stacked_attempt_in
from ros2_ik.core.solvers._stacked_jit import work


@jit
def attempt_packed(ints, consts, values, q, lower, upper, scale, bias, stall, last,
                   active_set):  # pragma: no cover - compiled
    """Run the stacked rows' attempt on a packed problem in place on ``q``: ``(it, done, E)``.

    Six arrays instead of twenty: each array argument costs the call its unboxing.
    """
    t, v = layout_views(ints, consts), value_views(ints, values)
    lo, hi, margin = shrunk(ints, values)
    arrays = work(tangent_size(t[2], q.shape[0]), ints[0], ints[1], ints[3],
                  (6 if ints[6] else 0) + 3 * ints[4])
    return stacked_attempt_in(arrays, t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], t[8],
                              t[9], t[10], v[0], v[3], q, lower, upper, lo, hi, margin, v[5],
                              scale, bias, stall, last, active_set)


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
