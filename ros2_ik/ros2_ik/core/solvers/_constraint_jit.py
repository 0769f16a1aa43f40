"""The numba-compiled functions of :mod:`constraint_kernel` (kinematics and pose rows).

Kinematics on the joint tree of the whole model (locked joints folded into fixed
placements), world placements and ``LOCAL_WORLD_ALIGNED`` Jacobians (6, n) of the few
frames the constraints name, the helpers the constraints' own compiled rows call
(``constraints/_compiled.py``; the rows by type code: :mod:`_dispatch_jit`), and a pose
target's weighted rows (shared by the LM attempt and polishing).  Plain loops on small
arrays, as in :mod:`_chain_jit`.  The LM attempt on these rows is in :mod:`_constraint_lm_jit`.
"""
import math

import numpy as np

from ros2_ik.core.solvers._chain_jit import compose, jit, log3, log3_of

FIXED, REVOLUTE, PRISMATIC = 0, 1, 2


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


@jit(inline="always")
def _placed(oMi, p, local, i, out):  # pragma: no cover - compiled
    """``out[i] = oMi[p] @ local[i]`` (``local[i]`` when ``p < 0``: on the world), by index."""
    for r in range(3):
        if p < 0:
            for c in range(4):
                out[i, r, c] = local[i, r, c]
        else:
            a0, a1, a2 = oMi[p, r, 0], oMi[p, r, 1], oMi[p, r, 2]
            for c in range(4):
                out[i, r, c] = a0 * local[i, 0, c] + a1 * local[i, 1, c] + a2 * local[i, 2, c]
            out[i, r, 3] += oMi[p, r, 3]
    out[i, 3, 0], out[i, 3, 1], out[i, 3, 2], out[i, 3, 3] = 0.0, 0.0, 0.0, 1.0


@jit
def kinematics(parents, placements, kinds, axes, columns, q, fparent, fplace, oMi, oMf,
               Jf, waxes):  # pragma: no cover - compiled
    """Joint placements ``oMi`` (k, 4, 4), frame placements ``oMf`` (f, 4, 4), Jacobians.

    ``Jf`` (f, 6, n): LOCAL_WORLD_ALIGNED (linear velocity of the frame origin, angular
    velocity, world axes) in group columns.  ``waxes`` (k, 3) receives the joints' world
    axes.  Written out by index, frames included, without array views or calls (but
    :func:`_placed`, inlined): in numba each call passes its arrays as structs and each
    view counts a reference, and this ran slower as one call per joint and per frame
    (every iteration of every attempt calls it).
    """
    for i in range(parents.shape[0]):
        _placed(oMi, parents[i], placements, i, oMi)
        x, y, z = axes[i, 0], axes[i, 1], axes[i, 2]
        for r in range(3):
            waxes[i, r] = oMi[i, r, 0] * x + oMi[i, r, 1] * y + oMi[i, r, 2] * z
        kind = kinds[i]
        if kind == PRISMATIC:
            v = q[columns[i]]
            for r in range(3):
                oMi[i, r, 3] += waxes[i, r] * v
        elif kind == REVOLUTE:  # the rotation times Rodrigues' (as _chain_jit._rotation)
            v = q[columns[i]]
            c, s = math.cos(v), math.sin(v)
            t = 1.0 - c
            R00, R01, R02 = c + t * x * x, t * x * y - s * z, t * x * z + s * y
            R10, R11, R12 = t * x * y + s * z, c + t * y * y, t * y * z - s * x
            R20, R21, R22 = t * x * z - s * y, t * y * z + s * x, c + t * z * z
            for r in range(3):
                n0, n1, n2 = oMi[i, r, 0], oMi[i, r, 1], oMi[i, r, 2]
                oMi[i, r, 0] = n0 * R00 + n1 * R10 + n2 * R20
                oMi[i, r, 1] = n0 * R01 + n1 * R11 + n2 * R21
                oMi[i, r, 2] = n0 * R02 + n1 * R12 + n2 * R22
    for f in range(fparent.shape[0]):  # the frames on tree joint p (-1: the world)
        p = fparent[f]
        for r in range(6):
            for c in range(Jf.shape[2]):
                Jf[f, r, c] = 0.0
        _placed(oMi, p, fplace, f, oMf)
        tx, ty, tz = oMf[f, 0, 3], oMf[f, 1, 3], oMf[f, 2, 3]
        j = p
        while j >= 0:  # the joints between the frame and the root: the Jacobian's columns
            kind = kinds[j]
            if kind != FIXED:
                c = columns[j]
                ax, ay, az = waxes[j, 0], waxes[j, 1], waxes[j, 2]
                if kind == PRISMATIC:
                    Jf[f, 0, c], Jf[f, 1, c], Jf[f, 2, c] = ax, ay, az
                else:
                    dx, dy, dz = tx - oMi[j, 0, 3], ty - oMi[j, 1, 3], tz - oMi[j, 2, 3]
                    Jf[f, 0, c] = ay * dz - az * dy
                    Jf[f, 1, c] = az * dx - ax * dz
                    Jf[f, 2, c] = ax * dy - ay * dx
                    Jf[f, 3, c], Jf[f, 4, c], Jf[f, 5, c] = ax, ay, az
            j = parents[j]


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
def jlog3(wx, wy, wz, theta, out, k):  # pragma: no cover - compiled
    """Pinocchio's ``Jlog3(R)`` (3, 3) into ``out[k]``; ``w`` = log3(R), ``theta`` = |w|."""
    t2 = theta * theta
    if theta < 1e-4:
        alpha = 1.0 / 12.0 + t2 / 720.0
        diag = 0.5 * (2.0 - t2 / 6.0)
    else:
        st, ct = math.sin(theta), math.cos(theta)
        st_1mct = st / (1.0 - ct)
        alpha = 1.0 / t2 - st_1mct / (2.0 * theta)
        diag = 0.5 * theta * st_1mct
    out[k, 0, 0] = alpha * wx * wx + diag
    out[k, 0, 1] = alpha * wx * wy - 0.5 * wz
    out[k, 0, 2] = alpha * wx * wz + 0.5 * wy
    out[k, 1, 0] = alpha * wy * wx + 0.5 * wz
    out[k, 1, 1] = alpha * wy * wy + diag
    out[k, 1, 2] = alpha * wy * wz - 0.5 * wx
    out[k, 2, 0] = alpha * wz * wx - 0.5 * wy
    out[k, 2, 1] = alpha * wz * wy + 0.5 * wx
    out[k, 2, 2] = alpha * wz * wz + diag


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
def log3_at(S, k):  # pragma: no cover - compiled
    """``log3`` of ``S[k]`` (3, 3): ``(wx, wy, wz, theta)``."""
    return log3_of(S[k, 0, 0], S[k, 0, 1], S[k, 0, 2], S[k, 1, 0], S[k, 1, 1], S[k, 1, 2],
                   S[k, 2, 0], S[k, 2, 1], S[k, 2, 2])


@jit(inline="always")
def log_map(wx, wy, wz, theta, S):  # pragma: no cover - compiled
    """``M = Jlog3 R_AB^T R_WA^T`` into ``S[4]``: ``w = log3(R_AB)``'s rate from world ones.

    ``d w = M (w_B - w_A)`` with world angular velocities.  Reads ``R_WA`` (``S[0]``) and
    ``R_AB`` (``S[2]``) of :func:`rotations`; ``S[3]`` receives ``Jlog3``, ``S[1]`` is
    overwritten.  By index (:func:`kinematics`).
    """
    jlog3(wx, wy, wz, theta, S, 3)
    for r in range(3):
        for c in range(3):
            S[1, r, c] = (S[3, r, 0] * S[2, c, 0] + S[3, r, 1] * S[2, c, 1]
                          + S[3, r, 2] * S[2, c, 2])
    for r in range(3):
        for c in range(3):
            S[4, r, c] = (S[1, r, 0] * S[0, c, 0] + S[1, r, 1] * S[0, c, 1]
                          + S[1, r, 2] * S[0, c, 2])


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
