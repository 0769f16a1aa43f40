"""Every error path raises from errors.py with the valid choices in the message."""
import logging
import math

import numpy as np
import pinocchio as pin
import pytest

from ros2_ik.core import errors, robots
from ros2_ik.core.model.robot import Robot
from ros2_ik.core.pose import PoseTarget
from ros2_ik.core.solve import solve
from ros2_ik.core.solvers import registry
from ros2_ik.core.verify import verify_pose


@pytest.fixture(scope="module")
def arm():
    return robots.load_group("panda")


def good_target(group):
    return PoseTarget(group.tip, group.fk(group.mid_configuration() + 0.1, group.tip))


@pytest.mark.parametrize("xml", ["", "   ", "<robot", "not xml at all"])
def test_bad_urdf(xml):
    with pytest.raises(errors.RobotModelError):
        Robot.from_urdf(xml)


def _two_links(joint: str) -> str:
    return f"<robot name='r'><link name='a'/><link name='b'/>{joint}</robot>"


@pytest.mark.parametrize("xml, named", [
    (_two_links("<joint name='elbow' type='revolute'><parent link='a'/><child link='b'/>"
                "<axis xyz='0 0 1'/></joint>"), ["elbow", "limits"]),
    (_two_links("<joint name='elbow' type='revolute'><parent link='a'/><child link='b'/>"
                "<limit lower='0' upper='1' velocity='1'/></joint>"), ["elbow", "effort"]),
    (_two_links("<joint name='elbow' type='hinge'><parent link='a'/><child link='b'/>"
                "</joint>"), ["elbow", "hinge"]),
    (_two_links("<joint name='elbow' type='fixed'><parent link='a'/><child link='tool'/>"
                "</joint>"), ["elbow", "tool"]),
    (_two_links("<joint name='elbow' type='fixed'><parent link='a'/><child link='b'/>"
                "<origin xyz='0 nan 0'/></joint>"), ["elbow", "origin"]),
    (_two_links(""), ["root", "[a]", "[b]"]),
])
def test_unparsable_urdf_names_the_culprit(xml, named):
    """urdfdom says why only on stderr: the error carries its words (the joint, the field)."""
    with pytest.raises(errors.RobotModelError) as info:
        Robot.from_urdf(xml)
    message = str(info.value)
    assert message.startswith("cannot parse URDF: ")
    assert "does not contain a valid URDF model" not in message
    for word in named:
        assert word in message


def test_parse_errors_read_from_threads_leave_stderr_as_it_was():
    """Each thread gets its own reasons, and file descriptor 2 is the same file after.

    The parse here writes as urdfdom does (to fd 2) and sleeps between its lines, so that
    the threads' captures would interleave without the lock.
    """
    import os
    import threading
    import time
    from ros2_ik.core.model.robot import parser_errors
    before = os.fstat(2)
    got = {}

    def run(name):
        def parse():
            os.write(2, f"Error:   {name} first\n         at line 1 in x.cpp\n".encode())
            time.sleep(0.005)
            os.write(2, f"Error:   {name} second\n".encode())
        got[name] = [parser_errors(parse) for _ in range(4)]

    threads = [threading.Thread(target=run, args=(f"t{k}",)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    after = os.fstat(2)
    assert (after.st_dev, after.st_ino) == (before.st_dev, before.st_ino)
    for name, runs in got.items():
        assert runs == [[f"{name} first", f"{name} second"]] * 4
    assert len(got) == 4


def test_unread_inertial_warns_naming_the_link(caplog):
    """urdfdom keeps a link whose <inertial> it cannot read, massless: a warning says so."""
    link = ("<link name='b'><inertial><mass value='{}'/><inertia ixx='1' ixy='0' ixz='0' "
            "iyy='1' iyz='0' izz='1'/></inertial></link>")
    joint = ("<joint name='j' type='revolute'><parent link='a'/><child link='b'/>"
             "<limit lower='0' upper='1' effort='1' velocity='1'/></joint>")
    for value, warned in (("2 kg", True), ("2", False)):
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="ros2_ik.core.model.robot"):
            robot = Robot.from_urdf(f"<robot name='r'><link name='a'/>{link.format(value)}"
                                    f"{joint}</robot>")
        assert robot.model.nq == 1
        assert ("Link [b]" in caplog.text and "massless" in caplog.text) == warned


def test_a_urdf_pinocchio_reads_and_elementtree_does_not(caplog):
    """tinyxml2 takes a stray <xacro:...> with its prefix unbound, ElementTree does not: the
    robot loads (soft limits and the inertial check skipped, said), unless it has mimic
    joints, whose relations it cannot do without."""
    joint = ("<joint name='j' type='revolute'><parent link='a'/><child link='b'/>"
             "<limit lower='0' upper='1' effort='1' velocity='1'/>{}</joint>")
    stray = "<xacro:property name='p' value='1'/>"
    urdf = _two_links(stray + joint.format(
        "<safety_controller k_velocity='1' soft_upper_limit='0.5'/>"))
    with caplog.at_level(logging.WARNING, logger="ros2_ik.core.model.robot"):
        group = Robot.from_urdf(urdf).group(tip="b")
    assert group.upper[0] == 1.0 and "not well-formed XML" in caplog.text
    mimic = urdf.replace("</robot>", "<link name='c'/>" + joint.replace("'j'", "'k'").replace(
        "<child link='b'/>", "<child link='c'/>").format("<mimic joint='j'/>") + "</robot>")
    with pytest.raises(errors.RobotModelError, match="<mimic> relations"):
        Robot.from_urdf(mimic)


def test_soft_limits_narrow_the_joint_ranges_as_moveit_does(caplog):
    """<safety_controller> soft limits inside the hard ones bound the group (MoveIt's
    jointBoundsFromURDF); a missing attribute narrows nothing; an empty overlap is ignored."""
    def urdf(safety):
        return _two_links("<joint name='j' type='revolute'><parent link='a'/><child link='b'/>"
                          "<axis xyz='0 0 1'/><limit lower='-2' upper='2' effort='1' "
                          f"velocity='1'/>{safety}</joint>")
    cases = [("<safety_controller k_velocity='1' soft_lower_limit='-1.5' "
              "soft_upper_limit='1.8'/>", (-1.5, 1.8)),
             ("<safety_controller k_velocity='1' soft_lower_limit='-2.5' "
              "soft_upper_limit='2.5'/>", (-2.0, 2.0)),  # wider: the hard limits
             ("<safety_controller k_velocity='1' soft_upper_limit='0.5'/>", (-2.0, 0.5)),
             ("", (-2.0, 2.0))]
    for safety, (lo, hi) in cases:
        group = Robot.from_urdf(urdf(safety)).group(tip="b")
        assert (group.lower[0], group.upper[0]) == (lo, hi), safety
    with caplog.at_level(logging.WARNING, logger="ros2_ik.core.model.robot"):
        group = Robot.from_urdf(urdf("<safety_controller k_velocity='1' soft_lower_limit='3' "
                                     "soft_upper_limit='4'/>")).group(tip="b")
    assert (group.lower[0], group.upper[0]) == (-2.0, 2.0) and "'j'" in caplog.text


def test_pr2_answers_keep_inside_its_soft_limits():
    """PR2's arm: soft limits 0.07-0.15 rad inside the hard ones, read from the URDF here."""
    import xml.etree.ElementTree as ET
    text = robots.urdf_text("pr2_right")
    soft = {j.get("name"): (float(j.find("safety_controller").get("soft_lower_limit")),
                            float(j.find("safety_controller").get("soft_upper_limit")))
            for j in ET.fromstring(text).iter("joint")
            if j.get("type") in ("revolute", "prismatic")
            and j.find("safety_controller") is not None}
    robot = Robot.from_urdf(text)
    group = robot.group(base="torso_lift_link", tip="r_wrist_roll_link")
    # A locked joint is held within its hard limits: where joint_states may put it.
    assert robot.joint_limits("torso_lift_joint") == (0.0, 0.31) and soft[
        "torso_lift_joint"] == pytest.approx((0.0115, 0.305))
    assert group.locked["torso_lift_joint"] == 0.0
    held = group.held_at({"torso_lift_joint": 0.005})  # between the hard and soft limits
    assert held.locked["torso_lift_joint"] == 0.005
    for name, lo, hi in zip(group.joint_names, group.lower, group.upper):
        if name in soft:
            assert (lo, hi) == pytest.approx(soft[name]), name
    assert group.lower[0] == pytest.approx(-2.1353981634)
    rng = np.random.default_rng(3)
    for k in range(10):
        T = group.fk(group.random_configuration(rng), group.tip)
        result = solve(group, PoseTarget(group.tip, T), group.mid_configuration(), "lm",
                       0.05, 0, k)
        assert result.success, result.message
        for name, value in zip(group.joint_names, result.q):
            if name in soft:
                assert soft[name][0] - 1e-9 <= value <= soft[name][1] + 1e-9, name


def test_unknown_frames_list_valid_names(arm):
    robot, _ = arm
    with pytest.raises(errors.InvalidFrame, match="panda_hand") as info:
        robot.group(base="panda_link0", tip="no_such_link")
    assert "panda_link7" in info.value.valid
    # Links and added frames only: no joint frames, no universe (they still resolve).
    assert "panda_joint1" not in info.value.valid and "universe" not in info.value.valid
    assert "panda_hand_tcp" in info.value.valid
    with pytest.raises(errors.InvalidFrame):
        robot.group(base="nope", tip="panda_hand")


def test_unknown_joint_lists_valid_names(arm):
    robot, _ = arm
    with pytest.raises(errors.InvalidJoint, match="panda_joint1"):
        robot.group(joints=["panda_joint1", "elbow"], tip="panda_hand")
    # a joint the group moves: said so, not called unknown; the lockable ones listed
    with pytest.raises(errors.InvalidJoint, match="locked: joint 'panda_joint1' is one the "
                       "group moves.*valid: .*panda_finger_joint1") as moved:
        robot.group(base="panda_link0", tip="panda_hand", locked={"panda_joint1": 0.0})
    assert "unknown" not in str(moved.value)
    with pytest.raises(errors.InvalidJoint, match="locked: unknown joint 'elbow'"):
        robot.group(base="panda_link0", tip="panda_hand", locked={"elbow": 0.0})
    with pytest.raises(errors.InvalidArgument):
        robot.group(joints=["panda_joint1", "panda_joint1"], tip="panda_hand")


def test_locked_values_are_clipped_into_the_limits_and_must_be_finite(arm):
    """The fingers (0 to 0.04 m, the second mimics the first): clipped as the URDF says."""
    robot, _ = arm
    model = robot.model
    hi = model.upperPositionLimit[model.idx_qs[model.getJointId("panda_finger_joint1")]]
    group = robot.group(base="panda_link0", tip="panda_hand",
                        locked={"panda_finger_joint1": 5.0})
    assert group.locked["panda_finger_joint1"] == hi
    assert group.locked["panda_finger_joint2"] == hi  # its mimic follows the clipped value
    assert type(group.locked["panda_finger_joint1"]) is float
    assert robot.group(base="panda_link0", tip="panda_hand",
                       locked={"panda_finger_joint1": -1.0}).locked["panda_finger_joint1"] == 0.0
    for bad in (math.nan, math.inf):
        with pytest.raises(errors.InvalidArgument, match="panda_finger_joint1"):
            robot.group(base="panda_link0", tip="panda_hand",
                        locked={"panda_finger_joint1": bad})


def test_chain_needs_an_ancestor(arm):
    robot, _ = arm
    with pytest.raises(errors.InvalidArgument, match="ancestor"):
        robot.group(base="panda_hand", tip="panda_link3")


def test_inverted_urdf_limits_name_the_joint(arm):
    robot, _ = arm
    urdf = robots.urdf_text("panda").replace(
        'lower="-1.7628" upper="1.7628"', 'lower="1.7628" upper="-1.7628"', 1)
    assert urdf != robots.urdf_text("panda")
    inverted = Robot.from_urdf(urdf)
    with pytest.raises(errors.InvalidArgument, match="'panda_joint2' has lower limit 1.76"):
        inverted.group(base="panda_link0", tip="panda_hand")
    inverted.group(base="panda_link2", tip="panda_hand")  # a group without it is fine


def test_a_zero_axis_names_the_joint():
    """A URDF axis ``0 0 0`` moved nothing: the group was solved as if the joint were not there.

    A UR5 whose elbow had such an axis answered SUCCESS with the elbow at -0.32 rad, which
    on the robot moves the tool.  Groups with that joint are refused; groups without, and
    a zero axis on a locked joint, are fine.  A non-unit axis is normalised as before.
    """
    text = robots.urdf_text("ur5")
    axis = '<origin rpy="0.0 0.0 0.0" xyz="0.0 -0.1197 0.425"/>\n    <axis xyz="0 1 0"/>'
    assert axis in text
    zero = Robot.from_urdf(text.replace(axis, axis.replace("0 1 0", "0 0 0")))
    with pytest.raises(errors.InvalidArgument, match="'elbow_joint' has a zero axis"):
        zero.group(base="base_link", tip="tool0")
    with pytest.raises(errors.InvalidArgument, match="'elbow_joint' has a zero axis"):
        zero.group(tip="tool0", joints=["shoulder_pan_joint", "elbow_joint"])
    assert zero.group(base="forearm_link", tip="tool0").n == 3
    assert zero.group(tip="tool0", joints=["shoulder_pan_joint", "wrist_1_joint"]).n == 2
    longer = Robot.from_urdf(text.replace(axis, axis.replace("0 1 0", "0 2 0")))
    group, plain = longer.group(base="base_link", tip="tool0"), \
        Robot.from_urdf(text).group(base="base_link", tip="tool0")
    q = np.full(6, 0.3)
    assert np.allclose(group.fk(q, "tool0").homogeneous, plain.fk(q, "tool0").homogeneous)


def test_unknown_solver_lists_registered_ones(arm):
    _, group = arm
    with pytest.raises(errors.UnknownSolver) as info:
        solve(group, good_target(group), group.mid_configuration(), solver="trac_ik")
    assert set(info.value.valid) >= {"lm", "dls", "bfgs", "sqp"}
    assert "lm" in str(info.value)
    assert set(registry.available()) >= {"lm", "dls", "bfgs", "sqp"}


@pytest.mark.parametrize("bad", [math.nan, math.inf])
def test_non_finite_target(arm, bad):
    _, group = arm
    T = pin.SE3.Identity()
    T.translation = np.array([bad, 0.0, 0.0])
    with pytest.raises(errors.InvalidGoal):
        PoseTarget(group.tip, T)


@pytest.mark.parametrize("kwargs", [
    {"position_tolerance_m": -1e-4}, {"position_tolerance_m": 0.0},
    {"orientation_tolerance_rad": math.nan}, {"position_tolerance_m": 10**400},
    {"weights": (1, 1, 1, 1, 1)},
    {"weights": (0, 0, 0, 0, 0, 0)}, {"weights": (1, 1, 1, -1, 1, 1)},
    {"weights": (1, 1, 1, math.inf, 1, 1)},
    {"weights": (0, 0, 0, 1, 1, 1), "position_only": True},
])
def test_bad_target_numbers(arm, kwargs):
    _, group = arm
    with pytest.raises(errors.InvalidGoal):
        PoseTarget(group.tip, pin.SE3.Identity(), **kwargs)


def test_non_rotation_matrix(arm):
    _, group = arm
    T = pin.SE3.Identity()
    T.rotation = np.diag([1.0, 1.0, 2.0])
    with pytest.raises(errors.InvalidGoal, match="rotation"):
        PoseTarget(group.tip, T)


def test_unknown_target_and_reference_frames(arm):
    _, group = arm
    with pytest.raises(errors.InvalidFrame):
        solve(group, PoseTarget("nope", pin.SE3.Identity()), group.mid_configuration())
    with pytest.raises(errors.InvalidFrame):
        solve(group, PoseTarget(group.tip, pin.SE3.Identity(), reference_frame="nope"),
              group.mid_configuration())
    with pytest.raises(errors.InvalidGoal, match="moved by the group"):
        solve(group, PoseTarget(group.tip, pin.SE3.Identity(), reference_frame="panda_link3"),
              group.mid_configuration())


@pytest.mark.parametrize("seed", [np.zeros(6), np.zeros(8), np.full(7, math.nan),
                                  [0, 0, 0, 0, 0, 0, math.inf]])
def test_bad_seed_vector(arm, seed):
    _, group = arm
    with pytest.raises(errors.InvalidSeed):
        solve(group, good_target(group), seed)


def test_seed_from_names(arm):
    _, group = arm
    names = list(group.joint_names)
    full = names + ["panda_finger_joint1"]            # a full JointState: extra is fine
    q = group.seed_from(full, np.arange(8) * 0.1)
    np.testing.assert_allclose(q, np.arange(7) * 0.1)
    with pytest.raises(errors.InvalidSeed, match="misses"):
        group.seed_from(names[:6], np.zeros(6))
    q = group.seed_from(names[:6], np.zeros(6), default=np.ones(7))
    assert q[6] == 1.0
    with pytest.raises(errors.InvalidSeed, match="not in the model"):
        group.seed_from(names + ["bogus"], np.zeros(8))
    with pytest.raises(errors.InvalidSeed, match="duplicated"):
        group.seed_from(names + [names[0]], np.zeros(8))
    with pytest.raises(errors.InvalidSeed, match="not finite"):
        group.seed_from(names, [0, 0, 0, math.nan, 0, 0, 0])
    with pytest.raises(errors.InvalidSeed):
        group.seed_from(names, np.zeros(6))


@pytest.mark.parametrize("kwargs", [
    {"timeout_s": 0.0}, {"timeout_s": -1.0}, {"timeout_s": math.nan},
    {"timeout_s": math.inf}, {"max_attempts": -1}, {"max_attempts": 1.5},
    {"num_solutions": 0}, {"max_joint_jump_rad": 0.0}, {"random_seed": -3},
])
def test_bad_solve_options(arm, kwargs):
    _, group = arm
    with pytest.raises(errors.InvalidArgument):
        solve(group, good_target(group), group.mid_configuration(), **kwargs)


def test_wrong_target_type(arm):
    _, group = arm
    with pytest.raises(errors.InvalidGoal):
        solve(group, "panda_hand", group.mid_configuration())


def test_errors_are_value_or_key_errors():
    assert issubclass(errors.InvalidGoal, ValueError)
    assert issubclass(errors.InvalidFrame, KeyError)


def test_verify_pose_reports_reasons(arm):
    _, group = arm
    target = good_target(group)
    q = group.mid_configuration() + 0.1
    ok, pos, ori, reason = verify_pose(group, target, q)
    assert ok and pos < 1e-9 and reason == ""
    ok, pos, ori, reason = verify_pose(group, target, group.mid_configuration())
    assert not ok and "pose error" in reason
    q_out = q.copy()
    q_out[3] = 1.0                                    # panda_joint4 upper limit is -0.07
    ok, _, _, reason = verify_pose(group, target, q_out)
    assert not ok and "panda_joint4" in reason
