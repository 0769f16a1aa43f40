"""Drake solves the two distance constraints through the bench's adapter, as lm does.

The same problem descriptions (``bench/constrained_distances.py`` kinds) go to Drake SNOPT
(``bench/constrained_drake.py``, the Panda + scene plant of the collision benchmark) and to
our lm; each answer is judged by ``bench/constrained_check.py`` (coal on our own forward
kinematics).  Skipped where pydrake is not installed (``bench/requirements-collision.txt``).
"""
import math
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("pydrake", reason="Drake is a benchmark dependency")
BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import constrained_distances as distances  # noqa: E402
from constrained_bench import Arm, _drake_min_distance  # noqa: E402
from constrained_drake import DrakeArm  # noqa: E402
from constrained_ours import build, solve_spec  # noqa: E402
from constrained_problems import ProblemSpec, Term  # noqa: E402


@pytest.fixture(scope="module")
def panda():
    arm = Arm("panda", need_drake=False, need_scene=True)
    drake = DrakeArm(None, arm.group, _drake_min_distance(arm))
    return arm, drake


def spec_of(arm, terms, index=0):
    seed = arm.group.mid_configuration()
    return ProblemSpec("distances", "panda", index, seed, seed, tuple(terms))


def approach_box():
    return [Term("distance", dict(geometry_a="panda_hand", geometry_b="box_low",
                                  distance_lower=0.01, distance_upper=0.03)),
            Term("min_distance_upper", dict(bound_m=0.03))]


@pytest.mark.parametrize("solver", ["drake_snopt", "lm"])
def test_hand_near_the_low_box(panda, solver):
    arm, drake = panda
    spec = spec_of(arm, approach_box())
    if solver == "lm":
        result = solve_spec(arm.group, build(spec, arm.group, arm.collision[0]), spec.seed,
                            "lm", 1.0, 3)
        assert result.success, result.message
        q = result.q
    else:
        attempt = drake.solve(spec, solver, 20.0, np.random.default_rng(3))
        assert attempt.claimed_success
        q = attempt.q
    verdict = arm.checker.check(q, spec)
    assert verdict.ok, verdict.reason
    d = distances.named_distance(arm.collision[0], arm.group.to_full_q(np.asarray(q)),
                                 "panda_hand", "box_low")
    assert 0.01 - 1e-4 <= d <= 0.03 + 1e-4


def test_both_solve_drawn_feasible_problems(panda):
    """Problems drawn around a random configuration: Drake and lm, both checked."""
    arm, drake = panda
    rng = np.random.default_rng(11)
    solved = {"drake_snopt": 0, "lm": 0}
    for index in range(6):
        q_star = arm.group.random_configuration(rng)
        spec = spec_of(arm, [distances.draw(rng, arm.collision, q_star, "feasible")], index)
        assert arm.checker.check(q_star, spec).ok  # feasible by construction
        attempt = drake.solve(spec, "drake_snopt", 10.0, np.random.default_rng(index))
        solved["drake_snopt"] += attempt.claimed_success and arm.checker.check(attempt.q, spec).ok
        result = solve_spec(arm.group, build(spec, arm.group, arm.collision[0]), spec.seed,
                            "lm", 0.5, index)
        if result.success:
            assert arm.checker.check(result.q, spec).ok, spec
            solved["lm"] += 1
    assert solved["lm"] == 6, solved
    assert solved["drake_snopt"] >= 5, solved


def test_one_name_of_several_shapes_is_refused_for_an_upper_bound(panda):
    arm, drake = panda
    spec = spec_of(arm, [Term("distance", dict(geometry_a="panda_hand", geometry_b="shelf",
                                               distance_lower=0.0,
                                               distance_upper=0.1))])
    with pytest.raises(ValueError, match="one geometry pair"):
        drake.program(spec)
    spec = spec_of(arm, [Term("distance", dict(geometry_a="panda_hand", geometry_b="shelf",
                                               distance_lower=0.02,
                                               distance_upper=math.inf))])
    drake.program(spec)  # one lower bound per shape pair: the same set as ours
