"""The pose-only loops' state for one full or weighted pose target (lm and dls).

Built per solve from a :class:`Problem` without constraints: the model the loops run on
(the group's angle model, or the reduced model with cos/sin pairs when a continuous
joint has no plain twin), the target's inverse, tolerances, weights and limits, and the
compiled attempt's chain when :mod:`chain_kernel` can run it.
"""
from __future__ import annotations

from operator import ge as _ge, le as _le

import numpy as np
import pinocchio as pin

from ros2_ik.core.kinematics.model import placed_chain
from ros2_ik.core.pose import split_error, twist_error
from ros2_ik.core.problem import Problem
from ros2_ik.core.runtime.per_object import PerObject
from ros2_ik.core.solvers import chain_kernel
from ros2_ik.core.solvers.lm_loop import damped_step
from ros2_ik.core.solvers.residuals import LWA

_LOCAL = pin.ReferenceFrame.LOCAL

_GROUP_ARRAYS: PerObject = PerObject()


def _copy(q: np.ndarray) -> np.ndarray:
    return np.array(q, dtype=float)


def _group_arrays(group) -> tuple:
    """Per-group inputs of the pose loops (read-only, shared by threads).

    The loops run on ``group.angle_model`` (q = group vector, continuous joints as plain
    angles) unless a continuous joint has no plain twin: then on the reduced model with
    its cos/sin pairs, ``pin.integrate`` and conversions.  The last item: the compiled
    attempt's chains by frame id (:func:`_chain`), filled as frames are asked.  No bound
    method of ``group`` is kept here: a value referring to its weak key would keep the
    group alive for ever.
    """
    g = _GROUP_ARRAYS.get(group)
    if g is None:
        if not group.angle_q:
            lower, upper = group.reduced_lower, group.reduced_upper
            q_simple = group.iq_reduced_simple
            g = (group.reduced_model, lower, upper, group.reduced_bounded, True, q_simple,
                 np.flatnonzero(~group.continuous), lower[q_simple], upper[q_simple],
                 lower.tolist(), upper.tolist(), {})
        else:
            lower, upper, idx = group.search_lower, group.search_upper, np.arange(group.n)
            bounded = bool(np.isfinite(lower).any() or np.isfinite(upper).any())
            g = (group.angle_model, lower, upper, bounded, False, idx, idx, lower, upper,
                 lower.tolist(), upper.tolist(), {})
        _GROUP_ARRAYS[group] = g
    return g


def squared_tolerances(target) -> tuple:
    """``(pos_tol2, ori_tol2, near2)`` of PoseTarget ``target`` [m^2], [rad^2].

    ``near2``: a ``|log6|^2`` below it is worth the exact test (``|v| ~ |t|`` once the
    rotation is small).  Floats (a target may give ints; the compiled attempt takes
    floats), squared as floats: inf, not OverflowError, for an absurd 1e200 tolerance.
    """
    pos_tol = float(target.position_tolerance_m)
    ori_tol = float(target.orientation_tolerance_rad)
    pos_tol2, ori_tol2 = pos_tol * pos_tol, ori_tol * ori_tol
    return pos_tol2, ori_tol2, 1.1 * (pos_tol2 + ori_tol2)


def compiled_chain(group, frame_id: int):
    """``(chain, lower, upper, bounded)`` of the compiled pose attempt to frame ``frame_id``.

    What :class:`PoseState` hands :func:`chain_kernel.attempt` for a full isotropic pose;
    None when the Python loop runs (a continuous joint without a plain twin, no numba,
    a joint type the kernel lacks).  Built once per group and frame (:func:`_chain`).
    """
    g = _group_arrays(group)
    if g[4]:  # the reduced model's cos/sin layout
        return None
    found = _chain(group, frame_id)
    return None if found is None else (*found, g[3])


class PoseState:
    """What the reduced-model loops need for one pose target (built per solve)."""

    __slots__ = ("group", "model", "data", "fid", "T_target_inv", "inv_tol", "sqrt_w",
                 "R6", "log6", "lower", "upper", "bounded", "continuous", "pos_tol2",
                 "ori_tol2", "near2", "q_simple", "v_simple", "lower_simple",
                 "upper_simple", "lower_list", "upper_list", "to_q", "from_q", "chain",
                 "T_target_inv_h", "e", "J", "E_weighted", "limited")

    def __init__(self, problem: Problem):
        """Pick the loop (log6 for a full isotropic pose) and cache its inputs."""
        group, pose = problem.group, problem.pose
        self.group = group
        (self.model, self.lower, self.upper, self.bounded, self.continuous, self.q_simple,
         self.v_simple, self.lower_simple, self.upper_simple, self.lower_list,
         self.upper_list, _) = _group_arrays(group)
        if self.continuous:  # the reduced model's cos/sin layout
            self.data, self.to_q, self.from_q = (group.reduced_data(), group.to_reduced_q,
                                                 group.from_reduced_q)
        else:
            self.data, self.to_q, self.from_q = group.angle_data(), _copy, _copy
        self.fid = pose.reduced_frame_id
        self.T_target_inv = pose.T_target_world
        self.inv_tol, self.sqrt_w = pose.inv_tol, pose.sqrt_w
        self.log6 = pose.twist
        self.R6 = None if self.log6 else pose.R6
        self.pos_tol2, self.ori_tol2, self.near2 = squared_tolerances(pose.target)
        # The compiled attempt's chain (None: the Python loop), and the target it reads.
        self.chain = None
        if self.log6 and not self.continuous:
            self.chain = _chain(group, pose.frame_id)
        self.T_target_inv_h = pose.H_target_world if self.chain is not None else None
        # The rows the last evaluate left for the step (:mod:`lm_loop`), weighted; and
        # whether the last step clamped a joint (then the step tests the limits).
        self.e = self.J = None
        self.E_weighted, self.limited = 0.0, False

    def integrate(self, q: np.ndarray, dq: np.ndarray) -> np.ndarray:
        """Return configuration ``q`` of the loop's model moved by tangent step ``dq``.

        The one place a step meets the configuration's group: pinocchio's ``integrate``
        on the reduced model's cos/sin pairs, plain addition on angles and lengths [rad,
        m].  The caller clamps into the limits.
        """
        return pin.integrate(self.model, q, dq) if self.continuous else q + dq

    def begin(self, q: np.ndarray) -> np.ndarray:
        """Start an attempt from loop configuration ``q`` (a joint on a limit: tested)."""
        self.limited = self.bounded and self.on_limit(q)
        return q

    def evaluate(self, q: np.ndarray):
        """Evaluate the pose rows at ``q`` for :func:`lm_loop.run`: ``(converged, E, merit)``.

        A full isotropic pose (``log6``): ``e = log6(T_target^-1 T)`` with the LOCAL frame
        Jacobian, three pinocchio calls (cheaper than computeFrameJacobian and rotating
        the error); E = merit = ``|e|^2`` [m^2 + rad^2], converged by the exact tolerance
        test.  Otherwise the error in target axes with the world-aligned Jacobian: merit
        ``|e / tol|^2`` (converged at 1), E the weighted ``|e|^2``.
        """
        model, data, fid = self.model, self.data, self.fid
        if self.log6:
            pin.computeJointJacobians(model, data, q)
            Terr = self.T_target_inv * pin.updateFramePlacement(model, data, fid)
            J = pin.getFrameJacobian(model, data, fid, _LOCAL).reshape(6, -1)  # (6,): nv 1
            e = twist_error(Terr)  # pairs with the LOCAL Jacobian (core.pose)
            E = e.dot(e)
            if E <= self.near2 and self.within(Terr):
                return True, E, E
            sw = self.sqrt_w[0]
            self.e, self.J, self.E_weighted = (e, J, E) if sw == 1.0 else \
                (e * sw, J * sw, E * sw * sw)
            return False, E, E
        J = self.R6 @ pin.computeFrameJacobian(model, data, q, fid, LWA).reshape(6, -1)
        e = np.concatenate(split_error(self.T_target_inv * data.oMf[fid]))  # target axes
        es = e * self.inv_tol
        merit = es @ es
        if merit <= 1.0:
            return True, merit, merit
        self.e, self.J = e * self.sqrt_w, J * self.sqrt_w[:, None]
        E = self.E_weighted = self.e @ self.e
        return False, E, merit

    def step(self, q: np.ndarray, scale: float, bias: float, active_set: bool) -> np.ndarray:
        """Return ``q`` moved by the damped step on :meth:`evaluate`'s rows, clamped.

        With ``active_set``, joints resting on a limit that the step pushes outward are
        dropped and the step solved again, so the other joints compensate.
        """
        lam = scale * self.E_weighted + bias
        J, e = self.J, self.e
        dq = damped_step(J, e, lam)
        if active_set and self.limited:
            out = self.pushed_out(q, dq)
            if out is not None:
                dq = damped_step(J * ~out, e, lam)
        q = self.integrate(q, dq)
        if self.bounded:
            free = q
            q = np.minimum(np.maximum(q, self.lower), self.upper)
            # Byte comparison: cheaper than (q != free).any() on a few floats.
            self.limited = q.tobytes() != free.tobytes()
        return q

    def pushed_out(self, q: np.ndarray, dq: np.ndarray):
        """Mask (n,) of joints on a limit that step ``dq`` would push beyond it, or None."""
        if self.continuous:  # q holds cos/sin pairs: compare the 1-coordinate joints only
            qb, dqb = q[self.q_simple], dq[self.v_simple]
            hit = ((qb <= self.lower_simple) & (dqb < 0)) | ((qb >= self.upper_simple) & (dqb > 0))
            if not hit.any():
                return None
            out = np.zeros(dq.shape[0], dtype=bool)
            out[self.v_simple] = hit
            return out
        # Python floats: cheaper than the seven numpy calls for a few joints.
        hit = [(x <= lo and d < 0.0) or (x >= hi and d > 0.0) for x, d, lo, hi
               in zip(q.tolist(), dq.tolist(), self.lower_list, self.upper_list)]
        return np.array(hit) if any(hit) else None

    def within(self, T_target_frame: pin.SE3) -> bool:
        """Exact tolerance test on ``T_target_frame`` (log6's v is not the position)."""
        t, w = split_error(T_target_frame)  # the verifier's convention
        return t.dot(t) <= self.pos_tol2 and w.dot(w) <= self.ori_tol2

    def on_limit(self, q: np.ndarray) -> bool:
        """Return True when some joint of reduced configuration ``q`` sits on a limit."""
        values = q.tolist()  # Python floats: cheaper than the numpy test here
        return any(map(_ge, self.lower_list, values)) or any(map(_le, self.upper_list, values))


def _chain(group, frame_id: int):
    """``(chain, lower, upper)`` of the compiled attempt for ``group``'s frame ``frame_id``.

    None when the Python loop runs.  Built once, stored in the chains of
    :func:`_group_arrays` (its last item) of the group whose chain serves this one
    (:meth:`Group.chain_owner`: a group held with a second arm or the fingers elsewhere
    has its source's chain; one held with a lift under it elsewhere, its source's placed
    anew, :func:`placed_chain`); the limits are writable copies (a read-only array is
    another type to numba: a second compilation).
    """
    owner = group.chain_owner(frame_id)
    chains = _group_arrays(owner)[-1]
    found = chains.get(frame_id, _MISSING)
    if found is not _MISSING:
        return found
    shape = owner.shape_owner(frame_id)
    if shape is not owner:  # the same chain, its root elsewhere (a lift moved under it)
        same = _chain(shape, frame_id)
        chain = None if same is None else placed_chain(
            same[0], owner.angle_model, owner.reduced_frame_of(frame_id))
    else:
        chain = chain_kernel.chain_of(owner.angle_model, owner.reduced_frame_of(frame_id))
    chains[frame_id] = None if chain is None else (
        chain, np.array(owner.search_lower, dtype=float),
        np.array(owner.search_upper, dtype=float))
    return chains[frame_id]


#: A frame whose chain is not built yet (:func:`_chain`).
_MISSING = object()
