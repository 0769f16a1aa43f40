"""The rviz goal marker: feedback -> ComputeIK request seeded from the last answer.

The logic is tested without interactive_markers (absent from PyPI) with a stand-in node
whose ``_on_compute_ik`` runs the real core on the Panda; where interactive_markers is
installed, the marker is dragged over DDS and ``~/solution`` is checked by our FK.
"""
import os

import numpy as np
import pinocchio as pin
import pytest

pytest.importorskip("rclpy")

from panda_node import ARM, READY  # noqa: E402
from ros2_ik.core import robots  # noqa: E402
from ros2_ik.node import interactive_goal as ig  # noqa: E402
from ros2_ik.node.compute_ik import compute_ik  # noqa: E402
from ros2_ik.node.conversions import se3_to_pose  # noqa: E402
from ros2_ik.node.parameters import GroupConfig, NodeConfig  # noqa: E402
from ros2_ik.node.robot_source import JointStateCache, RobotSource  # noqa: E402
from ros2_ik_interfaces.msg import IKErrorCode  # noqa: E402
from ros2_ik_interfaces.srv import ComputeIK  # noqa: E402
from visualization_msgs.msg import InteractiveMarkerFeedback  # noqa: E402
from node_inputs import config  # noqa: E402

BASE, TIP = "panda_link0", "panda_hand"


@pytest.fixture(scope="module")
def model():
    return pin.buildModelFromXML(robots.urdf_text("panda"))


def fk(model, q, frame=TIP) -> pin.SE3:
    full = pin.neutral(model)
    full[:7] = q
    data = model.createData()
    pin.framesForwardKinematics(model, data, full)
    return data.oMf[model.getFrameId(BASE)].actInv(data.oMf[model.getFrameId(frame)])


def feedback(T: pin.SE3, event=InteractiveMarkerFeedback.POSE_UPDATE, frame=BASE):
    msg = InteractiveMarkerFeedback(marker_name=ig.MARKER_NAME, event_type=event)
    msg.header.frame_id = frame
    msg.pose = se3_to_pose(T)
    return msg


class Logger:
    def __init__(self):
        self.lines = []

    def warning(self, text):
        self.lines.append(text)

    info = warning


class FakeServer:
    """Records what InteractiveMarkerServer would be asked to do."""

    def __init__(self):
        self.markers, self.callbacks, self.applied = {}, {}, 0

    def insert(self, marker, *, feedback_callback=None):
        self.markers[marker.name] = marker
        self.callbacks[marker.name] = feedback_callback

    def applyChanges(self):
        self.applied += 1


class FakeNode:
    """The attributes of IKNode that InteractiveGoal uses; solves with the real core."""

    def __init__(self):
        self.config = config({"arm": GroupConfig("arm", BASE, TIP)}, group_names=["arm"],
                             default_group="arm")
        self.robot = RobotSource()
        self.joints = JointStateCache()
        self.requests, self.answers, self.logger = [], [], Logger()
        self.executes = []  # each solve's ``execute`` argument

    def create_timer(self, period_s, callback, callback_group=None):
        self.timer = (period_s, callback, callback_group)
        return self.timer

    def get_logger(self):
        return self.logger

    def _on_compute_ik(self, request, response, execute=None):
        answer = compute_ik(self.robot.snapshot, self.robot.error, self.config,
                            self.joints, request).response
        self.requests.append(request)
        self.executes.append(execute)
        self.answers.append(answer)
        return answer


# --- pure pieces ------------------------------------------------------------------------
def test_latest_feedback_keeps_only_the_newest_solve_event():
    slot = ig.LatestFeedback()
    first, second = feedback(pin.SE3.Identity()), feedback(pin.SE3.Identity())
    slot.put(first)
    slot.put(second)
    slot.put(feedback(pin.SE3.Identity(), InteractiveMarkerFeedback.MOUSE_DOWN))
    slot.put(feedback(pin.SE3.Identity(), InteractiveMarkerFeedback.KEEP_ALIVE))
    assert slot.take() is second
    assert slot.take() is None
    up = feedback(pin.SE3.Identity(), InteractiveMarkerFeedback.MOUSE_UP)
    slot.put(up)
    assert slot.take() is up


def test_goal_request_carries_pose_frame_and_last_answer_as_seed():
    T = pin.SE3(np.eye(3), np.array([0.4, 0.1, 0.5]))
    req = ig.goal_request(feedback(T), (tuple(ARM), tuple(READY)), "fallback")
    assert req.target.header.frame_id == BASE
    assert req.target.pose.position.y == pytest.approx(0.1)
    assert list(req.seed.name) == ARM and list(req.seed.position) == pytest.approx(READY)
    assert req.execute is False                     # execution: execute_by_default only
    assert req.avoid_collisions is False
    req = ig.goal_request(feedback(T, frame=""), None, "fallback", True)
    assert req.target.header.frame_id == "fallback" and list(req.seed.name) == []
    assert req.avoid_collisions is True             # goal_avoid_collisions


def test_remember_keeps_the_last_configuration():
    answer = ComputeIK.Response()
    assert ig.remember(("a",), answer) == ("a",)
    answer.solution.name, answer.solution.position = ["j"], [0.5]
    assert ig.remember(None, answer) == (("j",), (0.5,))


def test_marker_moves_and_rotates_along_each_axis():
    marker = ig.marker(BASE, se3_to_pose(pin.SE3.Identity()), 0.3)
    assert marker.header.frame_id == BASE and marker.scale == pytest.approx(0.3)
    axes = {}
    for control in marker.controls:
        o = control.orientation
        R = pin.Quaternion(o.w, o.x, o.y, o.z).toRotationMatrix()
        assert np.isclose(np.linalg.norm([o.w, o.x, o.y, o.z]), 1.0)
        axes.setdefault(control.interaction_mode, []).append(np.abs(R[:, 0]))
    for mode in (ig.InteractiveMarkerControl.MOVE_AXIS, ig.InteractiveMarkerControl.ROTATE_AXIS):
        np.testing.assert_allclose(sorted(map(tuple, axes[mode])), sorted(map(tuple, np.eye(3))),
                                   atol=1e-12)


# --- the marker on a stand-in node, solved by the core ------------------------------------
@pytest.fixture
def goal():
    node = FakeNode()
    server = FakeServer()
    return node, server, ig.InteractiveGoal(node, server)


def test_no_marker_before_the_model(goal):
    node, server, interactive = goal
    node.timer[1]()
    assert server.markers == {} and node.requests == []


def test_marker_starts_at_the_tip_of_the_current_joint_states(goal, model):
    node, server, interactive = goal
    node.joints.update(ARM, READY)
    node.robot.set_urdf(robots.urdf_text("panda"))
    node.timer[1]()
    marker = server.markers[ig.MARKER_NAME]
    assert marker.header.frame_id == BASE and server.applied == 1
    p = marker.pose.position
    np.testing.assert_allclose([p.x, p.y, p.z], fk(model, READY).translation, atol=1e-9)
    assert node.timer[0] == ig.SOLVE_PERIOD_S


def test_marker_follows_joint_states_that_arrive_after_the_model(goal, model):
    node, server, interactive = goal
    node.robot.set_urdf(robots.urdf_text("panda"))
    node.timer[1]()                                  # no joint_states: mid-limits
    node.joints.update(ARM, READY)
    node.timer[1]()                                  # they arrived: moved to them
    p = server.markers[ig.MARKER_NAME].pose.position
    np.testing.assert_allclose([p.x, p.y, p.z], fk(model, READY).translation, atol=1e-9)
    node.timer[1]()
    assert server.applied == 2                       # placed at joint_states: stays


def test_dragging_solves_seeded_from_the_last_answer(goal, model):
    """Collision-aware (goal_avoid_collisions, the default): the SRDF lets the fingers touch."""
    node, server, interactive = goal
    node.robot.set_srdf(robots.srdf_text("panda"))
    node.robot.set_urdf(robots.urdf_text("panda"))
    node.timer[1]()
    put = server.callbacks[ig.MARKER_NAME]
    targets = [fk(model, np.array(READY) + d) for d in (0.05, 0.1, 0.15)]
    for T in targets:
        put(feedback(pin.SE3.Identity()))            # superseded before the timer fires
        put(feedback(T))
        node.timer[1]()
    assert len(node.requests) == 3                   # one solve per tick, newest pose
    assert all(request.avoid_collisions for request in node.requests)
    assert list(node.requests[0].seed.name) == []    # first: joint_states / mid-limits
    for before, request in zip(node.answers, node.requests[1:]):
        assert list(request.seed.position) == list(before.solution.position)
    for T, answer in zip(targets, node.answers):
        assert answer.error_code.val == IKErrorCode.SUCCESS, answer.message
        T_reached = fk(model, answer.solution.position)
        assert np.linalg.norm(T_reached.translation - T.translation) <= 1e-4
    node.timer[1]()
    assert len(node.requests) == 3                   # nothing new: no solve


@pytest.mark.parametrize("by_default", [False, True])
def test_a_drag_executes_where_the_marker_is_released(goal, model, by_default):
    """With execute_by_default, the pose where the marker is let go (MOUSE_UP) is sent, not
    each step of the drag: each would brake the move under way to start the next."""
    node, server, interactive = goal
    node.config = config({"arm": GroupConfig("arm", BASE, TIP)}, group_names=["arm"],
                         default_group="arm", execute_by_default=by_default)
    node.robot.set_srdf(robots.srdf_text("panda"))
    node.robot.set_urdf(robots.urdf_text("panda"))
    node.timer[1]()
    put = server.callbacks[ig.MARKER_NAME]
    for d in (0.05, 0.1):
        put(feedback(fk(model, np.array(READY) + d)))
        node.timer[1]()
    put(feedback(fk(model, np.array(READY) + 0.1), InteractiveMarkerFeedback.MOUSE_UP))
    node.timer[1]()
    assert node.executes == [False, False, by_default]
    assert not any(request.execute for request in node.requests)


class FakeServo:
    """The servo loop's face to the marker: active, and the pose targets it got."""

    def __init__(self):
        self.active, self.poses = True, []

    def on_pose(self, msg):
        self.poses.append(msg)


def test_while_servo_runs_the_marker_is_its_target_and_stays_fresh(goal, model):
    node, server, interactive = goal
    node.robot.set_urdf(robots.urdf_text("panda"))
    node.timer[1]()
    node.servo = FakeServo()
    T = fk(model, np.array(READY) + 0.1)
    server.callbacks[ig.MARKER_NAME](feedback(T))
    node.timer[1]()
    node.timer[1]()                                  # no new drag: the same pose re-sent
    assert node.requests == [] and len(node.servo.poses) == 2
    for msg in node.servo.poses:
        assert msg.header.frame_id == BASE
        p = msg.pose.position
        np.testing.assert_allclose([p.x, p.y, p.z], T.translation, atol=1e-12)
    node.servo.active = False                        # servo stopped: drags solve again
    server.callbacks[ig.MARKER_NAME](feedback(T))
    node.timer[1]()
    assert len(node.requests) == 1 and len(node.servo.poses) == 2


def test_new_model_moves_the_marker_and_forgets_the_seed(goal, model):
    node, server, interactive = goal
    node.robot.set_urdf(robots.urdf_text("panda"))
    node.timer[1]()
    server.callbacks[ig.MARKER_NAME](feedback(fk(model, np.array(READY) + 0.1)))
    node.timer[1]()
    # a new robot_description (the same text again would keep the model)
    node.robot.set_urdf(robots.urdf_text("panda") + "\n<!-- v2 -->\n")
    server.callbacks[ig.MARKER_NAME](feedback(fk(model, np.array(READY) + 0.1)))
    node.timer[1]()
    assert server.applied == 2 and list(node.requests[-1].seed.name) == []


def test_no_default_group_means_no_marker_and_a_warning(model):
    node = FakeNode()
    node.config = NodeConfig({**node.config.values, "default_group": "", "group_names": []})
    server = FakeServer()
    ig.InteractiveGoal(node, server)
    node.robot.set_urdf(robots.urdf_text("panda"))
    node.timer[1]()
    assert server.markers == {} and "no interactive marker" in node.logger.lines[0]


# --- over DDS, where interactive_markers is installed ------------------------------------
def test_dragging_over_dds(ros_context, model):
    pytest.importorskip("interactive_markers", reason="interactive_markers is not installed")
    from ament_index_python.packages import get_package_share_directory
    from ros2_ik.node.harness import Client, NodeProcess, call_resending, wait_for
    from sensor_msgs.msg import JointState
    from visualization_msgs.srv import GetInteractiveMarkers

    config = os.path.join(get_package_share_directory("ros2_ik"), "config", "panda.yaml")
    node = NodeProcess(extra_args=["--params-file", config, "-r", "__ns:=/im"])
    client = Client("marker_client", namespace="/im")
    solutions = []
    client.node.create_subscription(JointState, "/im/ik_node/solution", solutions.append, 10)
    pub = client.node.create_publisher(InteractiveMarkerFeedback,
                                       "/im/ik_node/goal_marker/feedback", 10)
    try:
        client.publish_description(robots.urdf_text("panda"), robots.srdf_text("panda"))
        client.publish_joints(ARM, READY)
        client.wait_for_service()
        # The marker is offered at the hand, at the published joint state.
        markers = client.node.create_client(
            GetInteractiveMarkers, "/im/ik_node/goal_marker/get_interactive_markers")
        assert markers.wait_for_service(timeout_sec=30)

        def at_the_hand():
            client.publish_joints(ARM, READY)
            response = call_resending(markers, GetInteractiveMarkers.Request(), client.spin)
            return [m for m in response.markers if np.allclose(
                [m.pose.position.x, m.pose.position.y, m.pose.position.z],
                fk(model, READY).translation, atol=1e-6)]
        wait_for(at_the_hand, 30, "the goal marker at the hand", client.spin)
        T = fk(model, np.array(READY) + 0.1)

        def drag():
            pub.publish(feedback(T))
            client.spin(0.1)
            return bool(solutions)
        wait_for(drag, 30, "a solution after dragging the marker", client.spin)
        T_reached = fk(model, solutions[-1].position)
        assert np.linalg.norm(T_reached.translation - T.translation) <= 1e-4
    finally:
        client.close()
        assert node.stop() == 0, node.output()
