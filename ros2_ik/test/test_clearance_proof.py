"""A clearance that no configuration of the group keeps is answered at once, naming the pair.

Two collision geometries that no joint of the group moves apart (both on the hand the arm
carries, a scene object and the link the arm stands on) are as far apart at every
configuration: overlapping, they hold a collision-checked request back whatever the solver
does.  TIAGo's URDF without an SRDF is such a robot (its hand's thumb inside its safety
box): every collision-checked request searched its whole timeout (57 ms at 50 ms) before
answering IN_COLLISION.  The proof (:func:`proofs.clearance_proof`) answers NO_SOLUTION
after the first attempt, naming the pair; checked here against the checker's distances at
random configurations (the pair's distance never changes), and never firing where a
configuration keeps the clearance.

The same with the hand at its target (:meth:`MinimumDistanceConstraint.apart_at_target`):
what the arm carries with the tip is placed by a full pose target, what it does not move
stays put; a pair of the two overlapping (a grasp pose with the hand in the table) is
answered after the first attempt, checked against a configuration that reaches the target
without the clearance, and never where a collision-free configuration reaches it.  A
contact (a foot placed inside a step) is answered alike.
"""
import time

import numpy as np
import pytest

from ros2_ik.core.collision import Box, CollisionChecker, PlanningScene, SceneObject, Sphere, \
    pose_from_xyz_quat
from ros2_ik.core.constraints import FramePlacementConstraint, MinimumDistanceConstraint
from ros2_ik.core.constraints.collision import moving_columns, rigid_pairs
from ros2_ik.core.model.robot import Robot
from ros2_ik.core.model.robots import ARMS, data_dir, srdf_text, urdf_text
from ros2_ik.core.pose import PoseTarget
from ros2_ik.core.problem import Problem
from ros2_ik.core.result import IKStatus
from ros2_ik.core.solve import prepare, solve

THUMB, BOX = "hand_thumb_virtual_1_link", "hand_safety_box"


@pytest.fixture(scope="module")
def tiago():
    """TIAGo's arm from its URDF alone (no SRDF), its checker, a reachable target."""
    spec = ARMS["tiago"]
    urdf = urdf_text("tiago")
    robot = Robot.from_urdf(urdf)
    group = robot.group(base=spec.base, tip=spec.tip)
    prepare(group, group.tip, constrained=True)
    checker = CollisionChecker.from_urdf(robot.model, urdf, None)
    q = group.mid_configuration()
    return robot, group, checker, PoseTarget(group.tip, group.fk(q, group.tip))


def _pair_distance(checker, group, q, names) -> float:
    pairs = checker.distances(group.to_full_q(q))
    k = pairs.compiled.pair_names.index(names)
    return float(pairs.distances_m[k])


def test_a_pair_no_group_joint_moves_apart_is_answered_at_once(tiago):
    robot, group, checker, target = tiago
    constraint = MinimumDistanceConstraint(checker, 0.0, 0.05)
    started = time.perf_counter()
    result = solve(group, target, group.mid_configuration(), "lm", 5.0, 0, 1,
                   constraints=[constraint])
    elapsed = time.perf_counter() - started
    assert result.status is IKStatus.NO_SOLUTION
    assert THUMB in result.message and BOX in result.message, result.message
    assert elapsed < 1.0  # not the 5 s budget (a loaded machine may stall): the proof
    # the claim, checked: the pair overlaps by the same depth wherever the arm is
    names = next(p for p in checker.compiled().pair_names if set(p) == {THUMB, BOX})
    rng = np.random.default_rng(0)
    lo = np.where(np.isfinite(group.lower), group.lower, -np.pi)
    hi = np.where(np.isfinite(group.upper), group.upper, np.pi)
    depths = [_pair_distance(checker, group, rng.uniform(lo, hi), names) for _ in range(8)]
    assert max(depths) < 0.0 and max(depths) - min(depths) < 1e-9


def test_rigid_pairs_are_those_no_group_joint_moves_apart(tiago):
    robot, group, checker, _ = tiago
    compiled = checker.compiled()
    rigid = set(rigid_pairs(robot.model, compiled, moving_columns(group)).tolist())
    rng = np.random.default_rng(1)
    lo = np.where(np.isfinite(group.lower), group.lower, -np.pi)
    hi = np.where(np.isfinite(group.upper), group.upper, np.pi)
    qs = [group.to_full_q(rng.uniform(lo, hi)) for _ in range(4)]
    # every pair's distance, computed at each configuration (no bound skips one)
    found = np.array([checker.distances(q).distances_m for q in qs])
    changes = found.max(axis=0) - found.min(axis=0)
    for k in range(compiled.num_pairs):
        if k in rigid:
            assert changes[k] < 1e-9, compiled.pair_names[k]
    assert len(rigid) < compiled.num_pairs  # the arm's links against the body are not
    moved = [k for k in range(compiled.num_pairs) if k not in rigid]
    assert (changes[moved] > 1e-6).mean() > 0.9


def test_a_scene_object_through_a_link_the_group_does_not_move_is_answered_at_once():
    """PR2's right arm: a ball in its head (moved by locked joints, so paired with world
    objects) holds every request back; the same ball 3 m away does not."""
    spec = ARMS["pr2_right"]
    urdf, srdf = urdf_text("pr2_right"), srdf_text("pr2_right")
    robot = Robot.from_urdf(urdf, srdf)
    group = robot.group(base=spec.base, tip=spec.tip)
    q = group.mid_configuration()
    target = PoseTarget(group.tip, group.fk(q, group.tip))
    head = group.fk(q, "head_tilt_link").translation
    for offset, blocked in ((0.0, True), (3.0, False)):
        scene = PlanningScene.for_model(robot.model)
        scene.add(SceneObject("ball", [Sphere(0.1)], T_frame_object=pose_from_xyz_quat(
            head + [0.0, 0.0, offset])))
        checker = CollisionChecker.from_urdf(robot.model, urdf, srdf, scene)
        result = solve(group, target, q, "lm", 0.3, 0, 1,
                       constraints=[MinimumDistanceConstraint(checker, 0.0, 0.05)])
        if blocked:
            assert result.status is IKStatus.NO_SOLUTION
            assert "'ball'" in result.message, result.message
            assert "wherever the group's joints are" in result.message
        else:
            assert result.success, result.message


def test_a_whole_body_groups_base_moves_every_link_against_the_world():
    """PR2 on its planar base with torso and right arm: the ball in its head is no proof
    (the base carries the head away from it); the left gripper against the laser on the
    torso is rigid (the base and the torso carry both), the right arm against the left not."""
    urdf, srdf = urdf_text("pr2_right"), srdf_text("pr2_right")
    robot = Robot.from_urdf(urdf, srdf, root_joint="planar")
    group = robot.whole_body(tip="r_wrist_roll_link", joints=[
        "torso_lift_joint", "r_shoulder_pan_joint", "r_shoulder_lift_joint",
        "r_upper_arm_roll_joint", "r_elbow_flex_joint", "r_forearm_roll_joint",
        "r_wrist_flex_joint", "r_wrist_roll_joint"])
    q = group.mid_configuration()
    head = group.fk(q, "head_tilt_link").translation
    scene = PlanningScene.for_model(robot.model)
    scene.add(SceneObject("ball", [Sphere(0.1)], T_frame_object=pose_from_xyz_quat(head)))
    checker = CollisionChecker.from_urdf(robot.model, urdf, srdf, scene)
    compiled = checker.compiled()
    rigid = {frozenset(compiled.pair_names[k])
             for k in rigid_pairs(robot.model, compiled, moving_columns(group))}
    assert not any("ball" in pair for pair in rigid)
    assert frozenset(("l_gripper_r_finger_tip_link", "laser_tilt_mount_link")) in rigid
    assert not any(a.startswith("l_") and b.startswith("r_") for a, b in map(sorted, rigid))
    constraint = MinimumDistanceConstraint(checker, 0.0, 0.05)
    assert constraint.apart_wherever(group, 1e-4) is None


def _panda_with(box_centre):
    """Panda's arm and a checker whose scene holds a 0.3 m cube at ``box_centre`` [m]."""
    urdf, srdf = urdf_text("panda"), srdf_text("panda")
    robot = Robot.from_urdf(urdf, srdf)
    spec = ARMS["panda"]
    group = robot.group(base=spec.base, tip=spec.tip)
    scene = PlanningScene.for_model(robot.model)
    scene.add(SceneObject("table", [Box((0.3, 0.3, 0.3))],
                          T_frame_object=pose_from_xyz_quat(box_centre)))
    return robot, group, CollisionChecker.from_urdf(robot.model, urdf, srdf, scene)


def test_a_hand_target_inside_a_scene_object_is_answered_at_once():
    """A grasp sampler's pose whose hand lies in the table: what the arm carries with its
    tip is placed by the target, the table by nothing; answered after the first attempt,
    naming the pair.  The claim, checked on a configuration that reaches the target
    without the clearance: that pair overlaps there by the depth the reason gives."""
    urdf = urdf_text("panda")
    robot0 = Robot.from_urdf(urdf, srdf_text("panda"))
    spec = ARMS["panda"]
    group0 = robot0.group(base=spec.base, tip=spec.tip)
    q_reach = group0.mid_configuration()
    T = group0.fk(q_reach, group0.tip)
    hand = T.translation
    robot, group, checker = _panda_with(hand)
    prepare(group, group.tip, constrained=True)
    target = PoseTarget(group.tip, T)
    constraint = MinimumDistanceConstraint(checker, 0.0, 0.05)
    started = time.perf_counter()
    result = solve(group, target, group.mid_configuration() + 0.3, "lm", 5.0, 0, 1,
                   constraints=[constraint])
    elapsed = time.perf_counter() - started
    assert result.status is IKStatus.NO_SOLUTION, result.message
    assert "'table'" in result.message and "at the target" in result.message, result.message
    assert elapsed < 1.0  # not the 5 s budget
    free = solve(group, target, group.mid_configuration(), "lm", 0.5, 0, 1)
    assert free.success
    pairs = checker.distances(group.to_full_q(free.q))
    named = [k for k, p in enumerate(pairs.compiled.pair_names)
             if "'%s' and '%s'" % p in result.message]
    assert len(named) == 1
    depth = float(result.message.split(" m apart with frame")[0].rsplit(" ", 1)[1])
    assert pairs.distances_m[named[0]] < 0.0
    assert abs(pairs.distances_m[named[0]] - depth) < 2e-3  # the pose tolerances, rounding


def test_no_proof_where_the_hand_at_the_target_is_clear():
    """The same target with the cube 0.5 m below the hand: solved.  A free axis, or a
    tolerance as wide as the overlap, leaves the hand's placement open: no proof."""
    robot, group, checker = _panda_with([0.0, 0.0, -0.2])
    q = group.mid_configuration()
    T = group.fk(q, group.tip)
    far = MinimumDistanceConstraint(checker, 0.0, 0.05)
    result = solve(group, PoseTarget(group.tip, T), q + 0.2, "lm", 0.5, 0, 1,
                   constraints=[far])
    assert result.success, result.message
    robot, group, checker = _panda_with(T.translation)
    inside = MinimumDistanceConstraint(checker, 0.0, 0.05)
    assert inside.apart_at_target(group, PoseTarget(group.tip, T).compile(group), 1e-4)
    free_yaw = PoseTarget(group.tip, T, weights=(1, 1, 1, 1, 1, 0)).compile(group)
    assert inside.apart_at_target(group, free_yaw, 1e-4) is None
    loose = PoseTarget(group.tip, T, position_tolerance_m=0.5).compile(group)
    assert inside.apart_at_target(group, loose, 1e-4) is None


@pytest.mark.parametrize("arm", ["panda", "pr2_right", "g1_left", "baxter_left"])
def test_never_proven_where_a_collision_free_configuration_reaches(arm):
    """Targets from random configurations that keep 1 mm of clearance (self-collision,
    and a box beside the robot): the proof never fires."""
    spec = ARMS[arm]
    urdf, srdf = urdf_text(arm), srdf_text(arm)
    robot = Robot.from_urdf(urdf, srdf)
    group = robot.group(base=spec.base, tip=spec.tip)
    q0 = group.mid_configuration()
    scene = PlanningScene.for_model(robot.model)
    scene.add(SceneObject("box", [Box((0.2, 0.2, 0.2))], T_frame_object=pose_from_xyz_quat(
        group.fk(q0, group.tip).translation + [0.0, 0.0, 0.25])))
    checker = CollisionChecker.from_urdf(robot.model, urdf, srdf, scene)
    constraint = MinimumDistanceConstraint(checker, 0.0, 0.05)
    rng = np.random.default_rng(3)
    lo = np.where(np.isfinite(group.lower), group.lower, -np.pi)
    hi = np.where(np.isfinite(group.upper), group.upper, np.pi)
    tried = 0
    while tried < 25:
        q = rng.uniform(lo, hi)
        if checker.min_distance(group.to_full_q(q)).distance_m < 1e-3:
            continue
        tried += 1
        pose = PoseTarget(group.tip, group.fk(q, group.tip)).compile(group)
        assert constraint.apart_at_target(group, pose, 1e-4) is None, q


def test_a_contact_inside_a_scene_object_is_answered_at_once():
    """TALOS on a free-flyer, its left sole's contact where a step already is: what the
    foot carries is placed by the contact; the step, by nothing.  The depth the reason
    gives is the pair's distance at a configuration meeting the contact; the step 0.2 m
    lower leaves no proof."""
    urdf = (data_dir() / "talos_data/robots/talos_reduced.urdf").read_text()
    srdf = (data_dir() / "talos_data/srdf/talos.srdf").read_text()
    robot = Robot.from_urdf(urdf, srdf, root_joint="floating")
    group = robot.whole_body(tip="gripper_left_joint")
    q = group.mid_configuration()
    T = group.fk(q, "left_sole_link")
    for top, blocked in ((0.03, True), (-0.2, False)):
        scene = PlanningScene.for_model(robot.model)
        scene.add(SceneObject("step", [Box((0.4, 0.4, 0.2))], T_frame_object=pose_from_xyz_quat(
            T.translation + [0.0, 0.0, top - 0.1])))
        checker = CollisionChecker.from_urdf(robot.model, urdf, srdf, scene)
        contact = FramePlacementConstraint(robot.model, "left_sole_link", T)
        clearance = MinimumDistanceConstraint(checker, 0.0, 0.05)
        result = solve(group, Problem(group, None, [contact, clearance]), q, "lm", 0.3, 0, 1)
        if not blocked:
            assert "apart with" not in result.message, result.message
            continue
        assert result.status is IKStatus.NO_SOLUTION
        assert "'step'" in result.message and "at contact(left_sole_link)" in result.message
        pairs = checker.distances(group.to_full_q(q))  # q meets the contact exactly
        k = next(k for k, p in enumerate(pairs.compiled.pair_names)
                 if "'%s' and '%s'" % p in result.message)
        depth = float(result.message.split(" m apart with")[0].rsplit(" ", 1)[1])
        assert abs(pairs.distances_m[k] - depth) < 1e-4


def test_a_scene_changed_again_and_again_keeps_one_scene_in_the_caches():
    """A node's scene changes every second (perception moves an object): the proofs'
    caches keep the current scene's entries only, and answer on the current scene."""
    from ros2_ik.core.constraints.collision import _APART, _CARRIED
    robot, group, checker = _panda_with([0.0, 0.0, -0.2])
    constraint = MinimumDistanceConstraint(checker, 0.0, 0.05)
    T = group.fk(group.mid_configuration(), group.tip)
    pose = PoseTarget(group.tip, T).compile(group)
    scene = checker.scene
    for k in range(6):
        inside = k % 2 == 1
        scene.move("table", pose_from_xyz_quat(T.translation if inside else [0.0, 0.0, -0.2]))
        assert bool(constraint.apart_at_target(group, pose, 1e-4)) is inside
        assert constraint.apart_wherever(group, 1e-4) is None
        for cache in (_APART, _CARRIED):
            assert cache.get(group)[0] is checker.compiled()
