"""Compiled kinematics of one frame seen from another, on the kernels' frame arrays.

``oMf`` (f, 4, 4): world placements of the kernel's frames; ``Jf`` (f, 6, n): their
``LOCAL_WORLD_ALIGNED`` Jacobians (rows 0-2 linear [m], 3-5 angular [rad], world axes),
as :func:`ros2_ik.core.kinematics.forward.kinematics` computes them.  A point of frame B
seen in frame A and its Jacobian, the rotations ``R_WA``, ``R_WB``, ``R_AB``, vectors fixed
in frames turned into world axes.  The constraint and cost types' compiled rows (their
own files) are written with these.  Plain loops on floats, by index (no scratch arrays
or views), as in :mod:`.forward`.
"""
from ros2_ik.core.runtime.compiled import jit  # deferred: numba loads with the first kernel


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


@jit(inline="always")
def _rotated(oMf, f, prm, o, r, c):  # pragma: no cover - compiled
    """Entry ``(r, c)`` of ``R_WF R_F``, the 3x3 ``R_F`` at ``prm[o:o + 9]`` (row by row)."""
    return oMf[f, r, 0] * prm[o + c] + oMf[f, r, 1] * prm[o + 3 + c] \
        + oMf[f, r, 2] * prm[o + 6 + c]


@jit(inline="always")
def _world_rotation(oMf, f, prm, o):  # pragma: no cover - compiled
    """``R_WF R_F`` of frame ``f`` as 9 floats, row by row (:func:`_rotated`)."""
    return (_rotated(oMf, f, prm, o, 0, 0), _rotated(oMf, f, prm, o, 0, 1),
            _rotated(oMf, f, prm, o, 0, 2), _rotated(oMf, f, prm, o, 1, 0),
            _rotated(oMf, f, prm, o, 1, 1), _rotated(oMf, f, prm, o, 1, 2),
            _rotated(oMf, f, prm, o, 2, 0), _rotated(oMf, f, prm, o, 2, 1),
            _rotated(oMf, f, prm, o, 2, 2))


@jit(inline="always")
def _dot(X, i, Y, j, s):  # pragma: no cover - compiled
    """``sum_k X[i + s k] Y[j + s k]``: rows (``s = 1``) or columns (``s = 3``) of two 3x3."""
    return X[i] * Y[j] + X[i + s] * Y[j + s] + X[i + 2 * s] * Y[j + 2 * s]


@jit(inline="always")
def times_transposed(X, Y):  # pragma: no cover - compiled
    """``X Y^T`` of two 3x3 matrices given as 9 floats, row by row."""
    return (_dot(X, 0, Y, 0, 1), _dot(X, 0, Y, 3, 1), _dot(X, 0, Y, 6, 1),
            _dot(X, 3, Y, 0, 1), _dot(X, 3, Y, 3, 1), _dot(X, 3, Y, 6, 1),
            _dot(X, 6, Y, 0, 1), _dot(X, 6, Y, 3, 1), _dot(X, 6, Y, 6, 1))


@jit(inline="always")
def _transposed_times(X, Y):  # pragma: no cover - compiled
    """``X^T Y`` of two 3x3 matrices given as 9 floats, row by row."""
    return (_dot(X, 0, Y, 0, 3), _dot(X, 0, Y, 1, 3), _dot(X, 0, Y, 2, 3),
            _dot(X, 1, Y, 0, 3), _dot(X, 1, Y, 1, 3), _dot(X, 1, Y, 2, 3),
            _dot(X, 2, Y, 0, 3), _dot(X, 2, Y, 1, 3), _dot(X, 2, Y, 2, 3))


@jit
def rotation_entries(oMf, fa, fb, prm):  # pragma: no cover - compiled
    """``(R_WA, R_WB, R_AB)``, each 9 floats row by row; ``R_AB = R_WA^T R_WB``.

    ``prm``: ``R_AbarA`` then ``R_BbarB`` (9 each, row by row), the offsets of A and B
    from frames ``fa`` and ``fb``.
    """
    R_WA, R_WB = _world_rotation(oMf, fa, prm, 0), _world_rotation(oMf, fb, prm, 9)
    return R_WA, R_WB, _transposed_times(R_WA, R_WB)


@jit
def rotations(oMf, fa, fb, prm, S):  # pragma: no cover - compiled
    """:func:`rotation_entries` into ``S[0]`` (``R_WA``), ``S[1]`` (``R_WB``), ``S[2]``."""
    R_WA, R_WB, R_AB = rotation_entries(oMf, fa, fb, prm)
    for r in range(3):
        for c in range(3):
            S[0, r, c], S[1, r, c], S[2, r, c] = R_WA[3 * r + c], R_WB[3 * r + c], \
                R_AB[3 * r + c]


@jit
def world_vectors(oMf, fa, fb, prm, S):  # pragma: no cover - compiled
    """Write ``a = R_WA a_A`` into ``S[5, 0]``, ``b = R_WB b_B`` into ``S[5, 1]``; return a . b."""
    a, b, A, B = S[5, 0], S[5, 1], oMf[fa], oMf[fb]
    for r in range(3):
        a[r] = A[r, 0] * prm[0] + A[r, 1] * prm[1] + A[r, 2] * prm[2]
        b[r] = B[r, 0] * prm[3] + B[r, 1] * prm[4] + B[r, 2] * prm[5]
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
