"""A type's form for the compiled kernels (:class:`Kind`, :class:`CostKind`) and row helpers.

Each constraint type's file defines its kernel functions with
:func:`ros2_ik.core.runtime.compiled.jit` and ends with its :class:`Kind`, listed in
:mod:`registry`; the compiled dispatch (``solvers/_dispatch_jit.py``) is generated from
that list (``make dispatch``).  The kinematics those functions are written with (a point
seen in a frame, relative rotations, ``log3``) are in :mod:`ros2_ik.core.kinematics`
(``relative``, ``lie``); the few row helpers they share are here.  Plain loops on floats,
as the kernels.
"""
from typing import Callable, NamedTuple, Optional, Tuple

from ros2_ik.core.runtime.compiled import jit


@jit
def row_from(gx, gy, gz, J, r0, g_row):  # pragma: no cover - compiled
    """``g_row = (gx, gy, gz) @ J[r0:r0 + 3]`` for ``J`` (k, n)."""
    for c in range(J.shape[1]):
        g_row[c] = gx * J[r0, c] + gy * J[r0 + 1, c] + gz * J[r0 + 2, c]


@jit
def bound_rows(lo, hi, margin, row, k, glo, ghi, gm, out):  # pragma: no cover - compiled
    """Copy ``k`` physical rows' shrunk bounds and margins from ``row`` to ``out``."""
    for i in range(k):
        glo[out + i], ghi[out + i], gm[out + i] = lo[row + i], hi[row + i], margin[row + i]


@jit
def cube_bounds(half, glo, ghi, gm, out):  # pragma: no cover - compiled
    """Bounds ``+-half`` of three cube rows (margin 0: not physical rows)."""
    for i in range(3):
        glo[out + i], ghi[out + i], gm[out + i] = -half, half, 0.0


class Kind(NamedTuple):
    """One constraint type as the kernels take it: its file's ``KIND``, in :mod:`registry`.

    ``cls``: the exact class (a subclass may compute other rows: the Python path runs).
    A type with no compiled functions gives ``Kind(cls)``: its problems run the Python path.
    A compiled type gives:

    * ``encode(c, tolerance)``: ``(model frame id A, model frame id B, parameters)`` as
      its compiled functions read them (``prm``);
    * ``rows``: compiled ``rows(oMf, Jf, fa, fb, prm, g, Jg, row, p3, J3) -> count``, its
      physical rows (``evaluate_physical``) into ``g``, ``Jg`` from ``row``; for an
      ``excess`` type ``rows(oMf, Jf, fa, fb, prm, xe, xJ, r0, S33) -> norm``, its three
      excess rows (``evaluate_excess``, always driven to zero) into ``xe``, ``xJ``;
    * ``linearise`` (optional): compiled ``linearise(oMf, Jf, fa, fb, prm, cube, lo, hi,
      margin, x_margin, row, out, g, J, glo, ghi, gm, S33, p3, J3) -> (rows read, rows
      written)``, polishing's rows (``linearisation``); without one, its physical rows
      within their shrunk bounds;
    * ``polish_rows(c)``: ``(rows written, cube rows added)`` of that linearisation
      (:func:`physical_rows` without one);
    * ``bend`` (optional, a one-row norm type): compiled ``bend(oMf, Jf, fa, fb, prm, T,
      S33, p3, J3) -> count``, the class's ``bend`` rows into ``T`` (3, n), how the row's
      vector turns; the LM step adds their curvature while the row is above its bound.

    ``code``: its type code in the generated dispatch, set by :mod:`registry` (its place
    in ``registry.TYPES``), never by the type's file; None: the Python path runs.
    """

    cls: type
    encode: Optional[Callable] = None
    polish_rows: Optional[Callable] = None
    rows: Optional[Callable] = None
    linearise: Optional[Callable] = None
    excess: bool = False
    bend: Optional[Callable] = None
    code: Optional[int] = None

    @property
    def compiled(self) -> bool:
        """Whether the type has compiled functions (the generated dispatch can call it)."""
        return self.rows is not None


def physical_rows(c) -> Tuple[int, bool]:
    """``polish_rows`` of a type whose linearisation is its physical rows alone."""
    return len(c.physical_lists()[0]), False


class CostKind(NamedTuple):
    """One cost type as the polishing kernel takes it, in :mod:`registry`.

    ``cls``: the exact class; ``frames(c)``: the model frame ids (A, B) its compiled value
    reads, or (); ``encode(c, group)``: ``(parameters, constant)``, the constant being the
    part of its value the group's joints do not move, or None when its compiled value
    does not take ``group`` (the Python polishing runs); ``value``: compiled ``value(oMf,
    Jf, fa, fb, prm, q, grad, H, S33, Sn) -> cost``, adding its gradient to ``grad`` and
    its Gauss-Newton curvature (when it has one) to ``H``.  ``code``: its type code in the
    generated dispatch, set by :mod:`registry` (its place in ``registry.COST_TYPES``).
    """

    cls: type
    frames: Callable
    encode: Callable
    value: Callable
    code: Optional[int] = None
