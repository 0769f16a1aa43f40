"""ik_node's servo mode over real DDS, closing the loop through a simulated arm.

The arm is ``node/fake_controller.py`` in its own process: it takes the servo's position
commands and publishes them back as ``joint_states``.  Every check is our own: tip poses by
FK of the arm's joint_states on a separate pinocchio model, limits against the URDF,
velocities and accelerations by finite differences of the received commands.
"""
import time

import numpy as np
import pinocchio as pin
import pytest

pytest.importorskip("rclpy")

from geometry_msgs.msg import PoseStamped, TwistStamped  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402
from std_srvs.srv import SetBool, Trigger  # noqa: E402

import panda_node  # noqa: E402
from panda_node import ARM, T_frame, description, start, stop  # noqa: E402
from ros2_ik.node.conversions import se3_to_pose  # noqa: E402
from ros2_ik.node.harness import FakeControllerProcess, call_resending, wait_for  # noqa: E402
from ros2_ik_interfaces.msg import CollisionObject, ServoStatus  # noqa: E402

NS = "servo"
COMMANDS = f"/{NS}/arm/commands"
RATE = 250.0
ACC = 5.0  # servo_acceleration_limit [rad/s^2]
SCALE = 0.5  # servo_velocity_scaling
START = np.array(panda_node.READY)


class Rig:
    """ik_node + fake arm + this test's subscriptions and service clients."""

    def __init__(self, node, client, arm, ns=NS, commands=COMMANDS):
        self.node, self.client, self.arm = node, client, arm
        n = client.node
        self.commands, self.states, self.status = [], [], []
        self.stamps = []  # each joint_states' DDS source stamp [s since the epoch]
        self.sequence, self.sent = [], []  # the commands' publication numbers and stamps [s]
        n.create_subscription(Float64MultiArray, commands, self._on_command, 100)
        n.create_subscription(JointState, f"/{ns}/joint_states", self._on_state, 100)
        n.create_subscription(ServoStatus, f"/{ns}/ik_node/servo/status",
                              self.status.append, 100)
        self.pose_pub = n.create_publisher(PoseStamped, f"/{ns}/ik_node/servo/target_pose", 10)
        self.twist_pub = n.create_publisher(TwistStamped,
                                            f"/{ns}/ik_node/servo/target_twist", 10)
        self.services = {name: n.create_client(kind, f"/{ns}/ik_node/servo/{name}")
                         for name, kind in (("start", Trigger), ("stop", Trigger),
                                            ("pause", SetBool))}

    def _on_command(self, msg, info):
        self.commands.append(np.array(msg.data))
        self.sequence.append(info["publication_sequence_number"])
        self.sent.append(info["source_timestamp"] * 1e-9)

    def _on_state(self, msg, info):
        if list(msg.name) == ARM:
            self.states.append(np.array(msg.position))
            self.stamps.append(info["source_timestamp"] * 1e-9)

    def call(self, name, **fields):
        client = self.services[name]
        assert client.wait_for_service(timeout_sec=10.0)
        request = client.srv_type.Request(**fields)
        future = client.call_async(request)
        wait_for(future.done, 10.0, f"servo/{name}", self.client.spin)
        return future.result()

    def stop(self):
        """Call stop, and wait until the servo has stopped (it first brakes to rest)."""
        assert self.call("stop").success
        self.spin_until(lambda: self.last_state().state == ServoStatus.STOPPED, 3.0,
                        "the servo stopped")

    def spin_for(self, seconds, publish=None):
        """Spin ``seconds``, calling ``publish()`` every 20 ms (a 50 Hz target stream)."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if publish is not None:
                publish()
            self.client.spin(0.02)
            self._drain()

    def _drain(self, most=500):
        """Take every message already waiting (spin_once takes one: ~525 arrive a second)."""
        for _ in range(most):
            before = len(self.commands) + len(self.states) + len(self.status)
            self.client.spin(0.0)
            if len(self.commands) + len(self.states) + len(self.status) == before:
                return

    def spin_until(self, condition, seconds, what, publish=None):
        end = time.monotonic() + seconds
        while not condition():
            assert time.monotonic() < end, (
                f"timed out waiting for {what}; last status {self.last_state()}, "
                f"{len(self.states)} joint_states, {len(self.commands)} commands")
            self.spin_for(0.02, publish)

    def last_state(self):
        return self.status[-1] if self.status else None

    def go_to(self, model, T_goal, tol_m, what, seconds=15.0):
        """Stream pose target ``T_goal`` until the arm's tip (our FK) is within ``tol_m``."""
        self.spin_until(lambda: np.linalg.norm(_tip(model, self.states[-1]).translation
                                               - T_goal.translation) < tol_m,
                        seconds, what, lambda: self.pose_pub.publish(_pose_msg(T_goal)))


@pytest.fixture(scope="module")
def model():
    return description()[2]


@pytest.fixture(scope="module")
def rig(ros_context):
    node, client = start(NS, f"servo_command_topic:={COMMANDS}", f"servo_rate:={RATE}",
                         f"servo_acceleration_limit:={ACC}",
                         f"servo_velocity_scaling:={SCALE}", "servo_target_timeout:=0.3",
                         "servo_avoid_collisions:=false", joints=False)
    arm = FakeControllerProcess(NS, ARM, START, COMMANDS)
    r = Rig(node, client, arm)
    try:
        r.spin_until(lambda: len(r.states) > 5, 20.0, "the fake arm's joint_states")
        # The node's joint_states subscription matches the arm's publisher on its own
        # schedule (DDS discovery): wait until start succeeds, then stop again.
        r.spin_until(lambda: r.call("start").success, 20.0, "the node seeing joint_states")
        r.stop()
        yield r
    finally:
        arm.stop()
        stop(node, client)


def _pose_msg(T):
    msg = PoseStamped()
    msg.header.frame_id = "panda_link0"
    msg.pose = se3_to_pose(T)
    return msg


def _tip(model, q):
    return T_frame(model, ARM, q, "panda_hand", "panda_link0")


def _wait_at_rest(rig, publish=None):
    """Wait (2 s at most) for 10 identical commands in a row: decelerated, holding."""
    rig.spin_until(lambda: len(rig.commands) > 10
                   and np.ptp(np.array(rig.commands[-10:]), axis=0).max() < 1e-12,
                   2.0, "the commands at rest", publish)


def _check_commands(model, rig, first):
    """Commands from ``first`` on within the URDF limits, SCALE x velocity limits and ACC.

    Velocities and accelerations by finite differences of consecutive commands: by their
    publication numbers, so a command this test's reader lost (it may fall behind on a
    loaded machine) is not read as a jump; at most 5 % may be lost.
    """
    q = np.array(rig.commands[first:])
    seq = np.array(rig.sequence[first:])
    lo = model.lowerPositionLimit[:7]
    hi = model.upperPositionLimit[:7]
    assert (q >= lo - 1e-9).all() and (q <= hi + 1e-9).all()
    assert len(q) >= 0.95 * (seq[-1] - seq[0] + 1), "this test's reader lost > 5 % of commands"
    next_1, next_2 = np.diff(seq) == 1, (seq[2:] - seq[:-2]) == 2
    v = np.diff(q, axis=0) * RATE
    assert (np.abs(v[next_1]) <= SCALE * model.velocityLimit[:7] + 1e-6).all(), \
        np.abs(v[next_1]).max(axis=0)
    a = np.diff(v, axis=0) * RATE
    assert (np.abs(a[next_2]) <= ACC + 1e-4).all(), np.abs(a[next_2]).max()


def test_step_target_reached_within_limits_then_held(rig, model):
    """Starts from the arm's state, reaches a step target within the limits, then holds."""
    rig.stop()
    response = rig.call("pause", data=True)
    assert not response.success and "start" in response.message
    start_q = rig.states[-1].copy()
    T_goal = _tip(model, start_q + np.array([0.2, -0.15, 0.1, 0.2, 0.1, -0.2, 0.3]))
    response = rig.call("start")
    assert response.success, response.message
    first = len(rig.commands)
    rig.go_to(model, T_goal, 1e-3, "the tip at the step target")
    rig.spin_for(0.5, lambda: rig.pose_pub.publish(_pose_msg(T_goal)))
    T = _tip(model, rig.states[-1])
    assert np.linalg.norm(T.translation - T_goal.translation) < 1e-4
    assert np.linalg.norm(pin.log3(T.rotation.T @ T_goal.rotation)) < 1e-3
    assert rig.last_state().state == ServoStatus.RUNNING
    _check_commands(model, rig, first)


def test_halts_on_stale_target_and_resumes(rig, model):
    if rig.last_state() is None or rig.last_state().state == ServoStatus.STOPPED:
        assert rig.call("start").success
    q = rig.states[-1]
    T_goal = _tip(model, q + np.array([0.0, 0.1, 0.0, 0.1, 0.0, 0.0, 0.0]))
    rig.spin_for(0.2, lambda: rig.pose_pub.publish(_pose_msg(T_goal)))
    rig.spin_until(lambda: rig.last_state().state == ServoStatus.HALTED, 3.0,
                   "a halt after the target stream stopped")
    assert "stale" in rig.last_state().reason
    _wait_at_rest(rig)
    first = len(rig.commands)
    rig.spin_for(0.3)
    held = np.array(rig.commands[first:])
    assert len(held) > 10 and np.ptp(held, axis=0).max() < 1e-9  # holding, not drifting
    rig.spin_until(lambda: rig.last_state().state == ServoStatus.RUNNING, 3.0,
                   "running again on a fresh target",
                   lambda: rig.pose_pub.publish(_pose_msg(T_goal)))


def test_twist_moves_the_tip_along_world_z(rig, model):
    if rig.last_state().state == ServoStatus.STOPPED:
        assert rig.call("start").success
    before = _tip(model, rig.states[-1]).translation
    twist = TwistStamped()
    twist.header.frame_id = "panda_link0"
    twist.twist.linear.z = 0.05
    first = len(rig.commands)
    rig.spin_for(1.0, lambda: rig.twist_pub.publish(twist))
    rig.spin_until(lambda: rig.last_state().state == ServoStatus.HALTED, 3.0, "a halt")
    rig.spin_for(0.2)
    moved = _tip(model, rig.states[-1]).translation - before
    assert 0.03 < moved[2] < 0.07, moved
    assert np.linalg.norm(moved[:2]) < 0.005, moved
    _check_commands(model, rig, first)


def test_a_pose_target_in_a_camera_frame_of_the_monitored_scene(rig, model):
    """A target streamed in a camera's frame, the camera known from move_group's scene
    (``fixed_frame_transforms``, node/request_frames.py): the tip goes where the camera
    frame puts the target (our FK)."""
    scene_msgs = pytest.importorskip("moveit_msgs.msg")
    from node_inputs import transform_stamped
    if rig.last_state() is None or rig.last_state().state == ServoStatus.STOPPED:
        assert rig.call("start").success
    T_link0_camera = pin.SE3(pin.rpy.rpyToMatrix(0.3, -2.4, 1.1), np.array([0.9, -0.4, 1.1]))
    scene = scene_msgs.PlanningScene(is_diff=False, fixed_frame_transforms=[
        transform_stamped("camera", "panda_link0", T_link0_camera)])
    scene_pub = rig.client.node.create_publisher(scene_msgs.PlanningScene,
                                                 "/monitored_planning_scene", 5)
    step = np.array([-0.15, 0.1, 0.1, -0.2, 0.1, 0.15, -0.2])
    T_goal = _tip(model, rig.states[-1].copy() + step)
    msg = _pose_msg(T_link0_camera.actInv(T_goal))
    msg.header.frame_id = "camera"

    def publish():
        scene_pub.publish(scene)
        rig.pose_pub.publish(msg)
    rig.spin_until(lambda: np.linalg.norm(_tip(model, rig.states[-1]).translation
                                          - T_goal.translation) < 1e-3,
                   15.0, "the tip at the target given in the camera's frame", publish)
    rig.spin_for(0.5, publish)
    T = _tip(model, rig.states[-1])
    assert np.linalg.norm(T.translation - T_goal.translation) < 1e-4
    assert np.linalg.norm(pin.log3(T.rotation.T @ T_goal.rotation)) < 1e-3


def test_an_execute_while_servoing_is_refused(rig, model):
    """Both would command the arm (the same forward controller, as here): refused."""
    from ros2_ik_interfaces.msg import IKErrorCode
    from ros2_ik_interfaces.srv import ComputeIK
    if rig.last_state().state == ServoStatus.STOPPED:
        assert rig.call("start").success
    rig.spin_until(lambda: rig.last_state().state != ServoStatus.STOPPED, 2.0, "servoing")
    req = ComputeIK.Request()
    req.target.header.frame_id = "panda_link0"
    req.target.pose = se3_to_pose(_tip(model, rig.states[-1]))
    req.seed.name, req.seed.position = list(ARM), list(rig.states[-1])
    req.execute = True
    compute_ik = rig.client.node.create_client(ComputeIK, f"/{NS}/compute_ik")
    res = call_resending(compute_ik, req, rig.client.spin)
    assert res.error_code.val == IKErrorCode.EXECUTION_REFUSED, res.message
    assert "the servo is commanding the arm" in res.message


def test_pause_holds_and_stop_ends_commands(rig, model):
    if rig.last_state().state == ServoStatus.STOPPED:
        assert rig.call("start").success
    q = rig.states[-1]
    T_goal = _tip(model, q + np.array([0.3, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]))
    publish = lambda: rig.pose_pub.publish(_pose_msg(T_goal))  # noqa: E731
    rig.spin_for(0.2, publish)
    assert rig.call("pause", data=True).success
    rig.spin_until(lambda: rig.last_state().state == ServoStatus.PAUSED, 2.0, "paused",
                   publish)
    _wait_at_rest(rig, publish)  # decelerating within the acceleration limit
    first = len(rig.commands)
    rig.spin_for(0.3, publish)
    assert np.ptp(np.array(rig.commands[first:]), axis=0).max() < 1e-9
    assert rig.call("pause", data=False).success
    rig.spin_until(lambda: rig.last_state().state == ServoStatus.RUNNING, 2.0, "resumed",
                   publish)
    first = len(rig.commands)
    rig.spin_until(lambda: len(rig.commands) > first + 1 and np.ptp(  # moving again
        np.array(rig.commands[first:]), axis=0).max() > 1e-6, 2.0, "moving again", publish)
    rig.spin_for(0.05, publish)
    assert "stopping" in rig.call("stop").message
    rig.spin_until(lambda: rig.last_state().state == ServoStatus.STOPPED, 2.0, "stopped")
    rig.spin_for(0.05)
    _check_commands(model, rig, first)  # a stop while moving: decelerated, no jump
    np.testing.assert_array_equal(rig.commands[-1], rig.commands[-2])  # ended at rest
    stopped = rig.last_state().header.stamp
    stopped_s = stopped.sec + 1e-9 * stopped.nanosec
    rig.spin_for(0.3, publish)
    # Published after the STOPPED status: none (the two topics' messages may arrive in
    # either order, so count by the publisher's stamps, not by arrival).
    assert sum(t > stopped_s for t in rig.sent) == 0


def test_follows_a_moving_target(rig, model):
    """A circle of 5 cm radius at 0.1 m/s: the tip stays within the lag speed / gain.

    Each sample compares the arm's newest joint_states with the newest target this test had
    published by that message's source stamp, so a stall of the test's own process (which
    delays both its publishing and its reading) is not counted as the servo's lag.  A stall
    of the servo's loop or the arm's (a gap in their source stamps, see ``_after_a_stall``)
    excuses the samples it delays from the lag bound, not from a bound of 0.1 m; at least
    half the samples must be unexcused.
    """
    if rig.last_state().state == ServoStatus.STOPPED:
        assert rig.call("start").success
    T0 = _tip(model, rig.states[-1])
    center = T0.translation - np.array([0.05, 0.0, 0.0])
    t0 = time.monotonic()

    def circle(t):
        w = 0.1 / 0.05
        return pin.SE3(T0.rotation, center + 0.05 * np.array([np.cos(w * t), np.sin(w * t),
                                                              0.0]))
    sent = []  # (wall clock [s], target) per publication

    def publish():
        sent.append((time.time(), circle(time.monotonic() - t0)))
        rig.pose_pub.publish(_pose_msg(sent[-1][1]))
    first = len(rig.commands)
    rig.spin_for(1.0, publish)  # transient
    errors, stamps = [], []
    for _ in range(40):  # 2 s more, sampled every 50 ms
        rig.spin_for(0.05, publish)
        stamps.append(rig.stamps[-1])
        target = next(T for t, T in reversed(sent) if t <= stamps[-1])
        errors.append(np.linalg.norm(_tip(model, rig.states[-1]).translation
                                     - target.translation))
    errors = np.array(errors)
    stalled = _after_a_stall(rig, first, np.array(stamps))
    assert stalled.sum() <= 20, f"{stalled.sum()} of 40 samples follow a stalled loop"
    # lag ~ 0.1 m/s / 10 1/s + transport, wherever the loops kept their periods
    assert errors[~stalled].max() < 0.025, (errors, stalled)
    assert errors.max() < 0.1, errors  # a stall delays the arm; nothing runs away
    assert rig.last_state().state == ServoStatus.RUNNING
    _check_commands(model, rig, first)


def _after_a_stall(rig, first, stamps, gap_s=5.0 / RATE, memory_s=0.3):
    """Which samples (joint_states source stamps [s]) follow or fall in a stalled loop.

    A stall is a gap of more than ``gap_s`` between consecutive commands the servo
    published (by publication number) or consecutive joint_states the arm published: on a
    loaded 2-core machine another process can hold the CPU.  A sample is excused during
    one and for ``memory_s`` after it (three of the servo's 0.1 s time constants).
    """
    sent, seq = np.array(rig.sent[first:]), np.array(rig.sequence[first:])
    states = np.array(rig.stamps)
    gaps = [(t[:-1][mask], t[1:][mask]) for t, mask in (
        (sent, (np.diff(seq) == 1) & (np.diff(sent) > gap_s)),
        (states, np.diff(states) > gap_s))]
    begins = np.concatenate([b for b, _ in gaps])
    ends = np.concatenate([e for _, e in gaps])
    return np.array([((begins < s) & (ends > s - memory_s)).any() for s in stamps])


def _set_param(rig, name, value):
    from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue
    from rcl_interfaces.srv import SetParameters
    srv = rig.client.node.create_client(SetParameters, f"/{NS}/ik_node/set_parameters")
    assert srv.wait_for_service(timeout_sec=10)
    pv = (ParameterValue(type=ParameterType.PARAMETER_BOOL, bool_value=value)
          if isinstance(value, bool) else
          ParameterValue(type=ParameterType.PARAMETER_DOUBLE, double_value=float(value)))
    request = SetParameters.Request(parameters=[Parameter(name=name, value=pv)])
    return call_resending(srv, request, rig.client.spin).results[0]


def test_a_lower_velocity_scaling_applies_while_moving(rig, model):
    if rig.last_state().state == ServoStatus.STOPPED:
        assert rig.call("start").success
    twist = TwistStamped()
    twist.header.frame_id = "panda_link0"
    twist.twist.linear.y = 0.3
    publish = lambda: rig.twist_pub.publish(twist)  # noqa: E731
    rig.spin_for(0.6, publish)
    first = len(rig.commands)
    try:
        assert _set_param(rig, "servo_velocity_scaling", 0.05).successful
        rig.spin_for(1.0, publish)
        q = np.array(rig.commands[first:])
        v = np.abs(np.diff(q, axis=0)) * RATE
        a = np.abs(np.diff(v, axis=0)) * RATE
        assert a.max() <= ACC + 1e-4  # slowed down within the acceleration limit
        assert (v[-50:] <= 0.05 * model.velocityLimit[:7] + 1e-6).all()  # then within it
    finally:
        assert _set_param(rig, "servo_velocity_scaling", SCALE).successful
    rig.spin_for(0.5)


def _apply_scene(rig, objects):
    from ros2_ik_interfaces.srv import ApplyPlanningScene
    srv = rig.client.node.create_client(ApplyPlanningScene, f"/{NS}/apply_planning_scene")
    assert srv.wait_for_service(timeout_sec=10)
    # An empty batch (changes nothing) until answered: a new client's first response can
    # be lost (call_resending); the batch itself, a REMOVE among them, is sent once.
    assert call_resending(srv, ApplyPlanningScene.Request(), rig.client.spin).success
    future = srv.call_async(ApplyPlanningScene.Request(objects=objects))
    wait_for(future.done, 10, "apply_planning_scene", rig.client.spin)
    assert future.result().success, future.result().message


def test_stays_clear_of_an_obstacle_in_the_path(rig, model):
    """A ball halfway to the target: the arm goes round it, 2 cm away at least (our FK +
    coal check of the arm's joint_states), and the status reports the clearance.

    Servoed without the dampers, the same path goes 4 cm into the ball (core step, checked
    when this test was written)."""
    from ros2_ik.core import robots
    from ros2_ik.core.collision import CollisionChecker, PlanningScene
    from ros2_ik.core.collision.scene import SceneObject, Sphere, pose_from_xyz_quat
    if rig.last_state().state == ServoStatus.STOPPED:
        assert rig.call("start").success
    T0 = _tip(model, START)  # back to the start first: the test does not depend on others
    rig.go_to(model, T0, 1e-3, "the start pose")
    rig.stop()
    center = T0.translation + np.array([0.0, 0.2, 0.0])  # without dampers: 4 cm into it
    T_goal = pin.SE3(T0.rotation, T0.translation + np.array([0.0, 0.4, 0.0]))
    _apply_scene(rig, [panda_node.sphere("ball", center, 0.03)])
    assert _set_param(rig, "servo_avoid_collisions", True).successful
    assert _set_param(rig, "servo_clearance", 0.02).successful
    try:
        response = rig.call("start")
        assert response.success, response.message
        first = len(rig.states)
        rig.go_to(model, T_goal, 2e-3, "the tip past the ball")
        scene = PlanningScene.for_model(model)
        scene.add(SceneObject("ball", [Sphere(0.03)], T_frame_object=pose_from_xyz_quat(
            center)))
        checker = CollisionChecker.from_urdf(model, robots.urdf_text("panda"),
                                             robots.srdf_text("panda"), scene)
        full = pin.neutral(model)
        clearance = []
        for q_arm in rig.states[first::5]:
            full[:7] = q_arm
            clearance.append(checker.min_distance(full).distance_m)
        assert 0.02 - 1e-3 <= min(clearance) < 0.05, min(clearance)
        assert any(np.isfinite(s.clearance) for s in rig.status[-20:])
    finally:
        rig.stop()
        _apply_scene(rig, [panda_node.sphere("ball", center, 0.03,
                                             op=CollisionObject.REMOVE)])
        assert _set_param(rig, "servo_avoid_collisions", False).successful


def test_turning_the_hand_without_end_halts_on_joint_limits(rig, model):
    """A twist about the hand's own axis: the joints run into limits, and it stops there."""
    if rig.last_state().state == ServoStatus.STOPPED:
        assert rig.call("start").success
    twist = TwistStamped()
    twist.header.frame_id = "panda_hand"
    twist.twist.angular.z = 1.5
    publish = lambda: rig.twist_pub.publish(twist)  # noqa: E731
    first = len(rig.commands)
    rig.spin_until(lambda: "joint limit" in rig.last_state().reason, 15.0,
                   "a halt on joint limits", publish)
    assert rig.last_state().state == ServoStatus.HALTED
    assert "panda_joint" in rig.last_state().reason
    _check_commands(model, rig, first)
    rig.stop()


def test_halts_when_joint_states_stop(rig, model):
    assert rig.call("start").success
    rig.arm.stop()
    rig.spin_until(lambda: "joint_states" in rig.last_state().reason, 3.0,
                   "a halt on stale joint_states")
    assert rig.last_state().state == ServoStatus.HALTED
    rig.stop()
    response = rig.call("start")
    assert not response.success and "joint_states" in response.message


def test_velocity_output_drives_a_velocity_controller_to_the_target(ros_context, model):
    """servo_output=velocity: the arm integrates the commanded velocities itself."""
    ns, topic = "servo_vel", "/servo_vel/arm/commands"
    node, client = start(ns, f"servo_command_topic:={topic}", "servo_output:=velocity",
                         "servo_avoid_collisions:=false", "servo_autostart:=true",
                         joints=False)
    arm = FakeControllerProcess(ns, ARM, START, topic, mode="velocity")
    rig = Rig(node, client, arm, ns, topic)
    try:
        rig.spin_until(lambda: rig.last_state() is not None and rig.states, 20.0,
                       "the servo autostarted")
        T_goal = _tip(model, START + np.array([0.1, 0.1, -0.1, 0.1, 0.0, 0.1, 0.0]))
        rig.go_to(model, T_goal, 1e-3, "the tip at the target")
        v = np.array(rig.commands)
        assert (np.abs(v) <= 0.5 * model.velocityLimit[:7] + 1e-9).all()
    finally:
        arm.stop()
        stop(node, client)


def test_command_messages_in_the_controller_joint_order():
    """controller_joints may list joints outside the group: held (positions) or 0 (velocity)."""
    from types import SimpleNamespace
    from ros2_ik.node.servo_loop import ServoLoop
    from ros2_ik.core.servo.supervisor import Command
    loop = SimpleNamespace(_order=["b", "gripper", "a"], _index=np.array([1, -1, 0]),
                           _held=np.array([9.0, 0.04, 9.0]), period_s=0.004,
                           node=SimpleNamespace(config=SimpleNamespace(servo_output="")))
    command = Command(q=np.array([0.1, 0.2]), qd=np.array([1.0, 2.0]))
    loop.node.config.servo_output = "position"
    assert list(ServoLoop._message(loop, command).data) == [0.2, 0.04, 0.1]
    loop.node.config.servo_output = "velocity"
    assert list(ServoLoop._message(loop, command).data) == [2.0, 0.0, 1.0]
    loop.node.config.servo_output = "trajectory"
    msg = ServoLoop._message(loop, command)
    assert msg.joint_names == ["b", "gripper", "a"] and len(msg.points) == 1
    assert list(msg.points[0].positions) == [0.2, 0.04, 0.1]
    assert list(msg.points[0].velocities) == [2.0, 0.0, 1.0]
    assert msg.points[0].time_from_start.nanosec == 4_000_000


def test_a_controller_joint_never_published_refuses_a_position_start():
    """A controller joint outside the group is held at its joint_states position; one that
    joint_states never gave had NaN in every position command (sent to the controller)."""
    from types import SimpleNamespace
    from ros2_ik.node.robot_source import JointStateCache
    from ros2_ik.node.servo_loop import ServoLoop
    joints = JointStateCache()
    joints.update(["gripper"], [0.04])
    group = SimpleNamespace(joint_names=("a", "b"))
    for output in ("position", "trajectory", "velocity"):
        cfg = SimpleNamespace(controller_joints=["b", "gripper", "wheel", "a"],
                              servo_output=output)
        loop = SimpleNamespace(node=SimpleNamespace(config=cfg, joints=joints))
        if output != "velocity":
            with pytest.raises(ValueError, match=r"controller_joints \['wheel'\] are outside "
                                                 r"the group and joint_states never gave"):
                ServoLoop._output_map(loop, group)
            continue
        order, index, held = ServoLoop._output_map(loop, group)  # velocity: 0 for them
        assert order == ["b", "gripper", "wheel", "a"] and list(index) == [1, -1, -1, 0]
        assert np.isfinite(held).all() and held[1] == 0.04
    joints.update(["wheel"], [1.5])
    cfg.servo_output = "position"
    assert list(ServoLoop._output_map(loop, group)[2]) == [0.0, 0.04, 1.5, 0.0]


def test_autostart_says_why_it_waits(ros_context):
    """A controller joint joint_states never give: no start (a NaN command), and the log
    says so every few seconds (before, servo_autostart retried in silence)."""
    ns, topic = "servo_ghost", "/servo_ghost/arm/commands"
    ghost = "[" + ",".join(list(ARM) + ["ghost_joint"]) + "]"
    node, client = start(ns, f"servo_command_topic:={topic}", f"controller_joints:={ghost}",
                         "servo_avoid_collisions:=false", "servo_autostart:=true",
                         joints=False)
    arm = FakeControllerProcess(ns, ARM, START, topic)
    try:
        wait_for(lambda: "servo_autostart: not yet: cannot servo: controller_joints "
                         "['ghost_joint'] are outside the group" in node.output(), 30,
                 "the autostart's reason in the log", client.spin)
    finally:
        arm.stop()
        stop(node, client)
