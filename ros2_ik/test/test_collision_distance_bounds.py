"""Drake's upper bound on the nearest distance and the named-pair distance constraint.

Gradients against central differences; values against a closed form (a sphere on a planar
2R arm and a scene sphere); solves by every built-in solver, each answer checked with
coal called on placements of our own forward kinematics (here, and in the panda scene by
``bench/constrained_distances.py``, the fuzz's measure), not the checker's code.
"""
import math
import sys
from pathlib import Path

import coal
import numpy as np
import pinocchio as pin
import pytest

from ros2_ik.core.collision import (CollisionChecker, PlanningScene, SceneObject, Sphere,
                                    load_scene_yaml, pose_from_xyz_quat)
from ros2_ik.core.constraints import DistanceConstraint, MinimumDistanceUpperBoundConstraint
from ros2_ik.core.errors import InvalidGeometry, InvalidGoal
from ros2_ik.core.model.robot import Robot
from ros2_ik.core.problem import Problem
from ros2_ik.core.solve import solve
from test_collision_constraint import BENCH_SCENE, kinematics, tiny_checker
from test_collision_distances import panda_files

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from constrained_distances import named_distance, pair_distances  # noqa: E402

L1, L2, TIP_R, BALL_R = 0.4, 0.3, 0.05, 0.1
BALL_AT = np.array([0.5, 0.4, 0.0])
PLANAR_URDF = f"""<robot name="planar">
  <link name="base"/>
  <joint name="j1" type="revolute"><parent link="base"/><child link="l1"/>
    <axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
  <link name="l1"/>
  <joint name="j2" type="revolute"><parent link="l1"/><child link="tip"/>
    <origin xyz="{L1} 0 0"/><axis xyz="0 0 1"/>
    <limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
  <link name="tip"><collision><origin xyz="{L2} 0 0"/>
    <geometry><sphere radius="{TIP_R}"/></geometry></collision></link>
</robot>"""
SOLVERS = ("lm", "sqp", "bfgs", "dls")
TOL_M = 1e-4


def planar():
    """(model, checker, group): the 2R arm, its tip sphere the only robot geometry."""
    scene = PlanningScene()
    scene.add(SceneObject("ball", [Sphere(BALL_R)], T_frame_object=pose_from_xyz_quat(
        BALL_AT.tolist())))
    robot = Robot.from_urdf(PLANAR_URDF)
    checker = CollisionChecker.from_urdf(robot.model, PLANAR_URDF, scene=scene)
    return robot.model, checker, robot.group(base="base", tip="tip")


def tip_centre(q):
    """Closed-form centre of the tip sphere [m] and its Jacobian (3, 2)."""
    a, b = q[0], q[0] + q[1]
    p = np.array([L1 * math.cos(a) + L2 * math.cos(b), L1 * math.sin(a) + L2 * math.sin(b), 0])
    J = np.array([[-p[1], -L2 * math.sin(b)], [p[0], L2 * math.cos(b)], [0.0, 0.0]])
    return p, J


def analytic_distance(q):
    """Sphere-sphere signed distance [m] and its gradient (2,), in closed form."""
    p, J = tip_centre(q)
    gap = p - BALL_AT
    norm = float(np.linalg.norm(gap))
    return norm - TIP_R - BALL_R, (gap / norm) @ J


@pytest.mark.parametrize("make", [
    lambda c: DistanceConstraint(c, "tip", "ball", 0.0, 0.1),
    lambda c: MinimumDistanceUpperBoundConstraint(c, 0.05)], ids=["named", "upper_bound"])
def test_planar_sphere_distance_matches_the_closed_form(make):
    model, checker, _ = planar()
    constraint = make(checker)
    rng = np.random.default_rng(3)
    for _ in range(20):
        q = rng.uniform(-3, 3, 2)
        value, jacobian = constraint.evaluate(model, kinematics(model, q), q)
        expected, gradient = analytic_distance(q)
        assert value[0] == pytest.approx(expected, abs=1e-7)
        np.testing.assert_allclose(jacobian[0], gradient, atol=1e-6)
        assert constraint.value(model, kinematics(model, q), q)[0] == pytest.approx(
            expected, abs=1e-7)


def central_differences(constraint, model, q, eps=1e-4):
    """(central, one-sided) differences (m, nv) of ``constraint`` along each joint."""
    value = constraint.value(model, kinematics(model, q), q)
    central, one_sided = [], []
    for i in range(model.nv):
        step = np.zeros(model.nv)
        step[i] = eps
        q_plus, q_minus = pin.integrate(model, q, step), pin.integrate(model, q, -step)
        plus = constraint.value(model, kinematics(model, q_plus), q_plus)
        minus = constraint.value(model, kinematics(model, q_minus), q_minus)
        central.append((plus - minus) / (2 * eps))
        one_sided.append((plus - value) / eps)
    return np.stack(central, axis=1), np.stack(one_sided, axis=1)


@pytest.mark.parametrize("make", [
    lambda c: DistanceConstraint(c, "tip", "crate", -0.05, 0.3),
    lambda c: DistanceConstraint(c, "l2", "post", 0.0, math.inf),
    lambda c: DistanceConstraint(c, "l1", "tip", 0.05, 0.5),
    lambda c: DistanceConstraint(c, "tip", "l2", 0.0, 0.5),  # adjacent: the checker skips it
    lambda c: MinimumDistanceUpperBoundConstraint(c, 0.02)],
    ids=["tip_box", "link_cylinder", "self", "adjacent", "upper_bound"])
def test_jacobian_matches_finite_differences(make):
    model, checker = tiny_checker()  # boxes, a cylinder, spheres; a prismatic joint
    constraint = make(checker)
    rng = np.random.default_rng(4)
    compared = 0
    for _ in range(25):
        q = np.array([rng.uniform(-3, 3), rng.uniform(-3, 3), rng.uniform(0.02, 0.28)])
        _, jacobian = constraint.evaluate(model, kinematics(model, q), q)
        central, one_sided = central_differences(constraint, model, q)
        if np.max(np.abs(central - one_sided)) > 1e-3:
            continue  # a kink: the nearest pair or features switch within the step
        np.testing.assert_allclose(jacobian, central, atol=2e-4, rtol=1e-3)
        compared += 1
    assert compared >= 15


def test_unknown_or_static_names_are_rejected_with_the_valid_ones():
    _, checker = tiny_checker()
    with pytest.raises(InvalidGeometry, match=r"geometry_b: unknown geometry 'table'; "
                                              r"valid: \[ball, crate, l1, l2, post, tip\]"):
        DistanceConstraint(checker, "tip", "table", 0.0, 1.0)
    with pytest.raises(InvalidGoal, match="one rigid body"):
        DistanceConstraint(checker, "ball", "crate", 0.0, 1.0)  # both fixed in the world
    with pytest.raises(InvalidGoal, match="distance_lower"):
        DistanceConstraint(checker, "tip", "ball", 0.2, 0.1)
    with pytest.raises(InvalidGoal, match="bound_m"):
        MinimumDistanceUpperBoundConstraint(checker, math.nan)


def test_scene_changes_are_followed():
    """A moved ball, an object added before it (its shapes' indices shift), then removed."""
    model, checker, _ = planar()
    constraint = DistanceConstraint(checker, "tip", "ball", 0.0, 0.1)
    q = np.array([0.3, -0.4])
    data = kinematics(model, q)
    assert constraint.value(model, data, q)[0] == pytest.approx(analytic_distance(q)[0],
                                                                abs=1e-7)
    checker.scene.add(SceneObject("a_sphere", [Sphere(0.3)]))  # sorts first: indices shift
    checker.scene.move("ball", pose_from_xyz_quat((BALL_AT + [0.0, 0.0, 0.2]).tolist()))
    p, _ = tip_centre(q)
    moved = float(np.linalg.norm(p - BALL_AT - [0, 0, 0.2])) - TIP_R - BALL_R
    assert constraint.value(model, data, q)[0] == pytest.approx(moved, abs=1e-7)
    checker.scene.remove("ball")
    with pytest.raises(InvalidGeometry, match="geometry_b: unknown geometry 'ball'"):
        constraint.value(model, data, q)


# ----------------------------------------------------------- solves, checked with coal here
def coal_distance(shape_a, X_world_a, shape_b, X_world_b) -> float:
    """Signed distance [m] of two coal shapes placed in the world, by coal itself."""
    result = coal.DistanceResult()
    return coal.distance(shape_a, coal.Transform3s(X_world_a.rotation, X_world_a.translation),
                         shape_b, coal.Transform3s(X_world_b.rotation, X_world_b.translation),
                         coal.DistanceRequest(), result)


def planar_tip_to_ball(q) -> float:
    """The planar tip sphere to the ball: our own pinocchio model, coal spheres made here."""
    model = pin.buildModelFromXML(PLANAR_URDF)
    data = model.createData()
    pin.framesForwardKinematics(model, data, q)
    X_tip = data.oMf[model.getFrameId("tip")] * pin.SE3(np.eye(3), np.array([L2, 0, 0]))
    return coal_distance(coal.Sphere(TIP_R), X_tip, coal.Sphere(BALL_R),
                         pin.SE3(np.eye(3), BALL_AT))


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("kind", ["distance", "upper_bound"])
def test_every_solver_brings_the_tip_to_the_ball(solver, kind):
    model, checker, group = planar()
    constraint = (DistanceConstraint(checker, "tip", "ball", 0.02, 0.03) if kind == "distance"
                  else MinimumDistanceUpperBoundConstraint(checker, 0.01))
    seed = np.array([-2.0, 0.5])  # far from the ball: each row starts violated
    assert planar_tip_to_ball(seed) > 0.3
    result = solve(group, Problem(group, None, [constraint]), seed, solver=solver,
                   timeout_s=0.5, random_seed=1, constraint_tolerance_m=TOL_M)
    assert result.success, result.message
    d = planar_tip_to_ball(np.asarray(result.q))
    lower, upper = (0.02, 0.03) if kind == "distance" else (-math.inf, 0.01)
    assert lower - TOL_M <= d <= upper + TOL_M, d


@pytest.fixture(scope="module")
def panda_scene():
    urdf, srdf = panda_files()
    robot = Robot.from_urdf(urdf, srdf)
    group = robot.group(tip="panda_hand_tcp",
                        locked={"panda_finger_joint1": 0.02, "panda_finger_joint2": 0.02})
    scene = PlanningScene.for_model(robot.model)
    scene.add_all(load_scene_yaml(BENCH_SCENE))
    checker = CollisionChecker.from_urdf(robot.model, urdf, srdf, scene)
    return robot, group, checker


@pytest.mark.parametrize("solver", SOLVERS)
def test_panda_hand_over_the_low_box_in_the_bench_scene(panda_scene, solver):
    """The hand 1-3 cm from the low box while the arm keeps 5 mm from everything else."""
    robot, group, checker = panda_scene
    from ros2_ik.core.constraints import MinimumDistanceConstraint
    constraints = [DistanceConstraint(checker, "panda_hand", "box_low", 0.01, 0.03),
                   MinimumDistanceUpperBoundConstraint(checker, 0.03),
                   MinimumDistanceConstraint(checker, 0.005, 0.05)]
    seed = group.mid_configuration()
    result = solve(group, Problem(group, None, constraints), seed, solver=solver,
                   timeout_s=2.0, random_seed=2, constraint_tolerance_m=TOL_M)
    assert result.success, result.message
    q_full = group.to_full_q(np.asarray(result.q))
    d = named_distance(checker, q_full, "panda_hand", "box_low")
    assert 0.01 - TOL_M <= d <= 0.03 + TOL_M, d
    nearest = pair_distances(checker, q_full).min()
    assert 0.005 - TOL_M <= nearest <= 0.03 + TOL_M, nearest


def test_verification_measures_the_violation_in_metres():
    """verify_pose rejects a configuration outside the bounds by the coal distance's excess."""
    from ros2_ik.core.verify import verify_pose
    _, checker, group = planar()
    q = np.array([-2.0, 0.5])
    d = planar_tip_to_ball(q)
    far = DistanceConstraint(checker, "tip", "ball", 0.0, 0.1, name="near_ball")
    ok, _, _, reason = verify_pose(group, None, q, [far])
    assert not ok and f"near_ball by {d - 0.1:.3g} m" in reason
    touch = MinimumDistanceUpperBoundConstraint(checker, d - 0.01)
    ok, _, _, reason = verify_pose(group, None, q, [touch])
    assert not ok and "minimum_distance_upper_bound by 0.01 m" in reason
    assert verify_pose(group, None, q, [DistanceConstraint(checker, "tip", "ball", d - 1e-3,
                                                           d + 1e-3)])[0]


@pytest.mark.parametrize("solver", SOLVERS)
def test_pose_target_with_an_elbow_distance_band(panda_scene, solver):
    """A hand pose plus the elbow's distance to the wall in a 1 cm band: the null space."""
    from ros2_ik.core.pose import PoseTarget
    robot, group, checker = panda_scene
    q_star = np.array([1.33, -1.14, 2.1, -1.45, -1.16, 1.58, -2.73])  # elbow 14 cm off
    d_star = named_distance(checker, group.to_full_q(q_star), "panda_link4", "wall")
    target = PoseTarget("panda_hand_tcp", group.fk(q_star, "panda_hand_tcp"))
    seed = group.mid_configuration()
    plain = solve(group, Problem(group, target), seed, solver="lm", timeout_s=1.0,
                  random_seed=3)
    d_plain = named_distance(checker, group.to_full_q(np.asarray(plain.q)), "panda_link4",
                             "wall")
    assert plain.success and abs(d_plain - d_star) > 0.02  # the band is not free
    band = DistanceConstraint(checker, "panda_link4", "wall", d_star - 0.005, d_star + 0.005)
    result = solve(group, Problem(group, target, [band]), seed, solver=solver, timeout_s=2.0,
                   random_seed=3, constraint_tolerance_m=TOL_M)
    assert result.success, result.message
    d = named_distance(checker, group.to_full_q(np.asarray(result.q)), "panda_link4", "wall")
    assert d_star - 0.005 - TOL_M <= d <= d_star + 0.005 + TOL_M
