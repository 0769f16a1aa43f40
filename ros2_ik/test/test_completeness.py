"""Completeness as a property (issue 38): feasible problems on unseen robots are solved.

A few hundred problems of ``bench/completeness.py`` (every combination: pose, position
only and per-axis weights, joint windows on wide-range and continuous joints, random
constraints, two frames, costs), each feasible by construction, on a spread of
example-robot-data chains and generated arms (prismatic joints and unaligned axes among
them). Each answer is judged by ``constrained_check`` (its own pinocchio model, metres
and radians), never by the solver. ``make fuzz`` runs thousands beside Drake.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from completeness_problems import COMBOS, FeasibleProblems, robot_cases  # noqa: E402
from constrained_check import checker_for  # noqa: E402
from constrained_ours import build, solve_spec  # noqa: E402
from ros2_ik.core import Robot  # noqa: E402

PROBLEMS = 500
#: Every so many example-robot-data chains is tried (all of them in ``make fuzz``).
STRIDE = 6


@pytest.fixture(scope="module")
def arms():
    cases = robot_cases(6)
    erd = [c for c in cases if c.kind == "example-robot-data"][::STRIDE]
    out = []
    for case in erd + [c for c in cases if c.kind == "random"]:
        group = Robot.from_urdf(case.urdf).group(base=case.base, tip=case.tip)
        out.append((case, group, FeasibleProblems(case, group),
                    checker_for(group, case.urdf)))
    return out


def test_feasible_problems_are_solved_and_every_success_holds(arms):
    rng = np.random.default_rng(7)
    failed, false_successes = [], []
    for i in range(PROBLEMS):
        case, group, problems, checker = arms[i % len(arms)]
        spec = problems.problem(rng, i, COMBOS[(i + i // len(arms)) % len(COMBOS)])
        result = solve_spec(group, build(spec, group), spec.seed, "lm", 1.0, random_seed=i)
        verdict = checker.check(result.q, spec)
        if result.status.name == "SUCCESS" and not verdict.ok:
            false_successes.append((case.name, spec.family, verdict.reason))
        if not verdict.ok:
            failed.append((case.name, spec.family, result.status.name, result.message[:120]))
    assert not false_successes
    assert len(failed) <= PROBLEMS // 100, failed
