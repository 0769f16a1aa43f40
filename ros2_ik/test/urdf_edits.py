"""Robots for tests: an example-robot-data arm with one joint edited, or a chain of given axes."""
import re

import numpy as np

from ros2_ik.core import robots
from ros2_ik.core.model.robot import Robot


def narrowed(arm: str, joint: str, lower: float, upper: float) -> Robot:
    """``arm``'s URDF with ``joint``'s ``<limit>`` set to [``lower``, ``upper``] [rad or m].

    The limit's other attributes (effort, velocity) stay as they are.
    """
    def edit(element: str) -> str:
        limit = re.search(r"<limit[^>]*/>", element).group(0)
        new = re.sub(r'lower="[^"]*"', f'lower="{lower}"', limit)
        new = re.sub(r'upper="[^"]*"', f'upper="{upper}"', new)
        return element.replace(limit, new)
    return _edited(arm, joint, edit)


def turned(arm: str, joint: str) -> Robot:
    """``arm``'s URDF with ``joint``'s axis pointing the other way (the same joint at -q)."""
    def edit(element: str) -> str:
        axis = re.search(r"<axis[^>]*/>", element).group(0)
        x, y, z = (float(v) for v in re.search(r'xyz="([^"]*)"', axis).group(1).split())
        return element.replace(axis, f'<axis xyz="{-x} {-y} {-z}"/>')
    return _edited(arm, joint, edit)


def _edited(arm: str, joint: str, edit) -> Robot:
    """``arm``'s robot with ``joint``'s ``<joint>`` element replaced by ``edit(element)``."""
    text = robots.urdf_text(arm)
    start = text.index(f'<joint name="{joint}"')
    end = text.index("</joint>", start)
    return Robot.from_urdf(text[:start] + edit(text[start:end]) + text[end:])


def world_axes_urdf(points, axes, tool_xyz, tool_rpy) -> str:
    """A serial chain whose joint i turns about unit ``axes[i]`` through ``points[i]``.

    Points and axes in the world at the zero configuration [m], every link frame parallel
    to the world's there; limits +-3 rad; links ``base``, ``l1`` ... and ``tool``, the frame
    after the last joint at ``tool_xyz`` (world) turned by ``tool_rpy`` [rad].
    """
    out, parent, previous = ['<robot name="axes">', '<link name="base"/>'], "base", np.zeros(3)
    for i, (p, a) in enumerate(zip(points, axes), 1):
        d = np.asarray(p, float) - previous
        out += [f'<link name="l{i}"/>', f'<joint name="j{i}" type="revolute"><parent link='
                f'"{parent}"/><child link="l{i}"/><origin xyz="{d[0]} {d[1]} {d[2]}"/><axis '
                f'xyz="{a[0]} {a[1]} {a[2]}"/><limit lower="-3" upper="3" effort="1" '
                f'velocity="1"/></joint>']
        parent, previous = f"l{i}", np.asarray(p, float)
    d = np.asarray(tool_xyz, float) - previous
    out += ['<link name="tool"/>', f'<joint name="jt" type="fixed"><parent link="{parent}"/>'
            f'<child link="tool"/><origin xyz="{d[0]} {d[1]} {d[2]}" rpy="{tool_rpy[0]} '
            f'{tool_rpy[1]} {tool_rpy[2]}"/></joint>', "</robot>"]
    return "\n".join(out)


def srs_arm():
    """A 7R SRS arm (shoulder, elbow and wrist of intersecting axes): its group base-tool.

    Links ``base`` ... ``tool``; the tool offset and turned.  Its upper-arm roll (joint 3)
    is the swept joint (``test_closed_form_sweep``, ``test_closed_form_inner``).
    """
    z, y = [0.0, 0.0, 1.0], [0.0, 1.0, 0.0]
    axes = [z, y, z, [0.0, -1.0, 0.0], z, y, z]
    points = [[0, 0, 0.2], [0, 0, 0.2], [0, 0, 0.4], [0, 0, 0.6], [0, 0, 0.8], [0, 0, 0.8],
              [0, 0, 0.8]]
    robot = Robot.from_urdf(world_axes_urdf(points, axes, [0.0, 0.0, 0.95], [0.2, -0.3, 0.5]))
    return robot.group(base="base", tip="tool")
