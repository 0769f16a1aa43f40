"""The compiled dispatch: each constraint's rows and linearisation, each cost's value.

GENERATED from the registries by ``make dispatch`` (:mod:`dispatch_source`): do not edit.
By type code (a type's place in ``constraints.registry.TYPES`` or
``costs.registry.COST_TYPES``), every branch calls the functions of the type's own file;
nothing of a type's maths is here. An if/elif chain over the type codes (numba's calls
through first-class functions are slower). A code no branch names raises ValueError
(:data:`UNKNOWN_TYPE`) in :func:`rows` and :func:`linearise`:
``test/test_constraint_type_codes.py``. A type registered without compiled functions
never reaches here: its problems run the Python path.
"""

from ros2_ik.core.constraints.compiled import bound_rows
from ros2_ik.core.runtime.compiled import jit
from ros2_ik.core.constraints import angle as constraints_angle
from ros2_ik.core.constraints import distance
from ros2_ik.core.constraints import gaze
from ros2_ik.core.constraints import orientation as constraints_orientation
from ros2_ik.core.constraints import polyhedron
from ros2_ik.core.constraints import position as constraints_position
from ros2_ik.core.constraints import rotation_box
from ros2_ik.core.constraints import support_polygon
from ros2_ik.core.costs import angle as costs_angle
from ros2_ik.core.costs import base_motion
from ros2_ik.core.costs import orientation as costs_orientation
from ros2_ik.core.costs import position as costs_position
from ros2_ik.core.costs import posture

#: Every constraint type code a branch below names, by code:
#: PositionConstraint, OrientationConstraint, GazeTargetConstraint,
#: AngleBetweenVectorsConstraint, PointToPointDistanceConstraint,
#: PointToLineDistanceConstraint, ComInSupportPolygonConstraint,
#: CenterOfMassConstraint, PolyhedronConstraint, RotationBoxConstraint.
CODES = (0, 1, 2, 3, 4, 5, 6, 7, 8, 9)
#: Every cost type code a branch of :func:`costs` names, by code:
#: PostureCost, PositionCost, OrientationCost, AngleBetweenVectorsCost,
#: BaseMotionCost.
COST_CODES = (0, 1, 2, 3, 4)
#: The error :func:`costs` raises on a cost type code it has no formula for.
UNKNOWN_COST = "unknown cost type code in a compiled problem"
#: The error a kernel raises on a type code it has no formula for (an encoder and these
#: codes disagree): never another type's rows in its place.
UNKNOWN_TYPE = "unknown constraint type code in a compiled problem"


@jit
def rows(ctype, cfa, cfb, coff, params, oMf, Jf, g, Jg, xe, xJ, hi, Tb, nb, S33,
         J3):  # pragma: no cover - compiled
    """Every constraint's physical rows into ``g`` (m,), ``Jg`` (m, n); excesses into ``xe``.

    Row constraints fill ``g`` in order; excess types (orientation bounds) fill ``xe`` (3
    each), ``xJ``.  A norm row (:func:`bend`) above ``hi[row]`` writes its ``bend`` rows
    into ``Tb[row]`` (3, n) and their count into ``nb[row]`` (0 for every other row).
    Returns the largest excess norm [rad] (0 without excess types); raises
    ValueError (:data:`UNKNOWN_TYPE`) on a type code it does not know.  ``S33`` (6, 3, 3)
    and ``J3`` (3, n) are scratch (``_constraint_jit.scratch``): an iteration allocates
    nothing.
    """
    p3 = S33[5, 1]
    row, xrow, worst = 0, 0, 0.0
    for i in range(ctype.shape[0]):
        t, fa, fb, prm = ctype[i], cfa[i], cfb[i], params[coff[i]:coff[i + 1]]
        if t == 1:  # OrientationConstraint
            worst = max(
                worst, constraints_orientation.excess(oMf, Jf, fa, fb, prm, xe, xJ, xrow, S33))
            xrow += 3
            continue
        k = physical_rows(t, oMf, Jf, fa, fb, prm, g, Jg, row, p3, J3)
        nb[row:row + k] = 0
        if g[row] > hi[row]:
            nb[row] = bend(t, oMf, Jf, fa, fb, prm, Tb[row], S33, p3, J3)
        row += k
    return worst


@jit(inline="always")  # a step of rows: no call of its own
def bend(t, oMf, Jf, fa, fb, prm, T, S33, p3, J3):  # pragma: no cover - compiled
    """Write a norm row's ``bend`` rows into ``T`` (3, n); their count (0: another type)."""
    if t == 3:  # AngleBetweenVectorsConstraint
        return constraints_angle.bend(oMf, Jf, fa, fb, prm, T, S33, p3, J3)
    if t == 4:  # PointToPointDistanceConstraint
        return distance.point_bend(oMf, Jf, fa, fb, prm, T, S33, p3, J3)
    if t == 5:  # PointToLineDistanceConstraint
        return distance.line_bend(oMf, Jf, fa, fb, prm, T, S33, p3, J3)
    return 0


@jit(inline="always")  # a step of rows and linearise: no call of its own
def physical_rows(t, oMf, Jf, fa, fb, prm, g, Jg, row, p3, J3):  # pragma: no cover - compiled
    """Rows of a row constraint of type ``t`` into ``g``, ``Jg`` from ``row``; their count.

    Every type but the excess types (:func:`rows`).  Raises ValueError
    (:data:`UNKNOWN_TYPE`) on a type code it does not know.
    """
    if t == 0:  # PositionConstraint
        return constraints_position.rows(oMf, Jf, fa, fb, prm, g, Jg, row, p3, J3)
    if t == 2:  # GazeTargetConstraint
        return gaze.rows(oMf, Jf, fa, fb, prm, g, Jg, row, p3, J3)
    if t == 3:  # AngleBetweenVectorsConstraint
        return constraints_angle.rows(oMf, Jf, fa, fb, prm, g, Jg, row, p3, J3)
    if t == 4:  # PointToPointDistanceConstraint
        return distance.point_rows(oMf, Jf, fa, fb, prm, g, Jg, row, p3, J3)
    if t == 5:  # PointToLineDistanceConstraint
        return distance.line_rows(oMf, Jf, fa, fb, prm, g, Jg, row, p3, J3)
    if t == 6:  # ComInSupportPolygonConstraint
        return support_polygon.rows(oMf, Jf, fa, fb, prm, g, Jg, row, p3, J3)
    if t == 7:  # CenterOfMassConstraint
        return constraints_position.rows(oMf, Jf, fa, fb, prm, g, Jg, row, p3, J3)
    if t == 8:  # PolyhedronConstraint
        return polyhedron.rows(oMf, Jf, fa, fb, prm, g, Jg, row, p3, J3)
    if t == 9:  # RotationBoxConstraint
        return rotation_box.rows(oMf, Jf, fa, fb, prm, g, Jg, row, p3, J3)
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
        if t == 1:  # OrientationConstraint
            k, m = constraints_orientation.linearise(
                oMf, Jf, fa, fb, prm, c, lo, hi, margin, x_margin, row, out, g, J, glo, ghi,
                gm, S33, p3, J3)
        elif t == 2:  # GazeTargetConstraint
            k, m = gaze.linearise(
                oMf, Jf, fa, fb, prm, c, lo, hi, margin, x_margin, row, out, g, J, glo, ghi,
                gm, S33, p3, J3)
        elif t == 3:  # AngleBetweenVectorsConstraint
            k, m = constraints_angle.linearise(
                oMf, Jf, fa, fb, prm, c, lo, hi, margin, x_margin, row, out, g, J, glo, ghi,
                gm, S33, p3, J3)
        else:  # the others' linearisation: their physical rows within the shrunk bounds
            k = physical_rows(t, oMf, Jf, fa, fb, prm, g, J, out, p3, J3)
            bound_rows(lo, hi, margin, row, k, glo, ghi, gm, out)
            m = k
        row, out = row + k, out + m


@jit
def costs(ktype, kfa, kfb, koff, kparams, oMf, Jf, q, grad, H, S33,
          Sn):  # pragma: no cover - compiled
    """Costs at group vector ``q``: returns the sum; gradient ``grad`` (n,), curvature ``H``.

    Each cost's value from its type's file; a value adds its Gauss-Newton curvature (when
    it has one) to ``H``.  ``S33``, ``Sn``: ``_polish_jit.work``'s scratch.  Raises
    ValueError (:data:`UNKNOWN_COST`) on a cost type code it does not know.
    """
    grad[:] = 0.0
    H[:, :] = 0.0
    total = 0.0
    for i in range(ktype.shape[0]):
        t, fa, fb, prm = ktype[i], kfa[i], kfb[i], kparams[koff[i]:koff[i + 1]]
        if t == 0:  # PostureCost
            total += posture.value(oMf, Jf, fa, fb, prm, q, grad, H, S33, Sn)
        elif t == 1:  # PositionCost
            total += costs_position.value(oMf, Jf, fa, fb, prm, q, grad, H, S33, Sn)
        elif t == 2:  # OrientationCost
            total += costs_orientation.value(oMf, Jf, fa, fb, prm, q, grad, H, S33, Sn)
        elif t == 3:  # AngleBetweenVectorsCost
            total += costs_angle.value(oMf, Jf, fa, fb, prm, q, grad, H, S33, Sn)
        elif t == 4:  # BaseMotionCost
            total += base_motion.value(oMf, Jf, fa, fb, prm, q, grad, H, S33, Sn)
        else:
            raise ValueError(UNKNOWN_COST)
    return total
