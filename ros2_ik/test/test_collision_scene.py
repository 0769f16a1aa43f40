"""Planning scene: add / move / remove / clear, versions, frames, YAML files."""
import os
import shutil

import numpy as np
import pinocchio as pin
import pytest

from ros2_ik.core.collision import (
    Box,
    CollisionChecker,
    Mesh,
    MeshResolver,
    PathNotAllowed,
    PlanningScene,
    SceneObject,
    Sphere,
    load_scene_yaml,
    parse_scene,
    pose_from_xyz_quat,
)
from ros2_ik.core.errors import InvalidArgument, InvalidFrame
from test_collision_distances import PANDA_READY, TINY_URDF, pair_distance, panda_files

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLE_SCENE = os.path.join(HERE, "..", "config", "scene_example.yaml")
BENCH_SCENE = os.path.join(HERE, "..", "..", "bench", "panda_scene.yaml")


def tiny():
    model = pin.buildModelFromXML(TINY_URDF)
    scene = PlanningScene(valid_frames=[f.name for f in model.frames])
    return model, scene, CollisionChecker.from_urdf(model, TINY_URDF, scene=scene)


def ball(name="ball", xyz=(0.0, 0.0, 1.0), radius=0.1):
    return SceneObject(name, [Sphere(radius)], T_frame_object=pose_from_xyz_quat(xyz))


def object_names(checker):
    return {name for pair in checker.compiled().pair_names for name in pair}


def test_add_move_remove_clear_bump_version_and_reach_the_checker():
    _, scene, checker = tiny()
    q = np.zeros(3)
    versions = [scene.version]
    scene.add(ball())
    versions.append(scene.version)
    far = checker.min_distance(q).distance_m
    scene.move("ball", pose_from_xyz_quat([0.9, 0.0, 0.0]))
    versions.append(scene.version)
    near = checker.min_distance(q)
    assert near.distance_m < far and "ball" in near.pair
    scene.add_all([ball("a", (2, 0, 0)), ball("b", (-2, 0, 0))])
    versions.append(scene.version)
    assert {"ball", "a", "b"} <= object_names(checker)
    scene.remove("ball")
    versions.append(scene.version)
    assert "ball" not in object_names(checker) and scene.names() == ("a", "b")
    scene.clear()
    versions.append(scene.version)
    assert scene.names() == () and not {"a", "b"} & object_names(checker)
    assert versions == sorted(set(versions))  # strictly increasing


def test_snapshot_is_immutable_and_consistent():
    _, scene, _ = tiny()
    scene.add(ball())
    snapshot = scene.snapshot()
    scene.remove("ball")
    assert "ball" in snapshot.objects and snapshot.version < scene.version
    with pytest.raises(TypeError):
        snapshot.objects["x"] = ball()
    with pytest.raises(ValueError):
        snapshot.objects["ball"].T_frame_object[0, 3] = 5.0


def test_unknown_names_and_frames_are_rejected_with_choices():
    _, scene, _ = tiny()
    with pytest.raises(InvalidArgument, match="present"):
        scene.remove("nothing")
    with pytest.raises(InvalidFrame, match="tip"):
        scene.add(SceneObject("x", [Sphere(0.1)], frame_id="no_such_link"))
    with pytest.raises(InvalidArgument, match="attach"):
        SceneObject("x", [Sphere(0.1)], attached=True)


def test_scene_for_model_refuses_world_objects_in_moving_frames_at_add():
    model = pin.buildModelFromXML(TINY_URDF)
    scene = PlanningScene.for_model(model)
    with pytest.raises(InvalidArgument, match="attach"):
        scene.add(SceneObject("x", [Sphere(0.1)], frame_id="l1"))
    with pytest.raises(InvalidFrame):
        scene.add(SceneObject("x", [Sphere(0.1)], frame_id="nowhere"))
    scene.add(SceneObject("x", [Sphere(0.1)], frame_id="base"))
    scene.add(SceneObject("y", [Sphere(0.1)], frame_id="l1", attached=True))
    assert scene.names() == ("x", "y")


def test_world_object_in_moving_frame_is_refused_but_fixed_frame_is_used():
    _, scene, checker = tiny()
    scene.add(SceneObject("x", [Sphere(0.1)], frame_id="l1"))
    with pytest.raises(InvalidArgument, match="attach"):
        checker.min_distance(np.zeros(3))
    scene.clear()
    scene.add(SceneObject("x", [Sphere(0.1)], frame_id="base",
                          T_frame_object=pose_from_xyz_quat([0.25, 0.0, 1.0])))
    distance, _, _ = pair_distance(checker, np.zeros(3), ("l1", "x"))
    assert distance == pytest.approx(1.0 - 0.1 - 0.02)  # l1 is a 4 cm thick box at z = 0


@pytest.mark.parametrize("bad, match", [
    (dict(radius=-1.0), "positive"),
    (dict(radius=float("nan")), "positive"),
    (dict(radius=1e300), "up to 10000 m"),  # coal's EPA gave wrong depths on such sizes
])
def test_shape_validation(bad, match):
    with pytest.raises(InvalidArgument, match=match):
        Sphere(bad["radius"])


def test_mesh_validation_and_read_only_arrays():
    with pytest.raises(InvalidArgument, match="indices"):
        Mesh([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], [[0, 1, 7]])
    mesh = Mesh([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], [[0, 1, 2]])
    with pytest.raises(ValueError):
        mesh.vertices_m[0, 0] = 3.0


def test_example_and_bench_scene_files_load_and_leave_ready_free():
    urdf, srdf = panda_files()
    model = pin.buildModelFromXML(urdf)
    for path, expected in ((EXAMPLE_SCENE, {"table", "bottle", "wedge", "gripped_part"}),
                           (BENCH_SCENE, {"table", "wall", "shelf", "box_tall", "box_low"})):
        scene = PlanningScene(valid_frames=[f.name for f in model.frames])
        scene.add_all(load_scene_yaml(path))
        assert expected <= set(scene.names())
        checker = CollisionChecker.from_urdf(model, urdf, srdf, scene)
        assert not checker.in_collision(PANDA_READY, margin_m=0.02)


def test_yaml_poses_shapes_and_attachment():
    objects = parse_scene("""
ros2_ik_scene: 1
objects:
  - name: a
    pose: {position: [1, 2, 3], rpy: [0, 0, 1.5707963267948966]}
    shapes:
      - {type: box, size: [0.1, 0.2, 0.3], pose: {position: [0, 0, 1]}}
      - {type: cylinder, radius: 0.1, length: 0.5}
  - name: held
    frame_id: tip
    attached: true
    touch_links: [l2]
    shapes: [{type: sphere, radius: 0.02}]
""")
    a, held = objects
    np.testing.assert_allclose(a.T_frame_object[:3, 3], [1, 2, 3])
    np.testing.assert_allclose(a.T_frame_object[:3, 0], [0, 1, 0], atol=1e-12)
    assert a.shapes[0].shape == Box((0.1, 0.2, 0.3))
    assert a.shapes[0].T_object_shape[2, 3] == 1.0
    assert held.attached and held.frame_id == "tip" and held.touch_links == ("l2",)


@pytest.mark.parametrize("text, match", [
    ("objects: []", "ros2_ik_scene"),
    ("ros2_ik_scene: 1\nobjects: [{name: a, shapes: [{type: cone, radius: 1}]}]", "cone"),
    ("ros2_ik_scene: 1\nobjects: [{name: a, colour: red, shapes: []}]", "colour"),
    ("ros2_ik_scene: 1\nobjects: [{name: a, shapes: [{type: box, sise: [1, 1, 1]}]}]", "sise"),
    ("ros2_ik_scene: 1\nobjects: [{name: a, shapes: [{type: box}]}]", "size"),
    ("ros2_ik_scene: 1\nobjects: [{name: a, shapes: [{type: sphere, radius: 1}]},"
     " {name: a, shapes: [{type: sphere, radius: 1}]}]", "duplicate"),
    ("ros2_ik_scene: 1\nobjects: [{name: a, pose: {position: [0, 0, 0], rpy: [0, 0, 0],"
     " orientation: [0, 0, 0, 1]}, shapes: [{type: sphere, radius: 1}]}]", "either"),
    ("ros2_ik_scene: [", "YAML"),
])
def test_yaml_errors_name_the_problem(text, match):
    with pytest.raises(InvalidArgument, match=match):
        parse_scene(text)


def test_yaml_mesh_file_only_under_allowed_dirs(tmp_path):
    try:
        stl = MeshResolver().resolve(
            "package://example-robot-data/robots/panda_description/meshes/collision/hand.stl")
    except Exception:
        pytest.skip("example-robot-data is not installed")
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    shutil.copy(stl, allowed / "hand.stl")
    scene_file = tmp_path / "scene.yaml"
    scene_file.write_text("ros2_ik_scene: 1\nobjects:\n  - name: hand\n    shapes:\n"
                          "      - {type: mesh, file: allowed/hand.stl}\n")
    objects = load_scene_yaml(str(scene_file), allowed_dirs=[str(allowed)])
    assert len(objects[0].shapes[0].shape.vertices_m) > 4
    with pytest.raises(PathNotAllowed):
        load_scene_yaml(str(scene_file), allowed_dirs=[])
    # never opened: a missing file outside the allowed dirs is refused by the gate first
    with pytest.raises(PathNotAllowed):
        parse_scene("ros2_ik_scene: 1\nobjects: [{name: x, shapes: [{type: mesh, "
                    "file: /etc/passwd}]}]", allowed_dirs=[str(allowed)])


def test_inline_mesh_object_collides_like_its_hull():
    model, scene, checker = tiny()
    cube = np.array([[x, y, z] for x in (0, .2) for y in (0, .2) for z in (0, .2)]) - 0.1
    scene.add(SceneObject("cube", [Mesh(cube, np.zeros((0, 3), dtype=int))],
                          T_frame_object=pose_from_xyz_quat([0.0, 0.0, 1.0])))
    distance, _, _ = pair_distance(checker, np.zeros(3), ("l1", "cube"))
    assert distance == pytest.approx(1.0 - 0.1 - 0.02, abs=1e-6)  # l1 box half height 0.02


def test_flat_mesh_is_a_thin_plate():
    """A wall or a table top as one quad: coplanar vertices, on which qhull (in coal)
    crashed the process.  It now stands for a plate 1 mm thick, as a 1 mm box would."""
    model, scene, checker = tiny()
    quad = np.array([[x, y, 0.0] for x in (-0.3, 0.3) for y in (-0.3, 0.3)])
    at = pose_from_xyz_quat([0.0, 0.0, 1.0])
    scene.add(SceneObject("quad", [Mesh(quad, [[0, 1, 2], [1, 2, 3]])], T_frame_object=at))
    scene.add(SceneObject("slab", [Box((0.6, 0.6, 1e-3))],
                          T_frame_object=pose_from_xyz_quat([0.0, 0.0, 1.0 - 0.6])))
    plate, _, _ = pair_distance(checker, np.zeros(3), ("l1", "quad"))
    slab, _, _ = pair_distance(checker, np.zeros(3), ("l1", "slab"))
    assert plate == pytest.approx(slab + 0.6, abs=1e-6)  # the slab is 0.6 m lower


@pytest.mark.parametrize("vertices, match", [
    ([[0, 0, 0], [1e300, 0, 0], [0, 1, 0], [0, 0, 1]], "within 10000 m"),
    ([[0, 0, 0], [1, 0, 0], [2, 0, 0], [3, 0, 0]], "on a line"),
    ([[1e-300 * v for v in p] for p in ([0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1])],
     "at one point"),
])
def test_meshes_qhull_cannot_take_are_refused(vertices, match):
    with pytest.raises(InvalidArgument, match=match):
        Mesh(vertices, [[0, 1, 2]])


def test_schema_file_and_parser_agree_on_keys():
    import yaml

    from ros2_ik.core.collision import scene_yaml

    with open(os.path.join(HERE, "..", "config", "scene_schema.yaml")) as stream:
        schema = yaml.safe_load(stream)
    assert set(schema["$defs"]["object"]["properties"]) == scene_yaml._OBJECT_KEYS
    shape = schema["$defs"]["shape"]
    assert set(shape["properties"]["type"]["enum"]) == set(scene_yaml._SHAPE_KEYS)
    for rule in shape["allOf"]:
        kind = rule["if"]["properties"]["type"]["const"]
        allowed = set(rule["then"]["propertyNames"]["enum"]) - {"type", "pose"}
        assert allowed == scene_yaml._SHAPE_KEYS[kind]


def test_scene_objects_compare_by_value():
    def make(z=1.0):
        cube = [[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]]
        return SceneObject("a", [Sphere(0.1), Mesh(cube, [[0, 1, 2]])],
                           T_frame_object=pose_from_xyz_quat([0, 0, z]))

    assert make() == make()
    assert make() != make(z=2.0)
    assert make() != "a"
