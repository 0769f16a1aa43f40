"""Writes the compiled dispatch (``_dispatch_jit.py``) from the type registry.

numba compiles a call only to a function it can name, so the dispatch is plain source: by
type code, one branch per type of ``constraints.registry.TYPES``
(``costs.registry.COST_TYPES`` for the costs) calling that type's own compiled functions,
filled into the text of ``_dispatch_jit.py.in`` (the loops, the same for every type). The
file is generated, checked in, and never edited by hand: after a type is added to the
registry (or its functions are renamed), run ``make dispatch`` (``python -m
ros2_ik.core.solvers.dispatch_source``); ``test/test_dispatch_source.py`` fails while the
checked-in file differs from :func:`render`'s.
"""
from __future__ import annotations

import sys
import textwrap
from pathlib import Path
from typing import Dict, List, Sequence, Tuple

#: The generated file, beside this one.
TARGET = Path(__file__).resolve().parent / "_dispatch_jit.py"

#: The generated file's text with the registry's parts left as ``{fields}`` (not Python:
#: the branches are filled in by :func:`render`).
TEMPLATE = Path(__file__).resolve().parent / "_dispatch_jit.py.in"


#: Names the generated module defines: a module imported under one of these is renamed.
_RESERVED = frozenset(("jit", "bound_rows", "rows", "bend", "physical_rows", "linearise",
                       "costs"))


class _Names:
    """The import lines and the qualified names of the functions the dispatch calls.

    A module is imported under its own name, or under its path below ``ros2_ik.core``
    (dots as underscores) when two modules share a name or it is one the dispatch defines.
    """

    def __init__(self):
        self.paths: Dict[str, str] = {}  # token: module path

    def __call__(self, function) -> str:
        """Return a token for ``module.name`` of compiled ``function`` (:meth:`resolve`).

        ``function``: a numba dispatcher or a plain function (without numba, or held by a
        kind since before numba loaded: ``runtime.compiled.load``); its Python function
        is found by identity in the module that defines it.
        """
        py = getattr(function, "py_func", function)
        module = sys.modules[py.__module__]
        names = [n for n, v in vars(module).items() if getattr(v, "py_func", v) is py]
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
        from ros2_ik.core.costs import registry as cost_registry
        types = registry.TYPES if types is None else types
        cost_types = cost_registry.COST_TYPES if cost_types is None else cost_types
    name = _Names()
    coded = [(code, k) for code, k in enumerate(types) if k.compiled]
    excess, physical, linear, bends = [], [], [], []
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
        if k.bend is not None:
            bends.append((code, cls, f"return {name(k.bend)}(oMf, Jf, fa, fb, prm, T, S33, "
                                     "p3, J3)"))
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
    source = name.resolve(TEMPLATE.read_text().format(
        type_names=_comment(k.cls.__name__ for _, k in coded),
        cost_names=_comment(k.cls.__name__ for k in cost_types),
        codes=_tuple(code for code, _ in coded),
        cost_codes=_tuple(range(len(cost_types))),
        excess_rows=_chain(excess, " " * 8),
        physical_rows="".join(line for code, cls, body in physical for line in (
            f"    if t == {code}:  # {cls}\n", f"        {body}\n")),
        linearise=linear_source,
        bend="".join(line for code, cls, body in bends for line in (
            f"    if t == {code}:  # {cls}\n", f"        {body}\n")),
        costs=_chain(cost_branches, " " * 8)))
    return "".join(_wrapped(line) for line in source.splitlines())


def _comment(names) -> str:
    """``names`` joined, wrapped as the lines of a ``#:`` comment."""
    return "\n#: ".join(textwrap.wrap(", ".join(names), 80))


def _wrapped(line: str) -> str:
    """``line`` and a newline; broken after its first ``(`` when longer than 99 columns."""
    if len(line) <= 99 or "(" not in line:
        return line + "\n"
    indent = len(line) - len(line.lstrip())
    head, args = line.split("(", 1)
    return f"{head}(\n{' ' * (indent + 4)}{args}\n"


def _tuple(values) -> str:
    values = list(values)
    return "(" + ", ".join(map(str, values)) + ("," if len(values) == 1 else "") + ")"


def stale(target: Path = TARGET, source: str = None) -> List[str]:
    """Return ``[target]`` when the checked-in ``target`` differs from ``source``.

    By default the dispatch and :func:`render`'s (a generated file of another generator:
    its own).
    """
    source = render() if source is None else source
    return [] if target.read_text() == source else [str(target)]


def write(target: Path, source: str) -> None:
    """Write the generated ``target`` as ``source`` unless it is already; say which."""
    if target.exists() and target.read_text() == source:
        print(f"{target}: up to date")
        return
    target.write_text(source)
    print(f"{target}: written")


def main() -> None:
    """Write :data:`TARGET` from the registry (``make dispatch``)."""
    write(TARGET, render())


if __name__ == "__main__":
    main()
