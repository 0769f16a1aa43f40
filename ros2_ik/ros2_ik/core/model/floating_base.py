"""A floating or planar base: the root joint a whole-body group moves with its joints.

The base is one more joint type, defined here alone.  A :class:`WholeBodyGroup` is a
:class:`~ros2_ik.core.group.Group` whose first joint is the model's root joint:

- a free-flyer (``pin.JointModelFreeFlyer``: a floating URDF root, an SRDF
  ``virtual_joint type="floating"``): 7 coordinates ``x y z qx qy qz qw`` [m, unit
  quaternion] and 6 tangent coordinates (pinocchio's: linear then angular velocity in the
  base frame);
- a planar base (``pin.JointModelPlanar``: an SRDF ``virtual_joint type="planar"`` or
  ``Robot.from_urdf(..., root_joint="planar")``): 3 coordinates ``x y theta`` [m, m, rad]
  (pinocchio's ``cos, sin`` pair becomes the angle, as for continuous joints) and 3
  tangent coordinates (``vx vy`` in the base frame, ``omega``).

Group vectors are the base's coordinates, then one value per 1-DoF joint; the
coordinate names (:attr:`Group.joint_names`) are MoveIt's variable names of the virtual
joint (``root_joint/trans_x`` ... ``root_joint/rot_w``; ``world_joint/x``, ``/y``,
``/theta``).  Solvers step in the tangent space through :meth:`WholeBodyGroup.integrate`
(pinocchio's ``integrate`` on the base, addition on the joints): the quaternion stays
unit.  :class:`BaseBounds` optionally bounds the base (a position box [m], a yaw range
[rad]); a URDF's free-flyer limits are ignored (example-robot-data's are +-1 m or
unbounded).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Dict, Mapping, Optional, Tuple

import numpy as np
import pinocchio as pin

from ros2_ik.core import errors
from ros2_ik.core.model.group import Group, RobotModel, TWO_PI
from ros2_ik.core.model.joint_values import from_pairs, locked_configuration, rotates, to_pairs
from ros2_ik.core.model.reduced import reduced_model
from ros2_ik.core.model.world import MAX_COORDINATE_M

FLOATING, PLANAR = "floating", "planar"
_INF = math.inf
#: MoveIt's variable names of a floating and a planar joint (``<joint>/<variable>``).
VARIABLES = {FLOATING: ("trans_x", "trans_y", "trans_z", "rot_x", "rot_y", "rot_z", "rot_w"),
             PLANAR: ("x", "y", "theta")}
_NV = {FLOATING: 6, PLANAR: 3}


def base_kind(model: pin.Model) -> Optional[str]:
    """Return ``"floating"`` or ``"planar"`` when the model's root joint is one, else None."""
    if model.njoints < 2 or model.parents[1] != 0:
        return None
    name = model.joints[1].shortname()
    return {"JointModelFreeFlyer": FLOATING, "JointModelPlanar": PLANAR}.get(name)


def root_joint_model(kind: str):
    """Return pinocchio's joint model of base ``kind`` ("floating" or "planar")."""
    if kind == FLOATING:
        return pin.JointModelFreeFlyer()
    if kind == PLANAR:
        return pin.JointModelPlanar()
    raise errors.InvalidArgument(
        f"root_joint must be 'floating', 'planar' or 'srdf', got {kind!r}")


@dataclass(frozen=True)
class BaseBounds:
    """Optional bounds of a base, in the world frame.

    ``position_lower``/``position_upper`` (3,) [m]: a box on the base origin (a planar
    base reads x and y); ``yaw_lower``/``yaw_upper`` [rad]: the heading about the world
    z axis (a free-flyer's yaw, ZYX convention; a planar base's theta).  +-inf: unbounded
    (the default).
    """

    position_lower: Tuple[float, float, float] = (-_INF, -_INF, -_INF)
    position_upper: Tuple[float, float, float] = (_INF, _INF, _INF)
    yaw_lower: float = -_INF
    yaw_upper: float = _INF

    def checked(self) -> "BaseBounds":
        """Return the bounds as floats; InvalidArgument naming the field when malformed."""
        lo = _triple(self.position_lower, "base_bounds.position_lower")
        hi = _triple(self.position_upper, "base_bounds.position_upper")
        bad = [i for i in range(3) if not lo[i] <= hi[i]]
        if bad:
            raise errors.InvalidArgument(
                f"base_bounds.position_lower > position_upper on axes {bad}: {lo} > {hi}")
        ylo, yhi = _number(self.yaw_lower, "base_bounds.yaw_lower"), \
            _number(self.yaw_upper, "base_bounds.yaw_upper")
        if not ylo <= yhi:
            raise errors.InvalidArgument(
                f"base_bounds.yaw_lower {ylo} > base_bounds.yaw_upper {yhi}")
        if math.isfinite(ylo) != math.isfinite(yhi) or (
                math.isfinite(ylo) and (yhi - ylo >= TWO_PI or abs(ylo) > 2 * TWO_PI)):
            if yhi - ylo >= TWO_PI or not math.isfinite(ylo) or not math.isfinite(yhi):
                ylo, yhi = -_INF, _INF  # a full turn or a one-sided range bounds nothing
            else:
                raise errors.InvalidArgument(
                    f"base_bounds yaw range [{ylo}, {yhi}] must lie within [-4 pi, 4 pi]")
        return BaseBounds(tuple(lo), tuple(hi), ylo, yhi)

    @property
    def has_yaw(self) -> bool:
        """Whether the yaw is bounded."""
        return math.isfinite(self.yaw_lower)


def _number(value, field: str) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise errors.InvalidArgument(f"{field} must be a number, got {value!r}") from None
    if math.isnan(v):
        raise errors.InvalidArgument(f"{field} is NaN")
    return v


def _triple(values, field: str) -> list:
    try:
        seq = list(values)
    except TypeError:
        raise errors.InvalidArgument(f"{field} must be 3 numbers, got {values!r}") from None
    if len(seq) != 3:
        raise errors.InvalidArgument(f"{field} must be 3 numbers, got {len(seq)}")
    return [_number(v, f"{field}[{i}]") for i, v in enumerate(seq)]


def yaw_of_quaternion(qx: float, qy: float, qz: float, qw: float) -> float:
    """Yaw [rad] (ZYX) of the rotation of unit quaternion ``(qx, qy, qz, qw)``."""
    return math.atan2(2.0 * (qw * qz + qx * qy), 1.0 - 2.0 * (qy * qy + qz * qz))


class WholeBodyGroup(Group):
    """A group whose root joint is a floating or planar base; built by ``Robot.whole_body``.

    See the module docstring for the layout of its vectors.  The base is never locked;
    every 1-DoF joint outside ``joint_ids`` is, as in :class:`Group`.
    """

    has_base = True

    def __init__(self, robot: RobotModel, tip: str, joint_ids: Tuple[int, ...],
                 locked: Dict[int, float], bounds: Optional[BaseBounds] = None):
        """Precompute the layout (internal: use ``Robot.whole_body``)."""
        model = robot.model
        kind = base_kind(model)
        if kind is None:
            raise errors.InvalidArgument("the model's root joint is neither floating nor planar")
        self.robot = robot
        self.base = model.frames[0].name
        self.tip = tip
        self.base_kind = kind
        self.base_joint = model.names[1]
        self.bounds = (bounds or BaseBounds()).checked()
        self.base_nq = len(VARIABLES[kind])
        self.base_nv = _NV[kind]
        self.arm_ids = tuple(int(j) for j in joint_ids)
        self.joint_ids = (1,) + self.arm_ids
        self.joint_names = tuple(f"{self.base_joint}/{v}" for v in VARIABLES[kind]) + tuple(
            model.names[j] for j in self.arm_ids)
        self.joint_index = {name: i for i, name in enumerate(self.joint_names)}
        self.locked = {model.names[j]: v for j, v in locked.items()}
        arm_cont = [model.nqs[j] == 2 for j in self.arm_ids]
        theta_wraps = kind == PLANAR and not self.bounds.has_yaw
        self.continuous = np.array([False] * (self.base_nq - 1)
                                   + [theta_wraps] + arm_cont) if kind == PLANAR else \
            np.array([False] * 7 + arm_cont)
        # No base coordinate counts as a turning joint: a position [m] or quaternion
        # coordinate is no angle (a base 4 m from the seed is not 4 - 2 pi m from it), and
        # a planar heading wraps only unbounded (``continuous`` above).
        self.rotates = np.array([False] * self.base_nq
                                + [rotates(model.joints[j]) for j in self.arm_ids])
        self.lower, self.upper = self._coordinate_limits(model)
        self.velocity_limits = np.concatenate((np.full(self.base_nq, np.inf), np.array(
            [model.velocityLimit[model.idx_vs[j]] for j in self.arm_ids], dtype=float)))
        self.acceleration_limits = np.concatenate((np.full(self.base_nq, np.inf), np.array(
            [robot.acceleration_limits[model.idx_vs[j]] for j in self.arm_ids], dtype=float)))
        self._derive()
        self._arm_cont = arm_cont
        self._has_yaw = self.bounds.has_yaw
        self._build_maps(model, locked)
        self._model_joint_names = frozenset(model.names[1:]) | frozenset(
            self.joint_names[:self.base_nq])
        self._base_model = pin.Model()
        self._base_model.addJoint(0, root_joint_model(kind), pin.SE3.Identity(), "base")
        self._base_model.lowerPositionLimit[:] = -1e300
        self._base_model.upperPositionLimit[:] = 1e300
        inf_v = [math.inf] * self.base_nv
        self._tangent_inf = (inf_v, [-math.inf] * self.base_nv)

    # ------------------------------------------------------------------ build
    def held_at(self, values: Mapping[str, float]) -> "WholeBodyGroup":
        """Return this whole-body group with locked joints ``values`` [rad or m] held there.

        Same base (and bounds), joints and tip; as :meth:`Group.held_at`.
        """
        model = self.robot.model
        return self._held(self.robot.whole_body(
            tip=self.tip, joints=[model.names[j] for j in self.arm_ids],
            locked=self._relocked(values), base_bounds=self.bounds))

    def _coordinate_limits(self, model: pin.Model) -> Tuple[np.ndarray, np.ndarray]:
        b = self.bounds
        if self.base_kind == FLOATING:
            lo = list(b.position_lower) + [-_INF] * 4
            hi = list(b.position_upper) + [_INF] * 4
        else:
            lo = [b.position_lower[0], b.position_lower[1], b.yaw_lower]
            hi = [b.position_upper[0], b.position_upper[1], b.yaw_upper]
        for j in self.arm_ids:
            if model.nqs[j] == 2:
                lo.append(-_INF)
                hi.append(_INF)
            else:
                iq = model.idx_qs[j]
                lo.append(float(model.lowerPositionLimit[iq]))
                hi.append(float(model.upperPositionLimit[iq]))
        return np.array(lo, dtype=float), np.array(hi, dtype=float)

    def _build_maps(self, model: pin.Model, locked: Dict[int, float]) -> None:
        self.q_full_locked = locked_configuration(model, locked)
        self.iv_full = np.array([v for j in self.joint_ids for v in range(
            model.idx_vs[j], model.idx_vs[j] + model.nvs[j])], dtype=np.intp)
        self.iq_full = np.array([i for j in self.joint_ids for i in range(
            model.idx_qs[j], model.idx_qs[j] + model.nqs[j])], dtype=np.intp)
        self._iq_slice = None
        iq = self.iq_full.tolist()
        # to_full_q's fast path: a free-flyer and joints without (cos, sin) pairs, one block.
        self._plain = slice(iq[0], iq[-1] + 1) if (
            self.base_kind == FLOATING and not any(self._arm_cont)
            and iq == list(range(iq[0], iq[-1] + 1))) else None
        keep = set(self.joint_ids)
        lock_ids = [j for j in range(1, model.njoints) if j not in keep]
        self.reduced_model = reduced_model(model, lock_ids, self.q_full_locked)
        self.angle_model = self.reduced_model
        self.angle_q = False
        self.has_continuous = bool(self.continuous.any())
        self.iq_reduced_cos = self.iq_reduced_simple = np.zeros(0, dtype=np.intp)
        self.reduced_lower = np.full(self.reduced_model.nq, -np.inf)
        self.reduced_upper = np.full(self.reduced_model.nq, np.inf)
        self.reduced_bounded = False
        self._reduced_fids = {}

    # ------------------------------------------------------------ conversions
    @property
    def n(self) -> int:
        """Length of a group vector: the base's coordinates plus one per joint."""
        return self.base_nq + len(self.arm_ids)

    @property
    def nv(self) -> int:
        """Size of a step (tangent space): the base's tangent plus one per joint."""
        return self.base_nv + len(self.arm_ids)

    def _model_coordinates(self, q: np.ndarray) -> list:
        """Group vector -> the group joints' coordinates in pinocchio's layout (a list)."""
        values = np.asarray(q, dtype=float).tolist()
        nb = self.base_nq
        if self.base_kind == PLANAR:
            out = values[:2] + [math.cos(values[2]), math.sin(values[2])]
        else:
            out = values[:7]
        return to_pairs(values[nb:], self._arm_cont, out)

    def to_reduced_q(self, q: np.ndarray) -> np.ndarray:
        """Group vector (nq,) -> reduced-model configuration."""
        return np.array(self._model_coordinates(q))

    def to_reduced_qs(self, qs: np.ndarray) -> np.ndarray:
        """Group vectors (k, nq) -> reduced-model configurations (k, nq_reduced)."""
        return np.array([self._model_coordinates(q) for q in np.asarray(qs, dtype=float)])

    def from_reduced_q(self, q_red: np.ndarray) -> np.ndarray:
        """Reduced-model configuration (the group joints' coordinates) -> group vector."""
        values = np.asarray(q_red, dtype=float).tolist()
        if self.base_kind == PLANAR:
            out, i = values[:2] + [math.atan2(values[3], values[2])], 4
        else:
            out, i = values[:7], 7
        return np.array(from_pairs(values, i, self._arm_cont, out))

    def to_full_q(self, q: np.ndarray) -> np.ndarray:
        """Group vector (nq,) -> full pinocchio configuration, other joints locked."""
        q_full = self.q_full_locked.copy()
        if self._plain is not None:  # the vector is pinocchio's coordinates: one slice
            q_full[self._plain] = q
        else:
            q_full[self.iq_full] = self._model_coordinates(q)
        return q_full

    def from_full_q(self, q_full: np.ndarray) -> np.ndarray:
        """Full pinocchio configuration -> group vector (the base's and group joints' values)."""
        if self._plain is not None:  # the vector is pinocchio's coordinates: one slice
            return np.array(q_full[self._plain], dtype=float)
        return self.from_reduced_q(np.asarray(q_full, dtype=float)[self.iq_full])

    def base_world_placement(self, q: np.ndarray) -> pin.SE3:
        """``T_world_base``: the base joint's frame in the world at group vector ``q``.

        :meth:`base_placement` in the frame the joint is mounted in (the model's
        ``jointPlacements[1]``, the identity for a root joint pinocchio adds).
        """
        return self.robot.model.jointPlacements[1] * self.base_placement(q)

    def base_placement(self, q: np.ndarray) -> pin.SE3:
        """``T_parent_base``: the base joint's motion at group vector ``q``.

        In the frame the joint is mounted in (the base's parent frame: a
        ``MultiDOFJointState``'s transform); :meth:`base_world_placement` in the world.
        """
        v = np.asarray(q, dtype=float)
        if self.base_kind == FLOATING:
            return pin.XYZQUATToSE3(v[:7])
        c, s = math.cos(v[2]), math.sin(v[2])
        return pin.SE3(np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]]),
                       np.array([v[0], v[1], 0.0]))

    def carried(self, q: np.ndarray, T_world_frame: pin.SE3, T_world_target: pin.SE3,
                turn: bool) -> np.ndarray:
        """Return ``q`` with the whole robot moved rigidly to put a frame on a target.

        ``T_world_frame``: the frame's placement at ``q``; the robot moves as one body
        (the joints keep their values) so that the frame's origin lands on
        ``T_world_target``'s and, with ``turn``, its axes on the target's.  A free-flyer
        makes that move exactly; a planar base its part in its plane (x, y and the turn
        about its z axis: the origin lands on the target's in that plane).  Then clamped
        into the base bounds (:meth:`clamp`).
        """
        P = self.robot.model.jointPlacements[1]  # the base joint's frame in the world
        X = self.base_placement(q)  # the base in that frame
        frame = P.actInv(T_world_frame)  # the frame and target in the base joint's frame
        target = P.actInv(T_world_target)
        R = target.rotation.dot(frame.rotation.T) if turn else np.eye(3)
        if self.base_kind == PLANAR:
            c, s = R[0, 0], R[1, 0]  # the turn about z nearest to R
            norm = math.hypot(c, s)
            c, s = (c / norm, s / norm) if norm > 1e-9 else (1.0, 0.0)
            R = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
        p = R.dot(X.translation - frame.translation) + target.translation
        out = np.array(q, dtype=float)
        if self.base_kind == FLOATING:
            out[:7] = pin.SE3ToXYZQUAT(pin.SE3(R.dot(X.rotation), p))
        else:
            out[:3] = (p[0], p[1], q[2] + math.atan2(R[1, 0], R[0, 0]))
        return self.clamp(out)

    # ------------------------------------------------------- the Lie group
    def _base_q(self, q: np.ndarray) -> np.ndarray:
        if self.base_kind == FLOATING:
            return q[:7]
        return np.array([q[0], q[1], math.cos(q[2]), math.sin(q[2])])

    def integrate(self, q: np.ndarray, dq: np.ndarray) -> np.ndarray:
        """``q (+) dq``: pinocchio's ``integrate`` on the base, addition on the joints."""
        nb, nv = self.base_nq, self.base_nv
        base = pin.integrate(self._base_model, self._base_q(q), dq[:nv])
        if self.base_kind == PLANAR:  # the heading adds up (no wrap): x, y from SE(2)
            base = np.array([base[0], base[1], q[2] + dq[2]])
        return np.concatenate((base, q[nb:] + dq[nv:]))

    def difference(self, q0: np.ndarray, q1: np.ndarray) -> np.ndarray:
        """Tangent step (nv,) from ``q0`` to ``q1`` (pinocchio's ``difference`` on the base)."""
        nb = self.base_nq
        base = pin.difference(self._base_model, self._base_q(q0), self._base_q(q1))
        if self.base_kind == PLANAR:
            base[2] = q1[2] - q0[2]
        return np.concatenate((base, q1[nb:] - q0[nb:]))

    def integrate_jacobian(self, q: np.ndarray, dq: np.ndarray) -> np.ndarray:
        """``d integrate(q, dq) / d dq`` (nv, nv): pinocchio's ``dIntegrate`` on the base."""
        nv = self.base_nv
        out = np.eye(self.nv)
        out[:nv, :nv] = pin.dIntegrate(self._base_model, self._base_q(q), dq[:nv],
                                       pin.ArgumentPosition.ARG1)
        return out

    def project(self, q: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
        """Clamp into ``lower``/``upper``, normalise the quaternion, keep the yaw range."""
        q = np.minimum(np.maximum(q, lower), upper)
        if self.base_kind == FLOATING:
            x, y, z, w = q[3:7].tolist()  # floats: cheaper than numpy on four numbers
            n = 1.0 / math.sqrt(x * x + y * y + z * z + w * w)
            q[3:7] = (x * n, y * n, z * n, w * n)
            if self._has_yaw:
                self._clamp_yaw(q)
        return q

    def _clamp_yaw(self, q: np.ndarray) -> None:
        """Turn the free-flyer about the world z axis into the yaw range (in place)."""
        yaw = yaw_of_quaternion(*q[3:7].tolist())
        b = self.bounds
        # The equivalent of yaw nearest to the range's middle, then clamped into it.
        mid = 0.5 * (b.yaw_lower + b.yaw_upper)
        yaw_eq = yaw + round((mid - yaw) / TWO_PI) * TWO_PI
        turn = min(max(yaw_eq, b.yaw_lower), b.yaw_upper) - yaw_eq
        if turn != 0.0:
            half = 0.5 * turn
            rz = pin.Quaternion(math.cos(half), 0.0, 0.0, math.sin(half))
            quat = rz * pin.Quaternion(q[6], q[3], q[4], q[5])
            q[3:7] = (quat.x, quat.y, quat.z, quat.w)  # turned in place: origin kept

    def tangent_list(self, q: np.ndarray) -> list:
        """Per tangent coordinate, the value limit tests compare: 0.0 on the base's."""
        return [0.0] * self.base_nv + q[self.base_nq:].tolist()

    def tangent_bounds(self, lower: np.ndarray, upper: np.ndarray) -> Tuple[list, list]:
        """Bounds per tangent coordinate as lists: the base's unbounded (projection keeps them)."""
        nb = self.base_nq
        return (self._tangent_inf[1] + lower[nb:].tolist(),
                self._tangent_inf[0] + upper[nb:].tolist())

    # ------------------------------------------------------------- utilities
    def mid_configuration(self) -> np.ndarray:
        """Return the base at the origin (or its box's middle), the joints mid-limits."""
        q = self._neutral_base()
        mid = [0.0 if c else 0.5 * (lo + hi) for c, lo, hi in zip(
            self._arm_cont, self._lower_list[self.base_nq:], self._upper_list[self.base_nq:])]
        return np.concatenate((q, mid))

    def _neutral_base(self) -> np.ndarray:
        nb = self.base_nq
        q = np.zeros(nb)
        if self.base_kind == FLOATING:
            q[6] = 1.0
        lo, hi = self.lower[:nb], self.upper[:nb]
        finite = np.isfinite(lo) & np.isfinite(hi)
        q[finite] = 0.5 * (lo[finite] + hi[finite])
        return np.minimum(np.maximum(q, lo), hi)

    def clamp(self, q: np.ndarray) -> np.ndarray:
        """Project ``q`` into the limits and base bounds (a copy; unit quaternion)."""
        return self.project(np.array(q, dtype=float), self.lower, self.upper)

    def within_limits_values(self, values: list) -> bool:
        """Joint limits and base bounds hold exactly at group vector ``values`` (a list)."""
        if not Group.within_limits_values(self, values):
            return False
        if self.base_kind == FLOATING:
            x, y, z, w = values[3:7]
            if not abs(math.sqrt(x * x + y * y + z * z + w * w) - 1.0) <= 1e-9:
                return False
            if self._has_yaw:
                yaw = yaw_of_quaternion(*values[3:7])
                b = self.bounds
                yaw += round((0.5 * (b.yaw_lower + b.yaw_upper) - yaw) / TWO_PI) * TWO_PI
                return b.yaw_lower - 1e-12 <= yaw <= b.yaw_upper + 1e-12
        return True

    def random_configuration(self, rng: np.random.Generator,
                             center: Optional[np.ndarray] = None,
                             radius: float = math.inf) -> np.ndarray:
        """Joints uniform in their limits (or the box around ``center``); the base at center's.

        The base keeps ``center``'s pose (the seed's; none: the origin), drawn uniformly
        in the coordinates its bounds limit to a box, and turned to a uniform yaw in a
        bounded yaw range.
        """
        nb = self.base_nq
        if center is None:
            base = self._neutral_base()
        else:
            base = np.array(center[:nb], dtype=float)
        if center is None or not math.isfinite(radius):
            joints = self._sample_lo[nb:] + self._sample_span[nb:] * rng.random(self.n - nb)
        else:
            lo = np.maximum(self.lower[nb:], center[nb:] - radius)
            hi = np.minimum(self.upper[nb:], center[nb:] + radius)
            joints = lo + (hi - lo) * rng.random(self.n - nb)
        self._draw_base(base, rng)
        return np.concatenate((base, joints))

    def _draw_base(self, base: np.ndarray, rng: np.random.Generator) -> None:
        """Draw the bounded coordinates of ``base`` uniformly in their box (in place)."""
        npos = 3 if self.base_kind == FLOATING else 2
        lo, hi = self.lower[:npos], self.upper[:npos]
        box = np.isfinite(lo) & np.isfinite(hi)
        if box.any():
            base[:npos][box] = lo[box] + (hi[box] - lo[box]) * rng.random(int(box.sum()))
        b = self.bounds
        if b.has_yaw:
            yaw = b.yaw_lower + (b.yaw_upper - b.yaw_lower) * rng.random()
            if self.base_kind == PLANAR:
                base[2] = yaw
            else:
                R = pin.Quaternion(base[6], base[3], base[4], base[5]).normalized()
                rpy = pin.rpy.matrixToRpy(R.toRotationMatrix())
                quat = pin.Quaternion(pin.rpy.rpyToMatrix(rpy[0], rpy[1], yaw))
                base[3:7] = (quat.x, quat.y, quat.z, quat.w)
        base[:] = np.minimum(np.maximum(base, self.lower[:self.base_nq]),
                             self.upper[:self.base_nq])

    def random_configurations(self, rng: np.random.Generator, count: int) -> np.ndarray:
        """``count`` samples (count, nq) as :meth:`random_configuration` without a center."""
        return np.array([self.random_configuration(rng) for _ in range(count)])

    def _checked(self, q: np.ndarray, what: str) -> Tuple[np.ndarray, list]:
        """Shape, finiteness, the base in the world and a usable quaternion (normalised)."""
        arr, values = Group._checked(self, q, what)
        far = self.beyond_world(values)
        if far:
            raise errors.InvalidSeed(f"{what}: {far}")
        if self.base_kind == FLOATING:
            x, y, z, w = values[3:7]
            norm = math.hypot(x, y, z, w)  # no overflow: 1e300 components are a direction
            if not norm > 1e-6:
                raise errors.InvalidSeed(
                    f"{what}: base quaternion {self.joint_names[3:7]} has norm {norm:.3g}")
            if norm != 1.0:  # usually unit already: no array operation
                arr[3:7] /= norm
                values = arr.tolist()
        return arr, values

    def beyond_world(self, values: list) -> str:
        """Say which base position coordinates of group vector ``values`` [m] lie too far.

        '' when each lies within :data:`.world.MAX_COORDINATE_M` of the world origin (the
        base joint's parent frame), as a base the solvers can move must: a seed beyond it
        would run to the timeout (no step of metres moves a base 1e300 m away).
        """
        npos = 3 if self.base_kind == FLOATING else 2
        far = [f"{name} = {v:.6g} m" for name, v in zip(self.joint_names, values[:npos])
               if not -MAX_COORDINATE_M <= v <= MAX_COORDINATE_M]
        return (f"base position {', '.join(far)}: a base must lie within "
                f"{MAX_COORDINATE_M:g} m of the world origin") if far else ""

    def __repr__(self) -> str:
        """Short description."""
        return (f"WholeBodyGroup(base={self.base_joint!r} ({self.base_kind}), "
                f"tip={self.tip!r}, joints={list(self.joint_names[self.base_nq:])})")
