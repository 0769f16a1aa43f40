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
    release.set()
    worker.join(10.0)
    assert stopped.startswith("braking to rest in") and waited < 1.0
    assert answers == ["the move under way changed (a stop or another execute): send it again"]
    assert outputs.stop_execution().startswith("braking to rest in")  # the stop's braking
