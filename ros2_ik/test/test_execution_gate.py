"""The gate in front of the controller (node/outputs.py) with threads: a stop never waits
for an execute's collision proof, and an execute whose move under way changed meanwhile
is refused, not sent from a state that no longer holds.  A real rclpy node carries the
publishers; the proof is a callable that blocks until the test lets it go."""
import threading
import time

import numpy as np
import pytest

pytest.importorskip("rclpy")

from ros2_ik.node.outputs import Outputs  # noqa: E402
from ros2_ik.node.robot_source import JointStateCache  # noqa: E402
from node_inputs import config  # noqa: E402

NAMES = ["a", "b"]


class Limits:
    """The joints' limits as Outputs reads them (a group or node/base_pose.joint_limits)."""

    lower, upper = np.full(2, -3.0), np.full(2, 3.0)
    velocity_limits, acceleration_limits = np.full(2, 1.0), np.full(2, np.inf)
    wraps = np.zeros(2, dtype=bool)


class Servo:
    active = False


@pytest.fixture
def gate(ros_context):
    import rclpy
    node = rclpy.create_node("gate")
    node.config = config(controller_topic="/gate/commands", velocity_scaling=0.2)
    node.joints, node.servo, node.solve_group = JointStateCache(), Servo(), None
    node.joints.update(NAMES, [0.0, 0.0])
    yield Outputs(node), node
    node.destroy_node()


def test_a_stop_does_not_wait_for_an_executes_proof(gate):
    outputs, node = gate
    assert outputs.execute(Limits(), NAMES, np.array([0.4, -0.2]), True) == ""
    assert outputs.under_way() > 0.0
    checking, release, answers = threading.Event(), threading.Event(), []

    def proof(waypoints):
        assert len(waypoints) == 3  # from where the move is, braking, then on
        checking.set()
        release.wait(10.0)
        return ""

    node.joints.update(NAMES, [0.0, 0.0])
    worker = threading.Thread(target=lambda: answers.append(outputs.execute(
        Limits(), NAMES, np.array([0.1, 0.1]), True, move=proof)))
    worker.start()
    assert checking.wait(10.0)
    started = time.monotonic()
    stopped = outputs.stop_execution()
    waited = time.monotonic() - started
    braking = outputs._sent
    release.set()
    worker.join(10.0)
    assert stopped.startswith("braking to rest in") and waited < 1.0
    assert answers == ["the move under way changed (a stop or another execute): send it again"]
    assert outputs._sent is braking  # the stop's braking stays the move under way


def test_a_redirect_brakes_from_a_lead_ahead_and_is_sent_then(gate):
    """An execute mid-move plans the braking from where the move under way will be a lead
    later (then the lead follows the proof's time), and sends it no earlier: a controller
    draws it from its own state when it starts it."""
    from ros2_ik.node import execution
    outputs, node = gate
    assert outputs.execute(Limits(), NAMES, np.array([0.4, -0.2]), True) == ""
    first = outputs._sent
    time.sleep(0.5)
    for proof_s in (0.0, 0.03):
        under_way = outputs._sent
        lead = outputs._lead_s
        called = time.monotonic()
        assert outputs.execute(Limits(), NAMES, np.array([0.1 + proof_s, 0.1]), True,
                               move=lambda waypoints: time.sleep(proof_s) or "") == ""
        returned = time.monotonic()
        sent = outputs._sent
        assert sent is not under_way and called + lead <= sent.t0 <= returned
        q, v = under_way.move.state_at(sent.t0 - under_way.t0)
        np.testing.assert_allclose(sent.move.start, q, atol=1e-12)
        np.testing.assert_allclose(sent.move.start_velocity, v, atol=1e-12)
        assert np.linalg.norm(v) > 0.0  # braked from speed
    assert outputs._lead_s == pytest.approx(1.5 * 0.03, rel=0.2)  # the last proof's time
    assert execution.MIN_LEAD_S <= outputs._lead_s <= execution.MAX_LEAD_S
    assert first is not outputs._sent


def test_joint_state_velocities_are_kept_per_joint():
    cache = JointStateCache()
    cache.update(["a", "b"], [0.0, 1.0], [0.5, float("nan")])
    assert cache.velocities(["a", "b", "c"]) == [0.5, 0.0, 0.0]  # NaN, never seen: 0
    cache.update(["a"], [0.1])  # a message without velocities: not moving, as far as known
    assert cache.velocities(["a"]) == [0.0]
    cache.update(["a", "b"], [0.1, 0.2], [1.0])  # not one per name: none
    assert cache.velocities(["a", "b"]) == [0.0, 0.0]


def test_an_arm_moving_by_itself_is_braked_before_the_move(gate):
    """No move of ours under way, joint_states moving: the braking from the measured state
    (along its velocity), then on; a reading within 1 % of the scaled limits is at rest."""
    outputs, node = gate
    node.joints.update(NAMES, [0.0, 0.0], [0.1, -0.05])
    assert outputs.execute(Limits(), NAMES, np.array([0.3, 0.2]), True) == ""
    move = outputs._sent.move
    assert len(move.q_path) == 2 and abs(move.q_path[0] @ np.array([0.05, 0.1])) < 1e-12  # along v
    np.testing.assert_allclose(move.start_velocity, [0.1, -0.05])
    np.testing.assert_allclose(move.q_path[1], [0.3, 0.2])
    outputs.stop_execution()
    time.sleep(outputs.under_way() + 0.01)
    node.joints.update(NAMES, [0.0, 0.0], [0.0019, 0.0])  # < 1 % of 0.2 x 1 rad/s
    assert outputs.execute(Limits(), NAMES, np.array([0.3, 0.2]), True) == ""
    assert len(outputs._sent.move.q_path) == 1


def test_an_arm_moving_by_itself_is_braked_from_where_it_is_when_sent(gate):
    """No move of ours under way, joint_states moving: the braking starts where the
    readings, carried on at their velocities, put the arm a lead after the request (never
    more than MAX_CARRY_S on), it is sent at that instant, and the lead follows the
    proof's time as a redirect's does."""
    from ros2_ik.node import execution
    outputs, node = gate
    v = np.array([0.1, -0.05])
    for age_s, proof_s in ((0.02, 0.01), (execution.MAX_CARRY_S + 0.1, 0.0)):
        before = time.monotonic()
        node.joints.update(NAMES, [0.0, 0.0], v.tolist())
        after = time.monotonic()
        time.sleep(age_s)
        lead, called = outputs._lead_s, time.monotonic()
        assert outputs.execute(Limits(), NAMES, np.array([0.3, 0.2]), True,
                               move=lambda waypoints: time.sleep(proof_s) or "") == ""
        returned = time.monotonic()
        sent = outputs._sent
        assert called + lead <= sent.t0 <= returned
        carried = sent.move.start / v  # [s] on at v
        if age_s < execution.MAX_CARRY_S:
            assert np.all(carried >= sent.t0 - after - 1e-9)
            assert np.all(carried <= sent.t0 - before + 1e-9)
            assert outputs._lead_s >= 1.5 * proof_s
        else:
            np.testing.assert_allclose(carried, execution.MAX_CARRY_S, rtol=1e-12)
        np.testing.assert_allclose(sent.move.start_velocity, v)
        outputs.stop_execution()
        time.sleep(outputs.under_way() + 0.01)


def test_a_small_move_does_not_let_a_moving_arm_coast_and_limits_hold(gate):
    """Without acceleration limits a measured motion brakes within
    min_trajectory_duration at most, however small the move after it; a braking that would
    end outside the joint limits is refused, not sent."""
    outputs, node = gate
    node.joints.update(NAMES, [0.0, 0.0], [0.3, 0.0])
    assert outputs.execute(Limits(), NAMES, np.array([0.001, 0.0]), True) == ""
    braking = outputs._sent.move.times_s[0]
    assert braking <= node.config.min_trajectory_duration + 1e-12
    outputs.stop_execution()
    time.sleep(outputs.under_way() + 0.01)
    node.joints.update(NAMES, [2.95, 0.0], [1.0, 0.0])  # braking ends ~0.25 rad on, past 3.0
    reason = outputs.execute(Limits(), NAMES, np.array([2.9, 0.0]), True)
    assert reason.startswith("braking the motion under way would end with joints ['a']")


def _moved_then_read(outputs, node, follows: bool):
    """Send a 0.75 s move from rest at 0; 0.4 s on (~0.2 rad on, ~0.9 rad/s), read the arm
    on it (``follows``) or standing where it started (the controller stopped it).
    Returns the move under way (``execution.Sent``)."""
    node.joints.update(NAMES, [0.0, 0.0])
    assert outputs.execute(Limits(), NAMES, np.array([0.4, -0.2]), True) == ""
    under_way = outputs._sent
    time.sleep(0.4)
    q, _ = under_way.move.state_at(time.monotonic() - under_way.t0)
    node.joints.update(NAMES, (q if follows else np.zeros(2)).tolist())
    return under_way


def test_a_stop_brakes_from_joint_states_when_the_controller_stopped_the_move(gate):
    """joint_states off the move under way beyond execute_follow_tolerance plus 0.1 s of
    its speed (an e-stop, a controller switch: a topic controller says nothing): the stop
    does not brake from the move's plan, whose first step the controller would draw fast
    from where the arm stands, but holds the arm where joint_states put it (the
    controller resumes nothing); readings on the move: braked from its plan as before."""
    outputs, node = gate
    node.config = config(controller_topic="/gate/commands", velocity_scaling=1.0)
    for follows in (True, False):
        under_way = _moved_then_read(outputs, node, follows)
        stopped = outputs.stop_execution()
        braking = outputs._sent.move
        if follows:
            assert stopped.startswith("braking to rest in"), stopped
            planned, _ = under_way.move.state_at(outputs._sent.t0 - under_way.t0)
            np.testing.assert_allclose(braking.start, planned, atol=1e-12)
            assert np.linalg.norm(braking.start_velocity) > 0.5
        else:
            assert stopped.startswith("joint_states put joint 'a' "), stopped
            assert stopped.endswith("from joint_states instead, braking to rest in 0.001 s")
            for q_held in (braking.start, braking.q_path[-1]):
                np.testing.assert_allclose(q_held, [0.0, 0.0], atol=1e-12)
            assert not np.any(braking.start_velocity)
        time.sleep(outputs.under_way() + 0.01)


def test_a_new_goal_after_the_controller_stopped_the_move_starts_where_the_arm_stands(gate):
    """An execute while joint_states are off the move under way (the controller stopped
    it): no braking of a move the arm is not making; the new move goes from rest where
    joint_states put the arm (or brakes their measured motion first), and replaces it."""
    outputs, node = gate
    node.config = config(controller_topic="/gate/commands", velocity_scaling=1.0)
    assert outputs.execute(Limits(), NAMES, np.array([0.4, -0.2]), True) == ""
    time.sleep(0.4)
    node.joints.update(NAMES, [0.05, 0.0])  # stopped near where it started
    notes = []
    assert outputs.execute(Limits(), NAMES, np.array([0.1, 0.1]), True, notes=notes) == ""
    assert len(notes) == 1 and notes[0].startswith("joint_states put joint 'a' ")
    assert notes[0].endswith(": taken as stopped by the controller")
    move = outputs._sent.move
    assert len(move.q_path) == 1 and not np.any(move.start_velocity)
    np.testing.assert_allclose(move.start, [0.05, 0.0], atol=1e-12)
    np.testing.assert_allclose(move.q_path[0], [0.1, 0.1], atol=1e-12)


def test_the_watch_stops_a_move_joint_states_leave_only_when_asked(gate):
    """execute_watch: every period, a move under way whose joint_states are off it (the
    controller stopped it without telling: an e-stop) is replaced by a hold where they
    put the arm, so that the controller resumes nothing after a reset; readings on the
    move leave it running, and so does the watch when not asked for."""
    outputs, node = gate
    for watching, follows in ((False, False), (True, True), (True, False)):
        node.config = config(controller_topic="/gate/commands", velocity_scaling=1.0,
                             execute_watch=watching)
        under_way = _moved_then_read(outputs, node, follows)
        outputs.watch()
        if not watching or follows:
            assert outputs._sent is under_way
            outputs.stop_execution()
        else:
            held = outputs._sent.move
            assert outputs._sent is not under_way and held.duration_s == 1e-3
            for q_held in (held.start, held.q_path[-1]):
                np.testing.assert_allclose(q_held, [0.0, 0.0], atol=1e-12)
        time.sleep(outputs.under_way() + 0.01)


def test_a_path_waits_for_a_move_the_arm_makes_not_for_one_the_controller_stopped(gate):
    """A path is timed from rest: refused while a move runs that joint_states follow, but
    sent when they show the arm standing off it (the controller stopped it without
    telling), with a note saying so."""
    from builtin_interfaces.msg import Duration
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    class PathLimits(Limits):
        def within_limits(self, q):
            return bool(np.all((self.lower <= q) & (q <= self.upper)))
    outputs, node = gate
    node.config = config(controller_topic="/gate/commands", velocity_scaling=1.0)
    path = JointTrajectory(joint_names=NAMES, points=[JointTrajectoryPoint(
        positions=[0.05, 0.0], velocities=[0.0, 0.0], time_from_start=Duration(sec=1))])
    for follows in (True, False):
        under_way = _moved_then_read(outputs, node, follows)
        notes = []
        reason = outputs.execute_path(PathLimits(), path, np.array([[0.05, 0.0]]), True,
                                      notes=notes)
        if follows:
            assert reason.startswith("a move is under way") and not notes, reason
            outputs.stop_execution()
        else:
            assert reason == "" and outputs._sent is not under_way
            assert len(notes) == 1 and notes[0].startswith("joint_states put joint 'a' ")
            np.testing.assert_allclose(outputs._sent.move.start, [0.0, 0.0], atol=1e-12)
            np.testing.assert_allclose(outputs._sent.move.q_path, [[0.05, 0.0]])
        time.sleep(outputs.under_way() + 0.01)
