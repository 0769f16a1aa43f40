"""FollowJointTrajectory execution: outcome reporting, the fallback to the topic when
control_msgs is missing, and, where control_msgs is installed, ik_node executing against
a fake FollowJointTrajectory server over real DDS."""
import sys

import numpy as np
import pytest

pytest.importorskip("rclpy")

from action_msgs.msg import GoalStatus  # noqa: E402
from ros2_ik.node.trajectory_action import describe  # noqa: E402


def test_outcomes_are_described_with_names():
    assert describe("/arm/follow", GoalStatus.STATUS_SUCCEEDED, 0, "") == \
        "/arm/follow: succeeded, SUCCESSFUL"
    assert describe("/arm/follow", GoalStatus.STATUS_ABORTED, -4, "joint 3 off path") == \
        "/arm/follow: aborted, PATH_TOLERANCE_VIOLATED (joint 3 off path)"
    assert describe("/a", 99, -17, "") == "/a: status 99, error_code -17"


def test_missing_control_msgs_falls_back_to_the_topic(ros_context, monkeypatch):
    import rclpy
    from ros2_ik.node.trajectory_action import make_sender
    monkeypatch.setitem(sys.modules, "control_msgs", None)     # absent, installed or not
    monkeypatch.setitem(sys.modules, "control_msgs.action", None)
    node = rclpy.create_node("fallback_test")
    try:
        assert make_sender(node, "", None) is None
        assert make_sender(node, "/arm/follow_joint_trajectory", None) is None
    finally:
        node.destroy_node()


# --- ik_node against a fake FollowJointTrajectory server, where control_msgs is installed --
@pytest.fixture(scope="module")
def fjt_server(ros_context):
    """A FollowJointTrajectory server: records goals, ends each as ``outcome`` says.

    ``state["hold"]`` set (an rclpy Future): each goal runs until it is done, as a
    controller's goal runs while its trajectory does, then succeeds.
    """
    pytest.importorskip("control_msgs.action", reason="control_msgs is not installed")
    import rclpy
    from control_msgs.action import FollowJointTrajectory
    from rclpy.action import ActionServer

    node = rclpy.create_node("fake_fjt_server")
    state = {"goals": [], "outcome": ("succeed", 0, ""), "hold": None}

    async def execute(handle):
        state["goals"].append(handle.request.trajectory)
        how, code, text = state["outcome"]
        if state["hold"] is not None:
            await state["hold"]
        getattr(handle, how)()
        return FollowJointTrajectory.Result(error_code=code, error_string=text)

    server = ActionServer(node, FollowJointTrajectory,
                          "/fjt/arm_controller/follow_joint_trajectory", execute)
    yield node, state
    server.destroy()
    node.destroy_node()


@pytest.fixture(scope="module")
def fjt_node(fjt_server):
    from panda_node import start, stop
    node, client = start(
        "fjt", "controller_action:=/fjt/arm_controller/follow_joint_trajectory",
        "controller_topic:=/fjt/arm_controller/joint_trajectory")
    yield node, client
    stop(node, client)


@pytest.mark.parametrize("outcome,expected", [
    (("succeed", 0, ""), "succeeded, SUCCESSFUL"),
    (("abort", -4, "joint 3 off path"), "aborted, PATH_TOLERANCE_VIOLATED (joint 3 off path)"),
])
def test_execution_goes_to_the_follow_joint_trajectory_server(fjt_server, fjt_node, outcome,
                                                              expected):
    import rclpy
    from panda_node import ARM, READY, T_frame, description
    from ros2_ik.node.conversions import se3_to_pose
    from ros2_ik.node.harness import wait_for
    from ros2_ik_interfaces.msg import IKErrorCode
    from ros2_ik_interfaces.srv import ComputeIK
    from std_msgs.msg import String
    from trajectory_msgs.msg import JointTrajectory

    server_node, state = fjt_server
    node, client = fjt_node
    state["outcome"], goals_before = outcome, len(state["goals"])
    results, on_topic = [], []
    client.node.create_subscription(String, "/fjt/ik_node/execution_result",
                                    results.append, 10)
    client.node.create_subscription(JointTrajectory, "/fjt/arm_controller/joint_trajectory",
                                    on_topic.append, 10)
    model = description()[2]
    q = np.array(READY) + np.array([0.1, -0.1, 0.05, 0.1, 0.0, 0.1, 0.0])
    request = ComputeIK.Request(execute=True, timeout=0.5, random_seed=1)
    request.target.header.frame_id = "panda_link0"
    request.target.pose = se3_to_pose(T_frame(model, ARM, q, "panda_hand", "panda_link0"))
    request.seed.name, request.seed.position = ARM, list(READY)

    def spin(t):
        client.spin(t / 2)
        rclpy.spin_once(server_node, timeout_sec=t / 2)

    responses = []

    def executed():
        """Ask (with fresh joint_states) until ik_node has found the server and sent."""
        client.publish_joints(ARM, READY)
        responses.append(client.call(request))
        return "is not available" not in responses[-1].message
    wait_for(executed, 30, "the FollowJointTrajectory server", spin)
    assert responses[-1].error_code.val == IKErrorCode.SUCCESS, responses[-1].message
    wait_for(lambda: results and len(state["goals"]) > goals_before, 30,
             "the goal and its outcome", spin)
    assert results[-1].data == f"/fjt/arm_controller/follow_joint_trajectory: {expected}"
    trajectory = state["goals"][-1]
    assert list(trajectory.joint_names) == ARM
    T_reached = T_frame(model, ARM, trajectory.points[-1].positions, "panda_hand",
                        "panda_link0")
    T_target = T_frame(model, ARM, q, "panda_hand", "panda_link0")
    assert np.linalg.norm(T_reached.translation - T_target.translation) <= 1e-4
    assert on_topic == []                       # the action, not the topic


def test_stop_execution_sends_the_braking_as_a_new_goal(fjt_server, fjt_node):
    """~/stop_execution mid-move: a second goal, one point where braking ends, at rest;
    once the goals ended (the server said so), no move is under way."""
    import time

    import rclpy
    from panda_node import ARM, READY, T_frame, description
    from ros2_ik.node.conversions import se3_to_pose
    from ros2_ik.node.harness import call_resending, wait_for
    from ros2_ik_interfaces.msg import IKErrorCode
    from ros2_ik_interfaces.srv import ComputeIK
    from rclpy.task import Future
    from std_msgs.msg import String
    from std_srvs.srv import Trigger

    server_node, state = fjt_server
    node, client = fjt_node
    state["outcome"], state["hold"] = ("succeed", 0, ""), Future()  # goals run until released

    def spin(t):
        client.spin(t / 2)
        rclpy.spin_once(server_node, timeout_sec=t / 2)

    model = description()[2]
    q = np.array(READY) + np.array([0.4, 0.0, 0.0, 0.3, 0.0, 0.0, 0.0])
    from test_node_outputs import set_param
    assert set_param(client, "velocity_scaling", 0.05, "fjt").successful  # a 5.5 s move
    request = ComputeIK.Request(execute=True, timeout=0.5, random_seed=1)
    request.target.header.frame_id = "panda_link0"
    request.target.pose = se3_to_pose(T_frame(model, ARM, q, "panda_hand", "panda_link0"))
    request.seed.name, request.seed.position = ARM, list(READY)
    responses, goals_before = [], len(state["goals"])

    def executed():
        client.publish_joints(ARM, READY)
        responses.append(client.call(request))
        return "is not available" not in responses[-1].message
    try:
        wait_for(executed, 30, "the FollowJointTrajectory server", spin)
        assert responses[-1].error_code.val == IKErrorCode.SUCCESS, responses[-1].message
        wait_for(lambda: len(state["goals"]) > goals_before, 30, "the goal", spin)
        moving = time.monotonic() + 1.5
        while time.monotonic() < moving:  # braking from 1.5 s in takes ~1.1 s
            spin(0.05)
        stop = client.node.create_client(Trigger, "/fjt/ik_node/stop_execution")
        braked = call_resending(stop, Trigger.Request(), spin)
        braking_ends = time.monotonic() + float(braked.message.split()[-2])
        assert braked.message.startswith("braking to rest in"), braked.message
        wait_for(lambda: len(state["goals"]) > goals_before + 1, 30, "the braking goal", spin)
        results = []
        client.node.create_subscription(String, "/fjt/ik_node/execution_result",
                                        results.append, 10)
        state["hold"].set_result(None)  # the goals end (as the arm stops): no move under way
        wait_for(lambda: len(results) >= 2, 30, "both goals' outcomes", spin)
        idle = call_resending(stop, Trigger.Request(), spin)
        assert time.monotonic() < braking_ends  # else the braking's timed end said it
        assert idle.message == "no move under way", idle.message
    finally:
        set_param(client, "velocity_scaling", 0.2, "fjt")
        if not state["hold"].done():
            state["hold"].set_result(None)
        state["hold"] = None
    goal, braking = state["goals"][-2], state["goals"][-1]
    assert list(braking.joint_names) == ARM and len(braking.points) == 1
    assert not any(braking.points[0].velocities)
    end, target = np.array(braking.points[0].positions), np.array(goal.points[0].positions)
    fraction = (end - READY)[0] / (target - READY)[0]
    assert 0.0 < fraction < 1.0  # short of the goal: stopped on the way
