"""The numba-compiled model of polishing (:mod:`polish_kernel`): QP rows and costs.

At one configuration: the kinematics (:mod:`ros2_ik.core.kinematics.forward`), every
constraint's ``linearisation`` rows (``_dispatch_jit.linearise``: each type's from its
own file), whether the physical rows hold (``polish._feasible``'s test), a pose target's
rows (``Residuals.pose_rows``) and the costs' value, gradient and Gauss-Newton curvature
(``Residuals.cost_model``; ``_dispatch_jit.costs``: each type's from ``costs.py``).
"""
import numpy as np

from ros2_ik.core.kinematics.configuration import tangent_size
from ros2_ik.core.kinematics.forward import kinematics
from ros2_ik.core.kinematics.jit import jit
from ros2_ik.core.solvers._constraint_jit import layout_views, weighted_pose_rows
from ros2_ik.core.solvers._dispatch_jit import costs, linearise


@jit
def feasible(g, glo, ghi, gm, slack):  # pragma: no cover - compiled
    """Whether every physical row (``gm`` > 0) lies within ``slack * gm`` of its bounds."""
    for i in range(g.shape[0]):
        if gm[i] > 0.0:
            outside = max(glo[i] - g[i], g[i] - ghi[i], 0.0)
            if not outside <= slack * gm[i]:  # NaN: not feasible
                return False
    return True


@jit
def work(n, k, f):  # pragma: no cover - compiled
    """Return the arrays :func:`model_in` writes: ``k`` tree joints, ``f`` frames, ``n`` columns.

    The kinematics', the rows' scratch, the pose rows'.
    """
    S33, Sn = np.empty((6, 3, 3)), np.empty((2, 3, n))
    return (np.empty((k, 4, 4)), np.empty((f, 4, 4)), np.empty((f, 6, n)), np.empty((k, 3)),
            S33, Sn, np.empty(6), np.empty((6, n)), np.empty(3), np.empty((4, 4)))


@jit
def model(parents, placements, kinds, axes, columns, fparent, fplace, ctype, cfa, cfb,
          coff, params, cube, lo, hi, margin, x_margin, pose, pose_rows, ktype, kfa, kfb,
          koff, kparams, q, slack, g, J, glo, ghi, gm, grad, H):  # pragma: no cover
    """:func:`model_in` with its own :func:`work` arrays."""
    arrays = work(tangent_size(kinds, q.shape[0]), parents.shape[0], fparent.shape[0])
    return model_in(arrays, parents, placements, kinds, axes, columns, fparent, fplace,
                    ctype, cfa, cfb, coff, params, cube, lo, hi, margin, x_margin, pose,
                    pose_rows, ktype, kfa, kfb, koff, kparams, q, slack, g, J, glo, ghi, gm,
                    grad, H)


@jit
def model_in(arrays, parents, placements, kinds, axes, columns, fparent, fplace, ctype, cfa,
             cfb, coff, params, cube, lo, hi, margin, x_margin, pose, pose_rows, ktype, kfa,
             kfb, koff, kparams, q, slack, g, J, glo, ghi, gm, grad,
             H):  # pragma: no cover - compiled
    """Kinematics at ``q``, the rows (:func:`linearise`), the pose rows, the costs.

    ``pose``: the pose target's parameters (``_constraint_jit.weighted_pose_rows``; empty
    without one); its weighted rows ``pose_rows`` (indices into the six) follow the
    constraints' as equalities (bounds 0, margin 0).  Returns ``(feasible, cost)``:
    every physical row within ``slack`` margins of its bounds (:func:`feasible`) and
    the pose within its tolerances; the costs (``grad``, ``H``) are computed either way.
    ``arrays``: :func:`work`'s (nothing is allocated: a polishing step calls it).
    """
    oMi, oMf, Jf, waxes, S33, Sn, e, Je, w3, T = arrays
    kinematics(parents, placements, kinds, axes, columns, q, fparent, fplace, oMi, oMf, Jf,
               waxes)
    linearise(ctype, cfa, cfb, coff, params, cube, lo, hi, margin, x_margin, oMf, Jf,
              g, J, glo, ghi, gm, S33, Sn)
    ok = True
    if pose.shape[0]:
        ok = weighted_pose_rows(oMf, Jf, pose, e, Je, w3, T) <= 1.0
        first = g.shape[0] - pose_rows.shape[0]
        for i in range(pose_rows.shape[0]):
            g[first + i] = e[pose_rows[i]]
            for c in range(J.shape[1]):
                J[first + i, c] = Je[pose_rows[i], c]
            glo[first + i], ghi[first + i], gm[first + i] = 0.0, 0.0, 0.0
    # After the pose rows are written: ``feasible`` reads every row's margin (the pose
    # rows' 0 leaves them out; read before, they were uninitialised memory).
    total = costs(ktype, kfa, kfb, koff, kparams, oMf, Jf, q, grad, H, S33, Sn)
    return ok and feasible(g, glo, ghi, gm, slack), total


@jit
def cost_at(parents, placements, kinds, axes, columns, fparent, fplace, ktype, kfa, kfb,
            koff, kparams, q):  # pragma: no cover - compiled
    """Return the costs' sum at group vector ``q`` alone (:func:`costs` after kinematics).

    What choosing among projected starts needs (``polish.from_best_start``), without the
    rows, bounds and curvature :func:`model` also computes.
    """
    n = tangent_size(kinds, q.shape[0])
    arrays = work(n, parents.shape[0], fparent.shape[0])
    oMi, oMf, Jf, waxes, S33, Sn = arrays[:6]
    kinematics(parents, placements, kinds, axes, columns, q, fparent, fplace, oMi, oMf, Jf,
               waxes)
    return costs(ktype, kfa, kfb, koff, kparams, oMf, Jf, q, np.empty(n), np.empty((n, n)),
                 S33, Sn)


@jit
def unpack_costs(kints):  # pragma: no cover - compiled
    """Return the views ``(ktype, kfa, kfb, koff)`` of packed costs.

    ``kints``: their count ``c``, then ``c`` types, ``c`` frames A, ``c`` frames B, ``c + 1``
    offsets into the parameters.
    """
    c = kints[0]
    return kints[1:1 + c], kints[1 + c:1 + 2 * c], kints[1 + 2 * c:1 + 3 * c], \
        kints[1 + 3 * c:2 + 4 * c]


@jit
def cost_at_packed(ints, consts, kints, kparams, q):  # pragma: no cover - compiled
    """:func:`cost_at` on a packed layout and packed costs (:func:`unpack_costs`)."""
    t, k = layout_views(ints, consts), unpack_costs(kints)
    return cost_at(t[0], t[1], t[2], t[3], t[4], t[5], t[6], k[0], k[1], k[2], k[3], kparams,
                   q)
