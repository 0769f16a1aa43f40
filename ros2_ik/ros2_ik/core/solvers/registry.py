"""Solver plugins discovered through the ``ros2_ik.solvers`` entry-point group.

Built-in solvers register there exactly like a third party's would (setup.py).
"""
from __future__ import annotations

import logging
from functools import lru_cache
from typing import Dict, Tuple, Type

from ros2_ik.core import errors

GROUP = "ros2_ik.solvers"
_LOG = logging.getLogger(__name__)


@lru_cache(maxsize=1)
def _entry_points() -> Dict[str, object]:
    from importlib.metadata import entry_points  # not at import: ~20 ms
    return {ep.name: ep for ep in entry_points(group=GROUP)}


def available() -> Tuple[str, ...]:
    """Names of every registered solver, sorted."""
    return tuple(sorted(_entry_points()))


@lru_cache(maxsize=None)
def solver_class(name: str) -> Type:
    """Return the class registered as ``name``; :class:`errors.UnknownSolver` lists valid names."""
    eps = _entry_points()
    if name not in eps:
        raise errors.UnknownSolver(str(name), eps)
    try:
        cls = eps[name].load()
    except Exception as exc:
        raise errors.IKError(f"solver plugin '{name}' failed to load: {exc}") from exc
    _LOG.debug("loaded solver plugin %s -> %s", name, cls)
    return cls


def create(name: str):
    """Return a new instance of solver ``name``."""
    return solver_class(name)()


def refresh() -> None:
    """Forget cached entry points (after installing a plugin at run time)."""
    _entry_points.cache_clear()
    solver_class.cache_clear()
