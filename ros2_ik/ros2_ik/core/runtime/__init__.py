"""Plumbing below every other part: BLAS threads, the kernels' ``jit``, per-object caches.

:mod:`.blas` (single-threaded BLAS in workers), :mod:`.compiled` (the ``jit`` decorator,
importable without numba), :mod:`.per_object` (caches keyed by an object's identity),
:mod:`.thread_data` (one pinocchio ``Data`` per thread, model and purpose) and
:mod:`.warm_up` (``python -m ros2_ik.core.runtime.warm_up``: compiles or loads every kernel).
"""
