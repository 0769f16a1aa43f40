"""MoveIt's joint_limits.yaml: the limits every search, check, answer and timing keeps.

move_group reads ``robot_description_planning.joint_limits.<joint>.min_position`` /
``max_position`` / ``max_velocity`` and replaces the URDF's limits with them
(RobotModelLoader), narrower or wider; a continuous joint's positions are skipped
(ik_node reads ``max_acceleration`` too: it times what is sent).
``Robot.from_urdf(planning_limits=...)`` does the same, and ik_node reads the same
parameters.  Answers are judged here against the yaml's numbers and by FK of a model
built from the URDF alone.
"""
from __future__ import annotations

import logging

import numpy as np
import pinocchio as pin
import pytest

from ros2_ik.core import PoseTarget, Robot, RobotModelError, robots, solve
from ros2_ik.core.model.joint_limits_yaml import PlanningLimits
from panda_node import ARM, READY, T_frame, pose_errors

#: Planning limits narrower than the Panda's URDF (joint 1: +-2.8973, joint 4: up to -0.0698).
NARROW = {"panda_joint1": (-0.3, 0.3), "panda_joint4": (None, -1.0)}
CONTINUOUS_URDF = """<robot name="wheel"><link name="base"/><link name="a"/><link name="b"/>
<joint name="spin" type="continuous"><parent link="base"/><child link="a"/>
<axis xyz="0 0 1"/></joint>
<joint name="lift" type="prismatic"><parent link="a"/><child link="b"/>
<origin xyz="0.2 0 0"/><axis xyz="0 0 1"/>
<limit lower="0" upper="0.5" effort="1" velocity="1"/></joint></robot>"""


def panda(limits=None):
    return Robot.from_urdf(robots.urdf_text("panda"), planning_limits=limits)


def arm_group(robot):
    return robot.group(base="panda_link0", tip="panda_hand")


def test_limits_replace_the_urdf_ones_narrower_or_wider():
    urdf_group = arm_group(panda())
    group = arm_group(panda({**NARROW, "panda_joint7": (-3.5, 3.5),
                             "panda_joint2": PlanningLimits(max_velocity=0.5)}))
    lower, upper = urdf_group.lower.copy(), urdf_group.upper.copy()
    lower[[0, 6]], upper[[0, 3, 6]] = (-0.3, -3.5), (0.3, -1.0, 3.5)
    np.testing.assert_array_equal(group.lower, lower)
    np.testing.assert_array_equal(group.upper, upper)
    velocity = urdf_group.velocity_limits.copy()
    velocity[1] = 0.5
    np.testing.assert_array_equal(group.velocity_limits, velocity)
    # Where a joint can be (a locked joint's range): the URDF's, widened by a wider bound.
    robot = group.robot
    assert robot.joint_limits("panda_joint1") == urdf_group.robot.joint_limits("panda_joint1")
    assert robot.joint_limits("panda_joint7") == (-3.5, 3.5)


def test_answers_keep_inside_the_planning_bounds():
    """FK targets from inside the bounds are solved; targets from outside are never
    answered outside them (without the bounds, lm returns joint 1 near 1.2 rad)."""
    group = arm_group(panda(NARROW))
    model = pin.buildModelFromXML(robots.urdf_text("panda"))
    rng = np.random.default_rng(5)
    inside = np.array([[-0.3, 0.3], *zip(group.lower[1:], group.upper[1:])])
    for k in range(40):
        q = rng.uniform(inside[:, 0], inside[:, 1])
        if k % 2:
            q[0] = rng.choice([-1.0, 1.0]) * rng.uniform(0.9, 1.5)  # outside the bounds
        T = T_frame(model, ARM, q, "panda_hand")
        result = solve(group, PoseTarget("panda_hand", T), group.mid_configuration(),
                       timeout_s=0.05, random_seed=k)
        if k % 2 == 0:
            assert result.success, (k, result.message)
        if result.success:
            assert -0.3 <= result.q[0] <= 0.3 and result.q[3] <= -1.0, (k, result.q)
            errors = pose_errors(T_frame(model, ARM, result.q, "panda_hand"), T)
            assert errors[0] <= 1e-4 and errors[1] <= 1e-3


def test_continuous_and_unknown_joints_are_skipped_with_a_warning(caplog):
    limits = {"spin": (-1.0, 1.0, 2.5), "no_such_joint": (0.0, 1.0), "lift": (0.1, None)}
    with caplog.at_level(logging.WARNING):
        robot = Robot.from_urdf(CONTINUOUS_URDF, planning_limits=limits)
    group = robot.group(base="base", tip="b")
    assert group.continuous[0] and np.isinf(group.lower[0])
    assert (group.lower[1], group.upper[1]) == (0.1, 0.5)
    assert group.velocity_limits[0] == 2.5  # a continuous joint's velocity is bounded
    assert "'spin' is a continuous joint" in caplog.text
    assert "'no_such_joint' is not a one-axis joint" in caplog.text


@pytest.mark.parametrize("bounds, says", [
    ((float("nan"), None), "min_position must be a finite number"),
    ((None, float("inf")), "max_position must be a finite number"),
    ((None, "1.0"), "max_position must be a finite number"),
    ((True, None), "min_position must be a finite number"),
    ((0.5, -0.5), "min_position 0.5 > max_position -0.5"),
    ((3.0, None), "min_position 3.0 > max_position 2.8973"),
    ((None, None, 0.0), "max_velocity must be > 0"),
    ((None, None, float("nan")), "max_velocity must be a finite number [rad/s or m/s]"),
    ((10 ** 400, None), "min_position must be a finite number"),
])
def test_bad_bounds_are_refused_naming_the_joint(bounds, says):
    with pytest.raises(RobotModelError, match="joint 'panda_joint1'") as raised:
        panda({"panda_joint1": bounds})
    assert says in str(raised.value)


@pytest.mark.parametrize("flag", ["false", 0])
def test_a_velocity_flag_that_is_not_a_bool_is_refused(flag):
    """yaml's 'false' quoted is a string: read as true it would apply the velocity."""
    from ros2_ik.core.model.joint_limits_yaml import planning_limits_of
    with pytest.raises(RobotModelError, match="joint 'j1': has_velocity_limits must be true "
                                              "or false"):
        planning_limits_of({"j1": {"has_velocity_limits": flag, "max_velocity": 1.0}})
    for unset in ({}, {"has_velocity_limits": None}):  # absent or null: the velocity applies
        assert planning_limits_of({"j1": {**unset, "max_velocity": 1.0}}) == \
            {"j1": (None, None, 1.0, None)}


def test_accelerations_apply_unless_their_flag_is_false():
    """joint_limits.yaml's max_acceleration [rad/s^2] times what is sent (URDFs have none)."""
    from ros2_ik.core.model.joint_limits_yaml import planning_limits_of
    from ros2_ik.node.parameters import check_planning_limit, planning_limits
    yaml = {"panda_joint2": {"has_acceleration_limits": True, "max_acceleration": 1.875},
            "panda_joint3": {"max_acceleration": 2.5},  # unset: a limit written is kept
            "panda_joint4": {"has_acceleration_limits": False, "max_acceleration": 0.0}}
    limits = planning_limits_of(yaml)
    assert [limits[j].max_acceleration for j in sorted(yaml)] == [1.875, 2.5, None]
    group = arm_group(panda(limits))
    np.testing.assert_array_equal(group.acceleration_limits,
                                  [np.inf, 1.875, 2.5, np.inf, np.inf, np.inf, np.inf])
    assert np.all(arm_group(panda()).acceleration_limits == np.inf)
    floating = Robot.from_urdf(robots.urdf_text("panda"), root_joint="floating",
                               planning_limits=limits).whole_body(tip="panda_hand")
    from ros2_ik.node.base_pose import joint_limits
    np.testing.assert_array_equal(  # the base's coordinates dropped; the arm, then a finger
        joint_limits(floating).acceleration_limits, [*group.acceleration_limits, np.inf])
    prefix = "robot_description_planning.joint_limits.j."
    assert planning_limits({prefix + "max_acceleration": 3.0}) == {"j": (None, None, None, 3.0)}
    assert "[rad/s^2 or m/s^2]" in check_planning_limit(prefix + "max_acceleration", "fast")
    assert "true or false" in check_planning_limit(prefix + "has_acceleration_limits", "yes")
    with pytest.raises(RobotModelError, match="joint 'panda_joint2': max_acceleration must be "
                                              "> 0, got -1.0"):
        panda({"panda_joint2": PlanningLimits(max_acceleration=-1.0)})
    with pytest.raises(RobotModelError, match="joint 'j1': has_acceleration_limits must be"):
        planning_limits_of({"j1": {"has_acceleration_limits": "false", "max_acceleration": 1}})


def test_parameters_name_the_joint_and_the_limit():
    from ros2_ik.node.parameters import (check_planning_limit, planning_limit_parameter,
                                         planning_limits)
    prefix = "robot_description_planning.joint_limits."
    assert planning_limit_parameter(prefix + "a.b.max_position") == ("a.b", "max_position")
    assert planning_limit_parameter(prefix + "j1.max_velocity") == ("j1", "max_velocity")
    acceleration = prefix + "j1.max_acceleration"
    assert planning_limit_parameter(acceleration) == ("j1", "max_acceleration")
    assert planning_limit_parameter(prefix + "j1.max_jerk") is None
    assert planning_limit_parameter("robot_description_kinematics.arm.min_position") is None
    assert planning_limits({
        prefix + "j1.min_position": -1, prefix + "j1.max_position": 0.5,
        prefix + "j2.max_position": 2.0, prefix + "j2.max_velocity": 1.5,
        prefix + "j3.has_velocity_limits": False, prefix + "j3.max_velocity": 1.0,
        prefix + "j4.has_velocity_limits": True, prefix + "j4.max_velocity": 0.7}) == {
        "j1": (-1, 0.5, None, None), "j2": (None, 2.0, 1.5, None),
        "j3": (None, None, None, None), "j4": (None, None, 0.7, None)}
    position, velocity = prefix + "j.min_position", prefix + "j.max_velocity"
    assert check_planning_limit(position, 1) is None
    assert check_planning_limit(position, -0.5) is None
    for bad in ("1.0", True, float("nan"), [1.0]):
        assert "must be a finite number [rad or m]" in check_planning_limit(position, bad)
    assert check_planning_limit(velocity, 0.0) is None  # unused where has_velocity_limits
    assert planning_limits({prefix + "j.has_velocity_limits": False, velocity: 0.0}) == \
        {"j": (None, None, None, None)}                  # is false, as MoveIt's setup writes
    assert "[rad/s or m/s]" in check_planning_limit(velocity, float("inf"))
    assert "true or false" in check_planning_limit(prefix + "j.has_velocity_limits", 1)


def test_node_solves_inside_the_yaml_bounds(ros_context):
    """ik_node given joint_limits.yaml's parameters, as move_group gets them."""
    import panda_node
    from ros2_ik_interfaces.msg import IKErrorCode
    from test_node_compute_ik import pose_request

    prefix = "robot_description_planning.joint_limits.panda_joint1."
    node, client = panda_node.start("yamllimits", f"{prefix}min_position:=-0.3",
                                    f"{prefix}max_position:=0.3")
    try:
        model = panda_node.description()[2]
        for q1 in (0.2, 1.2):  # inside the yaml's bounds, then outside (inside the URDF's)
            T = T_frame(model, ARM, [q1] + READY[1:], "panda_hand")
            res = client.call(pose_request(T))
            if q1 == 0.2:
                assert res.error_code.val == IKErrorCode.SUCCESS, res.message
            if res.error_code.val == IKErrorCode.SUCCESS:
                q = dict(zip(res.solution.name, res.solution.position))
                assert -0.3 <= q["panda_joint1"] <= 0.3, (q1, q)
                T_got = T_frame(model, res.solution.name, res.solution.position, "panda_hand")
                assert pose_errors(T_got, T)[0] <= 1e-4
    finally:
        panda_node.stop(node, client)


def test_node_refuses_a_bound_that_is_no_number(ros_context):
    from ros2_ik.node.harness import NodeProcess, wait_for
    name = "robot_description_planning.joint_limits.panda_joint1.max_position"
    node = NodeProcess(extra_args=["-p", f"{name}:=wide"])
    wait_for(lambda: not node.alive(), 30, "ik_node to exit on a bad joint limit")
    assert node.stop() == 2, node.output()
    assert f"{name} must be a finite number [rad or m]" in node.output()


@pytest.mark.parametrize("by", ["arm", "urdf"])
def test_batch_workers_keep_the_planning_bounds(by):
    """A batch's GroupSpec carries the bounds to the worker processes that rebuild it."""
    from ros2_ik.core.maps.batch import SUCCESS_CODE, GroupSpec, solve_batch
    limits = (("panda_joint1", PlanningLimits(-0.3, 0.3)),)
    spec = GroupSpec(arm="panda", planning_limits=limits) if by == "arm" else GroupSpec(
        urdf=robots.urdf_text("panda"), base="panda_link0", tip="panda_hand",
        planning_limits=limits)
    model = pin.buildModelFromXML(robots.urdf_text("panda"))
    rng = np.random.default_rng(8)
    group = arm_group(panda())
    qs = rng.uniform(group.lower, group.upper, (12, 7))
    qs[:6, 0] = rng.uniform(-0.3, 0.3, 6)  # half inside the bounds, half anywhere
    T = np.array([T_frame(model, ARM, q, "panda_hand").homogeneous for q in qs])
    result = solve_batch(spec, T, timeout_s=0.05, workers=2, chunk_size=4)
    solved = result.status == SUCCESS_CODE
    assert solved[:6].all()
    assert np.all(np.abs(result.q[solved, 0]) <= 0.3), result.q[solved, 0]


def test_arbitrary_limits_build_a_robot_or_say_which_joint():
    """Any mapping of names to values: a Robot whose groups keep the finite bounds given,
    or RobotModelError naming the joint; no other exception."""
    from hypothesis import HealthCheck, given, settings, strategies as st
    value = st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True),
                      st.integers(-5, 5), st.booleans(), st.text(max_size=3))
    entry = st.one_of(st.tuples(value, value), st.tuples(value, value, value), value,
                      st.lists(value, max_size=5))
    names = st.sampled_from(ARM + ["panda_finger_joint1", "nope", ""])
    urdf = robots.urdf_text("panda")

    @settings(max_examples=150, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(st.dictionaries(names, entry, max_size=4))
    def check(limits):
        try:
            robot = Robot.from_urdf(urdf, planning_limits=limits)
        except RobotModelError as exc:
            assert "joint_limits: joint '" in str(exc)
            return
        group = arm_group(robot)
        assert np.all(group.lower <= group.upper)
        for k, name in enumerate(ARM):
            bounds = PlanningLimits(*limits[name]) if name in limits else PlanningLimits()
            for side, got in ((bounds.min_position, group.lower[k]),
                              (bounds.max_position, group.upper[k]),
                              (bounds.max_velocity, group.velocity_limits[k])):
                if side is not None:
                    assert got == side
    check()


def test_get_position_ik_answers_inside_the_yaml_bounds():
    """MoveIt's GetPositionIK (the bridge's handler) on the model the node builds with them."""
    pytest.importorskip("moveit_msgs.srv", reason="moveit_msgs is not installed")
    import node_inputs
    from ros2_ik.node import moveit_bridge as mb
    from test_moveit_mapping import call, ik_request, panda_config

    snapshot = node_inputs.snapshot(robots.urdf_text("panda"), robots.srdf_text("panda"),
                                    planning_limits={"panda_joint1": (-0.3, 0.3)})
    model = pin.buildModelFromXML(robots.urdf_text("panda"))
    for q1 in (0.2, 1.2):  # inside the yaml's bounds, then outside (inside the URDF's)
        T = T_frame(model, ARM, [q1] + READY[1:], "panda_hand", "panda_link0")
        res = call(snapshot, panda_config(), ik_request(T))
        if q1 == 0.2:
            assert res.error_code.val == mb.MoveItCode.SUCCESS, res.error_code
        if res.error_code.val == mb.MoveItCode.SUCCESS:
            state = dict(zip(res.solution.joint_state.name, res.solution.joint_state.position))
            assert -0.3 <= state["panda_joint1"] <= 0.3, (q1, state)


def test_node_times_what_it_sends_by_the_yaml_accelerations(ros_context):
    """Executed solutions and timed paths keep acceleration_scaling x max_acceleration,
    sampled on the cubics a JointTrajectoryController draws (test_execution_timing.py)."""
    import panda_node
    from ros2_ik_interfaces.msg import IKErrorCode
    from ros2_ik_interfaces.srv import ComputeIKPath
    from trajectory_msgs.msg import JointTrajectory
    from ros2_ik.node.harness import call_resending
    from test_execution_timing import SHAPE_ACCELERATION, _accelerations
    from test_node_outputs import collect, executed, near_target
    from test_node_path import line_request

    prefix = "robot_description_planning.joint_limits."
    amax = np.array([0.8, 0.6, 0.8, 1.0, 1.2, 1.5, 1.5])  # [rad/s^2]
    topic = "/acclimits/arm_controller/joint_trajectory"
    node, client = panda_node.start(
        "acclimits", f"controller_topic:={topic}", "acceleration_scaling:=0.5",
        *(f"{prefix}{name}.max_acceleration:={a}" for name, a in zip(ARM, amax)))
    try:
        model = panda_node.description()[2]
        ready = np.array(READY)
        trajectories = collect(client, JointTrajectory, topic)
        req = near_target(model, np.array([0.1, -0.1, 0.05, 0.1, 0.0, 0.1, 0.0]))
        req.execute = True
        res = executed(client, req, trajectories, joints=(ARM, ready))
        point = trajectories[-1].points[0]
        seconds = point.time_from_start.sec + 1e-9 * point.time_from_start.nanosec
        move = np.array(res.solution.position) - ready
        worst = np.max(np.abs(np.outer(SHAPE_ACCELERATION, move)), axis=0) / seconds ** 2
        assert np.all(worst <= 0.5 * amax * (1 + 1e-6))
        assert np.max(worst / (0.5 * amax)) == pytest.approx(1.0, rel=1e-4)  # not slower

        path_client = client.node.create_client(ComputeIKPath, "/acclimits/compute_ik_path")
        assert path_client.wait_for_service(timeout_sec=30.0)
        path = line_request(model, [0.0, 0.15, -0.1], 40, time_from_velocity_limits=True,
                            velocity_scaling=1.0)
        answer = call_resending(path_client, path, client.spin, 60.0, 10.0)
        assert answer.error_code.val == IKErrorCode.SUCCESS, answer.message
        points = answer.trajectory.points
        q = np.array([p.positions for p in points])
        v = np.array([p.velocities for p in points])
        t = np.array([p.time_from_start.sec + 1e-9 * p.time_from_start.nanosec for p in points])
        peaks = [np.max(np.abs(_accelerations(q[k], q[k + 1], v[k], v[k + 1], t[k + 1] - t[k])),
                        axis=0) for k in range(len(q) - 1) if t[k + 1] > t[k]]
        assert np.all(np.max(peaks, axis=0) <= 0.5 * amax * (1 + 1e-6))

        # A scaling so small that no Duration holds the move: refused, the node serving.
        from test_node_outputs import set_param
        from ros2_ik.node.harness import with_fresh_joints
        assert set_param(client, "acceleration_scaling", 1e-300, "acclimits").successful
        answer = call_resending(path_client, path, client.spin, 60.0, 10.0)
        assert answer.error_code.val == IKErrorCode.INVALID_GOAL  # the reply's own timing
        assert "acceleration_scaling 1e-300" in answer.message
        path.time_from_velocity_limits, path.execute = False, True
        for call in (lambda: client.call(req),
                     lambda: call_resending(path_client, path, client.spin, 60.0, 10.0)):
            answer = with_fresh_joints(client, ARM, ready, call)
            assert answer.error_code.val == IKErrorCode.EXECUTION_REFUSED, answer.message
            assert "the move would last" in answer.message
    finally:
        panda_node.stop(node, client)
