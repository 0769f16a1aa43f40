"""One target's exact branches within the joint limits, or a proof that there is none.

A closed form (:mod:`.chain`) gives every exact solution of a pose as angles in
``(-pi, pi]``.  Each joint then takes the ``2 pi k`` equivalent inside its limits nearest
the seed (a continuous joint: nearest the seed; a revolute joint whose range exceeds
``2 pi``: the nearest of its equivalents, as the driver unwraps every solution).  A
branch with a joint that has no equivalent inside its limits is outside them.  Branches
are distinct when some joint differs by more than the driver's distinct tolerance.

No branch inside the limits proves NO_SOLUTION only with margins (:func:`proof`): a
pose reachable within the tolerances but not exactly, a branch just outside a limit, or
a singular branch (a continuum of solutions the closed form gives one of) leaves the
question to the iterative search.
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import NamedTuple, Optional, Tuple

import numpy as np
import pinocchio as pin

from ros2_ik.core.closed_form import six_r
from ros2_ik.core.runtime import direct_call
from ros2_ik.core.runtime.compiled import jit

TWO_PI = 2.0 * math.pi
#: A branch outside the limits by more than this [rad], and by more than the distance the
#: pose tolerances allow (:func:`proof`), counts as outside.
LIMIT_MARGIN_RAD = 1e-3
#: An unreachable pose's least-squares branches must miss it by more than this many times
#: the tolerances, and by more than :data:`REACH_MARGIN_M` / :data:`REACH_MARGIN_RAD`.
TOLERANCE_FACTOR = 100.0
REACH_MARGIN_M = 1e-3
REACH_MARGIN_RAD = 1e-2
#: Smallest singular value of a branch's Jacobian [m or rad per rad] below which the branch
#: may be one of a continuum (a wrist singularity): no proof then.
SINGULAR = 1e-2


class Branches(NamedTuple):
    """Exact branches of one target (see the module docstring).

    ``q``: (k, n) read-only, the distinct branches inside the limits, nearest the seed
    first; ``exact``: exact solutions the closed form found over all angles;
    ``outside``: (e, n), the exact solutions' nearest equivalents when none is inside
    (for the proof), with ``gap`` (e,), how far each lies outside its limits [rad];
    ``ls``: the least-squares rows when none is inside (every row when there is no exact
    solution).
    """

    q: np.ndarray
    exact: int
    outside: np.ndarray
    gap: np.ndarray
    ls: np.ndarray


#: The empty ``outside``, ``gap`` and ``ls`` of a target with branches inside the limits
#: (shared: read-only, nothing to make per solve).
_NONE = np.empty((0, 0))
_NONE.setflags(write=False)


#: This file and the 6R kernel's, whose compiled code :func:`kernel_fill` holds: its cache
#: is dropped when older than any of them (:func:`ros2_ik.core.kinematics.jit.drop_stale_cache`).
SOURCES = (Path(__file__).resolve(),) + six_r.SOURCES
#: :func:`kernel_fill`'s compiled version for :func:`_kernel_branches`' argument types
#: (:func:`warm_up`; the dispatcher until then), :mod:`.direct_call`.
_KERNEL_FILL = None


def branches(closed_form, lower: np.ndarray, upper: np.ndarray, H_world_frame: np.ndarray,
             seed: np.ndarray, distinct: float) -> Branches:
    """:class:`Branches` of target ``T_world_frame`` (4, 4) within ``[lower, upper]`` (n,) [rad].

    ``outside``, ``gap`` and ``ls`` are empty when some branch is inside the limits.
    ``lower``, ``upper``: the group's limits (read-only); ``seed`` (n,) a float vector.
    """
    if closed_form.kernel is None:
        rows = closed_form.solve(H_world_frame)
    else:
        found, exact = _kernel_branches(closed_form, lower, upper, H_world_frame, seed,
                                        distinct)
        if found is not None:
            return found
        # None inside the limits: the kernel's rows again (for the proof), or EAIK's
        # when the kernel found no exact row (the pose is out of its reach)
        rows = closed_form.solve(H_world_frame) if exact else closed_form.missed(H_world_frame)
    return of_rows(*rows, lower, upper, seed, distinct)


def _kernel_branches(closed_form, lower: np.ndarray, upper: np.ndarray, H: np.ndarray,
                     seed: np.ndarray, distinct: float) -> Tuple[Optional[Branches], int]:
    """:func:`branches` by our kernel (``closed_form.kernel``): one compiled call.

    Returns the branches (None when none lies inside the limits) and how many exact rows
    the kernel found (0: the pose is out of its reach).  Only the target (copied: a
    read-only matrix is another numba signature) and the branches are made here: the
    kernel's scratch is its own (an array made there costs less than one passed);
    ``seed`` and the limits are of the types :func:`warm_up` gives the entry.
    """
    T = np.empty((1, 4, 4))
    T[0] = H
    out = np.empty((six_r.BRANCHES, closed_form.n))
    family, G = closed_form.kernel
    k, exact = (_KERNEL_FILL or kernel_fill)(family, G, T, seed, lower, upper,
                                             float(distinct), out)
    return (_inside(out, k, exact) if k else None), exact


@jit
def kernel_fill(family: int, G: np.ndarray, T: np.ndarray, seed: np.ndarray,
                lower: np.ndarray, upper: np.ndarray, distinct: float,
                out: np.ndarray) -> Tuple[int, int]:  # pragma: no cover - compiled
    """:func:`.six_r.solve_6r` of one target ``T`` (1, 4, 4), then :func:`fill` of its rows.

    Returns ``(k, exact)`` as :func:`representatives` does: the first ``k`` rows of ``out``
    (m, n) are the distinct branches inside the limits, nearest ``seed`` first (the rest
    of ``out`` is scratch); ``(0, 0)`` when the kernel found no exact row.
    """
    m, n = out.shape
    Q, ls = np.empty((1, m, n)), np.empty((1, m), dtype=np.bool_)
    if six_r.solve_6r(family, G, T, Q, ls):
        return 0, 0
    return fill(Q[0], ls[0], seed, lower, upper, distinct, out, np.empty((m, n)), np.empty(m),
                np.empty(m))


def warm_up() -> None:
    """Compile or load :func:`kernel_fill` and take its entry for the types solves pass.

    Those of a request: the target copied, a float seed (writable), the group's
    read-only limits (``test_direct_call`` records every call's).
    """
    global _KERNEL_FILL
    if _KERNEL_FILL is not None:
        return
    from ros2_ik.core.kinematics import jit as loaded  # loads numba
    loaded.drop_stale_cache(SOURCES)
    m, n = six_r.BRANCHES, six_r.JOINTS
    lower, upper = np.full(n, -math.pi), np.full(n, math.pi)
    for limit in (lower, upper):
        limit.setflags(write=False)
    _KERNEL_FILL = direct_call.entry_point(
        kernel_fill, *six_r.example_kernel(), np.eye(4)[None], np.zeros(n), lower, upper, 1e-2,
        np.empty((m, n)))


def of_rows(Q: np.ndarray, ls, lower: np.ndarray, upper: np.ndarray, seed: np.ndarray,
            distinct: float) -> Branches:
    """:class:`Branches` of a closed form's rows ``Q`` (m, n) [rad] and flags ``ls`` (m,)."""
    reps, gap, k, exact = representatives(Q, ls, seed, lower, upper, distinct)
    return pack(Q, reps, gap, k, exact, ls)


def pack(Q: np.ndarray, reps: np.ndarray, gap: np.ndarray, k: int, exact: int,
         ls=None) -> Branches:
    """:class:`Branches` of rows ``Q`` from :func:`representatives`' ``(out, gap, k, exact)``.

    ``ls``: the rows' least-squares flags (m,), for :attr:`Branches.ls` when no row is
    inside the limits (None: only when there is no exact row, all of them).
    """
    if k:
        return _inside(reps, k, exact)
    if exact == 0:
        least = Q
    else:
        least = Q[:0] if ls is None else np.asarray(Q)[np.asarray(ls, dtype=bool)]
    return Branches(reps[:0], exact, reps[:exact], gap[:exact], least)


def _inside(reps: np.ndarray, k: int, exact: int) -> Branches:
    """:class:`Branches` of the first ``k`` rows of ``reps``: the branches inside the limits."""
    inside = reps[:k]
    inside.setflags(write=False)
    return Branches(inside, exact, _NONE, _NONE, _NONE)


@jit
def representatives(Q: np.ndarray, ls: np.ndarray, seed: np.ndarray, lower: np.ndarray,
                    upper: np.ndarray, distinct: float
                    ) -> Tuple[np.ndarray, np.ndarray, int, int]:
    """Return the exact rows' per-joint equivalents inside the limits nearest ``seed``.

    ``Q`` (m, n) [rad], ``ls`` (m,) True on a least-squares row (left out).  Returns
    ``(out, gap, k, exact)``: the first ``k`` rows of ``out`` (m, n) are the distinct
    rows inside the limits, nearest the seed first (modulo 2 pi on a joint whose range
    spans 2 pi: the branch a local solver from the seed follows comes first, whichever
    equivalent fits the limits); when ``k`` is 0, the first ``exact`` rows of ``out``
    hold each exact row's nearest equivalent and ``gap`` (m,) how far it lies outside
    [rad].
    """
    m, n = Q.shape
    out, rows, gap, dist = np.empty((m, n)), np.empty((m, n)), np.empty(m), np.empty(m)
    k, exact = fill(Q, ls, seed, lower, upper, distinct, out, rows, gap, dist)
    return out, gap, k, exact


@jit(inline="always")
def fill(Q: np.ndarray, ls: np.ndarray, seed: np.ndarray, lower: np.ndarray,
         upper: np.ndarray, distinct: float, out: np.ndarray, rows: np.ndarray,
         gap: np.ndarray, dist: np.ndarray) -> Tuple[int, int]:
    """:func:`representatives` into caller-owned buffers (``rows``, ``dist``: scratch)."""
    m, n = Q.shape
    exact = 0
    for i in range(m):
        if ls[i]:
            continue
        gap[exact], dist[exact] = _representative(Q[i], seed, lower, upper, rows[exact])
        exact += 1
    order = np.argsort(dist[:exact])
    k = 0
    for i in order:
        if gap[i] > 0.0:
            continue
        seen = False
        for r in range(k):
            far = False
            for j in range(n):
                if abs(out[r, j] - rows[i, j]) > distinct:
                    far = True
                    break
            if not far:
                seen = True
                break
        if not seen:
            out[k] = rows[i]
            k += 1
    if k == 0:
        out[:exact] = rows[:exact]
    return k, exact


@jit
def nearest_each(Q: np.ndarray, ls: np.ndarray, seeds: np.ndarray, lower: np.ndarray,
                 upper: np.ndarray):
    """Each target's branch inside the limits nearest its seed: ``(q (N, n), found (N,))``.

    ``Q`` (N, m, n) and ``ls`` (N, m) as :func:`representatives` takes them
    for one target (padding rows flagged least-squares); the row is that target's
    :func:`representatives` first (the nearest; the first of equally near ones).
    """
    count, m, n = Q.shape
    q = np.zeros((count, n))
    found = np.zeros(count, dtype=np.bool_)
    row = np.empty(n)
    for k in range(count):
        best = np.inf
        for i in range(m):
            if ls[k, i]:
                continue
            g, d = _representative(Q[k, i], seeds[k], lower, upper, row)
            if g <= 0.0 and d < best:
                best = d
                q[k] = row
                found[k] = True
    return q, found


@jit(inline="always")
def _representative(angles: np.ndarray, seed: np.ndarray, lower: np.ndarray,
                    upper: np.ndarray, out: np.ndarray) -> Tuple[float, float]:
    """Write into ``out`` (n,) each angle's equivalent inside the limits nearest ``seed``.

    Returns how far the row lies outside the limits [rad] (0: inside) and its squared
    distance to the seed [rad^2] (modulo 2 pi on a joint whose range spans 2 pi).
    """
    g, d = 0.0, 0.0
    for j in range(len(angles)):
        c, outside = _nearest(angles[j], seed[j], lower[j], upper[j])
        out[j] = c
        g = max(g, outside)
        step = c - seed[j]
        if upper[j] - lower[j] >= TWO_PI - 1e-9:  # wraps: the seed's branch is near
            step -= math.floor(step / TWO_PI + 0.5) * TWO_PI
        d += step * step
    return g, d


@jit(inline="always")
def _nearest(x: float, ref: float, lo: float, hi: float) -> Tuple[float, float]:
    """Return ``x + 2 pi k`` inside ``[lo, hi]`` nearest ``ref`` and 0.

    When no equivalent is inside: the one nearest the interval and how far outside it
    lies [rad].
    """
    c = x + math.floor((ref - x) / TWO_PI + 0.5) * TWO_PI
    if c < lo:
        c += math.ceil((lo - c) / TWO_PI) * TWO_PI
    elif c > hi:
        c -= math.ceil((c - hi) / TWO_PI) * TWO_PI
    if c > hi:  # raised above lo, past hi: the range is narrower than 2 pi
        below = c - TWO_PI
        return (c, c - hi) if c - hi <= lo - below else (below, lo - below)
    if c < lo:
        above = c + TWO_PI
        return (c, lo - c) if lo - c <= above - hi else (above, above - hi)
    return c, 0.0


@jit
def widen(Q: np.ndarray, joint: int, value: float) -> np.ndarray:
    """Return a held chain's rows ``Q`` (m, n) [rad] as the chain's, ``value`` at ``joint``."""
    m, n = Q.shape
    out = np.empty((m, n + 1))
    for i in range(m):
        k = 0
        for j in range(n + 1):
            if j == joint:
                out[i, j] = value
            else:
                out[i, j] = Q[i, k]
                k += 1
    return out


@jit
def widened_representatives(Q: np.ndarray, ls: np.ndarray, joint: int, value: float,
                            seed: np.ndarray, lower: np.ndarray, upper: np.ndarray,
                            distinct: float, turns: bool = True):
    """:func:`representatives` of a 7R chain's rest's rows ``Q`` (m, 6) widened at ``joint``.

    The rest: the chain with joint ``joint`` held at ``value`` [rad] (:mod:`.held`);
    ``turns`` False: a prismatic joint at ``value`` [m], which has no 2 pi equivalents
    (``value`` lies inside its limits and is kept as it is).  Returns
    ``(rows (m, 7), out, gap, k, exact)``, ``rows`` the widened ``Q``.
    """
    if not turns:  # seeded at the value itself: no equivalent is nearer, none is taken
        seed = seed.copy()
        seed[joint] = value
    rows = widen(Q, joint, value)
    m, n = rows.shape
    out, scratch, gap, dist = np.empty((m, n)), np.empty((m, n)), np.empty(m), np.empty(m)
    k, exact = fill(rows, ls, seed, lower, upper, distinct, out, scratch, gap, dist)
    return rows, out, gap, k, exact


def proof(group, pose, found: Branches, family: str, data: pin.Data
          ) -> Tuple[str, Optional[np.ndarray]]:
    """Why no configuration within the limits meets ``pose`` (a CompiledPose), or ''.

    '' (not proven: the search decides) unless, with the margins of the module
    docstring, every least-squares row misses the pose and either there is no exact
    solution or every exact branch lies outside the joint limits at a regular
    configuration.  A least-squares row that comes near the pose may be an exact solution
    the closed form flagged (a tangent case): it leaves the question to the search too.
    Returned with the best available configuration (the nearest row, clamped into the
    limits), or None.
    """
    target = pose.target
    need_m = max(TOLERANCE_FACTOR * target.position_tolerance_m, REACH_MARGIN_M)
    need_rad = max(TOLERANCE_FACTOR * target.orientation_tolerance_rad, REACH_MARGIN_RAD)
    misses = [_errors(group, pose, row, data) for row in found.ls]
    if any(pos <= need_m and ori <= need_rad for pos, ori in misses):
        return "", None
    if found.exact == 0:
        if not len(found.ls):
            return "", None
        nearest = min(range(len(misses)), key=misses.__getitem__)
        pos, ori = misses[nearest]
        manifold = (f", a {group.n}-joint chain reaches a {group.n}-dimensional set of poses"
                    if group.n < 6 else "")
        return (f"out of reach: the pose has no exact solution (closed form {family}"
                f"{manifold}); its nearest least-squares branch misses it by {pos:.3g} m / "
                f"{ori:.3g} rad",
                group.clamp(found.ls[nearest]))
    tolerance = target.position_tolerance_m + target.orientation_tolerance_rad
    for q, gap in zip(found.outside, found.gap.tolist()):
        smallest = _smallest_singular_value(group, pose.frame_id, q, data)
        if smallest < SINGULAR or gap <= LIMIT_MARGIN_RAD + 10.0 * tolerance / smallest:
            return "", None
    nearest = int(np.argmin(found.gap))
    joint = _farthest_joint(group, found.outside[nearest])
    return (f"outside the joint limits: all {found.exact} exact solutions (closed form "
            f"{family}) leave them, the nearest by {found.gap[nearest]:.3g} rad at "
            f"'{joint}'", group.clamp(found.outside[nearest]))


def _errors(group, pose, q: np.ndarray, data: pin.Data) -> Tuple[float, float]:
    """Pose errors [m], [rad] of angles ``q`` on the full model."""
    model = group.robot.model
    pin.forwardKinematics(model, data, group.to_full_q(q))
    pin.updateFramePlacement(model, data, pose.frame_id)
    return pose.errors(data.oMf[pose.frame_id])


def _smallest_singular_value(group, frame_id: int, q: np.ndarray, data: pin.Data) -> float:
    """Smallest singular value of the group's frame Jacobian (6, n) at ``q``."""
    model = group.robot.model
    J = pin.computeFrameJacobian(model, data, group.to_full_q(q), frame_id,
                                 pin.LOCAL_WORLD_ALIGNED)[:, group.iv_full]
    return float(np.linalg.svd(J, compute_uv=False)[-1])


def _farthest_joint(group, q: np.ndarray) -> str:
    """Name of the joint of ``q`` farthest outside its limits."""
    below = np.asarray(group.lower) - q
    above = q - np.asarray(group.upper)
    return group.joint_names[int(np.argmax(np.maximum(below, above)))]
