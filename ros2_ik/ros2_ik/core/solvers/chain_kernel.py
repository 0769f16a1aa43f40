"""The pose-only LM attempt compiled with numba: one call per attempt.

The Python loop (:func:`lm_loop.run` on ``PoseState``) spends almost all of an iteration
in the interpreter around six pinocchio calls; a solve of a 6-joint arm needs a few
iterations and a hard target tens of attempts.  This module runs the same
attempt (Chan-damped LM on ``log6``, the LOCAL frame Jacobian, clamping, the predicted
active set, the progress schedule, the stall test and the exact tolerance test) on the
serial chain that carries the tip, on the compiled kinematic model
(:mod:`ros2_ik.core.kinematics`: the chain is the model's tree pruned to the tip's
supports), the locked joints already folded into the placements by pinocchio's reduced
model.  The chain's data come from that model (:func:`chain_of`); a chain with another joint type
(spherical, free flyer, mimic, ...) returns None and the Python loop runs instead, as
it does when numba is not installed.  Every answer is still verified outside, on the
full pinocchio model, by the driver.

Compiled once per machine (numba's on-disk cache), then loaded once per process;
:func:`warm_up` does it outside a solve (the node calls it at start-up, the tests before
the first test), else the first solve that needs it does.
"""
from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import NamedTuple, Optional

import numpy as np
import pinocchio as pin

from ros2_ik.core.kinematics import model as kinematics_model
from ros2_ik.core.kinematics.model import Chain, Tree
from ros2_ik.core.runtime import direct_call

#: The compiled module, once imported (numba is optional: without it the Python loop runs).
_JIT = None
#: The generated loops' module (``_lm_jit.pose_attempt``), imported with :data:`_JIT`.
_LOOPS = None
#: ``pose_attempt``'s compiled version for :func:`_attempt_args`' types (set by
#: :func:`warm_up`; the dispatcher until then), :mod:`direct_call`.
_ATTEMPT = None
#: Whether :func:`warm_up` has run in this process.
_WARM = False


def available() -> bool:
    """Return True when numba is importable (the compiled attempt can run)."""
    return importlib.util.find_spec("numba") is not None


def jit():
    """Return the compiled functions' module (imports numba the first time), or None."""
    global _JIT, _LOOPS
    if _JIT is None and available():
        from ros2_ik.core.kinematics.jit import drop_stale_cache
        here = Path(__file__).resolve().parent
        drop_stale_cache([here / "_chain_jit.py", here / "_lm_jit.py"])
        from ros2_ik.core.solvers import _chain_jit, _lm_jit
        _JIT, _LOOPS = _chain_jit, _lm_jit
    return _JIT


def chain_of(model: pin.Model, frame_id: int) -> Optional[Chain]:
    """Chain of ``model`` carrying frame ``frame_id`` (:func:`kinematics.model.chain_of`).

    None also when numba is absent.
    """
    return None if jit() is None else kinematics_model.chain_of(model, frame_id)


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
    it, done, E = (_ATTEMPT or _LOOPS.pose_attempt)(*_attempt_args(
        chain, q, T_target_inv, lower, upper, bounded, sw, pos_tol2, ori_tol2, near2,
        settings))
    return q, int(it), bool(done), float(E)


def _attempt_args(chain: Chain, q: np.ndarray, T_target_inv: np.ndarray, lower: np.ndarray,
                  upper: np.ndarray, bounded: bool, sw: float, pos_tol2: float,
                  ori_tol2: float, near2: float, settings: Settings) -> tuple:
    """``pose_attempt``'s arguments, each of the one type its compiled entry takes.

    The arrays are the chain's, the fresh ``q``, the target's inverse and the writable
    search limits (:func:`pose_state._chain`); the tolerances floats
    (:func:`pose_state.squared_tolerances`).
    """
    return (*chain.tree, chain.fparent, chain.fplace, q, T_target_inv, lower, upper, bounded,
            sw, pos_tol2, ori_tol2, near2, settings.damping_scale, settings.bias,
            settings.stall_ratio, settings.bounds, settings.active_set)


def forward_many(chain: Chain, qs: np.ndarray) -> np.ndarray:
    """Tip placements ``T_world_tip`` (S, 4, 4) of group vectors ``qs`` (S, n), compiled.

    ``qs`` is copied when read-only (the seed libraries' samples): a read-only array is
    another numba signature, which a solve would then load.
    """
    qs = np.require(qs, dtype=float, requirements=("C", "W"))
    out = np.empty((qs.shape[0], 4, 4))
    _JIT.forward_many(*chain.tree, chain.fparent, chain.fplace, qs, out)
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
    tree = Tree(np.array([-1, 0]), placements, np.array([1, 1]),
                np.array([[0.0, 0, 1], [0, 1, 0]]), np.array([0, 1]))
    chain = Chain(tree, np.array([1]), np.eye(4)[None])
    global _ATTEMPT
    _ATTEMPT = direct_call.entry_point(_LOOPS.pose_attempt, *_attempt_args(
        chain, np.zeros(2), np.eye(4), np.full(2, -1.0), np.full(2, 1.0), True, 1.0,
        1e-8, 1e-6, 1e-6, Settings(0.01, 1e-6, 0.995, np.full(21, np.inf), True)))
    forward_many(chain, np.zeros((1, 2)))  # the seed libraries' placements, in a solve
    _WARM = True
    return True
