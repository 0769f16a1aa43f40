"""The arms the pose benchmark runs on: records of URDF text, base and tip.

Two families: ``catalogue`` (:data:`ros2_ik.core.model.robots.ARMS`, example-robot-data, full
robot URDFs with every other joint locked) and ``random`` (:mod:`random_arms`).  An arm
is a record, not a name, so the references (TRAC-IK, ikpy), the independent checker and
our solvers all read the same URDF text.  :func:`chain_alone` cuts the base->tip chain
out of a URDF: the same arm loaded alone, to compare a full robot's group with it.
"""
from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import List, NamedTuple, Sequence

from random_arms import random_arm

from ros2_ik.core import robots
from ros2_ik.core.model.robot import Robot


class BenchArm(NamedTuple):
    """One arm of the benchmark: ``urdf`` text, the group's ``base`` and ``tip`` links."""

    name: str
    urdf: str
    base: str
    tip: str
    family: str  # "catalogue" or "random"
    srdf: str = ""

    def group(self):
        """(robot, group) as a user builds them: the whole URDF, base -> tip."""
        robot = Robot.from_urdf(self.urdf, self.srdf or None)
        return robot, robot.group(base=self.base, tip=self.tip)


def catalogue(names: Sequence[str]) -> List[BenchArm]:
    """Arms of :data:`robots.ARMS` by name."""
    out = []
    for name in names:
        spec = robots.ARMS[name]
        out.append(BenchArm(name, robots.urdf_text(name), spec.base, spec.tip, "catalogue",
                            robots.srdf_text(name)))
    return out


def random_family(count: int, first: int = 0) -> List[BenchArm]:
    """Random arms ``first`` .. ``first + count - 1`` (:func:`random_arms.random_arm`)."""
    out = []
    for seed in range(first, first + count):
        arm = random_arm(seed)
        out.append(BenchArm(arm.name, arm.urdf, arm.base, arm.tip, "random"))
    return out


def mixed_family(count: int) -> List[BenchArm]:
    """Return the first ``count`` mixed random arms with 2+ continuous or prismatic joints.

    :func:`random_arms.random_arm` with ``mixed``: the joint kinds whose arms were slower
    than TRAC-IK (continuous) or not generated before (prismatic), family "mixed".
    """
    from ros2_ik.core import Robot

    out, seed = [], 0
    while len(out) < count:
        arm = random_arm(seed, mixed=True)
        group = Robot.from_urdf(arm.urdf).group(arm.base, arm.tip)
        prismatic = sum(group.robot.model.joints[j].shortname().startswith("JointModelP")
                        for j in group.joint_ids)
        if group.continuous.sum() >= 2 or prismatic:
            out.append(BenchArm(arm.name, arm.urdf, arm.base, arm.tip, "mixed"))
        seed += 1
    return out


def chain_alone(arm: BenchArm) -> BenchArm:
    """Return the base -> tip chain of ``arm`` as a URDF of its own (base link as root).

    Only the links on the path and the joints between them are kept (with their inertial,
    visual and collision elements); everything else of the robot is dropped.
    """
    root = ET.fromstring(arm.urdf)
    joints = {j.find("child").get("link"): j for j in root.findall("joint")}
    path, link = [], arm.tip
    while link != arm.base:
        joint = joints.get(link)
        if joint is None:
            raise ValueError(f"'{arm.base}' is not an ancestor of '{arm.tip}' in {arm.name}")
        path.append(joint)
        link = joint.find("parent").get("link")
    keep_links = {arm.base} | {j.find("child").get("link") for j in path}
    keep_joints = {id(j) for j in path}
    out = ET.Element("robot", {"name": f"{arm.name}_chain"})
    for child in root:
        if child.tag == "link" and child.get("name") in keep_links:
            out.append(child)
        elif child.tag == "joint" and id(child) in keep_joints:
            out.append(child)
        elif child.tag == "material":
            out.append(child)
    return BenchArm(f"{arm.name}_chain", ET.tostring(out, encoding="unicode"), arm.base,
                    arm.tip, arm.family)
