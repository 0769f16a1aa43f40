"""Calling a numba-compiled function without numba's per-call type dispatch.

A dispatcher's call works out the type of every argument, then looks up the compiled
version for them.  With the caches cold (a request to an idle node, or after another
solver ran) that costs several times the compiled version's own entry (the figures:
docs/design.md).  The hot calls of a constraint request (the attempt, the check) and a
pose request's compiled attempt (:mod:`chain_kernel`) have arguments the solvers build
themselves, always of the same types: :func:`entry_point` returns that version's entry
once, for them.
"""
from __future__ import annotations

from typing import Any, Callable, Tuple


def signature(dispatcher: Any, args: tuple) -> Tuple[Any, ...]:
    """Return the numba types ``dispatcher`` sees for ``args`` (dtype, dimensions, layout)."""
    return tuple(dispatcher.typeof_pyval(a) for a in args)


def entry_point(dispatcher: Any, *example: Any) -> Callable:
    """Return the compiled version of ``dispatcher`` for the argument types of ``example``.

    Calls ``dispatcher(*example)`` first (it compiles or loads that version).  The
    returned function unboxes its arguments as that signature says and checks nothing:
    call it only with arguments of exactly those types, as made where ``example`` was
    (``test/test_direct_call.py`` compares the types at each call site).
    """
    dispatcher(*example)
    return dispatcher.overloads[signature(dispatcher, example)].entry_point
