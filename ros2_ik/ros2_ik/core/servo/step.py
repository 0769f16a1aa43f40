"""One differential-IK step: a small QP on the joint velocity, solved with daqp.

Cost (``qd`` = group joint velocity [rad/s or m/s], tip frame ``F``)::

    |W (J_err qd - v_task)|^2 + mu |qd|^2 + w_post |qd - k_post (q_post - q)|^2

Pose mode: ``err = log6(T_target_F)`` (frame relative to target, local to the target);
``J_err = Jlog6(err) J_F`` (J_F the LOCAL frame Jacobian), ``v_task = -gain err``, so the
error decays as ``exp(-gain t)``.  Twist mode: ``J_err = J_F`` expressed in the twist's
frame (``LOCAL`` for the tip, ``LOCAL_WORLD_ALIGNED`` for the world), ``v_task`` = twist.
``mu = damping + lm_damping |W err|^2`` (Levenberg: damps only while the error is large,
which also keeps the step bounded near a singularity).

Bounds (per joint, intersected): velocity ``+-velocity_scale * v_max`` (URDF), acceleration
``qd_prev +- a_max dt`` and position limits as a braking bound ``+-sqrt(a_max d)`` with
``d`` the distance to the limit (half the deceleration the acceleration bound allows, so
the next step's bounds stay feasible: the joint slows to zero on the limit, never past it).

Collision avoidance (with a ``checker``): velocity dampers (Faverjon--Tournassoud) on the
coal distances of the live scene, one row per robot/scene or robot/robot pair nearer
than ``influence_m``: ``d_dot = grad d . qd >= -damper_gain (d - clearance_m)``, so a
distance decays at most exponentially toward ``clearance_m`` and never crosses it (to
first order; ``damper_gain dt < 1``); a pair met at speed is braked within the
acceleration limit (see ``_dampers``); a pair already nearer may not get closer.  When the dampers and the acceleration box cannot
both hold, the step is the velocity within the box nearest to zero (``flag != 1``).
The QP is assembled by one compiled call (``_assemble.py``) and solved by daqp.
"""
import math
from dataclasses import dataclass
from typing import Optional

import daqp
import numpy as np
import pinocchio as pin

from ros2_ik.core.servo._assemble import assemble, manipulability

_LOCAL = pin.ReferenceFrame.LOCAL
_WORLD_ALIGNED = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED


@dataclass(frozen=True)
class ServoConfig:
    """Gains and limits of the servo step (units in each field's comment)."""

    gain: float = 10.0  # frame task gain [1/s]
    weights: tuple = (1.0, 1.0, 1.0, 0.3, 0.3, 0.3)  # per-axis [vx vy vz wx wy wz] weights
    position_only: bool = False  # ignore the orientation axes
    damping: float = 1e-6  # constant Tikhonov term on qd
    lm_damping: float = 1e-3  # Levenberg term, times |W err|^2
    posture_weight: float = 1e-4  # regulariser toward the posture configuration
    posture_gain: float = 1.0  # [1/s]
    velocity_scale: float = 1.0  # fraction of the URDF velocity limits
    acceleration_limit: float = 10.0  # [rad/s^2] (or m/s^2 for prismatic joints)
    default_velocity: float = 1.0  # [rad/s] for joints whose URDF limit is 0 or infinite
    clearance_m: float = 0.01  # distance the dampers keep (with a checker) [m]
    influence_m: float = 0.1  # pairs nearer than this get a damper row [m]
    damper_gain: float = 5.0  # allowed approach speed per metre above clearance_m [1/s]


@dataclass
class ServoStep:
    """Result of one step: ``qd`` [rad/s], ``q_next`` = q + qd dt, and QP status."""

    qd: np.ndarray
    q_next: np.ndarray
    error_m: float  # tip position error before the step [m] (pose mode; nan for a twist)
    error_rad: float  # tip orientation error before the step [rad] (nan for a twist)
    relaxed: bool  # True if the acceleration bound had to be relaxed to keep the others
    flag: int  # daqp exit flag (1: solved)
    clearance_m: float = math.inf  # nearest pair within influence_m at q [m] (inf: none)
    manipulability: float = math.nan  # sqrt(det(J J^T)) of the tip's 6 x n Jacobian


class Servo:
    """Differential-IK stepper for one group and tip frame (not thread-safe: keeps qd)."""

    def __init__(self, group, tip: str, config: Optional[ServoConfig] = None,
                 posture: Optional[np.ndarray] = None, checker=None):
        """Bind ``group`` (core.group.Group) and frame ``tip``; posture [rad] defaults to mid.

        ``checker``: a ``core.collision.CollisionChecker`` of the group's full model (its
        scene changes are seen at the next step), or None for no collision avoidance.
        """
        if group.has_continuous and group.angle_model is group.reduced_model:
            raise ValueError("group: continuous joints without a plain-angle model are not "
                             "supported by the servo yet")
        self.group, self.config = group, config or ServoConfig()
        c = self.config
        if not (0.0 <= c.clearance_m < c.influence_m and c.damper_gain > 0.0):
            raise ValueError("clearance_m, influence_m, damper_gain: need 0 <= clearance_m "
                             "< influence_m and damper_gain > 0")
        self.model, self.data = group.angle_model, group.angle_model.createData()
        self.fid = group.reduced_frame_id(tip)
        n = group.n
        self.lower, self.upper = np.array(group.lower), np.array(group.upper)
        vmax = np.array(group.velocity_limits, dtype=float)
        vmax = np.where(np.isfinite(vmax) & (vmax > 0), vmax, c.default_velocity)
        self.vmax = c.velocity_scale * vmax
        self.posture = group.mid_configuration() if posture is None else np.array(posture)
        w = np.array(c.weights, dtype=float)
        if c.position_only:
            w[3:] = 0.0
        if w.shape != (6,) or (w < 0).any():
            raise ValueError("weights: need 6 non-negative values")
        self.w2 = w * w
        self.qd = np.zeros(n)
        self._H, self._f = np.empty((n, n)), np.empty(n)
        self._lo, self._hi = np.empty(n), np.empty(n)
        self._work6 = np.empty((6, 6))
        self._no_rows = np.zeros((0, n))
        self._sense = np.zeros(n, dtype=np.int32)
        self.checker = None
        self.set_checker(checker)

    def set_checker(self, checker) -> None:
        """Use ``checker`` (None: no collision avoidance) from the next step on."""
        self.checker = checker
        if checker is not None:
            self._full_data = checker.model.createData()

    def warm_up(self, q: np.ndarray, dt: float) -> None:
        """Run one pose and one twist step at ``q`` (compiles the QP assembly), then reset.

        The first compilation takes seconds (then numba's cache): call this before a
        control loop starts, not in its first period.
        """
        self.step_pose(q, self.group.fk(q, self.model.frames[self.fid].name), dt)
        self.step_twist(q, np.zeros(6), True, dt)
        self.step_twist(q, np.zeros(6), False, dt)
        self.reset()

    def reset(self, qd: Optional[np.ndarray] = None) -> None:
        """Set the previous velocity (for the acceleration bound) [rad/s]."""
        self.qd = np.zeros(self.group.n) if qd is None else np.array(qd, dtype=float)

    def step_pose(self, q: np.ndarray, T_world_target: pin.SE3, dt: float) -> ServoStep:
        """Step toward ``T_world_target`` from group vector ``q`` over period ``dt`` [s]."""
        self._kinematics(q)
        J = pin.getFrameJacobian(self.model, self.data, self.fid, _LOCAL)
        err_T = T_world_target.actInv(self.data.oMf[self.fid])  # T_target_frame
        err = pin.log6(err_T).vector
        J_err = pin.Jlog6(err_T) @ J
        mu = self.config.lm_damping * float(self.w2 @ (err * err))
        step = self._solve(q, J_err, -self.config.gain * err, mu, dt, J)
        t, w = err_T.translation, pin.log3(err_T.rotation)
        step.error_m, step.error_rad = math.sqrt(t.dot(t)), math.sqrt(w.dot(w))
        return step

    def step_twist(self, q: np.ndarray, twist: np.ndarray, in_world: bool,
                   dt: float) -> ServoStep:
        """Follow ``twist`` [m/s, rad/s] of the tip: world-aligned axes or the tip's own."""
        twist = np.asarray(twist, dtype=float)
        if twist.shape != (6,) or not np.isfinite(twist).all():
            raise ValueError("twist: need 6 finite values [vx vy vz wx wy wz]")
        self._kinematics(q)
        J = pin.getFrameJacobian(self.model, self.data, self.fid,
                                 _WORLD_ALIGNED if in_world else _LOCAL)
        return self._solve(q, J, twist, 0.0, dt, J)

    def _kinematics(self, q: np.ndarray) -> None:
        if q.shape != (self.group.n,) or not np.isfinite(q).all():
            raise ValueError(f"q: need {self.group.n} finite joint values")
        pin.computeJointJacobians(self.model, self.data, q)
        pin.updateFramePlacement(self.model, self.data, self.fid)

    def _solve(self, q, J, v_task, mu, dt, J_tip) -> ServoStep:
        if not (dt > 0.0 and np.isfinite(dt)):
            raise ValueError("dt: need a positive period [s]")
        c = self.config
        H, f, lo, hi = self._H, self._f, self._lo, self._hi
        relaxed = assemble(J, v_task, self.w2, c.damping + mu, c.posture_weight,
                           c.posture_gain, self.posture, q, self.lower, self.upper,
                           self.vmax, self.qd, c.acceleration_limit, dt, H, f, lo, hi)
        rows, row_lo, clearance = self._dampers(q, dt)
        if rows is None:
            qd, _, flag, _ = daqp.solve(H, f, self._no_rows, hi, lo, self._sense)
        else:
            qd, _, flag, _ = daqp.solve(
                H, f, rows, np.concatenate((hi, np.full(len(row_lo), 1e30))),
                np.concatenate((lo, row_lo)), np.zeros(len(q) + len(row_lo), np.int32))
        if flag != 1:  # keep the box: a failure becomes the slowest velocity within it
            qd = np.zeros(len(q))
        qd = np.minimum(np.maximum(qd, lo), hi)  # daqp's round-off at an active bound
        self.qd = qd
        return ServoStep(qd, q + qd * dt, float("nan"), float("nan"), bool(relaxed),
                         int(flag), clearance, manipulability(J_tip, self._work6))

    def _dampers(self, q: np.ndarray, dt: float):
        """Damper rows (k, n), their lower bounds on d_dot [m/s] and the nearest distance [m].

        Per pair at ``x = d - clearance_m``: the approach speed is at most
        ``max(damper_gain x, what one period of the acceleration limit can take off the
        current approach)``, never above the braking curve ``sqrt(A x)`` (``A`` the pair's
        largest deceleration, ``a * sum |grad d|``: it stops within ``x`` at half of it)
        nor ``x / dt``.  A pair met at speed is so braked within the acceleration limit
        instead of making the step infeasible; a pair already inside may not get closer.
        """
        if self.checker is None:
            return None, None, math.inf
        from ros2_ik.core.collision.constraint import pair_gradients
        c, full = self.config, self.checker.model
        pin.computeJointJacobians(full, self._full_data, self.group.to_full_q(q))
        pairs = self.checker.distances_from_data(self._full_data, c.influence_m)
        near = np.flatnonzero(pairs.distances_m < c.influence_m)
        if not near.size:
            return None, None, math.inf
        d = pairs.distances_m[near]
        G = pair_gradients(full, self._full_data, pairs, near)[:, self.group.iv_full]
        x = np.maximum(d - c.clearance_m, 0.0)
        A = c.acceleration_limit * np.abs(G).sum(axis=1)
        approach = np.maximum(-(G @ self.qd), 0.0)
        speed = np.maximum(c.damper_gain * x, approach - 0.9 * A * dt)
        speed = np.minimum(speed, np.minimum(np.sqrt(A * x), x / dt))
        return G, -speed, float(d.min())

    def bounds(self, q: np.ndarray, dt: float):
        """Return the velocity box (lo, hi) [rad/s] at ``q`` and whether it was relaxed."""
        n = self.group.n
        lo, hi = np.empty(n), np.empty(n)
        relaxed = assemble(np.zeros((0, n)), np.zeros(0), np.zeros(0), 0.0, 0.0, 0.0,
                           self.posture, q, self.lower, self.upper, self.vmax, self.qd,
                           self.config.acceleration_limit, dt, np.empty((n, n)),
                           np.empty(n), lo, hi)
        return lo, hi, bool(relaxed)
