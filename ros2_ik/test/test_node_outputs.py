"""What ik_node publishes, over real DDS: controller commands (only when safe),
~/solution, ~/markers, goals from a PoseStamped topic, live parameters."""
import numpy as np
import pytest

pytest.importorskip("rclpy")

from geometry_msgs.msg import PoseStamped  # noqa: E402
from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue  # noqa: E402
from rcl_interfaces.srv import SetParameters  # noqa: E402
from ros2_ik.node import execution  # noqa: E402
from ros2_ik.node.conversions import se3_to_pose  # noqa: E402
from ros2_ik.node.harness import (NodeProcess, act_until, call_resending, wait_for,  # noqa: E402
                                  with_fresh_joints)
from ros2_ik_interfaces.msg import IKErrorCode  # noqa: E402
from ros2_ik_interfaces.srv import ComputeIK  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402
from trajectory_msgs.msg import JointTrajectory  # noqa: E402
from visualization_msgs.msg import MarkerArray  # noqa: E402
import panda_node  # noqa: E402
from panda_node import (ARM, T_frame, arm_group, ball_checker, description, sphere,  # noqa: E402
                        start, stop)

READY = np.array(panda_node.READY)


@pytest.fixture(scope="module")
def model():
    return description()[2]


def collect(client, kind, topic):
    """Subscribe to ``topic`` and wait until the node's publisher is matched.

    The node publishes once per answer, not latched: sent before discovery matched the
    subscription, it is lost.  This side seeing the publisher is not enough (the writer
    may not see this reader yet): an answer that must be seen is asked for with
    :func:`executed`, which asks again.
    """
    box = []
    sub = client.node.create_subscription(kind, topic, box.append, 10)
    wait_for(lambda: sub.get_publisher_count() > 0, 10, f"a publisher of {topic}", client.spin)
    return box


def executed(client, req, *boxes, joints):
    """Call ``req`` (an execute) until every box has a message; return the last answer.

    The same execute from the same joint state may be sent twice: the node publishes the
    same command again.  ``joints``: (names, positions), published before each call
    (:func:`harness.with_fresh_joints`).
    """
    answers = []

    def act():
        answers.append(with_fresh_joints(client, *joints, lambda: client.call(req)))
        assert answers[-1].error_code.val == IKErrorCode.SUCCESS, answers[-1].message

    act_until(act, lambda: all(boxes), 10, "the executed outputs", client.spin)
    return answers[-1]


def near_target(model, dq, seed_offset=0.0):
    """A target pose reached from READY + dq (small moves stay under the jump limit)."""
    T = T_frame(model, ARM, READY + dq, "panda_hand", "panda_link0")
    req = ComputeIK.Request()
    req.target.header.frame_id = "panda_link0"
    req.target.pose = se3_to_pose(T)
    req.seed.name = ARM
    req.seed.position = list(READY + seed_offset)
    req.timeout = 0.5
    req.random_seed = 1
    return req


@pytest.fixture(scope="module")
def trajectory_node(ros_context):
    node, client = start("traj", "controller_topic:=/traj/arm_controller/joint_trajectory")
    yield node, client
    stop(node, client)


def test_execute_publishes_a_timed_trajectory(trajectory_node, model):
    node, client = trajectory_node
    trajectories = collect(client, JointTrajectory, "/traj/arm_controller/joint_trajectory")
    solutions = collect(client, JointState, "/traj/ik_node/solution")
    markers = collect(client, MarkerArray, "/traj/ik_node/markers")
    client.publish_joints(ARM, READY)
    req = near_target(model, np.array([0.1, -0.1, 0.05, 0.1, 0.0, 0.1, 0.0]))
    assert client.wait_for_model(req).error_code.val == IKErrorCode.SUCCESS
    req.execute = True
    res = executed(client, req, trajectories, solutions, markers, joints=(ARM, READY))
    traj = trajectories[-1]
    assert list(traj.joint_names) == ARM
    np.testing.assert_allclose(traj.points[0].positions, res.solution.position)
    # Our own timing: the controller's quintic from rest (10 tau^3 - 15 tau^4 + 6 tau^5 of
    # the move: the point carries zero accelerations), sampled, peaks at 0.2 x each joint's
    # URDF velocity limit or less; at least 0.5 s.
    vmax = np.array([model.velocityLimit[model.joints[model.getJointId(n)].idx_v]
                     for n in ARM])
    t = traj.points[0].time_from_start
    seconds = t.sec + t.nanosec * 1e-9
    tau = np.linspace(0.0, 1.0, 1001)
    move = np.abs(np.array(res.solution.position) - READY)
    assert not any(traj.points[0].velocities) and not any(traj.points[0].accelerations)
    assert len(traj.points[0].accelerations) == len(ARM)
    peak = np.max(np.outer(30 * tau ** 2 - 60 * tau ** 3 + 30 * tau ** 4, move), axis=0) / seconds
    assert np.all(peak <= 0.2 * vmax * (1 + 1e-9))
    assert seconds == pytest.approx(0.5) or np.any(peak >= 0.2 * vmax * (1 - 1e-6))
    assert list(solutions[-1].name) == ARM
    assert {m.ns for m in markers[-1].markers} >= {"target", "reached"}


def test_a_late_subscriber_learns_the_servo_is_stopped(trajectory_node):
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
    from ros2_ik_interfaces.msg import ServoStatus
    node, client = trajectory_node
    latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                         durability=DurabilityPolicy.TRANSIENT_LOCAL)
    statuses = []
    client.node.create_subscription(ServoStatus, "/traj/ik_node/servo/status",
                                    statuses.append, latched)
    wait_for(lambda: statuses, 10, "the servo status", client.spin)
    assert statuses[-1].state == ServoStatus.STOPPED


def test_execution_refused_when_jump_too_large(trajectory_node, model):
    node, client = trajectory_node
    trajectories = collect(client, JointTrajectory, "/traj/arm_controller/joint_trajectory")
    client.publish_joints(ARM, READY)
    req = near_target(model, np.array([1.2, 0.3, 0.0, 0.5, 0.0, 0.0, 0.0]), seed_offset=0.0)
    req.seed.position = list(READY + np.array([1.2, 0.3, 0.0, 0.5, 0.0, 0.0, 0.0]))
    req.execute = True
    res = client.call(req)
    assert res.error_code.val == IKErrorCode.EXECUTION_REFUSED, res.message
    assert "execute_max_joint_jump" in res.message
    assert len(res.solution.position) == 7          # the solution is still returned
    count = len(trajectories)
    client.spin(0.2)
    assert len(trajectories) == count


def test_execution_refused_when_the_move_passes_through_an_obstacle(trajectory_node, model):
    """Refused when the end is clear but the way there is not: a ball on the forearm's way.

    The test's own checker (the scene as sent) says so first; the node refuses the move
    only with ``avoid_collisions``, and sends it once the ball is gone.
    """
    from ros2_ik.core.collision.motion import first_contact
    from ros2_ik_interfaces.msg import CollisionObject
    from ros2_ik_interfaces.srv import ApplyPlanningScene
    node, client = trajectory_node
    robot, group = arm_group()
    dq = np.array([0.0, 0.0, 0.0, 0.48, 0.0, 0.0, 0.0])  # the elbow, under the jump limit
    middle = group.fk(READY + dq / 2, "panda_link6").translation
    ours = ball_checker(robot, "ball", middle, 0.02)
    assert all(ours.min_distance(group.to_full_q(q)).distance_m > 0.0 for q in (READY, READY + dq))
    assert first_contact(ours, group, READY, READY + dq, 0.0) is not None
    apply = client.node.create_client(ApplyPlanningScene, "/traj/apply_planning_scene")
    assert apply.wait_for_service(timeout_sec=30)
    assert call_resending(apply, ApplyPlanningScene.Request(
        objects=[sphere("ball", middle, 0.02)]), client.spin).success
    trajectories = collect(client, JointTrajectory, "/traj/arm_controller/joint_trajectory")
    req = near_target(model, dq, seed_offset=dq)
    req.execute, req.avoid_collisions = True, True
    try:
        res = with_fresh_joints(client, ARM, READY, lambda: client.call(req))
        assert res.error_code.val == IKErrorCode.EXECUTION_REFUSED, res.message
        # From the current state, or from where braking ends when an earlier test's move
        # is still under way (this node is the module's).
        assert "the move from" in res.message and "passes" in res.message
        assert "ball" in res.message
        np.testing.assert_allclose(res.solution.position, READY + dq, atol=1e-6)
        count = len(trajectories)
        client.spin(0.2)
        assert len(trajectories) == count
        req.avoid_collisions = False  # asked not to check: sent as before
        res = with_fresh_joints(client, ARM, READY, lambda: client.call(req))
        assert res.error_code.val == IKErrorCode.SUCCESS, res.message
    finally:
        assert call_resending(apply, ApplyPlanningScene.Request(objects=[CollisionObject(
            operation=CollisionObject.CLEAR)]), client.spin).success
    req.avoid_collisions = True
    res = executed(client, req, trajectories, joints=(ARM, READY))
    assert "sent to the controller" in res.message


def test_a_redirected_move_is_checked_on_both_of_its_segments():
    """Braking mid-move, then on: each straight segment proven clear, the one that is not
    named (the ball lies on the way on from where braking ends)."""
    from ros2_ik.node.execution import move_refusal
    robot, group = arm_group()
    dq = np.array([0.0, 0.0, 0.0, 0.48, 0.0, 0.0, 0.0])
    ours = ball_checker(robot, "ball", group.fk(READY + dq / 2, "panda_link6").translation, 0.02)
    braking = READY + np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.05])
    reason = move_refusal(ours, group, [braking, READY, READY + dq], 0.0)
    assert reason.startswith("the move from where braking ends passes") and "ball" in reason
    reason = move_refusal(ours, group, [READY, READY + dq / 2, READY + dq], 0.0)
    assert reason.startswith("the move from the braking of the move under way passes")
    assert move_refusal(ours, group, [braking, READY], 0.0) == ""
    assert move_refusal(ours, group, [READY, READY + dq], 0.0).startswith(
        "the move from the current state passes")


def test_execution_refused_when_not_success(trajectory_node):
    node, client = trajectory_node
    client.publish_joints(ARM, READY)
    req = ComputeIK.Request()
    req.target.header.frame_id = "panda_link0"
    req.target.pose.position.x = 3.0
    req.timeout = 0.05
    req.execute = True
    res = client.call(req)
    assert res.error_code.val == IKErrorCode.NO_SOLUTION
    assert "not executed: the solution is not a SUCCESS" in res.message


def test_goal_topic_solves_and_publishes_solution(trajectory_node, model):
    node, client = trajectory_node
    solutions = collect(client, JointState, "/traj/ik_node/solution")
    pub = client.node.create_publisher(PoseStamped, "/traj/goal_pose", 10)
    req = near_target(model, np.array([0.2, 0.1, 0.0, 0.2, 0.0, 0.0, 0.0]))
    goal = PoseStamped()
    goal.header.frame_id = "panda_link0"
    goal.pose = req.target.pose
    wait_for(lambda: pub.get_subscription_count() > 0, 10, "goal subscriber", client.spin)
    act_until(lambda: pub.publish(goal), lambda: solutions, 10,
              "a solution from the goal topic", client.spin)
    T = T_frame(model, ARM, solutions[-1].position, "panda_hand", "panda_link0")
    p = req.target.pose.position
    assert np.linalg.norm(T.translation - [p.x, p.y, p.z]) < 1e-4


def test_goal_topic_keeps_clear_of_the_scene(trajectory_node, model):
    """goal_avoid_collisions (on by default): an rviz goal's answer is clear of the scene.

    A post where the plain answer's elbow is (our own checker: that answer collides); the
    goal, seeded as the plain request was, is answered clear of it by the same checker.
    """
    from ros2_ik_interfaces.msg import CollisionObject
    from ros2_ik_interfaces.srv import ApplyPlanningScene
    node, client = trajectory_node
    robot, group = arm_group()
    req = near_target(model, np.array([0.3, 0.3, 0.0, 0.4, 0.0, 0.1, 0.0]))
    client.publish_joints(ARM, READY)
    plain = client.call(req)
    assert plain.error_code.val == IKErrorCode.SUCCESS, plain.message
    elbow = group.fk(np.array(plain.solution.position), "panda_link4").translation
    ours = ball_checker(robot, "post", elbow, 0.07)
    assert ours.min_distance(group.to_full_q(np.array(plain.solution.position))).distance_m < 0
    solutions = collect(client, JointState, "/traj/ik_node/solution")
    pub = client.node.create_publisher(PoseStamped, "/traj/goal_pose", 10)
    goal = PoseStamped()
    goal.header.frame_id = "panda_link0"
    goal.pose = req.target.pose
    wait_for(lambda: pub.get_subscription_count() > 0, 10, "goal subscriber", client.spin)
    apply = client.node.create_client(ApplyPlanningScene, "/traj/apply_planning_scene")
    assert apply.wait_for_service(timeout_sec=30)
    assert call_resending(apply, ApplyPlanningScene.Request(
        objects=[sphere("post", elbow, 0.07)]), client.spin).success
    try:
        solutions.clear()
        act_until(lambda: (client.publish_joints(ARM, READY), pub.publish(goal)),
                  lambda: solutions, 10, "a solution from the goal topic", client.spin)
    finally:
        assert call_resending(apply, ApplyPlanningScene.Request(objects=[CollisionObject(
            operation=CollisionObject.CLEAR)]), client.spin).success
    q = np.array(solutions[-1].position)
    assert ours.min_distance(group.to_full_q(q)).distance_m >= 0.0
    T = T_frame(model, ARM, q, "panda_hand", "panda_link0")
    p = req.target.pose.position
    assert np.linalg.norm(T.translation - [p.x, p.y, p.z]) < 1e-4


def set_param(client, name, value, namespace="traj"):
    srv = client.node.create_client(SetParameters, f"/{namespace}/ik_node/set_parameters")
    assert srv.wait_for_service(timeout_sec=10)
    pv = ParameterValue()
    if isinstance(value, str):
        pv.type, pv.string_value = ParameterType.PARAMETER_STRING, value
    else:
        pv.type, pv.double_value = ParameterType.PARAMETER_DOUBLE, float(value)
    request = SetParameters.Request(parameters=[Parameter(name=name, value=pv)])
    return call_resending(srv, request, client.spin).results[0]


def test_param_set_takes_effect_on_next_solve(trajectory_node, model):
    node, client = trajectory_node
    assert not set_param(client, "timeout", -1.0).successful        # validated
    refused = set_param(client, "solver", "no_such_solver")
    assert not refused.successful and "lm" in refused.reason
    req = near_target(model, np.zeros(7))
    req.solver = "no_such_solver"           # a request may still name one: its own error
    assert client.call(req).error_code.val == IKErrorCode.INVALID_SOLVER
    req = near_target(model, np.array([0.3, 0.0, 0.0, 0.2, 0.0, 0.0, 0.0]))
    assert set_param(client, "max_joint_jump", 1e-3).successful       # live on the next solve
    assert client.call(req).error_code.val == IKErrorCode.JUMP_TOO_LARGE
    assert set_param(client, "max_joint_jump", 0.0).successful
    assert client.call(req).error_code.val == IKErrorCode.SUCCESS
    assert set_param(client, "solver", "dls").successful
    assert client.call(req).error_code.val == IKErrorCode.SUCCESS
    assert set_param(client, "solver", "lm").successful


def test_stale_joint_states_refuse_execution(ros_context, model):
    node, client = start("stale", "joint_state_timeout:=0.2", joints=False)
    try:
        req = near_target(model, np.zeros(7))
        req.execute = True
        res = client.call(req)   # no joint_states were ever published
        assert res.error_code.val == IKErrorCode.EXECUTION_REFUSED
        assert "stale" in res.message
    finally:
        client.close()
        assert node.stop() == 0, node.output()


def test_position_controller_mode(ros_context, model):
    """A forward position controller gets the move, not a step: the quintic a
    JointTrajectoryController would draw, one command per 1/position_rate s, the fingers
    held; a path while it moves is refused (it is timed from rest)."""
    node, client = start("pos", "controller_mode:=position", "position_rate:=50.0",
                         "velocity_scaling:=0.05",  # a 4 s move: the second execute meets it
                         "controller_topic:=/pos/forward_position_controller/commands")
    try:
        commands = collect(client, Float64MultiArray,
                           "/pos/forward_position_controller/commands")
        fingers = ["panda_finger_joint1", "panda_finger_joint2"]
        joints = (ARM + fingers, list(READY) + [0.01, 0.01])
        req = near_target(model, np.array([0.3, 0.0, 0.0, 0.3, 0.0, 0.0, 0.0]))
        req.execute = True
        res = executed(client, req, commands, joints=joints)
        goal = np.array(res.solution.position)
        wait_for(lambda: np.allclose(commands[-1].data, goal, atol=1e-12), 15,
                 "the move's last command", client.spin)
        sent = np.array([c.data for c in commands])
        move = goal - READY
        # Each command on the quintic from READY (the first within one period of the start),
        # each joint moving one way, the last exactly the solution.
        fraction = (sent[:, 0] - READY[0]) / move[0]
        np.testing.assert_allclose(sent, READY + np.outer(fraction, move), atol=1e-9)
        assert np.all(np.diff(fraction) >= -1e-12) and fraction[0] < 0.2
        seconds = max(0.5, float(np.max(1.875 * np.abs(move) / (0.05 * panda_vmax(model)))))
        assert len(sent) >= 0.5 * seconds * 50.0  # a stream, not one step
        assert np.max(np.diff(fraction)) <= 1.875 / (seconds * 50.0) * 3  # <= 3 periods' peak

        from ros2_ik_interfaces.srv import ComputeIKPath
        from std_srvs.srv import Trigger
        from test_node_path import line_request
        paths = client.node.create_client(ComputeIKPath, "/pos/compute_ik_path")
        assert paths.wait_for_service(timeout_sec=30.0)
        path = line_request(model, [0.0, 0.05, 0.0], 10, execute=True)
        busy = with_fresh_joints(client, *joints, lambda: client.call(req))  # a 4 s move
        assert busy.error_code.val == IKErrorCode.SUCCESS, busy.message
        refused = with_fresh_joints(client, *joints, lambda: call_resending(
            paths, path, client.spin, 60.0, 10.0))
        assert refused.error_code.val == IKErrorCode.EXECUTION_REFUSED, refused.message
        assert "a move is under way" in refused.message
        stopper = client.node.create_client(Trigger, "/pos/ik_node/stop_execution")
        assert stopper.wait_for_service(timeout_sec=10.0)
        braked = call_resending(stopper, Trigger.Request(), client.spin)
        spin_for(client, float(braked.message.split()[-2]) + 0.2)
        count = len(commands)
        answer = with_fresh_joints(client, *joints, lambda: call_resending(
            paths, path, client.spin, 60.0, 10.0))
        assert answer.error_code.val == IKErrorCode.SUCCESS, answer.message
        last = np.array(answer.trajectory.points[-1].positions)
        wait_for(lambda: np.allclose(commands[-1].data, last, atol=1e-12), 30,
                 "the path's last command", client.spin)
        assert len(commands) - count > 10  # streamed along the path, not its end alone
    finally:
        client.close()
        assert node.stop() == 0, node.output()


def panda_vmax(model):
    """The arm joints' URDF velocity limits [rad/s]."""
    return np.array([model.velocityLimit[model.joints[model.getJointId(n)].idx_v]
                     for n in ARM])


def test_invalid_configuration_exits_with_a_message(ros_context):
    node = NodeProcess(params={"velocity_scaling": 3.0})
    assert node.proc.wait(30) == 2
    assert "velocity_scaling" in node.output() and "Traceback" not in node.output()


def test_schema_validation_applies_at_startup(ros_context):
    node = NodeProcess(params={"timeout": -1.0})
    assert node.proc.wait(30) == 2
    assert "timeout must be > 0 and finite" in node.output()


@pytest.mark.parametrize("mode", ["position", "trajectory"])
def test_stop_execution_brakes_the_move_under_way(ros_context, model, mode):
    """~/stop_execution mid-move: the arm is brought to rest short of the goal (a new
    trajectory to where braking ends, or the stream's next commands), no joint slowing
    harder than the move itself accelerated (no acceleration limits are given)."""
    from std_srvs.srv import Trigger
    topic = f"/stop{mode[0]}/controller"
    kind = Float64MultiArray if mode == "position" else JointTrajectory
    node, client = start(f"stop{mode[0]}", f"controller_mode:={mode}", "velocity_scaling:=0.05",
                         f"controller_topic:={topic}")
    try:
        sent = collect(client, kind, topic)
        stop = client.node.create_client(Trigger, f"/stop{mode[0]}/ik_node/stop_execution")
        assert stop.wait_for_service(timeout_sec=10.0)
        idle = call_resending(stop, Trigger.Request(), client.spin)
        assert idle.success and idle.message == "no move under way"
        fingers = ["panda_finger_joint1", "panda_finger_joint2"]
        req = near_target(model, np.array([0.3, 0.0, 0.0, 0.3, 0.0, 0.0, 0.0]))
        req.execute = True
        res = executed(client, req, sent, joints=(ARM + fingers, list(READY) + [0.01, 0.01]))
        goal = np.array(res.solution.position)
        seconds = 1.875 * np.max(np.abs(goal - READY) / (0.05 * panda_vmax(model)))
        spin_for(client, 1.0)
        count = len(sent)
        braked = call_resending(stop, Trigger.Request(), client.spin)
        assert braked.success and braked.message.startswith("braking to rest in"), braked.message
        brake_s = float(braked.message.split()[-2])
        # The move's own hardest: 10 / sqrt(3) x its move / T^2 on the quintic; braking
        # from its speed at ~1 s (at most its 1.875 x mean peak) takes at most v / a.
        hardest = 10 / np.sqrt(3) * np.abs(goal - READY) / seconds ** 2
        assert brake_s <= np.max(1.875 * np.abs(goal - READY) / seconds / hardest) + 1e-6
        if mode == "trajectory":
            wait_for(lambda: len(sent) > count, 5, "the braking trajectory", client.spin)
            point = sent[-1].points[0]
            end = np.array(point.positions)
            assert not any(point.velocities)
            t = point.time_from_start.sec + 1e-9 * point.time_from_start.nanosec
            assert t == pytest.approx(brake_s, abs=1e-3)
        else:
            spin_for(client, brake_s + 0.5)
            count = len(sent)
            spin_for(client, 0.3)
            assert len(sent) == count  # the stream ended: at rest where braking ends
            end = np.array(sent[-1].data)
        fraction = (end - READY)[[0, 3]] / (goal - READY)[[0, 3]]
        assert np.all((0.05 < fraction) & (fraction < 0.95)), fraction  # short of the goal
    finally:
        client.close()
        assert node.stop() == 0, node.output()


def assert_held_at(trajectory: JointTrajectory, q: np.ndarray) -> None:
    """Check that ``trajectory`` is one point at ``q`` at rest: a hold where the arm stands."""
    (point,) = trajectory.points
    np.testing.assert_allclose(point.positions, q, atol=1e-12)
    assert not any(point.velocities)


def test_stop_after_the_controller_stopped_the_move_holds_the_arm_where_it_stands(
        ros_context, model):
    """A topic controller stopped the move itself (an e-stop, a controller switch) and says
    nothing: joint_states read the arm standing off the move.  ~/stop_execution then
    sends no braking planned from the move (the controller would draw its first step fast
    from where the arm stands) but a hold where joint_states put the arm, and says why."""
    from ros2_ik_interfaces.srv import ComputeIKPath
    from std_srvs.srv import Trigger
    from test_node_path import line_request
    topic = "/estop/controller"
    node, client = start("estop", f"controller_topic:={topic}", "velocity_scaling:=0.1")
    try:
        sent = collect(client, JointTrajectory, topic)
        stop = client.node.create_client(Trigger, "/estop/ik_node/stop_execution")
        assert stop.wait_for_service(timeout_sec=10.0)
        req = near_target(model, np.array([0.3, 0.0, 0.0, 0.3, 0.0, 0.0, 0.0]))
        req.execute = True
        executed(client, req, sent, joints=(ARM, READY))
        standing(client, 1.2)  # the ~2.6 s move is ~0.13 rad on by then
        count = len(sent)
        braked = call_resending(stop, Trigger.Request(), client.spin)
        assert braked.success and braked.message.startswith("joint_states put joint"), \
            braked.message
        assert braked.message.endswith("from joint_states instead, braking to rest in 0.001 s")
        wait_for(lambda: len(sent) > count, 5, "the hold", client.spin)
        assert_held_at(sent[-1], READY)
        # Again, then a new goal instead of the stop: it goes from rest where the arm
        # stands (not after a braking of the move), and the reply says why.
        executed(client, req, sent, joints=(ARM, READY))
        standing(client, 1.2)
        count = len(sent)
        other = near_target(model, np.array([-0.1, 0.0, 0.0, 0.1, 0.0, 0.0, 0.0]))
        other.execute = True
        res = client.call(other)
        assert res.error_code.val == IKErrorCode.SUCCESS, res.message
        assert "sent to the controller (joint_states put joint" in res.message, res.message
        assert res.message.endswith(": taken as stopped by the controller)"), res.message
        wait_for(lambda: len(sent) > count, 5, "the new goal's trajectory", client.spin)
        (point,) = sent[-1].points  # from rest where the arm stands: no braking first
        np.testing.assert_allclose(point.positions, res.solution.position, atol=1e-12)
        # And a path, timed from rest: not refused for a move the arm does not make ("a
        # move is under way"), and the reply says why.
        spin_for(client, 1.0)  # that move ends (by the node's clock)
        executed(client, req, sent, joints=(ARM, READY))
        standing(client, 1.2)
        paths = client.node.create_client(ComputeIKPath, "/estop/compute_ik_path")
        assert paths.wait_for_service(timeout_sec=30.0)
        answer = call_resending(paths, line_request(model, [0.0, 0.03, 0.0], 5, execute=True),
                                client.spin, 60.0, 10.0)
        assert answer.error_code.val == IKErrorCode.SUCCESS, answer.message
        assert answer.message.endswith(": taken as stopped by the controller)"), answer.message
    finally:
        client.close()
        assert node.stop() == 0, node.output()


def test_the_watch_holds_an_arm_the_controller_stopped_without_a_call(ros_context, model):
    """execute_watch: the controller stopped the move itself and says nothing, joint_states
    read the arm standing off it: the node replaces the move by a hold where the arm
    stands on its own (no ~/stop_execution), and logs why."""
    import time
    topic = "/watch/controller"
    node, client = start("watch", f"controller_topic:={topic}", "velocity_scaling:=0.1",
                         "execute_watch:=true")
    try:
        sent = collect(client, JointTrajectory, topic)
        req = near_target(model, np.array([0.3, 0.0, 0.0, 0.3, 0.0, 0.0, 0.0]))
        req.execute = True
        executed(client, req, sent, joints=(ARM, READY))
        count = len(sent)
        deadline = time.monotonic() + 1.5  # the ~2.6 s move is ~0.13 rad on by 1.2 s
        while time.monotonic() < deadline and len(sent) == count:
            client.publish_joints(ARM, READY)  # the arm reads where it stopped
            client.spin(0.02)
        assert len(sent) > count, "no hold sent"
        assert_held_at(sent[-1], READY)
    finally:
        client.close()
        assert node.stop() == 0, node.output()
    assert "execute_watch: the move under way stopped, the arm held" in node.output()


def test_moves_a_controller_runs_are_never_taken_as_stopped(ros_context, model):
    """A controller that runs what it is sent as a JointTrajectoryController draws it, its
    joint_states 50 ms late with velocities (fake_controller's follow mode), and
    execute_watch on: a move, a new goal mid-move and the move there run to their end,
    none taken as stopped (no hold, no note), and the arm ends at the second goal."""
    from ros2_ik.node.harness import FakeControllerProcess
    topic = "/follow/controller"
    arm = FakeControllerProcess("follow", ARM, READY, topic, mode="follow", rate_hz=100.0,
                                lag_s=0.05)
    node, client = start("follow", f"controller_topic:={topic}", "execute_watch:=true",
                         joints=False)
    try:
        states = []
        client.node.create_subscription(JointState, "/follow/joint_states", states.append, 10)
        sent = collect(client, JointTrajectory, topic)
        # Both ends of the node's controller topic known (the arm's and this test's) and
        # the arm publishing: a trajectory sent before discovery matched is lost.
        wait_for(lambda: client.node.count_subscribers(topic) >= 2 and states, 20,
                 "the fake arm on the controller topic", client.spin)
        spin_for(client, 0.5)
        answers = []

        def sent_one(dq) -> bool:
            req = near_target(model, np.array(dq))
            req.execute = True
            answers.append(client.call(req))
            return "sent to the controller" in answers[-1].message
        wait_for(lambda: sent_one([0.3, 0.0, 0.0, 0.3, 0.0, 0.0, 0.0]), 20,
                 "the first move, from the arm's joint_states", client.spin)
        spin_for(client, 0.6)
        assert np.abs(np.array(states[-1].position) - READY).max() > 0.01  # the arm follows
        assert sent_one([-0.2, 0.0, 0.0, 0.1, 0.0, 0.0, 0.0]), answers[-1].message
        assert answers[-1].message.endswith("; sent to the controller"), answers[-1].message
        wait_for(lambda: sent and len(sent[-1].points) == 2, 5,
                 "the redirect: braking, then on", client.spin)
        end = sent[-1].points[-1].time_from_start
        spin_for(client, end.sec + 1e-9 * end.nanosec + 0.3)
        np.testing.assert_allclose(states[-1].position, answers[-1].solution.position,
                                   atol=1e-9)
    finally:
        client.close()
        arm.stop()
        assert node.stop() == 0, node.output()
    assert "execute_watch" not in node.output() and "not running" not in node.output()


def test_an_arm_read_late_on_its_move_is_braked_from_the_move(ros_context, model, lag_s=0.05):
    """joint_states of an arm that follows the move, read ``lag_s`` late (as a driver's
    readings come, with their velocities): a new goal mid-move is not taken for one
    after a stop the controller made, but brakes the move from its plan, then goes on."""
    import time
    topic = "/lagging/controller"
    node, client = start("lagging", f"controller_topic:={topic}")
    try:
        sent = collect(client, JointTrajectory, topic)
        first = near_target(model, np.array([0.3, 0.0, 0.0, 0.3, 0.0, 0.0, 0.0]))
        first.execute = True
        executed(client, first, sent, joints=(ARM, READY))
        move, t0 = execution.Move.of(sent[-1], READY), time.monotonic()  # as the arm runs it

        def reading():
            return move.state_at(time.monotonic() - t0 - lag_s)
        deadline = t0 + 0.6  # the ~1.3 s move is ~0.14 rad on by then, at ~0.4 rad/s
        while time.monotonic() < deadline:
            client.publish_joints(ARM, *reading())
            client.spin(0.02)
        count = len(sent)
        other = near_target(model, np.array([-0.2, 0.0, 0.0, 0.1, 0.0, 0.0, 0.0]))
        other.execute = True
        q, v = reading()
        res = with_fresh_joints(client, ARM, q, lambda: client.call(other), velocities=v)
        assert res.error_code.val == IKErrorCode.SUCCESS, res.message
        wait_for(lambda: len(sent) > count, 5, "the redirected trajectory", client.spin)
        stop, end = sent[-1].points  # braked from the move, then on: not from rest
        goal = np.array(move.q_path[-1])
        fraction = (np.array(stop.positions) - READY) / (goal - READY)
        moved = np.abs(goal - READY) > 1e-3
        assert np.ptp(fraction[moved]) < 1e-6 and 0.05 < fraction[0] < 0.95  # on its line
        np.testing.assert_allclose(end.positions, res.solution.position, atol=1e-12)
    finally:
        client.close()
        assert node.stop() == 0, node.output()
    assert "the controller is not running it" not in node.output()


def standing(client, seconds: float) -> None:
    """Publish joint_states at READY for ``seconds`` [s] of wall time, processing callbacks:
    an arm that stands where its controller stopped it, whatever the node sent."""
    import time
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        client.publish_joints(ARM, READY)
        client.spin(0.02)


def spin_for(client, seconds: float) -> None:
    """Process callbacks for ``seconds`` [s] of wall time."""
    import time
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        client.spin(0.05)


@pytest.mark.parametrize("mode", ["position", "trajectory"])
def test_a_new_goal_mid_move_brakes_the_move_then_goes_on(ros_context, model, mode):
    """An execute while a move is under way: the controller gets no goal to blend from the
    arm's speed, but the move under way braked to rest along a line (no joint slowing
    harder than the move accelerated), then the cubic from rest to the new goal; the
    stream's commands stay continuous and end there."""
    topic = f"/redirect{mode[0]}/controller"
    kind = Float64MultiArray if mode == "position" else JointTrajectory
    node, client = start(f"redirect{mode[0]}", f"controller_mode:={mode}",
                         "velocity_scaling:=0.05", "position_rate:=50.0",
                         f"controller_topic:={topic}")
    try:
        sent = collect(client, kind, topic)
        fingers = ["panda_finger_joint1", "panda_finger_joint2"]
        joints = (ARM + fingers, list(READY) + [0.01, 0.01])
        req = near_target(model, np.array([0.3, 0.0, 0.0, 0.3, 0.0, 0.0, 0.0]))
        req.execute = True
        first = np.array(executed(client, req, sent, joints=joints).solution.position)
        spin_for(client, 1.0)
        count = len(sent)
        other = near_target(model, np.array([-0.2, 0.0, 0.0, 0.1, 0.0, 0.0, 0.0]))
        other.execute = True
        res = with_fresh_joints(client, *joints, lambda: client.call(other))
        assert res.error_code.val == IKErrorCode.SUCCESS, res.message
        goal = np.array(res.solution.position)
        seconds = 1.875 * np.max(np.abs(first - READY) / (0.05 * panda_vmax(model)))
        hardest = 10 / np.sqrt(3) * np.abs(first - READY) / seconds ** 2  # the first move's
        if mode == "trajectory":
            wait_for(lambda: len(sent) > count, 5, "the redirected trajectory", client.spin)
            stop, end = sent[-1].points
            assert not any(stop.velocities) and not any(end.velocities)
            np.testing.assert_allclose(end.positions, goal, atol=1e-12)
            fraction = (np.array(stop.positions) - READY) / (first - READY)
            moved = np.abs(first - READY) > 1e-3
            assert np.ptp(fraction[moved]) < 1e-6 and 0.05 < fraction[0] < 0.95  # on the line
            t_stop = stop.time_from_start.sec + 1e-9 * stop.time_from_start.nanosec
            assert t_stop <= 1.875 * np.max(np.abs(first - READY)) / seconds / np.min(
                hardest[moved]) + 1e-6
            return
        wait_for(lambda: np.allclose(sent[-1].data[:7], goal, atol=1e-12), 30,
                 "the new goal's last command", client.spin)
        commands = np.array([c.data[:7] for c in sent])
        # No jump anywhere (a new move from the joint_states, READY, would jump back): each
        # period's step within the scaled velocity limit, both moves being timed by it,
        # with two periods of slack for the stream's timing.
        steps = np.abs(np.diff(commands, axis=0))
        assert np.all(steps <= 0.05 * panda_vmax(model) * 3 / 50.0 + 1e-9)
        assert not np.allclose(commands[count:], commands[count - 1])  # it went on
    finally:
        client.close()
        assert node.stop() == 0, node.output()


def test_a_goal_for_an_arm_still_moving_brakes_it_first(ros_context, model):
    """No move of ours under way, but joint_states say the arm moves (another source, or
    settling): the goal is not timed from rest, which the controller would blend from that
    speed, but sent after the braking from the measured state, along the velocity; a
    standing arm's velocity noise changes nothing, and a path waits until the arm stands."""
    from ros2_ik_interfaces.srv import ComputeIKPath
    from test_node_path import line_request
    topic = "/moving/controller"
    node, client = start("moving", f"controller_topic:={topic}")
    try:
        sent = collect(client, JointTrajectory, topic)
        v = np.array([0.2, 0.0, 0.0, -0.1, 0.0, 0.0, 0.0])
        req = near_target(model, np.array([0.1, 0.0, 0.0, 0.1, 0.0, 0.0, 0.0]))
        req.execute = True
        res = with_fresh_joints(client, ARM, READY, lambda: client.call(req), velocities=v)
        assert res.error_code.val == IKErrorCode.SUCCESS, res.message
        wait_for(lambda: sent, 10, "the trajectory", client.spin)
        stop, end = sent[-1].points
        t = stop.time_from_start.sec + 1e-9 * stop.time_from_start.nanosec
        assert not any(stop.velocities) and list(stop.accelerations) == []  # the cubic
        # from the readings carried on at v to the planned instant (a lead after the
        # request, MAX_CARRY_S at most), then v t / 2 to rest
        on = (stop.positions[0] - READY[0]) / v[0] - t / 2
        np.testing.assert_allclose(stop.positions, READY + v * (on + t / 2), atol=1e-9)
        assert execution.MIN_LEAD_S - 1e-9 <= on <= execution.MAX_CARRY_S + 1e-9
        np.testing.assert_allclose(end.positions, res.solution.position, atol=1e-12)
        count = len(sent)
        noise = v * 1e-3  # a standing arm's reading: counts as at rest
        time_left = end.time_from_start.sec + 1e-9 * end.time_from_start.nanosec
        spin_for(client, time_left)  # the move ends (by the node's clock)
        res = with_fresh_joints(client, ARM, READY, lambda: client.call(req), velocities=noise)
        assert res.error_code.val == IKErrorCode.SUCCESS, res.message
        wait_for(lambda: len(sent) > count, 10, "the second trajectory", client.spin)
        assert len(sent[-1].points) == 1
        spin_for(client, time_left)
        paths = client.node.create_client(ComputeIKPath, "/moving/compute_ik_path")
        assert paths.wait_for_service(timeout_sec=30.0)
        path = line_request(model, [0.0, 0.05, 0.0], 10, execute=True)
        answer = with_fresh_joints(client, ARM, READY, lambda: call_resending(
            paths, path, client.spin, 60.0, 10.0), velocities=v)
        assert answer.error_code.val == IKErrorCode.EXECUTION_REFUSED, answer.message
        assert "the arm is moving" in answer.message
    finally:
        client.close()
        assert node.stop() == 0, node.output()
