"""Vectorised physical violations of many configurations at once (seed-library ranking).

A constraint's ``sample_violation(frames)`` returns, for each of ``S`` sample
configurations, the squared physical violation ``sum_rows v^2`` ([m^2], with radians
weighed as ``RAD_WEIGHT_M2`` m^2 per rad^2) computed from the world placements of its frames
at every sample.  ``frames.placement(fid)`` gives them for a full-model frame id, one
column per sample: ``p`` (3, S) [m] and ``R`` (9, S), the row-major entries of the rotation
(this layout keeps every operation a handful of row-wise numpy calls).  No ``pin.Data``,
no Jacobian, so that a solve can start from the samples nearest to its constraints.
"""
from __future__ import annotations

from typing import Tuple

import numpy as np

#: Weight of a squared angle [rad^2] against a squared distance [m^2] (1 rad ~ 0.3 m), as
#: the seed library weighs orientation errors.
RAD_WEIGHT_M2 = 0.1

Placements = Tuple[np.ndarray, np.ndarray]


def rotate(R: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``R_s v`` (3, S) for rotations ``R`` (9, S) and one vector ``v`` (3,)."""
    x, y, z = v.tolist()  # column j of every R is R[j::3]
    return x * R[0::3] + y * R[1::3] + z * R[2::3]


def rotate_back(R: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``R_s^T v_s`` (3, S) for rotations ``R`` (9, S) (or one, (9, 1)) and vectors ``v``."""
    if R.shape[1] == 1:  # a frame fixed in the world: one matrix product
        return R.reshape(3, 3).T @ v
    return (R.reshape(3, 3, -1) * v[:, None, :]).sum(axis=0)


def point_world(X: Placements, p_local: np.ndarray) -> np.ndarray:
    """World positions (3, S) of a point fixed at ``p_local`` in a frame placed at ``X``."""
    return X[0] + rotate(X[1], p_local)


def in_frame(X: Placements, p_world: np.ndarray, X_offset=None) -> np.ndarray:
    """Coordinates (3, S) of world points (3, S) in the frame at ``X`` (times ``X_offset``)."""
    local = rotate_back(X[1], p_world - X[0])
    if X_offset is not None:  # frame A = Abar * X_AbarA
        local = X_offset.rotation.T @ (local - X_offset.translation[:, None])
    return local


def outside(values: np.ndarray, lower, upper) -> np.ndarray:
    """Per-sample sum of squared distances of ``values`` (k, S) outside ``[lower, upper]``."""
    lower = np.asarray(lower, dtype=float).reshape(-1, 1)
    upper = np.asarray(upper, dtype=float).reshape(-1, 1)
    v = np.maximum(np.maximum(lower - values, values - upper), 0.0)
    return (v * v).sum(axis=0)


def norms(v: np.ndarray) -> np.ndarray:
    """Return the Euclidean norm (S,) of each column of ``v`` (3, S)."""
    return np.sqrt((v * v).sum(axis=0))


def angle_outside(cosine: np.ndarray, lower: float, upper: float) -> np.ndarray:
    """Weighted squared violation of the angles of ``cosine`` (S,) outside [lower, upper]."""
    angle = np.arccos(np.clip(cosine, -1.0, 1.0))
    v = np.maximum(np.maximum(lower - angle, angle - upper), 0.0)
    return RAD_WEIGHT_M2 * v * v
