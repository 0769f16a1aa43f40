"""The numba-compiled functions of :mod:`constraint_kernel` (kinematics and rows).

Kinematics on the joint tree of the whole model (locked joints folded into fixed
placements), world placements and ``LOCAL_WORLD_ALIGNED`` Jacobians (6, n) of the few
frames the constraints name, then each constraint's physical rows [m or rad] with their
Jacobians, as the Python classes compute them (``evaluate_physical``; an orientation
bound as its excess vector, ``evaluate_excess``).  Plain loops on small arrays, as in
:mod:`_chain_jit`.  The LM attempt on these rows is in :mod:`_constraint_lm_jit`.
"""
import math

import numpy as np

from ros2_ik.core.solvers._chain_jit import _compose, _jit, _log3, _rotation

#: Constraint type codes (the order of ``constraint_kernel.TYPES``).
POSITION, ORIENTATION, GAZE, ANGLE, POINT_TO_POINT, POINT_TO_LINE, POLYHEDRON = range(7)
FIXED, REVOLUTE, PRISMATIC = 0, 1, 2


@_jit
def _mul3(A, B, out):  # pragma: no cover - compiled
    """``out = A @ B`` for ``A`` (3, 3) and ``B`` (3, k) (numba's ``@`` calls BLAS)."""
    for r in range(3):
        for c in range(B.shape[1]):
            out[r, c] = A[r, 0] * B[0, c] + A[r, 1] * B[1, c] + A[r, 2] * B[2, c]


@_jit
def _rotate(R, v):  # pragma: no cover - compiled
    """Return ``R[:3, :3] @ v`` (3,)."""
    out = np.empty(3)
    for r in range(3):
        out[r] = R[r, 0] * v[0] + R[r, 1] * v[1] + R[r, 2] * v[2]
    return out


@_jit
def kinematics(parents, placements, kinds, axes, columns, q, fparent, fplace, oMi, oMf,
               Jf, N, Rm, waxes):  # pragma: no cover - compiled
    """Joint placements ``oMi`` (k, 4, 4), frame placements ``oMf`` (f, 4, 4), Jacobians.

    ``Jf`` (f, 6, n): LOCAL_WORLD_ALIGNED (linear velocity of the frame origin, angular
    velocity, world axes) in group columns.  ``N`` (4, 4), ``Rm`` (3, 3) are scratch,
    ``waxes`` (k, 3) receives the joints' world axes.
    """
    for i in range(parents.shape[0]):
        if parents[i] < 0:
            N[:, :] = placements[i]
        else:
            _compose(oMi[parents[i]], placements[i], N)
        kind = kinds[i]
        a = axes[i]
        for r in range(3):
            waxes[i, r] = N[r, 0] * a[0] + N[r, 1] * a[1] + N[r, 2] * a[2]
        oMi[i, :, :] = N
        if kind == PRISMATIC:
            v = q[columns[i]]
            for r in range(3):
                oMi[i, r, 3] += waxes[i, r] * v
        elif kind == REVOLUTE:
            _rotation(a, q[columns[i]], Rm)
            for r in range(3):
                for c in range(3):
                    oMi[i, r, c] = N[r, 0] * Rm[0, c] + N[r, 1] * Rm[1, c] + N[r, 2] * Rm[2, c]
    for f in range(fparent.shape[0]):
        _frame(parents, kinds, columns, oMi, waxes, fparent[f], fplace[f], oMf[f], Jf[f])


@_jit
def _frame(parents, kinds, columns, oMi, waxes, p, place, T, J):  # pragma: no cover
    """Placement ``T`` (4, 4) of a frame on tree joint ``p`` (-1: the world), Jacobian ``J``."""
    J[:, :] = 0.0
    if p < 0:
        T[:, :] = place
        return
    _compose(oMi[p], place, T)
    j = p
    while j >= 0:
        if kinds[j] != FIXED:
            c = columns[j]
            ax, ay, az = waxes[j, 0], waxes[j, 1], waxes[j, 2]
            if kinds[j] == PRISMATIC:
                J[0, c], J[1, c], J[2, c] = ax, ay, az
            else:
                dx, dy, dz = T[0, 3] - oMi[j, 0, 3], T[1, 3] - oMi[j, 1, 3], T[2, 3] - oMi[j, 2, 3]
                J[0, c], J[1, c], J[2, c] = ay * dz - az * dy, az * dx - ax * dz, ax * dy - ay * dx
                J[3, c], J[4, c], J[5, c] = ax, ay, az
        j = parents[j]


@_jit
def _point_jacobian_add(J, T, p, sign, out):  # pragma: no cover - compiled
    """``out += sign * (v + w x (p - origin))`` of frame Jacobian ``J`` (6, n) at point p."""
    rx, ry, rz = p[0] - T[0, 3], p[1] - T[1, 3], p[2] - T[2, 3]
    for c in range(J.shape[1]):
        wx, wy, wz = J[3, c], J[4, c], J[5, c]
        out[0, c] += sign * (J[0, c] + wy * rz - wz * ry)
        out[1, c] += sign * (J[1, c] + wz * rx - wx * rz)
        out[2, c] += sign * (J[2, c] + wx * ry - wy * rx)


@_jit
def point_in_frame(oMf, Jf, fa, XA, fb, pB, p_out, J_out, W, TA):  # pragma: no cover
    """``p_AQ`` (3,) [m] of Q fixed in frame ``fb`` at ``pB``, seen in A, and ``(3, n)``.

    A is frame ``fa`` offset by ``XA`` (4, 4).  ``W`` (3, n) and ``TA`` (4, 4) are scratch.
    """
    TB = oMf[fb]
    px = TB[0, 0] * pB[0] + TB[0, 1] * pB[1] + TB[0, 2] * pB[2] + TB[0, 3]
    py = TB[1, 0] * pB[0] + TB[1, 1] * pB[1] + TB[1, 2] * pB[2] + TB[1, 3]
    pz = TB[2, 0] * pB[0] + TB[2, 1] * pB[1] + TB[2, 2] * pB[2] + TB[2, 3]
    pw = np.array((px, py, pz))
    W[:, :] = 0.0
    _point_jacobian_add(Jf[fb], TB, pw, 1.0, W)
    _point_jacobian_add(Jf[fa], oMf[fa], pw, -1.0, W)  # zero when A is fixed in the world
    _compose(oMf[fa], XA, TA)
    for r in range(3):  # R_WA^T (p_WQ - p_WA), R_WA^T W
        p_out[r] = (TA[0, r] * (px - TA[0, 3]) + TA[1, r] * (py - TA[1, 3])
                    + TA[2, r] * (pz - TA[2, 3]))
        for c in range(W.shape[1]):
            J_out[r, c] = TA[0, r] * W[0, c] + TA[1, r] * W[1, c] + TA[2, r] * W[2, c]


@_jit
def jlog3(R, w, theta, out):  # pragma: no cover - compiled
    """Pinocchio's ``Jlog3(R)`` (3, 3) into ``out``; ``w`` = log3(R), ``theta`` = |w|."""
    t2 = theta * theta
    if theta < 1e-4:
        alpha = 1.0 / 12.0 + t2 / 720.0
        diag = 0.5 * (2.0 - t2 / 6.0)
    else:
        st, ct = math.sin(theta), math.cos(theta)
        st_1mct = st / (1.0 - ct)
        alpha = 1.0 / t2 - st_1mct / (2.0 * theta)
        diag = 0.5 * theta * st_1mct
    for r in range(3):
        for c in range(3):
            out[r, c] = alpha * w[r] * w[c]
        out[r, r] += diag
    out[0, 1] -= 0.5 * w[2]
    out[0, 2] += 0.5 * w[1]
    out[1, 0] += 0.5 * w[2]
    out[1, 2] -= 0.5 * w[0]
    out[2, 0] -= 0.5 * w[1]
    out[2, 1] += 0.5 * w[0]


@_jit
def _relative_rotation(oMf, Jf, fa, RA, fb, RB, R_AB, J_w):  # pragma: no cover - compiled
    """``R_AB`` (3, 3) and ``J_w`` (3, n): the Jacobian of ``w_AB`` expressed in A."""
    RWA, RWB = np.empty((3, 3)), np.empty((3, 3))
    _mul3(oMf[fa], RA, RWA)
    _mul3(oMf[fb], RB, RWB)
    for r in range(3):
        for c in range(3):
            R_AB[r, c] = RWA[0, r] * RWB[0, c] + RWA[1, r] * RWB[1, c] + RWA[2, r] * RWB[2, c]
    JA, JB = Jf[fa], Jf[fb]
    for r in range(3):
        for c in range(J_w.shape[1]):
            s = 0.0
            for k in range(3):
                s += RWA[k, r] * (JB[3 + k, c] - JA[3 + k, c])
            J_w[r, c] = s


@_jit
def orientation_excess(oMf, Jf, fa, fb, prm, e, Je):  # pragma: no cover - compiled
    """``OrientationConstraint.evaluate_excess``: rotation beyond the bound (3,) [rad], (3, n).

    ``prm``: ``R_AbarA`` (9), ``R_BbarB`` (9), the bound [rad].  Returns ``|e|`` [rad].
    """
    n = Je.shape[1]
    R_AB, J_w, w = np.empty((3, 3)), np.empty((3, n)), np.empty(3)
    _relative_rotation(oMf, Jf, fa, prm[0:9].reshape(3, 3), fb, prm[9:18].reshape(3, 3),
                       R_AB, J_w)
    bound = prm[18]
    _log3(R_AB, w)
    theta = math.sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2])
    e[:] = 0.0
    if theta <= bound:
        Je[:, :] = 0.0
        return 0.0
    if theta < 1e-12:  # beyond a bound below 0 (a bound of 0, shrunk): no axis yet
        Je[:, :] = J_w  # the derivative of w at R_AB = I
        return 0.0
    Jl = np.empty((3, 3))
    jlog3(R_AB, w, theta, Jl)
    M, J_log = np.empty((3, 3)), np.empty((3, n))
    _mul3(Jl, R_AB.T, M)
    _mul3(M, J_w, J_log)
    s = 1.0 - bound / theta
    for r in range(3):
        e[r] = w[r] * s
    for c in range(n):
        proj = (w[0] * J_log[0, c] + w[1] * J_log[1, c] + w[2] * J_log[2, c]) / theta
        for r in range(3):
            Je[r, c] = s * J_log[r, c] + (1.0 - s) * (w[r] / theta) * proj
    return math.sqrt(e[0] * e[0] + e[1] * e[1] + e[2] * e[2])


@_jit
def _perpendicular(n, out):  # pragma: no cover - compiled
    """Write a unit vector perpendicular to ``n`` into ``out``, as ``_frames.perpendicular``."""
    k = 0
    for i in range(1, 3):
        if abs(n[i]) < abs(n[k]):
            k = i
    e = np.zeros(3)
    e[k] = 1.0
    v = np.cross(n, e)
    out[:] = v / math.sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2])


@_jit
def _row_from(grad, J, g_row):  # pragma: no cover - compiled
    """``g_row = grad @ J`` for ``grad`` (3,) and ``J`` (3, n)."""
    for c in range(J.shape[1]):
        g_row[c] = grad[0] * J[0, c] + grad[1] * J[1, c] + grad[2] * J[2, c]


@_jit
def _norm_row(d, J, away, Jrow):  # pragma: no cover - compiled
    """``|d|`` [m] and its row ``(d / |d|) @ J`` (``away`` at d = 0)."""
    norm = math.sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2])
    direction = d / norm if norm > 1e-12 else away
    _row_from(direction, J, Jrow)
    return norm


@_jit
def _gaze(p, J, prm, Jrow):  # pragma: no cover - compiled
    """``GazeTargetConstraint.evaluate_physical`` from ``p_AT`` (3,), (3, n)."""
    pv = p - prm[0:3]
    n = prm[3:6]
    pxn = np.cross(pv, n)
    s = math.sqrt(pxn[0] ** 2 + pxn[1] ** 2 + pxn[2] ** 2)
    c, pp = pv[0] * n[0] + pv[1] * n[1] + pv[2] * n[2], pv[0] ** 2 + pv[1] ** 2 + pv[2] ** 2
    alpha = math.atan2(s, c)
    if pp < 1e-24:
        Jrow[:] = 0.0
    elif s > 1e-12 * math.sqrt(pp):
        _row_from((c * np.cross(n, pxn) / s - s * n) / pp, J, Jrow)
    elif c < 0.0:
        _row_from(-prm[6:9] / math.sqrt(pp), J, Jrow)
    else:
        Jrow[:] = 0.0
    return alpha


@_jit
def _angle(oMf, Jf, fa, fb, prm, Jrow):  # pragma: no cover - compiled
    """``AngleBetweenVectorsConstraint.evaluate_physical``: the angle [rad], its row."""
    a, b = _rotate(oMf[fa], prm[0:3]), _rotate(oMf[fb], prm[3:6])
    J_w = Jf[fa, 3:6, :] - Jf[fb, 3:6, :]
    axb = np.cross(a, b)
    s = math.sqrt(axb[0] ** 2 + axb[1] ** 2 + axb[2] ** 2)
    c = a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
    if s > 1e-9:
        _row_from(axb * (-1.0 / s), J_w, Jrow)
    else:
        e = np.empty(3)
        _perpendicular(a, e)
        _row_from(e if c > 0.0 else -e, J_w, Jrow)
    return math.atan2(s, c)


@_jit
def _polyhedron(oMf, Jf, fa, fb, prm, g, Jg, row, eye4):  # pragma: no cover - compiled
    """``PolyhedronConstraint.evaluate_physical`` into rows ``row..row+k`` of ``g``, ``Jg``.

    ``prm``: N, k, ``p_GP`` (3N, point by point), ``A`` (k, 3N), 1/|A_i| (k).
    """
    n_pts, k, n = int(prm[0]), int(prm[1]), Jg.shape[1]
    pts, A, inv = prm[2:2 + 3 * n_pts], prm[2 + 3 * n_pts:2 + 3 * n_pts + 3 * k * n_pts], \
        prm[2 + 3 * n_pts + 3 * k * n_pts:2 + 3 * n_pts + 3 * k * n_pts + k]
    pos, J = np.empty(3 * n_pts), np.empty((3 * n_pts, n))
    p3, J3, W, TA = np.empty(3), np.empty((3, n)), np.empty((3, n)), np.empty((4, 4))
    for i in range(n_pts):
        point_in_frame(oMf, Jf, fa, eye4, fb, pts[3 * i:3 * i + 3], p3, J3, W, TA)
        pos[3 * i:3 * i + 3] = p3
        J[3 * i:3 * i + 3, :] = J3
    for r in range(k):
        s = 0.0
        for j in range(3 * n_pts):
            s += A[r * 3 * n_pts + j] * pos[j]
        g[row + r] = s * inv[r]
        for c in range(n):
            s = 0.0
            for j in range(3 * n_pts):
                s += A[r * 3 * n_pts + j] * J[j, c]
            Jg[row + r, c] = s * inv[r]


@_jit
def rows(ctype, cfa, cfb, coff, params, oMf, Jf, g, Jg, xe, xJ, eye4):  # pragma: no cover
    """Every constraint's physical rows into ``g`` (m,), ``Jg`` (m, n); excesses into ``xe``.

    Row constraints fill ``g`` in order; orientation bounds fill ``xe`` (3 per bound), ``xJ``.
    Returns the largest excess norm [rad] (0 without orientation bounds).
    """
    n = Jg.shape[1]
    p3, J3, W, TA = np.empty(3), np.empty((3, n)), np.empty((3, n)), np.empty((4, 4))
    row, xrow, worst = 0, 0, 0.0
    for i in range(ctype.shape[0]):
        t, fa, fb, prm = ctype[i], cfa[i], cfb[i], params[coff[i]:coff[i + 1]]
        if t == ORIENTATION:
            x = orientation_excess(oMf, Jf, fa, fb, prm, xe[xrow:xrow + 3],
                                   xJ[xrow:xrow + 3])
            worst = max(worst, x)
            xrow += 3
        elif t == ANGLE:
            g[row] = _angle(oMf, Jf, fa, fb, prm, Jg[row])
            row += 1
        elif t == POLYHEDRON:
            _polyhedron(oMf, Jf, fa, fb, prm, g, Jg, row, eye4)
            row += int(prm[1])
        elif t == POSITION:
            point_in_frame(oMf, Jf, fa, prm[0:16].reshape(4, 4), fb, prm[16:19],
                           g[row:row + 3], Jg[row:row + 3], W, TA)
            row += 3
        else:  # one row from a point seen in frame fa
            point_in_frame(oMf, Jf, fa, eye4, fb, prm[0:3], p3, J3, W, TA)
            g[row] = _point_row(t, p3, J3, prm, Jg[row])
            row += 1
    return worst


@_jit
def _point_row(t, p, J, prm, Jrow):  # pragma: no cover - compiled
    """Return the row [m or rad] of a gaze or distance constraint at point ``p`` (3,)."""
    if t == GAZE:
        return _gaze(p, J, prm[3:], Jrow)
    if t == POINT_TO_POINT:
        return _norm_row(p - prm[3:6], J, np.array((1.0, 0.0, 0.0)), Jrow)
    P = prm[6:15].reshape(3, 3)  # point to line: the projection off the line
    PJ = np.empty_like(J)
    _mul3(P, J, PJ)
    return _norm_row(_rotate(P, p - prm[3:6]), PJ, prm[15:18], Jrow)
