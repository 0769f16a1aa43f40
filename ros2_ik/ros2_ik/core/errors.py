"""The one exception hierarchy of the core: bad input and bad configuration.

Expected outcomes of a solve (no solution, timeout, collision) are *statuses* in a
result object, never exceptions.  Everything here is raised for input that cannot be
solved as stated; every message names the offending field and lists valid choices
where there is a finite set of them.
"""
from __future__ import annotations

from typing import Iterable


class IKError(Exception):
    """Base class of every error the core raises on bad input or configuration."""


class RobotModelError(IKError):
    """The URDF / SRDF could not be turned into a robot model."""


class InvalidArgument(IKError, ValueError):
    """A numeric or structural argument is out of its valid range (NaN, zero vector, ...)."""


class InvalidSeed(InvalidArgument):
    """A seed configuration has missing, extra, duplicated or out-of-range joints."""


class InvalidGoal(InvalidArgument):
    """A target (pose, constraint parameters) is malformed."""


def _choices(valid: Iterable[str], limit: int = 40) -> str:
    names = sorted(set(valid))
    shown = ", ".join(names[:limit])
    more = f", ... ({len(names) - limit} more)" if len(names) > limit else ""
    return f"[{shown}{more}]"


class _UnknownName(IKError, KeyError):
    kind = "name"

    def __init__(self, name: str, valid: Iterable[str], argument: str = "",
                 why: str = ""):
        """``argument``: the argument that named it, put first in the message when given.

        ``why``: why a name the model knows is refused here (the message then says it in
        place of "unknown").
        """
        self.name = name
        self.valid = sorted(set(valid))
        where = f"{argument}: " if argument else ""
        what = f"{self.kind} '{name}' {why}" if why else f"unknown {self.kind} '{name}'"
        super().__init__(f"{where}{what}; valid: {_choices(self.valid)}")

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0])


class InvalidFrame(_UnknownName):
    """A frame (link, joint or operational frame) name is not in the model."""

    kind = "frame"


class InvalidJoint(_UnknownName):
    """A joint name is not in the model (or not in the group)."""

    kind = "joint"


class InvalidGeometry(_UnknownName):
    """A collision geometry name (a link with collision geometry, a scene object) is unknown."""

    kind = "geometry"


class InvalidGroup(_UnknownName):
    """A kinematic group name is not configured."""

    kind = "group"


class UnknownSolver(_UnknownName):
    """No solver plugin is registered under that name."""

    kind = "solver"
