"""A 6R arm on a rail (a prismatic first joint) or with a sliding tool (a prismatic last one).

* A prismatic joint's value is a length [m]: a rail longer than 2 pi m has no 2 pi
  equivalents, so it must never wrap (``Group.wraps``, the path's ``path_wraps``); lm
  solves every reachable pose on it.
* ``analytic`` sweeps the prismatic end joint over the closed form of the six rotations
  (:mod:`ros2_ik.core.closed_form.sweep`, :mod:`.held`'s slide).

Every SUCCESS is checked by pinocchio's FK on the full model and the limits
(:func:`dof_arms.verified`).
"""
import math
import sys
from pathlib import Path

import numpy as np
import pytest

from ros2_ik.core.closed_form import sweep
from ros2_ik.core.model.robot import Robot
from ros2_ik.core.model.robots import ARMS, urdf_text
from ros2_ik.core.path.segments import path_wraps
from ros2_ik.core.pose import PoseTarget
from ros2_ik.core.result import IKStatus
from ros2_ik.core.solve import prepare, solve

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import dof_arms  # noqa: E402

pytest.importorskip("eaik")

SLIDE = """<link name="slide_tip"/>
<joint name="tool_slide" type="prismatic"><parent link="{tip}"/><child link="slide_tip"/>
<origin xyz="0 0.02 0.05" rpy="0.2 0 0"/><axis xyz="0.6 0 0.8"/>
<limit lower="0.0" upper="0.3" effort="10" velocity="1"/></joint>"""


def _with(text: str, extra: str) -> str:
    return text.replace("</robot>", extra + "</robot>")


def railed(arm: str, half_length_m: float):
    """``arm`` on a rail of ``2 * half_length_m`` [m] under its root: the 7-joint group."""
    return dof_arms.on_rail(dof_arms.example(arm), half_length_m).group()[1]


def sliding(arm: str):
    """``arm`` with a prismatic tool slide after its tip: the 7-joint group."""
    spec = ARMS[arm]
    robot = Robot.from_urdf(_with(urdf_text(arm), SLIDE.format(tip=spec.tip)))
    return robot.group(base=spec.base, tip="slide_tip")


def _uniform(group, count: int, rng_seed: int):
    rng = np.random.default_rng(rng_seed)
    lo = np.where(np.isfinite(group.lower), group.lower, -math.pi)
    hi = np.where(np.isfinite(group.upper), group.upper, math.pi)
    return [rng.uniform(lo, hi) for _ in range(count)]


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


@pytest.mark.parametrize("solver", ["lm", "analytic"])
def test_every_pose_on_a_long_rail(solver):
    group = railed("ur5", 5.0)
    prepare(group, group.tip, solver=solver)
    start = group.mid_configuration()
    for k, q in enumerate(_uniform(group, 40, 3)):
        T = group.fk(q, group.tip)
        result = solve(group, PoseTarget(group.tip, T), start, solver, 0.05, 0, k)
        assert result.status is IKStatus.SUCCESS, (k, q.tolist(), result.message)
        assert dof_arms.verified(group, result.q, T), k


@pytest.mark.parametrize("make", [lambda: railed("kinova", 1.0), lambda: sliding("ur5")],
                         ids=["rail-first", "slide-last"])
def test_prismatic_end_is_swept(make):
    group = make()
    frame_id = group.robot.frame_id(group.tip)
    found = sweep.of(group, frame_id)
    assert found is not None, sweep.reason(group, frame_id)
    end = 0 if group.joint_names[0] == "rail_joint" else 6
    assert found.joint == end and found.end and found.slide
    start = group.mid_configuration()
    for k, q in enumerate(_uniform(group, 30, 5)):
        T = group.fk(q, group.tip)
        rows, ls = found.rows(float(q[end]), None, T.homogeneous)
        exact = np.asarray(rows)[~np.asarray(ls, dtype=bool)]
        assert len(exact), k
        assert np.all(exact[:, end] == q[end])
        gap = np.abs(np.remainder(exact - q + math.pi, 2 * math.pi) - math.pi).max(axis=1)
        assert gap.min() < 1e-6, k  # the configuration the pose came from is a branch
        result = solve(group, PoseTarget(group.tip, T), start, "analytic", 0.05, 0, k)
        assert result.status is IKStatus.SUCCESS, (k, result.message)
        assert dof_arms.verified(group, result.q, T), k


def test_several_solutions_on_a_rail_are_distinct_and_verified():
    group = railed("ur5", 1.0)
    q = _uniform(group, 1, 11)[0]
    T = group.fk(q, group.tip)
    result = solve(group, PoseTarget(group.tip, T), group.mid_configuration(), "analytic",
                   0.2, 0, 1, num_solutions=6)
    assert result.status is IKStatus.SUCCESS and len(result.solutions) == 6
    qs = np.array([s.q for s in result.solutions])
    assert all(dof_arms.verified(group, s, T) for s in qs)
    far = np.abs(qs[:, None] - qs[None]).max(axis=2) + np.eye(len(qs))
    assert far.min() > 1e-3


def test_a_prismatic_joint_inside_the_chain_is_not_swept():
    text = urdf_text("ur5").replace('<parent link="forearm_link"/>',
                                    '<parent link="forearm_slide"/>')
    robot = Robot.from_urdf(_with(text, """<link name="forearm_slide"/>
<joint name="forearm_joint" type="prismatic"><parent link="forearm_link"/>
<child link="forearm_slide"/><axis xyz="0 0 1"/>
<limit lower="0" upper="0.2" effort="1" velocity="1"/></joint>"""))
    group = robot.group(base="base_link", tip="tool0")
    assert group.joint_names[3] == "forearm_joint" and group.n == 7
    frame_id = robot.frame_id("tool0")
    assert sweep.of(group, frame_id) is None
    assert "prismatic joint may only be the first or the last" in sweep.reason(group, frame_id)
