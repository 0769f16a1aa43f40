"""Robots and helpers shared by the constraint and cost tests (no tests here).

The Panda comes from example-robot-data's share folder (read as text, no meshes);
the tiny arms are written here so that every number in a test is checkable by hand.
"""
from __future__ import annotations

import os
import sys
from functools import lru_cache

import numpy as np
import pinocchio as pin
import pytest

# A planar 2R arm in the x-y plane: link lengths 1 m and 0.5 m, tip frame at the end.
PLANAR_2R_URDF = """<?xml version="1.0"?>
<robot name="planar_2r">
  <link name="base_link"/>
  <link name="link1"/>
  <link name="link2"/>
  <link name="tip"/>
  <joint name="joint1" type="revolute">
    <parent link="base_link"/><child link="link1"/>
    <origin xyz="0 0 0"/><axis xyz="0 0 1"/>
    <limit lower="-3" upper="3" effort="1" velocity="1"/>
  </joint>
  <joint name="joint2" type="revolute">
    <parent link="link1"/><child link="link2"/>
    <origin xyz="1 0 0"/><axis xyz="0 0 1"/>
    <limit lower="-3" upper="3" effort="1" velocity="1"/>
  </joint>
  <joint name="tip_joint" type="fixed">
    <parent link="link2"/><child link="tip"/><origin xyz="0.5 0 0"/>
  </joint>
</robot>
"""

# Two branches, tilted axes, a continuous joint on each (nq = 6, nv = 4), a prismatic
# joint: exercises nq != nv and frames that both move.
TINY_URDF = """<?xml version="1.0"?>
<robot name="tiny">
  <link name="base_link"/>
  <link name="link1"/>
  <link name="link2"/>
  <link name="link3"/>
  <link name="tool"/>
  <link name="side_link"/>
  <joint name="j1" type="revolute">
    <parent link="base_link"/><child link="link1"/>
    <origin xyz="0 0 0.2"/><axis xyz="0 0 1"/>
    <limit lower="-2.5" upper="2.5" effort="1" velocity="1"/>
  </joint>
  <joint name="j2" type="continuous">
    <parent link="link1"/><child link="link2"/>
    <origin xyz="0.1 0.05 0.3" rpy="0.3 -0.2 0.1"/><axis xyz="0 1 0"/>
  </joint>
  <joint name="j3" type="prismatic">
    <parent link="link2"/><child link="link3"/>
    <origin xyz="0 0 0.4" rpy="0 0.5 0"/><axis xyz="1 0 0"/>
    <limit lower="-0.3" upper="0.3" effort="1" velocity="1"/>
  </joint>
  <joint name="tool_joint" type="fixed">
    <parent link="link3"/><child link="tool"/><origin xyz="0.05 0 0.1" rpy="0.2 0.4 -0.3"/>
  </joint>
  <joint name="j4" type="continuous">
    <parent link="base_link"/><child link="side_link"/>
    <origin xyz="0.3 -0.2 0.1" rpy="0.7 0 0"/><axis xyz="1 0 0"/>
  </joint>
</robot>
"""


@lru_cache(maxsize=None)
def planar_2r() -> pin.Model:
    """The planar 2R arm (nq = nv = 2)."""
    return pin.buildModelFromXML(PLANAR_2R_URDF)


@lru_cache(maxsize=None)
def tiny() -> pin.Model:
    """The tiny two-branch arm with continuous joints (nq = 6, nv = 4)."""
    return pin.buildModelFromXML(TINY_URDF)


_PANDA = os.path.join("example-robot-data", "robots", "panda_description", "urdf", "panda.urdf")


def _panda_urdf_path():
    shares = [os.path.join(p, "cmeel.prefix", "share") for p in sys.path if p]
    shares += [os.path.join(sys.prefix, "share"), "/opt/openrobots/share"]
    for share in shares:
        if os.path.isfile(os.path.join(share, _PANDA)):
            return os.path.join(share, _PANDA)
    return None


@lru_cache(maxsize=None)
def panda() -> pin.Model:
    """example-robot-data's Panda (nq = nv = 9), or skip when it is not installed."""
    path = _panda_urdf_path()
    if path is None:
        pytest.skip("example-robot-data's panda.urdf is not installed")
    with open(path) as urdf:
        return pin.buildModelFromXML(urdf.read())


ROBOTS = {"panda": panda, "tiny": tiny, "planar_2r": planar_2r}

#: Frames per robot: (a moving frame near the tip, a moving frame elsewhere, a third).
FRAMES = {
    "panda": ("panda_hand", "panda_link3", "panda_link5"),
    "tiny": ("tool", "side_link", "link2"),
}


def random_configurations(model: pin.Model, count: int, seed: int = 0):
    """``count`` configurations ``neutral (+) v`` with ``v`` uniform in [-2.5, 2.5]^nv."""
    rng = np.random.default_rng(seed)
    neutral = pin.neutral(model)
    return [pin.integrate(model, neutral, rng.uniform(-2.5, 2.5, model.nv))
            for _ in range(count)]


def evaluate_at(term, model: pin.Model, q: np.ndarray):
    """Update kinematics at ``q`` on a fresh ``Data`` and evaluate ``term``."""
    data = model.createData()
    pin.computeJointJacobians(model, data, q)
    pin.updateFramePlacements(model, data)
    return term.evaluate(model, data, q)


def rot_x(angle: float) -> np.ndarray:
    """Rotation matrix about x by ``angle`` [rad]."""
    return pin.utils.rotate("x", angle)


def rot_z(angle: float) -> np.ndarray:
    """Rotation matrix about z by ``angle`` [rad]."""
    return pin.utils.rotate("z", angle)
