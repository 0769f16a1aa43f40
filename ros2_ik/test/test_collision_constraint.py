"""MinimumDistanceConstraint: gradients vs central finite differences, rows, threads."""
import os
import threading

import numpy as np
import pinocchio as pin
import pytest

from ros2_ik.core.collision import (Box, CollisionChecker, Cylinder, PlanningScene, SceneObject,
                                    Sphere, load_scene_yaml, pose_from_xyz_quat)
from ros2_ik.core.collision.meshes import environment_share_dirs
from ros2_ik.core.constraints import MinimumDistanceConstraint
from ros2_ik.core.constraints.collision import pair_gradients
from ros2_ik.core.errors import InvalidArgument

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH_SCENE = os.path.join(HERE, "..", "..", "bench", "panda_scene.yaml")
EPS = 1e-4  # GJK (tolerance 1e-8 m) is accurate to a few 1e-9 m on curved shapes


def panda_checker(scene):
    for share in environment_share_dirs():
        folder = os.path.join(share, "example-robot-data", "robots", "panda_description")
        if os.path.isdir(folder):
            urdf = open(os.path.join(folder, "urdf", "panda.urdf")).read()
            srdf = open(os.path.join(folder, "srdf", "panda.srdf")).read()
            model = pin.buildModelFromXML(urdf)
            return model, CollisionChecker.from_urdf(model, urdf, srdf, scene)
    pytest.skip("example-robot-data is not installed")


def tiny_checker():
    from test_collision_distances import TINY_URDF  # same folder; pytest puts it on sys.path

    scene = PlanningScene()
    scene.add(SceneObject("ball", [Sphere(0.1)], T_frame_object=pose_from_xyz_quat([.6, .3, 0])))
    scene.add(SceneObject("crate", [Box((0.2, 0.3, 0.1))],
                          T_frame_object=pose_from_xyz_quat([-.5, .4, .1], [.1, .2, .3, .9])))
    scene.add(SceneObject("post", [Cylinder(0.05, 0.8)],
                          T_frame_object=pose_from_xyz_quat([0.3, -0.6, 0])))
    model = pin.buildModelFromXML(TINY_URDF)
    return model, CollisionChecker.from_urdf(model, TINY_URDF, scene=scene)


def kinematics(model, q):
    data = model.createData()
    pin.computeJointJacobians(model, data, q)
    pin.updateFramePlacements(model, data)
    return data


def finite_difference_check(model, checker, q, max_distance_m):
    """Compare analytic pair gradients with central differences; return pairs compared."""
    data = kinematics(model, q)
    pairs = checker.distances_from_data(data)
    ks = np.flatnonzero(pairs.distances_m < max_distance_m)
    analytic = pair_gradients(model, data, pairs, ks)
    compared = 0
    for row, k in zip(analytic, ks):
        central, one_sided = np.zeros(model.nv), np.zeros(model.nv)
        d0 = pairs.distances_m[k]
        for i in range(model.nv):
            step = np.zeros(model.nv)
            step[i] = EPS
            d_plus = checker.distances(pin.integrate(model, q, step)).distances_m[k]
            d_minus = checker.distances(pin.integrate(model, q, -step)).distances_m[k]
            central[i] = (d_plus - d_minus) / (2 * EPS)
            one_sided[i] = (d_plus - d0) / EPS
        if np.max(np.abs(central - one_sided)) > 1e-3:
            continue  # a kink (closest features switch): no derivative to compare with
        np.testing.assert_allclose(row, central, atol=2e-4, rtol=1e-3,
                                   err_msg=f"pair {pairs.compiled.pair_names[k]}")
        compared += 1
    return compared


def test_pair_gradients_match_finite_differences_on_primitives():
    model, checker = tiny_checker()
    rng = np.random.default_rng(0)
    compared = 0
    for _ in range(15):
        q = np.array([rng.uniform(-3, 3), rng.uniform(-3, 3), rng.uniform(0.02, 0.28)])
        compared += finite_difference_check(model, checker, q, np.inf)
    assert compared >= 30


def test_pair_gradients_match_finite_differences_on_panda_scene():
    scene = PlanningScene()
    scene.add_all(load_scene_yaml(BENCH_SCENE))
    model, checker = panda_checker(scene)
    rng = np.random.default_rng(1)
    ready = np.array([0, -0.785, 0, -2.356, 0, 1.571, 0.785, 0.02, 0.02])
    compared = 0
    for _ in range(6):
        q = ready.copy()
        q[:7] += rng.normal(scale=0.5, size=7)
        q = np.clip(q, model.lowerPositionLimit, model.upperPositionLimit)
        compared += finite_difference_check(model, checker, q, 0.15)
    assert compared >= 10


@pytest.mark.parametrize("formulation", ["pairs", "smooth"])
def test_constraint_jacobian_matches_finite_differences(formulation):
    model, checker = tiny_checker()
    constraint = MinimumDistanceConstraint(checker, 0.02, 0.3, max_pairs=4,
                                           formulation=formulation)
    rng = np.random.default_rng(2)
    compared = 0
    for _ in range(20):
        q = np.array([rng.uniform(-3, 3), rng.uniform(-3, 3), rng.uniform(0.02, 0.28)])
        value, jacobian = constraint.evaluate(model, kinematics(model, q), q)
        central = np.zeros_like(jacobian)
        one_sided = np.zeros_like(jacobian)
        for i in range(model.nv):
            step = np.zeros(model.nv)
            step[i] = EPS
            q_plus, q_minus = pin.integrate(model, q, step), pin.integrate(model, q, -step)
            plus = constraint.evaluate(model, kinematics(model, q_plus), q_plus)[0]
            minus = constraint.evaluate(model, kinematics(model, q_minus), q_minus)[0]
            central[:, i] = (plus - minus) / (2 * EPS)
            one_sided[:, i] = (plus - value) / EPS
        smooth_rows = np.max(np.abs(central - one_sided), axis=1) < 1e-3
        np.testing.assert_allclose(jacobian[smooth_rows], central[smooth_rows],
                                   atol=2e-4, rtol=1e-3)
        compared += int(np.count_nonzero(np.any(jacobian[smooth_rows] != 0, axis=1)))
    assert compared >= 10


def test_pair_rows_are_the_closest_pairs_within_influence():
    model, checker = tiny_checker()
    constraint = MinimumDistanceConstraint(checker, 0.01, 0.5, max_pairs=3)
    q = np.array([0.4, -0.3, 0.1])
    value, jacobian = constraint.evaluate(model, kinematics(model, q), q)
    everything = np.sort(checker.distances(q).distances_m)
    near = everything[everything < 0.5][:3]
    np.testing.assert_allclose(value[:len(near)], near, atol=1e-9)
    assert np.all(value[len(near):] == 0.5)
    assert np.all(jacobian[len(near):] == 0.0)
    assert constraint.lower_bound.shape == (3,) and np.all(constraint.lower_bound == 0.01)
    assert np.all(np.isinf(constraint.upper_bound))


def test_smooth_row_is_one_at_a_single_pair_on_the_bound():
    model, checker = tiny_checker()
    q = np.array([0.4, -0.3, 0.1])
    d_min = float(np.min(checker.distances(q).distances_m))
    constraint = MinimumDistanceConstraint(checker, d_min, d_min + 1e-3, formulation="smooth")
    value, _ = constraint.evaluate(model, kinematics(model, q), q)
    assert value[0] == pytest.approx(1.0, rel=1e-9)
    assert constraint.violation(value)[0] == pytest.approx(0.0, abs=1e-9)


@pytest.mark.parametrize("formulation", ["pairs", "smooth"])
def test_value_and_holds_agree_with_evaluate(formulation):
    """value() is evaluate()'s value; holds() is 'no violation' (both from FK alone)."""
    scene = PlanningScene()
    scene.add_all(load_scene_yaml(BENCH_SCENE))
    model, checker = panda_checker(scene)
    constraint = MinimumDistanceConstraint(checker, 0.01, 0.05, formulation=formulation)
    rng = np.random.default_rng(4)
    verdicts = set()
    for _ in range(60):
        q = rng.uniform(model.lowerPositionLimit, model.upperPositionLimit)
        expected, _ = constraint.evaluate(model, kinematics(model, q), q)
        fk_only = model.createData()
        pin.forwardKinematics(model, fk_only, q)
        np.testing.assert_array_equal(constraint.value(model, fk_only, q), expected)
        holds = constraint.holds(model, fk_only, q)
        assert holds == (constraint.violation(expected).max() == 0.0)
        verdicts.add(holds)
    assert verdicts == {True, False}


def test_rejects_influence_not_beyond_minimum():
    _, checker = tiny_checker()
    with pytest.raises(InvalidArgument, match="influence_distance_m"):
        MinimumDistanceConstraint(checker, 0.05, 0.05)
    with pytest.raises(InvalidArgument, match="formulation"):
        MinimumDistanceConstraint(checker, 0.0, 0.05, formulation="hinge")


def test_concurrent_evaluations_match_sequential_ones():
    """Bit-identical whatever the thread and history (no shared GeometryData, no warm start)."""
    model, checker = tiny_checker()
    constraint = MinimumDistanceConstraint(checker, 0.0, 0.4, max_pairs=4)
    rng = np.random.default_rng(3)
    configurations = [np.array([rng.uniform(-3, 3), rng.uniform(-3, 3), rng.uniform(0, .3)])
                      for _ in range(40)]
    expected = [constraint.evaluate(model, kinematics(model, q), q) for q in configurations]
    mismatches = []

    def worker(order):
        for i in order:
            q = configurations[i]
            value, jacobian = constraint.evaluate(model, kinematics(model, q), q)
            if not (np.array_equal(value, expected[i][0]) and
                    np.array_equal(jacobian, expected[i][1])):
                mismatches.append(i)

    threads = [threading.Thread(target=worker, args=(list(range(40))[::step],))
               for step in (1, -1, 1, -1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert mismatches == []


def test_cost_gradient_matches_finite_differences_and_vanishes_when_far():
    from ros2_ik.core.costs import MinimumDistanceCost

    model, checker = tiny_checker()
    cost = MinimumDistanceCost(checker, influence_distance_m=0.3, weight=2.0)
    rng = np.random.default_rng(4)
    compared = 0
    for _ in range(15):
        q = np.array([rng.uniform(-3, 3), rng.uniform(-3, 3), rng.uniform(0.02, 0.28)])
        value, gradient = cost.evaluate(model, kinematics(model, q), q)
        central = np.zeros(model.nv)
        for i in range(model.nv):
            step = np.zeros(model.nv)
            step[i] = EPS
            q_plus, q_minus = pin.integrate(model, q, step), pin.integrate(model, q, -step)
            central[i] = (cost.evaluate(model, kinematics(model, q_plus), q_plus)[0]
                          - cost.evaluate(model, kinematics(model, q_minus), q_minus)[0])
        central /= 2 * EPS
        np.testing.assert_allclose(gradient, central, atol=1e-3, rtol=1e-3)
        compared += value > 0
    assert compared >= 5
    far = MinimumDistanceCost(checker, influence_distance_m=-10.0)
    q = np.array([0.4, -0.3, 0.1])
    value, gradient = far.evaluate(model, kinematics(model, q), q)
    assert value == 0.0 and not gradient.any()
