"""The completeness fuzz's joint windows across +-pi (issue 48): the family is what it says.

``windows_pi`` problems (``bench/completeness_problems.py``) hold continuous joints in
windows that contain an odd multiple of pi, written anywhere on the line; ``q_star``
satisfies them and the tip box (checked by ``constrained_check``, outside the solver), and
lm solves them.  ``across_pi`` is checked against windows written here.
"""
from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from completeness_problems import (WINDOWS_PI_COMBO, FeasibleProblems,  # noqa: E402
                                   RobotCase, root_link_of)
from constrained_check import checker_for  # noqa: E402
from constrained_ours import build, solve_spec  # noqa: E402
from constrained_problems import Term  # noqa: E402
from ros2_ik.core import robots  # noqa: E402


@pytest.fixture(scope="module")
def pr2():
    """PR2's right arm (two continuous joints), as a fuzz robot case."""
    robot, group = robots.load_group("pr2_right")
    case = RobotCase("pr2_right", "example-robot-data", robots.urdf_text("pr2_right"),
                     group.base, group.tip)
    return case, group, FeasibleProblems(case, group), checker_for(group, case.urdf)


def test_across_pi_is_an_odd_multiple_of_pi_inside_a_continuous_window(pr2):
    _, group, problems, _ = pr2
    cont = [n for n, c in zip(group.joint_names, group.continuous) if c][0]
    other = [n for n, c in zip(group.joint_names, group.continuous) if not c][0]

    def across(lo, hi, name=cont):
        return problems.across_pi([Term("joint_bounds", dict(bounds={name: (lo, hi)}))])

    for lo, hi in ((2.67, 3.27), (-3.27, -2.67), (9.3, 9.5), (-9.5, -9.3), (3.0, 3.5)):
        assert across(lo, hi), (lo, hi)
    for lo, hi in ((2.9, 3.1), (-3.1, -2.9), (6.2, 6.4), (-0.3, 0.3), (3.2, 9.3)):
        assert not across(lo, hi), (lo, hi)
    assert not across(2.67, 3.27, other)  # a revolute joint: no seam


def test_windows_pi_problems_straddle_hold_at_q_star_and_are_solved(pr2):
    case, group, problems, checker = pr2
    rng = np.random.default_rng(3)
    written = set()
    for i in range(12):
        spec = problems.problem(rng, i, WINDOWS_PI_COMBO)
        assert spec.meta["across_pi"]
        assert checker.check(spec.q_star, spec).ok
        (window,) = [t for t in spec.constraints if t.kind == "joint_bounds"]
        written |= {round(0.5 * (lo + hi) / math.pi) for lo, hi in window.args["bounds"].values()}
        result = solve_spec(group, build(spec, group), spec.seed, "lm", 1.0, random_seed=i)
        assert result.status.name == "SUCCESS", result.message
        assert checker.check(result.q, spec).ok
    assert written >= {-1, 1} and written & {-3, 3}  # near -pi, pi and 2 pi further


def test_a_robot_without_continuous_joints_has_no_windows_pi():
    robot, group = robots.load_group("ur5")
    case = RobotCase("ur5", "example-robot-data", robots.urdf_text("ur5"),
                     root_link_of(group.robot.model), group.tip)
    with pytest.raises(ValueError, match="no continuous joint"):
        FeasibleProblems(case, group).problem(np.random.default_rng(0), 0, WINDOWS_PI_COMBO)
