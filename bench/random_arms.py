"""Random serial arms as URDF text: arms nobody has tuned the solver for.

Each arm is DH-like: 4-8 revolute or continuous joints about their local z, between
links with random offsets (along x and z, sometimes sideways: offset wrists), random
twists (mostly 0 or +-pi/2, sometimes any angle) and random limits (some wider than
2 pi).  Like a user's robot, the arm sits on a body with more joints than the group:
a prismatic lift under its base, a second two-joint branch and a finger after the
tool, all locked when the group is taken from ``base`` to ``tip``.

The benchmark (``bench/ik_bench.py --random-arms K``) and the tests use the same
generator: ``random_arm(seed)`` is deterministic in ``seed``.
"""
from __future__ import annotations

import math
from typing import List, NamedTuple

import numpy as np


class RandomArm(NamedTuple):
    """A generated robot: its URDF text, the group's ``base`` and ``tip`` frames."""

    name: str
    urdf: str
    base: str
    tip: str
    n_joints: int


_INERTIAL = ('<inertial><origin xyz="0 0 0" rpy="0 0 0"/><mass value="1.0"/>'
             '<inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/>'
             '</inertial>')


def _link(name: str, inertial: bool = True) -> str:
    return f'<link name="{name}">{_INERTIAL if inertial else ""}</link>'


def _joint(name: str, kind: str, parent: str, child: str, xyz, rpy, axis="0 0 1",
           limits=None) -> str:
    xyz_s = " ".join(f"{v:.6f}" for v in xyz)
    rpy_s = " ".join(f"{v:.6f}" for v in rpy)
    out = (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/>'
           f'<child link="{child}"/><origin xyz="{xyz_s}" rpy="{rpy_s}"/>')
    if kind != "fixed":
        out += f'<axis xyz="{axis}"/>'
    if limits is not None:
        lo, hi = limits
        out += f'<limit lower="{lo:.6f}" upper="{hi:.6f}" effort="100" velocity="2.0"/>'
    elif kind == "continuous":
        out += '<limit effort="100" velocity="2.0"/>'
    return out + "</joint>"


def _twist(rng: np.random.Generator) -> float:
    """Return the twist between consecutive axes [rad]: mostly 0 or +-pi/2, sometimes any."""
    if rng.random() < 0.2:
        return float(rng.uniform(-math.pi, math.pi))
    return float(rng.choice([0.0, math.pi / 2, -math.pi / 2]))


def _offset(rng: np.random.Generator) -> List[float]:
    """Return the link offset [m]: along x (a) and z (d), sometimes sideways (offset wrist)."""
    a = rng.uniform(0.05, 0.35) if rng.random() < 0.6 else 0.0
    d = rng.uniform(0.05, 0.35) if rng.random() < 0.6 else 0.0
    y = rng.uniform(-0.1, 0.1) if rng.random() < 0.3 else 0.0
    if a == 0.0 and d == 0.0:
        d = rng.uniform(0.02, 0.1)  # no two joints at one point
    return [a, y, d]


def _limits(rng: np.random.Generator):
    """Return None (continuous), +-2 pi (wrapping revolute) or a random range [rad]."""
    u = rng.random()
    if u < 0.15:
        return None
    if u < 0.3:
        return (-2.0 * math.pi, 2.0 * math.pi)
    return (-float(rng.uniform(0.5, math.pi)), float(rng.uniform(0.5, math.pi)))


def _mixed_joint(rng: np.random.Generator, kind: str, limits, slide_m: float = 0.3):
    """Return a mixed arm's joint: prismatic one time in five, unaligned one in five.

    A prismatic joint's limits are drawn in ``[-slide_m, 0]`` and ``[slide_m / 6, slide_m]``.
    """
    if rng.random() < 0.2:
        kind, limits = "prismatic", (-float(rng.uniform(0.0, slide_m)),
                                     float(rng.uniform(slide_m / 6.0, slide_m)))
    axis = "0 0 1"
    if rng.random() < 0.2:
        v = rng.normal(size=3)
        axis = " ".join(f"{x:.6f}" for x in v / np.linalg.norm(v))
    return kind, limits, axis


def random_arm(seed: int, n_joints: int = 0, mixed: bool = False,
               slide_m: float = 0.3) -> RandomArm:
    """Return random arm number ``seed`` (``n_joints`` 0: drawn in 4..8).

    ``mixed``: also prismatic joints (one in five) and unaligned axes (any unit vector,
    one in five), 3..8 joints; a different family of arms (named ``mixed<seed>``).
    ``slide_m`` [m]: how far a mixed arm's prismatic joints reach (0.3: the same arms as
    without it); another value names the arm ``slide<slide_m>m<seed>``: a rail, a
    gantry axis longer than 2 pi m.
    """
    rng = np.random.default_rng(seed)
    n = int(n_joints) if n_joints else int(rng.integers(3 if mixed else 4, 9))
    parts = [_link("world_link", inertial=False), _link("torso_link"),
             _joint("lift_joint", "prismatic", "world_link", "torso_link", [0, 0, 0.3],
                    [0, 0, 0], "0 0 1", (0.0, 0.4))]
    for k in (1, 2):  # a second branch (another arm, a head): locked
        parent = "torso_link" if k == 1 else "side_link_1"
        parts += [_link(f"side_link_{k}"),
                  _joint(f"side_joint_{k}", "revolute", parent, f"side_link_{k}",
                         [0.0, 0.2, 0.1], [math.pi / 2, 0, 0], limits=(-1.5, 1.5))]
    mount_rpy = [float(v) for v in rng.uniform(-math.pi, math.pi, 3)]
    parts += [_link("arm_base_link"),
              _joint("mount_joint", "fixed", "torso_link", "arm_base_link",
                     [0.1, -0.2, 0.2], mount_rpy)]
    parent = "arm_base_link"
    for i in range(1, n + 1):
        limits = _limits(rng)
        kind = "continuous" if limits is None else "revolute"
        xyz = _offset(rng) if i > 1 else [0.0, 0.0, float(rng.uniform(0.05, 0.3))]
        rpy = [_twist(rng), 0.0, 0.0] if i > 1 else [0.0, 0.0, 0.0]
        axis = "0 0 1"
        if mixed:
            kind, limits, axis = _mixed_joint(rng, kind, limits, slide_m)
        parts += [_link(f"link_{i}"),
                  _joint(f"joint_{i}", kind, parent, f"link_{i}", xyz, rpy, axis, limits)]
        parent = f"link_{i}"
    tool = [float(rng.uniform(-0.05, 0.05)), 0.0, float(rng.uniform(0.0, 0.15))]
    parts += [_link("tool_link"),
              _joint("tool_joint", "fixed", parent, "tool_link", tool, [0, 0, 0]),
              _link("finger_link"),
              _joint("finger_joint", "prismatic", "tool_link", "finger_link", [0, 0, 0.02],
                     [0, 0, 0], "0 1 0", (0.0, 0.04))]
    name = f"mixed{seed}" if mixed else f"random{seed}"
    if mixed and slide_m != 0.3:
        name = f"slide{slide_m:g}m{seed}"
    urdf = f'<?xml version="1.0"?><robot name="{name}">' + "".join(parts) + "</robot>"
    return RandomArm(name, urdf, "arm_base_link", "tool_link", n)
