"""Collision avoidance of the servo step as velocity dampers (Faverjon and Tournassoud).

For every candidate pair of the checker (robot-scene and robot-robot) whose signed, padded
distance ``d`` is below the influence distance ``d_i``, one linear inequality on the group
velocity ``qd``::

    d_dot = (dd/dq) qd >= -xi (d - d_s)

``d_s`` the clearance (security) distance [m], ``xi`` the damper gain [1/s]: a pair may
close in at most at the rate that brings ``d`` exponentially down to ``d_s``, never below
(Faverjon-Tournassoud's ``xi_FT (d - d_s) / (d_i - d_s)`` with ``xi_FT = xi (d_i - d_s)``
[m/s], written with a gain in 1/s so it does not depend on the influence distance).  A pair
already closer than ``d_s`` must separate.  ``dd/dq`` is
:func:`ros2_ik.core.constraints.collision.pair_gradients` on the FULL model, restricted to
the group's velocity columns: locked joints do not move, and a pair that no group joint
moves gets no row (nothing the servo could do about it).

The rows are linear in ``qd`` but a distance is not linear in ``q``: sliding along an
obstacle loses a second-order ~1e-5 m per 4 ms step, which the damper recovers only at
the rate ``xi``, leaving ``d`` up to ~0.1 mm under its target (measured on the Panda).  So
the rows aim at ``d_s + margin``, ``margin`` = 1 mm (at most a tenth of ``d_i - d_s``),
and ``d_s`` itself holds.

A pair entering the influence zone may close in at ``xi (d_i - d_s)`` (0.89 m/s with the
defaults); an arm moving faster toward it could not brake to that within one period of
the acceleration limit.  Such a pair is braked instead (:func:`braked_speed`): each period
takes 90 % of what the acceleration limit allows off its approach speed, under the
braking curve that stops it at the target distance.
"""
from __future__ import annotations

import math
from typing import Mapping, Optional, Tuple

import numpy as np
import pinocchio as pin

from ros2_ik.core.collision.checker import CollisionChecker
from ros2_ik.core.constraints.collision import pair_gradients
from ros2_ik.core.model.joint_values import with_joint_values

_MARGIN_M = 1e-3


class CollisionDampers:
    """Damper rows of one group against a checker's live scene (one thread at a time).

    Args:
        group: the servo's :class:`ros2_ik.core.model.group.Group`.
        checker: a :class:`CollisionChecker` on the group's FULL model.
        clearance_m: ``d_s``, the distance no pair may go under [m] (signed, padded).
        influence_m: ``d_i`` > ``d_s``: pairs farther than this are ignored [m].
        gain: ``xi`` [1/s] > 0.
    """

    def __init__(self, group, checker: CollisionChecker, clearance_m: float,
                 influence_m: float, gain: float):
        full = group.robot.model
        if checker.model.nq != full.nq or checker.model.nv != full.nv:
            raise ValueError(f"checker: its model has nq={checker.model.nq}, the group's full "
                             f"model nq={full.nq}; build the checker on the full model")
        self.group, self.checker = group, checker
        self.model, self.data = checker.model, checker.model.createData()
        self.clearance_m, self.influence_m = float(clearance_m), float(influence_m)
        self.gain = float(gain)
        # the rows' target distance [m] (module docstring: the linearisation margin)
        self.target_m = self.clearance_m + min(_MARGIN_M, 0.1 * (influence_m - clearance_m))
        self._held: dict = {}  # locked joints read elsewhere than the group holds them

    def hold(self, values: Mapping[str, float]) -> None:
        """Check with locked joints ``values`` [rad or m] where the robot holds them now.

        The group holds its locked joints where they stood when it was made; a torso lift
        or a second arm that moved since then is elsewhere, and the distances follow it
        only when its value is written into the full configuration here.
        """
        self._held = dict(values)

    def rows(self, q: np.ndarray, qd_prev: Optional[np.ndarray] = None, dt: float = 0.0,
             acceleration=0.0) -> Tuple[np.ndarray, np.ndarray, float]:
        """Rows ``A`` (k, n) and lower bounds ``b`` (k,) of ``A qd >= b`` at group vector ``q``.

        Also returns the clearance [m]: the smallest signed padded distance of any pair,
        ``inf`` when no pair is closer than the influence distance (pairs beyond it are
        not computed).  With the previous velocity ``qd_prev``, the period ``dt`` [s] and
        the joints' ``acceleration`` limits (one, or (n,)) [rad/s^2 or m/s^2], a pair met
        faster than the damper allows is braked instead (:func:`braked_speed`).
        """
        q_full = self.group.to_full_q(q)
        if self._held:
            q_full = with_joint_values(self.model, q_full, self._held)
        pin.computeJointJacobians(self.model, self.data, q_full)  # also the placements
        pairs = self.checker.distances_from_data(self.data, self.influence_m)
        distances = pairs.distances_m
        near = np.flatnonzero(distances < self.influence_m)
        if near.size == 0:
            return np.zeros((0, self.group.n)), np.zeros(0), math.inf
        d = distances[near]
        grads = self.group.group_columns(pair_gradients(self.model, self.data, pairs, near))
        moved = np.abs(grads).max(axis=1) > 1e-12
        grads, d = grads[moved], d[moved]
        x = d - self.target_m
        lower = -self.gain * x  # x < 0: inside the target distance, must separate
        if qd_prev is not None and dt > 0.0 and np.all(np.asarray(acceleration) > 0.0):
            outside = x > 0.0
            lower[outside] = -braked_speed(grads[outside], x[outside], qd_prev, dt,
                                           acceleration, self.gain)
        return grads, lower, float(distances[near].min())


def braked_speed(grads: np.ndarray, x: np.ndarray, qd_prev: np.ndarray, dt: float,
                 acceleration, gain: float) -> np.ndarray:
    """Largest approach speed [m/s] allowed per pair ``x`` [m] above its target distance.

    The damper's ``gain x``, or, for a pair already closing in faster, its current speed
    less 90 % of what one period of the joints' ``acceleration`` limits (one, or (n,))
    can take off it (``A dt``, ``A = sum_i acceleration_i |grad_i d|``): braking, not an
    infeasible step.  Never above the braking curve ``sqrt(A x)`` (stops within ``x`` at
    half of ``A``) nor ``x / dt`` (not past the target within one period).
    """
    A = np.abs(grads) @ np.broadcast_to(np.asarray(acceleration, dtype=float), grads.shape[1:])
    approach = np.maximum(-(grads @ qd_prev), 0.0)
    speed = np.maximum(gain * x, approach - 0.9 * A * dt)
    return np.minimum(speed, np.minimum(np.sqrt(A * x), x / dt))
