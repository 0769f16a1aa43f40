"""A 6R arm on a rail (a prismatic first joint).

A prismatic joint's value is a length [m]: a rail longer than 2 pi m has no 2 pi
equivalents, so it must never wrap (``Group.wraps``, the path's ``path_wraps``); lm
solves every reachable pose on it.

Every SUCCESS is checked here by pinocchio's FK on the full model and the limits.
"""
import math
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from ros2_ik.core.model.robot import Robot
from ros2_ik.core.model.robots import ARMS, urdf_text
from ros2_ik.core.path.segments import path_wraps
from ros2_ik.core.pose import PoseTarget
from ros2_ik.core.result import IKStatus
from ros2_ik.core.solve import prepare, solve

RAIL = """<link name="rail_base"/><link name="rail_carriage"/>
<joint name="rail_joint" type="prismatic"><parent link="rail_base"/>
<child link="rail_carriage"/><origin xyz="0.1 0.2 0" rpy="0 0 0.3"/><axis xyz="1 0 0"/>
<limit lower="-{half}" upper="{half}" effort="100" velocity="1"/></joint>
<joint name="rail_mount" type="fixed"><parent link="rail_carriage"/><child link="{root}"/>
<origin xyz="0 0 0.1"/></joint>"""


def _root(text: str) -> str:
    """The URDF's root link: the one no joint has as its child."""
    xml = ET.fromstring(text)
    children = {j.find("child").get("link") for j in xml.findall("joint")}
    return next(link.get("name") for link in xml.findall("link")
                if link.get("name") not in children)


def _with(text: str, extra: str) -> str:
    return text.replace("</robot>", extra + "</robot>")


def railed(arm: str, half_length_m: float):
    """``arm`` on a rail of ``2 * half_length_m`` [m] under its root: the 7-joint group."""
    text = urdf_text(arm)
    robot = Robot.from_urdf(_with(text, RAIL.format(half=half_length_m, root=_root(text))))
    return robot.group(base="rail_base", tip=ARMS[arm].tip)


def _uniform(group, count: int, rng_seed: int):
    rng = np.random.default_rng(rng_seed)
    lo = np.where(np.isfinite(group.lower), group.lower, -math.pi)
    hi = np.where(np.isfinite(group.upper), group.upper, math.pi)
    return [rng.uniform(lo, hi) for _ in range(count)]


def _solved(group, q, T) -> bool:
    """Checked here: within the limits, FK within 1e-4 m and 1e-3 rad of ``T``."""
    if q is None or not group.within_limits(q):
        return False
    F = group.fk(q, group.tip)
    rotation = np.linalg.norm(
        np.arccos(np.clip((np.trace(F.rotation.T @ T.rotation) - 1) / 2, -1, 1)))
    return np.linalg.norm(F.translation - T.translation) <= 1e-4 and rotation <= 1e-3


def test_a_long_rail_never_wraps():
    group = railed("ur5", 5.0)  # 10 m: wider than 2 pi m
    assert group.rotates.tolist() == [False] + [True] * 6
    assert not group.wraps[0] and group.search_lower[0] == -5.0
    assert not path_wraps(group)[0]
    q = group.mid_configuration()
    q[0] = 4.0
    reference = q.copy()
    reference[0] = -2.0
    assert group.unwrap_near(q, reference)[0] == 4.0


@pytest.mark.parametrize("solver", ["lm"])
def test_every_pose_on_a_long_rail(solver):
    group = railed("ur5", 5.0)
    prepare(group, group.tip, solver=solver)
    start = group.mid_configuration()
    for k, q in enumerate(_uniform(group, 40, 3)):
        T = group.fk(q, group.tip)
        result = solve(group, PoseTarget(group.tip, T), start, solver, 0.05, 0, k)
        assert result.status is IKStatus.SUCCESS, (k, q.tolist(), result.message)
        assert _solved(group, result.q, T), k
