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
``qd_prev +- a_max dt`` (``a_max``: the config's, or joint_limits.yaml's where lower) and
position limits as a braking bound ``+-sqrt(a_max d)`` with ``d`` the distance to the
limit (half the deceleration the acceleration bound allows, so the next step's bounds stay
feasible: the joint slows to zero on the limit, never past it).

Collision avoidance (with a checker): one general inequality row per pair closer than
``influence_m`` (:mod:`.dampers`).  A QP the solver cannot solve (the dampers and the
bounds contradict each other) returns the velocity of the box nearest zero: the arm stops
within the acceleration limit, never jumps (``flag != 1`` says so).
"""
import math
from dataclasses import dataclass
from typing import Mapping, Optional

import daqp
import numpy as np
import pinocchio as pin

from ros2_ik.core.pose import split_error, twist_error
from ros2_ik.core.servo import _qp_terms
from ros2_ik.core.servo.dampers import CollisionDampers

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
    clearance_m: float = 0.01  # d_s: no pair (signed, padded distance) goes under it [m]
    influence_m: float = 0.1  # d_i: pairs farther than this get no damper [m]
    damper_gain: float = 10.0  # xi: a pair closes in at most at xi (d - d_s) [1/s]


@dataclass
class ServoStep:
    """Result of one step: ``qd`` [rad/s], ``q_next`` = q + qd dt, and QP status."""

    qd: np.ndarray
    q_next: np.ndarray
    error_m: float  # tip position error before the step [m] (pose mode; nan for a twist)
    error_rad: float  # tip orientation error before the step [rad] (nan for a twist)
    relaxed: bool  # True if the acceleration bound had to be relaxed to keep the others
    flag: int  # daqp exit flag (1: solved; otherwise qd: the slowest the box allows)
    # Nearest signed padded distance of any pair at q [m]; inf without a checker or when no
    # pair is closer than influence_m (farther pairs are not computed).
    clearance_m: float = math.inf
    # Yoshikawa sqrt(det(J J^T)) of the tip Jacobian at q, over the task rows (the 3
    # position rows if position_only, else all 6: [m] and [rad] mixed); 0 when singular.
    manipulability: float = math.nan


class Servo:
    """Differential-IK stepper for one group and tip frame (not thread-safe: keeps qd)."""

    def __init__(self, group, tip: str, config: Optional[ServoConfig] = None,
                 posture: Optional[np.ndarray] = None, checker=None):
        """Bind ``group`` (core.group.Group) and frame ``tip``; posture [rad] defaults to mid.

        ``checker``: a :class:`ros2_ik.core.collision.checker.CollisionChecker` on the
        group's full model, or None (no collision avoidance); see :meth:`set_checker`.
        """
        if not group.angle_q:
            raise ValueError("group: continuous joints without a plain-angle model are not "
                             "supported by the servo yet")
        self.group, self.config = group, config or ServoConfig()
        _check_config(self.config)
        self.model, self.data = group.angle_model, group.angle_model.createData()
        self.fid = group.reduced_frame_id(tip)
        n = group.n
        self.lower, self.upper = np.array(group.lower), np.array(group.upper)
        vmax = np.array(group.velocity_limits, dtype=float)
        vmax = np.where(np.isfinite(vmax) & (vmax > 0), vmax, self.config.default_velocity)
        self.vmax = self.config.velocity_scale * vmax
        #: Per joint [rad/s^2 or m/s^2]: the config's limit, or joint_limits.yaml's if lower.
        self.amax = np.minimum(float(self.config.acceleration_limit),
                               np.asarray(group.acceleration_limits, dtype=float))
        self.posture = group.mid_configuration() if posture is None else np.array(posture)
        if self.posture.shape != (n,) or not np.isfinite(self.posture).all():
            raise ValueError(f"posture: need {n} finite joint values")
        w = np.array(self.config.weights, dtype=float)
        if self.config.position_only:
            w[3:] = 0.0
        if w.shape != (6,) or (w < 0).any():
            raise ValueError("weights: need 6 non-negative values")
        self.w2 = w * w
        self._task_rows = np.flatnonzero(w > 0)
        self.qd = np.zeros(n)
        self._H, self._f = np.empty((n, n)), np.empty(n)
        self._lo, self._hi = np.empty(n), np.empty(n)
        self._A = np.zeros((0, n))
        self._sense = np.zeros(n, dtype=np.int32)
        self._dampers: Optional[CollisionDampers] = None
        self.set_checker(checker)
        _qp_terms.warm_up()

    @property
    def checker(self):
        """The CollisionChecker of the dampers, or None."""
        return None if self._dampers is None else self._dampers.checker

    def set_checker(self, checker) -> None:
        """Use ``checker`` (full-model CollisionChecker) for the dampers; None disables them."""
        c = self.config
        self._dampers = None if checker is None else CollisionDampers(
            self.group, checker, c.clearance_m, c.influence_m, c.damper_gain)

    def hold(self, values: Mapping[str, float]) -> None:
        """Check collisions with locked joints ``values`` [rad or m] where the robot has them.

        A torso lift that moved since the group was held (:meth:`CollisionDampers.hold`);
        nothing without a checker.
        """
        if self._dampers is not None:
            self._dampers.hold(values)

    def warm_up(self, q: np.ndarray, dt: float) -> None:
        """Run a pose and two twist steps at ``q`` (first calls: compilation), then reset.

        Call it before a control loop starts, not in its first period.
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
        q = self._kinematics(q, dt)
        J = pin.getFrameJacobian(self.model, self.data, self.fid, _LOCAL)
        err_T = T_world_target.actInv(self.data.oMf[self.fid])  # T_target_frame
        err = twist_error(err_T)  # pairs with the LOCAL Jacobian through Jlog6
        J_err = pin.Jlog6(err_T) @ J
        mu = self.config.lm_damping * float(self.w2 @ (err * err))
        step = self._solve(q, J_err, -self.config.gain * err, mu, dt, J)
        t, w = split_error(err_T)  # the reported error: the verifier's convention
        step.error_m, step.error_rad = math.sqrt(t.dot(t)), math.sqrt(w.dot(w))
        return step

    def step_twist(self, q: np.ndarray, twist: np.ndarray, in_world: bool,
                   dt: float) -> ServoStep:
        """Follow ``twist`` [m/s, rad/s] of the tip: world-aligned axes or the tip's own."""
        twist = np.asarray(twist, dtype=float)
        if twist.shape != (6,) or not np.isfinite(twist).all():
            raise ValueError("twist: need 6 finite values [vx vy vz wx wy wz]")
        q = self._kinematics(q, dt)
        J = pin.getFrameJacobian(self.model, self.data, self.fid,
                                 _WORLD_ALIGNED if in_world else _LOCAL)
        step = self._solve(q, J, twist, 0.0, dt, J)
        step.error_m = step.error_rad = float("nan")
        return step

    def _kinematics(self, q: np.ndarray, dt: float) -> np.ndarray:
        """Validate, update the tip's kinematics at ``q``; return ``q`` as float64."""
        q = checked_input(q, self.group.n, dt)
        pin.computeJointJacobians(self.model, self.data, q)
        pin.updateFramePlacement(self.model, self.data, self.fid)
        return q

    def _solve(self, q, J_err, v_task, mu, dt, J_frame) -> ServoStep:
        c = self.config
        relaxed = self._fill_bounds(q, dt)
        posture = (c.posture_weight * c.posture_gain) * (self.posture - q)
        _qp_terms.least_squares_cost(J_err, v_task, self.w2, c.damping + mu + c.posture_weight,
                                     posture, self._H, self._f)
        lo, hi = self._lo, self._hi
        A, upper, lower, sense, clearance = self._constraints(q, dt)
        qd, _, flag, _ = daqp.solve(self._H, self._f, A, upper, lower, sense)
        if flag != 1:  # infeasible or failed: the slowest velocity the box allows (a
            qd = np.zeros(self.group.n)  # stop within the acceleration limit, never a jump)
        qd = np.minimum(np.maximum(qd, lo), hi)  # and daqp's round-off at an active bound
        self.qd = qd
        return ServoStep(qd, q + qd * dt, math.nan, math.nan, relaxed, int(flag), clearance,
                         _qp_terms.manipulability(J_frame, self._task_rows))

    def _constraints(self, q, dt):
        """Return daqp's ``A, bupper, blower, sense`` (box first) and the clearance [m]."""
        if self._dampers is None:
            return self._A, self._hi, self._lo, self._sense, math.inf
        rows, lower, clearance = self._dampers.rows(q, self.qd, dt, self.amax)
        if not len(rows):
            return self._A, self._hi, self._lo, self._sense, clearance
        k = len(rows)
        return (rows, np.concatenate((self._hi, np.full(k, _DAQP_INF))),
                np.concatenate((self._lo, lower)), np.zeros(self.group.n + k, dtype=np.int32),
                clearance)

    def _fill_bounds(self, q: np.ndarray, dt: float) -> bool:
        return _qp_terms.velocity_box(q, self.qd, self.lower, self.upper, self.vmax,
                                      self.amax, float(dt),
                                      self._lo, self._hi)

    def bounds(self, q: np.ndarray, dt: float):
        """Return the velocity box (lo, hi) [rad/s] at ``q`` and whether acceleration was relaxed.

        See :func:`._qp_terms.velocity_box`; the arrays are copies.
        """
        relaxed = self._fill_bounds(np.asarray(q, dtype=float), dt)
        return self._lo.copy(), self._hi.copy(), relaxed


_DAQP_INF = 1e30  # daqp's "no bound"


def checked_input(q: np.ndarray, size: int, dt: float) -> np.ndarray:
    """Return ``q`` as float64 after checking it has ``size`` finite values and ``dt`` > 0.

    Raises ValueError naming ``q`` or ``dt``.
    """
    q = np.asarray(q, dtype=np.float64)
    if q.shape != (size,) or not np.isfinite(q).all():
        raise ValueError(f"q: need {size} finite values")
    if not (dt > 0.0 and math.isfinite(dt)):
        raise ValueError("dt: need a positive period [s]")
    return q


def _check_config(c: ServoConfig) -> None:
    """Raise ValueError naming the first invalid field of ``c``."""
    positive = ("gain", "velocity_scale", "acceleration_limit", "default_velocity",
                "damper_gain", "influence_m")
    for name in positive:
        value = getattr(c, name)
        if not (value > 0.0 and math.isfinite(value)):
            raise ValueError(f"{name}: need a positive finite value, got {value}")
    for name in ("damping", "lm_damping", "posture_weight", "posture_gain"):
        value = getattr(c, name)
        if not (value >= 0.0 and math.isfinite(value)):
            raise ValueError(f"{name}: need a non-negative finite value, got {value}")
    if not (math.isfinite(c.clearance_m) and c.clearance_m < c.influence_m):
        raise ValueError(f"clearance_m: need a finite value below influence_m "
                         f"({c.influence_m}), got {c.clearance_m}")
