"""The constrained_ik action over real DDS: constraints, feedback, cancel, preemption.

Solutions are checked with our own pinocchio computation, not the reply's fields.
"""
import time

import numpy as np
import pinocchio as pin
import pytest

pytest.importorskip("rclpy")

from action_msgs.msg import GoalStatus  # noqa: E402
from ros2_ik.node.conversions import se3_to_pose  # noqa: E402
from ros2_ik.node.harness import wait_for  # noqa: E402
from ros2_ik_interfaces.action import ConstrainedIK  # noqa: E402
from ros2_ik_interfaces.msg import (  # noqa: E402
    IKErrorCode, OrientationConstraint, PoseGoal, PositionConstraint, RotationBoxConstraint)
from ros2_ik_interfaces.srv import ComputeIK  # noqa: E402
from panda_node import ARM, READY, T_frame, description, pose_errors, start, stop  # noqa: E402


@pytest.fixture(scope="module")
def model():
    return description()[2]


@pytest.fixture(scope="module")
def served(ros_context):
    node, client = start("act")
    assert client.action.wait_for_server(timeout_sec=30)
    yield client, node
    stop(node, client)


class Run:
    """One goal sent over the action, with its feedback collected."""

    def __init__(self, client, goal):
        self.client, self.feedback = client, []
        self.send = client.action.send_goal_async(goal, feedback_callback=self._on_feedback)
        wait_for(self.send.done, 30, "goal acceptance", client.spin)
        self.handle = self.send.result()
        assert self.handle.accepted
        self.result_future = self.handle.get_result_async()

    def _on_feedback(self, msg):
        self.feedback.append(msg.feedback)

    def result(self, timeout_s=60):
        wait_for(self.result_future.done, timeout_s, "the action result", self.client.spin)
        return self.result_future.result()


def base_goal(timeout=1.0):
    goal = ConstrainedIK.Goal()
    goal.group_name = "arm"
    goal.timeout = timeout
    goal.random_seed = 5
    return goal


def _hand(model, sol) -> pin.SE3:
    """T_link0_hand of a solution, by our own FK."""
    return T_frame(model, sol.joint_state.name, sol.joint_state.position, "panda_hand",
                   "panda_link0")


def _hand_box() -> PositionConstraint:
    """The hand's origin in a 10 x 10 x 10 cm box in front of the Panda."""
    box = PositionConstraint(frame_a="panda_link0", frame_b="panda_hand")
    box.lower.x, box.lower.y, box.lower.z = 0.45, -0.05, 0.30
    box.upper.x, box.upper.y, box.upper.z = 0.55, 0.05, 0.40
    box.x_abar_a.orientation.w = 1.0
    return box


def test_position_box_and_orientation_bound(served, model):
    """Hand in a box, pointing down within 0.05 rad: a Drake-style problem, no pose goal."""
    client, _ = served
    goal = base_goal()
    box = _hand_box()
    down = OrientationConstraint(frame_abar="panda_link0", frame_bbar="panda_hand",
                                 theta_bound=0.05)
    down.r_abar_a.x, down.r_abar_a.w = 1.0, 0.0   # 180 deg about x: z axis down
    down.r_bbar_b.w = 1.0
    goal.position_constraints = [box]
    goal.orientation_constraints = [down]
    goal.num_solutions = 3
    wrapped = Run(client, goal).result()
    res = wrapped.result
    assert wrapped.status == GoalStatus.STATUS_SUCCEEDED, res.message
    assert res.error_code.val == IKErrorCode.SUCCESS
    assert 1 <= len(res.solutions) <= 3
    R_down = pin.utils.rpyToMatrix(np.pi, 0, 0)
    for sol in res.solutions:
        T = _hand(model, sol)
        assert np.all(T.translation >= [0.45 - 1e-4, -0.05 - 1e-4, 0.30 - 1e-4])
        assert np.all(T.translation <= [0.55 + 1e-4, 0.05 + 1e-4, 0.40 + 1e-4])
        angle = np.linalg.norm(pin.log3(R_down.T @ T.rotation))
        assert angle <= 0.05 + 1e-3


def test_position_box_and_rotation_box(served, model):
    """Hand in a box, its z axis down within 0.05 rad about x and y, yaw free (MoveIt's)."""
    from test_rotation_box import moveit_decide
    client, _ = served
    goal = base_goal()
    box = _hand_box()
    level = RotationBoxConstraint(frame_abar="panda_link0", frame_bbar="panda_hand")
    level.r_abar_a.x, level.r_abar_a.w = 1.0, 0.0   # 180 deg about x: z axis down
    level.r_bbar_b.w = 1.0
    level.tolerances.x, level.tolerances.y, level.tolerances.z = 0.05, 0.05, np.pi
    goal.position_constraints, goal.rotation_box_constraints = [box], [level]
    goal.num_solutions = 2
    res = Run(client, goal).result().result
    assert res.error_code.val == IKErrorCode.SUCCESS, res.message
    R_down = pin.utils.rpyToMatrix(np.pi, 0, 0)
    for sol in res.solutions:
        T = _hand(model, sol)
        assert moveit_decide(R_down.T @ T.rotation, [0.05 + 1e-3, 0.05 + 1e-3, np.pi], 0)
    level.parameterization = "zyx"
    res = Run(client, goal).result().result
    assert res.error_code.val == IKErrorCode.INVALID_GOAL
    assert "rotation_box_constraints[0]" in res.message and "parameterization" in res.message


def _down(theta_bound, flip=False):
    """Hand z axis down (or up, ``flip``) within ``theta_bound`` [rad]."""
    c = OrientationConstraint(frame_abar="panda_link0", frame_bbar="panda_hand",
                              theta_bound=theta_bound)
    c.r_abar_a.x, c.r_abar_a.w = (0.0, 1.0) if flip else (1.0, 0.0)
    c.r_bbar_b.w = 1.0
    return c


def test_orientation_tolerance_is_radians_and_violations_carry_units(served, model):
    """A 1e-5 rad tolerance holds on the angle itself; an impossible pair reports rad."""
    client, _ = served
    goal = base_goal()
    goal.orientation_constraints = [_down(0.05)]
    goal.orientation_tolerance = 1e-5
    res = Run(client, goal).result().result
    assert res.error_code.val == IKErrorCode.SUCCESS, res.message
    R_down = pin.utils.rpyToMatrix(np.pi, 0, 0)
    for sol in res.solutions:
        T = _hand(model, sol)
        assert np.linalg.norm(pin.log3(R_down.T @ T.rotation)) <= 0.05 + 1e-5
    goal = base_goal(timeout=0.2)
    goal.orientation_constraints = [_down(0.01), _down(0.01, flip=True)]
    res = Run(client, goal).result().result
    assert res.error_code.val == IKErrorCode.NO_SOLUTION
    sol = res.solutions[0]
    assert sol.violated_constraints and set(sol.violation_units) == {"rad"}
    assert len(sol.violations) == len(sol.violation_units) == len(sol.violated_constraints)
    assert max(sol.violations) > 1.0  # pi minus two bounds, at least half of it: radians


def test_pose_goal_with_locked_joint(served, model):
    client, _ = served
    q = np.array(READY) + np.array([0.0, 0.2, 0.1, 0.3, -0.2, 0.1, 0.0])
    q_locked1 = 0.0
    T_target = T_frame(model, ARM, q, "panda_hand", "panda_link0")
    goal = base_goal()
    pose = PoseGoal(tip_link="panda_hand")
    pose.target.header.frame_id = "panda_link0"
    pose.target.pose = se3_to_pose(T_target)
    goal.pose_goals = [pose]
    goal.locked_joints.name = ["panda_joint1"]
    goal.locked_joints.position = [q_locked1]
    res = Run(client, goal).result().result
    assert res.error_code.val == IKErrorCode.SUCCESS, res.message
    sol = res.solutions[0].joint_state
    values = dict(zip(sol.name, sol.position))
    assert values["panda_joint1"] == q_locked1
    T = T_frame(model, sol.name, sol.position, "panda_hand", "panda_link0")
    assert pose_errors(T, T_target)[0] <= 1e-4


def unreachable_goal(timeout):
    goal = base_goal(timeout)
    pose = PoseGoal(tip_link="panda_hand")
    pose.target.header.frame_id = "panda_link0"
    pose.target.pose.position.z = -0.5  # below the base: out of reach, no early proof
    pose.target.pose.orientation.w = 1.0
    goal.pose_goals = [pose]
    goal.max_attempts = 0
    return goal


def test_feedback_then_cancel_returns_best_so_far(served):
    client, _ = served
    run = Run(client, unreachable_goal(timeout=10.0))
    wait_for(lambda: len(run.feedback) >= 2, 10, "two feedback messages", client.spin)
    assert run.feedback[-1].restarts >= 1
    assert len(run.feedback[-1].best.name) == 7
    asked = time.monotonic()
    cancel = run.handle.cancel_goal_async()
    wrapped = run.result(timeout_s=5)
    latency = time.monotonic() - asked
    assert cancel.done() or wait_for(cancel.done, 5, "cancel response", client.spin) is None
    assert wrapped.status == GoalStatus.STATUS_CANCELED
    assert wrapped.result.error_code.val == IKErrorCode.CANCELLED
    assert len(wrapped.result.solutions) == 1          # the best so far
    assert latency < 2.0, f"cancel took {latency:.3f} s"  # the 50 ms target is in bench/


def test_new_goal_preempts_running_goal_and_service_keeps_serving(served):
    client, _ = served
    first = Run(client, unreachable_goal(timeout=10.0))
    wait_for(lambda: len(first.feedback) >= 1, 10, "feedback of the first goal", client.spin)
    req = ComputeIK.Request()  # the service answers while the action solves
    req.target.header.frame_id = "panda_link0"
    req.target.pose.position.x, req.target.pose.position.z = 0.5, 0.4
    req.target.pose.orientation.x, req.target.pose.orientation.w = 1.0, 0.0
    req.timeout = 0.5
    assert client.call(req).error_code.val == IKErrorCode.SUCCESS
    second = Run(client, unreachable_goal(timeout=0.2))
    first_result = first.result(timeout_s=5)
    assert first_result.status == GoalStatus.STATUS_ABORTED
    assert "preempted" in first_result.result.message
    second_result = second.result(timeout_s=5)
    assert second_result.result.error_code.val == IKErrorCode.NO_SOLUTION


def test_bad_goals_get_codes_and_node_survives(served):
    client, node = served
    goal = base_goal()
    bad = OrientationConstraint(frame_abar="panda_link0", frame_bbar="nowhere",
                                theta_bound=0.1)
    bad.r_abar_a.w = bad.r_bbar_b.w = 1.0
    goal.orientation_constraints = [bad]
    res = Run(client, goal).result().result
    assert res.error_code.val == IKErrorCode.FRAME_NOT_FOUND and "nowhere" in res.message
    goal = base_goal()
    neg = OrientationConstraint(frame_abar="panda_link0", frame_bbar="panda_hand",
                                theta_bound=-1.0)
    neg.r_abar_a.w = neg.r_bbar_b.w = 1.0
    goal.orientation_constraints = [neg]
    res = Run(client, goal).result().result
    assert res.error_code.val == IKErrorCode.INVALID_GOAL and "theta_bound" in res.message
    res = Run(client, base_goal()).result().result  # nothing to solve for
    assert res.error_code.val == IKErrorCode.INVALID_GOAL
    assert node.alive()
