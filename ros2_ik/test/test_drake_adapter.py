"""The bench's Drake adapter gives Drake the problems as they are meant.

Each answer SNOPT claims must pass ``bench/constrained_check.py`` (its own pinocchio
model, 1e-4 m / 1e-4 rad), and SNOPT must solve these feasible problems.

A ``pose`` term with one free position axis (the completeness fuzz's ``position``
family) fixes the whole orientation.  The adapter's orientation points are held in the
non-free axes only: with points along x and y and x free, the x axis could point
backwards (answers half a turn off, the fuzz's "pose by 3.14"); with points along the
two non-free axes only, the tilts towards the free axis held to ~5e-4 rad.

A window on a continuous joint is one on the circle (``[9.2, 9.7]`` is ``[2.9, 3.4]``):
Drake parses example-robot-data's Kinova's continuous joints, which have ``<limit>``
tags, as revolute joints within +-2 pi, where such a window was infeasible (SNOPT solved
25 of 34 ``windows_pi`` problems on it, after ~5,000 instant attempts each).

Skipped where pydrake is not installed.
"""
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("pydrake", reason="Drake is a benchmark dependency")
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from completeness_problems import (WINDOWS_PI_COMBO, FeasibleProblems,  # noqa: E402
                                   RobotCase, pose_term, root_link_of)
from constrained_check import checker_for  # noqa: E402
from constrained_drake import DrakeArm  # noqa: E402
from constrained_problems import Kinematics, ProblemSpec  # noqa: E402
from ros2_ik.core import Robot, robots  # noqa: E402


@pytest.mark.parametrize("free_axis", [0, 1, 2])
def test_snopt_answers_to_a_free_axis_pose_hold(free_axis):
    urdf = robots.urdf_text("ur5")
    group = robots.load_group("ur5")[1]
    drake, checker, kin = DrakeArm(urdf, group), checker_for(group, urdf), Kinematics(group)
    rng = np.random.default_rng(free_axis)
    claimed = 0
    for i in range(10):
        q_star = group.random_configuration(rng)
        spec = ProblemSpec("position", "ur5", i, q_star, group.random_configuration(rng),
                           (pose_term(kin, q_star, group.tip, free_axis=free_axis),))
        attempt = drake.solve(spec, "drake_snopt", 5.0, np.random.default_rng(i))
        if attempt.claimed_success:
            claimed += 1
            verdict = checker.check(attempt.q, spec)
            assert verdict.ok, (i, verdict.reason)
    assert claimed >= 8


def test_snopt_solves_windows_on_the_circle_beyond_the_plants_limits():
    urdf = (robots.data_dir() / "kinova_description/robots/kinova.urdf").read_text()
    robot = Robot.from_urdf(urdf)
    group = robot.group(base=root_link_of(robot.model), tip="j2s6s200_link_6")
    assert group.continuous.sum() >= 2
    drake, checker = DrakeArm(urdf, group), checker_for(group, urdf)
    problems = FeasibleProblems(RobotCase("kinova", "example-robot-data", urdf,
                                          group.base, group.tip), group)
    rng = np.random.default_rng(1)
    beyond = 0
    for i in range(6):
        spec = problems.problem(rng, i, WINDOWS_PI_COMBO)
        (window,) = [t for t in spec.constraints if t.kind == "joint_bounds"]
        beyond += any(abs(lo + hi) > 4 * np.pi for lo, hi in window.args["bounds"].values())
        attempt = drake.solve(spec, "drake_snopt", 5.0, np.random.default_rng(i))
        assert attempt.claimed_success, (i, window.args["bounds"])
        verdict = checker.check(attempt.q, spec)
        assert verdict.ok, (i, verdict.reason)
    assert beyond >= 3  # windows written beyond +-2 pi (the plant's limits)
