"""The numba-compiled model of polishing (:mod:`polish_kernel`): QP rows and costs.

At one configuration: the kinematics of :mod:`_constraint_jit`, every constraint's
``linearisation`` rows (as the Python classes compute them: the physical rows within
their shrunk bounds, plus the cube rows of the angle bounds), whether the physical rows
hold (``polish._feasible``'s test), a pose target's rows (``Residuals.pose_rows``) and
the costs' value, gradient and Gauss-Newton curvature (``Residuals.cost_model``).
"""
import math

import numpy as np

from ros2_ik.core.solvers._chain_jit import _jit, _log3
from ros2_ik.core.solvers._constraint_lm_jit import _pose_rows
from ros2_ik.core.solvers._constraint_jit import (ANGLE, GAZE, ORIENTATION, POLYHEDRON,
                                                  POSITION, _angle, _point_row, _polyhedron,
                                                  _relative_rotation, _rotate, jlog3,
                                                  kinematics, point_in_frame)

#: Cost type codes (``polish_kernel``'s encoders).
POSTURE, POSITION_COST, ORIENTATION_COST, ANGLE_COST = range(4)


@_jit
def _orientation_rows(oMf, Jf, fa, fb, prm, g, J, out):  # pragma: no cover - compiled
    """``OrientationConstraint.linearisation``: ``w`` (3) then ``theta`` into rows ``out..``."""
    n = J.shape[1]
    R_AB, J_w, w, Jl = np.empty((3, 3)), np.empty((3, n)), np.empty(3), np.empty((3, 3))
    _relative_rotation(oMf, Jf, fa, prm[0:9].reshape(3, 3), fb, prm[9:18].reshape(3, 3),
                       R_AB, J_w)
    _log3(R_AB, w)
    theta = math.sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2])
    jlog3(R_AB, w, theta, Jl)
    for r in range(3):  # Jlog3 R_AB^T J_w
        g[out + r] = w[r]
        for c in range(n):
            s = 0.0
            for k in range(3):
                s += (Jl[r, 0] * R_AB[k, 0] + Jl[r, 1] * R_AB[k, 1]
                      + Jl[r, 2] * R_AB[k, 2]) * J_w[k, c]
            J[out + r, c] = s
    g[out + 3] = theta
    for c in range(n):
        J[out + 3, c] = ((w[0] * J_w[0, c] + w[1] * J_w[1, c] + w[2] * J_w[2, c]) / theta
                         if theta > 1e-12 else 0.0)


@_jit
def _gaze_cube(p, Jp, prm, g, J, out):  # pragma: no cover - compiled
    """``n x p / |p|`` (3) and its rows ``(3, n)`` at ``out``; inert rows when ``p`` = 0.

    ``prm``: ``p_AS`` (3), ``n_A`` (3).  Returns False when the rows are inert
    (``|p| < 1e-12``; the caller writes the bounds).
    """
    v = p - prm[0:3]
    nx, ny, nz = prm[3], prm[4], prm[5]
    norm = math.sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2])
    if norm < 1e-12:
        g[out:out + 3] = 0.0
        J[out:out + 3, :] = 0.0
        return False
    u = v / norm
    S = np.array(((0.0, -nz, ny), (nz, 0.0, -nx), (-ny, nx, 0.0)))
    P = np.empty((3, 3))
    for r in range(3):  # skew(n) (I - u u^T) / |p|
        for c in range(3):
            P[r, c] = (S[r, c] - (S[r, 0] * u[0] + S[r, 1] * u[1] + S[r, 2] * u[2]) * u[c]) \
                / norm
    for r in range(3):
        g[out + r] = S[r, 0] * u[0] + S[r, 1] * u[1] + S[r, 2] * u[2]
        for c in range(J.shape[1]):
            J[out + r, c] = P[r, 0] * Jp[0, c] + P[r, 1] * Jp[1, c] + P[r, 2] * Jp[2, c]
    return True


@_jit
def _angle_cube(oMf, Jf, fa, fb, prm, g, J, out):  # pragma: no cover - compiled
    """Write ``a x b`` (3) and ``(a b^T - c I) J_A + (c I - b a^T) J_B`` at rows ``out..``."""
    a, b = _rotate(oMf[fa], prm[0:3]), _rotate(oMf[fb], prm[3:6])
    c = a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
    axb = np.cross(a, b)
    for r in range(3):
        g[out + r] = axb[r]
        for col in range(J.shape[1]):
            s = -c * Jf[fa, 3 + r, col] + c * Jf[fb, 3 + r, col]
            for k in range(3):
                s += a[r] * b[k] * Jf[fa, 3 + k, col] - b[r] * a[k] * Jf[fb, 3 + k, col]
            J[out + r, col] = s


@_jit
def _bound_rows(lo, hi, margin, row, k, glo, ghi, gm, out):  # pragma: no cover - compiled
    """Copy ``k`` physical rows' shrunk bounds and margins from ``row`` to ``out``."""
    for i in range(k):
        glo[out + i], ghi[out + i], gm[out + i] = lo[row + i], hi[row + i], margin[row + i]


@_jit
def _cube_bounds(half, glo, ghi, gm, out):  # pragma: no cover - compiled
    """Bounds ``+-half`` of three cube rows (margin 0: not physical rows)."""
    for i in range(3):
        glo[out + i], ghi[out + i], gm[out + i] = -half, half, 0.0


@_jit
def linearise(ctype, cfa, cfb, coff, params, cube, lo, hi, margin, x_margin, oMf, Jf,
              g, J, glo, ghi, gm):  # pragma: no cover - compiled
    """Every constraint's linearisation rows into ``g``, ``J``, bounds ``glo``, ``ghi``.

    ``gm``: each row's margin [m or rad] when it is a physical row (its constraint's
    ``evaluate_physical``, ``polish._feasible``'s rows), 0 for the cube rows.  ``cube``
    (c,): whether an angle bound adds its cube rows.  Kinematics must be computed.
    """
    n = J.shape[1]
    p3, J3, W, TA, eye4 = (np.empty(3), np.empty((3, n)), np.empty((3, n)),
                           np.empty((4, 4)), np.eye(4))
    row, out = 0, 0
    for i in range(ctype.shape[0]):
        t, fa, fb, prm = ctype[i], cfa[i], cfb[i], params[coff[i]:coff[i + 1]]
        if t == ORIENTATION:
            _orientation_rows(oMf, Jf, fa, fb, prm, g, J, out)
            _cube_bounds(prm[18], glo, ghi, gm, out)
            glo[out + 3], ghi[out + 3], gm[out + 3] = -np.inf, prm[18], x_margin
            out += 4
        elif t == POSITION:
            point_in_frame(oMf, Jf, fa, prm[0:16].reshape(4, 4), fb, prm[16:19],
                           g[out:out + 3], J[out:out + 3], W, TA)
            _bound_rows(lo, hi, margin, row, 3, glo, ghi, gm, out)
            row, out = row + 3, out + 3
        elif t == POLYHEDRON:
            k = int(prm[1])
            _polyhedron(oMf, Jf, fa, fb, prm, g, J, out, eye4)
            _bound_rows(lo, hi, margin, row, k, glo, ghi, gm, out)
            row, out = row + k, out + k
        elif t == ANGLE:
            if cube[i]:
                _angle_cube(oMf, Jf, fa, fb, prm, g, J, out)
                _cube_bounds(math.sin(hi[row]), glo, ghi, gm, out)
                out += 3
            g[out] = _angle(oMf, Jf, fa, fb, prm, J[out])
            _bound_rows(lo, hi, margin, row, 1, glo, ghi, gm, out)
            row, out = row + 1, out + 1
        else:  # one row from a point seen in frame fa (gaze: after its cube rows)
            point_in_frame(oMf, Jf, fa, eye4, fb, prm[0:3], p3, J3, W, TA)
            if t == GAZE:
                if _gaze_cube(p3, J3, prm[3:9], g, J, out):
                    _cube_bounds(math.sin(hi[row]), glo, ghi, gm, out)
                else:  # |p| = 0: rows 0 dq within [-1, 1], always met
                    _cube_bounds(1.0, glo, ghi, gm, out)
                out += 3
            g[out] = _point_row(t, p3, J3, prm, J[out])
            _bound_rows(lo, hi, margin, row, 1, glo, ghi, gm, out)
            row, out = row + 1, out + 1


@_jit
def feasible(g, glo, ghi, gm, slack):  # pragma: no cover - compiled
    """Whether every physical row (``gm`` > 0) lies within ``slack * gm`` of its bounds."""
    for i in range(g.shape[0]):
        if gm[i] > 0.0:
            outside = max(glo[i] - g[i], g[i] - ghi[i], 0.0)
            if not outside <= slack * gm[i]:  # NaN: not feasible
                return False
    return True


@_jit
def costs(ktype, kfa, kfb, koff, kparams, oMf, Jf, q, grad, H):  # pragma: no cover
    """Costs at group vector ``q``: returns the sum; gradient ``grad`` (n,), curvature ``H``.

    Posture (per group column: continuous flag, nominal value or its (cos, sin),
    weight): ``1/2 w d^2`` with ``d`` pinocchio's difference.  Position (``p_AP`` (3),
    ``p_BQ`` (3), ``L^T`` (9) with ``C = L L^T / 2``): ``1/2 |L^T (p_AP - p_AQ)|^2``.
    These two add their Gauss-Newton curvature to ``H``; the orientation cost
    (``R_AbarA`` (9), ``R_BbarB`` (9), ``c``): ``c/2 (3 - tr R_AB)`` and the angle cost
    (``a_A`` (3), ``b_B`` (3), ``c``): ``c (1 - a . b)`` add their gradient only.
    """
    n = q.shape[0]
    grad[:] = 0.0
    H[:, :] = 0.0
    total = 0.0
    p, Jp, W, TA, eye4 = np.empty(3), np.empty((3, n)), np.empty((3, n)), np.empty((4, 4)), \
        np.eye(4)
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
            total += _orientation_cost(oMf, Jf, kfa[i], kfb[i], prm, grad)
        elif ktype[i] == ANGLE_COST:
            total += _angle_cost(oMf, Jf, kfa[i], kfb[i], prm, grad)
        else:
            point_in_frame(oMf, Jf, kfa[i], eye4, kfb[i], prm[3:6], p, Jp, W, TA)
            Lt = prm[6:15].reshape(3, 3)
            r, Jr = np.empty(3), np.empty((3, n))
            for k in range(3):
                r[k] = (Lt[k, 0] * (prm[0] - p[0]) + Lt[k, 1] * (prm[1] - p[1])
                        + Lt[k, 2] * (prm[2] - p[2]))
                for c in range(n):
                    Jr[k, c] = -(Lt[k, 0] * Jp[0, c] + Lt[k, 1] * Jp[1, c] + Lt[k, 2] * Jp[2, c])
            total += 0.5 * (r[0] * r[0] + r[1] * r[1] + r[2] * r[2])
            for a_ in range(n):
                grad[a_] += Jr[0, a_] * r[0] + Jr[1, a_] * r[1] + Jr[2, a_] * r[2]
                for b_ in range(n):
                    H[a_, b_] += Jr[0, a_] * Jr[0, b_] + Jr[1, a_] * Jr[1, b_] \
                        + Jr[2, a_] * Jr[2, b_]
    return total


@_jit
def _orientation_cost(oMf, Jf, fa, fb, prm, grad):  # pragma: no cover - compiled
    """``OrientationCost``: returns ``c/2 (3 - tr R_AB)``, adds its gradient to ``grad``."""
    n = grad.shape[0]
    R, J_w = np.empty((3, 3)), np.empty((3, n))
    _relative_rotation(oMf, Jf, fa, prm[0:9].reshape(3, 3), fb, prm[9:18].reshape(3, 3),
                       R, J_w)
    half_c = 0.5 * prm[18]
    r0, r1, r2 = R[1, 2] - R[2, 1], R[2, 0] - R[0, 2], R[0, 1] - R[1, 0]
    for c in range(n):
        grad[c] -= half_c * (r0 * J_w[0, c] + r1 * J_w[1, c] + r2 * J_w[2, c])
    return half_c * (3.0 - (R[0, 0] + R[1, 1] + R[2, 2]))


@_jit
def _angle_cost(oMf, Jf, fa, fb, prm, grad):  # pragma: no cover - compiled
    """``AngleBetweenVectorsCost``: returns ``c (1 - a . b)``, adds its gradient."""
    a, b = _rotate(oMf[fa], prm[0:3]), _rotate(oMf[fb], prm[3:6])
    axb = np.cross(a, b)
    c = prm[6]
    for col in range(grad.shape[0]):
        d = 0.0
        for k in range(3):
            d += axb[k] * (Jf[fa, 3 + k, col] - Jf[fb, 3 + k, col])
        grad[col] -= c * d
    return c * (1.0 - (a[0] * b[0] + a[1] * b[1] + a[2] * b[2]))


@_jit
def model(parents, placements, kinds, axes, columns, fparent, fplace, ctype, cfa, cfb,
          coff, params, cube, lo, hi, margin, x_margin, pose, pose_rows, ktype, kfa, kfb,
          koff, kparams, q, slack, g, J, glo, ghi, gm, grad, H):  # pragma: no cover
    """Kinematics at ``q``, the rows (:func:`linearise`), the pose rows, the costs.

    ``pose``: the pose target's parameters (``_constraint_lm_jit._pose_rows``; empty
    without one); its weighted rows ``pose_rows`` (indices into the six) follow the
    constraints' as equalities (bounds 0, margin 0).  Returns ``(feasible, cost)``:
    every physical row within ``slack`` margins of its bounds (:func:`feasible`) and
    the pose within its tolerances; the costs (``grad``, ``H``) are computed either way.
    """
    n, k, f = q.shape[0], parents.shape[0], fparent.shape[0]
    oMi, oMf, Jf = np.empty((k, 4, 4)), np.empty((f, 4, 4)), np.empty((f, 6, n))
    kinematics(parents, placements, kinds, axes, columns, q, fparent, fplace, oMi, oMf, Jf,
               np.empty((4, 4)), np.empty((3, 3)), np.empty((k, 3)))
    linearise(ctype, cfa, cfb, coff, params, cube, lo, hi, margin, x_margin, oMf, Jf,
              g, J, glo, ghi, gm)
    ok = True
    if pose.shape[0]:
        e, Je = np.empty(6), np.empty((6, n))
        ok = _pose_rows(oMf, Jf, pose, e, Je, np.empty(3), np.empty((4, 4))) <= 1.0
        first = g.shape[0] - pose_rows.shape[0]
        for i in range(pose_rows.shape[0]):
            g[first + i] = e[pose_rows[i]]
            J[first + i, :] = Je[pose_rows[i]]
            glo[first + i], ghi[first + i], gm[first + i] = 0.0, 0.0, 0.0
    # After the pose rows are written: ``feasible`` reads every row's margin (the pose
    # rows' 0 leaves them out; read before, they were uninitialised memory).
    total = costs(ktype, kfa, kfb, koff, kparams, oMf, Jf, q, grad, H)
    return ok and feasible(g, glo, ghi, gm, slack), total


@_jit
def cost_at(parents, placements, kinds, axes, columns, fparent, fplace, ktype, kfa, kfb,
            koff, kparams, q):  # pragma: no cover - compiled
    """Return the costs' sum at group vector ``q`` alone (:func:`costs` after kinematics).

    What choosing among projected starts needs (``polish.from_best_start``), without the
    rows, bounds and curvature :func:`model` also computes.
    """
    n, k, f = q.shape[0], parents.shape[0], fparent.shape[0]
    oMi, oMf, Jf = np.empty((k, 4, 4)), np.empty((f, 4, 4)), np.empty((f, 6, n))
    kinematics(parents, placements, kinds, axes, columns, q, fparent, fplace, oMi, oMf, Jf,
               np.empty((4, 4)), np.empty((3, 3)), np.empty((k, 3)))
    return costs(ktype, kfa, kfb, koff, kparams, oMf, Jf, q, np.empty(n), np.empty((n, n)))
