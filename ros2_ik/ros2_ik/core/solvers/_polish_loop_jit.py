"""Polishing's loop compiled (:mod:`polish_kernel`): :func:`polish.polish` in one numba call.

The same steps as the Python loop on the compiled model (:func:`_polish_jit.model`): the
QP solved by daqp's own C entry (``daqp_quadprog``, the function ``daqp.solve`` calls,
with its default settings), the restoration by the compiled attempt
(:func:`_lm_jit.stacked_attempt_in`), the damped BFGS update.  A group with a base
steps in its tangent space (``kinematics.configuration``'s ``integrate`` and
``difference``, the group's own in the Python loop), its base columns bounded by the trust
radius alone.  The clock is ``clock_gettime(CLOCK_MONOTONIC)``, the one
``time.perf_counter`` reads on Linux, so the deadline is the budget's own.  In Python a
step is mostly interpreter (six calls across the boundary, a score of small numpy
operations).
"""
import math

import daqp
import llvmlite.binding
import numpy as np
from numba import types

from ros2_ik.core.kinematics.configuration import base_of, difference, integrate, sizes
from ros2_ik.core.kinematics.jit import jit
from ros2_ik.core.solvers._constraint_jit import layout_views, shrunk, value_views
from ros2_ik.core.solvers._lm_jit import stacked_attempt_in
from ros2_ik.core.solvers._polish_jit import model_in, unpack_costs
from ros2_ik.core.solvers._polish_jit import work as model_work
from ros2_ik.core.solvers._stacked_jit import work
from ros2_ik.core.solvers.polish import EQUALITY

# The extension module's C symbols, visible to the compiled code by name (so the
# compiled loop can be cached: no address is baked into it).
llvmlite.binding.load_library_permanently(daqp.__file__)
_quadprog = types.ExternalFunction(
    "daqp_quadprog", types.void(types.voidptr, types.voidptr, types.voidptr))
_default_settings = types.ExternalFunction("daqp_default_settings", types.void(types.voidptr))
_clock_gettime = types.ExternalFunction(
    "clock_gettime", types.int32(types.int32, types.voidptr))
_CLOCK_MONOTONIC = 1


@jit
def now(ts):  # pragma: no cover - compiled
    """``time.perf_counter()`` [s] (``ts``: an int64 (2,) scratch for the timespec)."""
    _clock_gettime(_CLOCK_MONOTONIC, ts.ctypes)
    return ts[0] + 1e-9 * ts[1]


@jit
def default_settings(settings):  # pragma: no cover - compiled
    """Fill ``settings`` (int64 (64,), room for daqp's ``DAQPSettings``) with daqp's defaults."""
    _default_settings(settings.ctypes)


@jit
def quadprog(H, f, A, bupper, blower, sense, x, lam, problem, result,
             settings):  # pragma: no cover - compiled
    """Run daqp on ``min 1/2 x'Hx + f'x``, ``blower <= [x; A x] <= bupper``: ``(fval, exitflag)``.

    ``problem`` int64 (10,) and ``result`` int64 (8,): scratch for daqp's ``DAQPProblem``
    and ``DAQPResult`` structs (x86-64 layout); ``settings``: a ``DAQPSettings`` filled
    by :func:`default_settings`.  ``x`` (n,) and ``lam`` (n + k,) receive the solution.
    """
    p32 = problem.view(np.int32)
    n, m = H.shape[0], bupper.shape[0]
    p32[0], p32[1], p32[2] = n, m, m - A.shape[0]
    problem[2], problem[3], problem[4] = H.ctypes.data, f.ctypes.data, A.ctypes.data
    problem[5], problem[6] = bupper.ctypes.data, blower.ctypes.data
    problem[7], problem[8], problem[9] = sense.ctypes.data, 0, 0  # no hierarchy, a QP
    result[:] = 0
    result[0], result[1] = x.ctypes.data, lam.ctypes.data
    _quadprog(result.ctypes, problem.ctypes, settings.ctypes)
    return result.view(np.float64)[2], result.view(np.int32)[8]


@jit
def _bfgs(B, s, y, Bs):  # pragma: no cover - compiled
    """``polish._bfgs`` in place on ``B`` (``y`` is overwritten; ``Bs`` scratch)."""
    n = s.shape[0]
    sBs = 0.0
    for i in range(n):
        v = 0.0
        for j in range(n):
            v += B[i, j] * s[j]
        Bs[i] = v
        sBs += s[i] * v
    if sBs <= 1e-16:
        return
    sy = 0.0
    for i in range(n):
        sy += s[i] * y[i]
    if sy < 0.2 * sBs:  # keep B positive definite
        theta = 0.8 * sBs / (sBs - sy)
        sy = 0.0
        for i in range(n):
            y[i] = theta * y[i] + (1.0 - theta) * Bs[i]
            sy += s[i] * y[i]
    for i in range(n):
        for j in range(n):
            B[i, j] += y[i] / sy * y[j] - Bs[i] / sBs * Bs[j]


@jit
def polish(tree, problem, kernel, costs, restore, limits, q, k, constants, deadline,
           settings):  # pragma: no cover - compiled
    """:func:`polish.polish` from feasible ``q`` (in place): returns the steps taken.

    ``tree``: ``Tree``'s five arrays; ``problem``: ``(fparent, fplace, ctype, cfa, cfb,
    coff, params, pose)``; ``kernel``: ``(lo, hi, margin, x_margin, n_rows, n_excess)``;
    ``costs``: ``(cube, pose_rows, ktype, kfa, kfb, koff, kparams)``; ``restore``: the
    attempt's ``(scale, bias, stall, iterations, active_set)``; ``limits``: the search
    limits ``(lower, upper)``; ``k`` QP rows; ``constants``: ``(MAX_STEPS, RADIUS,
    MIN_RADIUS, RELATIVE_DECREASE, MU, MU_FLOOR, FEASIBLE_SLACK)`` and the costs' constant (the
    locked joints' posture cost, ``CompiledModel``'s); ``deadline``: [s] on
    ``time.perf_counter``'s clock; ``settings``: daqp's (see :func:`quadprog`).
    """
    parents, placements, kinds, axes, columns = tree
    fparent, fplace, ctype, cfa, cfb, coff, params, pose = problem
    lo, hi, margin, x_margin, n_rows, n_excess = kernel
    cube, pose_rows, ktype, kfa, kfb, koff, kparams = costs
    scale, bias, stall, restore_iterations, active_set = restore
    lower, upper = limits
    max_steps, radius_max, min_radius, relative, mu, mu_floor, slack, constant = constants
    base = base_of(kinds)
    nb, vb = sizes(base)  # the base's coordinates and tangent columns (0, 0: none)
    nq, eq = q.shape[0], pose_rows.shape[0]
    n = nq - nb + vb  # tangent columns
    g, J, glo, ghi, gm = np.empty(k), np.empty((k, n)), np.empty(k), np.empty(k), np.empty(k)
    grad, H = np.empty(n), np.empty((n, n))
    g2, J2, glo2, ghi2, gm2 = (np.empty(k), np.empty((k, n)), np.empty(k), np.empty(k),
                               np.empty(k))
    grad2, H2 = np.empty(n), np.empty((n, n))
    modelling = model_work(n, parents.shape[0], fparent.shape[0])  # the model's arrays
    ok, cost = model_in(modelling, parents, placements, kinds, axes, columns, fparent, fplace,
                        ctype, cfa, cfb, coff, params, cube, lo, hi, margin, x_margin, pose,
                        pose_rows, ktype, kfa, kfb, koff, kparams, q, slack, g, J, glo, ghi,
                        gm, grad, H)
    cost += constant
    if not ok:  # not feasible after all (the attempt's test is its own)
        return 0
    B = H.copy()
    damping = 0.0
    for i in range(n):
        damping = max(damping, H[i, i])
    damping = mu * damping + mu_floor  # polish.damped
    for i in range(n):
        B[i, i] += damping
    sense = np.zeros(n + k, dtype=np.int32)
    sense[n + k - eq:] = EQUALITY
    b_hi, b_lo, dq, lam = np.empty(n + k), np.empty(n + k), np.empty(n), np.empty(n + k)
    s, y, Bs, q_new, scratch = np.empty(n), np.empty(n), np.empty(n), np.empty(nq), \
        np.empty((4, 4))
    qp_problem, qp_result, ts = (np.zeros(10, dtype=np.int64), np.zeros(8, dtype=np.int64),
                                 np.zeros(2, dtype=np.int64))
    restoring = work(n, parents.shape[0], fparent.shape[0], n_rows,  # restorations' arrays
                     (6 if pose.shape[0] else 0) + 3 * n_excess)
    radius, started = radius_max, now(ts)
    for step in range(1, max_steps + 1):
        t = now(ts)
        # Stop while a step of the mean length still ends before the deadline.
        if t >= deadline or radius < min_radius or t + 1.5 * (t - started) / step > deadline:
            return step
        for i in range(vb):  # a base's tangent: the radius alone (integrate keeps its box)
            b_hi[i], b_lo[i] = radius, -radius
        for i in range(vb, n):  # a joint's column i, its coordinate i + nb - vb
            j = i + nb - vb
            b_hi[i] = min(upper[j] - q[j], radius)
            b_lo[i] = max(lower[j] - q[j], -radius)
        for i in range(k):
            b_hi[n + i] = ghi[i] - g[i]
            b_lo[n + i] = glo[i] - g[i]
        for i in range(n + k):
            b_lo[i] = min(b_lo[i], b_hi[i])  # a row already outside its bound: no worse
        objective, flag = quadprog(B, grad, J, b_hi, b_lo, sense, dq, lam, qp_problem,
                                   qp_result, settings)
        total, largest = 0.0, 0.0
        for i in range(n):
            total += dq[i]
            largest = max(largest, abs(dq[i]))
        if flag < 1 or not math.isfinite(total):
            radius *= 0.25
            continue
        if -objective <= relative * abs(cost) + 1e-12:
            return step  # first-order optimal within the linearisation
        q_new[:] = q  # step and clamp (polish's group.integrate, project), then restore
        integrate(kinds, q_new, dq, lower, upper)
        _, done, _ = stacked_attempt_in(
            restoring, parents, placements, kinds, axes, columns, fparent, fplace, ctype, cfa,
            cfb, coff, params, pose, q_new, lower, upper, lo, hi, margin, x_margin, scale,
            bias, stall, restore_iterations, active_set)
        if not done:
            radius = 0.25 * min(radius, largest)
            continue
        _, cost_new = model_in(modelling, parents, placements, kinds, axes, columns,
                               fparent, fplace, ctype, cfa, cfb, coff, params, cube, lo, hi,
                               margin, x_margin, pose, pose_rows, ktype, kfa, kfb, koff,
                               kparams, q_new, slack, g2, J2, glo2, ghi2, gm2, grad2, H2)
        cost_new += constant
        if not cost_new < cost:
            radius = 0.25 * min(radius, largest)
            continue
        difference(kinds, q, q_new, s, scratch)
        for i in range(n):  # the Lagrangian's gradient change at the QP's multipliers
            v = grad2[i] - grad[i]
            for r in range(k):
                v += lam[n + r] * (J2[r, i] - J[r, i])
            y[i] = v
        _bfgs(B, s, y, Bs)
        decrease = cost - cost_new
        q[:], cost = q_new, cost_new
        g, g2, J, J2, glo, glo2, ghi, ghi2, gm, gm2, grad, grad2, H, H2 = \
            g2, g, J2, J, glo2, glo, ghi2, ghi, gm2, gm, grad2, grad, H2, H
        if decrease <= relative * abs(cost) + 1e-12:
            return step
        radius = min(2.0 * radius, radius_max)
    return max_steps


@jit
def polish_packed(ints, consts, values, cube, pose_rows, kints, kparams, restore, lower,
                  upper, q, k, constants, deadline, settings):  # pragma: no cover - compiled
    """:func:`polish` on a packed problem and packed costs.

    ``ints``, ``consts``, ``values``: :func:`_constraint_jit.layout_views` and
    :func:`_constraint_jit.value_views`; ``kints``: :func:`_polish_jit.unpack_costs`.
    Eleven arrays instead of twenty-seven: each array argument costs the call its
    unboxing.
    """
    t, v, c = layout_views(ints, consts), value_views(ints, values), unpack_costs(kints)
    lo, hi, margin = shrunk(ints, values)
    return polish(t[:5], (t[5], t[6], t[7], t[8], t[9], t[10], v[0], v[3]),
                  (lo, hi, margin, v[5], ints[3], ints[4]),
                  (cube, pose_rows, c[0], c[1], c[2], c[3], kparams), restore,
                  (lower, upper), q, k, constants, deadline, settings)
