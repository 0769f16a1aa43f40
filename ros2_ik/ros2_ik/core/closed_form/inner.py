"""A 7R chain held at a joint inside it: the six others' closed form at any value, compiled.

Held at ``a`` [rad], a joint turns everything after it rigidly about its axis by ``a``:
the other six joints' axes and points after it, and the frame.  When the joint lies
between a shoulder (the six's axes 1 and 2 meet) and an elbow followed by a spherical
wrist (axes 4, 5, 6 meet), as an SRS arm's upper-arm roll does, both meeting points
still meet at every value: the six are :data:`.six_r.FIRST_TWO_INTERSECTING` whatever
``a`` is.  So one description at the joint's zero serves every value (:func:`layout`,
at detection), and :func:`fill_at` turns its parts after the joint, solves the six and
picks the branches within the limits nearest the seed, in one compiled call, where
EAIK builds a closed form per value (``fixed_axes``, :meth:`.sweep.Sweep.at`).

The description (:class:`Inner`) holds, in the world frame at the zero configuration
(:mod:`.chain`'s product-of-exponentials form): the six axes (rows 0-5), the shoulder's
point (6), a point of the elbow's axis (7), the wrist's point (8), the frame's origin
(9), the columns of its orientation (10-12) and a unit vector perpendicular to the last
axis (13); which rows lie after the held joint (turned) and which are points (turned
about the axis through the joint's point, the others about the axis alone).
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import NamedTuple, Optional

import numpy as np

from ros2_ik.core.closed_form import branches, six_r
from ros2_ik.core.closed_form.branches import Branches, fill
from ros2_ik.core.closed_form.subproblems import rot, sub
from ros2_ik.core.runtime import direct_call
from ros2_ik.core.runtime.compiled import jit

#: Rows of :attr:`Inner.rows`.
ROWS = 14
#: This file and the kernels it calls: its cache is dropped when older than any of them.
SOURCES = (Path(__file__).resolve(),) + branches.SOURCES
#: :func:`fill_at`'s compiled version for :func:`branches_at`'s argument types
#: (:func:`warm_up`; the dispatcher until then), :mod:`.direct_call`.
_FILL_AT = None


class Inner(NamedTuple):
    """What :func:`fill_at` needs of a chain held at joint ``joint`` (module docstring).

    ``rows`` (14, 3); ``after`` and ``points`` (14,) 0/1; ``axis`` (3,) and ``point`` (3,)
    the held joint's axis and a point of it [m].
    """

    joint: int
    rows: np.ndarray
    after: np.ndarray
    points: np.ndarray
    axis: np.ndarray
    point: np.ndarray


def layout(H: np.ndarray, P: np.ndarray, R: np.ndarray, joint: int) -> Optional[Inner]:
    """:class:`Inner` of the 7R chain (``H`` (7, 3), ``P`` (8, 3), ``R``) held at ``joint``.

    None unless the six others form :data:`.six_r.FIRST_TWO_INTERSECTING`
    (:func:`.six_r.shoulder_and_wrist`) with the shoulder's two joints on one side of
    ``joint`` and the wrist's three on one side (then they do at every value), and
    ``joint`` is not an end (:mod:`.held` holds those).
    """
    if not 0 < joint < 6:
        return None
    H, P = np.asarray(H, dtype=float), np.asarray(P, dtype=float)
    held = [i for i in range(7) if i != joint]
    points7 = np.cumsum(P[:7], axis=0)
    axes, points = H[held], points7[held]
    meets = six_r.shoulder_and_wrist(axes, points)
    if meets is None:
        return None
    side = [i > joint for i in held]
    if side[0] != side[1] or not side[3] == side[4] == side[5]:
        return None
    shoulder, wrist = meets
    rows = np.vstack([axes, shoulder, points[2], wrist, P.sum(axis=0), np.asarray(R).T,
                      six_r.perpendicular(axes[5])])
    after = np.array(side + [side[0], side[2], side[3], 1, 1, 1, 1, 1], dtype=np.int64)
    is_point = np.array([0] * 6 + [1, 1, 1, 1, 0, 0, 0, 0], dtype=np.int64)
    return Inner(joint, rows, after, is_point, H[joint].copy(), points7[joint].copy())


@jit
def fill_at(rows: np.ndarray, after: np.ndarray, points: np.ndarray, axis: np.ndarray,
            point: np.ndarray, joint: int, value: float, T: np.ndarray, seed: np.ndarray,
            lower: np.ndarray, upper: np.ndarray, distinct: float, ls: np.ndarray,
            Q: np.ndarray, out: np.ndarray, gap: np.ndarray
            ) -> tuple:  # pragma: no cover - compiled
    """Fill the branches of target ``T`` (1, 4, 4), joint ``joint`` held at ``value`` [rad].

    Turns the rows after the joint (module docstring) into the six's layout (the ``G``
    of :func:`.six_r.geometry`'s :data:`.six_r.FIRST_TWO_INTERSECTING`), solves them
    (:func:`.six_r.solve_6r`, flags into ``ls`` (1, 8)), puts ``value`` back into the
    rows (``Q`` (8, 7)) and fills ``out``, ``gap`` as :func:`.branches.fill`.  Returns
    ``(missed, k, exact)`` as :func:`.branches.kernel_fill`.  Its scratch is its own (an
    array made here costs less than one passed).
    """
    G, Q6 = np.empty((18, 3)), np.empty((1, six_r.BRANCHES, six_r.JOINTS))
    h = (axis[0], axis[1], axis[2])
    p = (point[0], point[1], point[2])
    turned = np.empty((ROWS, 3))
    for r in range(ROWS):
        x = (rows[r, 0], rows[r, 1], rows[r, 2])
        if after[r]:
            if points[r]:
                x = rot(h, value, sub(x, p))
                x = (x[0] + p[0], x[1] + p[1], x[2] + p[2])
            else:
                x = rot(h, value, x)
        turned[r, 0], turned[r, 1], turned[r, 2] = x
    before = np.empty((3, 3))  # joints 1 and 2 at the shoulder, 3 on the elbow's axis
    before[0] = turned[6]
    before[1] = turned[6]
    before[2] = turned[7]
    six_r.fill_layout(G, turned[:6], before, turned[8], turned[9], turned[10:13].T,
                      turned[13], np.zeros(3), 0.0, 0.0)
    if six_r.solve_6r(six_r.FIRST_TWO_INTERSECTING, G, T, Q6, ls):
        return 1, 0, 0
    for r in range(six_r.BRANCHES):
        c = 0
        for i in range(Q.shape[1]):
            if i == joint:
                Q[r, i] = value
            else:
                Q[r, i] = Q6[0, r, c]
                c += 1
    k, exact = fill(Q, ls[0], seed, lower, upper, distinct, out, np.empty(Q.shape), gap,
                    np.empty(six_r.BRANCHES))
    return 0, k, exact


def branches_at(inner: Inner, value: float, T_world_frame_h: np.ndarray, seed: np.ndarray,
                lower: np.ndarray, upper: np.ndarray, distinct: float) -> Branches:
    """:class:`.branches.Branches` of the target (4, 4) with the joint held at ``value``.

    ``seed`` (7,) a float vector, ``lower``, ``upper`` the group's limits (read-only).
    A target the six do not reach exactly at this value has no branch and no rows: the
    sweep proves nothing, so it needs no least-squares rows (EAIK's per value gave them).
    """
    m, n = six_r.BRANCHES, 7
    T = np.empty((1, 4, 4))
    T[0] = T_world_frame_h
    Q, out = np.empty((m, n)), np.empty((m, n))
    ls = np.empty((1, m), dtype=np.bool_)
    gap = np.empty(m)
    missed, k, exact = (_FILL_AT or fill_at)(
        inner.rows, inner.after, inner.points, inner.axis, inner.point, inner.joint,
        float(value), T, seed, lower, upper, float(distinct), ls, Q, out, gap)
    if missed:
        return branches.pack(Q[:0], out, gap, 0, 0)
    return branches.pack(Q, out, gap, k, exact, ls[0])


def warm_up() -> None:
    """Compile or load :func:`fill_at` and take its entry for the types solves pass."""
    global _FILL_AT
    if _FILL_AT is not None:
        return
    from ros2_ik.core.kinematics import jit as loaded  # loads numba
    loaded.drop_stale_cache(SOURCES)
    m, n = six_r.BRANCHES, 7
    lower, upper = np.full(n, -math.pi), np.full(n, math.pi)
    for limit in (lower, upper):
        limit.setflags(write=False)
    ints = np.zeros(ROWS, dtype=np.int64)
    _FILL_AT = direct_call.entry_point(
        fill_at, np.zeros((ROWS, 3)), ints, ints, np.zeros(3), np.zeros(3), 2, 0.0,
        np.eye(4)[None], np.zeros(n), lower, upper, 1e-2, np.empty((1, m), dtype=np.bool_),
        np.empty((m, n)), np.empty((m, n)), np.empty(m))
