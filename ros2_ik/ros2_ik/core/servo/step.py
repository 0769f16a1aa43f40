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
"""
import math
from dataclasses import dataclass
from typing import Optional

import daqp
import numpy as np
import pinocchio as pin

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


@dataclass
class ServoStep:
    """Result of one step: ``qd`` [rad/s], ``q_next`` = q + qd dt, and QP status."""

    qd: np.ndarray
    q_next: np.ndarray
    error_m: float  # tip position error before the step [m] (pose mode; nan for a twist)
    error_rad: float  # tip orientation error before the step [rad] (nan for a twist)
    relaxed: bool  # True if the acceleration bound had to be relaxed to keep the others
    flag: int  # daqp exit flag (1: solved)


class Servo:
    """Differential-IK stepper for one group and tip frame (not thread-safe: keeps qd)."""

    def __init__(self, group, tip: str, config: Optional[ServoConfig] = None,
                 posture: Optional[np.ndarray] = None):
        """Bind ``group`` (core.group.Group) and frame ``tip``; posture [rad] defaults to mid."""
        if group.has_continuous and group.angle_model is group.reduced_model:
            raise ValueError("group: continuous joints without a plain-angle model are not "
                             "supported by the servo yet")
        self.group, self.config = group, config or ServoConfig()
        self.model, self.data = group.angle_model, group.angle_model.createData()
        self.fid = group.reduced_frame_id(tip)
        n = group.n
        self.lower, self.upper = np.array(group.lower), np.array(group.upper)
        vmax = np.array(group.velocity_limits, dtype=float)
        vmax = np.where(np.isfinite(vmax) & (vmax > 0), vmax, self.config.default_velocity)
        self.vmax = self.config.velocity_scale * vmax
        self.posture = group.mid_configuration() if posture is None else np.array(posture)
        w = np.array(self.config.weights, dtype=float)
        if self.config.position_only:
            w[3:] = 0.0
        if w.shape != (6,) or (w < 0).any():
            raise ValueError("weights: need 6 non-negative values")
        self.w2 = w * w
        self.qd = np.zeros(n)
        self._A = np.zeros((0, n))
        self._sense = np.zeros(n, dtype=np.int32)
        self._eye = np.eye(n)
        self._zero = np.zeros(n)

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
        step = self._solve(q, J_err, -self.config.gain * err, mu, dt)
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
        step = self._solve(q, J, twist, 0.0, dt)
        step.error_m = step.error_rad = float("nan")
        return step

    def _kinematics(self, q: np.ndarray) -> None:
        if q.shape != (self.group.n,) or not np.isfinite(q).all():
            raise ValueError(f"q: need {self.group.n} finite joint values")
        pin.computeJointJacobians(self.model, self.data, q)
        pin.updateFramePlacement(self.model, self.data, self.fid)

    def _solve(self, q, J, v_task, mu, dt) -> ServoStep:
        if not (dt > 0.0 and np.isfinite(dt)):
            raise ValueError("dt: need a positive period [s]")
        c = self.config
        JW = J.T * self.w2
        H = JW @ J + (c.damping + mu + c.posture_weight) * self._eye
        f = -(JW @ v_task) - c.posture_weight * c.posture_gain * (self.posture - q)
        lo, hi, relaxed = self.bounds(q, dt)
        qd, _, flag, _ = daqp.solve(H, f, self._A, hi, lo, self._sense)
        if flag != 1:  # keep the bounds: a solver failure becomes a stop within them
            qd = self._zero
        qd = np.minimum(np.maximum(qd, lo), hi)  # daqp's round-off at an active bound
        self.qd = qd
        return ServoStep(qd, q + qd * dt, float("nan"), float("nan"), relaxed, int(flag))

    def bounds(self, q: np.ndarray, dt: float):
        """Return the velocity box [rad/s] at ``q`` and whether acceleration was relaxed."""
        a = self.config.acceleration_limit
        d_up = np.maximum(self.upper - q, 0.0)  # inf for unbounded joints
        d_lo = np.maximum(q - self.lower, 0.0)
        hi = np.minimum(self.vmax, np.sqrt(a * d_up))
        lo = np.maximum(-self.vmax, -np.sqrt(a * d_lo))
        hi = np.minimum(hi, d_up / dt)
        lo = np.maximum(lo, -d_lo / dt)
        acc_lo, acc_hi = self.qd - a * dt, self.qd + a * dt
        lo2, hi2 = np.maximum(lo, acc_lo), np.minimum(hi, acc_hi)
        bad = lo2 > hi2
        if not bad.any():
            return lo2, hi2, False
        near = np.minimum(np.maximum(self.qd, lo), hi)  # position/velocity win
        return np.where(bad, near, lo2), np.where(bad, near, hi2), True
