"""Collision checking on a whole-body robot with meshes: talos on a free-flyer.

Its 47 collision meshes become convex hulls; the SRDF's disabled pairs are left out of
the self pairs.  A whole-body solve with a clearance constraint is re-checked with
pinocchio's own ``computeDistances`` on the same geometry (not the checker's code).
"""
import numpy as np
import pinocchio as pin

from ros2_ik.core import robots
from ros2_ik.core.collision.checker import CollisionChecker
from ros2_ik.core.collision.pairs import geometry_link_name, srdf_disabled_link_pairs
from ros2_ik.core.constraints.collision import MinimumDistanceConstraint
from ros2_ik.core.model.robot import Robot
from ros2_ik.core.pose import PoseTarget
from ros2_ik.core.result import IKStatus
from ros2_ik.core.solve import solve

HAND = "gripper_left_base_link"
CLEARANCE = 0.002  # [m] (half_sitting: 2.4 mm, the right gripper's fingers)


def _pinocchio_min_distance(model, geom_model, pairs, q) -> float:
    """Smallest distance [m] over ``pairs`` by pinocchio + coal on a copy of the geometry."""
    geom = geom_model.copy()
    for i, j in pairs:
        geom.addCollisionPair(pin.CollisionPair(i, j))
    data, geom_data = model.createData(), pin.GeometryData(geom)
    pin.computeDistances(model, data, geom, geom_data, q)
    return min(r.min_distance for r in geom_data.distanceResults)


def test_talos_whole_body_solves_clear_of_itself():
    root = robots.data_dir() / "talos_data"
    urdf = (root / "robots/talos_full_v2.urdf").read_text()
    srdf = (root / "srdf/talos.srdf").read_text()
    robot = Robot.from_urdf(urdf, srdf, root_joint="floating")
    model = robot.model
    checker = CollisionChecker.from_urdf(model, urdf, srdf)
    geoms = checker.robot_geom.geometryObjects
    assert sum(g.meshPath != "" for g in geoms) >= 40  # the meshes, as hulls
    disabled = srdf_disabled_link_pairs(srdf)
    links = [geometry_link_name(model, g) for g in geoms]
    assert disabled and not any(frozenset((links[i], links[j])) in disabled
                                for i, j in checker.self_pairs)

    pin.loadReferenceConfigurations(model, str(root / "srdf/talos.srdf"), False)
    group = robot.whole_body(tip=HAND)
    seed = group.from_full_q(np.array(model.referenceConfigurations["half_sitting"]))
    T = group.fk(seed, HAND)
    T.translation += (0.05, 0.0, 0.05)
    result = solve(group, PoseTarget(HAND, T), seed, timeout_s=2.0, constraints=[
        MinimumDistanceConstraint(checker, CLEARANCE, 0.05)])
    assert result.status == IKStatus.SUCCESS
    q_full = group.to_full_q(result.q)
    data = model.createData()
    pin.framesForwardKinematics(model, data, q_full)
    assert np.linalg.norm(data.oMf[model.getFrameId(HAND)].translation - T.translation) < 1e-4
    assert _pinocchio_min_distance(model, checker.robot_geom, checker.self_pairs,
                                   q_full) > CLEARANCE - 1e-4
