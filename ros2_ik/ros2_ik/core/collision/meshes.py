"""Mesh URIs to files: ``package://``, ``file://`` and plain paths, and the allowed-dirs gate.

A ``package://pkg/rel/path`` URI is looked up, in order, in

1. the ament index (``get_package_share_directory(pkg)``), when ``ament_index_python``
   is importable (a ROS install; the core never requires it);
2. every configured search directory ``d``, as ``d/pkg/rel/path``;
3. the share folders of the Python environment (where example-robot-data installs
   ``share/example-robot-data``), as ``share/pkg/rel/path``.

A URI that resolves nowhere raises :class:`MeshNotFoundError` naming the URI and every
path tried.  File paths that come from *input* (scene files, requests) go through
:func:`check_allowed_path` and are never opened outside the configured allowed directories.
"""
from __future__ import annotations

import logging
import os
import sys
import sysconfig
from pathlib import Path
from typing import Iterable, List, Optional, Sequence, Tuple

from ..errors import InvalidArgument, RobotModelError

_LOG = logging.getLogger(__name__)


class MeshNotFoundError(RobotModelError):
    """A mesh URI of the robot description resolved to no existing file."""

    def __init__(self, uri: str, tried: Sequence[str]):
        self.uri = uri
        self.tried = tuple(tried)
        where = "; ".join(self.tried) if self.tried else "nowhere (no search path applies)"
        super().__init__(
            f"mesh '{uri}' not found; looked in: {where}. Add its folder to the mesh "
            "search paths, or set skip_missing_meshes to drop the geometry with a warning"
        )


class PathNotAllowed(InvalidArgument):
    """A file path in input lies outside every configured allowed directory."""

    def __init__(self, path: str, allowed_dirs: Sequence[str]):
        self.path = path
        self.allowed_dirs = tuple(allowed_dirs)
        allowed = ", ".join(self.allowed_dirs) if self.allowed_dirs else "none configured"
        super().__init__(
            f"file '{path}' is not under an allowed directory (allowed: [{allowed}]); "
            "send the mesh as vertices and triangles or add its folder to allowed_dirs"
        )


def _ament_share(package: str) -> Optional[str]:
    try:
        from ament_index_python.packages import (  # noqa: I100 (optional ROS import)
            PackageNotFoundError,
            get_package_share_directory,
        )
    except ImportError:
        return None
    try:
        return get_package_share_directory(package)
    except (PackageNotFoundError, ValueError, OSError):  # OSError: no AMENT_PREFIX_PATH
        return None


def environment_share_dirs() -> List[str]:
    """Share folders of the Python environment (example-robot-data lives in one), existing."""
    prefixes = [sys.prefix, sysconfig.get_paths()["data"]]
    try:
        import pinocchio  # the cmeel wheels keep their prefix four levels above the module

        prefixes.append(str(Path(pinocchio.__file__).resolve().parents[4]))
    except (ImportError, IndexError):
        pass
    found: List[str] = []
    for prefix in prefixes:
        for share in (Path(prefix) / "share", Path(prefix) / "cmeel.prefix" / "share"):
            if share.is_dir() and str(share) not in found:
                found.append(str(share))
    return found


class MeshResolver:
    """Turn a mesh URI of a URDF into an existing absolute file path.

    Args:
        search_dirs: extra folders; ``package://pkg/rel`` is tried as ``dir/pkg/rel``.
        use_ament_index: try the ament index first when it is importable.
        use_environment_share: try the Python environment's ``share`` folders last.
        base_dir: folder that relative paths are taken from (e.g. the URDF's folder).
    """

    def __init__(
        self,
        search_dirs: Iterable[str] = (),
        use_ament_index: bool = True,
        use_environment_share: bool = True,
        base_dir: Optional[str] = None,
    ):
        self.search_dirs: Tuple[str, ...] = tuple(str(d) for d in search_dirs)
        self.use_ament_index = use_ament_index
        self.base_dir = base_dir
        self._share_dirs = tuple(environment_share_dirs()) if use_environment_share else ()

    def candidates(self, uri: str) -> List[str]:
        """Every path that ``uri`` may resolve to, in the order they are tried."""
        if uri.startswith("package://"):
            return self._package_candidates(uri[len("package://"):])
        if uri.startswith("file://"):
            return [uri[len("file://"):]]
        if os.path.isabs(uri):
            return [uri]
        bases = ([self.base_dir] if self.base_dir else []) + list(self.search_dirs)
        return [os.path.join(b, uri) for b in bases]

    def _package_candidates(self, rest: str) -> List[str]:
        package, _, relative = rest.partition("/")
        paths: List[str] = []
        if self.use_ament_index:
            share = _ament_share(package)
            if share is not None:
                paths.append(os.path.join(share, relative))
        for folder in self.search_dirs + self._share_dirs:
            paths.append(os.path.join(folder, package, relative))
        return paths

    def resolve(self, uri: str) -> str:
        """Return the first existing candidate of ``uri``, or raise MeshNotFoundError."""
        tried = self.candidates(uri)
        for path in tried:
            if os.path.isfile(path):
                return os.path.abspath(path)
        raise MeshNotFoundError(uri, tried)


def check_allowed_path(path: str, allowed_dirs: Optional[Iterable[str]]) -> str:
    """Return the real path of ``path`` if it lies under one of ``allowed_dirs``, else raise.

    Symlinks and ``..`` are resolved before the comparison, so neither escapes the gate.
    ``allowed_dirs=None`` or empty allows nothing.
    """
    allowed = [os.path.realpath(d) for d in (allowed_dirs or ())]
    real = os.path.realpath(path.removeprefix("file://"))
    for folder in allowed:
        if os.path.commonpath([real, folder]) == folder:
            return real
    raise PathNotAllowed(path, list(allowed_dirs or ()))
