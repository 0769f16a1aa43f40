"""End to end in the core: the collision-aware solve avoids an obstacle the plain solve hits."""
import numpy as np
import pinocchio as pin
import pytest

from ros2_ik.core.collision import (
    CollisionChecker,
    MinimumDistanceConstraint,
    PlanningScene,
    SceneObject,
    Sphere,
    pose_from_xyz_quat,
)
from ros2_ik.core.pose import PoseTarget
from ros2_ik.core.robot import Robot
from ros2_ik.core.solve import solve
from test_collision_distances import panda_files

READY = np.array([0, -0.785, 0, -2.356, 0, 1.571, 0.785])
MIN_DISTANCE_M = 0.005


@pytest.fixture(scope="module")
def setup():
    urdf, srdf = panda_files()
    robot = Robot.from_urdf(urdf, srdf)
    group = robot.group(tip="panda_hand_tcp",
                        locked={"panda_finger_joint1": 0.02, "panda_finger_joint2": 0.02})
    target = PoseTarget("panda_hand_tcp",
                        group.fk(READY + [0.3, 0.2, 0, 0.3, 0, -0.2, 0], "panda_hand_tcp"))
    plain = solve(group, target, READY, solver="lm", timeout_s=0.05, random_seed=1,
                  max_attempts=1)
    assert plain.success
    # a ball where the plain answer puts its elbow: reachable around, not through
    data = robot.model.createData()
    pin.forwardKinematics(robot.model, data, group.to_full_q(np.array(plain.q)))
    elbow = data.oMi[robot.model.getJointId("panda_joint4")].translation.copy()
    scene = PlanningScene.for_model(robot.model)
    scene.add(SceneObject("ball", [Sphere(0.06)], T_frame_object=pose_from_xyz_quat(elbow)))
    checker = CollisionChecker.from_urdf(robot.model, urdf, srdf, scene)
    return group, target, plain, checker


@pytest.mark.parametrize("solver", ["lm", "dls"])
def test_in_solve_avoidance_finds_another_answer_from_the_same_seed(setup, solver):
    group, target, plain, checker = setup
    assert checker.in_collision(group.to_full_q(np.array(plain.q)))
    constraint = MinimumDistanceConstraint(checker, MIN_DISTANCE_M, 0.05)
    result = solve(group, target, READY, solver=solver, timeout_s=0.5, random_seed=1,
                   max_attempts=1, constraints=[constraint])  # one attempt: no restart
    assert result.success, result.message
    report = checker.min_distance(group.to_full_q(np.array(result.q)))
    assert report.distance_m >= MIN_DISTANCE_M - 1e-4, report
