"""The arms of one joint count, from example-robot-data and the vendor folder, and their judge.

Shared by ``analytic_bench.py`` (6R), ``sweep_bench.py`` and ``seven_r_worker.py`` (7R): the
arm records, the group a user builds from one, the independent check of an answer and the
TRAC-IK reference.  Written against the API every commit since issue 48's start shares
(``Robot.from_urdf``, ``Group.fk``, ``Group.within_limits``): ``seven_r_ab.py`` runs
``seven_r_worker.py`` on that older commit too.  The vendor descriptions are read where they
are (:mod:`vendor_arms`), never copied.
"""
from __future__ import annotations

import time
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
    for name, spec in robots.ARMS.items():
        arm = Arm(name, "example-robot-data", robots.urdf_text(name), spec.base, spec.tip,
                  robots.srdf_text(name))
        if arm.group()[1].n == joints:
            out.append(arm)
    if vendor_arms.folder() is None:
        print(f"{vendor_arms.absent_reason()}: vendor arms skipped")
    for a in vendor_arms.arms():
        if a.dof == joints:
            srdf = a.srdf.read_text() if a.srdf and a.srdf.is_file() else ""
            out.append(Arm(a.name, "real_urdfs", a.path.read_text(), a.base, a.tip, srdf))
    return out


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
