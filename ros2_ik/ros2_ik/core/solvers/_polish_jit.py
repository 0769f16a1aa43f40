"""The numba-compiled model of polishing (:mod:`polish_kernel`): QP rows and costs.

At one configuration: the kinematics of :mod:`_constraint_jit`, every constraint's
``linearisation`` rows (``_dispatch_jit.linearise``: each type's from its own file),
whether the physical rows hold (``polish._feasible``'s test), a pose target's rows
(``Residuals.pose_rows``) and the costs' value, gradient and Gauss-Newton curvature
(``Residuals.cost_model``).
"""
import math

import numpy as np

from ros2_ik.core.constraints._compiled import world_vectors
from ros2_ik.core.solvers._chain_jit import jit
from ros2_ik.core.solvers._constraint_jit import (kinematics, layout_views, point_in_frame,
                                                  rotations, weighted_pose_rows)
from ros2_ik.core.solvers._dispatch_jit import linearise

#: Cost type codes (``polish_kernel``'s encoders).
POSTURE, POSITION_COST, ORIENTATION_COST, ANGLE_COST = range(4)
#: The error :func:`costs` raises on a cost type code it has no formula for.
UNKNOWN_COST = "unknown cost type code in a compiled problem"


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
def costs(ktype, kfa, kfb, koff, kparams, oMf, Jf, q, grad, H, S33,
          Sn):  # pragma: no cover - compiled
    """Costs at group vector ``q``: returns the sum; gradient ``grad`` (n,), curvature ``H``.

    Posture (per group column: continuous flag, nominal value or its (cos, sin),
    weight): ``1/2 w d^2`` with ``d`` pinocchio's difference.  Position (``p_AP`` (3),
    ``p_BQ`` (3), ``L^T`` (9) with ``C = L L^T / 2``): ``1/2 |L^T (p_AP - p_AQ)|^2``.
    These two add their Gauss-Newton curvature to ``H``; the orientation cost
    (``R_AbarA`` (9), ``R_BbarB`` (9), ``c``): ``c/2 (3 - tr R_AB)`` and the angle cost
    (``a_A`` (3), ``b_B`` (3), ``c``): ``c (1 - a . b)`` add their gradient only.
    ``S33``, ``Sn``: :func:`work`'s scratch.  Raises ValueError (:data:`UNKNOWN_COST`)
    on a cost type code it does not know.
    """
    n = q.shape[0]
    grad[:] = 0.0
    H[:, :] = 0.0
    total = 0.0
    p, r, Jp, Jr = S33[5, 2], S33[5, 1], Sn[0], Sn[1]
    for i in range(ktype.shape[0]):
        prm = kparams[koff[i]:koff[i + 1]]
        if ktype[i] == POSTURE:
            for j in range(n):
                cont, a, b, w = prm[4 * j], prm[4 * j + 1], prm[4 * j + 2], prm[4 * j + 3]
                if cont:
                    c1, s1 = math.cos(q[j]), math.sin(q[j])
                    d = math.atan2(a * s1 - b * c1, a * c1 + b * s1)
                else:
                    d = q[j] - a
                total += 0.5 * w * d * d
                grad[j] += w * d
                H[j, j] += w
        elif ktype[i] == ORIENTATION_COST:
            total += _orientation_cost(oMf, Jf, kfa[i], kfb[i], prm, grad, S33)
        elif ktype[i] == ANGLE_COST:
            total += _angle_cost(oMf, Jf, kfa[i], kfb[i], prm, grad, S33)
        elif ktype[i] == POSITION_COST:
            point_in_frame(oMf, Jf, kfa[i], kfb[i], prm, -1, 3, p, Jp, 0)
            for k in range(3):  # L^T rows at prm[6 + 3 k]
                L0, L1, L2 = prm[6 + 3 * k], prm[7 + 3 * k], prm[8 + 3 * k]
                r[k] = L0 * (prm[0] - p[0]) + L1 * (prm[1] - p[1]) + L2 * (prm[2] - p[2])
                for c in range(n):
                    Jr[k, c] = -(L0 * Jp[0, c] + L1 * Jp[1, c] + L2 * Jp[2, c])
            total += 0.5 * (r[0] * r[0] + r[1] * r[1] + r[2] * r[2])
            for a_ in range(n):
                grad[a_] += Jr[0, a_] * r[0] + Jr[1, a_] * r[1] + Jr[2, a_] * r[2]
                for b_ in range(n):
                    H[a_, b_] += Jr[0, a_] * Jr[0, b_] + Jr[1, a_] * Jr[1, b_] \
                        + Jr[2, a_] * Jr[2, b_]
        else:
            raise ValueError(UNKNOWN_COST)
    return total


@jit
def _orientation_cost(oMf, Jf, fa, fb, prm, grad, S):  # pragma: no cover - compiled
    """``OrientationCost``: returns ``c/2 (3 - tr R_AB)``, adds its gradient to ``grad``.

    ``S`` (6, 3, 3): scratch; the gradient on ``J_w = R_WA^T (w_B - w_A)``.
    """
    rotations(oMf, fa, fb, prm, S)
    RWA, R = S[0], S[2]
    half_c = 0.5 * prm[18]
    r0, r1, r2 = R[1, 2] - R[2, 1], R[2, 0] - R[0, 2], R[0, 1] - R[1, 0]
    JA, JB = Jf[fa], Jf[fb]
    for c in range(grad.shape[0]):
        d0, d1, d2 = JB[3, c] - JA[3, c], JB[4, c] - JA[4, c], JB[5, c] - JA[5, c]
        j0 = RWA[0, 0] * d0 + RWA[1, 0] * d1 + RWA[2, 0] * d2
        j1 = RWA[0, 1] * d0 + RWA[1, 1] * d1 + RWA[2, 1] * d2
        j2 = RWA[0, 2] * d0 + RWA[1, 2] * d1 + RWA[2, 2] * d2
        grad[c] -= half_c * (r0 * j0 + r1 * j1 + r2 * j2)
    return half_c * (3.0 - (R[0, 0] + R[1, 1] + R[2, 2]))


@jit
def _angle_cost(oMf, Jf, fa, fb, prm, grad, S):  # pragma: no cover - compiled
    """``AngleBetweenVectorsCost``: returns ``c (1 - a . b)``, adds its gradient.

    ``S`` (6, 3, 3): scratch.
    """
    dot = world_vectors(oMf, fa, fb, prm, S)
    a, b = S[5, 0], S[5, 1]
    x0, x1, x2 = a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]
    c = prm[6]
    for col in range(grad.shape[0]):
        d = (x0 * (Jf[fa, 3, col] - Jf[fb, 3, col]) + x1 * (Jf[fa, 4, col] - Jf[fb, 4, col])
             + x2 * (Jf[fa, 5, col] - Jf[fb, 5, col]))
        grad[col] -= c * d
    return c * (1.0 - dot)


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
    arrays = work(q.shape[0], parents.shape[0], fparent.shape[0])
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
    n = q.shape[0]
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
