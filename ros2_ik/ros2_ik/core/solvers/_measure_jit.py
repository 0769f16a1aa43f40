"""The numba-compiled check of :mod:`seed_request`: each constraint's violation [m or rad].

The formulas of the constraints' own ``measure`` (the verification's, not the rows the
attempt drives), on world frame placements that pinocchio computed, so neither the
kernel's kinematics nor its rows enter the check.  Plain loops on small arrays, as in
:mod:`ros2_ik.core.kinematics.forward`.
"""
import math

import numpy as np

from ros2_ik.core.kinematics.jit import jit
from ros2_ik.core.solvers._constraint_jit import (ANGLE, GAZE, ORIENTATION, POINT_TO_LINE,
                                                  POINT_TO_POINT, POLYHEDRON, POSITION,
                                                  layout_views, value_views)

#: Unit of each constraint type's violation: 0 metres, 1 radians (index = type code).
RADIANS = np.array([0, 1, 1, 1, 0, 0, 0], dtype=np.int64)


@jit
def _act(T, p, o):  # pragma: no cover - compiled
    """Return ``T p`` (three floats) for a placement ``T`` (4, 4) and ``p = p[o:o + 3]``."""
    x, y, z = p[o], p[o + 1], p[o + 2]
    return (T[0, 0] * x + T[0, 1] * y + T[0, 2] * z + T[0, 3],
            T[1, 0] * x + T[1, 1] * y + T[1, 2] * z + T[1, 3],
            T[2, 0] * x + T[2, 1] * y + T[2, 2] * z + T[2, 3])


@jit
def _act_inv(T, x, y, z):  # pragma: no cover - compiled
    """Return ``T^-1 p`` (three floats): ``R^T (p - t)``."""
    x, y, z = x - T[0, 3], y - T[1, 3], z - T[2, 3]
    return (T[0, 0] * x + T[1, 0] * y + T[2, 0] * z,
            T[0, 1] * x + T[1, 1] * y + T[2, 1] * z,
            T[0, 2] * x + T[1, 2] * y + T[2, 2] * z)


@jit
def _seen_from(Wa, Wb, p, o):  # pragma: no cover - compiled
    """Return point ``p[o:o + 3]`` of frame B seen in frame A (three floats) [m]."""
    x, y, z = _act(Wb, p, o)
    return _act_inv(Wa, x, y, z)


@jit
def _vector_angle(a0, a1, a2, b0, b1, b2):  # pragma: no cover - compiled
    """Angle [rad] between 3-vectors in ``[0, pi]``: ``atan2(|a x b|, a . b)``."""
    x = a1 * b2 - a2 * b1
    y = a2 * b0 - a0 * b2
    z = a0 * b1 - a1 * b0
    return math.atan2(math.sqrt(x * x + y * y + z * z), a0 * b0 + a1 * b1 + a2 * b2)


@jit
def _outside(v, lower, upper):  # pragma: no cover - compiled
    """Distance of ``v`` outside ``[lower, upper]`` (NaN stays NaN)."""
    if v != v:
        return v
    return max(lower - v, v - upper, 0.0)


@jit
def _position(Wa, Wb, prm, phys):  # pragma: no cover - compiled
    """Largest distance [m] of ``p_AQ`` outside its box, per axis.

    A is frame A-bar (``Wa``) offset by ``X_AbarA`` (``prm[0:16]``, row by row):
    ``p_AQ = X_AbarA^-1 (W_a^-1 p_WQ)``.
    """
    x, y, z = _seen_from(Wa, Wb, prm, 16)
    x, y, z = x - prm[3], y - prm[7], z - prm[11]
    p = (prm[0] * x + prm[4] * y + prm[8] * z, prm[1] * x + prm[5] * y + prm[9] * z,
         prm[2] * x + prm[6] * y + prm[10] * z)
    worst = 0.0
    for k in range(3):
        v = _outside(p[k], phys[k], phys[3 + k])
        if not v <= worst:
            worst = v
    return worst


@jit
def _rotation_in_world(W, prm, o, r, c):  # pragma: no cover - compiled
    """Entry ``(r, c)`` of ``W[:3, :3] R`` for ``R`` (3, 3) at ``prm[o:o + 9]`` row by row."""
    return W[r, 0] * prm[o + c] + W[r, 1] * prm[o + 3 + c] + W[r, 2] * prm[o + 6 + c]


@jit
def _orientation(Wa, Wb, prm, theta_bound, R):  # pragma: no cover - compiled
    """Angle [rad] of ``R_AB`` beyond ``theta_bound``, from its entries (atan2).

    ``R`` (3, 3, 3) is scratch: ``R_WA``, ``R_WB``, ``R_AB = R_WA^T R_WB``.
    """
    R_WA, R_WB, R_AB = R[0], R[1], R[2]
    for r in range(3):
        for c in range(3):
            R_WA[r, c] = _rotation_in_world(Wa, prm, 0, r, c)
            R_WB[r, c] = _rotation_in_world(Wb, prm, 9, r, c)
    for r in range(3):
        for c in range(3):
            R_AB[r, c] = (R_WA[0, r] * R_WB[0, c] + R_WA[1, r] * R_WB[1, c]
                          + R_WA[2, r] * R_WB[2, c])
    x, y, z = R_AB[2, 1] - R_AB[1, 2], R_AB[0, 2] - R_AB[2, 0], R_AB[1, 0] - R_AB[0, 1]
    theta = math.atan2(0.5 * math.sqrt(x * x + y * y + z * z),
                       0.5 * (R_AB[0, 0] + R_AB[1, 1] + R_AB[2, 2] - 1.0))
    if theta != theta:
        return theta
    return max(theta - theta_bound, 0.0)


@jit
def _gaze(Wa, Wb, prm, cone):  # pragma: no cover - compiled
    """Angle [rad] of the gaze direction beyond the cone's half angle."""
    x, y, z = _seen_from(Wa, Wb, prm, 0)
    alpha = _vector_angle(x - prm[3], y - prm[4], z - prm[5], prm[6], prm[7], prm[8])
    if alpha != alpha:
        return alpha
    return max(alpha - cone, 0.0)


@jit
def _angle(Wa, Wb, prm, lower, upper):  # pragma: no cover - compiled
    """Distance [rad] of the angle between ``R_WA a_A`` and ``R_WB b_B`` outside the bounds."""
    a, b = prm[0:3], prm[3:6]
    angle = _vector_angle(
        Wa[0, 0] * a[0] + Wa[0, 1] * a[1] + Wa[0, 2] * a[2],
        Wa[1, 0] * a[0] + Wa[1, 1] * a[1] + Wa[1, 2] * a[2],
        Wa[2, 0] * a[0] + Wa[2, 1] * a[1] + Wa[2, 2] * a[2],
        Wb[0, 0] * b[0] + Wb[0, 1] * b[1] + Wb[0, 2] * b[2],
        Wb[1, 0] * b[0] + Wb[1, 1] * b[1] + Wb[1, 2] * b[2],
        Wb[2, 0] * b[0] + Wb[2, 1] * b[1] + Wb[2, 2] * b[2])
    return _outside(angle, lower, upper)


@jit
def _point_to_point(Wa, Wb, prm, lower, upper):  # pragma: no cover - compiled
    """Distance [m] of ``|p_P1P2|`` outside the bounds (frame a: P2's, frame b: P1's)."""
    x1, y1, z1 = _act(Wb, prm, 0)
    x2, y2, z2 = _act(Wa, prm, 3)
    x, y, z = x1 - x2, y1 - y2, z1 - z2
    return _outside(math.sqrt(x * x + y * y + z * z), lower, upper)


@jit
def _point_to_line(Wa, Wb, prm, n, lower, upper):  # pragma: no cover - compiled
    """Distance [m] of ``dist(P, line)`` outside the bounds, as ``|u x n|``."""
    x, y, z = _seen_from(Wa, Wb, prm, 0)
    u0, u1, u2 = x - prm[3], y - prm[4], z - prm[5]
    x = u1 * n[2] - u2 * n[1]
    y = u2 * n[0] - u0 * n[2]
    z = u0 * n[1] - u1 * n[0]
    return _outside(math.sqrt(x * x + y * y + z * z), lower, upper)


@jit
def _polyhedron(Wa, Wb, prm, upper):  # pragma: no cover - compiled
    """Largest distance [m] of a point of G outside a half-space of F."""
    n_pts, n_rows = int(prm[0]), int(prm[1])
    a0 = 2 + 3 * n_pts
    i0 = a0 + n_rows * 3 * n_pts
    worst = 0.0
    for r in range(n_rows):
        s = 0.0
        for k in range(n_pts):
            x, y, z = _seen_from(Wa, Wb, prm, 2 + 3 * k)
            at = a0 + r * 3 * n_pts + 3 * k
            s += prm[at] * x + prm[at + 1] * y + prm[at + 2] * z
        v = (s - upper[r]) * prm[i0 + r]
        v = v if v != v else max(v, 0.0)
        if not v <= worst:
            worst = v
    return worst


@jit
def within(ctype, amounts, tol_m, tol_rad):  # pragma: no cover - compiled
    """Return True when every amount is within its unit's tolerance (NaN is not)."""
    for i in range(ctype.shape[0]):
        tol = tol_rad if RADIANS[ctype[i]] == 1 else tol_m
        if not amounts[i] <= tol:
            return False
    return True


@jit
def measure(ctype, cfa, cfb, coff, params, poff, phys, W, out, tol_m,
            tol_rad):  # pragma: no cover - compiled
    """Each constraint's violation into ``out`` (c,) [m or rad, ``RADIANS``]; NaN: unknown.

    ``W`` (f, 4, 4): world placements of the kernel's frames; ``phys[poff[i]:poff[i+1]]``:
    constraint ``i``'s physical bounds (and a point-to-line's unit direction first).
    Returns True when every violation is within the tolerance of its unit [m or rad].
    """
    R = np.empty((3, 3, 3))
    for i in range(ctype.shape[0]):
        t, Wa, Wb = ctype[i], W[cfa[i]], W[cfb[i]]
        prm, ph = params[coff[i]:coff[i + 1]], phys[poff[i]:poff[i + 1]]
        if t == POSITION:
            out[i] = _position(Wa, Wb, prm, ph)
        elif t == ORIENTATION:
            out[i] = _orientation(Wa, Wb, prm, ph[0], R)
        elif t == GAZE:
            out[i] = _gaze(Wa, Wb, prm, ph[0])
        elif t == ANGLE:
            out[i] = _angle(Wa, Wb, prm, ph[0], ph[1])
        elif t == POINT_TO_POINT:
            out[i] = _point_to_point(Wa, Wb, prm, ph[0], ph[1])
        elif t == POINT_TO_LINE:
            out[i] = _point_to_line(Wa, Wb, prm, ph[0:3], ph[3], ph[4])
        elif t == POLYHEDRON:
            out[i] = _polyhedron(Wa, Wb, prm, ph)
        else:  # a type this check does not know: never accepted
            out[i] = math.nan
    return within(ctype, out, tol_m, tol_rad)


@jit
def measure_packed(ints, consts, values, W, out, tol_m, tol_rad):  # pragma: no cover
    """:func:`measure` on a packed problem (:func:`_constraint_jit.layout_views`)."""
    t, v = layout_views(ints, consts), value_views(ints, values)
    return measure(t[7], t[8], t[9], t[10], v[0], t[11], v[4], W, out, tol_m, tol_rad)
