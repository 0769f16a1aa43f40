"""A pose request leaves no reference cycle behind: its objects are freed when it returns.

A cycle per request (a target holding its resolution, which holds the target) made the
garbage collector run every ~70 plain requests, freeing ~1,000 objects in 0.1-0.2 ms
inside whichever request it fell (docs/design.md).  Counted with the collector off and
``gc.DEBUG_SAVEALL``: every object a collection finds unreachable is kept and counted.
"""
import gc

import numpy as np
import pytest

from ros2_ik.core.constraints import PositionConstraint
from ros2_ik.core.costs import PostureCost
from ros2_ik.core.maps.batch import GroupSpec, solve_batch
from ros2_ik.core.model import robots
from ros2_ik.core.pose import PoseTarget
from ros2_ik.core.problem import Problem
from ros2_ik.core.solve import prepare, solve


@pytest.fixture(scope="module")
def panda():
    group = robots.load_group("panda")[1]
    prepare(group, group.tip)
    return group


def _cyclic_garbage(run) -> list:
    """Run ``run()`` with the collector off; return what a collection then finds unreachable."""
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        run()
        gc.collect()
        found = list(gc.garbage)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
    return found


def test_plain_pose_requests_leave_no_cycles(panda):
    """The seed's attempt, the restarts after it, and a target never solved."""
    rng = np.random.default_rng(4)
    seed = panda.mid_configuration()
    targets = [panda.fk(panda.random_configuration(rng), panda.tip) for _ in range(40)]

    def run():
        restarts = 0
        for k, T in enumerate(targets):
            result = solve(panda, PoseTarget(panda.tip, T), seed, "lm", 0.05, 0, k)
            assert result.success
            restarts += result.restarts
        assert restarts > 0  # the driver's path ran too, not only the lean one
        PoseTarget(panda.tip, targets[0]).compile(panda)

    found = _cyclic_garbage(run)
    assert not found, sorted({type(o).__name__ for o in found})


@pytest.mark.parametrize("solver", ["lm", "sqp", "bfgs"])
def test_problems_with_costs_leave_no_cycles(panda, solver):
    """lm's compiled attempt; sqp and bfgs on the stacked residuals (``solvers.residuals``)."""
    rng = np.random.default_rng(5)
    model = panda.robot.model
    nominal = panda.to_full_q(panda.mid_configuration())
    problems = []
    for _ in range(6):
        q = panda.random_configuration(rng)
        p = panda.fk(q, panda.tip).translation
        box = PositionConstraint(model, frame_A="universe", frame_B=panda.tip,
                                 p_BQ=np.zeros(3), p_AQ_lower=p - 1e-3, p_AQ_upper=p + 1e-3)
        problems.append(Problem(panda, None, [box], [PostureCost(model, nominal)]))

    def run():
        for k, problem in enumerate(problems):
            solve(panda, problem, panda.mid_configuration(), solver, 0.2, 3, k)

    found = _cyclic_garbage(run)
    assert not found, sorted({type(o).__name__ for o in found})


def test_batch_calls_leave_no_cycles(panda):
    """A batch call on a spec already used builds no group (a group is a cycle of its own)."""
    rng = np.random.default_rng(6)
    T = np.stack([panda.fk(panda.random_configuration(rng), panda.tip).homogeneous
                  for _ in range(5)])
    spec = GroupSpec(arm="panda")
    solve_batch(spec, T[:1])

    found = _cyclic_garbage(lambda: solve_batch(spec, T, timeout_s=0.05))
    assert not found, sorted({type(o).__name__ for o in found})


def test_the_count_sees_a_cycle(panda):
    """The counting itself: a cycle made inside ``run`` is found."""
    def run():
        a = []
        a.append(a)

    assert len(_cyclic_garbage(run)) == 1
