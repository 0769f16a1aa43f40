"""The documented whole-body CLI examples (docs/moveit.md), over real DDS with ik_node running.

ik_node runs as a process with the shipped config files (config/pr2_whole_body.yaml,
config/talos_whole_body.yaml) and example-robot-data's URDF and SRDF, as ``ros2 launch``
starts it; the requests are the documented ones.  pr2: ComputeIK with ``execute`` sends
the joints to the trajectory topic, the base pose to ``base_goal_topic`` and the base
marker, all checked against the reply and against our own FK (a pinocchio model built
here, planar root).  talos: the constrained-IK action with both soles held and the CoM
inside their polygon, checked by our own FK and ``pin.centerOfMass``.
"""
import numpy as np
import pinocchio as pin
import pytest

pytest.importorskip("rclpy")

from geometry_msgs.msg import Point, PoseStamped, Transform  # noqa: E402
from trajectory_msgs.msg import JointTrajectory  # noqa: E402
from visualization_msgs.msg import MarkerArray  # noqa: E402

from ros2_ik.node.execution import STALE_JOINTS  # noqa: E402
from ros2_ik.node.harness import act_until, wait_for, with_fresh_joints  # noqa: E402
from ros2_ik_interfaces.action import ConstrainedIK  # noqa: E402
from ros2_ik_interfaces.msg import (  # noqa: E402
    ContactConstraint, IKErrorCode, PoseGoal, SupportPolygonConstraint)
from ros2_ik_interfaces.srv import ComputeIK  # noqa: E402
from whole_body_checks import SOLE, full_q, inside_by, path_tips, serve, stop  # noqa: E402

FAR = (2.0, -0.5, 0.9)  # the pr2 example's wrist target, beyond the arm's reach [m]
STANDING = Transform()  # the talos example's base seed: 1.02 m up, upright
STANDING.translation.z, STANDING.rotation.w = 1.02, 1.0


def _collect(client, kind, topic):
    box = []
    client.node.create_subscription(kind, topic, box.append, 10)
    return box


def _mid_joints(model):
    """Every one-variable joint at the middle of its limits (0 for a continuous one)."""
    names, values = [], []
    for j in range(2, model.njoints):
        joint = model.joints[j]
        if joint.nv != 1:
            continue
        lo, hi = model.lowerPositionLimit[joint.idx_q], model.upperPositionLimit[joint.idx_q]
        names.append(model.names[j])
        values.append(0.0 if joint.nq == 2 or not np.isfinite(lo + hi) else (lo + hi) / 2)
    return names, values


@pytest.fixture(scope="module")
def pr2_node(ros_context):
    node, client, urdf = serve(
        "wbpr2", "pr2_whole_body.yaml", "pr2_description/urdf/pr2.urdf",
        "pr2_description/srdf/pr2.srdf", "base_goal_topic:=/wbpr2/base_controller/goal",
        "controller_topic:=/wbpr2/whole_body_controller/joint_trajectory",
        "execute_max_joint_jump:=3.2")
    yield client, pin.buildModelFromXML(urdf, pin.JointModelPlanar())
    stop(node, client)


def test_pr2_example_executes_joints_and_base_and_shows_the_base(pr2_node):
    client, model = pr2_node
    trajectories = _collect(client, JointTrajectory,
                            "/wbpr2/whole_body_controller/joint_trajectory")
    base_goals = _collect(client, PoseStamped, "/wbpr2/base_controller/goal")
    markers = _collect(client, MarkerArray, "/wbpr2/ik_node/markers")
    names, mid = _mid_joints(model)
    client.publish_joints(names, mid)
    req = ComputeIK.Request()  # the documented request, plus execute
    req.group_name, req.tip_link, req.position_only = "whole_body", "r_wrist_roll_link", True
    req.target.header.frame_id = "odom_combined"
    req.target.pose.position = Point(x=FAR[0], y=FAR[1], z=FAR[2])
    req.target.pose.orientation.w = 1.0
    req.execute, req.random_seed = True, 3
    wait_for(lambda: client.node.count_publishers("/wbpr2/joint_states") > 0, 10,
             "joint_states publisher", client.spin)
    answers = []

    def execute():
        res = client.wait_for_model(req)
        if res.error_code.val == IKErrorCode.EXECUTION_REFUSED and STALE_JOINTS in res.message:
            # the first state may arrive before discovery, or go stale on a busy machine
            res = with_fresh_joints(client, names, mid, lambda: client.call(req))
        assert res.error_code.val == IKErrorCode.SUCCESS, res.message
        answers.append(res)

    act_until(execute, lambda: trajectories and base_goals and any(
        m.ns == "base" for a in markers for m in a.markers), 20, "the executed outputs",
        client.spin, again_after_s=5.0)
    res = answers[-1]
    base = res.solution_base
    assert list(base.joint_names) == ["world_joint"]
    assert base.header.frame_id == "odom_combined"
    q = full_q(model, res.solution.name, res.solution.position, base.transforms[0])
    data = model.createData()
    pin.framesForwardKinematics(model, data, q)
    wrist = data.oMf[model.getFrameId("r_wrist_roll_link")].translation
    assert np.linalg.norm(wrist - FAR) < 1e-3  # our FK, the reply's base and joints
    traj = trajectories[-1]
    assert list(traj.joint_names) == list(res.solution.name)
    np.testing.assert_allclose(traj.points[-1].positions, res.solution.position)
    goal = base_goals[-1]
    assert goal.header.frame_id == "odom_combined"
    tf = base.transforms[0]
    np.testing.assert_allclose(
        [goal.pose.position.x, goal.pose.position.y, goal.pose.position.z,
         goal.pose.orientation.z, goal.pose.orientation.w],
        [tf.translation.x, tf.translation.y, tf.translation.z, tf.rotation.z, tf.rotation.w])
    assert np.hypot(q[0], q[1]) > 0.5  # the base drove toward the target
    # the last one: a first request refused as stale (above) shows its own answer too
    shown = [m for a in markers for m in a.markers if m.ns == "base"][-1]
    assert shown.header.frame_id == "odom_combined"  # a frame tf knows, not "universe"
    np.testing.assert_allclose([shown.pose.position.x, shown.pose.position.y,
                                shown.pose.orientation.z, shown.pose.orientation.w],
                               [q[0], q[1], tf.rotation.z, tf.rotation.w], atol=1e-9)


def test_pr2_whole_body_path_is_solved_and_its_execution_refused_by_name(pr2_node):
    """ComputeIKPath on the whole-body group, in odom_combined, with ``execute``.

    The path is solved (each point checked by our own FK, the base from its
    ``world_joint/x, y, theta`` columns); executing it is refused naming the base (the
    controller takes joints, the base columns are in no joint_states: the reply said
    "joint_states are stale"), and nothing reaches the controller.
    """
    from ros2_ik.node.harness import call_resending
    from ros2_ik_interfaces.srv import ComputeIKPath
    from geometry_msgs.msg import Pose
    client, model = pr2_node
    trajectories = _collect(client, JointTrajectory,
                            "/wbpr2/whole_body_controller/joint_trajectory")
    markers = _collect(client, MarkerArray, "/wbpr2/ik_node/markers")
    names, mid = _mid_joints(model)
    client.publish_joints(names, mid)
    path = client.node.create_client(ComputeIKPath, "/wbpr2/compute_ik_path")
    assert path.wait_for_service(timeout_sec=30.0)
    req = ComputeIKPath.Request()
    req.group_name, req.tip_link = "whole_body", "r_wrist_roll_link"
    req.header.frame_id = "odom_combined"
    goals = [(1.2, -0.4, 0.8), (1.25, -0.35, 0.82)]
    req.waypoints = [Pose() for _ in goals]
    for pose, (x, y, z) in zip(req.waypoints, goals):
        pose.position = Point(x=x, y=y, z=z)
        pose.orientation.w = 1.0
    req.position_tolerance, req.orientation_tolerance = 1e-4, 1e-3
    req.max_joint_step, req.timeout, req.execute = [0.5], 1.0, True
    res = call_resending(path, req, client.spin, 60.0, 10.0)
    assert res.error_code.val == IKErrorCode.EXECUTION_REFUSED, res.message
    assert "moves the base ('world_joint')" in res.message
    columns = list(res.trajectory.joint_names)
    assert columns[:3] == ["world_joint/x", "world_joint/y", "world_joint/theta"]
    tips = path_tips(model, res.trajectory, "r_wrist_roll_link")
    assert np.abs(np.array(tips) - np.array(goals)).max() < 2e-4
    client.spin(0.5)
    assert not any(list(t.joint_names)[:1] == ["world_joint/x"] for t in trajectories)
    # Its markers, in odom_combined (the model's root stands for it): drawing them in a
    # frame the model does not have raised, and a raising async callback made the node
    # end with a segmentation fault (rclpy's EventsExecutor).
    act_until(lambda: call_resending(path, req, client.spin, 60.0, 10.0),
              lambda: any(m.ns == "path_waypoints" for a in markers for m in a.markers), 30,
              "the path's markers", client.spin, again_after_s=5.0, acted=True)
    line = next(m for a in markers for m in a.markers if m.ns == "path_reached")
    assert line.header.frame_id == "odom_combined"
    reached = np.array([(p.x, p.y, p.z) for p in line.points])
    assert np.abs(reached - np.array(goals)).max() < 2e-4
    again = call_resending(path, req, client.spin, 60.0, 10.0)  # and the node still serves
    assert again.error_code.val == IKErrorCode.EXECUTION_REFUSED, again.message


@pytest.fixture(scope="module")
def talos_node(ros_context):
    node, client, urdf = serve("wbtalos", "talos_whole_body.yaml",
                               "talos_data/robots/talos_full_v2.urdf",
                               "talos_data/srdf/talos.srdf")
    probe = ComputeIK.Request()
    probe.target.pose.position.x = 0.4
    client.wait_for_model(probe)
    assert client.action.wait_for_server(timeout_sec=30)
    yield client, pin.buildModelFromXML(urdf, pin.JointModelFreeFlyer())
    stop(node, client)


def _talos_goal():
    """The documented action goal: soles held, CoM 2 cm inside them, the left gripper."""
    goal = ConstrainedIK.Goal()
    goal.group_name, goal.timeout, goal.random_seed = "whole_body", 1.0, 7
    goal.seed_base.joint_names = ["root_joint"]
    goal.seed_base.transforms = [STANDING]
    pose = PoseGoal(tip_link="gripper_left_base_link", position_only=True)
    pose.target.header.frame_id = "universe"
    pose.target.pose.position = Point(x=0.3, y=0.3, z=0.8)
    pose.target.pose.orientation.w = 1.0
    goal.pose_goals = [pose]
    goal.contact_constraints = [ContactConstraint(frame=f, hold_current=True)
                                for f in ("left_sole_link", "right_sole_link")]
    goal.support_polygon_constraints = [SupportPolygonConstraint(
        frames=["left_sole_link", "right_sole_link"], margin=0.02,
        local_points=[Point(x=x, y=y) for x, y in SOLE])]
    return goal


def test_talos_example_holds_the_soles_and_the_com(talos_node):
    client, model = talos_node
    send = client.action.send_goal_async(_talos_goal())
    wait_for(send.done, 30, "goal acceptance", client.spin)
    handle = send.result()
    assert handle.accepted
    future = handle.get_result_async()
    wait_for(future.done, 60, "the action result", client.spin)
    result = future.result().result
    assert result.error_code.val == IKErrorCode.SUCCESS, result.message
    sol = result.solutions[0]
    assert list(sol.base.joint_names) == ["root_joint"]
    q = full_q(model, sol.joint_state.name, sol.joint_state.position, sol.base.transforms[0])
    assert abs(np.linalg.norm(q[3:7]) - 1.0) < 1e-9  # a unit quaternion on the wire
    seed = full_q(model, *_mid_joints(model), STANDING)  # the node's seed: mid-range
    data, seed_data = model.createData(), model.createData()
    pin.framesForwardKinematics(model, data, q)
    pin.framesForwardKinematics(model, seed_data, seed)
    gripper = data.oMf[model.getFrameId("gripper_left_base_link")].translation
    assert np.linalg.norm(gripper - (0.3, 0.3, 0.8)) < 1e-3
    corners = []
    for sole in ("left_sole_link", "right_sole_link"):
        T, T0 = (d.oMf[model.getFrameId(sole)] for d in (data, seed_data))
        assert np.linalg.norm(pin.log6(T0.actInv(T)).vector) < 2e-3  # held where it stood
        corners += [T.act(np.array([x, y, 0.0]))[:2] for x, y in SOLE]
    com = pin.centerOfMass(model, data, q)[:2]
    assert inside_by(com, np.array(corners)) >= 0.02 - 1e-3
