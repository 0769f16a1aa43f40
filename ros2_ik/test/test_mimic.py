"""URDF mimic joints follow their leaders: never a group's own joint (core/model/robot.py).

A group that moves a leader moves its mimic joints with it (``Group.coupled``).

Checked against pinocchio's own mimic model (``buildModelFromXML(..., mimic=True)``), which
moves a mimic joint with its leader: the reference the robot's controllers follow.
"""
import numpy as np
import pinocchio as pin
import pytest

from ros2_ik.core import errors
from ros2_ik.core.model.robot import Robot
from ros2_ik.core.pose import PoseTarget
from ros2_ik.core.result import IKStatus
from ros2_ik.core.solve import solve


def _joint(name, parent, child, axis, xyz="0 0 0", mimic=""):
    return (f'<joint name="{name}" type="revolute"><parent link="{parent}"/>'
            f'<child link="{child}"/><origin xyz="{xyz}"/><axis xyz="{axis}"/>'
            f'<limit lower="-2" upper="2" effort="1" velocity="1"/>{mimic}</joint>')


def _urdf(links, joints) -> str:
    return ('<?xml version="1.0"?><robot name="m">' + "".join(
        f'<link name="{n}"/>' for n in links) + "".join(joints) + "</robot>")


#: A torso of two twin joints (b2 follows b1), an arm on each.
TWIN = _urdf(
    ["base", "tb1", "tb2", "r1", "rtip", "l1", "l2", "ltip"],
    [_joint("b1", "base", "tb1", "0 0 1"),
     _joint("b2", "base", "tb2", "0 0 1", mimic='<mimic joint="b1" multiplier="1"/>'),
     _joint("r1", "tb1", "r1", "0 1 0", "0.3 0 0.5"),
     _joint("r2", "r1", "rtip", "0 1 0", "0.4 0 0"),
     _joint("l1", "tb2", "l1", "0 1 0", "-0.3 0 0.5"),
     _joint("l2", "l1", "l2", "0 1 0", "0 0 0.4"),
     _joint("l3", "l2", "ltip", "1 0 0", "0 0 0.3")])

#: A palletizer's parallelogram: j3 keeps the forearm level (-j2 + 0.1).
PALLETIZER = _urdf(
    ["base", "a1", "a2", "a3", "a4", "tip"],
    [_joint("j1", "base", "a1", "0 0 1"),
     _joint("j2", "a1", "a2", "0 1 0", "0 0 0.5"),
     _joint("j3", "a2", "a3", "0 1 0", "0 0 1.0",
            '<mimic joint="j2" multiplier="-1" offset="0.1"/>'),
     _joint("j4", "a3", "a4", "0 1 0", "1.0 0 0"),
     _joint("j5", "a4", "tip", "0 0 1", "0.3 0 0")])


def _reference_tip(urdf: str, values: dict, frame: str) -> pin.SE3:
    """``T_world_frame`` of pinocchio's mimic model at the leaders' ``values``."""
    model = pin.buildModelFromXML(urdf, mimic=True)
    data = model.createData()
    q = pin.neutral(model)
    for name, value in values.items():
        j = model.getJointId(name)
        if model.nqs[j]:
            q[model.idx_qs[j]] = value
    pin.framesForwardKinematics(model, data, q)
    return data.oMf[model.getFrameId(frame)]


def test_a_mimic_joint_is_no_movable_joint():
    robot = Robot.from_urdf(TWIN)
    assert "b2" not in robot.joint_names and robot.mimics["b2"].leader == "b1"


@pytest.mark.parametrize("b1", [0.0, 0.7, -1.2])
def test_an_arm_on_the_twin_torso_follows_the_leader(b1):
    robot = Robot.from_urdf(TWIN)
    group = robot.group(base="base", tip="ltip", locked={"b1": b1})
    assert group.joint_names == ("l1", "l2", "l3")  # b2 follows b1: not the arm's
    assert group.locked["b2"] == pytest.approx(b1) and group.upstream == ("b2",)
    rng = np.random.default_rng(2)
    for k in range(10):
        q = rng.uniform(-1.5, 1.5, 3)
        T = _reference_tip(TWIN, {"b1": b1, "l1": q[0], "l2": q[1], "l3": q[2]}, "ltip")
        result = solve(group, PoseTarget("ltip", T, position_tolerance_m=1e-4,
                                         orientation_tolerance_rad=10.0),
                       np.zeros(3), "lm", 0.2, 0, k)
        assert result.status is IKStatus.SUCCESS, result.message
        reached = _reference_tip(TWIN, {"b1": b1, **dict(zip(group.joint_names, result.q))},
                                 "ltip")
        assert np.linalg.norm(reached.translation - T.translation) < 1e-4


def test_held_elsewhere_a_mimic_joint_follows_its_leader():
    robot = Robot.from_urdf(TWIN)
    group = robot.group(base="base", tip="ltip")
    assert group.locked["b2"] == 0.0
    assert group.held_at({"b1": 0.7}).locked["b2"] == pytest.approx(0.7)
    assert group.held_at({"b1": 0.7, "b2": 0.69}).locked["b2"] == 0.69  # measured: kept


def test_a_given_mimic_value_is_kept():
    robot = Robot.from_urdf(TWIN)
    group = robot.group(base="base", tip="ltip", locked={"b1": 0.2, "b2": 0.25})
    assert group.locked["b2"] == 0.25  # joint_states say where it is


def _prismatic(name, parent, child, axis, xyz="0 0 0", mimic=""):
    joint = _joint(name, parent, child, axis, xyz, mimic)
    return joint.replace('type="revolute"', 'type="prismatic"')


#: A chain through a mimic of a mimic: j2 = 2 j1 + 0.1, j3 = -j2 (= -2 j1 - 0.1), and two
#: bars off the chain that follow j4: one on the arm, one on the base (no group joint
#: carries it: only its coupling moves it).
CHAINED = _urdf(
    ["base", "a1", "a2", "a3", "a4", "tip", "bar", "bar0"],
    [_joint("j1", "base", "a1", "0 0 1", "0 0 0.2"),
     _joint("j2", "a1", "a2", "0 1 0", "0 0 0.5",
            '<mimic joint="j1" multiplier="2" offset="0.1"/>'),
     _joint("j3", "a2", "a3", "0 1 0", "0.1 0 0.5", '<mimic joint="j2" multiplier="-1"/>'),
     _joint("j4", "a3", "a4", "1 0 0", "0 0 0.4"),
     _joint("j5", "a4", "tip", "0 1 0", "0 0.2 0.3"),
     _joint("jb", "a3", "bar", "0 1 0", "0 0 0.1", '<mimic joint="j4" multiplier="0.5"/>'),
     _joint("jb0", "base", "bar0", "1 0 0", "0.3 0 0", '<mimic joint="j4"/>')])


def _chained_tip(values: dict, frame: str, urdf: str = CHAINED) -> pin.SE3:
    """``T_world_frame`` of CHAINED (or a variant) with its mimic joints set by hand
    (pinocchio's mimic model takes no mimic of a mimic)."""
    j1, j4 = values["j1"], values["j4"]
    model = pin.buildModelFromXML(urdf)
    data, q = model.createData(), pin.neutral(model)
    for name, value in {**values, "j2": 2 * j1 + 0.1, "j3": -(2 * j1 + 0.1),
                        "jb": 0.5 * j4, "jb0": j4}.items():
        q[model.idx_qs[model.getJointId(name)]] = value
    pin.framesForwardKinematics(model, data, q)
    return data.oMf[model.getFrameId(frame)]


def _reference(urdf):
    return (lambda values, frame: _chained_tip(values, frame)) if urdf == CHAINED else \
        (lambda values, frame: _reference_tip(urdf, values, frame))


def _coupled_solves(urdf, tip, weights, count=20, constraints=(), feasible=None, met=None):
    """Solve ``count`` targets reached by the leaders; check each answer on pinocchio's model.

    ``feasible(values)``: whether the leaders' values meet the constraints (targets are
    drawn where they do); ``met(values)``: the same within the tolerance, on the answers.
    """
    robot, reference = Robot.from_urdf(urdf), _reference(urdf)
    group = robot.group(base="base", tip=tip)
    rng = np.random.default_rng(4)
    for k in range(count):
        q = group.random_configuration(rng)
        while feasible is not None and not feasible(dict(zip(group.joint_names, q))):
            q = group.random_configuration(rng)
        T = reference(dict(zip(group.joint_names, q)), tip)
        result = solve(group, PoseTarget(tip, T, weights=weights), group.mid_configuration(),
                       "lm", 0.2, 0, k, constraints=constraints)
        assert result.status is IKStatus.SUCCESS, result.message
        reached = reference(dict(zip(group.joint_names, result.q)), tip)
        assert met is None or met(dict(zip(group.joint_names, result.q)))
        error = T.actInv(reached)
        assert np.linalg.norm(error.translation) < 1.01e-4
        assert np.linalg.norm(pin.log3(error.rotation) * weights[3:]) < 1.01e-3
    return group


def test_a_chain_through_a_mimic_its_group_moves_it_with_the_leader():
    """The palletizer: j3 (-j2 + 0.1) keeps the forearm level; the group moves j1 j2 j4 j5."""
    group = _coupled_solves(PALLETIZER, "tip", (1, 1, 1, 0, 1, 1))
    assert group.joint_names == ("j1", "j2", "j4", "j5") and "j3" not in group.locked
    robot = group.robot
    q = np.array([0.3, -0.4, 0.5, 0.1])
    assert group.to_full_q(q)[robot.model.idx_qs[robot.model.getJointId("j3")]] == \
        pytest.approx(0.5)  # -(-0.4) + 0.1
    explicit = robot.group(joints=["j1", "j2", "j4", "j5"], tip="tip")
    np.testing.assert_allclose(explicit.fk(q, "tip").homogeneous,
                               _reference_tip(PALLETIZER, dict(zip(explicit.joint_names, q)),
                                              "tip").homogeneous, atol=1e-12)
    below = robot.group(base="a3", tip="tip", locked={"j2": 0.4})  # j2 locked: j3 too
    assert below.locked["j3"] == pytest.approx(-0.3) and not below.coupled


def test_a_mimic_of_a_mimic_and_a_bar_off_the_chain_move_with_their_leaders():
    group = _coupled_solves(CHAINED, "tip", (1, 1, 1, 0, 0, 0))
    assert group.joint_names == ("j1", "j4", "j5")
    relations = {group.robot.model.names[c.follower]: [c.multiplier, c.offset]
                 for c in group.coupled}
    assert sorted(relations) == ["j2", "j3", "jb", "jb0"]
    for name, relation in {"j2": [2.0, 0.1], "j3": [-2.0, -0.1], "jb": [0.5, 0.0],
                           "jb0": [1.0, 0.0]}.items():
        assert relations[name] == pytest.approx(relation)
    model = group.robot.model
    assert group.moves_frame(model.getFrameId("bar"))
    assert group.moves_frame(model.getFrameId("bar0"))  # its coupling alone moves it
    q = np.array([0.2, -0.5, 0.7])
    np.testing.assert_allclose(group.fk(q, "bar0").homogeneous,
                               _chained_tip(dict(zip(group.joint_names, q)), "bar0").homogeneous,
                               atol=1e-12)


def test_a_coupled_group_held_elsewhere_on_its_rail():
    """A rail under the palletizer, locked: held at another reading, the coupling holds."""
    railed = PALLETIZER.replace('<link name="base"/>', '<link name="base"/><link name="cart"/>')
    railed = railed.replace('<parent link="base"/><child link="a1"/>',
                            '<parent link="cart"/><child link="a1"/>')
    railed = railed.replace("</robot>", _prismatic("rail", "base", "cart", "1 0 0") + "</robot>")
    robot = Robot.from_urdf(railed)
    group = robot.group(joints=["j1", "j2", "j4", "j5"], tip="tip", locked={"rail": 0.3})
    assert group.upstream == ("rail",)
    held = group.held_at({"rail": 0.8})
    rng = np.random.default_rng(6)
    for k in range(10):
        values = dict(zip(held.joint_names, held.random_configuration(rng)))
        T = _reference_tip(railed, {**values, "rail": 0.8}, "tip")
        result = solve(held, PoseTarget("tip", T, weights=(1, 1, 1, 0, 1, 1)),
                       held.mid_configuration(), "lm", 0.2, 0, k)
        assert result.status is IKStatus.SUCCESS, result.message
        reached = _reference_tip(railed, {**dict(zip(held.joint_names, result.q)),
                                          "rail": 0.8}, "tip")
        assert np.linalg.norm(reached.translation - T.translation) < 1.01e-4


def test_collision_checks_see_a_coupled_bar_move():
    """bar0 (on the base, turned by its coupling to j4 alone) against a ball: the checker
    agrees with coal on the bar placed by hand, and collision-checked answers clear it."""
    import coal
    from ros2_ik.core.collision import CollisionChecker, PlanningScene, SceneObject, Sphere
    from ros2_ik.core.collision.scene import pose_from_xyz_quat
    from ros2_ik.core.constraints import MinimumDistanceConstraint
    urdf = CHAINED.replace('<link name="bar0"/>', (
        '<link name="bar0"><collision><origin xyz="0 0 0.25"/><geometry>'
        '<box size="0.05 0.05 0.5"/></geometry></collision></link>'))
    robot = Robot.from_urdf(urdf)
    group = robot.group(base="base", tip="tip")
    centre = np.array([0.3, -np.sin(0.8) * 0.35, np.cos(0.8) * 0.35])
    scene = PlanningScene.for_model(robot.model)
    scene.add(SceneObject("ball", [Sphere(0.08)], T_frame_object=pose_from_xyz_quat(centre)))
    checker = CollisionChecker.from_urdf(robot.model, urdf, None, scene)
    box, ball = coal.Box(0.05, 0.05, 0.5), coal.Sphere(0.08)

    def clearance(q):  # coal on the bar where pinocchio puts it, the mimic set by hand
        T = _chained_tip(dict(zip(group.joint_names, q)), "bar0") * pin.SE3(
            np.eye(3), np.array([0.0, 0.0, 0.25]))
        result = coal.DistanceResult()
        return coal.distance(box, coal.Transform3s(T.rotation, T.translation), ball,
                             coal.Transform3s(np.eye(3), centre), coal.DistanceRequest(),
                             result)

    assert checker.in_collision(group.to_full_q(np.array([0.0, 0.8, 0.0])))
    assert not checker.in_collision(group.to_full_q(np.zeros(3)))
    rng = np.random.default_rng(7)
    for _ in range(40):
        q = group.random_configuration(rng)
        report = checker.min_distance(group.to_full_q(q))
        assert report.distance_m == pytest.approx(clearance(q), abs=1e-6)
    constraint, solved = MinimumDistanceConstraint(checker, 0.005, 0.05), 0
    for k in range(10):
        q = group.random_configuration(rng)
        T = _chained_tip(dict(zip(group.joint_names, q)), "tip")
        result = solve(group, PoseTarget("tip", T, weights=(1, 1, 1, 0, 0, 0)),
                       np.array([0.0, 0.8, 0.0]), "lm", 0.2, 0, k, constraints=[constraint])
        if result.success:
            assert clearance(result.q) >= 0.005 - 1e-4
            solved += 1
    assert solved >= 5  # most of them: each has answers away from the ball


def test_a_coupled_groups_derivatives_match_finite_differences():
    """Full-model derivatives to group columns (the constrained loop's, the servo's)."""
    robot = Robot.from_urdf(CHAINED)
    group = robot.group(base="base", tip="tip")
    model, data = robot.model, robot.model.createData()
    fid, q, h = model.getFrameId("bar"), np.array([0.2, -0.5, 0.7]), 1e-7

    def bar(q):
        pin.framesForwardKinematics(model, data, group.to_full_q(q))
        return data.oMf[fid].translation.copy()

    pin.computeJointJacobians(model, data, group.to_full_q(q))
    J = group.group_columns(pin.getFrameJacobian(model, data, fid, pin.LOCAL_WORLD_ALIGNED))
    numeric = np.array([(bar(q + h * e) - bar(q - h * e)) / (2 * h) for e in np.eye(3)]).T
    np.testing.assert_allclose(J[:3], numeric, atol=1e-6)
    assert np.abs(J[:3, 0]).max() > 0.1  # j1 moves the bar through j2 and j3


def test_a_coupled_group_solves_constrained_problems():
    """Constraints run on the full model: the coupled columns in the loop (residuals)."""
    from ros2_ik.core.constraints import PositionConstraint
    robot = Robot.from_urdf(CHAINED)
    a3_high = PositionConstraint(robot.model, "universe", [-5, -5, 0.75], [5, 5, 5], "a3",
                                 [0, 0, 0])
    group = _coupled_solves(CHAINED, "tip", (1, 1, 1, 0, 0, 0), count=10,
                            constraints=[a3_high],
                            feasible=lambda v: _chained_tip(v, "a3").translation[2] >= 0.76,
                            met=lambda v: _chained_tip(v, "a3").translation[2] >= 0.75 - 1e-4)
    assert group.coupled


def test_the_reach_bound_holds_with_coupled_joints():
    from ros2_ik.core.kinematics.reach import reach_bound
    robot = Robot.from_urdf(CHAINED)
    group = robot.group(base="base", tip="tip")
    bound = reach_bound(group, robot.frame_id("tip"))
    rng = np.random.default_rng(5)
    for _ in range(200):
        q = group.random_configuration(rng)
        p = _chained_tip(dict(zip(group.joint_names, q)), "tip").translation
        assert np.linalg.norm(p - bound.centre_array) <= bound.radius_m + 1e-12
    sliding = CHAINED.replace(
        _joint("j3", "a2", "a3", "0 1 0", "0.1 0 0.5", '<mimic joint="j2" multiplier="-1"/>'),
        _prismatic("j3", "a2", "a3", "0 0 1", "0.1 0 0.5", '<mimic joint="j2" multiplier="-1"/>'))
    assert sliding != CHAINED
    robot = Robot.from_urdf(sliding)  # j3 slides -(2 j1 + 0.1) m: up to 4.1 m, not its 2
    group = robot.group(base="base", tip="tip")
    bound = reach_bound(group, robot.frame_id("tip"))
    far = 0.0
    for q in [group.random_configuration(rng) for _ in range(200)] + [np.array([2.0, 0, 0])]:
        p = _chained_tip(dict(zip(group.joint_names, q)), "tip", sliding).translation
        far = max(far, np.linalg.norm(p - bound.centre_array))
        assert np.linalg.norm(p - bound.centre_array) <= bound.radius_m + 1e-12
    assert far > 3.5  # the leader's range carries it beyond the slide's own limits


def test_a_mimic_joint_before_its_leader_is_held_or_refused_as_before():
    """pinocchio's mimic joint must come after its leader: one before is not coupled."""
    early = _urdf(["base", "a0", "a1", "a2", "tip"],  # names as urdfdom orders the tree
                  [_joint("b0", "base", "a0", "0 1 0", "0 0 0.1", '<mimic joint="j2"/>'),
                   _joint("j1", "base", "a1", "0 0 1"),
                   _joint("j2", "a1", "a2", "0 1 0", "0 0 0.5"),
                   _joint("j3", "a2", "tip", "0 1 0", "0 0 0.5")])
    robot = Robot.from_urdf(early)
    model = robot.model
    assert model.getJointId("b0") < model.getJointId("j2")
    group = robot.group(base="base", tip="tip")
    assert not group.coupled and group.locked["b0"] == 0.0  # held at its leader's default
    on_chain = early.replace('<parent link="a1"/><child link="a2"/>',
                             '<parent link="a0"/><child link="a2"/>')
    assert on_chain != early
    with pytest.raises(errors.InvalidArgument, match="'b0' follows 'j2'.*mimic"):
        Robot.from_urdf(on_chain).group(base="base", tip="tip")


def test_a_coupled_continuous_joint_and_a_whole_body_through_a_mimic_are_refused():
    continuous = PALLETIZER.replace(
        '<joint name="j2" type="revolute">', '<joint name="j2" type="continuous">')
    assert continuous != PALLETIZER
    with pytest.raises(errors.InvalidArgument, match="'j3' follows 'j2'.*continuous"):
        Robot.from_urdf(continuous).group(base="base", tip="tip")
    floating = Robot.from_urdf(PALLETIZER, root_joint="floating")
    with pytest.raises(errors.InvalidArgument, match="'j3' follows 'j2'.*mimic"):
        floating.whole_body(tip="tip")


def test_a_group_names_the_leader_not_the_mimic():
    robot = Robot.from_urdf(TWIN)
    with pytest.raises(errors.InvalidArgument, match="'b2' follows 'b1'"):
        robot.group(joints=["b2", "l1"], tip="ltip")


def test_mimic_joints_that_lead_each_other_are_a_model_error():
    """A cycle of mimics is a broken URDF: said when it loads (it recursed without end)."""
    cyclic = _urdf(["base", "a1", "a2", "tip"],
                   [_joint("j1", "base", "a1", "0 0 1"),
                    _joint("j2", "a1", "a2", "0 1 0", "0 0 0.5", '<mimic joint="j3"/>'),
                    _joint("j3", "a2", "tip", "0 1 0", "0 0 0.5", '<mimic joint="j2"/>')])
    with pytest.raises(errors.RobotModelError, match="cycle: j2 -> j3 -> j2"):
        Robot.from_urdf(cyclic)


def test_followers_follow_their_leaders_down_a_chain_of_mimics():
    """``Robot.followers``: the mimic joints a given value leads, a mimic of a mimic too."""
    chained = _urdf(["base", "a1", "a2", "a3", "tip"],
                    [_joint("j1", "base", "a1", "0 0 1"),
                     _joint("j2", "a1", "a2", "0 1 0", "0 0 0.5",
                            '<mimic joint="j1" multiplier="2" offset="0.1"/>'),
                     _joint("j3", "a2", "a3", "0 1 0", "0 0 0.5",
                            '<mimic joint="j2" multiplier="-1"/>'),
                     _joint("j4", "a3", "tip", "1 0 0", "0 0 0.5")])
    robot = Robot.from_urdf(chained)
    assert robot.followers({"j1": 0.3}) == pytest.approx({"j2": 0.7, "j3": -0.7})
    assert robot.followers({"j1": 0.3, "j2": 0.5}) == pytest.approx({"j3": -0.5})
    assert robot.followers({"j4": 0.3}) == {}
    group = robot.group(tip="tip", joints=["j4"])  # held as the followers say
    assert group.held_at({"j1": 0.3}).locked == pytest.approx(
        {"j1": 0.3, "j2": 0.7, "j3": -0.7})


def test_the_servo_tracks_a_target_with_the_parallelogram():
    """The servo's steps on the coupled reduced model reach the target (pinocchio's model)."""
    from ros2_ik.core.servo.step import Servo, ServoConfig
    group = Robot.from_urdf(PALLETIZER).group(base="base", tip="tip")
    servo = Servo(group, "tip", ServoConfig(weights=(1, 1, 1, 0, 1, 1)))
    q = group.mid_configuration()
    goal = dict(zip(group.joint_names, q + np.array([0.3, -0.2, 0.25, 0.4])))
    T = _reference_tip(PALLETIZER, goal, "tip")
    for _ in range(500):
        q = servo.step_pose(q, T, 0.004).q_next
    reached = _reference_tip(PALLETIZER, dict(zip(group.joint_names, q)), "tip")
    assert np.linalg.norm(reached.translation - T.translation) < 1e-4
