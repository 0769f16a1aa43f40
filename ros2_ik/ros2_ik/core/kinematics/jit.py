"""The one numba decorator of the compiled kernels and their on-disk cache's staleness check.

Imports numba: import it only when a kernel is wanted.
"""
from pathlib import Path
from typing import Sequence

import numba

#: The compiled files of this package: every kernel calls into them.
SOURCES = tuple(Path(__file__).resolve().parent / f"{name}.py"
                for name in ("jit", "lie", "forward"))


def jit(function=None, *, inline: str = "never"):
    """Compile ``function`` with IEEE division (``error_model="numpy"``), as numpy divides.

    numba's default ("python") raises ZeroDivisionError on a zero divisor: a NaN reaching
    a kernel (an attempt diverging on a target 1e300 m away) then made ``log3`` divide by
    a zero norm and ``solve()`` raise instead of ending the attempt (found by
    ``make fuzz``).  With NaN and inf the attempt ends unconverged and the driver moves on.
    ``@jit(inline="always")``: numba inlines the function into its callers (its array
    arguments then cost no call, :func:`.forward.kinematics`).
    """
    decorate = numba.njit(cache=True, nogil=True, error_model="numpy", inline=inline)
    return decorate if function is None else decorate(function)


def drop_stale_cache(kernel: Sequence[Path]) -> None:
    """Delete numba cache files older than the sources they were compiled from.

    numba's cache checks the source file of the function it loads, not of the compiled
    functions it calls from other files: after an edit of :mod:`.lie` alone, a kernel's
    cached attempt would still run the old code.  This package's caches are dropped when
    older than any of its :data:`SOURCES`, those of the ``kernel`` files (``.py`` paths)
    when older than any of these or of the kernel's.  Best effort: a cache elsewhere
    (``NUMBA_CACHE_DIR``) is not looked at.
    """
    _drop(SOURCES, SOURCES)
    _drop(kernel, SOURCES + tuple(kernel))


def _drop(modules: Sequence[Path], sources: Sequence[Path]) -> None:
    newest = max(p.stat().st_mtime for p in sources)
    for module in modules:
        for cached in (module.parent / "__pycache__").glob(f"{module.stem}.*.nb[ic]"):
            try:
                if cached.stat().st_mtime < newest:
                    cached.unlink()
            except OSError:  # another process removed it, or a read-only install
                pass
