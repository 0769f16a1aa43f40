"""Pose IK on arms the solver was not tuned for (issue 12), checked by independent FK.

Every catalogue arm (full robot URDFs of example-robot-data, the group from base to tip,
every other joint locked) and random arms (bench/random_arms.py, seeds the benchmark does
not use): FK-reachable targets, seed at mid-limits, each answer checked by a second
pinocchio model built from the URDF text.  Also: the generator's arms are what it says,
and the chain cut out of a full robot has the same kinematics.
"""
import sys
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

from ros2_ik.core import robots
from ros2_ik.core.model.robot import Robot
from ros2_ik.core.pose import PoseTarget
from ros2_ik.core.result import IKStatus
from ros2_ik.core.solve import solve

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from bench_arms import catalogue, chain_alone, random_family  # noqa: E402
from random_arms import random_arm  # noqa: E402
from test_core_arms import by_name  # noqa: E402

#: Random arms of the tests: seeds 100.. (the benchmark runs 0..19).
TEST_RANDOM = random_family(8, first=100)
TARGETS = 40


def independent_fk(urdf: str, names, values, frame: str, locked=None) -> pin.SE3:
    """``T_world_frame`` from a model of the URDF text alone (no group code).

    Joints not named are at ``locked[name]`` (the group's locked values) or 0.
    """
    model = pin.buildModelFromXML(urdf)
    data = model.createData()
    locked = locked or {}
    q = by_name(model, list(locked) + list(names), list(locked.values()) + list(values),
                pin.neutral(model))
    pin.framesForwardKinematics(model, data, q)
    return pin.SE3(data.oMf[model.getFrameId(frame)])


def solves_reachable_targets(arm, group, rng_seed: int, timeout_s: float) -> None:
    """Assert SUCCESS on TARGETS FK-reachable poses from mid-limits, by independent FK."""
    rng = np.random.default_rng(rng_seed)
    lo = np.where(group.continuous, -np.pi, group.lower)
    hi = np.where(group.continuous, np.pi, group.upper)
    seed = group.mid_configuration()
    for i in range(TARGETS):
        q = lo + (hi - lo) * rng.random(group.n)
        T = independent_fk(arm.urdf, group.joint_names, q, group.tip, group.locked)
        result = solve(group, PoseTarget(group.tip, T), seed, timeout_s=timeout_s,
                       random_seed=i)
        assert result.status is IKStatus.SUCCESS, (arm.name, i, result.message)
        T_got = independent_fk(arm.urdf, result.joint_names, result.q, group.tip, group.locked)
        assert np.linalg.norm(T_got.translation - T.translation) <= 1e-4
        assert np.linalg.norm(pin.log3(T.rotation.T @ T_got.rotation)) <= 1e-3
        assert np.all(result.q >= group.lower) and np.all(result.q <= group.upper)


@pytest.mark.parametrize("arm", catalogue(robots.ARMS) + TEST_RANDOM, ids=lambda a: a.name)
def test_reachable_targets_are_found_on_any_arm(arm):
    solves_reachable_targets(arm, arm.group()[1], 21, 0.05)


#: Mixed random arms whose prismatic joints reach up to 8 m: rails, gantry axes.
LONG_SLIDES = [random_arm(seed, mixed=True, slide_m=8.0) for seed in range(100, 110)]


@pytest.mark.parametrize("arm", LONG_SLIDES, ids=lambda a: a.name)
def test_reachable_targets_are_found_on_arms_with_long_slides(arm):
    """Prismatic joints longer than 2 pi m are lengths, never angles (no 2 pi wrap).

    Before c1db7e7 such a joint counted as wrapping: each answer was shifted by multiples
    of 2 pi m toward the seed and failed its check (a UR5 on a 10 m rail: 46 of 200
    reachable poses NO_SOLUTION).  The generator had only drawn ranges under 0.6 m.
    """
    group = Robot.from_urdf(arm.urdf).group(base=arm.base, tip=arm.tip)
    solves_reachable_targets(arm, group, 22, 0.1)


def test_random_arms_are_deterministic_serial_arms_on_a_body():
    kinds = set()
    for seed in range(30):
        arm = random_arm(seed)
        assert arm == random_arm(seed)
        robot = Robot.from_urdf(arm.urdf)
        group = robot.group(base=arm.base, tip=arm.tip)
        assert 4 <= group.n <= 8 and group.n == arm.n_joints
        assert group.joint_names == tuple(f"joint_{i}" for i in range(1, group.n + 1))
        # locked: the lift under the base, a two-joint branch, the finger after the tool
        assert set(group.locked) == {"lift_joint", "side_joint_1", "side_joint_2",
                                     "finger_joint"}
        kinds.update(("continuous" if c else "wraps" if w else "limited")
                     for c, w in zip(group.continuous, group.wraps))
    assert kinds == {"continuous", "wraps", "limited"}
    assert random_arm(3, n_joints=5).n_joints == 5


@pytest.mark.parametrize("name", ["tiago", "pr2_right", "baxter_left"])
def test_chain_alone_has_the_kinematics_of_the_full_robot_group(name):
    arm = catalogue([name])[0]
    robot, group = arm.group()
    alone = chain_alone(arm)
    chain_robot, chain_group = alone.group()
    assert chain_group.joint_names == group.joint_names
    assert len(chain_robot.joint_names) == group.n < len(robot.joint_names)
    T_world_base = independent_fk(arm.urdf, (), (), arm.base, group.locked)
    rng = np.random.default_rng(5)
    for _ in range(10):
        q = group.random_configuration(rng)
        full = independent_fk(arm.urdf, group.joint_names, q, arm.tip, group.locked)
        cut = independent_fk(alone.urdf, group.joint_names, q, arm.tip)
        np.testing.assert_allclose((T_world_base * cut).homogeneous, full.homogeneous,
                                   atol=1e-12)
