"""ROS-free collision core: robot geometry, planning scene, distances, minimum-distance constraint.

Typical use (all inputs are text or arrays; no ROS)::

    scene = PlanningScene(valid_frames=[f.name for f in model.frames])
    scene.add_all(load_scene_yaml(path, allowed_dirs=[...]))
    checker = CollisionChecker.from_urdf(model, urdf_xml, srdf_xml, scene, padding_m=0.0)
    constraint = MinimumDistanceConstraint(checker, min_distance_m=0.005)
    ...  # the solver stacks `constraint`; after the solve:
    report = checker.min_distance(q)        # distance_m, pair, witness points
"""
from .checker import CollisionChecker, DistanceReport, PairDistances
from .constraint import MinimumDistanceConstraint
from .cost import MinimumDistanceCost
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
    "MinimumDistanceConstraint",
    "MinimumDistanceCost",
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
