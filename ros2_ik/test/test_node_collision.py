"""Collision-aware IK and the planning scene over real DDS.

Collisions are checked in the test with its own coal distance queries on the robot's
collision geometry (the core's checker, independent of the solver's answer).
"""
import numpy as np
import pinocchio as pin
import pytest

pytest.importorskip("rclpy")

from ros2_ik.core.collision import (  # noqa: E402
    CollisionChecker, PlanningScene, SceneObject, Sphere)
from ros2_ik.node.conversions import se3_to_pose  # noqa: E402
from ros2_ik.node.harness import act_until, call_resending, wait_for  # noqa: E402
from ros2_ik_interfaces.msg import CollisionObject, IKErrorCode  # noqa: E402
from ros2_ik_interfaces.srv import ApplyPlanningScene, ComputeIK, GetPlanningScene  # noqa: E402
from visualization_msgs.msg import MarkerArray  # noqa: E402
from panda_node import (ARM, READY, T_frame, description, pose_errors, sphere, start,  # noqa: E402
                        stop)


@pytest.fixture(scope="module")
def panda():
    return description()


@pytest.fixture(scope="module")
def served(ros_context, panda):
    node, client = start("col")
    apply = client.node.create_client(ApplyPlanningScene, "/col/apply_planning_scene")
    get = client.node.create_client(GetPlanningScene, "/col/get_planning_scene")
    assert apply.wait_for_service(timeout_sec=30) and get.wait_for_service(timeout_sec=30)
    # Each client's first response can be lost (harness.call_resending): answered once
    # by requests that change nothing before the tests' own, which are sent once.
    assert call_resending(apply, ApplyPlanningScene.Request(), client.spin).success
    call_resending(get, GetPlanningScene.Request(), client.spin)
    yield client, apply, get
    stop(node, client)


def call(client, srv, request):
    future = srv.call_async(request)
    wait_for(future.done, 30, "a scene service response", client.spin)
    return future.result()


def our_distance(panda, names, positions, obstacles):
    """Smallest signed distance of the arm to ``obstacles`` and itself, by our own checker."""
    urdf, srdf, model = panda
    scene = PlanningScene([f.name for f in model.frames])
    scene.add_all(obstacles)
    checker = CollisionChecker.from_urdf(model, urdf, srdf, scene)
    q = pin.neutral(model)
    for name, value in zip(names, positions):
        q[model.joints[model.getJointId(name)].idx_q] = value
    return checker.min_distance(q).distance_m


def test_scene_add_move_remove_clear_over_service_and_topic(served):
    client, apply, get = served
    res = call(client, apply, ApplyPlanningScene.Request(
        objects=[sphere("ball", (0.5, 0.0, 0.3), 0.05), sphere("ball2", (0.5, 0.3, 0.3), 0.05)]))
    assert res.success, res.message
    scene = call(client, get, GetPlanningScene.Request())
    assert sorted(o.id for o in scene.objects) == ["ball", "ball2"]
    moved = sphere("ball", (0.6, 0.0, 0.2), 0.05, op=CollisionObject.MOVE)
    assert call(client, apply, ApplyPlanningScene.Request(objects=[moved])).success
    scene = call(client, get, GetPlanningScene.Request())
    ball = next(o for o in scene.objects if o.id == "ball")
    assert abs(ball.pose.position.x - 0.6) < 1e-9
    # a bad batch changes nothing
    bad = [sphere("ball3", (0, 0, 1), 0.05), sphere("x", (0, 0, 1), 0.05, frame="nowhere")]
    res = call(client, apply, ApplyPlanningScene.Request(objects=bad))
    assert not res.success and "nowhere" in res.message
    assert len(call(client, get, GetPlanningScene.Request()).objects) == 2
    # the topic: remove one, then clear
    pub = client.node.create_publisher(CollisionObject, "/col/collision_object", 10)
    wait_for(lambda: pub.get_subscription_count() > 0, 10, "scene subscriber", client.spin)
    pub.publish(CollisionObject(id="ball2", operation=CollisionObject.REMOVE))
    wait_for(lambda: len(call(client, get, GetPlanningScene.Request()).objects) == 1, 10,
             "the topic removal", client.spin)
    pub.publish(CollisionObject(operation=CollisionObject.CLEAR))
    wait_for(lambda: not call(client, get, GetPlanningScene.Request()).objects, 10,
             "the topic clear", client.spin)


def test_attached_object_is_reported_with_its_link(served):
    client, apply, get = served
    tool = sphere("tool", (0.0, 0.0, 0.1), 0.03, frame="")
    tool.attach_link = "panda_hand"
    tool.touch_links = ["panda_leftfinger", "panda_rightfinger"]
    assert call(client, apply, ApplyPlanningScene.Request(objects=[tool])).success
    objects = call(client, get, GetPlanningScene.Request()).objects
    assert [(o.id, o.attach_link) for o in objects] == [("tool", "panda_hand")]
    clear = CollisionObject(operation=CollisionObject.CLEAR)
    assert call(client, apply, ApplyPlanningScene.Request(objects=[clear])).success


def test_avoid_collisions_finds_another_solution_around_an_obstacle(served, panda):
    client, apply, get = served
    model = panda[2]
    data = model.createData()
    q = pin.neutral(model)
    q[:7] = np.array(READY) + [0.3, 0.3, 0.0, 0.4, 0.0, 0.1, 0.0]
    pin.framesForwardKinematics(model, data, q)
    T = data.oMf[model.getFrameId("panda_link0")].actInv(data.oMf[model.getFrameId("panda_hand")])
    req = ComputeIK.Request()
    req.target.header.frame_id = "panda_link0"
    req.target.pose = se3_to_pose(T)
    req.timeout, req.random_seed = 1.0, 4
    plain = client.call(req)
    assert plain.error_code.val == IKErrorCode.SUCCESS, plain.message
    # an obstacle where the plain answer's elbow (link4) is
    qp = pin.neutral(model)
    qp[:7] = plain.solution.position
    pin.framesForwardKinematics(model, data, qp)
    elbow = data.oMf[model.getFrameId("panda_link4")].translation
    obstacle = SceneObject("post", (Sphere(0.07),), "panda_link0",
                           pin.SE3(np.eye(3), elbow).homogeneous)
    assert call(client, apply, ApplyPlanningScene.Request(
        objects=[sphere("post", elbow, 0.07)])).success
    again = client.call(req)   # same seed, scene ignored: same colliding answer
    np.testing.assert_allclose(again.solution.position, plain.solution.position)
    assert our_distance(panda, ARM, again.solution.position, [obstacle]) < 0
    req.avoid_collisions = True
    markers = []
    client.node.create_subscription(MarkerArray, "/col/ik_node/markers", markers.append, 10)
    safe = client.call(req)
    assert safe.error_code.val == IKErrorCode.SUCCESS, safe.message
    # the same request again if the marker was sent before the writer saw this reader
    act_until(lambda: client.call(req),
              lambda: any(m.ns == "closest_pair" for a in markers for m in a.markers), 10,
              "the closest-pair marker", client.spin, acted=True)
    line = next(m for a in markers for m in a.markers if m.ns == "closest_pair")
    a, b = (np.array([p.x, p.y, p.z]) for p in line.points)
    assert abs(np.linalg.norm(a - b) - safe.min_distance) < 1e-6  # witness points
    assert our_distance(panda, ARM, safe.solution.position, [obstacle]) >= -1e-6
    assert safe.min_distance >= -1e-6 and len(safe.closest_pair) == 2
    T_safe = T_frame(model, ARM, safe.solution.position, "panda_hand", "panda_link0")
    assert pose_errors(T_safe, T)[0] <= 1e-4
    clear = CollisionObject(operation=CollisionObject.CLEAR)
    assert call(client, apply, ApplyPlanningScene.Request(objects=[clear])).success


def test_target_inside_an_obstacle_is_in_collision(served, panda):
    client, apply, get = served
    req = ComputeIK.Request()
    req.target.header.frame_id = "panda_link0"
    req.target.pose.position.x, req.target.pose.position.z = 0.5, 0.3
    req.target.pose.orientation.x, req.target.pose.orientation.w = 1.0, 0.0
    req.timeout, req.random_seed, req.avoid_collisions = 0.3, 2, True
    assert call(client, apply, ApplyPlanningScene.Request(
        objects=[sphere("block", (0.5, 0.0, 0.3), 0.12)])).success
    res = client.call(req)
    assert res.error_code.val == IKErrorCode.IN_COLLISION, res.message
    assert res.min_distance < 0 and "block" in res.closest_pair
    # answered by the proof after one attempt (the hand at the target is in the block),
    # not after searching the whole timeout
    assert "at the target" in res.message and "'block'" in res.message, res.message
    assert call(client, apply, ApplyPlanningScene.Request(
        objects=[CollisionObject(operation=CollisionObject.CLEAR)])).success


def test_world_object_in_a_moving_frame_is_refused(served):
    """A world object must sit in a frame fixed to the world; attach it to move with a link."""
    client, apply, get = served
    res = call(client, apply, ApplyPlanningScene.Request(
        objects=[sphere("floating", (0.0, 0.0, 0.1), 0.03, frame="panda_hand")]))
    assert not res.success and "panda_hand" in res.message
    assert not call(client, get, GetPlanningScene.Request()).objects
