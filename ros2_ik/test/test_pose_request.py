"""The lean path of a plain pose request (pose_request) gives the driver's answer.

Same requests through ``solve`` (which takes the lean path for a plain pose request on
a prepared frame) and through the solver's own ``solve`` on a :class:`Problem` (the
path every other request takes): status, q, errors, message, iterations, restarts and
solutions equal to the bit, for targets the seed answers and for those it does not
(the driver then goes on, the attempt counted once; unreachable ones get the proof).
Every SUCCESS is checked against pinocchio's forward kinematics of the returned q.
"""
import json
import math
import os
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

from ros2_ik.core.model import robots
from ros2_ik.core.model.robot import Robot
from ros2_ik.core.pose import PoseTarget
from ros2_ik.core.problem import Problem
from ros2_ik.core.solve import prepare, solve
from ros2_ik.core.solvers import chain_kernel, pose_request, registry
from ros2_ik.core.solvers.options import SolveOptions
from ros2_ik.core.solvers.lm import LevenbergMarquardt

pytestmark = pytest.mark.skipif(not chain_kernel.available(), reason="numba not installed")

#: 7R arms of example-robot-data whose tip has no sweep lm runs (the compiled attempt's
#: lean path), a 6R arm with a closed form (the closed form's) and, from the vendor folder
#: when present, a 7R arm whose sweep lm runs after the seed's attempt (the two's).
ARMS = ("panda", "xarm7", "ur5", "kuka_lbr_iiwa14_r820")
REAL_URDFS = Path(os.environ.get("ROS2_IK_REAL_URDFS", "/work/shared/real_urdfs"))


def _vendor_group(name):
    manifest = REAL_URDFS / "manifest.json"
    if not manifest.is_file():
        pytest.skip(f"{REAL_URDFS} is absent (vendor URDFs are not in the repository)")
    entry = next(e for e in json.loads(manifest.read_text()) if e["name"] == name)
    srdf = REAL_URDFS / entry["srdf"] if entry.get("srdf") else None
    robot = Robot.from_urdf((REAL_URDFS / entry["file"]).read_text(),
                            srdf.read_text() if srdf and srdf.is_file() else None)
    return robot.group(base=entry["base"], tip=entry["tip"])


@pytest.fixture(scope="module", params=ARMS)
def arm(request):
    if request.param in robots.ARMS:
        _, group = robots.load_group(request.param)
    else:
        group = _vendor_group(request.param)
    prepare(group, group.tip)
    return group


def _requests(group, count, rng):
    """(target, seed) pairs: reachable from near and far seeds, loose, tight, unreachable."""
    mid = group.mid_configuration()
    for k in range(count):
        q = group.random_configuration(rng)
        T = group.fk(q, group.tip)
        seed = mid if k % 2 else group.clamp(q + rng.normal(0.0, 0.4, group.n))
        if k % 5 == 3:
            T = pin.SE3(T.rotation, 3.0 * T.translation)  # beyond the reach bound
        tolerances = {1: (1e-2, 5e-2), 4: (1e-6, 1e-5)}.get(k % 5, (1e-4, 1e-3))
        yield PoseTarget(group.tip, T, position_tolerance_m=tolerances[0],
                         orientation_tolerance_rad=tolerances[1]), seed


def _driver(group, target, seed, k):
    options = SolveOptions(timeout_s=10.0, max_attempts=20, random_seed=k)
    return registry.create("lm").solve(Problem(group, target), group.clamped_seed(seed),
                                       options)


def test_lean_answers_are_the_drivers(arm, monkeypatch):
    group = arm
    calls = []
    answer = pose_request.answer
    monkeypatch.setattr(pose_request, "answer", lambda *a: calls.append(1) or answer(*a))
    statuses, swept_after = set(), 0
    rng = np.random.default_rng(7)
    for k, (target, seed) in enumerate(_requests(group, 60, rng)):
        lean = solve(group, target, seed, "lm", timeout_s=10.0, max_attempts=20,
                     random_seed=k)
        driver = _driver(group, target, seed, k)
        assert lean.status == driver.status
        np.testing.assert_array_equal(lean.q, driver.q)
        assert (lean.restarts, lean.iterations, lean.message) == \
            (driver.restarts, driver.iterations, driver.message)
        assert lean.position_error_m == driver.position_error_m or \
            math.isnan(lean.position_error_m) and math.isnan(driver.position_error_m)
        assert len(lean.solutions) == len(driver.solutions)
        if lean.success:
            M = pin.SE3(group.fk(lean.q, group.tip))
            assert np.linalg.norm(M.translation - target.T_ref_target.translation) \
                <= target.position_tolerance_m
            assert np.linalg.norm(pin.log3(target.T_ref_target.rotation.T @ M.rotation)) \
                <= target.orientation_tolerance_rad
            assert group.within_limits(lean.q)
        statuses.add((lean.status.name, lean.restarts > 0))
        # the sweep's answer after the seed's attempt, which it counts
        swept_after += lean.success and "swept" in lean.message and lean.iterations > 0
    assert len(calls) == 60  # every request took the lean path
    # The seed (or closed form) answered some, the proof some; where the compiled
    # attempt runs first, a sweep (if the chain has one lm runs) or the driver went on.
    assert ("SUCCESS", False) in statuses and ("NO_SOLUTION", False) in statuses
    plan = pose_request.plan(group, group.tip, LevenbergMarquardt)
    assert plan.form is not None or (swept_after > 0 if plan.swept
                                     else ("SUCCESS", True) in statuses)


def test_other_requests_take_the_driver(arm, monkeypatch):
    """Weights, several solutions, a jump limit, constraints: never the lean path."""
    group = arm
    monkeypatch.setattr(pose_request, "answer", lambda *a: pytest.fail("lean path taken"))
    T = group.fk(group.mid_configuration() + 0.1, group.tip)
    seed = group.mid_configuration()
    solve(group, PoseTarget(group.tip, T, weights=(1, 1, 1, 1, 1, 0)), seed)
    solve(group, PoseTarget(group.tip, T, position_only=True), seed)
    solve(group, PoseTarget(group.tip, T), seed, num_solutions=2, max_attempts=3)
    solve(group, PoseTarget(group.tip, T), seed, max_joint_jump_rad=0.5)


def test_lean_path_keeps_the_errors(arm):
    """Bad input raises as on the driver's path, naming the field."""
    from ros2_ik.core import errors
    group = arm
    T = group.fk(group.mid_configuration(), group.tip)
    seed = group.mid_configuration()
    with pytest.raises(errors.InvalidFrame):
        solve(group, PoseTarget(group.tip, T, reference_frame="no_such_frame"), seed)
    with pytest.raises(errors.InvalidSeed, match="seed"):
        solve(group, PoseTarget(group.tip, T), seed[:-1])
    with pytest.raises(errors.InvalidArgument, match="timeout_s"):
        solve(group, PoseTarget(group.tip, T), seed, timeout_s=-1.0)
    with pytest.raises(errors.InvalidArgument, match="max_attempts"):
        solve(group, PoseTarget(group.tip, T), seed, max_attempts=-1)
    with pytest.raises(errors.InvalidArgument, match="constraint_tolerance_m"):
        solve(group, PoseTarget(group.tip, T), seed, constraint_tolerance_m=0.0)


@pytest.mark.parametrize("tolerance", [1, 10**200], ids=["int_1", "int_1e200"])
def test_int_tolerances_are_solved_as_floats(arm, tolerance):
    """An int tolerance (as large as 1e200) is squared as a float: no OverflowError.

    The lean path and the driver's (weights alike but not the default) both answer.
    """
    group = arm
    T = group.fk(group.mid_configuration() + 0.1, group.tip)
    seed = group.mid_configuration()
    for weights in ((1.0,) * 6, (2.0,) * 6):
        result = solve(group, PoseTarget(group.tip, T, weights=weights,
                                         position_tolerance_m=tolerance,
                                         orientation_tolerance_rad=tolerance), seed)
        assert result.success, result.message


def test_empty_lists_take_the_lean_path(arm, monkeypatch):
    """The node's empty constraint list is a plain request too, with its tolerances."""
    group = arm
    calls = []
    answer = pose_request.answer
    monkeypatch.setattr(pose_request, "answer", lambda *a: calls.append(1) or answer(*a))
    T = group.fk(group.mid_configuration() + 0.1, group.tip)
    seed = group.mid_configuration()
    lean = solve(group, PoseTarget(group.tip, T), seed, constraints=[], costs=[],
                 constraint_tolerance_m=1e-4, constraint_tolerance_rad=1e-3, random_seed=3)
    driver = _driver(group, PoseTarget(group.tip, T), seed, 3)
    assert calls == [1]
    assert lean.success and driver.success
    np.testing.assert_array_equal(lean.q, driver.q)
    assert (lean.iterations, lean.message) == (driver.iterations, driver.message)
