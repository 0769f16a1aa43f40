"""The numba-compiled functions of :mod:`constraint_kernel` (packed layout and pose rows).

On the world placements and ``LOCAL_WORLD_ALIGNED`` Jacobians (6, n) of the few frames
the constraints name, which :func:`ros2_ik.core.kinematics.forward.kinematics` computes
on the joint tree of the whole model (locked joints folded into fixed placements): the
packed layout's views and a pose target's weighted rows (shared by the LM attempt and
polishing).  The constraints' rows by type code: :mod:`_dispatch_jit`.  Plain loops on small
arrays, as in :mod:`ros2_ik.core.kinematics.forward`.  The LM attempt on these rows is
in :mod:`_constraint_lm_jit`.
"""
import numpy as np

from ros2_ik.core.kinematics.jit import jit
from ros2_ik.core.kinematics.lie import compose, log3


#: Entries before the arrays in a packed problem's integers (:func:`layout_views`): tree
#: joints k, frames f, constraints c, rows m, orientation bounds, parameters, pose
#: parameters (0 or 65).
HEADER = 7


@jit
def layout_views(ints, consts):  # pragma: no cover - compiled
    """Return the views of a packed layout (``constraint_kernel.Layout``).

    ``ints``: :data:`HEADER` then parents, kinds, columns (k each), fparent (f), ctype,
    cfa, cfb (c each), coff (c + 1), each row's unit (m: 1 for [rad], 0 for [m]);
    ``consts``: placements (k, 4, 4), axes (k, 3), fplace (f, 4, 4).  Returns
    ``(parents, placements, kinds, axes, columns, fparent, fplace, ctype, cfa, cfb,
    coff)``.
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
            ints[o:o + c + 1])


@jit
def value_views(ints, values):  # pragma: no cover - compiled
    """Return the views of a problem's packed floats (``constraint_kernel.Compiled``).

    ``values``: the orientation bounds' margin [rad], the rows' margin in metres [m],
    params, the row constraints' physical lower and upper bounds (m each), pose.
    Returns ``(params, lower, upper, pose, margin_m, margin_rad)``.
    """
    m, npar = ints[3], ints[5]
    v = 2 + npar
    e = v + 2 * m
    return (values[2:v], values[v:v + m], values[v + m:e], values[e:], values[1],
            values[0])


@jit
def shrunk(ints, values):  # pragma: no cover - compiled
    """Return the row constraints' shrunk bounds and margins ``(lo, hi, margin)`` (m,) each.

    Each row's bounds moved inward by its margin, the packed margin of its unit (the
    layout's unit flags, after ``coff``: 1 for [rad]), as ``Residuals.row_lower``.
    """
    m = ints[3]
    units = ints[ints.shape[0] - m:]
    _, lower, upper, _, margin_m, margin_rad = value_views(ints, values)
    lo, hi, margin = np.empty(m), np.empty(m), np.empty(m)
    for i in range(m):
        g = margin_rad if units[i] else margin_m
        lo[i], hi[i], margin[i] = lower[i] + g, upper[i] - g, g
    return lo, hi, margin


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
