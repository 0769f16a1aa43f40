"""The Lie-group helpers of the compiled kernels on SO(3) and SE(3), as pinocchio's.

``compose`` (the SE(3) product of (4, 4) transforms), ``log3`` (the rotation vector
[rad] of a rotation matrix), ``log6`` (the twist ``[v, w]`` of a transform, pinocchio's
order: linear [m] then angular [rad]), ``jlog3`` (pinocchio's ``Jlog3``: the derivative of
``log3`` with respect to a right (local) perturbation) and ``log_map`` (the rate of
``log3(R_WA^T R_WB)`` from world angular velocities), ``quaternion_matrix`` (a
quaternion's rotation).  Plain loops on preallocated arrays
or floats: numba's ``@`` on small matrices calls BLAS and allocates.
"""
import math

from ros2_ik.core.runtime.compiled import jit  # deferred: numba loads with the first kernel


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
def log3(R, w):  # pragma: no cover - compiled
    """Rotation vector of ``R`` into ``w`` (3,); returns the angle [rad] (:func:`log3_of`)."""
    w[0], w[1], w[2], theta = log3_of(R[0, 0], R[0, 1], R[0, 2], R[1, 0], R[1, 1], R[1, 2],
                                      R[2, 0], R[2, 1], R[2, 2])
    return theta


@jit
def log3_at(S, k):  # pragma: no cover - compiled
    """``log3`` of ``S[k]`` (3, 3): ``(wx, wy, wz, theta)``."""
    return log3_of(S[k, 0, 0], S[k, 0, 1], S[k, 0, 2], S[k, 1, 0], S[k, 1, 1], S[k, 1, 2],
                   S[k, 2, 0], S[k, 2, 1], S[k, 2, 2])


@jit
def log3_of(r00, r01, r02, r10, r11, r12, r20, r21, r22):  # pragma: no cover - compiled
    """Rotation vector ``(wx, wy, wz)`` and angle [rad] of ``R`` given by its entries.

    Robust near pi.  A ``R`` with NaN or inf entries gives NaN (an attempt that
    diverged).  On floats, not arrays: a numba call with array arguments passes each as
    a struct (:func:`.forward.kinematics`).
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
def log6(R, p, e, w):  # pragma: no cover - compiled
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


@jit(inline="always")
def _jlog3_coefficients(theta):  # pragma: no cover - compiled
    """``(alpha, diag)``: ``Jlog3(R) = alpha w w^T + diag I + skew(w) / 2``, ``theta = |w|``."""
    t2 = theta * theta
    if theta < 1e-4:
        return 1.0 / 12.0 + t2 / 720.0, 0.5 * (2.0 - t2 / 6.0)
    st, ct = math.sin(theta), math.cos(theta)
    st_1mct = st / (1.0 - ct)
    return 1.0 / t2 - st_1mct / (2.0 * theta), 0.5 * theta * st_1mct


@jit(inline="always")
def jlog3_entries(wx, wy, wz, theta):  # pragma: no cover - compiled
    """Pinocchio's ``Jlog3(R)`` as 9 floats, row by row; ``w = log3(R)``, ``theta = |w|``."""
    alpha, diag = _jlog3_coefficients(theta)
    return (alpha * wx * wx + diag, alpha * wx * wy - 0.5 * wz, alpha * wx * wz + 0.5 * wy,
            alpha * wy * wx + 0.5 * wz, alpha * wy * wy + diag, alpha * wy * wz - 0.5 * wx,
            alpha * wz * wx - 0.5 * wy, alpha * wz * wy + 0.5 * wx, alpha * wz * wz + diag)


@jit
def jlog3(wx, wy, wz, theta, out, k):  # pragma: no cover - compiled
    """:func:`jlog3_entries` into ``out[k]`` (3, 3)."""
    J = jlog3_entries(wx, wy, wz, theta)
    for r in range(3):
        for c in range(3):
            out[k, r, c] = J[3 * r + c]


@jit(inline="always")
def log_map(wx, wy, wz, theta, S):  # pragma: no cover - compiled
    """``M = Jlog3 R_AB^T R_WA^T`` into ``S[4]``: ``w = log3(R_AB)``'s rate from world ones.

    ``d w = M (w_B - w_A)`` with world angular velocities.  Reads ``R_WA`` (``S[0]``) and
    ``R_AB`` (``S[2]``); ``S[3]`` receives ``Jlog3``, ``S[1]`` is overwritten.  By index
    (:func:`.forward.kinematics`).
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


@jit(inline="always")
def quaternion_matrix(x, y, z, w):  # pragma: no cover - compiled
    """Rotation matrix entries (row by row) of quaternion ``(x, y, z, w)``, normalised."""
    s = 2.0 / (x * x + y * y + z * z + w * w)
    return (1.0 - s * (y * y + z * z), s * (x * y - z * w), s * (x * z + y * w),
            s * (x * y + z * w), 1.0 - s * (x * x + z * z), s * (y * z - x * w),
            s * (x * z - y * w), s * (y * z + x * w), 1.0 - s * (x * x + y * y))
