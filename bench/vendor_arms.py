"""The vendor arms of ``shared/real_urdfs`` (manifest.json), read where they are.

38 real vendor descriptions (UR, Kinova, xArm, FR3, iiwa, KUKA KR, ABB, Fanuc, Yaskawa,
Denso, Doosan, Techman, Interbotix, Piper, SO-101, Sawyer), kept outside the repository
and never copied into it.  The folder (:func:`folder`): the environment variable
``ROS2_IK_REAL_URDFS``, else ``shared/real_urdfs`` beside the repository's clone (the
folder holding the clone; for a git worktree, the folder holding its main clone).  Each
entry's group runs from its ``base`` to its ``tip`` (the vendor SRDF's arm group, or the
flange).  The tests, the completeness fuzz and the unreachable benchmark use them.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import List, NamedTuple, Optional

#: Environment variable naming the folder (it holds manifest.json).
ENV = "ROS2_IK_REAL_URDFS"
_REPO = Path(__file__).resolve().parents[1]


class VendorArm(NamedTuple):
    """A manifest entry: ``name``, URDF ``path``, the group's ``base`` and ``tip`` frames.

    ``srdf``: the entry's SRDF path, when the manifest names one.
    """

    name: str
    path: Path
    base: str
    tip: str
    dof: int
    srdf: Optional[Path] = None


def _main_clone(repo: Path) -> Path:
    """Return the main clone of ``repo`` when it is a git worktree, else ``repo``."""
    git = repo / ".git"
    if git.is_file():
        text = git.read_text().strip()
        if text.startswith("gitdir:"):
            gitdir = Path(text.split(":", 1)[1].strip())  # <main>/.git/worktrees/<name>
            if gitdir.parent.name == "worktrees":
                return gitdir.parents[2]
    return repo


def candidates() -> List[Path]:
    """Where the folder is looked for, in order."""
    out = [Path(os.environ[ENV])] if os.environ.get(ENV) else []
    out += [_REPO.parent / "shared" / "real_urdfs",
            _main_clone(_REPO).parent / "shared" / "real_urdfs"]
    return out


def folder() -> Optional[Path]:
    """Return the folder holding manifest.json, or None when it is absent."""
    for path in candidates():
        if (path / "manifest.json").is_file():
            return path
    return None


def absent_reason() -> str:
    """Why the vendor arms are skipped when :func:`folder` is None."""
    return (f"vendor arms not found (set {ENV} to the real_urdfs folder; looked in "
            f"{', '.join(str(p) for p in candidates())})")


def arms(path: Optional[Path] = None) -> List[VendorArm]:
    """Every manifest entry of ``path`` (default :func:`folder`; [] when absent)."""
    path = path or folder()
    if path is None:
        return []
    manifest = json.loads((path / "manifest.json").read_text())
    return [VendorArm(e["name"], path / e["file"], e["base"], e["tip"], int(e["dof"]),
                      path / e["srdf"] if e.get("srdf") else None)
            for e in manifest]


def load_group(arm: VendorArm):
    """Return ``arm``'s group (base to tip) on the whole robot of its URDF."""
    from ros2_ik.core import Robot
    return Robot.from_urdf(arm.path.read_text()).group(base=arm.base, tip=arm.tip)
