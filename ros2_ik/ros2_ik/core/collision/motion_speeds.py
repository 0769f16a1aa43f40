"""How fast the robot's geometries can move along a joint-linear move: :mod:`.motion`'s bound.

The move is ``q(t) = q_from + t (q_to - q_from)`` in group coordinates, ``t`` in [0, 1].  A
point ``p`` of a geometry on joint ``L``'s body moves at

    dp/dt = sum_j R_j (v_j + w_j x R_j^T (p - o_j)) dq_j

over the moving joints ``j`` on the way from the root to ``L`` (``L`` included): ``[v_j,
w_j]`` is joint ``j``'s motion subspace (constant in its own frame for revolute,
continuous, prismatic and helical joints), ``o_j`` its origin (on its axis), ``dq_j`` its
change over the move [rad or m] (a mimic follower's: its leader's times ``|multiplier|``).
So ``|dp/dt| <= sum_j |dq_j| (|v_j| + |w_j| r_j)``, with ``r_j`` a bound on ``|p - o_j|``
valid at every ``t``: by the triangle inequality, the sum of the offsets between successive
joint origins from ``j`` down to ``L`` (``|T_parent_joint|``'s translation, plus ``|v_k|``
times the largest ``|q_k|`` on the move for a joint that translates), plus the reach of the
geometry from ``L``'s origin (its local AABB's ball, padding included).

A pair's distance does not change when the two bodies move together: only the joints
below their deepest common ancestor count, each for the side it carries.  A world object
or a link no moving joint carries has speed 0; so has a pair both of whose bodies hang
below the same moving joints only.
"""
from __future__ import annotations

from typing import NamedTuple, Tuple

import numpy as np
import pinocchio as pin

from ..errors import InvalidArgument
from ..model.joint_values import motion_subspace
from .compiled import CompiledScene


class MotionSpeeds(NamedTuple):
    """Bounds on how fast things move along a move [m per unit of ``t``, i.e. per move]."""

    geometry_m: np.ndarray  # (G,) any point of each geometry (padded), in the world
    pair_m: np.ndarray      # (P,) the distance of each pair: |d d_AB / dt| <= pair_m


def _moving_joints(model: pin.Model, group, q_from: np.ndarray, q_to: np.ndarray
                   ) -> np.ndarray:
    """Each full-model joint's change over the move, ``|dq_j|`` (njoints,) [rad or m]."""
    if getattr(group, "has_base", False):
        raise InvalidArgument("a joint-linear move of a whole-body group moves its base, "
                              "which the motion check does not bound: give a fixed-base group")
    change = np.zeros(model.njoints)
    change[list(group.joint_ids)] = np.abs(q_to - q_from)
    for coupling in group.coupled:  # ordered after their leaders
        change[coupling.follower] = abs(coupling.multiplier) * change[coupling.leader]
    for j in np.flatnonzero(change).tolist():
        if model.nvs[j] != 1:
            raise InvalidArgument(f"joint '{model.names[j]}' has {model.nvs[j]} degrees of "
                                  "freedom: the motion check bounds one-axis joints only")
    return change


def _twist_norms(model: pin.Model, moving: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """``|v_j|`` [m per unit] and ``|w_j|`` [rad per unit] (njoints,) of the moving joints."""
    linear, angular = np.zeros(model.njoints), np.zeros(model.njoints)
    for j in np.flatnonzero(moving).tolist():
        S = motion_subspace(model.joints[j])
        linear[j], angular[j] = np.linalg.norm(S[:3]), np.linalg.norm(S[3:])
    return linear, angular


def _offsets_m(model: pin.Model, data: pin.Data, change: np.ndarray, linear: np.ndarray,
               q_full_from: np.ndarray, q_full_to: np.ndarray) -> np.ndarray:
    """Bounds (njoints,) [m] on each joint origin's distance from its parent's, on the move.

    A joint that does not move keeps its offset (``data.liMi``, the same all along);
    a moving one adds its translation ``|v_j| |q_j|`` at the larger end (``q_j`` is
    affine in ``t``; ``|v_j|`` is 0 for a revolute or continuous joint).
    """
    offsets = np.array([np.linalg.norm(data.liMi[j].translation)
                        for j in range(model.njoints)])
    for j in np.flatnonzero(change).tolist():
        iq = model.idx_qs[j]
        largest = max(abs(q_full_from[iq]), abs(q_full_to[iq])) if model.nqs[j] == 1 else 0.0
        offsets[j] = (np.linalg.norm(model.jointPlacements[j].translation)
                      + linear[j] * largest)
    return offsets


def _ancestry(model: pin.Model, offsets: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """Ancestry (njoints, njoints) and depths (njoints,) [m].

    ``ancestry[k, j]``: joint ``j >= 1`` is ``k`` or above it; ``depth[k]``: the offsets
    summed from the root down to ``k``, so ``depth[k] - depth[j]`` bounds ``|o_k - o_j|``.
    """
    ancestry = np.zeros((model.njoints, model.njoints), dtype=bool)
    depth = np.zeros(model.njoints)
    for k in range(1, model.njoints):
        ancestry[k, list(model.supports[k])] = True
        depth[k] = depth[model.parents[k]] + offsets[k]
    ancestry[:, 0] = False
    return ancestry, depth


def geometry_reach_m(compiled: CompiledScene) -> np.ndarray:
    """Each geometry's farthest point from its joint's origin (G,) [m], padding included."""
    bounds = compiled.bounds
    return (np.linalg.norm(bounds.center_joint[:3], axis=0) + bounds.geometry_radius
            + compiled.geometry_padding_m)


def motion_speeds(model: pin.Model, data: pin.Data, compiled: CompiledScene, group,
                  q_from: np.ndarray, q_to: np.ndarray) -> MotionSpeeds:
    """Bound the speeds of ``compiled``'s geometries and pairs on the move ``q_from -> q_to``.

    ``model``: the full model (the checker's); ``data``: its kinematics at any
    configuration of the move (the ``liMi`` of the joints that do not move are read);
    ``q_from``, ``q_to``: group vectors (n,).  InvalidArgument for a whole-body group (its
    base is not a one-axis joint).
    """
    q_from, q_to = np.asarray(q_from, dtype=float), np.asarray(q_to, dtype=float)
    change = _moving_joints(model, group, q_from, q_to)
    linear, angular = _twist_norms(model, change)
    offsets = _offsets_m(model, data, change, linear, group.to_full_q(q_from),
                         group.to_full_q(q_to))
    ancestry, depth = _ancestry(model, offsets)
    joint = compiled.geometry_joint
    lever = depth[joint][:, None] - depth[None, :] + geometry_reach_m(compiled)[:, None]
    per_joint = ancestry[joint] * change * (linear + angular * lever)  # (G, njoints)
    return MotionSpeeds(per_joint.sum(axis=1), _pair_speeds(compiled, ancestry, per_joint))


def _pair_speeds(compiled: CompiledScene, ancestry: np.ndarray, per_joint: np.ndarray
                 ) -> np.ndarray:
    """Each pair's speed (P,) [m per move]: the joints of one side only, for that side."""
    above_a, above_b = ancestry[compiled.joint_a], ancestry[compiled.joint_b]
    return ((per_joint[compiled.pair_a] * (above_a & ~above_b)).sum(axis=1)
            + (per_joint[compiled.pair_b] * (above_b & ~above_a)).sum(axis=1))
