"""The arms of one joint count, from example-robot-data and the vendor folder, and their judge.

Shared by ``analytic_bench.py`` (6R), ``sweep_bench.py`` and ``seven_r_worker.py`` (7R): the
arm records, the group a user builds from one, the independent check of an answer and the
TRAC-IK reference; and the same arms on a rail (:func:`on_rail`: a prismatic first joint
under the arm's root; ``sweep_bench.py`` and ``test_rail.py``).  Written against the API
every commit since issue 48's start shares (``Robot.from_urdf``, ``Group.fk``,
``Group.within_limits``): ``seven_r_ab.py`` runs ``seven_r_worker.py`` on that older commit
too.  The vendor descriptions are read where they are (:mod:`vendor_arms`), never copied.
"""
from __future__ import annotations

import time
import xml.etree.ElementTree as ET
from typing import List, Optional

import numpy as np
import pinocchio as pin

import vendor_arms

try:  # the layout of issue 46
    from ros2_ik.core.model import robots
    from ros2_ik.core.model.robot import Robot
except ImportError:  # the root modules before it
    from ros2_ik.core import robots
    from ros2_ik.core.robot import Robot

POS_TOL, ORI_TOL = 1e-4, 1e-3
#: Half the length of :func:`on_rail`'s rail [m]: 8 m, longer than 2 pi m (a length, not
#: an angle: it must never wrap).
RAIL_HALF_LENGTH_M = 4.0
#: The rail: along its x axis, its carriage turned and offset from the rail's origin.
RAIL = """<link name="rail_base"/><link name="rail_carriage"/>
<joint name="rail_joint" type="prismatic"><parent link="rail_base"/>
<child link="rail_carriage"/><origin xyz="0.1 0.2 0" rpy="0 0 0.3"/><axis xyz="1 0 0"/>
<limit lower="-{half}" upper="{half}" effort="100" velocity="1"/></joint>
<joint name="rail_mount" type="fixed"><parent link="rail_carriage"/><child link="{root}"/>
<origin xyz="0 0 0.1"/></joint>"""


class Arm:
    """An arm of either source: name, source, URDF text, base and tip, SRDF text."""

    def __init__(self, name: str, source: str, urdf: str, base: str, tip: str, srdf: str = ""):
        """Keep the record; the robot is built on demand."""
        self.name, self.source, self.urdf, self.base, self.tip = name, source, urdf, base, tip
        self.srdf = srdf

    def group(self):
        """(robot, group) from the whole URDF, base -> tip."""
        robot = Robot.from_urdf(self.urdf, self.srdf or None)
        return robot, robot.group(base=self.base, tip=self.tip)


def arms(joints: int) -> List[Arm]:
    """Return the arms of ``joints`` joints of example-robot-data and of the vendor folder."""
    out = []
    for name in robots.ARMS:
        arm = example(name)
        if arm.group()[1].n == joints:
            out.append(arm)
    if vendor_arms.folder() is None:
        print(f"{vendor_arms.absent_reason()}: vendor arms skipped")
    for a in vendor_arms.arms():
        if a.dof == joints:
            srdf = a.srdf.read_text() if a.srdf and a.srdf.is_file() else ""
            out.append(Arm(a.name, "real_urdfs", a.path.read_text(), a.base, a.tip, srdf))
    return out


def example(name: str) -> Arm:
    """Return example-robot-data's arm ``name`` (:data:`robots.ARMS`)."""
    spec = robots.ARMS[name]
    return Arm(name, "example-robot-data", robots.urdf_text(name), spec.base, spec.tip,
               robots.srdf_text(name))


def on_rail(arm: Arm, half_length_m: float = RAIL_HALF_LENGTH_M) -> Arm:
    """``arm`` on a rail of ``2 * half_length_m`` [m] under its root link, from ``rail_base``.

    The group gains a prismatic first joint, ``rail_joint`` (:data:`RAIL`).
    """
    root = root_link(arm.urdf)
    urdf = arm.urdf.replace("</robot>", RAIL.format(half=half_length_m, root=root)
                            + "</robot>")
    return Arm(f"{arm.name} on rail", arm.source, urdf, "rail_base", arm.tip, arm.srdf)


def root_link(urdf: str) -> str:
    """Return the URDF's root link: the one no joint has as its child."""
    xml = ET.fromstring(urdf)
    children = {j.find("child").get("link") for j in xml.findall("joint")}
    return next(link.get("name") for link in xml.findall("link")
                if link.get("name") not in children)


def verified(group, q: Optional[np.ndarray], T: pin.SE3) -> bool:
    """Pinocchio FK of ``q`` within 1e-4 m / 1e-3 rad of ``T`` and inside the limits."""
    if q is None:
        return False
    M = group.fk(np.asarray(q, dtype=float), group.tip)
    return bool(np.linalg.norm(M.translation - T.translation) <= POS_TOL
                and np.linalg.norm(pin.log3(T.rotation.T @ M.rotation)) <= ORI_TOL
                and group.within_limits(q))


def timed(f, *args):
    """``(f(*args), its wall time [s])``."""
    start = time.perf_counter()
    out = f(*args)
    return out, time.perf_counter() - start


def trac_ik_adapter(arm: Arm, group):
    """TRAC-IK on the arm, or None when pytracik is not installed or refuses the chain."""
    try:
        import adapters
        return adapters.trac_ik(arm, group, 0)
    except Exception as exc:  # missing wheel, or a chain KDL does not parse
        print(f"  TRAC-IK unavailable on {arm.name}: {exc}")
        return None
