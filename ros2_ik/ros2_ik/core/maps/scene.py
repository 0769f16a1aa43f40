"""Collision-aware capability maps: each cell a pose target plus clearance to a scene file.

A cell is reachable when a configuration places the tip there *and* keeps every
robot-scene and robot-robot pair at least ``clearance_m`` [m] apart (the minimum-distance
constraint of :mod:`collision`, its bound raised by the solve's constraint tolerance so
a SUCCESS never touches).  The scene is a YAML file of the node's format
(``config/scene_example.yaml``); its mesh files are read only from its own directory.
Workers build the checker once per (robot, scene file).
"""
from __future__ import annotations

import os
from typing import Dict, Tuple

import numpy as np
import pinocchio as pin

from ros2_ik.core import errors
from ros2_ik.core.collision import CollisionChecker, PlanningScene, load_scene_yaml
from ros2_ik.core.constraints import MinimumDistanceConstraint
from ros2_ik.core.maps.batch import GroupSpec, ProblemTemplate
from ros2_ik.core.model import robots
from ros2_ik.core.pose import PoseTarget
from ros2_ik.core.problem import Problem
from ros2_ik.core.verify import CONSTRAINT_TOLERANCE_M

#: Pairs farther apart than this are ignored by the constraint [m] (as the node's default).
INFLUENCE_M = 0.05

_CHECKERS: Dict[Tuple[int, str], CollisionChecker] = {}


def load_scene(scene_file: str):
    """Scene objects of ``scene_file`` (InvalidArgument naming ``scene_file``)."""
    if not os.path.isfile(scene_file):
        raise errors.InvalidArgument(f"scene_file: '{scene_file}' is not a file")
    try:
        return load_scene_yaml(scene_file, allowed_dirs=[os.path.dirname(
            os.path.abspath(scene_file))])
    except errors.IKError as exc:
        raise errors.InvalidArgument(f"scene_file: {exc}") from exc
    except Exception as exc:  # YAML errors
        raise errors.InvalidArgument(f"scene_file: cannot read '{scene_file}': {exc}") from exc


def checker_for(group, spec: GroupSpec, scene_file: str) -> CollisionChecker:
    """Return the checker of ``group``'s robot with the objects of ``scene_file`` (cached)."""
    key = (id(group.robot), scene_file)
    if key not in _CHECKERS:
        model = group.robot.model
        scene = PlanningScene.for_model(model)
        scene.add_all(load_scene(scene_file))
        urdf = spec.urdf or robots.urdf_text(spec.arm)
        _CHECKERS[key] = CollisionChecker.from_urdf(model, urdf, group.robot.srdf_xml, scene)
    return _CHECKERS[key]


def collision_cell(group, row: np.ndarray, spec: GroupSpec, scene_file: str,
                   clearance_m: float) -> Problem:
    """Return the problem of one cell: ``row`` is ``T_base_tip`` (16,) row-major."""
    bound = float(clearance_m) + CONSTRAINT_TOLERANCE_M
    constraint = MinimumDistanceConstraint(checker_for(group, spec, scene_file), bound,
                                           max(INFLUENCE_M, bound + 0.01))
    target = PoseTarget(group.tip, pin.SE3(np.asarray(row, dtype=float).reshape(4, 4)),
                        reference_frame=group.base)
    return Problem(group, target, [constraint])


def template(spec: GroupSpec, scene_file: str, clearance_m: float) -> ProblemTemplate:
    """Return the :class:`ProblemTemplate` of collision-aware cells (rows: T_base_tip (16,))."""
    return ProblemTemplate(collision_cell, (("spec", spec), ("scene_file", scene_file),
                                            ("clearance_m", float(clearance_m))))
