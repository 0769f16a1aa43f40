"""ComputeIKPath over real DDS: ik_node as a process, answers checked with our own FK."""
import math

import numpy as np
import pinocchio as pin
import pytest

pytest.importorskip("rclpy")

from ros2_ik.node.conversions import se3_to_pose  # noqa: E402
from ros2_ik.node.harness import act_until, call_resending, with_fresh_joints  # noqa: E402
from ros2_ik_interfaces.msg import IKErrorCode  # noqa: E402
from ros2_ik_interfaces.srv import ComputeIKPath  # noqa: E402
from trajectory_msgs.msg import JointTrajectory  # noqa: E402
from visualization_msgs.msg import MarkerArray  # noqa: E402
import panda_node  # noqa: E402
from panda_node import ARM, T_frame, description, pose_errors, start, stop  # noqa: E402

READY = np.array(panda_node.READY)
STEP = 0.1
CONTROLLER = "/pathn/arm_controller/joint_trajectory"


@pytest.fixture(scope="module")
def model():
    return description()[2]


@pytest.fixture(scope="module")
def served(ros_context):
    node, client = start("pathn", f"controller_topic:={CONTROLLER}")
    path_client = client.node.create_client(ComputeIKPath, "/pathn/compute_ik_path")
    assert path_client.wait_for_service(timeout_sec=30.0)

    def call(request):
        return call_resending(path_client, request, client.spin, 60.0, 10.0)
    yield client, call
    stop(node, client)


def line_request(model, offset_m, count, **fields):
    """A straight line of the hand from READY's pose, in panda_link0."""
    T0 = T_frame(model, ARM, READY, "panda_hand", "panda_link0")
    req = ComputeIKPath.Request()
    req.header.frame_id = "panda_link0"
    req.waypoints = [se3_to_pose(pin.SE3(T0.rotation, T0.translation
                                         + (k / (count - 1)) * np.asarray(offset_m)))
                     for k in range(count)]
    req.max_joint_step = [STEP]
    req.random_seed = 1
    for name, value in fields.items():
        setattr(req, name, value)
    return req


def positions(trajectory):
    return np.array([p.positions for p in trajectory.points]).reshape(-1, len(ARM))


def check_reached(model, req, res):
    q = positions(res.trajectory)
    assert list(res.trajectory.joint_names) == ARM
    assert len(q) == round(res.fraction * len(req.waypoints))
    if len(q) > 1:
        assert np.abs(np.diff(q, axis=0)).max() <= STEP + 1e-12
    for qi, pose in zip(q, req.waypoints):
        T = T_frame(model, ARM, qi, "panda_hand", "panda_link0")
        T_target = pin.XYZQUATToSE3(np.array([pose.position.x, pose.position.y,
                                              pose.position.z, pose.orientation.x,
                                              pose.orientation.y, pose.orientation.z,
                                              pose.orientation.w]))
        pos, ori = pose_errors(T, T_target)
        assert pos <= 1e-4 and ori <= 1e-3
    return q


def test_line_is_solved_whole_and_timed(served, model):
    client, call = served
    markers = []
    client.node.create_subscription(MarkerArray, "/pathn/ik_node/markers", markers.append, 10)
    req = line_request(model, [0.0, 0.15, -0.1], 60, time_from_velocity_limits=True,
                       velocity_scaling=0.5)
    res = call(req)
    assert res.error_code.val == IKErrorCode.SUCCESS, res.message
    assert res.fraction == 1.0 and res.failed_waypoint == -1
    q = check_reached(model, req, res)
    assert len(res.position_errors) == len(q)
    vmax = np.array([model.velocityLimit[model.joints[model.getJointId(n)].idx_v]
                     for n in ARM])
    # Each step's mean velocity at 1.5 below the scaled limit: the cubics through the
    # points (velocities given) peak at 1.5 times it at most (test_execution_timing.py).
    expected = np.cumsum([0.0] + [np.max(np.abs(b - a) / (0.5 * vmax / 1.5))
                                  for a, b in zip(q[:-1], q[1:])])
    times = [p.time_from_start.sec + 1e-9 * p.time_from_start.nanosec
             for p in res.trajectory.points]
    np.testing.assert_allclose(times, expected, atol=1e-8)
    velocities = np.array([p.velocities for p in res.trajectory.points])
    assert velocities.shape == q.shape and np.all(velocities[-1] == 0.0)
    assert np.all(np.abs(velocities) <= 0.5 * vmax / 1.5 + 1e-12)
    act_until(lambda: call(req),
              lambda: any(m.ns == "path_reached" for a in markers for m in a.markers), 10,
              "the path markers", client.spin, acted=True)
    line = next(m for a in markers for m in a.markers if m.ns == "path_reached")
    assert len(line.points) == len(q)


def test_display_path_carries_the_returned_joint_path(served, model):
    """With moveit_msgs installed, ~/display_path shows the reply's path from the seed."""
    display = pytest.importorskip("moveit_msgs.msg")
    client, call = served
    shown = []
    client.node.create_subscription(display.DisplayTrajectory, "/pathn/ik_node/display_path",
                                    shown.append, 10)
    req = line_request(model, [0.0, 0.1, 0.0], 30, start_at_seed=True)
    req.seed.name, req.seed.position = list(ARM), [float(v) for v in READY]
    res = call(req)
    assert res.error_code.val == IKErrorCode.SUCCESS, res.message
    q = check_reached(model, req, res)
    act_until(lambda: call(req), lambda: bool(shown), 10, "the DisplayTrajectory",
              client.spin, acted=True)
    msg = shown[-1]
    assert msg.model_id == model.name and len(msg.trajectory) == 1
    path = msg.trajectory[0].joint_trajectory
    assert list(path.joint_names) == ARM
    np.testing.assert_array_equal(positions(path), q)
    assert list(msg.trajectory_start.joint_state.name) == ARM
    np.testing.assert_allclose(msg.trajectory_start.joint_state.position, READY)
    times = [p.time_from_start.sec + 1e-9 * p.time_from_start.nanosec for p in path.points]
    assert times[-1] > 0.0 and np.all(np.diff(times) > 0.0)  # timed, each step moving


def test_avoid_collisions_keeps_a_free_line(served, model):
    """With the clearance checked at every waypoint, a line clear of the robot is whole."""
    _, call = served
    req = line_request(model, [0.0, 0.1, 0.0], 30, avoid_collisions=True)
    res = call(req)
    assert res.error_code.val == IKErrorCode.SUCCESS, res.message
    check_reached(model, req, res)


def test_unreachable_tail_returns_prefix(served, model):
    _, call = served
    req = line_request(model, [1.2, 0.0, 0.0], 40)
    res = call(req)
    assert res.error_code.val == IKErrorCode.NO_SOLUTION, res.message
    q = check_reached(model, req, res)
    assert 0 < res.fraction < 1 and res.failed_waypoint == len(q)
    assert f"waypoint {len(q)}" in res.message
    req.execute = True  # a partial path is never sent
    res = call(req)
    assert res.error_code.val == IKErrorCode.NO_SOLUTION
    assert "not executed: the solution is not a SUCCESS" in res.message


@pytest.mark.parametrize("field, change, code", [
    ("waypoints", lambda r: setattr(r, "waypoints", []), IKErrorCode.INVALID_GOAL),
    ("waypoints[2]", lambda r: setattr(r.waypoints[2].position, "x", math.nan),
     IKErrorCode.INVALID_GOAL),
    ("max_joint_step", lambda r: setattr(r, "max_joint_step", [0.0]),
     IKErrorCode.INVALID_GOAL),
    ("max_joint_step", lambda r: setattr(r, "max_joint_step", []), IKErrorCode.INVALID_GOAL),
    ("max_joint_step", lambda r: setattr(r, "max_joint_step", [math.nan]),
     IKErrorCode.INVALID_GOAL),
    ("max_joint_step", lambda r: setattr(r, "max_joint_step", [0.1, 0.2]),
     IKErrorCode.INVALID_GOAL),
    ("waypoints[1]", lambda r: setattr(r.waypoints[1].orientation, "w", math.inf),
     IKErrorCode.INVALID_GOAL),
    ("header.frame_id", lambda r: setattr(r.header, "frame_id", "no_such_frame"),
     IKErrorCode.FRAME_NOT_FOUND),
    ("tip_link", lambda r: setattr(r, "tip_link", "no_such_link"),
     IKErrorCode.FRAME_NOT_FOUND),
    ("path_position_tolerance", lambda r: setattr(r, "path_position_tolerance", math.nan),
     IKErrorCode.INVALID_GOAL),
])
def test_bad_input_names_the_field(served, model, field, change, code):
    _, call = served
    req = line_request(model, [0.0, 0.05, 0.0], 5)
    change(req)
    res = call(req)
    assert res.error_code.val == code, res.message
    assert field in res.message and not res.trajectory.points


def test_execute_sends_the_whole_path(served, model):
    client, call = served
    sent = []
    client.node.create_subscription(JointTrajectory, CONTROLLER, sent.append, 10)
    req = line_request(model, [0.0, -0.1, 0.0], 30, start_at_seed=True, execute=True)

    def executed():
        return with_fresh_joints(client, ARM, READY, lambda: call(req))
    res = executed()
    assert res.error_code.val == IKErrorCode.SUCCESS, res.message
    assert "sent to the controller" in res.message
    q = check_reached(model, req, res)
    assert np.abs(q[0] - READY).max() <= STEP  # starts where the arm is
    act_until(executed, lambda: sent, 10, "the executed trajectory", client.spin,
              acted=True)  # the same execute from the same joint state
    np.testing.assert_allclose(positions(sent[-1]), q)
    times = [p.time_from_start.sec + 1e-9 * p.time_from_start.nanosec
             for p in sent[-1].points]
    assert np.all(np.diff(times) >= 0) and times[-1] >= 0.5  # min_trajectory_duration


def test_execute_refuses_a_move_to_the_path_through_an_obstacle(served, model):
    """With avoid_collisions, the way from the arm to the path's first point is checked.

    The arm stands with its elbow bent 0.48 rad further than the path's start; a ball sits
    where its forearm passes halfway back (our own checker says so, and that both ends
    and the path keep clear of it).  The path is solved and returned, not sent.
    """
    from ros2_ik.core.collision.motion import first_contact
    from ros2_ik_interfaces.msg import CollisionObject
    from ros2_ik_interfaces.srv import ApplyPlanningScene
    from panda_node import arm_group, at_rest, ball_checker, sphere
    client, call = served
    robot, group = arm_group()
    arm = READY + np.array([0.0, 0.0, 0.0, 0.48, 0.0, 0.0, 0.0])
    middle = group.fk((READY + arm) / 2, "panda_link6").translation
    ours = ball_checker(robot, "ball", middle, 0.02)
    assert first_contact(ours, group, arm, READY, 0.0) is not None
    apply = client.node.create_client(ApplyPlanningScene, "/pathn/apply_planning_scene")
    assert apply.wait_for_service(timeout_sec=30)
    assert call_resending(apply, ApplyPlanningScene.Request(
        objects=[sphere("ball", middle, 0.02)]), client.spin).success
    req = line_request(model, [0.0, -0.05, 0.0], 10, execute=True, avoid_collisions=True)
    req.seed.name, req.seed.position = list(ARM), [float(v) for v in READY]
    at_rest(client, "pathn")  # an earlier test's move: a path is refused mid-move
    try:
        res = with_fresh_joints(client, ARM, arm, lambda: call(req))
    finally:
        assert call_resending(apply, ApplyPlanningScene.Request(objects=[CollisionObject(
            operation=CollisionObject.CLEAR)]), client.spin).success
    assert res.error_code.val == IKErrorCode.EXECUTION_REFUSED, res.message
    assert "the move from the current state passes" in res.message and "ball" in res.message
    q = check_reached(model, req, res)
    assert all(ours.min_distance(group.to_full_q(qi)).distance_m > 0.0 for qi in q)
    assert first_contact(ours, group, arm, q[0], 0.0) is not None
