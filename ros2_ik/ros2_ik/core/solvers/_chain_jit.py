"""The numba-compiled functions of :mod:`chain_kernel` (imported on first use: numba loads).

Plain loops on preallocated arrays: numba's ``@`` on small matrices calls BLAS and
allocates, slower per iteration than these loops.
"""
import math

import numpy as np

from ros2_ik.core.compiled import jit  # noqa: F401 - the kernels' one decorator


@jit
def _rotation(axis, angle, out):  # pragma: no cover - compiled
    """Rodrigues: rotation of ``angle`` [rad] about unit ``axis`` into ``out`` (3, 3)."""
    x, y, z = axis[0], axis[1], axis[2]
    c, s = math.cos(angle), math.sin(angle)
    t = 1.0 - c
    out[0, 0], out[0, 1], out[0, 2] = c + t * x * x, t * x * y - s * z, t * x * z + s * y
    out[1, 0], out[1, 1], out[1, 2] = t * x * y + s * z, c + t * y * y, t * y * z - s * x
    out[2, 0], out[2, 1], out[2, 2] = t * x * z - s * y, t * y * z + s * x, c + t * z * z


@jit
def log3(R, w):  # pragma: no cover - compiled
    """Rotation vector of ``R`` into ``w`` (3,); returns the angle [rad] (:func:`log3_of`)."""
    w[0], w[1], w[2], theta = log3_of(R[0, 0], R[0, 1], R[0, 2], R[1, 0], R[1, 1], R[1, 2],
                                      R[2, 0], R[2, 1], R[2, 2])
    return theta


@jit
def log3_of(r00, r01, r02, r10, r11, r12, r20, r21, r22):  # pragma: no cover - compiled
    """Rotation vector ``(wx, wy, wz)`` and angle [rad] of ``R`` given by its entries.

    Robust near pi.  A ``R`` with NaN or inf entries gives NaN (an attempt that
    diverged).  On floats, not arrays: a numba call with array arguments passes each as
    a struct (``_constraint_jit.kinematics``).
    """
    tr = r00 + r11 + r22
    if not math.isfinite(tr + r21 + r12 + r02 + r20 + r10 + r01):
        return math.nan, math.nan, math.nan, math.nan
    c = min(1.0, max(-1.0, 0.5 * (tr - 1.0)))
    theta = math.acos(c)
    vx, vy, vz = r21 - r12, r02 - r20, r10 - r01
    if theta < 1e-4:
        f = 0.5 + theta * theta / 12.0
        return f * vx, f * vy, f * vz, theta
    if theta < math.pi - 1e-3:
        f = theta / (2.0 * math.sin(theta))
        return f * vx, f * vy, f * vz, theta
    # near pi: the axis from the diagonal, signs from the symmetric and skew parts
    d = 1.0 - c
    ax = math.sqrt(max(0.0, (r00 - c) / d))
    ay = math.sqrt(max(0.0, (r11 - c) / d))
    az = math.sqrt(max(0.0, (r22 - c) / d))
    if ax >= ay and ax >= az:
        ay = math.copysign(ay, r01 + r10)
        az = math.copysign(az, r02 + r20)
    elif ay >= az:
        ax = math.copysign(ax, r01 + r10)
        az = math.copysign(az, r12 + r21)
    else:
        ax = math.copysign(ax, r02 + r20)
        ay = math.copysign(ay, r12 + r21)
    if ax * vx + ay * vy + az * vz < 0.0:
        ax, ay, az = -ax, -ay, -az
    norm = math.sqrt(ax * ax + ay * ay + az * az)
    return theta * ax / norm, theta * ay / norm, theta * az / norm, theta


@jit
def _log6(R, p, e, w):  # pragma: no cover - compiled
    """``log6`` of (R, p) into ``e`` (6,): [v, w] as pinocchio's (uses scratch ``w``)."""
    theta = log3(R, w)
    t2 = theta * theta
    if theta < 1e-4:
        alpha = 1.0 - t2 / 12.0
        beta = 1.0 / 12.0 + t2 / 720.0
    else:
        s, c = math.sin(theta), math.cos(theta)
        alpha = theta * s / (2.0 * (1.0 - c))
        beta = 1.0 / t2 - s / (2.0 * theta * (1.0 - c))
    wp = w[0] * p[0] + w[1] * p[1] + w[2] * p[2]
    cx = w[1] * p[2] - w[2] * p[1]
    cy = w[2] * p[0] - w[0] * p[2]
    cz = w[0] * p[1] - w[1] * p[0]
    e[0] = alpha * p[0] - 0.5 * cx + beta * wp * w[0]
    e[1] = alpha * p[1] - 0.5 * cy + beta * wp * w[1]
    e[2] = alpha * p[2] - 0.5 * cz + beta * wp * w[2]
    e[3], e[4], e[5] = w[0], w[1], w[2]


@jit
def compose(A, B, out):  # pragma: no cover - compiled
    """``out = A @ B`` for homogeneous (4, 4) transforms (last row taken as 0 0 0 1)."""
    for r in range(3):
        a0, a1, a2 = A[r, 0], A[r, 1], A[r, 2]
        for c in range(4):
            out[r, c] = a0 * B[0, c] + a1 * B[1, c] + a2 * B[2, c]
        out[r, 3] += A[r, 3]
    out[3, 0], out[3, 1], out[3, 2], out[3, 3] = 0.0, 0.0, 0.0, 1.0


@jit
def _forward(placements, prismatic, axes, columns, tip, q, T, origins, world_axes,
             M, N, Rm):  # pragma: no cover - compiled
    """Tip placement into ``T`` (4, 4); joint origins and world axes for the Jacobian.

    ``M``, ``N`` (4, 4) and ``Rm`` (3, 3) are scratch.
    """
    M[:, :] = 0.0
    for r in range(4):
        M[r, r] = 1.0
    for i in range(placements.shape[0]):
        compose(M, placements[i], N)
        a = axes[i]
        for r in range(3):
            world_axes[i, r] = N[r, 0] * a[0] + N[r, 1] * a[1] + N[r, 2] * a[2]
        v = q[columns[i]]
        if prismatic[i]:
            M[:, :] = N
            for r in range(3):
                M[r, 3] += world_axes[i, r] * v
        else:
            _rotation(a, v, Rm)
            for r in range(3):
                for c in range(3):
                    M[r, c] = N[r, 0] * Rm[0, c] + N[r, 1] * Rm[1, c] + N[r, 2] * Rm[2, c]
                M[r, 3] = N[r, 3]
        origins[i, 0], origins[i, 1], origins[i, 2] = M[0, 3], M[1, 3], M[2, 3]
    compose(M, tip, T)


@jit
def _jacobian(T, prismatic, columns, origins, world_axes, J):  # pragma: no cover - compiled
    """LOCAL Jacobian (6, n) of the tip frame ``T`` into ``J`` (zero columns off-chain)."""
    J[:, :] = 0.0
    for i in range(origins.shape[0]):
        ax, ay, az = world_axes[i, 0], world_axes[i, 1], world_axes[i, 2]
        if prismatic[i]:
            lx, ly, lz, wx, wy, wz = ax, ay, az, 0.0, 0.0, 0.0
        else:
            dx = T[0, 3] - origins[i, 0]
            dy = T[1, 3] - origins[i, 1]
            dz = T[2, 3] - origins[i, 2]
            lx, ly, lz = ay * dz - az * dy, az * dx - ax * dz, ax * dy - ay * dx
            wx, wy, wz = ax, ay, az
        c = columns[i]
        for r in range(3):  # world-aligned -> tip axes: R^T
            J[r, c] += T[0, r] * lx + T[1, r] * ly + T[2, r] * lz
            J[r + 3, c] += T[0, r] * wx + T[1, r] * wy + T[2, r] * wz


@jit
def _step(J, e, lam, A, y, dq):  # pragma: no cover - compiled
    """``dq = J^T (J J^T + lam I)^-1 e`` (Cholesky of the 6x6 system; ``A``, ``y`` scratch)."""
    n = J.shape[1]
    for r in range(6):
        for c in range(r + 1):
            s = 0.0
            for k in range(n):
                s += J[r, k] * J[c, k]
            A[r, c] = s
        A[r, r] += lam
    for r in range(6):  # in place: A's lower triangle becomes L
        for c in range(r + 1):
            s = A[r, c]
            for k in range(c):
                s -= A[r, k] * A[c, k]
            A[r, c] = math.sqrt(s) if r == c else s / A[c, c]
    for r in range(6):  # L y = e
        s = e[r]
        for c in range(r):
            s -= A[r, c] * y[c]
        y[r] = s / A[r, r]
    for r in range(5, -1, -1):  # L^T x = y
        s = y[r]
        for c in range(r + 1, 6):
            s -= A[c, r] * y[c]
        y[r] = s / A[r, r]
    for k in range(n):
        s = 0.0
        for r in range(6):
            s += J[r, k] * y[r]
        dq[k] = s


@jit
def attempt(placements, prismatic, axes, columns, tip, q, Tti, lower, upper, bounded, sw,
            pos_tol2, ori_tol2, near2, scale, bias, stall, bounds,
            active_set):  # pragma: no cover - compiled
    """Run the attempt of ``LevenbergMarquardt._attempt_log6``, in place on ``q``."""
    n, k = q.shape[0], placements.shape[0]
    T, Terr, M, N = np.empty((4, 4)), np.empty((4, 4)), np.empty((4, 4)), np.empty((4, 4))
    origins, world_axes, Rm = np.empty((k, 3)), np.empty((k, 3)), np.empty((3, 3))
    J, e, w, dq = np.empty((6, n)), np.empty(6), np.empty(3), np.empty(n)
    A, y = np.empty((6, 6)), np.empty(6)
    active = bounded and active_set
    limited = False
    if active:
        for i in range(n):
            if q[i] <= lower[i] or q[i] >= upper[i]:
                limited = True
    E_prev, stalls, last = np.inf, 0, bounds.shape[0] - 1
    for it in range(1, last + 1):
        _forward(placements, prismatic, axes, columns, tip, q, T, origins, world_axes, M, N,
                 Rm)
        compose(Tti, T, Terr)
        _jacobian(T, prismatic, columns, origins, world_axes, J)
        _log6(Terr[:3, :3], Terr[:3, 3], e, w)
        E = 0.0
        for r in range(6):
            E += e[r] * e[r]
        if E <= near2:  # exact test: the translation itself, the rotation's angle
            t2 = Terr[0, 3] ** 2 + Terr[1, 3] ** 2 + Terr[2, 3] ** 2
            if t2 <= pos_tol2 and log3(Terr[:3, :3], w) ** 2 <= ori_tol2:
                return it, True, E
        stalls = stalls + 1 if E > stall * E_prev else 0
        if it == last or stalls >= 3 or not E <= bounds[it]:  # NaN: diverged
            return it, False, E
        E_prev = E
        if sw != 1.0:
            for r in range(6):
                e[r] *= sw
                for c in range(n):
                    J[r, c] *= sw
            E *= sw * sw
        lam = scale * E + bias
        _step(J, e, lam, A, y, dq)
        if limited:  # joints on a limit pushed outward: drop their columns, re-solve
            dropped = False
            for c in range(n):
                if (q[c] <= lower[c] and dq[c] > 0.0) or (q[c] >= upper[c] and dq[c] < 0.0):
                    dropped = True
                    for r in range(6):
                        J[r, c] = 0.0
            if dropped:
                _step(J, e, lam, A, y, dq)
        limited = False
        for c in range(n):
            x = q[c] - dq[c]
            if bounded:
                if x < lower[c]:
                    x, limited = lower[c], active
                elif x > upper[c]:
                    x, limited = upper[c], active
            q[c] = x
    return last, False, np.inf


@jit
def forward_many(placements, prismatic, axes, columns, tip, qs, out):  # pragma: no cover
    """Tip placements (S, 4, 4) of the configurations ``qs`` (S, n) into ``out``."""
    k = placements.shape[0]
    origins, world_axes = np.empty((k, 3)), np.empty((k, 3))
    M, N, Rm = np.empty((4, 4)), np.empty((4, 4)), np.empty((3, 3))
    for s in range(qs.shape[0]):
        _forward(placements, prismatic, axes, columns, tip, qs[s], out[s], origins,
                 world_axes, M, N, Rm)
