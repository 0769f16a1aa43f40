"""The constrained LM attempt compiled with numba, for frame-based constraints.

The Python loop on the stacked rows (:class:`active_set.StackedRows`) spends most of an
iteration in the interpreter (six to ten pinocchio and numpy calls per constraint, the
stacking, the predicted active set); a solve needs a few iterations.  This module runs
the same attempt in one compiled call (:mod:`_constraint_lm_jit`) on the model's own
joint tree: the group's joints are revolute (continuous ones as angles) or prismatic, or
a whole-body group's base (a free-flyer or planar root, stepped on its Lie group:
:mod:`ros2_ik.core.kinematics.configuration`), every other joint is folded into a fixed
placement at its locked position (any joint type), and the kernel computes the
placements and ``LOCAL_WORLD_ALIGNED`` Jacobians of the frames the constraints name (the
centre of mass too, as a frame: ``kinematics.model.COM_FRAME``).  Each constraint's
physical rows [m or rad] are those of its ``evaluate_physical`` (orientation bounds:
``evaluate_excess``), a pose target's those of ``Residuals.pose_rows``, tested against
the Python classes and finite differences (``test/test_constraint_kernel.py``).

:func:`compile_problem` returns None, and the Python loop runs, when numba is absent, a
constraint is of another type (a subclass, the minimum distance, joint bounds), a
group joint is of another kind, or a whole-body problem has costs or a free-flyer a yaw
range.  Every answer is still verified outside, on the full pinocchio model, by the
driver.
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import List, NamedTuple, Optional, Tuple

import numpy as np
import pinocchio as pin

from ros2_ik.core.constraints import registry
from ros2_ik.core.costs import registry as cost_registry
from ros2_ik.core.kinematics.model import COM_FRAME, COM_PARENT, FREEFLYER, Tree, pruned, \
    tree_of
from ros2_ik.core.problem import Problem
from ros2_ik.core.runtime import direct_call
from ros2_ik.core.runtime.per_object import PerObject
from ros2_ik.core.solvers import chain_kernel
from ros2_ik.core.solvers.residuals import Residuals
from ros2_ik.core.verify import ConstraintTolerance

#: Whether :func:`warm_up` has run in this process.
_WARM = False
_LM = None
#: ``attempt_packed``'s compiled entry for :func:`attempt`'s argument types (set by
#: :func:`warm_up`; the dispatcher until then), :mod:`direct_call`.
_ATTEMPT = None
#: The compiled modules of :mod:`ros2_ik.core.solvers`: the pose kernel's, then the
#: constraint kernels', each calling into the ones before it (and all into
#: :mod:`ros2_ik.core.kinematics` and the constraint files, :func:`constraint_sources`).
_JIT_SOURCES = ("_chain_jit", "_constraint_jit", "_dispatch_jit", "_stacked_jit",
                "_lm_jit", "_constraint_lm_jit", "_polish_jit", "_polish_loop_jit")


class Layout(NamedTuple):
    """The arrays of one problem shape, shared by the problems of that shape.

    Frames: ``fparent`` (f,) tree joint (-1: the world), ``fplace`` (f, 4, 4).
    Constraints: ``ctype``, ``cfa``, ``cfb`` (frame indices), ``coff`` (c + 1,) offsets
    into ``Compiled.params``.  ``frames``: the
    kernel frame index of each model frame id named (the costs' frames too, for
    polishing); ``fids``: the model frame ids in kernel order.  ``radians`` (m,): which
    row-constraint rows are in [rad] (the others in [m]), ``n_excess`` orientation bounds,
    ``n_pose`` pose parameters (65 or 0).
    ``ints``, ``consts``: all of it packed for the kernels
    (:func:`_constraint_jit.layout_views`).
    Only read, by the kernels as by Python.
    """

    tree: Tree
    fparent: np.ndarray
    fplace: np.ndarray
    ctype: np.ndarray
    cfa: np.ndarray
    cfb: np.ndarray
    coff: np.ndarray
    frames: dict
    fids: list
    radians: np.ndarray
    n_excess: int
    n_pose: int
    ints: np.ndarray
    consts: np.ndarray

    def with_tree(self, tree: Tree, fparent: np.ndarray) -> "Layout":
        """Return this layout on another tree (``fparent``: the frames' joints in it)."""
        return packed(tree, fparent, *self[2:12])


def packed(tree: Tree, fparent: np.ndarray, fplace: np.ndarray, ctype: np.ndarray,
           cfa: np.ndarray, cfb: np.ndarray, coff: np.ndarray, frames: dict, fids: list,
           radians: np.ndarray, n_excess: int, n_pose: int) -> Layout:
    """Return the :class:`Layout` of these arrays, with their packed ``ints`` and ``consts``.

    ``radians`` (m,): 1 where a row constraint's row is in [rad], 0 in [m].
    """
    header = [len(tree.parents), len(fparent), len(ctype), len(radians), n_excess,
              int(coff[-1]), n_pose]
    ints = np.concatenate((np.array(header, dtype=np.int64), tree.parents, tree.kinds,
                           tree.columns, fparent, ctype, cfa, cfb, coff,
                           radians)).astype(np.int64)
    consts = np.concatenate((tree.placements.ravel(), tree.axes.ravel(), fplace.ravel()))
    return Layout(tree, fparent, fplace, ctype, cfa, cfb, coff, frames, fids,
                  np.asarray(radians, dtype=bool), n_excess, n_pose, ints, consts.astype(float))


def _field(name: str) -> property:
    return property(lambda self: getattr(self.layout, name),
                    doc=f"The layout's ``{name}`` (:class:`Layout`).")


class Compiled:
    """One problem for the kernel: its shape's :class:`Layout` and its numbers.

    ``values``: every float of the problem in one array, as the kernels read it
    (:func:`_constraint_jit.value_views`): the margins in [rad] (``x_margin``, also the
    orientation bounds') and in [m], ``params`` (the constraints' parameters), the row
    constraints' physical bounds [m or rad] (m each), ``pose`` (65,): the pose target's
    frame index, ``T_target_world`` (16), ``R6`` (36), sqrt weights (6), inverse
    tolerances (6), empty without a target.
    ``lo``, ``hi``, ``margin`` (m,): the rows' bounds shrunk by their unit's margin (as
    ``Residuals.row_lower``).  Those are made when Python first reads one, by the
    kernels' own :func:`_constraint_jit.value_views` and :func:`_constraint_jit.shrunk`
    (the kernels take the packed arrays).
    """

    __slots__ = ("layout", "values", "_views")

    def __init__(self, layout: Layout, values: np.ndarray):
        """Keep ``layout`` and ``values`` (see the class docstring)."""
        self.layout, self.values, self._views = layout, values, None

    tree, fparent, fplace, ctype, cfa, cfb, coff, frames, fids, n_excess = map(
        _field, ("tree", "fparent", "fplace", "ctype", "cfa", "cfb", "coff", "frames",
                 "fids", "n_excess"))

    @property
    def n_rows(self) -> int:
        """Number of row-constraint rows ``m``."""
        return len(self.layout.radians)

    @property
    def x_margin(self) -> float:
        """The orientation bounds' margin [rad]."""
        return float(self.values[0])

    def _view(self, i: int) -> np.ndarray:
        views = self._views
        if views is None:  # the kernels' own unpacking and shrinking, called from Python
            ints, values = self.layout.ints, self.values
            params, _, _, pose, _, _ = _LM.value_views(ints, values)
            lo, hi, margin = _LM.shrunk(ints, values)
            views = self._views = (params, lo, hi, margin, pose)
        return views[i]

    params, lo, hi, margin, pose = (
        property(lambda self, i=i: self._view(i), doc=f"``values``' {name} (a view).")
        for i, name in enumerate(("params", "lo", "hi", "margin", "pose")))


def lm():
    """Return the compiled attempt's module (imports numba the first time), or None."""
    global _LM
    if _LM is None and chain_kernel.jit() is not None:
        from ros2_ik.core.kinematics.jit import drop_stale_cache  # imports numba
        here = Path(__file__).resolve().parent
        drop_stale_cache([here / f"{name}.py" for name in _JIT_SOURCES[1:]]
                         + constraint_sources())
        from ros2_ik.core.solvers import _constraint_lm_jit
        _LM = _constraint_lm_jit
    return _LM


def constraint_sources() -> List[Path]:
    """Files of the constraint and cost types with compiled functions, helpers, registry."""
    files = {Path(sys.modules[k.cls.__module__].__file__).resolve()
             for k in registry.kinds() + cost_registry.cost_kinds() if k.code is not None}
    return sorted(files | {Path(registry.__file__).resolve(),
                           Path(registry.__file__).resolve().parent / "compiled.py"})


def _frame_arrays(model: pin.Model, fids) -> Tuple[np.ndarray, np.ndarray]:
    """``fparent`` (f,) and ``fplace`` (f, 4, 4) of model frames ``fids``, in that order.

    :data:`~ros2_ik.core.kinematics.model.COM_FRAME` is the centre of mass.
    Once per problem shape (:func:`_layout` keeps the arrays).
    """
    frames = [None if fid == COM_FRAME else model.frames[fid] for fid in fids]  # copies
    return (np.array([COM_PARENT if f is None else f.parentJoint - 1 for f in frames],
                     dtype=np.int64),
            np.array([np.eye(4) if f is None else f.placement.homogeneous
                      for f in frames]).reshape(len(fids), 4, 4))


#: Per group: {shape key: Layout}, the arrays that depend on the problem's shape alone,
#: shared by the problems of that shape (read-only to the kernels).  A node meets few
#: shapes (the same frames and constraint types in each request); building them costs
#: several array constructions.
_LAYOUTS: PerObject = PerObject()
_MAX_LAYOUTS = 256


def _layout(group, key: tuple, extra_fids, constraints) -> Layout:
    """Return the shape's :class:`Layout`: ``key[0]`` ``(type, fid_a, fid_b, params)`` each.

    ``key``: ``(constraints' (type, fid_a, fid_b, number of parameters), extra_fids, pose
    parameters, rows)``, see :func:`compile_problem` (cached by it); ``constraints``: the
    problem's, whose units the row constraints' rows have (the same for every problem of
    the shape: the kernel takes exact classes, each with its units).
    """
    cache = _LAYOUTS.get(group)
    if cache is None:
        cache = _LAYOUTS[group] = {}
    layout = cache.get(key)
    if layout is None:
        shape = key[0]
        index: dict = {}
        for _, a, b, _ in shape:
            index.setdefault(a, len(index))
            index.setdefault(b, len(index))
        for fid in extra_fids:
            index.setdefault(fid, len(index))
        coff = [0]
        for e in shape:
            coff.append(coff[-1] + e[3])
        fparent, fplace = _frame_arrays(group.robot.model, list(index))
        tree, fparent = pruned(tree_of(group), fparent)
        layout = packed(tree, fparent, fplace,
                        np.array([e[0] for e in shape], dtype=np.int64),
                        np.array([index[e[1]] for e in shape], dtype=np.int64),
                        np.array([index[e[2]] for e in shape], dtype=np.int64),
                        np.array(coff, dtype=np.int64), index, list(index),
                        np.array([u == "rad" for c in constraints
                                  if not registry.kind_of(c).excess
                                  for u in c.units], dtype=np.int64),
                        sum(1 for c in constraints if registry.kind_of(c).excess), key[2])
        if len(layout.radians) != key[3]:
            raise ValueError("a constraint's units do not match its physical rows")
        if len(cache) >= _MAX_LAYOUTS:
            cache.clear()
        cache[key] = layout
    return layout


def cost_frames(cost) -> Tuple[int, ...]:
    """Model frame ids (A, B) of a cost the polishing kernel takes on frames, else ()."""
    kind = cost_registry.cost_kind_of(cost)
    return () if kind is None else kind.frames(cost)


def compile_problem(problem: Problem, tolerance: ConstraintTolerance) -> Optional[Compiled]:
    """Return the kernel's form of ``problem`` (constraints, a pose target or not), or None.

    A problem of a shape met before costs one array construction: its integer arrays are
    the shape's (shared, only read by the kernels), every float is in one array, sliced.
    """
    group = problem.group
    if lm() is None or not problem.constraints and (problem.pose is None or not group.has_base):
        return None  # without constraints only a base group's pose target: compiled here
    if not problem.row_constraints and problem.pose is None:  # joint bounds alone: no rows
        return None
    if tree_of(group) is None or group.has_base and (
            group.base_kind == "floating" and group.bounds.has_yaw):
        return None  # a free-flyer's yaw range: the Python paths
    # One pass: the shape (the layout's key) and the floats: the margins (as Residuals'),
    # each constraint's parameters, then the physical bounds (shrunk by the kernel).
    floats, shape, lower, upper = [0.25 * tolerance.rad, 0.25 * tolerance.m], [], [], []
    for c in problem.row_constraints:  # joint windows are the attempt's limits instead
        kind = registry.kind_of(c)
        if kind is None or kind.code is None:  # a type the kernels do not know
            return None
        fa, fb, params = kind.encode(c, tolerance)
        shape.append((kind.code, fa, fb, len(params)))
        floats += params
        if not kind.excess:
            below, above = c.physical_lists()
            lower += below
            upper += above
    pose = problem.pose
    extra = () if pose is None else (pose.frame_id,)
    if problem.costs:  # polishing's frames
        extra += tuple(fid for cost in problem.costs for fid in cost_frames(cost))
    key = (tuple(shape), extra, 0 if pose is None else 65, len(lower))
    layout = _layout(group, key, extra, problem.row_constraints)
    floats += lower
    floats += upper
    if pose is not None:
        floats.append(float(layout.frames[pose.frame_id]))
        floats += _pose_floats(pose)
    return Compiled(layout, np.array(floats, dtype=float))


_ZERO3 = [0.0, 0.0, 0.0]


def _pose_floats(pose) -> list:
    """``T_target_world`` (16), ``R6`` (36), sqrt weights (6), inverse tolerances (6).

    Row by row, as the arrays' ``ravel``; ``R6``'s blocks are ``T_target_world``'s
    rotation (``R_tT``, the inverse's exact transpose), written out: no array made.
    """
    H = pose.H_target_world.ravel().tolist()
    r0, r1, r2 = H[0:3], H[4:7], H[8:11]
    z = _ZERO3
    return (H + r0 + z + r1 + z + r2 + z + z + r0 + z + r1 + z + r2
            + pose.sqrt_w.tolist() + pose.inv_tol.tolist())


_SEARCH_LIMITS: PerObject = PerObject()


def search_limits(group) -> Tuple[np.ndarray, np.ndarray]:
    """Writable copies of ``group``'s search limits (a read-only array is another numba type).

    Shared by every solve of the group: the kernels only read them.
    """
    limits = _SEARCH_LIMITS.get(group)
    if limits is None:
        limits = _SEARCH_LIMITS[group] = (np.array(group.search_lower, dtype=float),
                                          np.array(group.search_upper, dtype=float))
    return limits


class KernelState:
    """A problem solved by the compiled attempt; Python residuals only for polishing costs."""

    __slots__ = ("compiled", "problem", "tolerance", "lower", "upper", "_residuals",
                 "polish_model")

    def __init__(self, compiled: Compiled, problem: Problem, tolerance: ConstraintTolerance):
        """Keep the problem; the search limits are :func:`search_limits`' (only read).

        A problem with joint windows (:attr:`Problem.folded`) is searched inside them
        (:attr:`Problem.search_bounds`).
        """
        self.compiled, self.problem, self.tolerance = compiled, problem, tolerance
        self.lower, self.upper = problem.search_bounds if problem.folded \
            else search_limits(problem.group)
        self._residuals: Optional[Residuals] = None
        #: Polishing's model of the problem, made when first needed (:mod:`attempts`).
        self.polish_model = None

    @property
    def residuals(self) -> Residuals:
        """Stacked Python residuals on the full model (built when first needed)."""
        if self._residuals is None:
            self._residuals = Residuals(self.problem, exact=False, tolerance=self.tolerance)
        return self._residuals


class Settings(NamedTuple):
    """The attempt's constants (those of ``LevenbergMarquardt``)."""

    damping_scale: float
    bias: float
    stall_ratio: float
    active_set: bool


def attempt(compiled: Compiled, q0: np.ndarray, lower: np.ndarray, upper: np.ndarray,
            settings: Settings, max_iterations: int):
    """One compiled attempt from group vector ``q0``: ``(q, iterations, converged, E)``.

    ``lower``/``upper``: the search limits (+-inf where a joint wraps), writable arrays.
    """
    q = np.array(q0, dtype=float)  # a fresh C-contiguous copy: the attempt writes it
    it, done, E = (_ATTEMPT or _LM.attempt_packed)(*_attempt_args(
        compiled, q, lower, upper, settings, max_iterations))
    return q, int(it), bool(done), float(E)


def _attempt_args(compiled: Compiled, q: np.ndarray, lower: np.ndarray, upper: np.ndarray,
                  settings: Settings, max_iterations: int) -> tuple:
    """``attempt_packed``'s arguments, each of the one type its compiled entry takes."""
    layout = compiled.layout
    return (layout.ints, layout.consts, compiled.values, q, lower, upper,
            float(settings.damping_scale), float(settings.bias), float(settings.stall_ratio),
            int(max_iterations), bool(settings.active_set))


def evaluate(compiled: Compiled, q: np.ndarray):
    """Rows at group vector ``q``: ``(g (m,), J (m, nv), always (k,), its J, largest)``.

    ``g`` in the order of the row constraints; ``always``: the weighted pose rows (6, with
    a target) then the orientation bounds' excesses (3 each), ``largest`` their largest
    excess norm [rad].
    """
    q = np.array(q, dtype=float)
    t = compiled.tree
    n = q.shape[0] - (t.kinds.shape[0] and t.kinds[0] == FREEFLYER)  # the tangent's size
    g, J = np.empty(compiled.n_rows), np.empty((compiled.n_rows, n))
    k = 3 * compiled.n_excess + (6 if compiled.pose.shape[0] else 0)
    xe, xJ = np.empty(k), np.empty((k, n))
    worst = _LM.evaluate(t.parents, t.placements, t.kinds, t.axes, t.columns,
                         compiled.fparent, compiled.fplace, compiled.ctype, compiled.cfa,
                         compiled.cfb, compiled.coff, compiled.params, compiled.pose, q, g, J,
                         xe, xJ)
    return g, J, xe, xJ, float(worst)


def warm_up() -> bool:
    """Compile or load the kernel now (once per process); False when numba is absent."""
    global _WARM
    if _WARM:
        return True
    if lm() is None:
        return False
    global _ATTEMPT
    compiled = tiny_problem()
    _ATTEMPT = direct_call.entry_point(_LM.attempt_packed, *_attempt_args(
        compiled, np.zeros(2), np.full(2, -1.0), np.full(2, 1.0),
        Settings(0.01, 1e-6, 0.995, True), 3))
    evaluate(compiled, np.zeros(2))
    _WARM = True
    return True


def tiny_problem() -> Compiled:
    """Return a two-joint problem with a position and an orientation bound (warm-ups)."""
    tree = Tree(np.array([-1, 0]), np.repeat(np.eye(4)[None], 2, axis=0),
                np.array([1, 2]), np.array([[0.0, 0, 1], [1, 0, 0]]), np.array([0, 1]))
    layout = packed(tree, np.array([1]), np.eye(4)[None], np.array([0, 1]), np.array([0, 0]),
                    np.array([0, 0]), np.array([0, 19, 38]), {0: 0}, [0],
                    np.zeros(3, dtype=np.int64), 1, 65)
    return Compiled(layout, np.concatenate((
        [1e-5, 1e-5], np.eye(4).ravel(), np.zeros(3), np.eye(3).ravel(), np.eye(3).ravel(),
        [0.1], np.full(3, -1.0), np.full(3, 1.0), [0.0], np.eye(4).ravel(),
        np.eye(6).ravel(), np.ones(12))))
