"""The move an executed solution makes, against the collision model (core/collision/motion).

A ball is put where the hand passes halfway through a joint-linear move of the Panda, not
near either end.  The ends are clear by the checker's own distance; the move is found to
pass through it, at about half of the way.  With the ball elsewhere the move is clear.

The check is a proof (conservative advancement), not a sampling: a 1 mm ball that the
arm's outermost corner grazes between two samples 0.01 rad apart is met; no point of any
geometry moves faster than its bound (:mod:`.motion_speeds`), measured on dense samples
with pinocchio alone; a far move takes two checks; an arm starting inside its clearance
may leave, not approach; pairs that do not move relative to each other force no small
steps; a move running along its allowed distance ends within the bounded number of checks.
"""
import numpy as np
import pinocchio as pin
import pytest

from ros2_ik.core.collision import Box, CollisionChecker, PlanningScene, SceneObject
from ros2_ik.core.collision import motion
from ros2_ik.core.collision.motion import first_contact
from panda_node import arm_group, ball_checker, description

START = np.array([0.0, -0.3, 0.0, -2.2, 0.0, 2.0, 0.8])
END = START + np.array([1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0])
STRETCHED = np.array([0.0, 0.3, 0.0, -1.2, 0.0, 1.5, 0.8])
JOINT1 = np.eye(7)[0]


@pytest.fixture(scope="module")
def panda():
    return arm_group()


def _checker(panda, centre, radius=0.03):
    return ball_checker(panda[0], "ball", centre, radius)


def test_a_ball_on_the_way_is_met_and_the_ends_are_clear(panda):
    _, group = panda
    middle = group.fk((START + END) / 2, "panda_hand").translation
    checker = _checker(panda, middle)
    for q in (START, END):
        assert checker.min_distance(group.to_full_q(q)).distance_m > 0.02
    contact = first_contact(checker, group, START, END, 0.0)
    assert contact is not None and "ball" in contact.report.pair
    assert 0.2 < contact.fraction < 0.8 and contact.report.distance_m < 0.0
    back = first_contact(checker, group, END, START, 0.0)
    assert back is not None and 0.2 < back.fraction < 0.8


def test_a_move_away_from_the_ball_is_clear(panda):
    _, group = panda
    far = group.fk(START - (END - START), "panda_hand").translation
    checker = _checker(panda, far)
    assert first_contact(checker, group, START, END, 0.0) is None
    # A clearance the start already lacks: the move may keep it, not lose more.
    start = checker.min_distance(group.to_full_q(START)).distance_m
    assert first_contact(checker, group, START, END, start + 0.5) is None


def test_no_move_is_clear(panda):
    _, group = panda
    checker = _checker(panda, [2.0, 0.0, 0.0])
    assert first_contact(checker, group, START, START, 0.0) is None


# ------------------------------------------------------------------ geometry, by pinocchio
def _corners(geometry) -> np.ndarray:
    """The 8 corners (8, 3) of a geometry's local AABB, in its own frame [m]."""
    box = geometry.aabb_local
    low, high = np.array(box.min_), np.array(box.max_)
    return np.array([[x, y, z] for x in (low[0], high[0]) for y in (low[1], high[1])
                     for z in (low[2], high[2])])


def _vertices(geometry) -> np.ndarray:
    """Points (k, 3) of a geometry itself in its own frame: a hull's vertices, a box's corners."""
    return np.array(geometry.points()) if hasattr(geometry, "points") else _corners(geometry)


def _local_points(geometry) -> np.ndarray:
    """Its vertices, then its AABB's corners (the bound's reach: the AABB's ball)."""
    return np.vstack((_vertices(geometry), _corners(geometry)))


def _ball_distance(checker, group, q) -> float:
    """The signed distance [m] from the arm to the scene's ball at ``q``."""
    pairs = checker.distances(group.to_full_q(q))
    return min(d for d, names in zip(pairs.distances_m, pairs.compiled.pair_names)
               if "ball" in names)


def _world_points(model, geom_model, q_fulls, locals_):
    """Per configuration (T,), each geometry's points in the world: list of (T, k, 3)."""
    data, geom_data = model.createData(), pin.GeometryData(geom_model)
    out = [np.empty((len(q_fulls), len(p), 3)) for p in locals_]
    for i, q in enumerate(q_fulls):
        pin.forwardKinematics(model, data, q)
        pin.updateGeometryPlacements(model, data, geom_model, geom_data)
        for g, points in enumerate(locals_):
            placement = geom_data.oMg[g]
            out[g][i] = points @ placement.rotation.T + placement.translation
    return out


def _outermost_point(checker, group, q) -> np.ndarray:
    """The robot's geometry point (3,) farthest from joint 1's axis (the world z axis) at q."""
    geoms = checker.robot_geom
    locals_ = [_vertices(g.geometry) for g in geoms.geometryObjects]
    points = np.vstack([p[0] for p in _world_points(checker.model, geoms,
                                                    [group.to_full_q(q)], locals_)])
    return points[np.argmax(np.hypot(points[:, 0], points[:, 1]))]


def _grazing_ball(panda, q, gap_m, radius=1e-3):
    """A ball ``gap_m`` (< 0: into it) outside the arm's outermost point at ``q``, level."""
    robot, group = panda
    v = _outermost_point(_checker(panda, [2.0, 0.0, 0.0]), group, q)
    outward = np.array([v[0], v[1], 0.0]) / np.hypot(v[0], v[1])
    return _checker(panda, v + (radius + gap_m) * outward, radius)


def test_a_small_ball_passed_between_two_samples_is_met(panda):
    """Sampling every 0.01 rad sees this ball clear: the outermost corner passes it between."""
    _, group = panda
    end = STRETCHED + 0.5 * JOINT1
    middle = STRETCHED + 0.245 * JOINT1  # halfway between samples 24 and 25 of 50
    checker = _grazing_ball(panda, middle, -1e-4)
    assert checker.min_distance(group.to_full_q(middle)).distance_m < -5e-5
    samples = [checker.min_distance(group.to_full_q(STRETCHED + k / 50 * (end - STRETCHED)))
               for k in range(51)]
    assert min(s.distance_m for s in samples) > 1e-4
    contact = first_contact(checker, group, STRETCHED, end, 0.0)
    assert contact is not None and "ball" in contact.report.pair
    assert abs(contact.fraction - 0.49) < 0.02 and contact.report.distance_m < 0.0


def _speed_checker(robot):
    """The Panda with 1 cm padding, a box held in the hand and a box on the floor."""
    urdf, srdf, _ = description()
    scene = PlanningScene([f.name for f in robot.model.frames])
    scene.add(SceneObject("held", [Box((0.04, 0.04, 0.2))], "panda_hand",
                          pin.SE3(np.eye(3), np.array([0.0, 0.0, 0.15])).homogeneous,
                          attached=True))
    scene.add(SceneObject("crate", [Box((0.3, 0.3, 0.3))], "panda_link0",
                          pin.SE3(np.eye(3), np.array([0.5, 0.0, 0.15])).homogeneous))
    return CollisionChecker.from_urdf(robot.model, urdf, srdf, scene, padding_m=0.01)


@pytest.mark.parametrize("tip", ["panda_hand", "panda_leftfinger"])
def test_no_point_moves_faster_than_its_bound(panda, tip):
    """Dense samples of random moves: every point's and pair's speed is within the bound.

    The finger's group moves a prismatic joint and its mimic (coupled) twin.
    """
    from ros2_ik.core.collision.motion_speeds import motion_speeds

    robot = panda[0]
    group = robot.group(base="panda_link0", tip=tip)
    checker = _speed_checker(robot)
    model, compiled = checker.model, checker.compiled()
    geoms = compiled.geom_model.geometryObjects
    locals_ = [_local_points(g.geometry) for g in geoms]
    ts = np.linspace(0.0, 1.0, 2001)
    rng = np.random.default_rng(7)
    for _ in range(3):
        q_from, q_to = group.random_configuration(rng), group.random_configuration(rng)
        data = model.createData()
        pin.forwardKinematics(model, data, group.to_full_q(q_from))
        speeds = motion_speeds(model, data, compiled, group, q_from, q_to)
        fulls = [group.to_full_q(q_from + t * (q_to - q_from)) for t in ts]
        points = _world_points(model, compiled.geom_model, fulls, locals_)
        for g, p in enumerate(points):
            moved = np.linalg.norm(np.diff(p, axis=0), axis=2).max() / ts[1]
            assert moved <= speeds.geometry_m[g] * (1 + 1e-9) + 1e-12, geoms[g].name
        for k, (a, b) in enumerate(zip(compiled.pair_a, compiled.pair_b)):
            corners_a, corners_b = points[a][:, -8:], points[b][:, -8:]
            apart = np.linalg.norm(corners_a[:, :, None] - corners_b[:, None], axis=3)
            assert np.abs(np.diff(apart, axis=0)).max() / ts[1] <= speeds.pair_m[k] + 1e-9
        # and the pairs' own distances, as the checker computes them
        distances = np.array([checker.distances(q).distances_m for q in fulls[::10]])
        rate = np.abs(np.diff(distances, axis=0)).max(axis=0) / ts[10]
        assert np.all(rate <= speeds.pair_m + 1e-5)
        assert np.max(rate / np.maximum(speeds.pair_m, 1e-9)) > 0.2  # and the bound is useful


def test_a_far_move_takes_a_few_checks(panda):
    _, group = panda
    checker = _checker(panda, [2.0, 0.0, 0.0])
    result = motion.sweep(checker, group, START, END, 0.01)
    assert result.contact is None and result.evaluations <= 5  # 101 samples before


def test_an_arm_starting_inside_its_clearance_may_leave_not_approach(panda):
    """2 mm from a ball with 1 cm required: turning away is clear, reaching out is not."""
    _, group = panda
    checker = _grazing_ball(panda, STRETCHED, 0.002)
    away = motion.sweep(checker, group, STRETCHED, STRETCHED + 0.5 * JOINT1, 0.01)
    assert away.contact is None and away.evaluations < 100
    reach = STRETCHED + np.array([0.0, 0.2, 0.0, 0.3, 0.0, 0.0, 0.0])
    closer = motion.sweep(checker, group, STRETCHED, reach, 0.01)
    assert closer.contact is not None and closer.contact.fraction < 0.1
    assert closer.contact.report.distance_m < 0.002 - motion.SLACK


def test_a_still_pair_inside_the_clearance_forces_no_small_steps(panda):
    """A box 1 mm behind links 1-4 while only the wrist turns: those pairs cannot change."""
    robot, group = panda
    links = ("panda_link1", "panda_link2", "panda_link3", "panda_link4")
    back = _link_point(robot, group, links, START, np.array([-1.0, 0.0, 0.0]))
    urdf, srdf, _ = description()
    scene = PlanningScene([f.name for f in robot.model.frames])
    scene.add(SceneObject("box", [Box((0.02, 0.02, 0.02))], "panda_link0",
                          pin.SE3(np.eye(3), back + np.array([-0.011, 0.0, 0.0])).homogeneous))
    checker = CollisionChecker.from_urdf(robot.model, urdf, srdf, scene)
    start = checker.min_distance(group.to_full_q(START))
    assert "box" in start.pair and 0.0 < start.distance_m < 0.002
    wrist = START + np.array([0.0, 0.0, 0.0, 0.0, 0.5, 0.5, 0.5])
    result = motion.sweep(checker, group, START, wrist, 0.01)
    assert result.contact is None and result.evaluations <= 6


def _link_point(robot, group, links, q, direction) -> np.ndarray:
    """The point (3,) of ``links``' geometries farthest along ``direction`` at ``q``."""
    geoms = _checker((robot, group), [2.0, 0.0, 0.0]).robot_geom
    locals_ = [_vertices(g.geometry) if g.name.startswith(links) else np.zeros((0, 3))
               for g in geoms.geometryObjects]
    points = np.vstack([p[0] for p in _world_points(robot.model, geoms,
                                                    [group.to_full_q(q)], locals_)])
    return points[np.argmax(points @ direction)]


def test_a_move_along_its_allowed_distance_ends(panda):
    """Grazing: the distance touches ``allowed`` (a tangent), or stays at it all the way."""
    robot, group = panda
    end = STRETCHED + 0.5 * JOINT1
    checker = _grazing_ball(panda, STRETCHED + 0.245 * JOINT1, 0.003)
    data = robot.model.createData()
    pin.forwardKinematics(robot.model, data, group.to_full_q(STRETCHED))
    from ros2_ik.core.collision.motion_speeds import motion_speeds
    fastest = motion_speeds(robot.model, data, checker.compiled(), group, STRETCHED,
                            end).pair_m.max()
    most = 2 + int(np.ceil(fastest / motion.TOLERANCE_M))
    tangent = motion.sweep(checker, group, STRETCHED, end, 0.003)  # d(t) >= 3 mm, = at 0.49
    assert tangent.contact is None and tangent.evaluations <= most
    # A ball on joint 1's axis: turning about it keeps every distance, 2 mm inside 1 cm.
    above = group.fk(STRETCHED, "panda_hand").translation
    gap = _ball_distance(_checker(panda, [0.0, 0.0, above[2] + 0.3], 0.01), group, STRETCHED)
    checker = _checker(panda, [0.0, 0.0, above[2] + 0.3], 0.01 + gap - 0.002)
    along = motion.sweep(checker, group, STRETCHED, end, 0.01)
    assert along.contact is None and 10 < along.evaluations <= most
    capped = motion.sweep(checker, group, STRETCHED, end, 0.01, max_evaluations=5)
    assert capped.contact is not None and capped.evaluations == 5  # refused, not waited on
    assert capped.contact.fraction < 1.0 and capped.contact.unproven
    grazed = _grazing_ball(panda, STRETCHED + 0.245 * JOINT1, 0.003)
    contact = motion.sweep(grazed, group, STRETCHED, end, 0.006).contact  # 3 mm < 6 mm
    assert contact is not None and not contact.unproven
