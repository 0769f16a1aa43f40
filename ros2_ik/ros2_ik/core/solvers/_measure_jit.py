"""The numba-compiled check of :mod:`seed_request`: each constraint's violation [m or rad].

The formulas of the constraints' own ``measure`` (the verification's, not the rows the
attempt drives), on world frame placements that pinocchio computed, so neither the
kernel's kinematics nor its rows enter the check.  Plain loops on small arrays, as in
:mod:`_chain_jit`.
"""
import math

import numpy as np

from ros2_ik.core.solvers._chain_jit import _jit
from ros2_ik.core.solvers._constraint_jit import (ANGLE, GAZE, ORIENTATION, POINT_TO_LINE,
                                                  POINT_TO_POINT, POLYHEDRON, POSITION,
                                                  _rotate)

#: Unit of each constraint type's violation: 0 metres, 1 radians (index = type code).
RADIANS = np.array([0, 1, 1, 1, 0, 0, 0], dtype=np.int64)


@_jit
def _act(T, p):  # pragma: no cover - compiled
    """Return ``T p`` (3,) for a placement ``T`` (4, 4) and a point ``p`` (3,)."""
    out = np.empty(3)
    for r in range(3):
        out[r] = T[r, 0] * p[0] + T[r, 1] * p[1] + T[r, 2] * p[2] + T[r, 3]
    return out


@_jit
def _act_inv(T, p):  # pragma: no cover - compiled
    """Return ``T^-1 p`` (3,): ``R^T (p - t)``."""
    out = np.empty(3)
    for c in range(3):
        out[c] = (T[0, c] * (p[0] - T[0, 3]) + T[1, c] * (p[1] - T[1, 3])
                  + T[2, c] * (p[2] - T[2, 3]))
    return out


@_jit
def _vector_angle(a, b):  # pragma: no cover - compiled
    """Angle [rad] between 3-vectors in ``[0, pi]``: ``atan2(|a x b|, a . b)``."""
    x = a[1] * b[2] - a[2] * b[1]
    y = a[2] * b[0] - a[0] * b[2]
    z = a[0] * b[1] - a[1] * b[0]
    return math.atan2(math.sqrt(x * x + y * y + z * z),
                      a[0] * b[0] + a[1] * b[1] + a[2] * b[2])


@_jit
def _outside(v, lower, upper):  # pragma: no cover - compiled
    """Distance of ``v`` outside ``[lower, upper]`` (NaN stays NaN)."""
    if v != v:
        return v
    return max(lower - v, v - upper, 0.0)


@_jit
def _position(Wa, Wb, prm, phys):  # pragma: no cover - compiled
    """Largest distance [m] of ``p_AQ`` outside its box, per axis."""
    X = prm[0:16].reshape(4, 4)
    X_WA = np.empty((4, 4))
    for r in range(4):
        for c in range(4):
            X_WA[r, c] = (Wa[r, 0] * X[0, c] + Wa[r, 1] * X[1, c] + Wa[r, 2] * X[2, c]
                          + Wa[r, 3] * X[3, c])
    p = _act_inv(X_WA, _act(Wb, prm[16:19]))
    worst = 0.0
    for k in range(3):
        v = _outside(p[k], phys[k], phys[3 + k])
        if not v <= worst:
            worst = v
    return worst


@_jit
def _orientation(Wa, Wb, prm, theta_bound):  # pragma: no cover - compiled
    """Angle [rad] of ``R_AB`` beyond ``theta_bound``, from its entries (atan2)."""
    RA, RB = prm[0:9].reshape(3, 3), prm[9:18].reshape(3, 3)
    R_WA, R_WB = np.empty((3, 3)), np.empty((3, 3))
    for r in range(3):
        for c in range(3):
            R_WA[r, c] = Wa[r, 0] * RA[0, c] + Wa[r, 1] * RA[1, c] + Wa[r, 2] * RA[2, c]
            R_WB[r, c] = Wb[r, 0] * RB[0, c] + Wb[r, 1] * RB[1, c] + Wb[r, 2] * RB[2, c]
    R = np.empty((3, 3))  # R_AB = R_WA^T R_WB
    for r in range(3):
        for c in range(3):
            R[r, c] = R_WA[0, r] * R_WB[0, c] + R_WA[1, r] * R_WB[1, c] + R_WA[2, r] * R_WB[2, c]
    x, y, z = R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]
    theta = math.atan2(0.5 * math.sqrt(x * x + y * y + z * z),
                       0.5 * (R[0, 0] + R[1, 1] + R[2, 2] - 1.0))
    if theta != theta:
        return theta
    return max(theta - theta_bound, 0.0)


@_jit
def _gaze(Wa, Wb, prm, cone):  # pragma: no cover - compiled
    """Angle [rad] of the gaze direction beyond the cone's half angle."""
    p = _act_inv(Wa, _act(Wb, prm[0:3])) - prm[3:6]
    alpha = _vector_angle(p, prm[6:9])
    if alpha != alpha:
        return alpha
    return max(alpha - cone, 0.0)


@_jit
def _point_to_line(Wa, Wb, prm, n, lower, upper):  # pragma: no cover - compiled
    """Distance [m] of ``dist(P, line)`` outside the bounds, as ``|u x n|``."""
    u = _act_inv(Wa, _act(Wb, prm[0:3])) - prm[3:6]
    x = u[1] * n[2] - u[2] * n[1]
    y = u[2] * n[0] - u[0] * n[2]
    z = u[0] * n[1] - u[1] * n[0]
    return _outside(math.sqrt(x * x + y * y + z * z), lower, upper)


@_jit
def _polyhedron(Wa, Wb, prm, upper):  # pragma: no cover - compiled
    """Largest distance [m] of a point of G outside a half-space of F."""
    n_pts, n_rows = int(prm[0]), int(prm[1])
    pts = prm[2:2 + 3 * n_pts]
    A = prm[2 + 3 * n_pts:2 + 3 * n_pts + n_rows * 3 * n_pts]
    inv = prm[2 + 3 * n_pts + n_rows * 3 * n_pts:]
    p = np.empty(3 * n_pts)
    for k in range(n_pts):
        p[3 * k:3 * k + 3] = _act_inv(Wa, _act(Wb, pts[3 * k:3 * k + 3]))
    worst = 0.0
    for r in range(n_rows):
        s = 0.0
        for j in range(3 * n_pts):
            s += A[r * 3 * n_pts + j] * p[j]
        v = (s - upper[r]) * inv[r]
        v = v if v != v else max(v, 0.0)
        if not v <= worst:
            worst = v
    return worst


@_jit
def within(ctype, amounts, tol_m, tol_rad):  # pragma: no cover - compiled
    """Return True when every amount is within its unit's tolerance (NaN is not)."""
    for i in range(ctype.shape[0]):
        tol = tol_rad if RADIANS[ctype[i]] == 1 else tol_m
        if not amounts[i] <= tol:
            return False
    return True


@_jit
def measure(ctype, cfa, cfb, coff, params, poff, phys, W, out, tol_m,
            tol_rad):  # pragma: no cover - compiled
    """Each constraint's violation into ``out`` (c,) [m or rad, ``RADIANS``]; NaN: unknown.

    ``W`` (f, 4, 4): world placements of the kernel's frames; ``phys[poff[i]:poff[i+1]]``:
    constraint ``i``'s physical bounds (and a point-to-line's unit direction first).
    Returns True when every violation is within the tolerance of its unit [m or rad].
    """
    for i in range(ctype.shape[0]):
        t, Wa, Wb = ctype[i], W[cfa[i]], W[cfb[i]]
        prm, ph = params[coff[i]:coff[i + 1]], phys[poff[i]:poff[i + 1]]
        if t == POSITION:
            out[i] = _position(Wa, Wb, prm, ph)
        elif t == ORIENTATION:
            out[i] = _orientation(Wa, Wb, prm, ph[0])
        elif t == GAZE:
            out[i] = _gaze(Wa, Wb, prm, ph[0])
        elif t == ANGLE:
            angle = _vector_angle(_rotate(Wa, prm[0:3]), _rotate(Wb, prm[3:6]))
            out[i] = _outside(angle, ph[0], ph[1])
        elif t == POINT_TO_POINT:  # frame a: frame 2 (P2), frame b: frame 1 (P1)
            d = _act(Wb, prm[0:3]) - _act(Wa, prm[3:6])
            out[i] = _outside(math.sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]),
                              ph[0], ph[1])
        elif t == POINT_TO_LINE:
            out[i] = _point_to_line(Wa, Wb, prm, ph[0:3], ph[3], ph[4])
        elif t == POLYHEDRON:
            out[i] = _polyhedron(Wa, Wb, prm, ph)
        else:  # a type this check does not know: never accepted
            out[i] = math.nan
    return within(ctype, out, tol_m, tol_rad)
