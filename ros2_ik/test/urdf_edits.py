"""A robot of example-robot-data with one joint's limits narrowed (tests' helper)."""
import re

from ros2_ik.core import robots
from ros2_ik.core.model.robot import Robot


def narrowed(arm: str, joint: str, lower: float, upper: float) -> Robot:
    """``arm``'s URDF with ``joint``'s ``<limit>`` set to [``lower``, ``upper``] [rad or m].

    The limit's other attributes (effort, velocity) stay as they are.
    """
    text = robots.urdf_text(arm)
    start = text.index(f'<joint name="{joint}"')
    end = text.index("</joint>", start)
    element = text[start:end]
    limit = re.search(r"<limit[^>]*/>", element).group(0)
    new = re.sub(r'lower="[^"]*"', f'lower="{lower}"', limit)
    new = re.sub(r'upper="[^"]*"', f'upper="{upper}"', new)
    return Robot.from_urdf(text[:start] + element.replace(limit, new) + text[end:])
