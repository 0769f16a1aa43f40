"""A compiled measure of a kernel problem's candidates (:mod:`_measure_jit`).

No solve accepts on it (issue 46): it reads the constraints' parameters as the kernel
packs them, so a wrong packing would make the attempt and this measure agree; a SUCCESS
comes from :func:`verify.check` on the full model alone (``test_full_check_accepts.py``).

For a problem without a pose target whose constraints the kernel encodes
(:func:`constraint_kernel.compile_problem`): pinocchio's forward kinematics at the
candidate, then each constraint's violation [m or rad] by the formula of its own
``measure`` (not the rows the attempt drives), against the request's tolerances.
The kinematics are the group's ``angle_model`` (pinocchio's reduced model, the other
joints locked; its configuration the group vector): no full configuration to assemble
and only the group's joints to move, a large part of the check on a whole-robot model.
The same figures as :func:`verify.check` (``test/test_kernel_check.py`` compares them on
every constraint type), cheaper.
"""
from __future__ import annotations

from typing import Optional, Tuple

import numpy as np
import pinocchio as pin

from ros2_ik.core.solvers import constraint_kernel, direct_call
from ros2_ik.core.verify import ConstraintTolerance, constraint_violations

_M = None
#: Per layout (by identity, the layout kept so that its id is not reused): its
#: :func:`_frames`.  Cleared past ``_MAX_LAYOUTS`` entries.
_FRAMES: dict = {}
_MAX_LAYOUTS = 64
#: ``measure_packed``'s compiled entry for :meth:`KernelCheck.holds`' argument types (set
#: by :func:`warm_up`; the dispatcher until then), :mod:`direct_call`.
_MEASURE = None


def _jit():
    """Return the compiled measures' module (the kernel's numba is loaded already)."""
    global _M
    if _M is None:
        from ros2_ik.core.solvers import _measure_jit
        _M = _measure_jit
    return _M


def warm_up() -> bool:
    """Compile or load the measures now (once per process); False when numba is absent."""
    if constraint_kernel.lm() is None:
        return False
    global _MEASURE
    if _MEASURE is None:
        c = constraint_kernel.tiny_problem()  # a position and an orientation bound
        _MEASURE = direct_call.entry_point(_jit().measure_packed, *_measure_args(
            c, np.empty((1, 4, 4)), np.empty(2), ConstraintTolerance(1e-4, 1e-4)))
    return True


def _measure_args(c: constraint_kernel.Compiled, W: np.ndarray, amounts: np.ndarray,
                  tol: ConstraintTolerance) -> tuple:
    """``measure_packed``'s arguments, each of the one type its compiled entry takes."""
    layout = c.layout
    return layout.ints, layout.consts, c.values, W, amounts, float(tol.m), float(tol.rad)


def _frames(layout: constraint_kernel.Layout, group) -> Tuple[tuple, np.ndarray]:
    """Return the check's frames of ``layout``: ``(moving, W)``, made once per layout.

    ``moving``: ``(row, frame id)`` of each frame that moves, in the angle model (the
    reduced model's ids); ``W`` (f, 4, 4), read-only: the world placements of the
    others, frames on the universe joint (a base, a torso whose joints are locked), which
    no configuration of the group moves.  Those cost no pinocchio call per check
    (they would cost two each).
    """
    entry = _FRAMES.get(id(layout))
    if entry is not None and entry[0] is layout:
        return entry[1], entry[2]
    model, moving = group.angle_model, []
    W = np.zeros((len(layout.fids), 4, 4))
    for row, fid in enumerate(layout.fids):
        f = group.reduced_frame_of(fid)
        frame = model.frames[f]
        if frame.parentJoint == 0:
            W[row] = frame.placement.homogeneous
        else:
            moving.append((row, f))
    W.setflags(write=False)
    if len(_FRAMES) >= _MAX_LAYOUTS:
        _FRAMES.clear()
    _FRAMES[id(layout)] = (layout, tuple(moving), W)
    return tuple(moving), W


class KernelCheck:
    """``holds(q)``: every constraint of the problem within tolerance at group vector ``q``."""

    __slots__ = ("compiled", "group", "model", "data", "moving", "amounts", "tol", "_W",
                 "folded")

    def __init__(self, compiled: constraint_kernel.Compiled, group,
                 tolerance: ConstraintTolerance, folded: tuple = ()):
        """Check ``compiled`` (made by ``compile_problem``) of ``group``'s problem.

        ``folded``: its joint windows (:attr:`Problem.folded`), no rows of the kernel:
        measured by their own class, as :func:`verify.check` does.
        """
        _jit()
        self.compiled, self.group, self.tol, self.folded = compiled, group, tolerance, folded
        self.model, self.data = group.angle_model, group.check_data()
        layout = compiled.layout
        self.moving, W = _frames(layout, group)
        self.amounts = np.empty(len(layout.ctype))
        self._W = W.copy()  # the frames' world placements, the fixed ones filled

    @classmethod
    def of(cls, state) -> Optional["KernelCheck"]:
        """Return the check of a :class:`constraint_kernel.KernelState` without a pose target."""
        if not isinstance(state, constraint_kernel.KernelState) or \
                state.problem.pose is not None:
            return None
        return cls(state.compiled, state.problem.group, state.tolerance,
                   state.problem.folded)

    def holds(self, q: np.ndarray) -> bool:
        """Return True when every constraint is within the tolerance of its unit at ``q``.

        :attr:`amounts` then holds each constraint's violation [m or rad] at ``q``.
        """
        data, model, W, group = self.data, self.model, self._W, self.group
        if self.moving:
            pin.forwardKinematics(model, data, q if group.angle_q else group.to_reduced_q(q))
            for i, f in self.moving:  # then only our frames that move
                W[i] = pin.updateFramePlacement(model, data, f).homogeneous
        ok = bool((_MEASURE or _M.measure_packed)(*_measure_args(
            self.compiled, W, self.amounts, self.tol)))
        if ok and self.folded:  # the windows, each measured by its own class
            ok = not constraint_violations(group.robot.model, group.full_data(),
                                           group.to_full_q(q), self.folded, self.tol)
        return ok

    def measure(self, q: np.ndarray) -> np.ndarray:
        """Each constraint's violation [m or rad] at group vector ``q`` (a reused array)."""
        self.holds(q)
        return self.amounts
