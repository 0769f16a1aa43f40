"""Paden-Kahan subproblems on 3-vectors held as tuples, compiled (inlined into the kernels).

Vectors are ``(x, y, z)`` float tuples (numba keeps them in registers: no allocation per
target); axes are unit vectors; angles [rad].  ``rot(k, theta, p)`` is ``R(k, theta) p``
(Rodrigues).  Subproblem 1 (:func:`sp1`): the rotation about ``k`` taking ``p1`` to
``p2``; subproblem 3 (distance) reduces to subproblem 4 (:func:`sp4`, ``h . R(k, theta)
p = d``, two solutions); subproblem 2 (two axes) is one :func:`sp4` and one :func:`sp1`
in the kernels (:mod:`.six_r`).  Each returns whether it is exact: False when no angle
meets its equation and the returned one only comes nearest.
"""
import math

from ros2_ik.core.runtime.compiled import jit

#: Relative (and absolute [m or 1]) slack of subproblem 4's tangent case: a pose reached
#: at the edge of a branch (an elbow straight) counts as exact when rounding alone puts
#: it past the edge.
ROUNDING = 1e-12


@jit(inline="always")
def dot(a, b):  # pragma: no cover - compiled
    """Scalar product of two 3-tuples."""
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@jit(inline="always")
def cross(a, b):  # pragma: no cover - compiled
    """Cross product ``a x b`` of two 3-tuples."""
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


@jit(inline="always")
def add(a, b):  # pragma: no cover - compiled
    """Return ``a + b``."""
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2])


@jit(inline="always")
def sub(a, b):  # pragma: no cover - compiled
    """Return ``a - b``."""
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


@jit(inline="always")
def rot(k, theta, p):  # pragma: no cover - compiled
    """``R(k, theta) p``: ``p`` rotated by ``theta`` [rad] about unit axis ``k``."""
    c, s = math.cos(theta), math.sin(theta)
    w = dot(k, p) * (1.0 - c)
    kp = cross(k, p)
    return (p[0] * c + kp[0] * s + k[0] * w, p[1] * c + kp[1] * s + k[1] * w,
            p[2] * c + kp[2] * s + k[2] * w)


@jit(inline="always")
def sp1(k, p1, p2):  # pragma: no cover - compiled
    """Return the angle [rad] about ``k`` that turns ``p1`` nearest to ``p2`` (subproblem 1)."""
    return math.atan2(dot(k, cross(p1, p2)), dot(p1, p2) - dot(k, p1) * dot(k, p2))


@jit(inline="always")
def sp4(h, k, p, d):  # pragma: no cover - compiled
    """Angles ``(a, b, exact)`` [rad] with ``h . R(k, theta) p = d`` (subproblem 4).

    ``a cos + b sin = c`` on the part of ``p`` off the axis; no solution (``exact``
    False, past the tangent by more than :data:`ROUNDING`): both angles are the one
    nearest, where the left side is largest or smallest.
    """
    kp = dot(k, p)
    along = kp * dot(k, h)
    a = dot(h, p) - along
    b = dot(h, cross(k, p))
    c = d - along
    r = math.sqrt(a * a + b * b)
    phi = math.atan2(b, a)
    if abs(c) <= r * (1.0 + ROUNDING) + ROUNDING:  # past the tangent by rounding only
        alpha = math.acos(min(1.0, max(-1.0, c / r))) if r > 0.0 else 0.0
        return phi + alpha, phi - alpha, True
    nearest = phi if c > 0.0 else phi + math.pi
    return nearest, nearest, False


@jit(inline="always")
def sp3(k, p1, p2, d):  # pragma: no cover - compiled
    """Angles ``(a, b, exact)`` [rad] with ``|R(k, theta) p1 + p2| = d`` (subproblem 3)."""
    return sp4(p2, k, p1, 0.5 * (d * d - dot(p1, p1) - dot(p2, p2)))


@jit(inline="always")
def wrap(x):  # pragma: no cover - compiled
    """``x`` [rad] wrapped into ``(-pi, pi]``."""
    return x - 2.0 * math.pi * math.ceil((x - math.pi) / (2.0 * math.pi))
