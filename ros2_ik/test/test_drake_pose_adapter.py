"""The bench's Drake adapter gives a pose with a free position axis as it is meant.

A ``pose`` term with one free position axis (the completeness fuzz's ``position``
family) fixes the whole orientation.  Each answer SNOPT claims must pass
``bench/constrained_check.py`` (its own pinocchio model, 1e-4 m / 1e-4 rad).  The
adapter's orientation points are held in the non-free axes only: with points along x and
y and x free, the x axis could point backwards (answers half a turn off, the fuzz's
"pose by 3.14"); with points along the two non-free axes only, the tilts towards the
free axis held to ~5e-4 rad.  Skipped where pydrake is not installed.
"""
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("pydrake", reason="Drake is a benchmark dependency")
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from completeness_problems import pose_term  # noqa: E402
from constrained_check import checker_for  # noqa: E402
from constrained_drake import DrakeArm  # noqa: E402
from constrained_problems import Kinematics, ProblemSpec  # noqa: E402
from ros2_ik.core import robots  # noqa: E402


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
