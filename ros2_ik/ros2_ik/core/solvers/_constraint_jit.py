"""The numba-compiled functions of :mod:`constraint_kernel` (packed layout and rows).

On the world placements and ``LOCAL_WORLD_ALIGNED`` Jacobians (6, n) of the few frames
the constraints name, which :func:`kinematics` (:mod:`ros2_ik.core.kinematics.forward`)
computes on the joint tree of the whole model (locked joints folded into fixed
placements): each constraint's physical rows [m or rad] with their Jacobians, as the
Python classes compute them (``evaluate_physical``; an orientation bound as its excess
vector, ``evaluate_excess``), and a pose target's weighted rows (shared by the LM attempt
and polishing).  Plain loops on small arrays, as in :mod:`ros2_ik.core.kinematics.forward`.
The LM attempt on these rows is in :mod:`_constraint_lm_jit`.
"""
import math

import numpy as np

from ros2_ik.core.kinematics.jit import jit
from ros2_ik.core.kinematics.lie import compose, log3, log3_at, log_map

#: Constraint type codes (the order of ``constraint_kernel.TYPES``).
POSITION, ORIENTATION, GAZE, ANGLE, POINT_TO_POINT, POINT_TO_LINE, POLYHEDRON = range(7)
#: The error a kernel raises on a type code it has no formula for (an encoder and these
#: codes disagree): never another type's rows in its place.
UNKNOWN_TYPE = "unknown constraint type code in a compiled problem"


#: Entries before the arrays in a packed problem's integers (:func:`unpack`): tree
#: joints k, frames f, constraints c, rows m, orientation bounds, parameters, pose
#: parameters (0 or 65), physical bounds.
HEADER = 8


@jit
def layout_views(ints, consts):  # pragma: no cover - compiled
    """Return the views of a packed layout (``constraint_kernel.Layout``).

    ``ints``: :data:`HEADER` then parents, kinds, columns (k each), fparent (f), ctype,
    cfa, cfb (c each), coff, poff (c + 1 each), each row's unit (m: 1 for [rad], 0 for
    [m]); ``consts``: placements (k, 4, 4), axes
    (k, 3), fplace (f, 4, 4).  Returns ``(parents, placements, kinds, axes, columns,
    fparent, fplace, ctype, cfa, cfb, coff, poff)``.
    """
    k, f, c = ints[0], ints[1], ints[2]
    o = HEADER
    parents, kinds, columns = ints[o:o + k], ints[o + k:o + 2 * k], ints[o + 2 * k:o + 3 * k]
    o += 3 * k
    fparent = ints[o:o + f]
    o += f
    ctype, cfa, cfb = ints[o:o + c], ints[o + c:o + 2 * c], ints[o + 2 * c:o + 3 * c]
    o += 3 * c
    return (parents, consts[:16 * k].reshape((k, 4, 4)), kinds,
            consts[16 * k:19 * k].reshape((k, 3)), columns, fparent,
            consts[19 * k:19 * k + 16 * f].reshape((f, 4, 4)), ctype, cfa, cfb,
            ints[o:o + c + 1], ints[o + c + 1:o + 2 * c + 2])


@jit
def value_views(ints, values):  # pragma: no cover - compiled
    """Return the views of a problem's packed floats (``constraint_kernel.Compiled``).

    ``values``: the orientation bounds' margin [rad], the rows' margin in metres [m],
    params, the row constraints' physical lower and upper bounds (m each), pose, phys.
    Returns ``(params, lower, upper, pose, phys, margin_rad, margin_m)``.
    """
    m, npar, npose = ints[3], ints[5], ints[6]
    v = 2 + npar
    e = v + 2 * m
    return (values[2:v], values[v:v + m], values[v + m:e], values[e:e + npose],
            values[e + npose:], values[0], values[1])


@jit
def shrunk(ints, values):  # pragma: no cover - compiled
    """Return the row constraints' shrunk bounds and margins ``(lo, hi, margin)`` (m,) each.

    Each row's bounds moved inward by its margin, the packed margin of its unit (the
    layout's unit flags, after ``poff``: 1 for [rad]), as ``Residuals.row_lower``.
    """
    m = ints[3]
    units = ints[ints.shape[0] - m:]
    _, lower, upper, _, _, margin_rad, margin_m = value_views(ints, values)
    lo, hi, margin = np.empty(m), np.empty(m), np.empty(m)
    for i in range(m):
        g = margin_rad if units[i] else margin_m
        lo[i], hi[i], margin[i] = lower[i] + g, upper[i] - g, g
    return lo, hi, margin


@jit
def point_in_frame(oMf, Jf, fa, fb, prm, xo, po, p_out, J_out, r0):  # pragma: no cover
    """``p_AQ`` [m] of Q fixed in frame ``fb`` at ``prm[po:po + 3]``, seen in A, its Jacobian.

    Into ``p_out[r0:r0 + 3]`` and ``J_out[r0:r0 + 3]`` (3, n).  A is frame ``fa`` offset
    by the (4, 4) stored row by row at ``prm[xo:xo + 16]`` (``xo < 0``: no offset).
    ``J = R_WA^T (v_Q_B - v_Q_A)``: the velocity of Q fixed in B minus that of the point
    of A at Q (zero when A is fixed in the world), each ``v + w x (p_WQ - p_WF)``.  By
    index, without scratch arrays or views (:func:`kinematics`).
    """
    bx, by, bz = prm[po], prm[po + 1], prm[po + 2]
    px = oMf[fb, 0, 0] * bx + oMf[fb, 0, 1] * by + oMf[fb, 0, 2] * bz + oMf[fb, 0, 3]
    py = oMf[fb, 1, 0] * bx + oMf[fb, 1, 1] * by + oMf[fb, 1, 2] * bz + oMf[fb, 1, 3]
    pz = oMf[fb, 2, 0] * bx + oMf[fb, 2, 1] * by + oMf[fb, 2, 2] * bz + oMf[fb, 2, 3]
    R00, R01, R02 = oMf[fa, 0, 0], oMf[fa, 0, 1], oMf[fa, 0, 2]  # R_WA, p_WA: frame fa,
    R10, R11, R12 = oMf[fa, 1, 0], oMf[fa, 1, 1], oMf[fa, 1, 2]  # then its offset
    R20, R21, R22 = oMf[fa, 2, 0], oMf[fa, 2, 1], oMf[fa, 2, 2]
    tx, ty, tz = oMf[fa, 0, 3], oMf[fa, 1, 3], oMf[fa, 2, 3]
    if xo >= 0:
        X = prm[xo:xo + 16]
        tx, ty, tz = (tx + R00 * X[3] + R01 * X[7] + R02 * X[11],
                      ty + R10 * X[3] + R11 * X[7] + R12 * X[11],
                      tz + R20 * X[3] + R21 * X[7] + R22 * X[11])
        R00, R01, R02 = (R00 * X[0] + R01 * X[4] + R02 * X[8], R00 * X[1] + R01 * X[5]
                         + R02 * X[9], R00 * X[2] + R01 * X[6] + R02 * X[10])
        R10, R11, R12 = (R10 * X[0] + R11 * X[4] + R12 * X[8], R10 * X[1] + R11 * X[5]
                         + R12 * X[9], R10 * X[2] + R11 * X[6] + R12 * X[10])
        R20, R21, R22 = (R20 * X[0] + R21 * X[4] + R22 * X[8], R20 * X[1] + R21 * X[5]
                         + R22 * X[9], R20 * X[2] + R21 * X[6] + R22 * X[10])
    dx, dy, dz = px - tx, py - ty, pz - tz
    p_out[r0] = R00 * dx + R10 * dy + R20 * dz
    p_out[r0 + 1] = R01 * dx + R11 * dy + R21 * dz
    p_out[r0 + 2] = R02 * dx + R12 * dy + R22 * dz
    bx, by, bz = px - oMf[fb, 0, 3], py - oMf[fb, 1, 3], pz - oMf[fb, 2, 3]  # Q - B, Q - A
    ax, ay, az = px - oMf[fa, 0, 3], py - oMf[fa, 1, 3], pz - oMf[fa, 2, 3]
    for c in range(Jf.shape[2]):
        wx, wy, wz = Jf[fb, 3, c], Jf[fb, 4, c], Jf[fb, 5, c]
        ux, uy, uz = Jf[fa, 3, c], Jf[fa, 4, c], Jf[fa, 5, c]
        w0 = Jf[fb, 0, c] + wy * bz - wz * by - (Jf[fa, 0, c] + uy * az - uz * ay)
        w1 = Jf[fb, 1, c] + wz * bx - wx * bz - (Jf[fa, 1, c] + uz * ax - ux * az)
        w2 = Jf[fb, 2, c] + wx * by - wy * bx - (Jf[fa, 2, c] + ux * ay - uy * ax)
        J_out[r0, c] = R00 * w0 + R10 * w1 + R20 * w2
        J_out[r0 + 1, c] = R01 * w0 + R11 * w1 + R21 * w2
        J_out[r0 + 2, c] = R02 * w0 + R12 * w1 + R22 * w2


@jit
def rotations(oMf, fa, fb, prm, S):  # pragma: no cover - compiled
    """``R_WA``, ``R_WB`` and ``R_AB = R_WA^T R_WB`` into ``S[0]``, ``S[1]``, ``S[2]``.

    ``prm``: ``R_AbarA`` then ``R_BbarB`` (9 each, row by row), the offsets of A and B
    from frames ``fa`` and ``fb``.  By index (:func:`kinematics`).
    """
    for r in range(3):
        for c in range(3):
            S[0, r, c] = (oMf[fa, r, 0] * prm[c] + oMf[fa, r, 1] * prm[3 + c]
                          + oMf[fa, r, 2] * prm[6 + c])
            S[1, r, c] = (oMf[fb, r, 0] * prm[9 + c] + oMf[fb, r, 1] * prm[12 + c]
                          + oMf[fb, r, 2] * prm[15 + c])
    for r in range(3):
        for c in range(3):
            S[2, r, c] = (S[0, 0, r] * S[1, 0, c] + S[0, 1, r] * S[1, 1, c]
                          + S[0, 2, r] * S[1, 2, c])


@jit
def orientation_excess(oMf, Jf, fa, fb, prm, xe, xJ, r0, S):  # pragma: no cover - compiled
    """``OrientationConstraint.evaluate_excess``: rotation beyond the bound [rad] and (3, n).

    Into rows ``r0..r0+2`` of ``xe``, ``xJ``.  ``prm``: ``R_AbarA`` (9), ``R_BbarB`` (9),
    the bound [rad].  ``S`` (6, 3, 3) is scratch.  Returns ``|e|`` [rad].  The Jacobian
    of ``w = log3(R_AB)`` is ``Jlog3 R_AB^T R_WA^T (w_B - w_A)`` (world angular
    velocities): one 3x3 map ``M`` (``S[4]``) applied column by column, no (3, n)
    temporaries.  By index (:func:`kinematics`).
    """
    rotations(oMf, fa, fb, prm, S)
    bound = prm[18]
    wx, wy, wz, _ = log3_at(S, 2)
    theta = math.sqrt(wx * wx + wy * wy + wz * wz)
    n = xJ.shape[1]
    for r in range(r0, r0 + 3):
        xe[r] = 0.0
    if theta <= bound:
        for r in range(r0, r0 + 3):
            for c in range(n):
                xJ[r, c] = 0.0
        return 0.0
    if theta < 1e-12:  # beyond a bound below 0 (a bound of 0, shrunk): no axis yet
        for r in range(3):  # the derivative of w at R_AB = I: R_WA^T; e stays 0
            for c in range(3):
                S[4, r, c] = S[0, c, r]
        s, ux, uy, uz = 1.0, 0.0, 0.0, 0.0
    else:
        log_map(wx, wy, wz, theta, S)
        s = 1.0 - bound / theta
        ux, uy, uz = wx / theta, wy / theta, wz / theta
        xe[r0], xe[r0 + 1], xe[r0 + 2] = wx * s, wy * s, wz * s
    for c in range(n):  # (s (I - u u^T) + u u^T) M (w_B - w_A)
        d0 = Jf[fb, 3, c] - Jf[fa, 3, c]
        d1 = Jf[fb, 4, c] - Jf[fa, 4, c]
        d2 = Jf[fb, 5, c] - Jf[fa, 5, c]
        l0 = S[4, 0, 0] * d0 + S[4, 0, 1] * d1 + S[4, 0, 2] * d2
        l1 = S[4, 1, 0] * d0 + S[4, 1, 1] * d1 + S[4, 1, 2] * d2
        l2 = S[4, 2, 0] * d0 + S[4, 2, 1] * d1 + S[4, 2, 2] * d2
        proj = (1.0 - s) * (ux * l0 + uy * l1 + uz * l2)
        xJ[r0, c] = s * l0 + ux * proj
        xJ[r0 + 1, c] = s * l1 + uy * proj
        xJ[r0 + 2, c] = s * l2 + uz * proj
    return math.sqrt(xe[r0] * xe[r0] + xe[r0 + 1] * xe[r0 + 1] + xe[r0 + 2] * xe[r0 + 2])


@jit
def _perpendicular(x, y, z):  # pragma: no cover - compiled
    """Return a unit vector perpendicular to ``(x, y, z)``, as ``_frames.perpendicular``.

    ``(x, y, z) x e_k`` for the axis ``e_k`` of its smallest entry, normalised.
    """
    if abs(y) < abs(x) and abs(y) <= abs(z):
        vx, vy, vz = -z, 0.0, x  # x e_y
    elif abs(z) < abs(x) and abs(z) < abs(y):
        vx, vy, vz = y, -x, 0.0  # x e_z
    else:
        vx, vy, vz = 0.0, z, -y  # x e_x
    norm = math.sqrt(vx * vx + vy * vy + vz * vz)
    return vx / norm, vy / norm, vz / norm


@jit
def _row_from(gx, gy, gz, J, r0, g_row):  # pragma: no cover - compiled
    """``g_row = (gx, gy, gz) @ J[r0:r0 + 3]`` for ``J`` (k, n)."""
    for c in range(J.shape[1]):
        g_row[c] = gx * J[r0, c] + gy * J[r0 + 1, c] + gz * J[r0 + 2, c]


@jit
def _norm_row(dx, dy, dz, J, ax, ay, az, Jrow):  # pragma: no cover - compiled
    """``|d|`` [m] and its row ``(d / |d|) @ J`` (``a`` at d = 0)."""
    norm = math.sqrt(dx * dx + dy * dy + dz * dz)
    if norm > 1e-12:
        _row_from(dx / norm, dy / norm, dz / norm, J, 0, Jrow)
    else:
        _row_from(ax, ay, az, J, 0, Jrow)
    return norm


@jit
def _gaze(p, J, prm, Jrow):  # pragma: no cover - compiled
    """``GazeTargetConstraint.evaluate_physical`` from ``p_AT`` (3,), (3, n).

    ``prm``: ``p_AS`` (3), ``n_A`` (3), a unit vector perpendicular to it (3).
    """
    vx, vy, vz = p[0] - prm[0], p[1] - prm[1], p[2] - prm[2]
    nx, ny, nz = prm[3], prm[4], prm[5]
    cx, cy, cz = vy * nz - vz * ny, vz * nx - vx * nz, vx * ny - vy * nx  # v x n
    s = math.sqrt(cx * cx + cy * cy + cz * cz)
    c, pp = vx * nx + vy * ny + vz * nz, vx * vx + vy * vy + vz * vz
    alpha = math.atan2(s, c)
    if pp < 1e-24:
        Jrow[:] = 0.0
    elif s > 1e-12 * math.sqrt(pp):
        mx, my, mz = ny * cz - nz * cy, nz * cx - nx * cz, nx * cy - ny * cx  # n x (v x n)
        _row_from((c * mx / s - s * nx) / pp, (c * my / s - s * ny) / pp,
                  (c * mz / s - s * nz) / pp, J, 0, Jrow)
    elif c < 0.0:
        root = math.sqrt(pp)
        _row_from(-prm[6] / root, -prm[7] / root, -prm[8] / root, J, 0, Jrow)
    else:
        Jrow[:] = 0.0
    return alpha


@jit
def angle_row(oMf, Jf, fa, fb, prm, Jrow):  # pragma: no cover - compiled
    """``AngleBetweenVectorsConstraint.evaluate_physical``: the angle [rad], its row."""
    A, B = oMf[fa], oMf[fb]
    a0 = A[0, 0] * prm[0] + A[0, 1] * prm[1] + A[0, 2] * prm[2]
    a1 = A[1, 0] * prm[0] + A[1, 1] * prm[1] + A[1, 2] * prm[2]
    a2 = A[2, 0] * prm[0] + A[2, 1] * prm[1] + A[2, 2] * prm[2]
    b0 = B[0, 0] * prm[3] + B[0, 1] * prm[4] + B[0, 2] * prm[5]
    b1 = B[1, 0] * prm[3] + B[1, 1] * prm[4] + B[1, 2] * prm[5]
    b2 = B[2, 0] * prm[3] + B[2, 1] * prm[4] + B[2, 2] * prm[5]
    x0, x1, x2 = a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0  # a x b
    s = math.sqrt(x0 * x0 + x1 * x1 + x2 * x2)
    c = a0 * b0 + a1 * b1 + a2 * b2
    if s > 1e-9:
        gx, gy, gz = -x0 / s, -x1 / s, -x2 / s
    else:
        gx, gy, gz = _perpendicular(a0, a1, a2)
        if not c > 0.0:
            gx, gy, gz = -gx, -gy, -gz
    JA, JB = Jf[fa], Jf[fb]
    for col in range(Jrow.shape[0]):  # the row on w_A - w_B
        Jrow[col] = (gx * (JA[3, col] - JB[3, col]) + gy * (JA[4, col] - JB[4, col])
                     + gz * (JA[5, col] - JB[5, col]))
    return math.atan2(s, c)


@jit
def polyhedron_rows(oMf, Jf, fa, fb, prm, g, Jg, row, p3, J3):  # pragma: no cover - compiled
    """``PolyhedronConstraint.evaluate_physical`` into rows ``row..row+k`` of ``g``, ``Jg``.

    ``prm``: N, k, ``p_GP`` (3N, point by point), ``A`` (k, 3N), 1/|A_i| (k).  ``p3``
    (3,), ``J3`` (3, n): scratch.
    """
    n_pts, k, n = int(prm[0]), int(prm[1]), Jg.shape[1]
    a0, i0 = 2 + 3 * n_pts, 2 + 3 * n_pts + 3 * k * n_pts
    g[row:row + k] = 0.0
    Jg[row:row + k, :] = 0.0
    for i in range(n_pts):
        point_in_frame(oMf, Jf, fa, fb, prm, -1, 2 + 3 * i, p3, J3, 0)
        for r in range(k):
            at = a0 + r * 3 * n_pts + 3 * i
            x, y, z = prm[at], prm[at + 1], prm[at + 2]
            g[row + r] += x * p3[0] + y * p3[1] + z * p3[2]
            for c in range(n):
                Jg[row + r, c] += x * J3[0, c] + y * J3[1, c] + z * J3[2, c]
    for r in range(k):
        inv = prm[i0 + r]
        g[row + r] *= inv
        for c in range(n):
            Jg[row + r, c] *= inv


@jit
def rows(ctype, cfa, cfb, coff, params, oMf, Jf, g, Jg, xe, xJ, S33,
         J3):  # pragma: no cover - compiled
    """Every constraint's physical rows into ``g`` (m,), ``Jg`` (m, n); excesses into ``xe``.

    Row constraints fill ``g`` in order; orientation bounds fill ``xe`` (3 per bound), ``xJ``.
    Returns the largest excess norm [rad] (0 without orientation bounds); raises
    ValueError (:data:`UNKNOWN_TYPE`) on a type code it does not know.  ``S33``
    (6, 3, 3) and ``J3`` (3, n) are scratch (:func:`scratch`): an iteration allocates
    nothing.
    """
    p3 = S33[5, 1]
    row, xrow, worst = 0, 0, 0.0
    for i in range(ctype.shape[0]):
        t, fa, fb, prm = ctype[i], cfa[i], cfb[i], params[coff[i]:coff[i + 1]]
        if t == ORIENTATION:
            x = orientation_excess(oMf, Jf, fa, fb, prm, xe, xJ, xrow, S33)
            worst = max(worst, x)
            xrow += 3
        elif t == ANGLE:
            g[row] = angle_row(oMf, Jf, fa, fb, prm, Jg[row])
            row += 1
        elif t == POLYHEDRON:
            polyhedron_rows(oMf, Jf, fa, fb, prm, g, Jg, row, p3, J3)
            row += int(prm[1])
        elif t == POSITION:  # the offset of A (16), then p_BQ
            point_in_frame(oMf, Jf, fa, fb, prm, 0, 16, g, Jg, row)
            row += 3
        elif t == GAZE or t == POINT_TO_POINT or t == POINT_TO_LINE:
            # one row from a point seen in frame fa
            point_in_frame(oMf, Jf, fa, fb, prm, -1, 0, p3, J3, 0)
            g[row] = point_row(t, p3, J3, prm, Jg[row])
            row += 1
        else:
            raise ValueError(UNKNOWN_TYPE)
    return worst


@jit
def weighted_pose_rows(oMf, Jf, pose, e, J, w, T):  # pragma: no cover - compiled
    """Weighted pose rows into ``e`` (6,), ``J`` (6, n), as ``Residuals.pose_rows``.

    ``pose``: the pose frame's index, ``T_target_world`` (16), ``R6`` (36), sqrt weights
    (6), inverse tolerances (6).  ``e = [t, log3(R)]`` of ``T_target_world T_world_frame``,
    ``J = R6 J_frame`` (LOCAL_WORLD_ALIGNED, without Jlog3).  Returns the scaled squared
    error (<= 1: the pose is within tolerance).
    """
    fp = int(pose[0])
    compose(pose[1:17].reshape(4, 4), oMf[fp], T)
    log3(T[:3, :3], w)
    R6, sw, inv_tol = pose[17:53].reshape(6, 6), pose[53:59], pose[59:65]
    scaled = 0.0
    for r in range(6):
        v = T[r, 3] if r < 3 else w[r - 3]
        scaled += (v * inv_tol[r]) ** 2
        e[r] = v * sw[r]
        for c in range(J.shape[1]):
            s = 0.0
            for k in range(6):
                s += R6[r, k] * Jf[fp, k, c]
            J[r, c] = s * sw[r]
    return scaled


@jit
def scratch(n):  # pragma: no cover - compiled
    """Return the scratch arrays of :func:`rows` for ``n`` joints: ``S33``, ``J3``."""
    return np.empty((6, 3, 3)), np.empty((3, n))


@jit
def point_row(t, p, J, prm, Jrow):  # pragma: no cover - compiled
    """Return the row [m or rad] of a gaze or distance constraint at point ``p`` (3,).

    Raises ValueError (:data:`UNKNOWN_TYPE`) for any other type code ``t``.
    """
    if t == GAZE:
        return _gaze(p, J, prm[3:], Jrow)
    if t != POINT_TO_POINT and t != POINT_TO_LINE:
        raise ValueError(UNKNOWN_TYPE)
    dx, dy, dz = p[0] - prm[3], p[1] - prm[4], p[2] - prm[5]
    if t == POINT_TO_POINT:
        return _norm_row(dx, dy, dz, J, 1.0, 0.0, 0.0, Jrow)
    P = prm[6:15]  # point to line: the projection off the line (3, 3, row by row)
    ux = P[0] * dx + P[1] * dy + P[2] * dz
    uy = P[3] * dx + P[4] * dy + P[5] * dz
    uz = P[6] * dx + P[7] * dy + P[8] * dz
    norm = math.sqrt(ux * ux + uy * uy + uz * uz)
    if norm > 1e-12:
        ux, uy, uz = ux / norm, uy / norm, uz / norm
    else:
        ux, uy, uz = prm[15], prm[16], prm[17]
    # (u @ P) @ J: the row of |P d| along u
    _row_from(ux * P[0] + uy * P[3] + uz * P[6], ux * P[1] + uy * P[4] + uz * P[7],
              ux * P[2] + uy * P[5] + uz * P[8], J, 0, Jrow)
    return norm
