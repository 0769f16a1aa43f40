"""Writes the compiled LM attempt loops (``_lm_jit.py``) from one skeleton and the row families.

The skeleton (``_lm_jit.py.in``) is :func:`lm_loop.run`'s iteration written once: evaluate
the rows, the convergence, stall and divergence tests, the damping, the step.  What a row
family puts in it (:class:`Family`) is defined once: its arguments and imports here, the
code that sets up its arrays, evaluates its rows and steps in ``_lm_jit.families.in``.
:func:`render` writes one function per family with the family's code between the
skeleton's lines.  numba then compiles each loop as one function: its rows' arrays are
the loop's own variables, as in a hand-written loop (a call into an inlined function per
hook costs each iteration its array arguments' boundary, docs/design.md).  The file is
generated, checked in and never edited by hand: after an edit here, in the skeleton or
in the hooks run ``make dispatch`` (``python -m ros2_ik.core.solvers.lm_source``);
``test/test_lm_loops.py`` fails while the checked-in file differs from :func:`render`'s.
"""
from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Dict, List, NamedTuple, Sequence, Tuple

from ros2_ik.core.solvers import dispatch_source

#: The generated file, beside this one.
TARGET = Path(__file__).resolve().parent / "_lm_jit.py"

#: The generated file's text with a family's parts left as ``{fields}`` (:class:`Family`):
#: the module's head, then the skeleton (from its ``@jit`` line on), once per family.
TEMPLATE = Path(__file__).resolve().parent / "_lm_jit.py.in"


class Family(NamedTuple):
    """A row family's part of the loop: code at column 0, each hook's names the loop's.

    ``setup`` runs once before the loop and binds ``last`` (the last iteration) and ``W``
    (the weight on ``E`` in the damping ``scale * (E * W) + bias``); ``evaluate`` computes
    the rows at ``q`` and binds ``E`` (their squared error) and ``done`` (converged);
    ``diverged`` is an expression on ``E`` and ``it`` ending the attempt unconverged;
    ``step`` moves ``q`` in place by the step damped by ``lam``, within the limits.
    """

    name: str
    doc: str
    args: str
    imports: Tuple[Tuple[str, str], ...]  # (module, name) pairs the hooks call
    setup: str
    evaluate: str
    diverged: str
    step: str


#: The row families' hook code (``setup``, ``evaluate``, ``step``), each under a line
#: ``## <family> <hook>`` (:func:`_hooks`).
HOOKS = Path(__file__).resolve().parent / "_lm_jit.families.in"


def _hooks(family: str) -> Dict[str, str]:
    """``family``'s sections of :data:`HOOKS` by hook name (code at column 0)."""
    sections: Dict[Tuple[str, str], List[str]] = {}
    lines: List[str] = []
    for line in HOOKS.read_text().splitlines():
        if line.startswith("## "):
            lines = sections.setdefault(tuple(line[3:].split()), [])
        else:
            lines.append(line)
    return {hook: "\n".join(body).strip("\n") for (name, hook), body in sections.items()
            if name == family}


_KINEMATICS = ("ros2_ik.core.kinematics.forward", "kinematics")

POSE = Family(
    name="pose_attempt",
    doc="""Run the Python pose loop's iteration (``log6``, ``PoseState``) in place on ``q``.

The chain's tree and tip (``parents`` ... ``fplace``, ``model.Chain``); ``Tti`` (4, 4)
``T_target_world``; ``sw`` the rows' weight; ``bounds`` the largest ``E`` at each
iteration 0..last.  The step: ``dq = J^T (J J^T + lam I)^-1 e`` (the 6x6 system), the
columns of joints on a limit that it pushes outward dropped and re-solved, ``q - dq``
clamped into the limits.""",
    args="parents, placements, kinds, axes, columns, fparent, fplace, q, Tti, lower, upper, "
         "bounded, sw, pos_tol2, ori_tol2, near2, scale, bias, stall, bounds, active_set",
    imports=(_KINEMATICS, ("ros2_ik.core.kinematics.forward", "to_local"),
             ("ros2_ik.core.kinematics.lie", "compose"),
             ("ros2_ik.core.kinematics.lie", "log3"), ("ros2_ik.core.kinematics.lie", "log6"),
             ("ros2_ik.core.solvers._chain_jit", "pose_step")),
    diverged="not E <= bounds[it]",  # NaN too
    **_hooks("pose"))

STACKED = Family(
    name="stacked_attempt_in",
    doc="""Run the stacked rows' loop in place on ``q`` with ``_stacked_jit.work``'s ``arrays``.

``pose``: empty without a pose target, else the parameters of
:func:`_constraint_jit.weighted_pose_rows`; its six rows stand before the excess rows,
always in the system.  Hinge rows outside their shrunk bounds ``lo``, ``hi``; the step:
``_stacked_jit.predicted`` (a predicted active set), re-solved without the joints it
pushes beyond a limit, integrated and clamped.  Allocates nothing (a polishing step
restores with it, several times per polish).""",
    args="arrays, parents, placements, kinds, axes, columns, fparent, fplace, ctype, cfa, "
         "cfb, coff, params, pose, q, lower, upper, lo, hi, margin, x_margin, scale, bias, "
         "stall, last, active_set",
    imports=(_KINEMATICS, ("ros2_ik.core.kinematics.configuration", "integrate"),
             ("ros2_ik.core.kinematics.configuration", "pushed_out"),
             ("ros2_ik.core.solvers._constraint_jit", "weighted_pose_rows"),
             ("ros2_ik.core.solvers._dispatch_jit", "rows"),
             ("ros2_ik.core.solvers._stacked_jit", "hinge"),
             ("ros2_ik.core.solvers._stacked_jit", "predicted"),
             ("ros2_ik.core.solvers.residuals", "DONE_FRACTION")),
    diverged="not math.isfinite(E)",
    **_hooks("stacked"))

#: The row families, one generated loop each: pose rows on a serial chain
#: (``chain_kernel``), the stacked pose and constraint rows (``constraint_kernel``).
FAMILIES = (POSE, STACKED)

_JIT = ("ros2_ik.core.kinematics.jit", "jit")


def render(families: Sequence[Family] = FAMILIES) -> str:
    """Return the source of ``_lm_jit.py``: the skeleton once per family."""
    text = TEMPLATE.read_text()
    at = text.index("\n@jit\n") + 1
    head, skeleton = text[:at], text[at:]
    loops = [skeleton.format(
        name=f.name, args=_arguments(f.name, f.args), doc=_docstring(f.doc),
        setup=_indented(f.setup, 4), evaluate=_indented(f.evaluate, 8),
        diverged=f.diverged, step=_indented(f.step, 8)) for f in families]
    imports = _imports([_JIT] + [i for f in families for i in f.imports])
    source = head.format(families=", ".join(f"``{f.name}``" for f in families),
                         imports=imports)
    return source + "\n\n".join(loops)


def _imports(pairs: List[Tuple[str, str]]) -> str:
    """``from module import a, b`` lines, by module, wrapped at 99 columns."""
    by: Dict[str, set] = {}
    for module, name in pairs:
        by.setdefault(module, set()).add(name)
    lines = []
    for module in sorted(by):
        head = f"from {module} import "
        body = ", ".join(sorted(by[module]))
        if len(head) + len(body) <= 99:
            lines.append(head + body)
        else:
            wrapped = textwrap.wrap(body, 99 - len(head) - 1)
            lines.append(head + "(" + f"\n{' ' * (len(head) + 1)}".join(wrapped) + ")")
    return "\n".join(lines) + "\n"


def _arguments(name: str, args: str) -> str:
    """``args`` wrapped under ``def name(``, room left for the line's closing comment."""
    indent, tail = len(f"def {name}("), len("):  # pragma: no cover - compiled")
    lines = textwrap.wrap(args, 99 - indent)
    if indent + len(lines[-1]) + tail > 99:
        lines[-1:] = textwrap.wrap(lines[-1], 99 - indent - tail)
    return f"\n{' ' * indent}".join(lines)


def _docstring(doc: str) -> str:
    """``doc`` with its lines after the first indented as a function's docstring's."""
    first, _, rest = doc.partition("\n")
    return first if not rest else first + "\n" + _indented(rest, 4) + "\n    "


def _indented(code: str, columns: int) -> str:
    """``code``'s lines indented by ``columns`` (blank lines left empty)."""
    return textwrap.indent(code, " " * columns)


def stale() -> List[str]:
    """Return ``[TARGET]`` when the checked-in loops differ from :func:`render`'s."""
    return dispatch_source.stale(TARGET, render())


def main() -> None:
    """Write :data:`TARGET` from the skeleton and the families (``make dispatch``)."""
    dispatch_source.write(TARGET, render())


if __name__ == "__main__":
    main()
