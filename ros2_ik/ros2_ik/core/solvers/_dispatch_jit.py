"""The compiled dispatch: each constraint's rows, linearisation and measure, each cost's value.

By type code, every branch calls the functions of the type's own file
(``constraints/<type>.py``, ``costs.py``, listed in ``constraints.registry``); nothing of
a type's maths is here.  An if/elif chain over
the type codes (numba's calls through first-class functions are slower).  A code no
branch names raises ValueError (:data:`UNKNOWN_TYPE`) in :func:`rows` and
:func:`linearise`, and measures NaN (never accepted) in :func:`measure`:
``test/test_constraint_type_codes.py``.  A type registered without compiled functions
never reaches here: its problems run the Python path.
"""
import math

import numpy as np

from ros2_ik.core.constraints import (angle, compiled, distance, gaze, orientation,
                                      polyhedron, position, registry)
from ros2_ik.core.constraints.compiled import bound_rows
from ros2_ik.core.costs import angle as angle_cost
from ros2_ik.core.costs import orientation as orientation_cost
from ros2_ik.core.costs import position as position_cost
from ros2_ik.core.costs import posture
from ros2_ik.core.runtime.compiled import jit

compiled.load()  # the constraint files' kernels call the kinematics' helpers

POSITION, ORIENTATION, GAZE, ANGLE = (position.KIND.code, orientation.KIND.code,
                                      gaze.KIND.code, angle.KIND.code)
POINT_TO_POINT, POINT_TO_LINE = distance.POINT_TO_POINT.code, distance.POINT_TO_LINE.code
POLYHEDRON = polyhedron.KIND.code
#: Every type code a branch below names (a test compares it with the registry's).
CODES = (POSITION, ORIENTATION, GAZE, ANGLE, POINT_TO_POINT, POINT_TO_LINE, POLYHEDRON)
POSTURE_COST, POSITION_COST = posture.POSTURE.code, position_cost.POSITION.code
ORIENTATION_COST, ANGLE_COST = orientation_cost.ORIENTATION.code, angle_cost.ANGLE.code
#: Every cost type code a branch of :func:`costs` names.
COST_CODES = (POSTURE_COST, POSITION_COST, ORIENTATION_COST, ANGLE_COST)
#: The error :func:`costs` raises on a cost type code it has no formula for.
UNKNOWN_COST = "unknown cost type code in a compiled problem"
#: The error a kernel raises on a type code it has no formula for (an encoder and these
#: codes disagree): never another type's rows in its place.
UNKNOWN_TYPE = "unknown constraint type code in a compiled problem"
#: Unit of each type's violation (index = type code): 1 radians, 0 metres (the class's).
RADIANS = np.array([int(k.cls.unit == "rad") for k in sorted(
    (k for k in registry.kinds() if k.code in CODES), key=lambda k: k.code)],
    dtype=np.int64)


@jit
def rows(ctype, cfa, cfb, coff, params, oMf, Jf, g, Jg, xe, xJ, S33,
         J3):  # pragma: no cover - compiled
    """Every constraint's physical rows into ``g`` (m,), ``Jg`` (m, n); excesses into ``xe``.

    Row constraints fill ``g`` in order; orientation bounds fill ``xe`` (3 per bound), ``xJ``.
    Returns the largest excess norm [rad] (0 without orientation bounds); raises
    ValueError (:data:`UNKNOWN_TYPE`) on a type code it does not know.  ``S33``
    (6, 3, 3) and ``J3`` (3, n) are scratch (``_constraint_jit.scratch``): an iteration
    allocates nothing.
    """
    p3 = S33[5, 1]
    row, xrow, worst = 0, 0, 0.0
    for i in range(ctype.shape[0]):
        t, fa, fb, prm = ctype[i], cfa[i], cfb[i], params[coff[i]:coff[i + 1]]
        if t == ORIENTATION:
            worst = max(worst, orientation.excess(oMf, Jf, fa, fb, prm, xe, xJ, xrow, S33))
            xrow += 3
        else:
            row += physical_rows(t, oMf, Jf, fa, fb, prm, g, Jg, row, p3, J3)
    return worst


@jit(inline="always")  # a step of rows and linearise: no call of its own
def physical_rows(t, oMf, Jf, fa, fb, prm, g, Jg, row, p3, J3):  # pragma: no cover - compiled
    """Rows of a row constraint of type ``t`` into ``g``, ``Jg`` from ``row``; their count.

    Every type but the orientation bound (an excess, :func:`rows`).  Raises ValueError
    (:data:`UNKNOWN_TYPE`) on a type code it does not know.
    """
    if t == ANGLE:
        return angle.rows(oMf, Jf, fa, fb, prm, g, Jg, row, p3, J3)
    if t == POLYHEDRON:
        return polyhedron.rows(oMf, Jf, fa, fb, prm, g, Jg, row, p3, J3)
    if t == POSITION:
        return position.rows(oMf, Jf, fa, fb, prm, g, Jg, row, p3, J3)
    if t == GAZE:
        return gaze.rows(oMf, Jf, fa, fb, prm, g, Jg, row, p3, J3)
    if t == POINT_TO_POINT:
        return distance.point_rows(oMf, Jf, fa, fb, prm, g, Jg, row, p3, J3)
    if t == POINT_TO_LINE:
        return distance.line_rows(oMf, Jf, fa, fb, prm, g, Jg, row, p3, J3)
    raise ValueError(UNKNOWN_TYPE)


@jit
def linearise(ctype, cfa, cfb, coff, params, cube, lo, hi, margin, x_margin, oMf, Jf,
              g, J, glo, ghi, gm, S33, Sn):  # pragma: no cover - compiled
    """Every constraint's linearisation rows into ``g``, ``J``, bounds ``glo``, ``ghi``.

    ``gm``: each row's margin [m or rad] when it is a physical row (its constraint's
    ``evaluate_physical``, ``polish._feasible``'s rows), 0 for the cube rows.  ``cube``
    (c,): whether an angle bound adds its cube rows.  Kinematics must be computed.
    ``S33``, ``Sn``: ``_polish_jit.work``'s scratch.  Raises ValueError
    (:data:`UNKNOWN_TYPE`) on a type code it does not know.
    """
    p3, J3 = S33[5, 2], Sn[0]
    row, out = 0, 0
    for i in range(ctype.shape[0]):
        t, fa, fb, prm, c = ctype[i], cfa[i], cfb[i], params[coff[i]:coff[i + 1]], cube[i]
        if t == ORIENTATION:
            k, m = orientation.linearise(oMf, Jf, fa, fb, prm, c, lo, hi, margin, x_margin,
                                         row, out, g, J, glo, ghi, gm, S33, p3, J3)
        elif t == ANGLE:
            k, m = angle.linearise(oMf, Jf, fa, fb, prm, c, lo, hi, margin, x_margin,
                                   row, out, g, J, glo, ghi, gm, S33, p3, J3)
        elif t == GAZE:
            k, m = gaze.linearise(oMf, Jf, fa, fb, prm, c, lo, hi, margin, x_margin,
                                  row, out, g, J, glo, ghi, gm, S33, p3, J3)
        else:  # the others' linearisation: their physical rows within the shrunk bounds
            k = physical_rows(t, oMf, Jf, fa, fb, prm, g, J, out, p3, J3)
            bound_rows(lo, hi, margin, row, k, glo, ghi, gm, out)
            m = k
        row, out = row + k, out + m


@jit
def within(ctype, amounts, tol_m, tol_rad):  # pragma: no cover - compiled
    """Return True when every amount is within its unit's tolerance (NaN is not)."""
    for i in range(ctype.shape[0]):
        if amounts[i] != amounts[i]:  # NaN (an unknown code's too: no unit to look up)
            return False
        tol = tol_rad if RADIANS[ctype[i]] == 1 else tol_m
        if not amounts[i] <= tol:
            return False
    return True


@jit
def measure(ctype, cfa, cfb, coff, params, poff, phys, W, out, tol_m,
            tol_rad):  # pragma: no cover - compiled
    """Each constraint's violation into ``out`` (c,) [m or rad, ``RADIANS``]; NaN: unknown.

    ``W`` (f, 4, 4): world placements of the kernel's frames; ``phys[poff[i]:poff[i+1]]``:
    constraint ``i``'s physical bounds (its kind's ``measure_bounds``).  Returns True
    when every violation is within the tolerance of its unit [m or rad].
    """
    R = np.empty((3, 3, 3))
    for i in range(ctype.shape[0]):
        t, Wa, Wb = ctype[i], W[cfa[i]], W[cfb[i]]
        prm, ph = params[coff[i]:coff[i + 1]], phys[poff[i]:poff[i + 1]]
        if t == POSITION:
            out[i] = position.measure(Wa, Wb, prm, ph, R)
        elif t == ORIENTATION:
            out[i] = orientation.measure(Wa, Wb, prm, ph, R)
        elif t == GAZE:
            out[i] = gaze.measure(Wa, Wb, prm, ph, R)
        elif t == ANGLE:
            out[i] = angle.measure(Wa, Wb, prm, ph, R)
        elif t == POINT_TO_POINT:
            out[i] = distance.point_measure(Wa, Wb, prm, ph, R)
        elif t == POINT_TO_LINE:
            out[i] = distance.line_measure(Wa, Wb, prm, ph, R)
        elif t == POLYHEDRON:
            out[i] = polyhedron.measure(Wa, Wb, prm, ph, R)
        else:  # a type this check does not know: never accepted
            out[i] = math.nan
    return within(ctype, out, tol_m, tol_rad)


@jit
def costs(ktype, kfa, kfb, koff, kparams, oMf, Jf, q, grad, H, S33,
          Sn):  # pragma: no cover - compiled
    """Costs at group vector ``q``: returns the sum; gradient ``grad`` (n,), curvature ``H``.

    Each cost's value from ``costs.py``; the posture and position costs add their
    Gauss-Newton curvature to ``H``, the orientation and angle costs their gradient only.
    ``S33``, ``Sn``: ``_polish_jit.work``'s scratch.  Raises ValueError
    (:data:`UNKNOWN_COST`) on a cost type code it does not know.
    """
    grad[:] = 0.0
    H[:, :] = 0.0
    total = 0.0
    for i in range(ktype.shape[0]):
        t, fa, fb, prm = ktype[i], kfa[i], kfb[i], kparams[koff[i]:koff[i + 1]]
        if t == POSTURE_COST:
            total += posture.posture_value(oMf, Jf, fa, fb, prm, q, grad, H, S33, Sn)
        elif t == ORIENTATION_COST:
            total += orientation_cost.orientation_value(oMf, Jf, fa, fb, prm, q, grad, H, S33, Sn)
        elif t == ANGLE_COST:
            total += angle_cost.angle_value(oMf, Jf, fa, fb, prm, q, grad, H, S33, Sn)
        elif t == POSITION_COST:
            total += position_cost.position_value(oMf, Jf, fa, fb, prm, q, grad, H, S33, Sn)
        else:
            raise ValueError(UNKNOWN_COST)
    return total
