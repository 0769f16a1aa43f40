"""One whole-body servo step: contacts held, CoM in the support polygon, a hand tracking.

A QP on the generalised velocity ``v`` (nv,) of the FULL model, floating or planar base
included (pinocchio's tangent space: the base twist in its LOCAL frame, then the joints),
solved with daqp; the next configuration is ``integrate(q, v dt)`` (the base quaternion
stays unit)::

    minimise   |W (J_hand v - v_hand)|^2 + mu |v|^2 + w_post |v_j - k_post dq_post,j|^2
    such that  J_c v = -k_c e_c                          (each contact, 6 rows)
               a_i . (J_com,xy v) <= k_com (b_i - margin - a_i . c_xy)   (each edge i)
               lo <= v <= hi                             (velocity box)

``e`` = log6(T_target^-1 T_frame) of a frame, ``J = Jlog6(e) J_LOCAL`` (the arm servo's
convention, :mod:`.step`).  Contacts are held where :meth:`WholeBodyServo.hold` found
them (their drift is corrected at ``contact_gain``).  The support polygon is the convex
hull, in the world xy plane, of the contacts' support points (e.g. the sole corners):
edges ``a_i . p <= b_i``; the CoM may approach an edge shrunk by ``com_margin_m`` at most
at ``com_gain`` [1/s] of its distance (a velocity damper, as the collision dampers), so
it never leaves the shrunk polygon by more than the linearisation error.  The joints'
box is the arm servo's (:func:`._qp_terms.velocity_box`: velocity, acceleration and
braking toward position limits); the base's is ``+-base_velocity``.  A QP daqp cannot
solve gives ``v = 0`` clipped into the box (the robot stops, ``flag != 1``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple, Optional, Sequence, Tuple

import daqp
import numpy as np
import pinocchio as pin

from ros2_ik.core.constraints.support_polygon import convex_hull_2d
from ros2_ik.core.servo import _qp_terms
from ros2_ik.core.servo.step import checked_input

_LOCAL = pin.ReferenceFrame.LOCAL
_INF = 1e30  # daqp's "no bound"
_EQUALITY = 5  # daqp sense: active + immutable


@dataclass(frozen=True)
class WholeBodyConfig:
    """Gains, weights and limits of the whole-body step (units in each comment)."""

    hand_gain: float = 10.0  # hand task gain [1/s]
    hand_weights: tuple = (1.0, 1.0, 1.0, 0.3, 0.3, 0.3)  # [vx vy vz wx wy wz]
    contact_gain: float = 100.0  # contact drift correction [1/s] (keep it below 1 / dt)
    com_margin_m: float = 0.02  # the CoM keeps this far inside the polygon's edges [m]
    com_gain: float = 10.0  # CoM damper gain [1/s]
    damping: float = 1e-6  # constant Tikhonov term on v
    lm_damping: float = 1e-3  # Levenberg term, times |W e_hand|^2
    posture_weight: float = 1e-3  # regulariser of the joints toward the posture
    posture_gain: float = 1.0  # [1/s]
    base_velocity: float = 1.0  # base box per tangent coordinate [m/s, rad/s]
    velocity_scale: float = 1.0  # fraction of the URDF joint velocity limits
    acceleration_limit: float = 10.0  # joints [rad/s^2 or m/s^2]
    default_velocity: float = 1.0  # [rad/s] where the URDF limit is 0 or infinite


class Contact(NamedTuple):
    """A frame held in place, and its support points in that frame ((k, 3) [m])."""

    frame: str
    points: np.ndarray


class WholeBodyStep(NamedTuple):
    """One step: ``v`` (nv,), ``q_next`` (nq,), errors before the step, daqp's flag."""

    v: np.ndarray
    q_next: np.ndarray
    error_m: float  # hand position error [m]
    error_rad: float  # hand orientation error [rad]
    contact_error_m: float  # largest contact position drift [m]
    com_margin_m: float  # CoM's distance inside the polygon (negative: outside) [m]
    flag: int  # 1: solved; otherwise v is the box point nearest zero


def support_polygon(points_xy: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """Half-planes ``A p <= b`` of the convex hull of ``points_xy`` (k, 2) [m], A unit rows.

    Raises ValueError when the points span no area (fewer than 3 not on one line).
    """
    hull = convex_hull_2d(points_xy)
    if len(hull) < 3:
        raise ValueError("contacts: their support points span no polygon (give each "
                         "contact its sole's corners, or three or more contacts)")
    edges = np.roll(hull, -1, axis=0) - hull  # counter-clockwise: outside is on the right
    A = np.stack([edges[:, 1], -edges[:, 0]], axis=1)
    A /= np.linalg.norm(A, axis=1, keepdims=True)
    return A, np.einsum("ij,ij->i", A, hull)


class WholeBodyServo:
    """Whole-body stepper on a full pinocchio model (not thread-safe: keeps v and Data)."""

    def __init__(self, model: pin.Model, hand: str, contacts: Sequence[Contact],
                 config: Optional[WholeBodyConfig] = None,
                 posture: Optional[np.ndarray] = None,
                 moving: Optional[Sequence[str]] = None,
                 acceleration_limits: Optional[np.ndarray] = None):
        """Bind ``model`` (base joint included), the ``hand`` frame and the ``contacts``.

        ``posture`` (nq,): the joints' rest configuration (default: pinocchio's neutral).
        ``moving``: the 1-DoF joints the step may move (default: every one); the others
        keep their value (a velocity box of zero).  ``acceleration_limits`` (nv,) [rad/s^2
        or m/s^2]: per velocity coordinate (``Robot.acceleration_limits``: joint_limits
        .yaml's), where lower than the config's.  Call :meth:`hold` before stepping.
        """
        self.model, self.data = model, model.createData()
        self.config = config or WholeBodyConfig()
        self.hand = _frame_id(model, hand, "hand")
        self.contacts = [(_frame_id(model, c.frame, "contacts"), _points(c)) for c in contacts]
        if not self.contacts:
            raise ValueError("contacts: need at least one contact frame")
        self.posture = pin.neutral(model) if posture is None else np.array(posture, float)
        if self.posture.shape != (model.nq,) or not np.isfinite(self.posture).all():
            raise ValueError(f"posture: need {model.nq} finite values")
        self.w2 = np.square(np.asarray(self.config.hand_weights, dtype=float))
        self._box = _Box(model, self.config, moving, acceleration_limits)
        self._post_w = np.where(self._box.is_joint, self.config.posture_weight, 0.0)
        self._post_gain = self._post_w * self.config.posture_gain
        self.v = np.zeros(model.nv)
        self._H, self._f = np.empty((model.nv, model.nv)), np.empty(model.nv)
        self._J_hand = np.empty((6, model.nv))
        self._qp: Optional[daqp.Model] = None
        self.T_world_contacts: list = []
        self.polygon: Tuple[np.ndarray, np.ndarray] = (np.zeros((0, 2)), np.zeros(0))
        _qp_terms.warm_up()

    def hold(self, q: np.ndarray) -> None:
        """Hold every contact at its pose at ``q``; the support polygon is theirs from now.

        Also sizes the QP: rows ``[contacts (6 each, equalities); polygon edges]`` after
        the ``nv`` bounds (daqp's layout).
        """
        q = checked_input(q, self.model.nq, 1.0)
        pin.framesForwardKinematics(self.model, self.data, q)
        self.T_world_contacts = [self.data.oMf[fid].copy() for fid, _ in self.contacts]
        world = [T.act(p) for T, (_, points) in zip(self.T_world_contacts, self.contacts)
                 for p in points]
        self.polygon = support_polygon(np.array(world)[:, :2])
        nv, n_eq, n_edges = self.model.nv, 6 * len(self.contacts), len(self.polygon[1])
        self._A = np.zeros((n_eq + n_edges, nv))
        self._upper, self._lower = np.zeros(nv + n_eq + n_edges), np.zeros(nv + n_eq + n_edges)
        self._lower[nv + n_eq:] = -_INF
        self._sense = np.zeros(nv + n_eq + n_edges, dtype=np.int32)
        self._sense[nv:nv + n_eq] = _EQUALITY
        # each term writes its rows in place: (frame, held pose, A rows, upper, lower)
        self._contact_rows_at = [
            (fid, T, self._A[6 * i:6 * i + 6], self._upper[nv + 6 * i:nv + 6 * i + 6],
             self._lower[nv + 6 * i:nv + 6 * i + 6])
            for i, ((fid, _), T) in enumerate(zip(self.contacts, self.T_world_contacts))]
        self._A_com, self._com_upper = self._A[n_eq:], self._upper[nv + n_eq:]
        self._qp = None  # daqp's workspace: set up on the first step

    def reset(self, v: Optional[np.ndarray] = None) -> None:
        """Set the previous velocity (for the joints' acceleration bound)."""
        self.v = np.zeros(self.model.nv) if v is None else np.array(v, dtype=float)

    def step(self, q: np.ndarray, T_world_target: pin.SE3, dt: float) -> WholeBodyStep:
        """Step from ``q`` (nq,) toward the hand target over one period ``dt`` [s]."""
        if not self.T_world_contacts:
            raise ValueError("contacts: call hold(q) before step()")
        q = checked_input(q, self.model.nq, dt)
        model, nv = self.model, self.model.nv
        pin.computeJointJacobians(model, self.data, q)
        e_hand, T_err = self._frame_task(self.hand, T_world_target, self._J_hand)
        H, f = self._cost(q, self._J_hand, e_hand)
        drift = self._contact_rows()
        margin = self._com_rows()
        lo, hi = self._box.fill(q, self.v, dt, self._lower[:nv], self._upper[:nv])
        v, flag = self._solve(H, f)
        if flag != 1:
            v = np.zeros(nv)
        v = np.minimum(np.maximum(v, lo, out=v), hi, out=v)
        self.v = v
        t, w = T_err.translation, e_hand[3:]  # log6's angular part is log3(R)
        return WholeBodyStep(v, pin.integrate(model, q, v * dt), math.sqrt(t @ t),
                             math.sqrt(w @ w), drift, margin, int(flag))

    def _frame_task(self, fid: int, T_world_target: pin.SE3, J_out: np.ndarray):
        """Write ``Jlog6 J_LOCAL`` (6, nv) into ``J_out``; return ``(log6, T_target_frame)``."""
        T_err = T_world_target.actInv(pin.updateFramePlacement(self.model, self.data, fid))
        J = pin.getFrameJacobian(self.model, self.data, fid, _LOCAL)
        np.matmul(pin.Jlog6(T_err), J, out=J_out)
        return pin.log6(T_err).vector, T_err

    def _cost(self, q: np.ndarray, J: np.ndarray, e: np.ndarray):
        """``H`` (nv, nv) and ``f`` (nv,): hand task, damping, posture (reused arrays)."""
        c = self.config
        mu = c.damping + c.lm_damping * float(self.w2 @ (e * e))
        dq_post = pin.difference(self.model, q, self.posture)
        _qp_terms.least_squares_cost(J, -c.hand_gain * e, self.w2, mu,
                                     self._post_gain * dq_post, self._H, self._f)
        self._H.flat[::self.model.nv + 1] += self._post_w
        return self._H, self._f

    def _solve(self, H: np.ndarray, f: np.ndarray):
        """Solve the QP; warm-started from the last step's active set: ``(v, flag)``.

        The QP is strictly convex (``damping`` > 0): the start changes the answer only
        within daqp's tolerance (its primal tolerance, 1e-6).  A failed warm start is
        retried from scratch.
        """
        if self._qp is not None:
            self._qp.update(H=H, f=f, A=self._A, bupper=self._upper, blower=self._lower)
            v, _, flag, _ = self._qp.solve()
            if flag == 1:
                return v, flag
        self._qp = daqp.Model()
        self._qp.setup(H, f, self._A, self._upper, self._lower, self._sense)
        v, _, flag, _ = self._qp.solve()
        if flag != 1:
            self._qp = None
        return v, flag

    def _contact_rows(self) -> float:
        """Write the rows holding each contact (J_c v = -k_c e_c); the largest drift [m]."""
        drift, gain = 0.0, -self.config.contact_gain
        for fid, T_hold, A, upper, lower in self._contact_rows_at:
            e, T_err = self._frame_task(fid, T_hold, A)
            np.multiply(e, gain, out=upper)
            lower[:] = upper
            t = T_err.translation
            drift = max(drift, math.sqrt(t @ t))
        return drift

    def _com_rows(self) -> float:
        """Write the CoM damper rows (one per polygon edge); the CoM's margin [m]."""
        J_com = pin.jacobianCenterOfMass(self.model, self.data, False)
        A_poly, b_poly = self.polygon
        distance = b_poly - A_poly @ self.data.com[0][:2]
        np.matmul(A_poly, J_com[:2], out=self._A_com)
        c = self.config
        np.multiply(distance - c.com_margin_m, c.com_gain, out=self._com_upper)
        return min(distance.tolist())


class _Box:
    """The velocity box: the arm servo's per 1-DoF joint, ``+-base_velocity`` elsewhere."""

    def __init__(self, model: pin.Model, c: WholeBodyConfig,
                 moving: Optional[Sequence[str]] = None,
                 acceleration_limits: Optional[np.ndarray] = None):
        iq, iv, is_joint, held = [], [], np.zeros(model.nv, dtype=bool), []
        unknown = set(moving or ()) - set(model.names)
        if unknown:
            raise ValueError(f"moving: unknown joints {sorted(unknown)}")
        for j, joint in enumerate(model.joints[1:], start=1):
            if joint.nq == joint.nv == 1:
                iq.append(joint.idx_q)
                iv.append(joint.idx_v)
                is_joint[joint.idx_v] = True
                held.append(moving is not None and model.names[j] not in moving)
        self.iq, self.iv, self.is_joint = _index(iq), _index(iv), is_joint
        self.lower = model.lowerPositionLimit[self.iq].copy()
        self.upper = model.upperPositionLimit[self.iq].copy()
        vmax = model.velocityLimit[self.iv]
        vmax = np.where(np.isfinite(vmax) & (vmax > 0) & (vmax < 1e10), vmax,
                        c.default_velocity)
        self.vmax = np.where(held, 0.0, c.velocity_scale * vmax)
        given = np.full(model.nv, np.inf) if acceleration_limits is None \
            else np.asarray(acceleration_limits, dtype=float)
        self.a_max = np.minimum(float(c.acceleration_limit), given[self.iv])
        self.base = float(c.base_velocity)
        self.nv = model.nv

    def fill(self, q: np.ndarray, v_prev: np.ndarray, dt: float, lo: np.ndarray,
             hi: np.ndarray):
        """Fill and return ``(lo, hi)`` (nv,) at ``q`` after the previous velocity ``v_prev``."""
        lo[:], hi[:] = -self.base, self.base
        if isinstance(self.iv, slice):  # the usual layout: the base, then 1-DoF joints
            _qp_terms.velocity_box(q[self.iq], v_prev[self.iv], self.lower, self.upper,
                                   self.vmax, self.a_max, float(dt), lo[self.iv], hi[self.iv])
            return lo, hi
        n = len(self.iv)
        jlo, jhi = np.empty(n), np.empty(n)
        _qp_terms.velocity_box(q[self.iq], v_prev[self.iv], self.lower, self.upper, self.vmax,
                               self.a_max, float(dt), jlo, jhi)
        lo[self.iv], hi[self.iv] = jlo, jhi
        return lo, hi


def _index(indices: list):
    """Return a slice when ``indices`` are consecutive (views, no copies), else an array."""
    if indices and indices == list(range(indices[0], indices[0] + len(indices))):
        return slice(indices[0], indices[0] + len(indices))
    return np.array(indices, dtype=int)


def _frame_id(model: pin.Model, name: str, field: str) -> int:
    if not model.existFrame(name):
        raise ValueError(f"{field}: unknown frame '{name}'")
    return model.getFrameId(name)


def _points(contact: Contact) -> np.ndarray:
    points = np.asarray(contact.points, dtype=float).reshape(-1, 3)
    if not len(points) or not np.isfinite(points).all():
        raise ValueError(f"contacts: '{contact.frame}' needs finite support points (k, 3)")
    return points
