"""Writes the compiled dispatch (``_dispatch_jit.py``) from the type registry.

numba compiles a call only to a function it can name, so the dispatch is plain source: by
type code, one branch per type of ``constraints.registry.TYPES`` (``COST_TYPES`` for the
costs) calling that type's own compiled functions.  The file is generated, checked in,
and never edited by hand: after a type is added to the registry (or its functions are
renamed), run ``make dispatch`` (``python -m ros2_ik.core.solvers.dispatch_source``);
``test/test_dispatch_source.py`` fails while the checked-in file differs from
:func:`render`'s.
"""
from __future__ import annotations

import sys
import textwrap
from pathlib import Path
from typing import Dict, List, Sequence, Tuple

#: The generated file, beside this one.
TARGET = Path(__file__).resolve().parent / "_dispatch_jit.py"

_HEADER = '''\
"""The compiled dispatch: each constraint's rows, linearisation and measure, each cost's value.

GENERATED from ``constraints.registry`` by ``make dispatch`` (:mod:`dispatch_source`): do
not edit.  By type code (a type's place in ``registry.TYPES`` / ``COST_TYPES``), every
branch calls the functions of the type's own file; nothing of a type's maths is here.  An
if/elif chain over the type codes (numba's calls through first-class functions are
slower).  A code no branch names raises ValueError (:data:`UNKNOWN_TYPE`) in :func:`rows`
and :func:`linearise`, and measures NaN (never accepted) in :func:`measure`:
``test/test_constraint_type_codes.py``.  A type registered without compiled functions
never reaches here: its problems run the Python path.
"""
import math

import numpy as np

from ros2_ik.core.compiled import jit
from ros2_ik.core.constraints._compiled import bound_rows
<imports>

#: Every constraint type code a branch below names, by code:
#: {type_names}.
CODES = {codes}
#: Every cost type code a branch of :func:`costs` names, by code:
#: {cost_names}.
COST_CODES = {cost_codes}
#: The error :func:`costs` raises on a cost type code it has no formula for.
UNKNOWN_COST = "unknown cost type code in a compiled problem"
#: The error a kernel raises on a type code it has no formula for (an encoder and these
#: codes disagree): never another type's rows in its place.
UNKNOWN_TYPE = "unknown constraint type code in a compiled problem"
#: Unit of each type's violation (index = type code): 1 radians, 0 metres (the class's).
RADIANS = np.array({radians}, dtype=np.int64)


@jit
def rows(ctype, cfa, cfb, coff, params, oMf, Jf, g, Jg, xe, xJ, S33,
         J3):  # pragma: no cover - compiled
    """Every constraint's physical rows into ``g`` (m,), ``Jg`` (m, n); excesses into ``xe``.

    Row constraints fill ``g`` in order; excess types (orientation bounds) fill ``xe`` (3
    each), ``xJ``.  Returns the largest excess norm [rad] (0 without excess types); raises
    ValueError (:data:`UNKNOWN_TYPE`) on a type code it does not know.  ``S33`` (6, 3, 3)
    and ``J3`` (3, n) are scratch (``_constraint_jit.scratch``): an iteration allocates
    nothing.
    """
    p3 = S33[5, 1]
    row, xrow, worst = 0, 0, 0.0
    for i in range(ctype.shape[0]):
        t, fa, fb, prm = ctype[i], cfa[i], cfb[i], params[coff[i]:coff[i + 1]]
{excess_rows}        row += physical_rows(t, oMf, Jf, fa, fb, prm, g, Jg, row, p3, J3)
    return worst


@jit(inline="always")  # a step of rows and linearise: no call of its own
def physical_rows(t, oMf, Jf, fa, fb, prm, g, Jg, row, p3, J3):  # pragma: no cover - compiled
    """Rows of a row constraint of type ``t`` into ``g``, ``Jg`` from ``row``; their count.

    Every type but the excess types (:func:`rows`).  Raises ValueError
    (:data:`UNKNOWN_TYPE`) on a type code it does not know.
    """
{physical_rows}    raise ValueError(UNKNOWN_TYPE)


@jit
def linearise(ctype, cfa, cfb, coff, params, cube, lo, hi, margin, x_margin, oMf, Jf,
              g, J, glo, ghi, gm, S33, Sn):  # pragma: no cover - compiled
    """Every constraint's linearisation rows into ``g``, ``J``, bounds ``glo``, ``ghi``.

    ``gm``: each row's margin [m or rad] when it is a physical row (its constraint's
    ``evaluate_physical``, ``polish._feasible``'s rows), 0 for the cube rows.  ``cube``
    (c,): whether an angle bound adds its cube rows.  Kinematics must be computed.
    ``S33``, ``Sn``: ``_polish_jit.work``'s scratch.  Raises ValueError
    (:data:`UNKNOWN_TYPE`) on a type code it does not know.
    """
    p3, J3 = S33[5, 2], Sn[0]
    row, out = 0, 0
    for i in range(ctype.shape[0]):
        t, fa, fb, prm, c = ctype[i], cfa[i], cfb[i], params[coff[i]:coff[i + 1]], cube[i]
{linearise}        row, out = row + k, out + m


@jit
def within(ctype, amounts, tol_m, tol_rad):  # pragma: no cover - compiled
    """Return True when every amount is within its unit's tolerance (NaN is not)."""
    for i in range(ctype.shape[0]):
        if amounts[i] != amounts[i]:  # NaN (an unknown code's too: no unit to look up)
            return False
        tol = tol_rad if RADIANS[ctype[i]] == 1 else tol_m
        if not amounts[i] <= tol:
            return False
    return True


@jit
def measure(ctype, cfa, cfb, coff, params, poff, phys, W, out, tol_m,
            tol_rad):  # pragma: no cover - compiled
    """Each constraint's violation into ``out`` (c,) [m or rad, ``RADIANS``]; NaN: unknown.

    ``W`` (f, 4, 4): world placements of the kernel's frames; ``phys[poff[i]:poff[i+1]]``:
    constraint ``i``'s physical bounds (its kind's ``measure_bounds``).  Returns True
    when every violation is within the tolerance of its unit [m or rad].
    """
    R = np.empty((3, 3, 3))
    for i in range(ctype.shape[0]):
        t, Wa, Wb = ctype[i], W[cfa[i]], W[cfb[i]]
        prm, ph = params[coff[i]:coff[i + 1]], phys[poff[i]:poff[i + 1]]
{measure}        else:  # a type this check does not know: never accepted
            out[i] = math.nan
    return within(ctype, out, tol_m, tol_rad)


@jit
def costs(ktype, kfa, kfb, koff, kparams, oMf, Jf, q, grad, H, S33,
          Sn):  # pragma: no cover - compiled
    """Costs at group vector ``q``: returns the sum; gradient ``grad`` (n,), curvature ``H``.

    Each cost's value from its type's file; a value adds its Gauss-Newton curvature (when
    it has one) to ``H``.  ``S33``, ``Sn``: ``_polish_jit.work``'s scratch.  Raises
    ValueError (:data:`UNKNOWN_COST`) on a cost type code it does not know.
    """
    grad[:] = 0.0
    H[:, :] = 0.0
    total = 0.0
    for i in range(ktype.shape[0]):
        t, fa, fb, prm = ktype[i], kfa[i], kfb[i], kparams[koff[i]:koff[i + 1]]
{costs}        else:
            raise ValueError(UNKNOWN_COST)
    return total
'''


#: Names the generated module defines: a module imported under one of these is renamed.
_RESERVED = frozenset(("math", "np", "jit", "bound_rows", "rows", "physical_rows",
                       "linearise", "within", "measure", "costs"))


class _Names:
    """The import lines and the qualified names of the functions the dispatch calls.

    A module is imported under its own name, or under its path below ``ros2_ik.core``
    (dots as underscores) when two modules share a name or it is one the dispatch defines.
    """

    def __init__(self):
        self.paths: Dict[str, str] = {}  # token: module path

    def __call__(self, function) -> str:
        """Return a token for ``module.name`` of compiled ``function`` (:meth:`resolve`).

        ``function``: a numba dispatcher or, without numba, a plain function; found by
        identity in the module that defines it.
        """
        py = getattr(function, "py_func", function)
        module = sys.modules[py.__module__]
        names = [n for n, v in vars(module).items() if v is function]
        if not names:
            raise ValueError(f"{py.__qualname__} is not a name of {module.__name__}")
        token = f"<{module.__name__}>"
        self.paths[token] = module.__name__
        return f"{token}.{py.__name__ if py.__name__ in names else sorted(names)[0]}"

    def resolve(self, source: str) -> str:
        """Return ``source`` with its tokens replaced and the import lines put in."""
        leaves = [p.rsplit(".", 1)[1] for p in self.paths.values()]
        lines = []
        for token, path in sorted(self.paths.items(), key=lambda item: item[1]):
            package, leaf = path.rsplit(".", 1)
            alias = leaf if leaves.count(leaf) == 1 else \
                path.replace("ros2_ik.core.", "", 1).replace(".", "_")
            if alias in _RESERVED:
                alias += "_module"
            lines.append(f"from {package} import {leaf}" + (
                "" if leaf == alias else f" as {alias}"))
            source = source.replace(token, alias)
        return source.replace("<imports>", "\n".join(lines))


def _chain(branches: Sequence[Tuple[int, str, str]], indent: str, first: str = "if") -> str:
    """``if t == code:  # class`` then the body, ``elif`` for the others."""
    out, word = [], first
    for code, cls, body in branches:
        out.append(f"{indent}{word} t == {code}:  # {cls}\n")
        out += [f"{indent}    {line}\n" for line in body.split("\n")]
        word = "elif"
    return "".join(out)


def render(types: Sequence = None, cost_types: Sequence = None) -> str:
    """Return the source of ``_dispatch_jit.py`` for these kinds (default: the registry's).

    ``types``: constraint kinds by code (``registry.TYPES``; a kind without compiled
    functions gets no branch); ``cost_types``: cost kinds by code.
    """
    if types is None or cost_types is None:
        from ros2_ik.core.constraints import registry
        types = registry.TYPES if types is None else types
        cost_types = registry.COST_TYPES if cost_types is None else cost_types
    name = _Names()
    coded = [(code, k) for code, k in enumerate(types) if k.compiled]
    excess, physical, linear, measured = [], [], [], []
    for code, k in coded:
        cls = k.cls.__name__
        if k.excess:
            if k.linearise is None:
                raise ValueError(f"{cls}: an excess type needs its own linearise")
            excess.append((code, cls, f"worst = max(worst, {name(k.rows)}(oMf, Jf, fa, fb, "
                                      "prm, xe, xJ, xrow, S33))\nxrow += 3\ncontinue"))
        else:
            physical.append((code, cls, f"return {name(k.rows)}(oMf, Jf, fa, fb, prm, g, Jg, "
                                        "row, p3, J3)"))
        if k.linearise is not None:
            linear.append((code, cls, f"k, m = {name(k.linearise)}(\n    oMf, Jf, fa, fb, "
                                      "prm, c, lo, hi, margin, x_margin, row, out, g, J, glo, "
                                      "ghi,\n    gm, S33, p3, J3)"))
        measured.append((code, cls, f"out[i] = {name(k.measure)}(Wa, Wb, prm, ph, R)"))
    linear_source = _chain(linear, " " * 8) + (
        "        else:  # the others' linearisation: their physical rows within the shrunk "
        "bounds\n"
        "            k = physical_rows(t, oMf, Jf, fa, fb, prm, g, J, out, p3, J3)\n"
        "            bound_rows(lo, hi, margin, row, k, glo, ghi, gm, out)\n"
        "            m = k\n") if linear else (
        "        k = physical_rows(t, oMf, Jf, fa, fb, prm, g, J, out, p3, J3)\n"
        "        bound_rows(lo, hi, margin, row, k, glo, ghi, gm, out)\n        m = k\n")
    cost_branches = [(code, k.cls.__name__, f"total += {name(k.value)}(oMf, Jf, fa, fb, prm, "
                                            "q, grad, H, S33, Sn)")
                     for code, k in enumerate(cost_types)]
    units = [0] * len(types)
    for code, k in coded:
        units[code] = int(getattr(k.cls, "unit", "m") == "rad")
    return name.resolve(_HEADER.format(
        type_names=_comment(k.cls.__name__ for _, k in coded),
        cost_names=_comment(k.cls.__name__ for k in cost_types),
        codes=_tuple(code for code, _ in coded),
        cost_codes=_tuple(range(len(cost_types))),
        radians=str(units),
        excess_rows=_chain(excess, " " * 8),
        physical_rows="".join(line for code, cls, body in physical for line in (
            f"    if t == {code}:  # {cls}\n", f"        {body}\n")),
        linearise=linear_source,
        measure=_chain(measured, " " * 8),
        costs=_chain(cost_branches, " " * 8)))


def _comment(names) -> str:
    """``names`` joined, wrapped as the lines of a ``#:`` comment."""
    return "\n#: ".join(textwrap.wrap(", ".join(names), 80))


def _tuple(values) -> str:
    values = list(values)
    return "(" + ", ".join(map(str, values)) + ("," if len(values) == 1 else "") + ")"


def stale() -> List[str]:
    """Return ``[TARGET]`` when the checked-in dispatch differs from :func:`render`'s."""
    return [] if TARGET.read_text() == render() else [str(TARGET)]


def main() -> None:
    """Write :data:`TARGET` from the registry (``make dispatch``)."""
    source = render()
    if TARGET.exists() and TARGET.read_text() == source:
        print(f"{TARGET}: up to date")
        return
    TARGET.write_text(source)
    print(f"{TARGET}: written")


if __name__ == "__main__":
    main()
