"""MoveIt's ``joint_limits.yaml``, read as MoveIt's launch helpers read it.

The file's ``joint_limits`` mapping (joint -> its keys), with the ``!degrees`` and
``!radians`` tags MoveIt's configs use for angles.  What the keys mean and which apply:
:func:`.robot.planning_limits_of`.
"""
from __future__ import annotations

import math
from typing import Any, Dict

from ros2_ik.core import errors


def read_section(text: str, source: str) -> Dict[str, Dict[str, Any]]:
    """Return the ``joint_limits`` mapping of joint_limits.yaml ``text``.

    Raises :class:`errors.InvalidArgument` starting with ``source`` (the file as the user
    named it) for text that is no YAML or has no ``joint_limits`` mapping.
    """
    import yaml

    class Loader(yaml.SafeLoader):
        pass
    Loader.add_constructor("!degrees", lambda loader, node: math.radians(
        float(loader.construct_scalar(node))))
    Loader.add_constructor("!radians", lambda loader, node: float(
        loader.construct_scalar(node)))
    try:
        data = yaml.load(text, Loader=Loader)
    except (yaml.YAMLError, ValueError) as exc:
        raise errors.InvalidArgument(f"{source} is not YAML: {exc}") from None
    section = data.get("joint_limits") if isinstance(data, dict) else None
    if not isinstance(section, dict):
        raise errors.InvalidArgument(f"{source} has no 'joint_limits' mapping")
    return section
