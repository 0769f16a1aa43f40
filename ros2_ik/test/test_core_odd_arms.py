"""Pose IK on arm shapes the random generator never draws, checked by independent FK.

``bench/random_arms.py`` draws DH-like arms about local z axes, 0.1-0.5 m links.  Users
bring other shapes: a SCARA, a gantry with a wrist, a 12-joint snake, axes written
unnormalised (``axis xyz="0 0 2"``, which the URDF format allows) or skew, a desk arm
of 3 cm reach and a crane of 45 m (the same shape), joints at one point, a 5-joint arm.
Each must solve FK-reachable poses (:func:`test_core_any_arm.solves_reachable_targets`:
a second pinocchio model of the URDF text judges every answer); where the chain has a
closed form, its branches hold the configuration the target was made from.
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import List, NamedTuple

import numpy as np
import pinocchio as pin
import pytest

from ros2_ik.core.model.robot import Robot
from ros2_ik.core.pose import PoseTarget
from ros2_ik.core.solve import solve
from test_core_any_arm import independent_fk, solves_reachable_targets

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from random_arms import _joint, _link  # noqa: E402


class OddArm(NamedTuple):
    """A hand-written arm: its URDF text, the group's ``base`` and ``tip``."""

    name: str
    urdf: str
    base: str = "base"
    tip: str = "tool"


def _arm(name: str, joints: List[tuple], scale: float = 1.0) -> OddArm:
    """URDF of a serial chain ``base`` -> joints -> ``tool`` (0.1 m past the last joint's origin).

    ``joints``: ``(kind, xyz, rpy, axis, limits)``; every length [m] times ``scale``.
    """
    links, parts, parent = [_link("base", inertial=False)], [], "base"
    tool = ("fixed", (0, 0, 0.1), (0, 0, 0), "", None)
    for k, (kind, xyz, rpy, axis, limits) in enumerate(joints + [tool]):
        child = "tool" if kind == "fixed" else f"link_{k + 1}"
        links.append(_link(child))
        parts.append(_joint(f"joint_{k + 1}", kind, parent, child,
                            [scale * v for v in xyz], rpy, axis, limits))
        parent = child
    return OddArm(name, f'<robot name="{name}">' + "".join(links + parts) + "</robot>")


def _r(xyz, axis="0 0 1", rpy=(0, 0, 0), limits=(-2.8, 2.8)):
    return ("revolute", xyz, rpy, axis, limits)


def _p(xyz, axis, limits):
    return ("prismatic", xyz, (0, 0, 0), axis, limits)


def _desk() -> List[tuple]:
    """A spherical-wrist 6R arm: 0.32 m reach with its tool at scale 1."""
    return [_r((0, 0, 0.1)), _r((0, 0, 0.05), "0 1 0"), _r((0.12, 0, 0), "0 1 0"),
            _r((0.1, 0, 0)), _r((0, 0, 0), "0 1 0"), _r((0, 0, 0))]


ARMS = [
    _arm("scara", [_r((0, 0, 0.4)), _r((0.35, 0, 0)), _p((0.3, 0, 0), "0 0 -1", (0, 0.3)),
                   _r((0, 0, -0.1))]),
    _arm("gantry_wrist", [_p((0, 0, 0), "1 0 0", (0, 2)), _p((0, 0, 0), "0 1 0", (0, 1.5)),
                          _p((0, 0, 0), "0 0 -1", (0, 0.8)), _r((0, 0, -0.1)),
                          _r((0, 0, -0.1), "0 1 0"), _r((0, 0, -0.1))]),
    _arm("snake_12", [_r((0, 0, 0.08), "0 1 0" if k % 2 == 0 else "1 0 0", limits=(-1.2, 1.2))
                      for k in range(12)]),
    _arm("unnormalised_axes", [_r((0, 0, 0.3), "0 0 2"), _r((0, 0.1, 0.2), "0 3 0"),
                               _r((0.4, 0, 0), "0 0.5 0"), _r((0.3, 0, 0), "1 0 0"),
                               _r((0, 0, 0), "0 0.2 0"), _r((0, 0, 0), "5 0 0")]),
    _arm("skew_axes", [_r((0, 0, 0.3), "0.3 0.5 0.8"), _r((0.1, 0.1, 0.2), "0.7 -0.2 0.1"),
                       _r((0.4, 0, 0), "0 1 1"), _r((0.3, 0, 0.05), "1 0.2 0"),
                       _r((0, 0.02, 0.1), "0 1 0.3"), _r((0, 0, 0.1), "0.1 0 1")]),
    _arm("desk_3cm", _desk(), scale=0.1),
    _arm("crane_45m", _desk(), scale=140.0),
    _arm("joints_at_one_point", [_r((0, 0, 0)), _r((0, 0, 0), "0 1 0"), _r((0, 0, 0), "1 0 0"),
                                 _p((0, 0, 0), "0 0 1", (0.1, 0.6)), _r((0, 0, 0)),
                                 _r((0, 0, 0), "0 1 0")]),
    _arm("five_joints", [_r((0, 0, 0.3)), _r((0, 0, 0.1), "0 1 0"), _r((0.3, 0, 0), "0 1 0"),
                         _r((0.3, 0, 0), "0 1 0"), _r((0, 0, 0.1))]),
]


@pytest.mark.parametrize("arm", ARMS, ids=lambda a: a.name)
def test_reachable_targets_are_found_on_odd_arms(arm):
    group = Robot.from_urdf(arm.urdf).group(base=arm.base, tip=arm.tip)
    solves_reachable_targets(arm, group, 23, 0.05)


@pytest.mark.parametrize("name", ["unnormalised_axes", "desk_3cm", "crane_45m", "five_joints"])
def test_every_branch_holds_the_target_configuration(name):
    """``analytic``'s branches hold the configuration FK made the target of (closed forms).

    Exact branches are far apart (>= 1e-3 rad here) except at singularities, which
    uniform draws miss; each returned branch is judged by the independent model too.
    """
    arm = next(a for a in ARMS if a.name == name)
    group = Robot.from_urdf(arm.urdf).group(base=arm.base, tip=arm.tip)
    rng = np.random.default_rng(24)
    for i in range(20):
        q = group.lower + (group.upper - group.lower) * rng.random(group.n)
        T = independent_fk(arm.urdf, group.joint_names, q, group.tip)
        result = solve(group, PoseTarget(group.tip, T), group.mid_configuration(), "analytic",
                       num_solutions=16, timeout_s=0.05, random_seed=i)
        branches = np.array([s.q for s in result.solutions])
        assert result.success and len(branches) >= 1, (name, i, result.message)
        assert np.abs(branches - q).max(axis=1).min() < 1e-6, (name, i, branches, q)
        for b in branches:
            T_b = independent_fk(arm.urdf, group.joint_names, b, group.tip)
            assert np.linalg.norm(T_b.translation - T.translation) <= 1e-4
            assert np.linalg.norm(pin.log3(T.rotation.T @ T_b.rotation)) <= 1e-3
