"""LM with a minimum-distance constraint: pose first, then the clearance, in one attempt."""
import numpy as np
import pinocchio as pin
import pytest

from ros2_ik.core.collision import (CollisionChecker, PlanningScene, SceneObject, Sphere,
                                    pose_from_xyz_quat)
from ros2_ik.core.constraints import MinimumDistanceConstraint
from ros2_ik.core.model.robot import Robot
from ros2_ik.core.pose import PoseTarget
from ros2_ik.core.problem import Problem
from ros2_ik.core.solvers import attempts, chain_kernel
from ros2_ik.core.solvers.options import SolveOptions
from ros2_ik.core.solvers.budget import Budget
from ros2_ik.core.solvers.lm import LevenbergMarquardt
from ros2_ik.core.terms import Constraint
from test_collision_distances import panda_files

READY = np.array([0, -0.785, 0, -2.356, 0, 1.571, 0.785])
MIN_DISTANCE_M = 0.005


def arm_and_target():
    """(robot, urdf, srdf, group, target): the Panda arm and a pose reached from READY."""
    urdf, srdf = panda_files()
    robot = Robot.from_urdf(urdf, srdf)
    group = robot.group(tip="panda_hand_tcp",
                        locked={"panda_finger_joint1": 0.02, "panda_finger_joint2": 0.02})
    target = PoseTarget("panda_hand_tcp",
                        group.fk(READY + [0.3, 0.2, 0, 0.3, 0, -0.2, 0], "panda_hand_tcp"))
    return robot, urdf, srdf, group, target


@pytest.fixture(scope="module")
def panda():
    robot, urdf, srdf, group, target = arm_and_target()
    plain = one_attempt(LevenbergMarquardt(), Problem(group, target))
    assert plain.success
    return robot, urdf, srdf, group, target, plain


def one_attempt(solver, problem):
    """One attempt from READY (no restart), generous time."""
    return solver.solve(problem, READY.copy(),
                        SolveOptions(timeout_s=0.5, max_attempts=1, random_seed=1))


def checker_with_ball(panda, offset_m):
    """A checker with a ball of 6 cm at the plain answer's elbow, moved by ``offset_m``."""
    robot, urdf, srdf, group, _, plain = panda
    data = robot.model.createData()
    pin.forwardKinematics(robot.model, data, group.to_full_q(np.asarray(plain.q)))
    elbow = data.oMi[robot.model.getJointId("panda_joint4")].translation + offset_m
    scene = PlanningScene.for_model(robot.model)
    scene.add(SceneObject("ball", [Sphere(0.06)], T_frame_object=pose_from_xyz_quat(elbow)))
    return CollisionChecker.from_urdf(robot.model, urdf, srdf, scene)


def clearance(panda, checker, q):
    return checker.min_distance(panda[3].to_full_q(np.asarray(q))).distance_m


def test_a_collision_free_pose_answer_is_returned_as_is(panda):
    _, _, _, group, target, plain = panda
    checker = checker_with_ball(panda, np.array([0.0, 0.0, 1.0]))  # far above
    constraint = MinimumDistanceConstraint(checker, MIN_DISTANCE_M, 0.05)
    result = one_attempt(LevenbergMarquardt(), Problem(group, target, [constraint]))
    assert result.success, result.message
    np.testing.assert_allclose(result.q, plain.q, atol=1e-12)


def test_a_colliding_pose_answer_is_pushed_out_in_the_same_attempt(panda):
    _, _, _, group, target, plain = panda
    checker = checker_with_ball(panda, np.array([0.0, 0.0, 0.075]))  # grazes the elbow
    assert clearance(panda, checker, plain.q) < 0.0
    solver = LevenbergMarquardt()  # one attempt allowed: its colliding answer is pushed out
    constraint = MinimumDistanceConstraint(checker, MIN_DISTANCE_M, 0.05)
    result = one_attempt(solver, Problem(group, target, [constraint]))
    assert result.success, result.message
    assert result.restarts == 0
    assert clearance(panda, checker, result.q) >= MIN_DISTANCE_M - 1e-4


def test_a_colliding_pose_answer_restarts_before_any_push_out(panda):
    """Unlimited attempts: the first two colliding pose answers are dropped, not repaired."""
    _, _, _, group, target, plain = panda
    checker = checker_with_ball(panda, np.array([0.0, 0.0, 0.075]))
    constraint = MinimumDistanceConstraint(checker, MIN_DISTANCE_M, 0.05)
    solver = LevenbergMarquardt()
    problem = Problem(group, target, [constraint])
    solver.options = SolveOptions(timeout_s=0.5, random_seed=1)  # max_attempts=0: no limit
    state = solver.setup(problem)
    first = solver.local_solve(state, READY.copy(), Budget(0.5))
    assert not first.converged and first.iterations == plain.iterations
    np.testing.assert_allclose(first.q, plain.q, atol=1e-12)  # the pose answer, as it was
    solver.local_solve(state, READY.copy(), Budget(0.5))
    third = solver.local_solve(state, READY.copy(), Budget(0.5))  # pushed out, 4 its at most
    assert state.rejected == 3
    assert plain.iterations < third.iterations <= plain.iterations + 4


def test_deep_collisions_are_left_for_another_start(panda):
    _, _, _, group, target, plain = panda
    checker = checker_with_ball(panda, np.zeros(3))  # the ball swallows the elbow
    constraint = MinimumDistanceConstraint(checker, MIN_DISTANCE_M, 0.05)
    result = LevenbergMarquardt().solve(Problem(group, target, [constraint]), READY.copy(),
                                        SolveOptions(timeout_s=0.5, random_seed=1))
    assert result.success, result.message
    assert result.restarts >= 1
    assert clearance(panda, checker, result.q) >= MIN_DISTANCE_M - 1e-4


class _Ceiling(Constraint):
    """Tip height <= 2 m: not a minimum-distance constraint."""

    name = "ceiling"

    def __init__(self, frame_id):
        self.frame_id = frame_id

    lower_bound = property(lambda self: np.array([-np.inf]))
    upper_bound = property(lambda self: np.array([2.0]))

    def evaluate(self, model, data, q):
        z = data.oMf[self.frame_id].translation[2]
        J = pin.getFrameJacobian(model, data, self.frame_id, pin.LOCAL_WORLD_ALIGNED)
        return np.array([z]), J[2:3]


def test_other_constraints_keep_the_stacked_loop(panda):
    robot, _, _, group, target, _ = panda
    checker = checker_with_ball(panda, np.array([0.0, 0.0, 1.0]))
    ceiling = _Ceiling(robot.model.getFrameId("panda_hand_tcp"))
    mixed = Problem(group, target, [MinimumDistanceConstraint(checker), ceiling])
    assert isinstance(LevenbergMarquardt().setup(mixed), attempts.StackedAttempt)
    assert isinstance(LevenbergMarquardt().setup(
        Problem(group, target, [MinimumDistanceConstraint(checker)])), attempts.PoseFirst)


def _box_and_bound(panda):
    """Position box +-5 mm and a 0.02 rad orientation bound around the plain answer's tip."""
    from ros2_ik.core.constraints import OrientationConstraint, PositionConstraint
    robot, _, _, group, _, plain = panda
    T = group.fk(np.asarray(plain.q), "panda_hand_tcp")
    p = T.translation
    return [PositionConstraint(robot.model, "universe", p - 5e-3, p + 5e-3,
                               "panda_hand_tcp", np.zeros(3)),
            OrientationConstraint(robot.model, "universe", T.rotation, "panda_hand_tcp",
                                  np.eye(3), 0.02)]


@pytest.mark.parametrize("offset", [(0.0, 0.0, 1.0), (0.0, 0.0, 0.075)])
def test_constraint_problems_solve_the_clearance_last(panda, offset):
    """No pose target: the other constraints first, then the clearance (far / grazing ball)."""
    from ros2_ik.core.verify import verify_pose
    _, _, _, group, _, _ = panda
    checker = checker_with_ball(panda, np.array(offset))
    constraints = _box_and_bound(panda) + [MinimumDistanceConstraint(checker, MIN_DISTANCE_M,
                                                                     0.05)]
    problem = Problem(group, None, constraints)
    state = LevenbergMarquardt().setup(problem)
    assert isinstance(state, attempts.ClearanceLast)
    # the box and the bound run compiled (numba installed), the clearance in Python
    assert state.cheap == chain_kernel.available()
    # cheap to set up: no Python residuals until a stage needs them (~90 us each)
    assert state.state._first is None and state.state._full is None
    result = LevenbergMarquardt().solve(problem, READY.copy(),
                                        SolveOptions(timeout_s=0.5, random_seed=1))
    assert result.success, result.message
    assert clearance(panda, checker, result.q) >= MIN_DISTANCE_M - 1e-4
    assert verify_pose(group, None, result.q, constraints[:2])[0]


def test_a_compiled_clearance_last_attempt_tries_the_seed_before_ranking(panda, monkeypatch):
    """Its attempt (~0.3 ms) costs less than ranking the library (~0.6 ms): seed first."""
    from ros2_ik.core.solvers import seed_library
    if not chain_kernel.available():
        pytest.skip("numba not installed: the first stage runs in Python, ranking goes first")
    _, _, _, group, _, _ = panda
    checker = checker_with_ball(panda, np.array([0.0, 0.0, 1.0]))
    problem = Problem(group, None, _box_and_bound(panda) + [
        MinimumDistanceConstraint(checker, MIN_DISTANCE_M, 0.05)])
    solver = LevenbergMarquardt()
    solver.options = SolveOptions(timeout_s=0.5, random_seed=1)
    assert solver.cheap_attempts(solver.setup(problem))
    ranked = []
    rank = seed_library.constraint_starts
    monkeypatch.setattr(seed_library, "constraint_starts",
                        lambda *a, **k: ranked.append(1) or rank(*a, **k))
    result = LevenbergMarquardt().solve(problem, READY.copy(),
                                        SolveOptions(timeout_s=0.5, random_seed=1))
    assert result.success and result.restarts == 0, result.message
    assert not ranked  # the seed's attempt solved it: the library was never ranked


def test_clearance_last_pushes_out_every_nth_rejection_only():
    """Colliding first-stage solutions restart at once; every n-th is pushed out, once."""
    from types import SimpleNamespace

    from ros2_ik.core.solvers import clearance_last
    from ros2_ik.core.solvers.budget import Budget
    calls = []
    state = SimpleNamespace(rejected=0, clear=lambda q: False)

    def push(q, q0, budget):
        calls.append((q.copy(), q0.copy()))
        return q + 10.0, 4, True, 0.0

    results = [clearance_last.attempt(state, np.zeros(2), Budget(1.0),
                                      lambda q, b: (q + 1.0, 3, True, 0.0), push, 3)
               for _ in range(6)]
    assert [done for _, _, done, _ in results] == [False, False, True] * 2
    assert len(calls) == 2
    # pushed out from the first stage's solution, not from the attempt's start
    assert all(np.array_equal(q, np.ones(2)) and not q0.any() for q, q0 in calls)
    assert results[2][1] == 3 + 4  # iterations of both stages
    assert state.rejected == 6
