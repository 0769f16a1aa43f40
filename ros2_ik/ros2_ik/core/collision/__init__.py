"""ROS-free collision core: robot geometry, planning scene, distances.

The distance terms built on it are beside the other terms: ``MinimumDistanceConstraint``,
``DistanceConstraint`` and ``MinimumDistanceUpperBoundConstraint`` in
:mod:`ros2_ik.core.constraints`, ``MinimumDistanceCost`` in :mod:`ros2_ik.core.costs`.

Typical use (all inputs are text or arrays; no ROS)::

    model = pin.buildModelFromXML(urdf_xml)                  # or Robot.from_urdf(...).model
    scene = PlanningScene(valid_frames=[f.name for f in model.frames])
    scene.add_all(load_scene_yaml(scene_file, allowed_dirs=[...]))
    checker = CollisionChecker.from_urdf(model, urdf_xml, srdf_xml, scene,
                                         resolver=MeshResolver(search_dirs=[...]),
                                         padding_m=0.0)
    constraint = MinimumDistanceConstraint(checker, min_distance_m=0.005,
                                           influence_distance_m=0.05)

    # in the solver, once per iterate (the preconditions of every term):
    pin.computeJointJacobians(model, data, q)
    pin.updateFramePlacements(model, data)
    value, jacobian = constraint.evaluate(model, data, q)   # (8,), (8, nv); value >= 0.005

    # after the solve: the re-check that decides SUCCESS vs IN_COLLISION
    report = checker.min_distance(q)     # distance_m, pair (names), witness points [m]
    collides = checker.in_collision(q)   # report.distance_m < 0

The checker and the terms are shared between threads (each thread gets its own pinocchio
data); scene changes (``scene.add/move/remove/clear``) are picked up at the next call.
"""
from .checker import CollisionChecker, DistanceReport, PairDistances
from .meshes import MeshNotFoundError, MeshResolver, PathNotAllowed, check_allowed_path
from .pairs import candidate_self_pairs, srdf_disabled_link_pairs
from .robot_geometry import build_robot_geometry
from .scene import (
    Box,
    Cylinder,
    Mesh,
    PlanningScene,
    SceneObject,
    SceneSnapshot,
    ShapeInstance,
    Sphere,
    pose_from_xyz_quat,
)
from .scene_yaml import load_scene_yaml, parse_scene

__all__ = [
    "Box",
    "CollisionChecker",
    "Cylinder",
    "DistanceReport",
    "Mesh",
    "MeshNotFoundError",
    "MeshResolver",
    "PairDistances",
    "PathNotAllowed",
    "PlanningScene",
    "SceneObject",
    "SceneSnapshot",
    "ShapeInstance",
    "Sphere",
    "build_robot_geometry",
    "candidate_self_pairs",
    "check_allowed_path",
    "load_scene_yaml",
    "parse_scene",
    "pose_from_xyz_quat",
    "srdf_disabled_link_pairs",
]
