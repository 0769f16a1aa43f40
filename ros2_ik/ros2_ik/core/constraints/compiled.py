"""What the constraint files' compiled functions share: small row and measure helpers.

Each constraint type's file defines its kernel functions with
:func:`ros2_ik.core.runtime.compiled.jit` (:mod:`registry`); the few they share are here.  The
kernels' kinematics helpers (``point_in_frame``, ``rotations`` compiled in
``solvers._constraint_jit``; ``log3_at``, ``log_map`` in
:mod:`ros2_ik.core.kinematics.lie`) are reached as attributes of this module, set by
:func:`load` when the dispatch module loads: importing the solver package from a
constraint file would import the constraints again (a cycle).  Plain loops on floats, as
the kernels.
"""
import math
from typing import Callable, NamedTuple, Optional, Tuple

from ros2_ik.core.runtime.compiled import jit

#: The kernels' frame helpers (``solvers._constraint_jit``) and Lie helpers
#: (:mod:`ros2_ik.core.kinematics.lie`), set by :func:`load`.
point_in_frame = rotations = log3_at = log_map = None


def load() -> None:
    """Bind the kernels' helpers (the dispatch module calls it when it loads)."""
    global point_in_frame, rotations, log3_at, log_map
    from ros2_ik.core.kinematics import lie
    from ros2_ik.core.solvers import _constraint_jit as frames
    point_in_frame, rotations = frames.point_in_frame, frames.rotations
    log3_at, log_map = lie.log3_at, lie.log_map


@jit
def row_from(gx, gy, gz, J, r0, g_row):  # pragma: no cover - compiled
    """``g_row = (gx, gy, gz) @ J[r0:r0 + 3]`` for ``J`` (k, n)."""
    for c in range(J.shape[1]):
        g_row[c] = gx * J[r0, c] + gy * J[r0 + 1, c] + gz * J[r0 + 2, c]


@jit
def bound_rows(lo, hi, margin, row, k, glo, ghi, gm, out):  # pragma: no cover - compiled
    """Copy ``k`` physical rows' shrunk bounds and margins from ``row`` to ``out``."""
    for i in range(k):
        glo[out + i], ghi[out + i], gm[out + i] = lo[row + i], hi[row + i], margin[row + i]


@jit
def cube_bounds(half, glo, ghi, gm, out):  # pragma: no cover - compiled
    """Bounds ``+-half`` of three cube rows (margin 0: not physical rows)."""
    for i in range(3):
        glo[out + i], ghi[out + i], gm[out + i] = -half, half, 0.0


@jit
def world_vectors(oMf, fa, fb, prm, S):  # pragma: no cover - compiled
    """Write ``a = R_WA a_A`` into ``S[5, 0]``, ``b = R_WB b_B`` into ``S[5, 1]``; return a . b."""
    a, b, A, B = S[5, 0], S[5, 1], oMf[fa], oMf[fb]
    for r in range(3):
        a[r] = A[r, 0] * prm[0] + A[r, 1] * prm[1] + A[r, 2] * prm[2]
        b[r] = B[r, 0] * prm[3] + B[r, 1] * prm[4] + B[r, 2] * prm[5]
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@jit
def act(T, p, o):  # pragma: no cover - compiled
    """Return ``T p`` (three floats) for a placement ``T`` (4, 4) and ``p = p[o:o + 3]``."""
    x, y, z = p[o], p[o + 1], p[o + 2]
    return (T[0, 0] * x + T[0, 1] * y + T[0, 2] * z + T[0, 3],
            T[1, 0] * x + T[1, 1] * y + T[1, 2] * z + T[1, 3],
            T[2, 0] * x + T[2, 1] * y + T[2, 2] * z + T[2, 3])


@jit
def act_inv(T, x, y, z):  # pragma: no cover - compiled
    """Return ``T^-1 p`` (three floats): ``R^T (p - t)``."""
    x, y, z = x - T[0, 3], y - T[1, 3], z - T[2, 3]
    return (T[0, 0] * x + T[1, 0] * y + T[2, 0] * z,
            T[0, 1] * x + T[1, 1] * y + T[2, 1] * z,
            T[0, 2] * x + T[1, 2] * y + T[2, 2] * z)


@jit
def seen_from(Wa, Wb, p, o):  # pragma: no cover - compiled
    """Return point ``p[o:o + 3]`` of frame B seen in frame A (three floats) [m]."""
    x, y, z = act(Wb, p, o)
    return act_inv(Wa, x, y, z)


@jit
def vector_angle(a0, a1, a2, b0, b1, b2):  # pragma: no cover - compiled
    """Angle [rad] between 3-vectors in ``[0, pi]``: ``atan2(|a x b|, a . b)``."""
    x = a1 * b2 - a2 * b1
    y = a2 * b0 - a0 * b2
    z = a0 * b1 - a1 * b0
    return math.atan2(math.sqrt(x * x + y * y + z * z), a0 * b0 + a1 * b1 + a2 * b2)


@jit
def outside(v, lower, upper):  # pragma: no cover - compiled
    """Distance of ``v`` outside ``[lower, upper]`` (NaN stays NaN)."""
    if v != v:
        return v
    return max(lower - v, v - upper, 0.0)


class Kind(NamedTuple):
    """One constraint type as the kernels take it: its file's ``KIND``, in :mod:`registry`.

    ``cls``: the exact class (a subclass may compute other rows: the Python path runs);
    ``code``: its type code in the compiled dispatch (``solvers._dispatch_jit``), None
    for a type the kernels do not know (the Python path runs); ``encode(c, tolerance)``:
    ``(model frame id A, model frame id B, parameters)`` as its compiled functions read
    them; ``measure_bounds(c)``: what its compiled ``measure`` needs beyond those (its
    physical bounds [m or rad]); ``polish_rows(c)``: ``(rows, cube rows added)`` of its
    compiled ``linearise`` (without one: its physical rows within their shrunk bounds,
    :func:`physical_rows`); ``excess``: its rows are an excess beyond a bound (3, always
    driven to zero) rather than rows within physical bounds.
    """

    cls: type
    code: Optional[int]
    encode: Optional[Callable]
    measure_bounds: Optional[Callable]
    polish_rows: Optional[Callable]
    excess: bool = False


def physical_rows(c) -> Tuple[int, bool]:
    """``polish_rows`` of a type whose linearisation is its physical rows alone."""
    return len(c.physical_lists()[0]), False


def distance_bounds(c) -> list:
    """``measure_bounds`` of a type measured against ``[distance_lower, distance_upper]``."""
    return [c.distance_lower, c.distance_upper]


class CostKind(NamedTuple):
    """One cost type as the polishing kernel takes it (``costs.py``), in :mod:`registry`.

    ``cls``: the exact class; ``code``: its type code in ``_dispatch_jit.costs``;
    ``frames(c)``: the model frame ids (A, B) its compiled value reads, or (); ``encode(c,
    group)``: ``(parameters, constant)``, the constant being the part of its value the
    group's joints do not move.
    """

    cls: type
    code: int
    frames: Callable
    encode: Callable
