"""The compiled dispatch is generated from the type registry, and the checked-in file is not stale.

``solvers/_dispatch_jit.py`` is written by ``make dispatch`` (``dispatch_source``) from
``constraints.registry.TYPES`` and ``COST_TYPES``: a type's code is its place in the list,
each branch calls the functions its kind names.  These tests fail when someone adds a
type (or renames its functions) and does not regenerate, and show that a kind appended
to the list gets its own branches in every function of the dispatch.
"""
import ast

from ros2_ik.core.constraints import position, registry
from ros2_ik.core.constraints.compiled import Kind
from ros2_ik.core.costs import posture
from ros2_ik.core.costs import registry as cost_registry
from ros2_ik.core.solvers import dispatch_source


def test_the_checked_in_dispatch_is_the_registrys():
    assert dispatch_source.stale() == [], "run `make dispatch` and commit the result"


def test_codes_are_places_in_the_registry():
    for code, kind in enumerate(registry.TYPES):
        assert {k.cls: k.code for k in registry.kinds()}[kind.cls] == code
    codes = [k.code for k in cost_registry.cost_kinds()]
    assert codes == list(range(len(cost_registry.COST_TYPES)))


def _calls(source: str, function: str) -> set:
    """The dotted names ``function`` (a def of ``source``) calls."""
    tree = ast.parse(source)
    body = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == function)
    return {f"{c.func.value.id}.{c.func.attr}" for c in ast.walk(body)
            if isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute)
            and isinstance(c.func.value, ast.Name)}


def test_an_appended_type_gets_its_branches():
    new = Kind(type("Height", (), {"unit": "m"}), position._encode, None, position.rows,
               linearise=None)
    source = dispatch_source.render(registry.TYPES + (new,), cost_registry.COST_TYPES)
    code = len(registry.TYPES)
    assert f"if t == {code}:  # Height" in source
    assert "constraints_position.rows" in _calls(source, "physical_rows")
    assert f"CODES = {tuple(range(code + 1))}" in source
    compile(source, "_dispatch_jit.py", "exec")


def test_modules_of_one_name_are_told_apart():
    source = dispatch_source.render(registry.TYPES, cost_registry.COST_TYPES)
    assert "import position as constraints_position" in source  # two modules called so
    assert "import position as costs_position" in source
    assert "posture.value" in _calls(source, "costs")
    assert posture.POSTURE in cost_registry.COST_TYPES
