"""Keep BLAS single-threaded around scipy solvers.

IK matrices are tiny (6 x 7); a multi-threaded OpenBLAS only adds thread hand-offs,
which cost far more than the arithmetic (docs/design.md).  ``single_threaded()``
limits every loaded OpenBLAS to one thread for the duration of a block and restores the
previous count (threadpoolctl when installed, else OpenBLAS' own C API through ctypes).
"""
from __future__ import annotations

import contextlib
import ctypes
import logging
from functools import lru_cache
from typing import Iterator, List, Tuple

_LOG = logging.getLogger(__name__)
_PREFIXES = ("scipy_openblas", "openblas")
_SUFFIXES = ("", "64_", "_")


@lru_cache(maxsize=1)
def _openblas_handles() -> Tuple[Tuple[object, object], ...]:
    """(get, set) C functions of every OpenBLAS loaded in this process."""
    paths: List[str] = []
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                path = line.split()[-1] if "/" in line else ""
                if "openblas" in path.lower() and path not in paths:
                    paths.append(path)
    except OSError:
        return ()
    out = []
    for path in paths:
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for prefix in _PREFIXES:
            for suffix in _SUFFIXES:
                get = getattr(lib, f"{prefix}_get_num_threads{suffix}", None)
                set_ = getattr(lib, f"{prefix}_set_num_threads{suffix}", None)
                if get is not None and set_ is not None and suffix != "_":
                    get.restype, set_.argtypes = ctypes.c_int, [ctypes.c_int]
                    out.append((get, set_))
                    break
            else:
                continue
            break
    _LOG.debug("OpenBLAS libraries found: %d", len(out))
    return tuple(out)


@contextlib.contextmanager
def single_threaded() -> Iterator[None]:
    """Run the block with one BLAS thread; restore the previous counts after."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        threadpool_limits = None
    if threadpool_limits is not None:
        with threadpool_limits(limits=1, user_api="blas"):
            yield
        return
    handles = _openblas_handles()
    before = [get() for get, _ in handles]
    for (_, set_), n in zip(handles, before):
        if n != 1:
            set_(1)
    try:
        yield
    finally:
        for (_, set_), n in zip(handles, before):
            if n != 1:
                set_(n)
