"""The pose-only LM attempt compiled with numba: one call per attempt.

The Python loop (``LevenbergMarquardt._attempt_log6``) spends almost all of an iteration
in the interpreter around six pinocchio calls; a solve of a 6-joint arm needs a few
iterations and a hard target tens of attempts.  This module runs the same
attempt (Chan-damped LM on ``log6``, the LOCAL frame Jacobian, clamping, the predicted
active set, the progress schedule, the stall test and the exact tolerance test) on the
serial chain that carries the tip, with its own forward kinematics:

    T_world_joint_k = T_world_joint_(k-1) * placement_k * motion_k(q)

(revolute: rotation about the joint's unit axis, prismatic: translation along it), the
locked joints already folded into the placements by pinocchio's reduced model.  The
chain's data come from that model (:func:`chain_of`); a chain with another joint type
(spherical, free flyer, mimic, ...) returns None and the Python loop runs instead, as
it does when numba is not installed.  Every answer is still verified outside, on the
full pinocchio model, by the driver.

Compiled once per machine (numba's on-disk cache), then loaded once per process;
:func:`warm_up` does it outside a solve (the node calls it at start-up, the tests before
the first test), else the first solve that needs it does.
"""
from __future__ import annotations

import importlib.util
from typing import NamedTuple, Optional

import numpy as np
import pinocchio as pin

#: The compiled module, once imported (numba is optional: without it the Python loop runs).
_JIT = None
#: Whether :func:`warm_up` has run in this process.
_WARM = False

_REVOLUTE = {"JointModelRX": (1.0, 0.0, 0.0), "JointModelRY": (0.0, 1.0, 0.0),
             "JointModelRZ": (0.0, 0.0, 1.0)}
_PRISMATIC = {"JointModelPX": (1.0, 0.0, 0.0), "JointModelPY": (0.0, 1.0, 0.0),
              "JointModelPZ": (0.0, 0.0, 1.0)}


class Chain(NamedTuple):
    """The serial chain from the root to a frame, as arrays for the kernel.

    ``placements`` (k, 4, 4): each joint's placement in its parent joint's frame;
    ``prismatic`` (k,) bool; ``axes`` (k, 3) unit axes in the joint frame; ``columns``
    (k,) index of each joint in the group vector; ``tip`` (4, 4): the frame in the last
    joint's frame (identity-free: the frame may hang below a fixed link).
    """

    placements: np.ndarray
    prismatic: np.ndarray
    axes: np.ndarray
    columns: np.ndarray
    tip: np.ndarray


def available() -> bool:
    """Return True when numba is importable (the compiled attempt can run)."""
    return importlib.util.find_spec("numba") is not None


def jit():
    """Return the compiled functions' module (imports numba the first time), or None."""
    global _JIT
    if _JIT is None and available():
        from ros2_ik.core.solvers import _chain_jit
        _JIT = _chain_jit
    return _JIT


def chain_of(model: pin.Model, frame_id: int) -> Optional[Chain]:
    """Chain of ``model`` (q = group vector, nq = nv) carrying frame ``frame_id``, or None.

    None when numba is absent, the model has cos/sin joints, or a joint on the path is
    not a one-axis revolute or prismatic joint.
    """
    if model.nq != model.nv or jit() is None:
        return None
    frame = model.frames[frame_id]
    support = [j for j in model.supports[frame.parentJoint] if j > 0]
    placements, prismatic, axes, columns = [], [], [], []
    for j in support:
        axis = joint_axis(model.joints[j])
        if axis is None:
            return None
        placements.append(model.jointPlacements[j].homogeneous)
        prismatic.append(axis[0])
        axes.append(axis[1])
        columns.append(model.idx_qs[j])
    if not support:
        return None
    return Chain(np.ascontiguousarray(placements, dtype=float), np.array(prismatic),
                 np.ascontiguousarray(axes, dtype=float), np.array(columns, dtype=np.int64),
                 np.ascontiguousarray(frame.placement.homogeneous))


def joint_axis(joint) -> Optional[tuple]:
    """(prismatic, unit axis) of a one-axis joint model, or None."""
    name = joint.shortname()
    if name in _REVOLUTE:
        return False, _REVOLUTE[name]
    if name in _PRISMATIC:
        return True, _PRISMATIC[name]
    if name in ("JointModelRevoluteUnaligned", "JointModelPrismaticUnaligned"):
        a = np.asarray(joint.extract().axis, dtype=float)
        norm = float(np.linalg.norm(a))
        if not norm > 0.0:
            return None
        return name == "JointModelPrismaticUnaligned", tuple(a / norm)
    return None


class Settings(NamedTuple):
    """The attempt's constants (those of ``LevenbergMarquardt``)."""

    damping_scale: float
    bias: float
    stall_ratio: float
    bounds: np.ndarray  # largest E at each iteration 0..last
    active_set: bool


def attempt(chain: Chain, q0: np.ndarray, T_target_inv: np.ndarray, lower: np.ndarray,
            upper: np.ndarray, bounded: bool, sw: float, pos_tol2: float, ori_tol2: float,
            near2: float, settings: Settings):
    """One compiled attempt from group vector ``q0``: ``(q, iterations, converged, E)``.

    ``T_target_inv`` (4, 4) is ``T_world_target^-1``; ``lower``/``upper`` the search
    limits (+-inf where a joint wraps); tolerances squared [m^2], [rad^2].
    """
    q = np.array(q0, dtype=float)  # a fresh C-contiguous copy: the attempt writes it
    it, done, E = _JIT.attempt(
        chain.placements, chain.prismatic, chain.axes, chain.columns, chain.tip, q,
        T_target_inv, lower, upper, bounded, sw, pos_tol2, ori_tol2, near2,
        settings.damping_scale, settings.bias, settings.stall_ratio, settings.bounds,
        settings.active_set)
    return q, int(it), bool(done), float(E)


def forward_many(chain: Chain, qs: np.ndarray) -> np.ndarray:
    """Tip placements ``T_world_tip`` (S, 4, 4) of group vectors ``qs`` (S, n), compiled.

    ``qs`` is copied when read-only (the seed libraries' samples): a read-only array is
    another numba signature, which a solve would then load.
    """
    qs = np.require(qs, dtype=float, requirements=("C", "W"))
    out = np.empty((qs.shape[0], 4, 4))
    _JIT.forward_many(chain.placements, chain.prismatic, chain.axes, chain.columns,
                      chain.tip, qs, out)
    return out


def warm_up() -> bool:
    """Compile or load the kernel now (once per process); False when numba is absent."""
    global _WARM
    if _WARM:
        return True
    if jit() is None:
        return False
    placements = np.repeat(np.eye(4)[None], 2, axis=0)
    placements[1, 2, 3] = 0.3
    chain = Chain(placements, np.array([False, False]), np.array([[0.0, 0, 1], [0, 1, 0]]),
                  np.array([0, 1], dtype=np.int64), np.eye(4))
    attempt(chain, np.zeros(2), np.eye(4), np.full(2, -1.0), np.full(2, 1.0), True, 1.0,
            1e-8, 1e-6, 1e-6, Settings(0.01, 1e-6, 0.995, np.full(21, np.inf), True))
    forward_many(chain, np.zeros((1, 2)))  # the seed libraries' placements, in a solve
    _WARM = True
    return True
