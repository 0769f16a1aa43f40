"""A 7R chain's end joint held at a value: the target of the six-joint rest (compiled).

In the product-of-exponentials form of :mod:`.chain` (axes ``h_i`` and offsets ``P_i``
in the world frame at the zero configuration, the frame's orientation ``R``), with
``Rot(h, a)`` the rotation by ``a`` [rad] about ``h``:

* the first joint held at ``a``: ``T_world_frame = G T_rest`` with ``G`` the rotation
  about ``h_1`` through the joint's point ``P_0``; the rest (joints 2-7 from that point,
  orientation ``R``) has target ``G^-1 T``;
* the last joint held at ``a``: the rest (joints 1-6, its frame at joint 7's point with
  the world's orientation) has orientation ``R_T R^T Rot(h_7, a)^T`` and position
  ``p_T - R_T R^T P_7``, independent of ``a``.

A prismatic end joint (a rail, :func:`.chain.preflight`'s ``slide_end``) held at ``d``
[m] moves along its axis ``h`` instead:

* the first: ``T_world_frame = Trans(h_1 d) T_rest``, the rest as above; its target is
  ``T`` moved by ``-h_1 d``;
* the last: the rest is joints 1-6 with the frame's own offset and orientation ``R``;
  ``T = T_rest Trans(R^T h_7 d)``, so its target is ``T`` moved by ``-R_T R^T h_7 d``.

One closed form of the rest serves every value: only the target moves
(:func:`.branches.widened_representatives` puts the held value back into its rows).

The values to try first for a target (:func:`ranked`): per value, a quadratic model of
"gives branches within the limits" in the target's position (scaled by the sample
poses' spread) and orientation matrix, fitted on sample poses at detection.
"""
from __future__ import annotations

import math

import numpy as np

from ros2_ik.core.runtime.compiled import jit

#: Features of a pose (:func:`feature`): a constant, 12 entries and their 78 products.
FEATURES = 1 + 12 + 78
#: Ridge of the ranking's least squares (:func:`fit`).
RIDGE = 1e-3


@jit
def target(T: np.ndarray, value: float, axis: np.ndarray, point: np.ndarray,
           tool_RT: np.ndarray, first: bool, slide: bool = False) -> np.ndarray:
    """Return the pose (4, 4) the rest must reach for ``T`` (4, 4), the end at ``value``.

    ``value`` [rad], or [m] when ``slide`` (a prismatic end joint); ``axis`` (3,) the held
    joint's unit axis; ``point`` (3,): the first joint's point ``P_0`` or the last offset
    ``P_7`` [m] (a turning joint only); ``tool_RT`` (3, 3): ``R^T`` (last joint only).
    """
    if slide:
        return _slid(T, value, axis, tool_RT, first)
    c, s = math.cos(value), math.sin(value)
    x, y, z = axis[0], axis[1], axis[2]
    v = 1.0 - c
    Q = np.empty((3, 3))  # Rot(axis, value)
    Q[0, 0], Q[0, 1], Q[0, 2] = c + x * x * v, x * y * v - z * s, x * z * v + y * s
    Q[1, 0], Q[1, 1], Q[1, 2] = y * x * v + z * s, c + y * y * v, y * z * v - x * s
    Q[2, 0], Q[2, 1], Q[2, 2] = z * x * v - y * s, z * y * v + x * s, c + z * z * v
    out = np.zeros((4, 4))
    out[3, 3] = 1.0
    if first:  # Q^T R_T, point + Q^T (p_T - point)
        for i in range(3):
            for j in range(3):
                out[i, j] = Q[0, i] * T[0, j] + Q[1, i] * T[1, j] + Q[2, i] * T[2, j]
            out[i, 3] = point[i] + Q[0, i] * (T[0, 3] - point[0]) + \
                Q[1, i] * (T[1, 3] - point[1]) + Q[2, i] * (T[2, 3] - point[2])
        return out
    A = np.empty((3, 3))  # R_T R^T
    for i in range(3):
        for j in range(3):
            A[i, j] = T[i, 0] * tool_RT[0, j] + T[i, 1] * tool_RT[1, j] + \
                T[i, 2] * tool_RT[2, j]
    for i in range(3):
        for j in range(3):
            out[i, j] = A[i, 0] * Q[j, 0] + A[i, 1] * Q[j, 1] + A[i, 2] * Q[j, 2]
        out[i, 3] = T[i, 3] - (A[i, 0] * point[0] + A[i, 1] * point[1] + A[i, 2] * point[2])
    return out


@jit
def _slid(T: np.ndarray, value: float, axis: np.ndarray, tool_RT: np.ndarray, first: bool
          ) -> np.ndarray:
    """:func:`target` of a prismatic end joint at ``value`` [m] (module docstring)."""
    out = T.copy()
    for i in range(3):
        if first:
            out[i, 3] -= axis[i] * value
        else:  # R_T R^T h d
            for k in range(3):
                out[i, 3] -= T[i, k] * (tool_RT[k, 0] * axis[0] + tool_RT[k, 1] * axis[1]
                                        + tool_RT[k, 2] * axis[2]) * value
    return out


@jit
def feature(T: np.ndarray, scale: float) -> np.ndarray:
    """Return a pose's features (:data:`FEATURES`,).

    1, then the position [m] times ``scale`` [1/m] and the rotation matrix's entries
    (12), then their products two by two.
    """
    x = np.empty(12)
    for i in range(3):
        x[i] = T[i, 3] * scale
        for j in range(3):
            x[3 + 3 * i + j] = T[i, j]
    f = np.empty(FEATURES)
    f[0] = 1.0
    f[1:13] = x
    p = 13
    for i in range(12):
        for j in range(i, 12):
            f[p] = x[i] * x[j]
            p += 1
    return f


@jit
def ranked(weights: np.ndarray, T: np.ndarray, scale: float) -> np.ndarray:
    """Return the cells (C,) in the order to try them for target ``T`` (4, 4).

    ``weights`` (FEATURES, C): each value's linear model of "gives branches within the
    limits" on the pose's :func:`feature` (fitted on sample poses: :func:`fit`); the
    cells by predicted share, most first.
    """
    f = feature(T, scale)
    cells = weights.shape[1]
    score = np.zeros(cells)
    for i in range(FEATURES):
        fi = f[i]
        for c in range(cells):
            score[c] -= fi * weights[i, c]
    return np.argsort(score)


def fit(poses, reached: np.ndarray, scale: float, prior: np.ndarray) -> np.ndarray:
    """Weights (FEATURES, C) of :func:`ranked` from sample ``poses`` (4, 4) and ``reached``.

    ``reached`` (C, N): value ``c`` gave pose ``i`` branches within the limits.  Ridge
    least squares on the 0/1 labels; ``prior`` (C,), below the labels' resolution, is
    added to each value's constant term (it breaks ties).
    """
    F = np.array([feature(T, scale) for T in poses])
    A = F.T @ F + RIDGE * np.eye(FEATURES)
    weights = np.linalg.solve(A, F.T @ np.asarray(reached, dtype=float).T)
    weights[0] += prior
    return np.ascontiguousarray(weights)
