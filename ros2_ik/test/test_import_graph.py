"""No module of ``core/solvers/`` reaches into another one's private names (issue 39).

The algorithms (lm, dls, bfgs, sqp) share code through public names of shared modules
(``pose_state``, ``scipy_solver``, ``residuals``, ...), never through another module's
``_name``; the driver (``solve.py``) warms a solver up through the solver's own
``warm_up`` hook, not by naming its kernels.  The compiled ``_*_jit`` modules import
public names of each other only along the edges listed in ``JIT_IMPORTS``.  Parsed with
:mod:`ast`.
"""
import ast
import pathlib
import re
from typing import List

import pytest

CORE = pathlib.Path(__file__).resolve().parents[1] / "ros2_ik" / "core"
SOLVERS = CORE / "solvers"
PACKAGE = "ros2_ik.core.solvers"
#: The algorithm modules: they may not import the package's private modules either
#: (the compiled ``_*_jit`` modules are reached through their public wrappers).
ALGORITHMS = {"lm", "dls", "bfgs", "sqp"}
#: Which compiled modules import (public) names of which others, and why: numba calls
#: a compiled function only through a direct reference, so a kernel's shared pieces are
#: imported by name.  A new edge is a new dependency between kernels: add it here.
#: (The one ``jit`` decorator, the kinematics and the Lie helpers every kernel imports
#: from :mod:`ros2_ik.core.kinematics`, outside this package.)
JIT_IMPORTS = {
    # each constraint type's rows, linearisation and measure, by type code (the types'
    # functions are in their own files under core/constraints/)
    ("_constraint_lm_jit", "_dispatch_jit"), ("_polish_jit", "_dispatch_jit"),
    ("_measure_jit", "_dispatch_jit"),
    # the type codes, packed layout, rows and pose rows of a problem
    ("_constraint_lm_jit", "_constraint_jit"), ("_measure_jit", "_constraint_jit"),
    ("_polish_jit", "_constraint_jit"), ("_polish_loop_jit", "_constraint_jit"),
    # polishing's loop: restoration is the LM attempt, each step the polishing model
    ("_polish_loop_jit", "_constraint_lm_jit"), ("_polish_loop_jit", "_polish_jit"),
}


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _modules() -> List[str]:
    return sorted(p.stem for p in SOLVERS.glob("*.py") if p.stem != "__init__")


def _absolute(node: ast.ImportFrom) -> str:
    """The module an ``ImportFrom`` names, relative imports resolved inside the package."""
    if not node.level:
        return node.module or ""
    base = PACKAGE.rsplit(".", node.level - 1)[0] if node.level > 1 else PACKAGE
    return f"{base}.{node.module}" if node.module else base


def violations(source: str, module: str, modules: List[str]) -> List[str]:
    """Private names of other ``core/solvers/`` modules that ``source`` (``module``) uses.

    ``from <solvers module> import _name``, ``<alias of a solvers module>._name``, and,
    for an algorithm module, any import of a private module of the package.
    """
    out: List[str] = []
    aliases = {}  # local name -> solvers module it is bound to
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            origin = _absolute(node)
            for alias in node.names:
                if origin == PACKAGE and alias.name in modules:  # a submodule
                    aliases[alias.asname or alias.name] = alias.name
                    if _private(alias.name) and module in ALGORITHMS:
                        out.append(f"{module}: imports private module {alias.name}")
                elif origin.startswith(PACKAGE + ".") and _private(alias.name):
                    other = origin[len(PACKAGE) + 1:]
                    if other != module:
                        out.append(f"{module}: imports {other}.{alias.name}")
                if origin.startswith(PACKAGE + ".") and module in ALGORITHMS and \
                        _private(origin[len(PACKAGE) + 1:].split(".")[0]):
                    out.append(f"{module}: imports from private module {origin}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith(PACKAGE + ".") and alias.asname:
                    aliases[alias.asname] = alias.name[len(PACKAGE) + 1:]
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                and node.value.id in aliases and _private(node.attr):
            out.append(f"{module}: uses {aliases[node.value.id]}.{node.attr}")
    return out


def test_the_checker_finds_each_kind_of_reach_in():
    modules = ["lm", "bfgs", "dls", "_chain_jit", "chain_kernel"]
    source = ("from ros2_ik.core.solvers.lm import LWA, _FastState\n"
              "from .bfgs import _Stop\n"
              "from ros2_ik.core.solvers import lm, _chain_jit\n"
              "from ros2_ik.core.solvers._chain_jit import jit\n"
              "x = lm._bounds\n")
    assert violations(source, "dls", modules) == [
        "dls: imports lm._FastState", "dls: imports bfgs._Stop",
        "dls: imports private module _chain_jit",
        "dls: imports from private module ros2_ik.core.solvers._chain_jit",
        "dls: uses lm._bounds"]
    # A wrapper may load its compiled module; a module may use its own private names.
    assert violations("from ros2_ik.core.solvers import _chain_jit\n"
                      "from ros2_ik.core.solvers._chain_jit import jit\n"
                      "from ros2_ik.core.solvers.chain_kernel import _JIT\n",
                      "chain_kernel", modules) == []


@pytest.mark.parametrize("module", _modules())
def test_no_solver_module_imports_another_ones_private_names(module):
    source = (SOLVERS / f"{module}.py").read_text()
    assert violations(source, module, _modules()) == []


def test_solve_names_no_solver_kernel():
    """``solve.py`` reaches the solvers through the registry and the base only."""
    tree = ast.parse((CORE / "solve.py").read_text())
    used = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(PACKAGE):
            used |= {f"{node.module}.{a.name}" if node.module == PACKAGE else node.module
                     for a in node.names}
    assert used <= {f"{PACKAGE}.registry", f"{PACKAGE}.base"}, used


def test_the_compiled_modules_depend_on_each_other_as_listed():
    edges = set()
    for module in _modules():
        if not (module.startswith("_") and module.endswith("_jit")):
            continue
        for node in ast.walk(ast.parse((SOLVERS / f"{module}.py").read_text())):
            if isinstance(node, ast.ImportFrom) and _absolute(node).startswith(PACKAGE + "._"):
                edges.add((module, _absolute(node)[len(PACKAGE) + 1:]))
    assert edges == JIT_IMPORTS


def test_every_compiled_module_is_a_source_of_the_stale_cache_check():
    """numba checks only a function's own file: the kernel drops caches older than these."""
    from ros2_ik.core.solvers import constraint_kernel
    compiled = {m for m in _modules() if m.startswith("_") and m.endswith("_jit")}
    assert compiled == set(constraint_kernel._JIT_SOURCES)


def test_every_core_file_with_compiled_functions_is_a_source_of_the_stale_cache_check():
    """An edit of a constraint's or cost's file drops the caches of the kernels calling it."""
    from ros2_ik.core.kinematics import jit
    from ros2_ik.core.solvers import constraint_kernel
    uses_jit = re.compile(r"^from (ros2_ik\.core|)\.compiled import jit", re.MULTILINE)
    compiled = {p.resolve() for p in CORE.rglob("*.py") if p.parent != SOLVERS
                and uses_jit.search(p.read_text())}
    sources = set(constraint_kernel.constraint_sources()) | set(jit.SOURCES) | {
        pathlib.Path(jit.__file__).resolve()}  # re-exports the decorator, compiles nothing
    # Its kernel calls only its own file's compiled functions, and no other kernel calls
    # it: numba's check of the function's own file is enough.
    self_contained = {(CORE / "closed_form" / "branches.py").resolve()}
    assert compiled and compiled <= sources | self_contained
