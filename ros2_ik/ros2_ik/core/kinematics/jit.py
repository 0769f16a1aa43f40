"""The kernels' ``jit`` decorator and their cache's staleness check.

The decorator is defined once, in :mod:`ros2_ik.core.runtime.compiled` (importable
without numba, so the constraint files can hold their compiled maths); it is re-exported
here for the kernels.  Importing this module loads numba (:func:`compiled.load`): every
kernel module imports it first.
"""
from pathlib import Path
from typing import Sequence

from ros2_ik.core.runtime import compiled
from ros2_ik.core.runtime.compiled import jit  # noqa: F401 - re-exported: the kernels' decorator

compiled.load()  # a kernel is needed: numba, and the functions decorated before it

_HERE = Path(__file__).resolve().parent
#: The compiled files of this package and the decorator's: every kernel calls into them.
_NAMES = ("lie", "forward", "configuration", "relative", "linalg")
SOURCES = tuple(_HERE / f"{name}.py" for name in _NAMES) + (
    _HERE.parent / "runtime" / "compiled.py",)


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
