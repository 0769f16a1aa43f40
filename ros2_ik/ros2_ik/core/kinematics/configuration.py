"""The group vector's Lie group, compiled: integrate, difference, limits, by base kind.

A group vector ``q`` (nq,) is a base's coordinates (when the group has one, the tree's
first joint: :data:`.model.FREEFLYER` x y z qx qy qz qw [m, unit quaternion], or
:data:`.model.PLANAR` x y theta [m, m, rad]), then one value per 1-DoF joint [rad or m].
A step ``dq`` (nv,) is in the tangent space, pinocchio's: a free-flyer's linear then
angular velocity in the base frame (6), a planar base's ``vx vy`` in the base frame and
``omega`` (3), one per joint.  The semantics are those of
:class:`ros2_ik.core.model.floating_base.WholeBodyGroup` (``integrate``, ``difference``,
``project`` without a yaw range): the base moves by the exponential of the step on SE(3)
or SE(2), the heading of a planar base adds up, the quaternion is kept unit.  Without a
base, ``integrate`` is ``q + dq`` clamped into the limits.
"""
import math

from ros2_ik.core.kinematics.lie import log6, quaternion_matrix
from ros2_ik.core.kinematics.model import FIXED, FREEFLYER, PLANAR
from ros2_ik.core.runtime.compiled import jit  # deferred: numba loads with the first kernel


@jit(inline="always")
def base_of(kinds):  # pragma: no cover - compiled
    """Return the group's base kind: the tree's first joint's when it is a base, else FIXED."""
    if kinds.shape[0] and kinds[0] >= FREEFLYER:
        return kinds[0]
    return FIXED


@jit(inline="always")
def sizes(base):  # pragma: no cover - compiled
    """Return ``(base coordinates, base tangent size)`` of base kind ``base``."""
    if base == FREEFLYER:
        return 7, 6
    if base == PLANAR:
        return 3, 3
    return 0, 0


@jit(inline="always")
def tangent_size(kinds, nq):  # pragma: no cover - compiled
    """Return the tangent size nv of a group vector of ``nq`` coordinates on ``kinds``."""
    return nq - 1 if base_of(kinds) == FREEFLYER else nq


@jit
def integrate(kinds, q, dq, lower, upper):  # pragma: no cover - compiled
    """``q <- clamp(q (+) dq)`` in place: the base by its exponential, then the joints.

    ``lower``/``upper`` (nq,): limits per coordinate (a quaternion's +-inf); the base's
    position is clamped into its box after the step, the quaternion normalised.
    """
    base = base_of(kinds)
    nb, vb = sizes(base)
    if base == FREEFLYER:
        _integrate_freeflyer(q, dq)
    elif base == PLANAR:
        c, s = math.cos(q[2]), math.sin(q[2])
        vx, vy, w = dq[0], dq[1], dq[2]
        if abs(w) < 1e-6:  # SE(2)'s V(w) (v): sin w / w, (1 - cos w) / w as series
            a, b = 1.0 - w * w / 6.0, 0.5 * w
        else:
            a, b = math.sin(w) / w, (1.0 - math.cos(w)) / w
        px, py = a * vx - b * vy, b * vx + a * vy
        q[0] += c * px - s * py
        q[1] += s * px + c * py
        q[2] += w
    for i in range(nb):
        x = q[i]
        q[i] = lower[i] if x < lower[i] else (upper[i] if x > upper[i] else x)
    shift = nb - vb
    for i in range(nb, q.shape[0]):
        x = q[i] + dq[i - shift]
        q[i] = lower[i] if x < lower[i] else (upper[i] if x > upper[i] else x)


@jit(inline="always")
def _integrate_freeflyer(q, dq):  # pragma: no cover - compiled
    """``q[:7] <- q[:7] * exp6(dq[:6])`` (pinocchio's ``integrate``), a unit quaternion."""
    vx, vy, vz, wx, wy, wz = dq[0], dq[1], dq[2], dq[3], dq[4], dq[5]
    t2 = wx * wx + wy * wy + wz * wz
    t = math.sqrt(t2)
    if t < 1e-4:  # (1 - cos t) / t^2, (t - sin t) / t^3 and sin(t / 2) / t as series
        a, b, h = 0.5 - t2 / 24.0, 1.0 / 6.0 - t2 / 120.0, 0.5 - t2 / 48.0
    else:
        a, b, h = (1.0 - math.cos(t)) / t2, (t - math.sin(t)) / (t2 * t), math.sin(0.5 * t) / t
    # p = V(w) v = v + a (w x v) + b (w x (w x v)), in the base frame
    cx, cy, cz = wy * vz - wz * vy, wz * vx - wx * vz, wx * vy - wy * vx
    dx, dy, dz = wy * cz - wz * cy, wz * cx - wx * cz, wx * cy - wy * cx
    px, py, pz = vx + a * cx + b * dx, vy + a * cy + b * dy, vz + a * cz + b * dz
    x, y, z, w = q[3], q[4], q[5], q[6]
    # the base's rotation applied to p: p + 2 w (u x p) + 2 u x (u x p), u = (x, y, z)
    ux, uy, uz = y * pz - z * py, z * px - x * pz, x * py - y * px
    q[0] += px + 2.0 * (w * ux + y * uz - z * uy)
    q[1] += py + 2.0 * (w * uy + z * ux - x * uz)
    q[2] += pz + 2.0 * (w * uz + x * uy - y * ux)
    ex, ey, ez, ew = h * wx, h * wy, h * wz, math.cos(0.5 * t)  # exp3(w) as a quaternion
    rx, ry, rz, rw = _product(x, y, z, w, ex, ey, ez, ew)
    n = 1.0 / math.sqrt(rx * rx + ry * ry + rz * rz + rw * rw)
    if rx * x + ry * y + rz * z + rw * w < 0.0:  # the sign nearer the input's (pinocchio)
        n = -n
    q[3], q[4], q[5], q[6] = rx * n, ry * n, rz * n, rw * n


@jit
def difference(kinds, q0, q1, dq, scratch):  # pragma: no cover - compiled
    """Tangent step ``dq`` (nv,) from ``q0`` to ``q1``: ``integrate(q0, dq) = q1``.

    A free-flyer's ``log6(M0^-1 M1)``; a planar base's SE(2) log with the heading's
    plain difference; the joints' differences.  ``scratch`` (4, 4) is written.
    """
    base = base_of(kinds)
    nb, vb = sizes(base)
    if base == FREEFLYER:
        _relative_freeflyer(q0, q1, scratch)
        log6(scratch[:3, :3], scratch[:3, 3], dq, scratch[3, :3])
    elif base == PLANAR:
        c, s = math.cos(q0[2]), math.sin(q0[2])
        dx, dy = q1[0] - q0[0], q1[1] - q0[1]
        px, py = c * dx + s * dy, -s * dx + c * dy  # in the base frame
        w = math.atan2(math.sin(q1[2] - q0[2]), math.cos(q1[2] - q0[2]))
        if abs(w) < 1e-6:  # V(w)^-1 = [[a, b], [-b, a]], a = (w / 2) cot(w / 2), b = w / 2
            a = 1.0 - w * w / 12.0
        else:
            a = 0.5 * w * math.sin(w) / (1.0 - math.cos(w))
        b = 0.5 * w
        dq[0], dq[1], dq[2] = a * px + b * py, -b * px + a * py, q1[2] - q0[2]
    shift = nb - vb
    for i in range(nb, q0.shape[0]):
        dq[i - shift] = q1[i] - q0[i]


@jit(inline="always")
def _product(ax, ay, az, aw, bx, by, bz, bw):  # pragma: no cover - compiled
    """Return the quaternion product ``a b`` (``(x, y, z, w)``, Hamilton's convention)."""
    return (aw * bx + ax * bw + ay * bz - az * by, aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw, aw * bw - ax * bx - ay * by - az * bz)


@jit(inline="always")
def _relative_freeflyer(q0, q1, M):  # pragma: no cover - compiled
    """``M[:3, :4] = M0^-1 M1`` of the free-flyer placements of ``q0``, ``q1``.

    The rotation is that of the quaternion ``conj(u0) u1``; the translation
    ``R0^T (p1 - p0)``.
    """
    x, y, z, w = -q0[3], -q0[4], -q0[5], q0[6]  # conj(u0): R0^T
    ux, uy, uz, uw = _product(x, y, z, w, q1[3], q1[4], q1[5], q1[6])
    r, c = quaternion_matrix(ux, uy, uz, uw), quaternion_matrix(x, y, z, w)
    dx, dy, dz = q1[0] - q0[0], q1[1] - q0[1], q1[2] - q0[2]
    for i in range(3):
        M[i, 3] = c[3 * i] * dx + c[3 * i + 1] * dy + c[3 * i + 2] * dz
        for j in range(3):
            M[i, j] = r[3 * i + j]


@jit
def pushed_out(kinds, q, dq, lower, upper, keep):  # pragma: no cover - compiled
    """Clear ``keep`` (nv,) for the joints on a limit that ``dq`` pushes outward; True if any.

    A base's tangent columns are always kept (its bounds are kept by :func:`integrate`'s
    clamp after the step).
    """
    nb, vb = sizes(base_of(kinds))
    for j in range(vb):
        keep[j] = True
    any_out = False
    for i in range(nb, q.shape[0]):
        j = i - nb + vb
        out = (q[i] <= lower[i] and dq[j] < 0.0) or (q[i] >= upper[i] and dq[j] > 0.0)
        keep[j] = not out
        any_out = any_out or out
    return any_out
