"""The one ``jit`` decorator of the numba kernels, importable with numba or without.

Each constraint type's file holds its compiled rows and linearisation
(:mod:`ros2_ik.core.constraints.registry`) beside its Python class, so the decorator
must not need the solver package (which imports the constraints).  Without numba the
decorated functions stay plain Python: the kernels never run then
(``chain_kernel.available``), and the Python classes need none of them.

numba is imported when a kernel is first needed, not with the core (it is most of
``import ros2_ik.core``'s time otherwise): a function decorated before :func:`load`
stays plain Python until then, and :func:`load` binds its compiled form in its place,
in every core module that holds it.
"""
import importlib.util
import sys
import threading
from typing import Callable, List, Optional, Tuple

#: Functions decorated before numba was loaded, with their ``inline`` option.
_DEFERRED: List[Tuple[Callable, str]] = []
_LOCK = threading.Lock()
_numba = None


def jit(function=None, *, inline: str = "never"):
    """Compile ``function`` with IEEE division (``error_model="numpy"``), as numpy divides.

    numba's default ("python") raises ZeroDivisionError on a zero divisor: a NaN reaching
    a kernel (an attempt diverging on a target 1e300 m away) then made ``log3`` divide by
    a zero norm and ``solve()`` raise instead of ending the attempt (found by
    ``make fuzz``).  With NaN and inf the attempt ends unconverged and the driver moves on.
    ``@jit(inline="always")``: numba inlines the function into its callers (its array
    arguments then cost no call, ``_constraint_jit.kinematics``).  Cached on disk
    (``cache=True``).  Before :func:`load` the function is returned as it is, and
    compiled by :func:`load`.
    """
    def decorate(f: Callable) -> Callable:
        with _LOCK:
            if _numba is None:
                _DEFERRED.append((f, inline))
                return f
        return _compile(f, inline)

    return decorate if function is None else decorate(function)


def _compile(f: Callable, inline: str):
    return _numba.njit(cache=True, nogil=True, error_model="numpy", inline=inline)(f)


def available() -> bool:
    """Return True when numba is installed (the kernels can run)."""
    return _numba is not None or importlib.util.find_spec("numba") is not None


def load() -> Optional[object]:
    """Import numba and compile every function decorated so far; the numba module, or None.

    Each deferred function's compiled form (a lazy numba dispatcher: it compiles or loads
    from the cache on its first call) replaces the plain function wherever a loaded
    ``ros2_ik.core`` module holds it (its own module, and any that imported it by name),
    so that a kernel compiled later finds the compiled function.  Without numba: None,
    and the functions stay plain Python.  Call it before importing a kernel module.
    """
    global _numba
    if _numba is not None or not available():
        return _numba
    import numba
    with _LOCK:
        if _numba is None:
            _numba = numba
            compiled = {id(f): (f, _compile(f, inline)) for f, inline in _DEFERRED}
            _DEFERRED.clear()
            for name, module in list(sys.modules.items()):
                if module is None or not name.startswith("ros2_ik.core"):
                    continue
                for attr, value in list(vars(module).items()):
                    pair = compiled.get(id(value))
                    if pair is not None and pair[0] is value:
                        setattr(module, attr, pair[1])
    return _numba
