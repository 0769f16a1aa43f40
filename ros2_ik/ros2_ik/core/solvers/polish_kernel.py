"""Polishing's model compiled: QP rows, feasibility and costs in one numba call.

:mod:`polish` evaluates, at each trial configuration, the costs' value, gradient and
Gauss-Newton curvature and every constraint's ``linearisation`` rows; in Python that is
a score of pinocchio and numpy calls, most of a polishing step.
:class:`CompiledModel` computes the same on the kernel's joint tree
(:mod:`constraint_kernel`) in one call of :func:`_polish_jit.model`.  It applies to
problems the constraint kernel takes (with or without a pose target) whose costs are of
the classes ``constraints.registry`` lists (exactly: a subclass may compute another);
:func:`model_for` returns the Python model (:class:`polish.ResidualsModel`) otherwise.
The rows and costs are tested against the Python classes
(``test/test_polish_kernel.py``), and every answer is still verified outside.
:meth:`CompiledModel.polish` runs :func:`polish.polish`'s loop compiled as well
(:mod:`_polish_loop_jit`, tested step for step against the Python loop).
"""
from __future__ import annotations

import math
from typing import Optional, Tuple

import numpy as np

from ros2_ik.core.constraints import registry
from ros2_ik.core.costs import registry as cost_registry
from ros2_ik.core.runtime import direct_call
from ros2_ik.core.solvers import constraint_kernel, polish
from ros2_ik.core.solvers.budget import Budget

_JIT = None
_LOOP = None
#: daqp's default ``DAQPSettings`` (``_polish_loop_jit.default_settings``; 136 bytes in
#: daqp 0.11, room for more).
_DAQP_SETTINGS = None
#: :func:`polish.polish`'s constants, in the order of :func:`_polish_loop_jit.polish`.
_CONSTANTS = (polish.MAX_STEPS, polish.RADIUS, polish.MIN_RADIUS, polish.RELATIVE_DECREASE,
              polish.MU, polish.MU_FLOOR, polish.FEASIBLE_SLACK)
#: Whether :func:`warm_up` has run in this process.
_WARM = False
#: Compiled entries of ``polish_packed`` and ``cost_at_packed`` for :func:`_polish_args`'
#: and :func:`_cost_args`' types (set by :func:`warm_up`), :mod:`direct_call`.
_POLISH = None
_COST_AT = None


def jit():
    """Return the compiled module (imports numba and compiles or loads it), or None."""
    global _JIT
    if _JIT is None and constraint_kernel.lm() is not None:
        from ros2_ik.core.solvers import _polish_jit
        _JIT = _polish_jit
    return _JIT


def loop():
    """Return the compiled polishing loop's module (loads it the first time), or None."""
    global _LOOP, _DAQP_SETTINGS
    if _LOOP is None and jit() is not None:
        from ros2_ik.core.solvers import _polish_loop_jit
        settings = np.zeros(64, dtype=np.int64)
        _polish_loop_jit.default_settings(settings)
        _DAQP_SETTINGS, _LOOP = settings, _polish_loop_jit
    return _LOOP


def warm_up() -> bool:
    """Compile or load the model now (once per process); False when numba is absent."""
    global _WARM, _POLISH, _COST_AT
    if not _WARM and loop() is not None:
        costs = _packed_costs([0, 1], [0, 0], [0, 0],  # a posture and a position cost
                              [[0.0] * 8, [0.0] * 6 + np.eye(3).ravel().tolist()])
        cube, pose_rows = np.zeros(2, dtype=np.bool_), np.arange(6, dtype=np.intp)
        tiny = constraint_kernel.tiny_problem()
        _call(tiny, cube, pose_rows, _unpacked(costs), np.zeros(2), 13, 2)  # 3 + 4 rows, 6 pose
        _COST_AT = direct_call.entry_point(_JIT.cost_at_packed,
                                           *_cost_args(tiny, costs, np.zeros(2)))
        limits = (np.full(2, -1.0), np.full(2, 1.0))
        _POLISH = direct_call.entry_point(_LOOP.polish_packed, *_polish_args(
            tiny, cube, pose_rows, costs, 0.0, limits, np.zeros(2), 13, 0.0,
            constraint_kernel.Settings(0.01, 1e-6, 0.995, True), 3))
        _WARM = True
    return _WARM


def _call(c: constraint_kernel.Compiled, cube: np.ndarray, pose_rows: np.ndarray,
          costs: tuple, q: np.ndarray, k: int, n: int):
    """Run :func:`_polish_jit.model` at group vector ``q`` (``k`` QP rows, ``n`` tangent columns).

    Returns ``(feasible, cost, g, J, lower, upper, grad, H)``.
    """
    t = c.tree
    g, J, lo, hi, gm = np.empty(k), np.empty((k, n)), np.empty(k), np.empty(k), np.empty(k)
    grad, H = np.empty(n), np.empty((n, n))
    ok, cost = _JIT.model(t.parents, t.placements, t.kinds, t.axes, t.columns, c.fparent,
                          c.fplace, c.ctype, c.cfa, c.cfb, c.coff, c.params, cube, c.lo, c.hi,
                          c.margin, c.x_margin, c.pose, pose_rows, *costs, q,
                          polish.FEASIBLE_SLACK, g, J, lo, hi, gm, grad, H)
    return ok, cost, g, J, lo, hi, grad, H


def _polish(c: constraint_kernel.Compiled, cube: np.ndarray, pose_rows: np.ndarray,
            costs: tuple, constant: float, limits: tuple, q: np.ndarray, k: int,
            deadline: float, settings: constraint_kernel.Settings, iterations: int) -> int:
    """Run :func:`_polish_loop_jit.polish` on ``q`` (in place); returns the steps.

    ``costs``: packed, ``(kints, kparams)`` (:func:`_packed_costs`).
    """
    return (_POLISH or _LOOP.polish_packed)(*_polish_args(
        c, cube, pose_rows, costs, constant, limits, q, k, deadline, settings, iterations))


def _polish_args(c: constraint_kernel.Compiled, cube: np.ndarray, pose_rows: np.ndarray,
                 costs: tuple, constant: float, limits: tuple, q: np.ndarray, k: int,
                 deadline: float, settings: constraint_kernel.Settings,
                 iterations: int) -> tuple:
    """``polish_packed``'s arguments, each of the one type its compiled entry takes."""
    layout = c.layout
    return (layout.ints, layout.consts, c.values, cube, pose_rows, costs[0], costs[1],
            (float(settings.damping_scale), float(settings.bias),
             float(settings.stall_ratio), int(iterations), bool(settings.active_set)),
            limits[0], limits[1], q, int(k), _CONSTANTS + (float(constant),),
            float(deadline), _DAQP_SETTINGS)


def _cost_args(c: constraint_kernel.Compiled, costs: tuple, q: np.ndarray) -> tuple:
    """``cost_at_packed``'s arguments at group vector ``q`` (a float copy of it)."""
    layout = c.layout
    return layout.ints, layout.consts, costs[0], costs[1], np.array(q, dtype=float)


def _packed_costs(types: list, fa: list, fb: list, params: list) -> tuple:
    """Return the costs packed, ``(kints, kparams)``.

    ``kints``: their integers as :func:`_polish_jit.unpack_costs` reads them; ``kparams``:
    their parameters (``params``: one list per cost) in one array.
    """
    off, flat = [0], []
    for p in params:
        flat += p
        off.append(len(flat))
    return (np.array([len(types)] + types + fa + fb + off, dtype=np.int64),
            np.array(flat, dtype=float))


def _unpacked(costs: tuple) -> tuple:
    """Return ``(ktype, kfa, kfb, koff, kparams)`` of packed ``costs`` (views).

    The kernels' own :func:`_polish_jit.unpack_costs`, called from Python.
    """
    kints, kparams = costs
    return (*_JIT.unpack_costs(kints), kparams)


def model_for(state: constraint_kernel.KernelState):
    """Return the compiled model of ``state``'s problem, or the Python one."""
    compiled = CompiledModel.create(state) if loop() is not None else None
    return compiled if compiled is not None else polish.ResidualsModel(state.residuals)


#: A problem without a pose target has no pose rows (shared: it has no entry to change).
_NO_POSE_ROWS = np.zeros(0, dtype=np.intp)


class CompiledModel:
    """:class:`polish.ResidualsModel`'s interface, computed by :func:`_polish_jit.model`."""

    __slots__ = ("lower", "upper", "group", "_compiled", "_costs", "_cube", "_constant", "_k",
                 "_pose_rows")

    def __init__(self, state: constraint_kernel.KernelState, costs: tuple, cube: np.ndarray,
                 constant: float, k: int):
        """Use :meth:`create`."""
        pose = state.problem.pose
        # The search limits as the kernel takes them (writable: the compiled loop's type).
        self.lower, self.upper = state.lower, state.upper
        self.group = state.problem.group  # its integrate, difference, project: polish's
        self._compiled, self._costs, self._cube = state.compiled, costs, cube
        self._pose_rows = np.flatnonzero(pose.mask) if pose is not None else _NO_POSE_ROWS
        self._constant, self._k = constant, k + self._pose_rows.shape[0]

    @classmethod
    def create(cls, state: constraint_kernel.KernelState) -> Optional["CompiledModel"]:
        """Return the model of ``state``'s problem, or None (see the module docstring)."""
        problem, compiled = state.problem, state.compiled
        if compiled.frames is None:
            return None
        types, fa, fb, params, constant = [], [], [], [], 0.0
        for c in problem.costs:
            kind = cost_registry.cost_kind_of(c)
            if kind is None:
                return None
            encoded = kind.encode(c, problem.group)
            if encoded is None:
                return None
            p, extra = encoded
            a, b = kind.frames(c) or (-1, -1)  # the posture cost reads no frame
            types.append(kind.code)
            fa.append(compiled.frames[a] if a >= 0 else 0)
            fb.append(compiled.frames[b] if b >= 0 else 0)
            params.append(p)
            constant += extra
        rows = [registry.kind_of(c).polish_rows(c) for c in problem.row_constraints]
        return cls(state, _packed_costs(types, fa, fb, params),
                   np.array([r[1] for r in rows], dtype=np.bool_), constant,
                   sum(r[0] for r in rows))

    def evaluate(self, q: np.ndarray, restored: bool = False):
        """``(cost, polish.State)`` at group vector ``q``; ``(inf, None)`` when infeasible.

        ``restored``: ``q`` met the restoration's done test; feasibility is not tested.
        """
        ok, cost, state = self._run(q)
        if not ok and not restored:
            return math.inf, None
        return cost, state

    def cost(self, q: np.ndarray) -> float:
        """Sum of the costs at group vector ``q`` (:func:`_polish_jit.cost_at`)."""
        return (_COST_AT or _JIT.cost_at_packed)(
            *_cost_args(self._compiled, self._costs, q)) + self._constant

    def polish(self, q: np.ndarray, budget: Budget, settings: constraint_kernel.Settings,
               iterations: int) -> Tuple[np.ndarray, int]:
        """:func:`polish.polish` from feasible group vector ``q``, compiled: ``(q, steps)``.

        The restoration is the compiled attempt with ``settings``, at most ``iterations``
        iterations.  The loop stops at ``budget.deadline``; a cancel request is seen at
        the budget's next poll after it (the loop is at most ``polish.MAX_STEPS`` steps).
        """
        if budget.expired():  # the feasible answer in hand now, not a polished one too late
            return q, 0
        q = np.array(q, dtype=float)
        steps = _polish(self._compiled, self._cube, self._pose_rows, self._costs,
                        self._constant, (self.lower, self.upper), q, self._k,
                        budget.deadline, settings, int(iterations))
        return q, int(steps)

    def _run(self, q: np.ndarray):
        ok, cost, g, J, lo, hi, grad, H = _call(self._compiled, self._cube, self._pose_rows,
                                                _unpacked(self._costs),
                                                np.array(q, dtype=float), self._k,
                                                self.group.nv)
        return ok, cost + self._constant, polish.State(J, g, lo, hi, self._pose_rows.shape[0],
                                                       grad, H)
