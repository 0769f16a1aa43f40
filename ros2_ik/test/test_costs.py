"""Costs: gradients against finite differences, hand-made values, invalid arguments."""
from __future__ import annotations

import math

import numpy as np
import pinocchio as pin
import pytest
from test_constraints_fixtures import (
    FRAMES, ROBOTS, evaluate_at, planar_2r, random_configurations, rot_x, rot_z, tiny)

from ros2_ik.core.constraints import finite_difference, update_kinematics
from ros2_ik.core.costs import AngleBetweenVectorsCost, OrientationCost, PositionCost, PostureCost
from ros2_ik.core.errors import InvalidFrame, InvalidGoal

NAN, INF = math.nan, math.inf
C_PSD = np.array([[2.0, 0.3, 0.0], [0.3, 1.0, -0.2], [0.0, -0.2, 0.5]])


def _costs(model, tip, other, third):
    rng = np.random.default_rng(7)
    q_nominal = random_configurations(model, 1, seed=11)[0]
    return {
        "position": PositionCost(model, other, [0.1, -0.2, 0.3], tip, [0.05, 0, 0.1], C_PSD),
        "position_world": PositionCost(model, "universe", [0.3, 0.1, 0.5], tip, [0, 0, 0.1],
                                       np.diag([1.0, 0.0, 3.0])),
        "orientation": OrientationCost(model, other, rot_x(0.3), tip, rot_z(-0.8), 2.5),
        "angle": AngleBetweenVectorsCost(model, third, [1, 0, 1], tip, [0, 2, -1], 1.5),
        "posture": PostureCost(model, q_nominal, rng.uniform(0.1, 2.0, model.nv)),
    }


CASES = [(robot, cost) for robot in FRAMES for cost in _costs(tiny(), *FRAMES["tiny"])]


@pytest.mark.parametrize("robot,cost_name", CASES)
def test_gradient_matches_finite_differences(robot, cost_name):
    model = ROBOTS[robot]()
    cost = _costs(model, *FRAMES[robot])[cost_name]
    data = model.createData()
    for q in random_configurations(model, 8, seed=len(cost_name)):
        update_kinematics(model, data, q)
        value, gradient = cost.evaluate(model, data, q)
        assert isinstance(value, float) and value >= 0.0
        assert gradient.shape == (model.nv,)
        numeric = finite_difference(cost, model, data, q)
        scale = max(1.0, float(np.abs(numeric).max()))
        np.testing.assert_allclose(gradient, numeric, atol=1e-6 * scale, err_msg=cost_name)


def test_posture_gradient_on_a_free_flyer_uses_the_difference_jacobian():
    model = pin.buildModelFromXML(
        "<robot name='r'><link name='a'/><link name='b'/><joint name='f' type='floating'>"
        "<parent link='a'/><child link='b'/></joint></robot>")
    cost = PostureCost(model, pin.randomConfiguration(model, -np.ones(7), np.ones(7)),
                       np.arange(1.0, 7.0))
    data = model.createData()
    for q in random_configurations(model, 5, seed=2):
        np.testing.assert_allclose(evaluate_at(cost, model, q)[1],
                                   finite_difference(cost, model, data, q), atol=1e-6)


def test_position_cost_value():
    """Tip at (1, 0.5, 0); P at (1.5, 0, 0); C = diag(1, 2, 3): 0.25 + 2 * 0.25 = 0.75."""
    cost = PositionCost(planar_2r(), "universe", [1.5, 0, 0], "tip", [0, 0, 0],
                        np.diag([1.0, 2.0, 3.0]))
    value, _ = evaluate_at(cost, planar_2r(), np.array([0.0, math.pi / 2]))
    assert value == pytest.approx(0.75)


@pytest.mark.parametrize("C", [C_PSD, np.diag([1.0, 0.0, 3.0]), np.diag([2.0, 2.0, 2.0])],
                         ids=["full", "diagonal", "isotropic"])
def test_position_cost_gauss_newton_residual_is_sqrt_two_C(C):
    """``|r|^2 = 2 e^T C e`` (the value) at random configurations, diagonal C or not."""
    model = planar_2r()
    cost = PositionCost(model, "universe", [1.5, 0.2, 0.1], "tip", [0.1, 0, 0], C)
    data = model.createData()
    for q in np.random.default_rng(3).uniform(-3.0, 3.0, (10, model.nq)):
        update_kinematics(model, data, q)
        r, J = cost.gauss_newton(model, data, q)
        value, gradient = cost.evaluate(model, data, q)
        assert float(r @ r) == pytest.approx(2.0 * value, rel=1e-12, abs=1e-15)
        np.testing.assert_allclose(2.0 * r @ J, 2.0 * gradient, atol=1e-12)


def test_position_cost_keeps_the_symmetric_part_of_C():
    asymmetric = np.array([[1.0, 2.0, 0], [0.0, 1.0, 0], [0, 0, 1.0]])
    a = PositionCost(planar_2r(), "universe", [1.5, 0, 0], "tip", [0, 0, 0], asymmetric)
    value, _ = evaluate_at(a, planar_2r(), np.array([0.0, math.pi / 2]))  # error (0.5, -0.5)
    assert value == pytest.approx(0.25 + 0.25 - 0.5)


@pytest.mark.parametrize("angle", [0.0, 0.4, 2.0, 3.1])
def test_orientation_and_angle_costs_are_c_one_minus_cos(angle):
    model = planar_2r()
    q = np.array([0.3, angle - 0.3])
    orientation = OrientationCost(model, "universe", np.eye(3), "tip", np.eye(3), 2.0)
    vectors = AngleBetweenVectorsCost(model, "universe", [0, 1, 0], "tip", [0, 3, 0], 4.0)
    assert evaluate_at(orientation, model, q)[0] == pytest.approx(2 * (1 - math.cos(angle)))
    assert evaluate_at(vectors, model, q)[0] == pytest.approx(4 * (1 - math.cos(angle)))


def test_orientation_cost_offsets():
    model = planar_2r()
    cost = OrientationCost(model, "universe", rot_x(0.5), "tip", np.eye(3), 1.0)
    assert evaluate_at(cost, model, np.zeros(2))[0] == pytest.approx(1 - math.cos(0.5))


def test_posture_cost_value_and_continuous_wrap():
    """Continuous joints: dq is the short way round (no 2 pi jump)."""
    model = tiny()
    q_nominal = pin.neutral(model)
    j2 = model.joints[model.getJointId("j2")]
    q_nominal[j2.idx_q:j2.idx_q + 2] = [math.cos(3.1), math.sin(3.1)]
    weights = np.array([1.0, 2.0, 3.0, 4.0])
    cost = PostureCost(model, q_nominal, weights)
    q = q_nominal.copy()
    q[j2.idx_q:j2.idx_q + 2] = [math.cos(-3.1), math.sin(-3.1)]
    q[0] = 0.5
    value, gradient = cost.evaluate(model, None, q)
    wrap = 2 * math.pi - 6.2
    assert value == pytest.approx(0.5 * (1.0 * 0.25 + 2.0 * wrap ** 2))
    np.testing.assert_allclose(gradient[[j2.idx_v, 0]], [2.0 * wrap, 0.5], atol=1e-9)
    scalar = PostureCost(model, q_nominal, 3.0)
    assert scalar.evaluate(model, None, q_nominal)[0] == 0.0


def test_cost_names():
    model = planar_2r()
    assert PostureCost(model, np.zeros(2)).name == "posture"
    assert PositionCost(model, "universe", [0] * 3, "tip", [0] * 3, np.eye(3)).name == \
        "position_cost(tip)"
    assert OrientationCost(model, "universe", np.eye(3), "tip", np.eye(3), 1.0,
                           name="level").name == "level"


BAD = [
    (lambda m: PositionCost(m, "universe", [0, NAN, 0], "tip", [0] * 3, np.eye(3)), "p_AP"),
    (lambda m: PositionCost(m, "universe", [0] * 3, "tip", [0] * 2, np.eye(3)), "p_BQ"),
    (lambda m: PositionCost(m, "universe", [0] * 3, "tip", [0] * 3, -np.eye(3)), "C"),
    (lambda m: PositionCost(m, "universe", [0] * 3, "tip", [0] * 3, np.eye(2)), "C"),
    (lambda m: PositionCost(m, "universe", [0] * 3, "tip", [0] * 3,
                            np.diag([1.0, INF, 1.0])), "C"),
    (lambda m: OrientationCost(m, "universe", np.eye(3) * 2, "tip", np.eye(3), 1.0), "R_AbarA"),
    (lambda m: OrientationCost(m, "universe", np.eye(3), "tip", -np.eye(3), 1.0), "R_BbarB"),
    (lambda m: OrientationCost(m, "universe", np.eye(3), "tip", np.eye(3), -1.0), "c"),
    (lambda m: OrientationCost(m, "universe", np.eye(3), "tip", np.eye(3), NAN), "c"),
    (lambda m: AngleBetweenVectorsCost(m, "universe", [0, 0, 0], "tip", [1, 0, 0], 1.0), "a_A"),
    (lambda m: AngleBetweenVectorsCost(m, "universe", [1, 0, 0], "tip", [0, 0, 0], 1.0), "b_B"),
    (lambda m: AngleBetweenVectorsCost(m, "universe", [1, 0, 0], "tip", [1, 0, 0], INF), "c"),
    (lambda m: PostureCost(m, np.zeros(3)), "q_nominal"),
    (lambda m: PostureCost(m, [0.0, NAN]), "q_nominal"),
    (lambda m: PostureCost(m, np.zeros(2), [1.0, -1.0]), "weights"),
    (lambda m: PostureCost(m, np.zeros(2), [1.0]), "weights"),
    (lambda m: PostureCost(m, np.zeros(2), NAN), "weights"),
    (lambda m: PostureCost(m, np.zeros(2), name=3), "name"),
]


@pytest.mark.parametrize("factory,arg", BAD, ids=[f"{a}-{i}" for i, (_, a) in enumerate(BAD)])
def test_invalid_cost_arguments(factory, arg):
    with pytest.raises(InvalidGoal, match=arg):
        factory(planar_2r())


def test_posture_rejects_unnormalised_continuous_joints():
    with pytest.raises(InvalidGoal, match="q_nominal"):
        PostureCost(tiny(), np.zeros(tiny().nq))


@pytest.mark.parametrize("factory", [
    lambda m, f: PositionCost(m, f, [0] * 3, "tip", [0] * 3, np.eye(3)),
    lambda m, f: PositionCost(m, "tip", [0] * 3, f, [0] * 3, np.eye(3)),
    lambda m, f: OrientationCost(m, f, np.eye(3), "tip", np.eye(3), 1.0),
    lambda m, f: OrientationCost(m, "tip", np.eye(3), f, np.eye(3), 1.0),
    lambda m, f: AngleBetweenVectorsCost(m, f, [1, 0, 0], "tip", [1, 0, 0], 1.0),
    lambda m, f: AngleBetweenVectorsCost(m, "tip", [1, 0, 0], f, [1, 0, 0], 1.0)])
def test_unknown_frames_in_costs(factory):
    with pytest.raises(InvalidFrame, match="valid: .*tip"):
        factory(planar_2r(), "nowhere")
