"""The core's import graph: one-way layers between its packages, no private reach-ins.

``core/``'s root holds only the API (issue 46); its packages import one way, from
:data:`LAYERS`' first entry up, and no package imports another one's private modules or
names (:func:`test_core_imports_run_one_way`).

No module of ``core/solvers/`` reaches into another one's private names (issue 39).

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
    ("_lm_jit", "_dispatch_jit"),
    # the type codes, packed layout, rows and pose rows of a problem
    ("_constraint_lm_jit", "_constraint_jit"), ("_lm_jit", "_constraint_jit"),
    ("_stacked_jit", "_constraint_jit"),
    ("_polish_jit", "_constraint_jit"), ("_polish_loop_jit", "_constraint_jit"),
    # the generated LM loops (lm_source): each row family's pieces, the packed entry
    ("_lm_jit", "_chain_jit"), ("_lm_jit", "_stacked_jit"),
    ("_constraint_lm_jit", "_lm_jit"), ("_constraint_lm_jit", "_stacked_jit"),
    # polishing's loop: restoration is the LM attempt, each step the polishing model
    ("_polish_loop_jit", "_lm_jit"), ("_polish_loop_jit", "_stacked_jit"),
    ("_polish_loop_jit", "_polish_jit"),
}


#: The root of ``core/``: the API only (issue 46); every other module is in a package.
ROOT_API = {"__init__", "errors", "pose", "problem", "result", "solve", "terms", "verify"}
#: The core's parts, lowest first: a module may import from its own part and from the
#: parts of lower entries only.  A part is a package of ``core/`` or a root module;
#: ``runtime.warm_up`` (``python -m``: compiles every kernel) stands on top of it all.
LAYERS = (
    {"errors", "result", "runtime"},  # plumbing: BLAS, the jit decorator, caches
    {"model"},  # robot, groups, frame names
    {"kinematics"},  # the kernels' kinematic model, FK, Lie helpers, frame quantities
    {"closed_form"},  # closed-form pose IK of the chains that have one
    {"collision"},  # collision geometry, scene, distances
    {"terms", "pose"},  # the term interfaces and the pose target
    {"constraints"},
    {"costs"},
    {"problem", "verify"},
    {"solvers", "servo"},
    {"solve"},
    {"path", "maps"},
    {"__init__", "warm_up"},
)
#: Imports against the layers or into another part's private modules, each with the
#: step of issue 46 that removes it.
EXCEPTIONS: set = set()  # stage 2 removed the last (constraints/compiled.py's load())


def _part(module: str) -> str:
    """The part of ``ros2_ik.core.<...>`` that :data:`LAYERS` ranks."""
    if module == "ros2_ik.core.runtime.warm_up":
        return "warm_up"
    parts = module.split(".")
    return parts[2] if len(parts) > 2 else "__init__"


def _rank(part: str) -> int:
    return next(i for i, layer in enumerate(LAYERS) if part in layer)


def _core_modules():
    """``(dotted name, path, is a package's __init__)`` of every core module."""
    for path in sorted(CORE.rglob("*.py")):
        rel = path.relative_to(CORE.parents[1]).with_suffix("").parts
        init = rel[-1] == "__init__"
        yield ".".join(rel[:-1] if init else rel), path, init


def core_imports(source: str, module: str, init: bool):
    """``(imported module, name or None)`` of every ``ros2_ik.core`` import in ``source``.

    A name that is a submodule (``from ros2_ik.core import errors``) counts as that
    module; imports inside functions count too.
    """
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            yield from ((a.name, None) for a in node.names if a.name.startswith("ros2_ik.core"))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")[:len(module.split(".")) - node.level + init]
                origin = ".".join(base + ([node.module] if node.module else []))
            else:
                origin = node.module or ""
            if origin.startswith("ros2_ik.core"):
                for a in node.names:
                    sub = f"{origin}.{a.name}"
                    is_module = (CORE.parents[1] / sub.replace(".", "/")).with_suffix(".py") \
                        .exists() or (CORE.parents[1] / sub.replace(".", "/")).is_dir()
                    yield (sub, None) if is_module else (origin, a.name)


def layering_violations(module: str, imports) -> List[str]:
    """The imports of ``module`` against :data:`LAYERS` or into another part's privates."""
    out = []
    here = _part(module)
    for target, name in imports:
        there = _part(target)
        if there == here or (module, target) in EXCEPTIONS:
            continue
        if _rank(there) >= _rank(here):
            out.append(f"{module} imports {target} (layer {there} is not below {here})")
        inner = target.split(".")[3:] + ([name] if name else [])
        if any(_private(p) for p in inner):
            out.append(f"{module} imports private {target}{'.' + name if name else ''}")
    return out


def test_the_core_root_holds_only_the_api():
    root = {p.stem for p in CORE.glob("*.py")}
    assert root == ROOT_API and len(root) <= 10


def test_every_core_part_has_a_layer():
    parts = {_part(m) for m, _, _ in _core_modules()}
    assert parts <= set().union(*LAYERS), parts - set().union(*LAYERS)


def test_the_layering_check_finds_each_kind_of_violation():
    imports = [("ros2_ik.core.solvers.base", None), ("ros2_ik.core.kinematics.frames", None),
               ("ros2_ik.core.constraints._base", None),
               ("ros2_ik.core.constraints.compiled", "_hidden"), ("ros2_ik.core.errors", None)]
    assert layering_violations("ros2_ik.core.costs.position", imports) == [
        "ros2_ik.core.costs.position imports ros2_ik.core.solvers.base "
        "(layer solvers is not below costs)",
        "ros2_ik.core.costs.position imports private ros2_ik.core.constraints._base",
        "ros2_ik.core.costs.position imports private "
        "ros2_ik.core.constraints.compiled._hidden"]
    # a part's own private modules, and lower parts' public ones, are fine
    assert layering_violations("ros2_ik.core.constraints.angle", [
        ("ros2_ik.core.constraints._base", None), ("ros2_ik.core.model.group", None)]) == []
    assert layering_violations("ros2_ik.core.maps.batch", [
        ("ros2_ik.core.path.options", None)]) == [
        "ros2_ik.core.maps.batch imports ros2_ik.core.path.options "
        "(layer path is not below maps)"]


def test_core_imports_run_one_way():
    """model <- kinematics <- terms (constraints, costs) <- solvers <- path, maps."""
    out = []
    for module, path, init in _core_modules():
        out += layering_violations(module, core_imports(path.read_text(), module, init))
    assert out == []


def test_the_listed_exceptions_still_exist():
    """An exception that no import needs any more is taken off the list."""
    found = set()
    for module, path, init in _core_modules():
        found |= {(module, t) for t, _ in core_imports(path.read_text(), module, init)}
    assert EXCEPTIONS <= found


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
    """``solve.py`` reaches the solvers through the registry, the base, the seed library.

    And :mod:`options` (the types of the options it builds) and :mod:`pose_request`: the
    lean path of a plain pose request (the seed's attempt).
    """
    tree = ast.parse((CORE / "solve.py").read_text())
    used = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(PACKAGE):
            used |= {f"{node.module}.{a.name}" if node.module == PACKAGE else node.module
                     for a in node.names}
    assert used <= {f"{PACKAGE}.registry", f"{PACKAGE}.base", f"{PACKAGE}.options",
                    f"{PACKAGE}.seed_library", f"{PACKAGE}.pose_request"}, used


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
    uses_jit = re.compile(r"^from ros2_ik\.core\.runtime\.compiled import jit", re.MULTILINE)
    compiled = {p.resolve() for p in CORE.rglob("*.py") if p.parent != SOLVERS
                and uses_jit.search(p.read_text())}
    from ros2_ik.core.closed_form import six_r
    sources = set(constraint_kernel.constraint_sources()) | set(jit.SOURCES) | {
        pathlib.Path(jit.__file__).resolve()} | set(six_r.SOURCES)  # jit: re-exports
    # Its kernel calls only its own file's compiled functions, and no other kernel calls
    # it: numba's check of the function's own file is enough.
    self_contained = {(CORE / "closed_form" / f"{name}.py").resolve()
                      for name in ("branches", "held")}
    # No other kernel calls it; its warm-up drops its cache when older than any file it
    # calls (its SOURCES).
    from ros2_ik.core.closed_form import inner
    own_check = {pathlib.Path(inner.__file__).resolve()}
    assert set(six_r.SOURCES) <= set(inner.SOURCES)
    assert compiled and compiled <= sources | self_contained | own_check
