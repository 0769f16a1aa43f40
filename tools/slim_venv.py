"""Make a fresh ``.venv`` smaller without changing what any of its programs see.

Run by ``tools/setup.sh`` after pip. Two steps, each safe to repeat:

1. Identical files of 1 MB or more become hard links to one copy. The wheels ship shared
   libraries once per soname (``libfastdds.so``, ``.so.3.2``, ``.so.3.2.2``) and vendor the
   same OpenSSL into several ROS packages; the bytes every program reads are unchanged.
2. boost's C++ headers go (``cmeel.prefix/include/boost``, pulled in by pinocchio's
   ``cmeel-boost``). Nothing here compiles against boost: the interface package is rosidl
   C/C++ and the core uses pinocchio through Python. Set ``ROS2_IK_KEEP_HEADERS=1`` to keep
   them (for building C++ against this venv's pinocchio).

Usage: ``python tools/slim_venv.py VENV``; prints the megabytes saved by each step.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import sys
from pathlib import Path

MIN_BYTES = 1_000_000


def _digest(path: Path) -> str:
    """Return the SHA-256 of the file at ``path``."""
    sha = hashlib.sha256()
    with open(path, "rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            sha.update(block)
    return sha.hexdigest()


def _large_files(root: Path) -> dict:
    """Map (size, device) to the regular, not yet linked files of that size under ``root``."""
    by_size: dict = {}
    for folder, _, names in os.walk(root):
        for name in names:
            path = Path(folder, name)
            if path.is_symlink():
                continue
            stat = path.stat()
            if stat.st_size >= MIN_BYTES:
                by_size.setdefault((stat.st_size, stat.st_dev), {})[stat.st_ino] = path
    return by_size


def link_duplicates(root: Path) -> int:
    """Hard-link identical files of :data:`MIN_BYTES` or more under ``root``; return bytes."""
    saved = 0
    for (size, _), by_inode in _large_files(root).items():
        if len(by_inode) < 2:
            continue
        first: dict = {}
        for path in by_inode.values():
            kept = first.setdefault(_digest(path), path)
            if kept is path:
                continue
            spare = path.with_name(path.name + ".slim_venv")
            os.link(kept, spare)
            os.replace(spare, path)  # atomic: the path never goes missing
            saved += size
    return saved


def _tree_bytes(root: Path) -> int:
    """Return the bytes of the regular files under ``root``."""
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file() and not p.is_symlink())


def drop_boost_headers(venv: Path) -> int:
    """Remove cmeel's boost headers from ``venv`` unless ROS2_IK_KEEP_HEADERS=1; return bytes."""
    if os.environ.get("ROS2_IK_KEEP_HEADERS") == "1":
        return 0
    saved = 0
    for headers in venv.glob("lib/python3*/site-packages/cmeel.prefix/include/boost"):
        saved += _tree_bytes(headers)
        shutil.rmtree(headers)
    return saved


def main(argv: list) -> int:
    """Slim the venv named by ``argv[1]``."""
    venv = Path(argv[1]).resolve()
    linked = link_duplicates(venv)
    dropped = drop_boost_headers(venv)
    print(f"[setup] slimmed .venv: {linked / 1e6:.0f} MB of duplicate files hard-linked, "
          f"{dropped / 1e6:.0f} MB of boost headers removed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
