"""Our compiled closed form of three 6R families, every branch of many targets in one call.

The chain is :mod:`.chain`'s product of exponentials at the zero configuration: joint
axes ``H`` (6, 3), offsets ``P`` (7, 3) [m] and the frame's orientation ``R`` (3, 3), all
in the world frame.  :func:`geometry` recognises, within :data:`TOLERANCE`:

* :data:`SPHERICAL_TWO_PARALLEL`: axes 4, 5, 6 meet in one point (a spherical wrist) and
  axes 2, 3 are parallel;
* :data:`THREE_PARALLEL_TWO_INTERSECTING`: axes 2, 3, 4 are parallel and axes 5, 6 meet;
* :data:`FIRST_TWO_INTERSECTING`: axes 1, 2 meet in one point and axes 4, 5, 6 in
  another (a 7R arm's shoulder and wrist with its upper-arm roll held, :mod:`.inner`);

and moves the joints' points along their axes to the meeting points, so that each
family splits into Paden-Kahan subproblems (:mod:`.subproblems`) with 2 x 2 x 2 branches.
:func:`solve_6r` fills caller-owned arrays with all eight branches of each target.  Any
other chain has no geometry here (the caller keeps EAIK's solver).
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Optional, Tuple

import numpy as np

from ros2_ik.core.closed_form import subproblems
from ros2_ik.core.closed_form.subproblems import add, dot, rot, sp1, sp3, sp4, sub, wrap
from ros2_ik.core.runtime.compiled import jit

#: Family numbers of :func:`solve_6r` (0: none here).
SPHERICAL_TWO_PARALLEL, THREE_PARALLEL_TWO_INTERSECTING, FIRST_TWO_INTERSECTING = 1, 2, 3
FAMILY_NAMES = {SPHERICAL_TWO_PARALLEL: "spherical wrist, axes 2 and 3 parallel",
                THREE_PARALLEL_TWO_INTERSECTING: "axes 2, 3, 4 parallel, axes 5 and 6 meet",
                FIRST_TWO_INTERSECTING: "spherical wrist, axes 1 and 2 meet"}
#: Joints of the chains it solves, and branches of one target.
JOINTS, BRANCHES = 6, 8
#: Axes count as parallel, and lines as meeting, within this [rad as sine, m]: the
#: kernels then solve the idealised chain, so only a chain exact to rounding qualifies.
TOLERANCE = 1e-10
#: Axes that a subproblem needs apart must be further from parallel than this [sine].
APART = 1e-6
#: The files of the compiled functions :func:`solve_6r` runs (numba's cache checks only
#: its own): :func:`ros2_ik.core.kinematics.jit.drop_stale_cache` is given both.
SOURCES = (Path(__file__).resolve(), Path(subproblems.__file__).resolve())


def geometry(H: np.ndarray, P: np.ndarray, R: np.ndarray) -> Optional[Tuple[int, np.ndarray]]:
    """``(family, G)`` for :func:`solve_6r`, or None when no family here fits the chain.

    ``G`` (18, 3): the axes (rows 0-5), the offsets world-to-joint-1, 1-2, 2-3, 3-4, 4-5
    (6-10) and meeting-point-to-frame (11) [m], ``R``'s rows (12-14), a unit vector
    perpendicular to axis 6 (15) and one to axis 2 (16), and the signs of axes 3 and 4
    along axis 2 (17: ``s3, s4, 0``).
    """
    H = np.asarray(H, dtype=float)
    points = np.cumsum(np.asarray(P, dtype=float)[:6], axis=0)
    tip = np.sum(np.asarray(P, dtype=float), axis=0)
    if not (_apart(H[0], H[1]) and _apart(H[3], H[4]) and _apart(H[4], H[5])):
        return None
    if _parallel(H[1], H[2]):
        meet = _meeting_point(H[3:6], points[3:6])
        if meet is not None:
            return SPHERICAL_TWO_PARALLEL, _layout(H, points[:3], meet, tip, R)
    if _parallel(H[1], H[2]) and _parallel(H[1], H[3]) and _apart(H[1], H[4]):
        meet = _meeting_point(H[4:6], points[4:6])
        if meet is not None:
            return THREE_PARALLEL_TWO_INTERSECTING, _layout(H, points[:4], meet, tip, R)
    meets = shoulder_and_wrist(H, points)
    if meets is None:
        return None
    shoulder, wrist = meets  # joints 1 and 2 moved to the shoulder, 4 to the wrist
    return FIRST_TWO_INTERSECTING, _layout(H, np.array([shoulder, shoulder, points[2]]),
                                           wrist, tip, R)


def shoulder_and_wrist(H: np.ndarray, points: np.ndarray
                       ) -> Optional[Tuple[np.ndarray, np.ndarray]]:
    """Return the points [m] where axes 1, 2 and axes 4, 5, 6 of a 6R chain meet, or None.

    ``H`` (6, 3) the axes, ``points`` (6, 3) a point of each (world frame, zero
    configuration).  None unless axes 1 and 2, 4 and 5, 5 and 6 are apart and each set's
    lines meet within :data:`TOLERANCE`: :data:`FIRST_TWO_INTERSECTING`'s condition
    (:func:`geometry` tries the other families first).
    """
    if not (_apart(H[0], H[1]) and _apart(H[3], H[4]) and _apart(H[4], H[5])):
        return None
    shoulder = _meeting_point(H[0:2], points[0:2])
    wrist = _meeting_point(H[3:6], points[3:6])
    return None if shoulder is None or wrist is None else (shoulder, wrist)


def _parallel(a: np.ndarray, b: np.ndarray) -> bool:
    return float(np.linalg.norm(np.cross(a, b))) <= TOLERANCE


def _apart(a: np.ndarray, b: np.ndarray) -> bool:
    return float(np.linalg.norm(np.cross(a, b))) > APART


def _meeting_point(axes: np.ndarray, points: np.ndarray) -> Optional[np.ndarray]:
    """Return the point of the lines (``points``, ``axes``) when they meet within TOLERANCE."""
    off = [np.eye(3) - np.outer(h, h) for h in axes]
    A = np.sum(off, axis=0)
    b = np.sum([M @ p for M, p in zip(off, points)], axis=0)
    meet = np.linalg.lstsq(A, b, rcond=None)[0]
    gaps = [np.linalg.norm(M @ (meet - p)) for M, p in zip(off, points)]
    return meet if max(gaps) <= TOLERANCE else None


def _layout(H: np.ndarray, points: np.ndarray, meet: np.ndarray, tip: np.ndarray,
            R: np.ndarray) -> np.ndarray:
    """``G`` of :func:`geometry`: the joints before the meeting point, then the point."""
    G = np.empty((18, 3))
    fill_layout(G, H, np.asarray(points, dtype=float), meet, tip,
                np.asarray(R, dtype=float), perpendicular(H[5]), perpendicular(H[1]),
                float(np.sign(H[2] @ H[1])), float(np.sign(H[3] @ H[1])))
    return G


@jit(inline="always")  # a step of fill_at's call too: no call of its own there
def fill_layout(G: np.ndarray, H: np.ndarray, points: np.ndarray, meet: np.ndarray,
                tip: np.ndarray, R: np.ndarray, perp_last: np.ndarray,
                perp_second: np.ndarray, s3: float, s4: float
                ) -> None:  # pragma: no cover - compiled
    """Write ``G`` (18, 3) of :func:`geometry` (its docstring gives the rows).

    ``H`` (6, 3) the axes; ``points`` (k, 3) the joints' points before the meeting point
    ``meet`` (3,) (joints moved along their axes to it), ``tip`` (3,) the frame's origin
    [m]; ``R`` (3, 3) its orientation; ``perp_last``, ``perp_second`` unit vectors
    perpendicular to axes 6 and 2; ``s3``, ``s4`` the signs of axes 3 and 4 along axis 2
    (zeros where the family reads none).  :func:`geometry` and :func:`.inner.fill_at`
    (the six of a held 7R chain, at each value) both lay a chain out here.
    """
    G[:] = 0.0
    k = points.shape[0]
    for c in range(3):
        for r in range(6):
            G[r, c] = H[r, c]
        previous = 0.0
        for r in range(k):
            G[6 + r, c] = points[r, c] - previous
            previous = points[r, c]
        G[6 + k, c] = meet[c] - previous
        G[11, c] = tip[c] - meet[c]
        for r in range(3):
            G[12 + r, c] = R[r, c]
        G[15, c] = perp_last[c]
        G[16, c] = perp_second[c]
    G[17, 0], G[17, 1] = s3, s4


def perpendicular(h: np.ndarray) -> np.ndarray:
    """Return a unit vector perpendicular to unit ``h`` (3,): :func:`geometry`'s rows 15, 16."""
    v = np.cross(h, np.eye(3)[int(np.argmin(np.abs(h)))])
    return v / np.linalg.norm(v)


def example_kernel() -> Tuple[int, np.ndarray]:
    """``(family, G)`` of a made-up chain, of the types :func:`geometry` returns (warm-ups)."""
    G = np.zeros((18, 3))
    G[:6] = np.eye(3)[[2, 1, 1, 2, 1, 2]]
    return SPHERICAL_TWO_PARALLEL, G


def warm_up() -> None:
    """Compile or load :func:`solve_6r` now (``make build``: not in a first solve)."""
    from ros2_ik.core.kinematics import jit as loaded  # loads numba
    loaded.drop_stale_cache(SOURCES)
    solve_6r(*example_kernel(), np.eye(4)[None], np.empty((1, BRANCHES, JOINTS)),
             np.empty((1, BRANCHES), dtype=np.bool_))


@jit
def solve_6r(family: int, G: np.ndarray, T: np.ndarray, Q: np.ndarray,
             ls: np.ndarray) -> int:  # pragma: no cover - compiled
    """All branches of each target ``T`` (N, 4, 4) ``T_world_frame`` into ``Q`` and ``ls``.

    ``Q`` (N, 8, 6) [rad, in ``(-pi, pi]``]; ``ls`` (N, 8) True where a subproblem of the
    branch had no exact solution (the pose is out of that branch's reach; the row only
    comes near).  ``family`` and ``G`` from :func:`geometry`.  Returns how many targets
    have no exact branch.
    """
    missed = 0
    for k in range(T.shape[0]):
        if family == SPHERICAL_TWO_PARALLEL:
            _spherical(G, T, k, Q, ls)
        elif family == FIRST_TWO_INTERSECTING:
            _first_two_intersecting(G, T, k, Q, ls)
        else:
            _three_parallel(G, T, k, Q, ls)
        exact = False
        for row in range(BRANCHES):
            exact = exact or not ls[k, row]
        missed += not exact
    return missed


@jit(inline="always")
def _row(G, i):  # pragma: no cover - compiled
    return (G[i, 0], G[i, 1], G[i, 2])


@jit(inline="always")
def _wrist(G, T, k):  # pragma: no cover - compiled
    """``R_world_6`` rows (the target's rotation times the frame's at zero, transposed)."""
    a, b, c = _row(G, 12), _row(G, 13), _row(G, 14)
    t0 = (T[k, 0, 0], T[k, 0, 1], T[k, 0, 2])
    t1 = (T[k, 1, 0], T[k, 1, 1], T[k, 1, 2])
    t2 = (T[k, 2, 0], T[k, 2, 1], T[k, 2, 2])
    return ((dot(t0, a), dot(t0, b), dot(t0, c)), (dot(t1, a), dot(t1, b), dot(t1, c)),
            (dot(t2, a), dot(t2, b), dot(t2, c)))


@jit(inline="always")
def _times(M0, M1, M2, v):  # pragma: no cover - compiled
    """``M v`` for the rows ``M0, M1, M2``."""
    return (dot(M0, v), dot(M1, v), dot(M2, v))


@jit(inline="always")
def _times_transposed(M0, M1, M2, v):  # pragma: no cover - compiled
    """``M^T v`` for the rows ``M0, M1, M2``."""
    return (M0[0] * v[0] + M1[0] * v[1] + M2[0] * v[2],
            M0[1] * v[0] + M1[1] * v[1] + M2[1] * v[2],
            M0[2] * v[0] + M1[2] * v[1] + M2[2] * v[2])


@jit(inline="always")
def _put(Q, ls, k, row, q1, q2, q3, q4, q5, q6, exact):  # pragma: no cover - compiled
    Q[k, row, 0], Q[k, row, 1], Q[k, row, 2] = wrap(q1), wrap(q2), wrap(q3)
    Q[k, row, 3], Q[k, row, 4], Q[k, row, 5] = wrap(q4), wrap(q5), wrap(q6)
    ls[k, row] = not exact


@jit(inline="always")
def _wrist_target(G, T, k):  # pragma: no cover - compiled
    """Return ``(x, a6, b6)``: the wrist point from joint 1's [m], axis 6, its perpendicular.

    The axes (rows 5 and 15) turned by the target's rotation times the frame's at zero,
    transposed.
    """
    M0, M1, M2 = _wrist(G, T, k)
    tip = (T[k, 0, 3], T[k, 1, 3], T[k, 2, 3])
    x = sub(sub(tip, _times(M0, M1, M2, _row(G, 11))), _row(G, 6))
    return x, _times(M0, M1, M2, _row(G, 5)), _times(M0, M1, M2, _row(G, 15))


@jit(inline="always")
def _spherical_wrist(G, Q, ls, k, row, q1, q2, q3, a6, b6, exact):  # pragma: no cover
    """Rows ``row``, ``row + 1``: q4, q5 by subproblem 2 on axis 6, q6 by subproblem 1.

    ``a6``, ``b6`` as :func:`_wrist_target` gives them; ``exact``: the earlier
    subproblems'.
    """
    h1, h2, h3 = _row(G, 0), _row(G, 1), _row(G, 2)
    h4, h5, h6, v6 = _row(G, 3), _row(G, 4), _row(G, 5), _row(G, 15)
    a = rot(h3, -q3, rot(h2, -q2, rot(h1, -q1, a6)))
    b = rot(h3, -q3, rot(h2, -q2, rot(h1, -q1, b6)))
    four = sp4(a, h4, h5, dot(h5, h6))
    for i4 in range(2):
        q4 = four[0] if i4 == 0 else four[1]
        q5 = sp1(h5, h6, rot(h4, -q4, a))
        q6 = sp1(h6, v6, rot(h5, -q5, rot(h4, -q4, b)))
        _put(Q, ls, k, row + i4, q1, q2, q3, q4, q5, q6, exact and four[2])


@jit(inline="always")
def _spherical(G, T, k, Q, ls):  # pragma: no cover - compiled
    """:data:`SPHERICAL_TWO_PARALLEL`: the wrist point from joints 1-3, then the wrist.

    q1: subproblem 4 (axis 2's component of the wrist point is fixed); q3: subproblem 3
    (its distance from joint 2); q2: subproblem 1; q4, q5: subproblem 2 on axis 6; q6:
    subproblem 1.
    """
    h1, h2, h3 = _row(G, 0), _row(G, 1), _row(G, 2)
    p12, p23, p34 = _row(G, 7), _row(G, 8), _row(G, 9)
    x, a6, b6 = _wrist_target(G, T, k)
    one = sp4(x, h1, h2, dot(h2, add(add(p12, p23), p34)))
    row = 0
    for i1 in range(2):
        q1 = one[0] if i1 == 0 else one[1]
        y = sub(rot(h1, -q1, x), p12)
        three = sp3(h3, p34, p23, math.sqrt(dot(y, y)))
        for i3 in range(2):
            q3 = three[0] if i3 == 0 else three[1]
            q2 = sp1(h2, add(p23, rot(h3, q3, p34)), y)
            _spherical_wrist(G, Q, ls, k, row, q1, q2, q3, a6, b6, one[2] and three[2])
            row += 2


@jit(inline="always")
def _first_two_intersecting(G, T, k, Q, ls):  # pragma: no cover - compiled
    """:data:`FIRST_TWO_INTERSECTING`: the elbow from the wrist point's distance, then the wrist.

    q3: subproblem 3 (the distance from the point where axes 1 and 2 meet to the wrist
    point depends on q3 alone); q1: subproblem 4 (axis 2's component of that vector, in
    joint 1's frame, is q3's); q2: subproblem 1; q4, q5, q6 as :func:`_spherical`.
    """
    h1, h2, h3 = _row(G, 0), _row(G, 1), _row(G, 2)
    p23, p34 = _row(G, 8), _row(G, 9)
    x, a6, b6 = _wrist_target(G, T, k)
    three = sp3(h3, p34, p23, math.sqrt(dot(x, x)))
    row = 0
    for i3 in range(2):
        q3 = three[0] if i3 == 0 else three[1]
        w = add(p23, rot(h3, q3, p34))
        one = sp4(x, h1, h2, dot(h2, w))
        for i1 in range(2):
            q1 = one[0] if i1 == 0 else one[1]
            q2 = sp1(h2, w, rot(h1, -q1, x))
            _spherical_wrist(G, Q, ls, k, row, q1, q2, q3, a6, b6, three[2] and one[2])
            row += 2


@jit(inline="always")
def _three_parallel(G, T, k, Q, ls):  # pragma: no cover - compiled
    """:data:`THREE_PARALLEL_TWO_INTERSECTING`: joints 1 and 5 first, then the planar three.

    q1: subproblem 4 (axis 2's component of the point where axes 5, 6 meet is fixed); q5:
    subproblem 4 (axis 2's component of axis 6); q6 and the sum of q2-q4: subproblem 1;
    q3: subproblem 3; q2: subproblem 1; q4: the rest of the sum.
    """
    h1, h2, h3 = _row(G, 0), _row(G, 1), _row(G, 2)
    h5, h6 = _row(G, 4), _row(G, 5)
    p12, p23, p34, p45 = _row(G, 7), _row(G, 8), _row(G, 9), _row(G, 10)
    v2, s3, s4 = _row(G, 16), G[17, 0], G[17, 1]
    M0, M1, M2 = _wrist(G, T, k)
    tip = (T[k, 0, 3], T[k, 1, 3], T[k, 2, 3])
    w = sub(sub(tip, _times(M0, M1, M2, _row(G, 11))), _row(G, 6))
    a6 = _times(M0, M1, M2, h6)
    one = sp4(w, h1, h2, dot(h2, add(add(add(p12, p23), p34), p45)))
    row = 0
    for i1 in range(2):
        q1 = one[0] if i1 == 0 else one[1]
        g = _times_transposed(M0, M1, M2, rot(h1, q1, h2))
        wl = sub(rot(h1, -q1, w), p12)
        five = sp4(h2, h5, h6, dot(h2, rot(h1, -q1, a6)))
        for i5 in range(2):
            q5 = five[0] if i5 == 0 else five[1]
            q6 = sp1(h6, g, rot(h5, -q5, h2))
            m = rot(h1, -q1, _times(M0, M1, M2, rot(h6, -q6, rot(h5, -q5, v2))))
            theta = sp1(h2, v2, m)
            y = sub(wl, rot(h2, theta, p45))
            three = sp3(h3, p34, p23, math.sqrt(dot(y, y)))
            for i3 in range(2):
                q3 = three[0] if i3 == 0 else three[1]
                q2 = sp1(h2, add(p23, rot(h3, q3, p34)), y)
                q4 = s4 * (theta - q2 - s3 * q3)
                _put(Q, ls, k, row, q1, q2, q3, q4, q5, q6, one[2] and five[2] and three[2])
                row += 1
