"""The constrained_ik action's distance constraints over real DDS: a good and a bad request.

The answer is checked with coal called here on the test's own forward kinematics of the
returned joint values (the reply's fields are not trusted).
"""
import math

import coal
import numpy as np
import pinocchio as pin
import pytest

pytest.importorskip("rclpy")

from action_msgs.msg import GoalStatus  # noqa: E402
from ros2_ik.core.collision import build_robot_geometry  # noqa: E402
from ros2_ik.node.harness import call_resending  # noqa: E402
from ros2_ik_interfaces.msg import (  # noqa: E402
    DistanceConstraint, IKErrorCode, MinimumDistanceUpperBoundConstraint)
from ros2_ik_interfaces.srv import ApplyPlanningScene  # noqa: E402
from panda_node import ARM, description, sphere, start, stop  # noqa: E402
from test_node_action import Run, base_goal  # noqa: E402

BALL_AT, BALL_R = np.array([0.5, 0.0, 0.3]), 0.05


@pytest.fixture(scope="module")
def served(ros_context):
    node, client = start("dist")
    apply = client.node.create_client(ApplyPlanningScene, "/dist/apply_planning_scene")
    assert apply.wait_for_service(timeout_sec=30)
    assert client.action.wait_for_server(timeout_sec=30)
    request = ApplyPlanningScene.Request(objects=[sphere("ball", BALL_AT, BALL_R)])
    assert call_resending(apply, request, client.spin).success
    yield client
    stop(node, client)


def hand_to_ball(names, positions) -> float:
    """Smallest coal distance [m] of the hand's collision shapes to the ball, our own FK.

    The shapes are the core's (convex hulls of the meshes, as the node's checker uses).
    """
    urdf, _, model = description()
    geometry = build_robot_geometry(model, urdf)
    q = pin.neutral(model)
    for name, value in zip(names, positions):
        q[model.joints[model.getJointId(name)].idx_q] = value
    data, geom_data = model.createData(), geometry.createData()
    pin.updateGeometryPlacements(model, data, geometry, geom_data, q)
    ball = coal.Transform3s(np.eye(3), BALL_AT)  # panda_link0 is the world here
    distances = []
    for g, X in zip(geometry.geometryObjects, geom_data.oMg):
        if model.frames[g.parentFrame].name == "panda_hand":
            distances.append(coal.distance(
                g.geometry, coal.Transform3s(X.rotation, X.translation), coal.Sphere(BALL_R),
                ball, coal.DistanceRequest(), coal.DistanceResult()))
    assert distances, "the hand has collision geometry"
    return min(distances)


def test_hand_brought_near_the_ball(served):
    goal = base_goal(timeout=2.0)
    goal.distance_constraints = [DistanceConstraint(
        name="approach", geometry_a="panda_hand", geometry_b="ball", distance_lower=0.01,
        distance_upper=0.02)]
    goal.minimum_distance_upper_bound_constraints = [
        MinimumDistanceUpperBoundConstraint(bound=0.02)]
    wrapped = Run(served, goal).result()
    res = wrapped.result
    assert wrapped.status == GoalStatus.STATUS_SUCCEEDED, res.message
    assert res.error_code.val == IKErrorCode.SUCCESS, res.message
    state = res.solutions[0].joint_state
    arm = {n: p for n, p in zip(state.name, state.position) if n in ARM}
    d = hand_to_ball(list(arm), list(arm.values()))
    tolerance = 1e-4  # the node's position_tolerance default covers constraints in [m]
    assert 0.01 - tolerance <= d <= 0.02 + tolerance, d
    assert math.isfinite(res.solutions[0].min_distance)


def test_unknown_geometry_names_the_field_and_the_valid_names(served):
    goal = base_goal()
    goal.distance_constraints = [
        DistanceConstraint(geometry_a="panda_hand", geometry_b="ball", distance_upper=0.1),
        DistanceConstraint(geometry_a="panda_hand", geometry_b="no_such_thing",
                           distance_upper=0.1)]
    res = Run(served, goal).result().result
    assert res.error_code.val == IKErrorCode.INVALID_GOAL, res.message
    assert "distance_constraints[1]: geometry_b: unknown geometry 'no_such_thing'" \
        in res.message
    assert "ball" in res.message and "panda_hand" in res.message
    assert not res.solutions


def test_upper_bound_must_be_a_number(served):
    goal = base_goal()
    goal.minimum_distance_upper_bound_constraints = [
        MinimumDistanceUpperBoundConstraint(bound=math.nan)]
    res = Run(served, goal).result().result
    assert res.error_code.val == IKErrorCode.INVALID_GOAL, res.message
    assert "minimum_distance_upper_bound_constraints[0]: bound_m" in res.message
