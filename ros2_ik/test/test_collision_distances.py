"""Distances of the collision checker: analytic cases, Panda self-collision, SRDF, attachment."""
import os

import coal
import numpy as np
import pinocchio as pin
import pytest

from ros2_ik.core.collision import (
    Box,
    CollisionChecker,
    MeshResolver,
    PlanningScene,
    SceneObject,
    ShapeInstance,
    Sphere,
    build_robot_geometry,
    candidate_self_pairs,
    pose_from_xyz_quat,
)
from ros2_ik.core.collision.meshes import environment_share_dirs

TINY_URDF = """<robot name="tiny">
  <link name="base"/>
  <joint name="j1" type="revolute"><parent link="base"/><child link="l1"/>
    <axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
  <link name="l1"><collision><origin xyz="0.25 0 0"/>
    <geometry><box size="0.4 0.04 0.04"/></geometry></collision></link>
  <joint name="j2" type="revolute"><parent link="l1"/><child link="l2"/>
    <origin xyz="0.5 0 0"/><axis xyz="0 1 0"/>
    <limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
  <link name="l2"><collision><origin xyz="0.2 0 0" rpy="0 1.5707963 0"/>
    <geometry><cylinder radius="0.02" length="0.2"/></geometry></collision></link>
  <joint name="j3" type="prismatic"><parent link="l2"/><child link="tip"/>
    <origin xyz="0.4 0 0"/><axis xyz="1 0 0"/>
    <limit lower="0" upper="0.3" effort="1" velocity="1"/></joint>
  <link name="tip"><collision><geometry><sphere radius="0.05"/></geometry></collision></link>
</robot>"""
TIP_RADIUS_M = 0.05
PANDA_READY = np.array([0, -0.785, 0, -2.356, 0, 1.571, 0.785, 0.02, 0.02])


def tiny_checker(scene, **kwargs):
    model = pin.buildModelFromXML(TINY_URDF)
    return model, CollisionChecker.from_urdf(model, TINY_URDF, scene=scene, **kwargs)


def panda_files():
    for share in environment_share_dirs():
        folder = os.path.join(share, "example-robot-data", "robots", "panda_description")
        if os.path.isdir(folder):
            return (open(os.path.join(folder, "urdf", "panda.urdf")).read(),
                    open(os.path.join(folder, "srdf", "panda.srdf")).read())
    pytest.skip("example-robot-data is not installed")


def pair_distance(checker, q, names):
    pairs = checker.distances(q)
    found = [k for k, pair in enumerate(pairs.compiled.pair_names) if set(pair) == set(names)]
    assert len(found) == 1, f"{names} in {pairs.compiled.pair_names}"
    k = found[0]
    return pairs.distances_m[k], pairs, k


def tip_position(model, q):
    data = model.createData()
    pin.forwardKinematics(model, data, q)
    return data.oMi[model.getJointId("j3")].translation.copy()


@pytest.mark.parametrize("seed", range(5))
def test_sphere_sphere_matches_closed_form_and_coal(seed):
    rng = np.random.default_rng(seed)
    scene = PlanningScene()
    center = rng.uniform(-0.6, 0.6, 3)
    scene.add(SceneObject("ball", [Sphere(0.1)], T_frame_object=pose_from_xyz_quat(center)))
    model, checker = tiny_checker(scene)
    q = np.array([rng.uniform(-3, 3), rng.uniform(-3, 3), rng.uniform(0, 0.3)])
    distance, pairs, k = pair_distance(checker, q, ("tip", "ball"))
    tip = tip_position(model, q)
    assert distance == pytest.approx(np.linalg.norm(center - tip) - 0.1 - TIP_RADIUS_M, abs=1e-9)
    T_tip, T_ball = coal.Transform3s(), coal.Transform3s()
    T_tip.setTranslation(tip)
    T_ball.setTranslation(center)
    by_coal = coal.distance(coal.Sphere(TIP_RADIUS_M), T_tip, coal.Sphere(0.1), T_ball,
                            coal.DistanceRequest(), coal.DistanceResult())
    assert distance == pytest.approx(by_coal, abs=1e-9)
    normal, p_a, p_b = pairs.witness(k)
    assert np.linalg.norm(p_a - tip) == pytest.approx(TIP_RADIUS_M, abs=1e-9)
    assert np.linalg.norm(p_b - center) == pytest.approx(0.1, abs=1e-9)


def test_sphere_sphere_penetration_is_negative():
    model = pin.buildModelFromXML(TINY_URDF)
    q = np.array([0.0, 0.0, 0.1])
    tip = tip_position(model, q)
    scene = PlanningScene()
    scene.add(SceneObject("ball", [Sphere(0.1)],
                          T_frame_object=pose_from_xyz_quat(tip + [0.12, 0, 0])))
    _, checker = tiny_checker(scene)
    distance, _, _ = pair_distance(checker, q, ("tip", "ball"))
    assert distance == pytest.approx(0.12 - 0.15, abs=1e-9)
    assert checker.in_collision(q)


@pytest.mark.parametrize("seed", range(5))
def test_sphere_box_matches_closed_form(seed):
    rng = np.random.default_rng(100 + seed)
    half = np.array([0.1, 0.2, 0.05])
    T_box = pose_from_xyz_quat(rng.uniform(-0.5, 0.5, 3), rng.normal(size=4))
    scene = PlanningScene()
    scene.add(SceneObject("crate", [Box(tuple(2 * half))], T_frame_object=T_box))
    model, checker = tiny_checker(scene)
    q = np.array([rng.uniform(-3, 3), rng.uniform(-3, 3), rng.uniform(0, 0.3)])
    local = T_box[:3, :3].T @ (tip_position(model, q) - T_box[:3, 3])
    outside = np.linalg.norm(np.maximum(np.abs(local) - half, 0.0))
    if outside < 1e-3:
        pytest.skip("tip centre inside the box: no closed form used here")
    distance, _, _ = pair_distance(checker, q, ("tip", "crate"))
    assert distance == pytest.approx(outside - TIP_RADIUS_M, abs=1e-7)


def test_padding_subtracts_from_robot_distances():
    scene = PlanningScene()
    scene.add(SceneObject("ball", [Sphere(0.1)], T_frame_object=pose_from_xyz_quat([0, 0, 1])))
    q = np.array([0.3, 0.2, 0.1])
    _, plain = tiny_checker(scene)
    _, padded = tiny_checker(scene, padding_m=0.01, link_padding_m={"tip": 0.03})
    d_plain, _, _ = pair_distance(plain, q, ("tip", "ball"))
    d_padded, _, _ = pair_distance(padded, q, ("tip", "ball"))
    assert d_padded == pytest.approx(d_plain - 0.03, abs=1e-9)
    d_plain, _, _ = pair_distance(plain, q, ("l1", "ball"))
    d_padded, _, _ = pair_distance(padded, q, ("l1", "ball"))
    assert d_padded == pytest.approx(d_plain - 0.01, abs=1e-9)


def bench_scene_checker(**kwargs):
    """(model, checker) of the Panda in bench/panda_scene.yaml; kwargs: padding."""
    from ros2_ik.core.collision import load_scene_yaml

    urdf, srdf = panda_files()
    model = pin.buildModelFromXML(urdf)
    scene = PlanningScene()
    here = os.path.dirname(os.path.abspath(__file__))
    scene.add_all(load_scene_yaml(os.path.join(here, "..", "..", "bench", "panda_scene.yaml")))
    return model, CollisionChecker.from_urdf(model, urdf, srdf, scene, **kwargs)


def test_min_distance_equals_brute_force_minimum():
    """Exact also when colliding: the deepest penetration wins, not the first one found."""
    model, checker = bench_scene_checker()
    pin.seed(5)
    colliding = 0
    for _ in range(40):
        q = pin.randomConfiguration(model)
        everything = checker.distances(q).distances_m
        report = checker.min_distance(q)
        assert report.distance_m == pytest.approx(everything.min(), abs=1e-9)
        assert checker.in_collision(q) == (everything.min() < 0)
        assert checker.in_collision(q, margin_m=-0.01) == (everything.min() < -0.01)
        colliding += report.in_collision
    assert 5 <= colliding <= 35


@pytest.fixture(scope="module")
def panda_checker():
    urdf, srdf = panda_files()
    model = pin.buildModelFromXML(urdf)
    return model, CollisionChecker.from_urdf(model, urdf, srdf)


def test_panda_ready_posture_is_collision_free(panda_checker):
    _, checker = panda_checker
    report = checker.min_distance(PANDA_READY)
    assert report.distance_m > 0.05
    assert not checker.in_collision(PANDA_READY)


@pytest.mark.parametrize("q7, expected_links", [
    ([0, 1.5, 0, -3.0, 0, 3.7, 0], {"panda_link0", "panda_link6"}),       # folded onto base
    ([0, 0.5, 0, -3.0, 0, 2.0, 0], {"panda_link0", "panda_leftfinger"}),  # fingers in base
])
def test_panda_self_collision_detected(panda_checker, q7, expected_links):
    _, checker = panda_checker
    q = np.r_[q7, 0.02, 0.02]
    report = checker.min_distance(q)
    assert checker.in_collision(q)
    assert report.distance_m < -0.01
    assert set(report.pair) == expected_links


def test_srdf_disabled_pairs_are_not_checked():
    urdf, srdf = panda_files()
    model = pin.buildModelFromXML(urdf)
    geom = build_robot_geometry(model, urdf, MeshResolver())
    with_srdf = candidate_self_pairs(model, geom, srdf)
    without = candidate_self_pairs(model, geom, None)
    link = [model.frames[g.parentFrame].name for g in geom.geometryObjects]
    names_with = {frozenset((link[i], link[j])) for i, j in with_srdf}
    names_without = {frozenset((link[i], link[j])) for i, j in without}
    assert frozenset(("panda_link3", "panda_link7")) in names_without   # SRDF: "Never"
    assert frozenset(("panda_link3", "panda_link7")) not in names_with
    assert frozenset(("panda_link1", "panda_link2")) not in names_without  # adjacent
    assert frozenset(("panda_link0", "panda_link6")) in names_with
    # pinocchio's own SRDF filter agrees on the resulting count
    geom.addAllCollisionPairs()
    pin.removeCollisionPairsFromXML(model, geom, srdf)
    assert len(with_srdf) == len(geom.collisionPairs)


def test_srdf_disabled_pair_cannot_report_collision(panda_checker):
    _, srdf = panda_files()
    model, checker = panda_checker
    q = np.r_[[0, 1.5, 0, -3.0, 0, 3.7, 0], 0.02, 0.02]
    extra = srdf.replace("</robot>", '<disable_collisions link1="panda_link6" '
                         'link2="panda_link0" reason="test"/></robot>')
    relaxed = CollisionChecker(model, checker.robot_geom, srdf_xml=extra)
    assert ("panda_link0", "panda_link6") in checker.compiled().pair_names
    assert ("panda_link0", "panda_link6") not in relaxed.compiled().pair_names
    assert set(relaxed.min_distance(q).pair) != {"panda_link0", "panda_link6"}
    assert relaxed.min_distance(q).distance_m > checker.min_distance(q).distance_m


def test_attached_object_moves_with_its_link():
    scene = PlanningScene()
    T_tip_obj = pose_from_xyz_quat([0.0, 0.0, 0.2])
    scene.add(SceneObject("held", [ShapeInstance(Sphere(0.03))], frame_id="tip",
                          T_frame_object=T_tip_obj, attached=True))
    scene.add(SceneObject("ball", [Sphere(0.05)], T_frame_object=pose_from_xyz_quat([0, 0, 2])))
    model, checker = tiny_checker(scene)
    for q in ([0.0, 0.0, 0.0], [1.0, -0.5, 0.2], [-2.0, 1.0, 0.3]):
        q = np.asarray(q)
        data = model.createData()
        pin.forwardKinematics(model, data, q)
        pin.updateFramePlacements(model, data)
        held = (data.oMf[model.getFrameId("tip")] * pin.SE3(T_tip_obj)).translation
        distance, _, _ = pair_distance(checker, q, ("held", "ball"))
        assert distance == pytest.approx(np.linalg.norm(held - [0, 0, 2]) - 0.08, abs=1e-9)
    names = checker.compiled().pair_names
    assert ("tip", "held") not in names  # never against its own link
    assert ("l1", "held") in names


def test_attached_object_skips_touch_links():
    scene = PlanningScene()
    scene.add(SceneObject("held", [Sphere(0.03)], frame_id="tip", attached=True,
                          touch_links=("l2",)))
    _, checker = tiny_checker(scene)
    names = checker.compiled().pair_names
    assert ("l1", "held") in names
    assert ("l2", "held") not in names


def test_lower_bounds_never_exceed_exact_distances():
    """A bound above the true distance would silently drop a near pair from the constraint."""
    urdf, srdf = panda_files()
    model = pin.buildModelFromXML(urdf)
    scene = PlanningScene()
    here = os.path.dirname(os.path.abspath(__file__))
    from ros2_ik.core.collision import load_scene_yaml

    scene.add_all(load_scene_yaml(os.path.join(here, "..", "..", "bench", "panda_scene.yaml")))
    scene.add(SceneObject("held", [Box((0.05, 0.05, 0.2))], frame_id="panda_hand",
                          T_frame_object=pose_from_xyz_quat([0, 0, 0.15]), attached=True))
    checker = CollisionChecker.from_urdf(model, urdf, srdf, scene, padding_m=0.01)
    data = model.createData()
    pin.seed(11)
    for _ in range(30):
        q = pin.randomConfiguration(model)
        exact = checker.distances(q).distances_m
        pin.forwardKinematics(model, data, q)
        bounds = checker.padded_lower_bounds(checker.compiled(), data)
        assert np.all(bounds <= exact + 1e-9)
        assert np.mean(bounds > 0.05) > 0.5  # and they are useful: most far pairs skipped


def test_thresholded_passes_compute_every_pair_closer_than_the_threshold():
    """distances_from_data / clear_from_data may skip only pairs at or beyond the threshold."""
    model, checker = bench_scene_checker(padding_m=0.005, link_padding_m={"panda_hand": 0.0})
    data = model.createData()
    rng = np.random.default_rng(12)
    verdicts = set()
    for _ in range(40):
        q = rng.uniform(model.lowerPositionLimit, model.upperPositionLimit)
        exact = checker.distances(q).distances_m
        pin.forwardKinematics(model, data, q)
        for threshold in (-0.02, 0.0, 1e-4, 0.05):
            near = exact < threshold
            got = checker.distances_from_data(data, threshold).distances_m
            np.testing.assert_array_equal(got[near], exact[near])
            assert np.all(got[~near] >= threshold)
            clear = checker.clear_from_data(data, threshold)
            assert clear == (not near.any())
            verdicts.add(clear)
    assert verdicts == {True, False}


def test_padding_is_validated_with_the_links_listed():
    from ros2_ik.core.errors import InvalidArgument, InvalidFrame

    with pytest.raises(InvalidArgument, match="padding_m"):
        tiny_checker(None, padding_m=-0.01)
    with pytest.raises(InvalidArgument, match="link_padding_m"):
        tiny_checker(None, link_padding_m={"tip": float("nan")})
    with pytest.raises(InvalidFrame, match="tip"):
        tiny_checker(None, link_padding_m={"hand": 0.01})
