"""The numba-compiled check of :mod:`seed_request`: each constraint's violation [m or rad].

The formulas of the constraints' own ``measure`` (the verification's, not the rows the
attempt drives; each in its type's file, by type code in ``_dispatch_jit.measure``), on
world frame placements that pinocchio computed, so neither the kernel's kinematics nor
its rows enter the check.
"""
from ros2_ik.core.kinematics.jit import jit
from ros2_ik.core.solvers._constraint_jit import layout_views, value_views
from ros2_ik.core.solvers._dispatch_jit import measure


@jit
def measure_packed(ints, consts, values, W, out, tol_m, tol_rad):  # pragma: no cover
    """:func:`measure` on a packed problem (:func:`_constraint_jit.layout_views`)."""
    t, v = layout_views(ints, consts), value_views(ints, values)
    return measure(t[7], t[8], t[9], t[10], v[0], t[11], v[4], W, out, tol_m, tol_rad)
