"""The numba-compiled functions of :mod:`constraint_kernel` (packed layout and pose rows).

On the world placements and ``LOCAL_WORLD_ALIGNED`` Jacobians (6, n) of the few frames
the constraints name, which :func:`ros2_ik.core.kinematics.forward.kinematics` computes
on the joint tree of the whole model (locked joints folded into fixed placements): the
packed layout's views, the frame helpers the constraints' own compiled rows call
(``constraints/compiled.py``; the rows by type code: :mod:`_dispatch_jit`), and a pose
target's weighted rows (shared by the LM attempt and polishing).  Plain loops on small
arrays, as in :mod:`ros2_ik.core.kinematics.forward`.  The LM attempt on these rows is
in :mod:`_constraint_lm_jit`.
"""
import numpy as np

from ros2_ik.core.kinematics.jit import jit
from ros2_ik.core.kinematics.lie import compose, log3


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
    index, without scratch arrays or views (:func:`ros2_ik.core.kinematics.forward.kinematics`).
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
    from frames ``fa`` and ``fb``.  By index (:func:`ros2_ik.core.kinematics.forward.kinematics`).
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
    """Return the scratch arrays of ``_dispatch_jit.rows`` for ``n`` joints: ``S33``, ``J3``."""
    return np.empty((6, 3, 3)), np.empty((3, n))
