"""Scene versions compiled from the checker's robot part, and requests set where they are used.

A perception that moves an object makes a scene version each time; the checker compiles
each one from the robot's part, built once (``compiled.RobotPart``), and sets a pair's
distance request (``coal_calls.configure_requests``) before the pair's first use in a
thread.  Checked against independent computations: a checker built anew on the same scene
(tables to the bit; distances within 1e-9 m: coal warm-starts each pair's support function
from that pair's previous call, so a thread's history moves the last digits:
``coal_calls.configure_requests``), the bound tables by the per-pair rule written out here,
and coal's requests themselves.
"""
import gc
import threading

import numpy as np
import pinocchio as pin
import pytest

from ros2_ik.core import robots
from ros2_ik.core.collision import (Box, CollisionChecker, PlanningScene, SceneObject, Sphere,
                                    pose_from_xyz_quat)
from ros2_ik.core.collision.bounds import build_bound_tables
from ros2_ik.core.collision.coal_calls import _GJK_TOLERANCE, configure_requests

ROBOTS = ("panda", "pr2_right")


def _checker(name, objects_at=None):
    """Return the robot, its group, a checker and its scene (with ``_objects`` at y)."""
    robot, group = robots.load_group(name)
    scene = PlanningScene.for_model(robot.model)
    if objects_at is not None:
        scene.add_all(_objects(group, objects_at))
    checker = CollisionChecker.from_urdf(robot.model, robots.urdf_text(name),
                                         robots.srdf_text(name), scene)
    return robot, group, checker, scene


def _objects(group, y):
    """A world box at height-y ``y`` [m] and a ball attached to the group's tip."""
    return [SceneObject("box", [Box((0.1, 0.2, 0.1))],
                        T_frame_object=pose_from_xyz_quat((0.5, y, 0.3))),
            SceneObject("ball", [Sphere(0.04)], frame_id=group.tip, attached=True)]


def _same_distances(a, b):
    """Equal pair distances [m]: the same pairs computed (inf alike), within 1e-9 m."""
    assert np.array_equal(np.isinf(a), np.isinf(b))
    assert np.allclose(a, b, rtol=0.0, atol=1e-9)


def _reference_bounds(geom_model, pairs):
    """The bound tables' per-pair rule (bounds.py's docstring), one pair at a time.

    A pair with exactly one side fixed in the world bounds the moving side's ball against
    the fixed side's box (fixed boxes in index order, ``order = W_index * G + a``); every
    other pair is ball against ball (``order = W * G + n``, n its rank among them).
    """
    geoms = geom_model.geometryObjects
    G = len(geoms)
    moving = [g.parentJoint != 0 for g in geoms]
    radius = [float(np.linalg.norm((np.array(g.geometry.aabb_local.max_)
                                    - np.array(g.geometry.aabb_local.min_)) / 2.0))
              for g in geoms]
    kinds = []
    for i, j in pairs:
        if moving[i] != moving[j]:
            a, b = (i, j) if moving[i] else (j, i)
            kinds.append(("box", a, b))
        else:
            kinds.append(("ball", i, j))
    fixed = sorted({b for kind, _, b in kinds if kind == "box"})
    order, rad, n = [], [], 0
    for kind, a, b in kinds:
        if kind == "box":
            order.append(fixed.index(b) * G + a)
            rad.append(radius[a])
        else:
            order.append(len(fixed) * G + n)
            rad.append(radius[a] + radius[b])
            n += 1
    return np.array(order), np.array(rad), n


@pytest.mark.parametrize("name", ROBOTS)
def test_bound_tables_follow_the_per_pair_rule(name):
    robot, group, checker, scene = _checker(name, 0.2)
    compiled = checker.compiled()
    pairs = list(zip(compiled.pair_a.tolist(), compiled.pair_b.tolist()))
    tables = build_bound_tables(compiled.geom_model, pairs)
    order, radius, balls = _reference_bounds(compiled.geom_model, pairs)
    assert np.array_equal(tables.order, order)
    assert np.allclose(tables.radius, radius, rtol=0, atol=1e-15)
    assert tables.ball_diff.shape[1] == balls
    assert set(np.unique(tables.ball_diff)) <= {-1.0, 0.0, 1.0}
    assert 0 < balls < len(pairs)  # both kinds present: the test reads both branches


@pytest.mark.parametrize("name", ROBOTS)
def test_a_moved_object_compiles_as_a_checker_built_on_that_scene(name):
    """Versions made from the robot part equal a fresh checker's, tables and distances."""
    robot, group, checker, scene = _checker(name)
    rng = np.random.default_rng(3)
    for y in (0.2, 0.05, -0.1):  # three versions of one checker
        scene.add_all(_objects(group, y))
        compiled = checker.compiled()
        _, _, fresh_checker, fresh_scene = _checker(name, y)
        fresh = fresh_checker.compiled()
        assert compiled.pair_names == fresh.pair_names
        assert compiled.geometry_names == fresh.geometry_names
        for field in ("padding_m", "pad_a_m", "joint_a", "joint_b", "pair_a", "pair_b",
                      "geometry_padding_m", "geometry_joint"):
            assert np.array_equal(getattr(compiled, field), getattr(fresh, field)), field
        for field in ("center_joint", "gather", "box_rows", "box_half", "ball_diff",
                      "order", "radius"):
            assert np.array_equal(getattr(compiled.bounds, field),
                                  getattr(fresh.bounds, field)), field
        for _ in range(5):
            q = group.to_full_q(group.random_configuration(rng))
            _same_distances(checker.distances(q).distances_m,
                            fresh_checker.distances(q).distances_m)


def test_requests_are_set_before_their_first_use_only():
    """A computed pair's request has the tight GJK tolerance and no warm start; a pair never
    computed keeps coal's defaults; the distances equal those of every request set."""
    robot, group, checker, _ = _checker("panda", 0.1)
    q = group.to_full_q(group.mid_configuration())
    pairs = checker.distances(q, threshold_m=0.05)
    computed = np.flatnonzero(np.isfinite(pairs.distances_m))
    assert 0 < len(computed) < pairs.compiled.num_pairs
    requests = pairs.geom_data.distanceRequests
    done = set(computed.tolist())
    for k in range(pairs.compiled.num_pairs):
        tight = requests[k].gjk_tolerance == _GJK_TOLERANCE
        assert tight == (k in done), k
    every = pin.GeometryData(pairs.compiled.geom_model)
    configure_requests(every, range(pairs.compiled.num_pairs))
    pin.updateGeometryPlacements(robot.model, checker._own_data(), pairs.compiled.geom_model,
                                 every)
    for k in computed.tolist():
        d = pin.computeDistance(pairs.compiled.geom_model, every, k).min_distance
        assert d - pairs.compiled.padding_m[k] == pairs.distances_m[k]


def test_each_thread_sets_its_own_requests():
    """A second thread's data is set as it computes, with the same distances to the bit."""
    robot, group, checker, _ = _checker("panda", 0.1)
    q = group.to_full_q(group.mid_configuration())
    here = checker.distances(q).distances_m
    there = []
    worker = threading.Thread(target=lambda: there.append(checker.distances(q).distances_m))
    worker.start()
    worker.join()
    assert np.array_equal(here, there[0])


def test_a_thread_keeps_its_geometry_data_while_objects_only_move():
    """Moves keep the thread's GeometryData; a new or reshaped object or another frame builds
    it again; every version's distances equal a fresh checker's on that scene (1e-9 m),
    with the version the data was built on no longer the checker's (collected)."""
    robot, group, checker, scene = _checker("panda", 0.2)
    rng = np.random.default_rng(5)
    qs = [group.to_full_q(group.random_configuration(rng)) for _ in range(4)]
    first = checker.distances(qs[0]).geom_data
    kept = []

    def same_as_fresh():
        objects = [scene.snapshot().objects[name] for name in scene.names()]
        fresh = CollisionChecker.from_urdf(robot.model, robots.urdf_text("panda"),
                                           robots.srdf_text("panda"), PlanningScene.for_model(
                                               robot.model))
        fresh.scene.add_all(objects)
        gc.collect()  # the versions before: only the thread's data may keep one alive
        for q in qs:
            _same_distances(checker.distances(q).distances_m, fresh.distances(q).distances_m)
        kept.append(checker.distances(qs[0]).geom_data is first)

    for y in (0.1, 0.0, -0.15):  # the box moves: perception
        scene.move("box", pose_from_xyz_quat((0.45, y, 0.25)))
        same_as_fresh()
    scene.add_all([SceneObject("box", [Box((0.1, 0.2, 0.1))],  # the same shape, by value
                               T_frame_object=pose_from_xyz_quat((0.5, 0.1, 0.3)))])
    same_as_fresh()
    scene.move("ball", pose_from_xyz_quat((0.0, 0.0, 0.05)))  # the attached ball slides
    same_as_fresh()
    assert kept == [True] * 5
    scene.move("ball", pose_from_xyz_quat((0.0, 0.0, 0.0)), "panda_link5")  # another link
    same_as_fresh()
    first = checker.distances(qs[0]).geom_data
    scene.add_all([SceneObject("box", [Box((0.1, 0.2, 0.2))],  # reshaped
                               T_frame_object=pose_from_xyz_quat((0.5, 0.1, 0.3)))])
    same_as_fresh()
    scene.add(SceneObject("post", [Sphere(0.05)],
                          T_frame_object=pose_from_xyz_quat((0.3, -0.3, 0.4))))
    same_as_fresh()
    assert kept[5:] == [False, False, False]


def _edit(scene, obj, op, shape, place, link, rng):
    """Edit ``obj`` in ``scene`` by ``op`` (``shape()``, ``place()``: random ones)."""
    if op == "move":
        scene.move(obj.name, pose_from_xyz_quat((0.0, 0.0, rng.uniform(0.0, 0.1)))
                   if obj.attached else place())
    elif op == "readd":  # a perception's ADD of the same object: new, equal shapes
        scene.add(SceneObject(obj.name, [type(s.shape)(*s.shape.__dict__.values())
                                         for s in obj.shapes], obj.frame_id,
                              obj.T_frame_object if obj.attached else place(), obj.attached))
    elif op == "reshape":
        scene.add(SceneObject(obj.name, [shape()], obj.frame_id, obj.T_frame_object,
                              obj.attached))
    elif op == "remove":
        scene.remove(obj.name)
    else:  # attach to a link of the group (a new frame)
        scene.add(SceneObject(obj.name, [s.shape for s in obj.shapes], link, attached=True))


@pytest.mark.parametrize("name, steps", [("panda", 30), ("pr2_right", 15)])
def test_random_scene_edits_answer_as_a_fresh_checker(name, steps):
    """Moves, same-shaped re-adds, reshapes, new, removed, attached and re-framed objects in
    a random order: each version's distances, in this thread (its data kept across moves)
    and in a new one, equal a checker built on that scene's objects."""
    robot, group, checker, scene = _checker(name)
    rng = np.random.default_rng(13)
    links = [f.name for f in robot.model.frames
             if f.parentJoint in group.joint_ids and f.type == pin.FrameType.BODY]
    qs = [group.to_full_q(group.random_configuration(rng)) for _ in range(2)]

    def shape():
        return [Box(tuple(rng.uniform(0.02, 0.2, 3))), Sphere(float(rng.uniform(0.02, 0.1)))][
            int(rng.integers(2))]

    def place():
        return pose_from_xyz_quat(tuple(rng.uniform(-0.6, 0.6, 2)) + (rng.uniform(0, 1.2),))
    for step in range(steps):
        names = scene.names()
        op = rng.choice(["move", "move", "readd", "reshape", "add", "remove", "attach"])
        if op == "add" or not names:
            scene.add(SceneObject(f"o{step}", [shape()], T_frame_object=place()))
        else:
            _edit(scene, scene.snapshot().objects[names[int(rng.integers(len(names)))]], op,
                  shape, place, links[int(rng.integers(len(links)))], rng)
        _, _, fresh, fresh_scene = _checker(name)
        fresh_scene.add_all(list(scene.snapshot().objects.values()))
        for q in qs:
            expected = fresh.distances(q, 0.1).distances_m
            _same_distances(checker.distances(q, 0.1).distances_m, expected)
            there = []
            worker = threading.Thread(
                target=lambda: there.append(checker.distances(q, 0.1).distances_m))
            worker.start()
            worker.join()
            assert np.allclose(there[0], expected, rtol=0.0, atol=1e-6, equal_nan=True), op
