"""Build ros2_ik terms from a :class:`constrained_problems.ProblemSpec` and solve it.

:func:`solve_spec` is the one place that calls ``ros2_ik.core.solve.solve`` for the
constrained benchmark, the property test and the fuzz (tolerances 1e-4 m / 1e-4 rad).
"""
from __future__ import annotations


import numpy as np
import pinocchio as pin

from ros2_ik.core import constraints as C
from ros2_ik.core import costs as K
from ros2_ik.core import robots
from ros2_ik.core.pose import PoseTarget
from ros2_ik.core.problem import Problem
from ros2_ik.core.solve import solve

TOL_M, TOL_RAD = 1e-4, 1e-4


#: The terms whose arguments are the class's keyword arguments, by kind.
SIMPLE = {"position": C.PositionConstraint, "orientation": C.OrientationConstraint,
          "gaze": C.GazeTargetConstraint, "angle": C.AngleBetweenVectorsConstraint,
          "point_to_point": C.PointToPointDistanceConstraint,
          "point_to_line": C.PointToLineDistanceConstraint,
          "polyhedron": C.PolyhedronConstraint, "rotation_box": C.RotationBoxConstraint,
          "position_cost": K.PositionCost}


def build_term(model, term, group, collision=None):
    """One ros2_ik constraint or cost from a :class:`Term` (``collision``: a checker).

    As a user's code would: the class called with the term's arguments (a table made
    once, not per term: the benchmark times this as part of each request).
    """
    make = SIMPLE.get(term.kind)
    if make is not None:
        return make(model, **term.args)
    a, kind = term.args, term.kind
    if kind == "joint_bounds":
        return C.JointBoundsConstraint(model, a["bounds"])
    if kind == "locked":
        return C.LockedJointConstraint(model, a["positions"])
    if kind == "posture":
        return K.PostureCost(model, group.to_full_q(np.asarray(a["q_nominal"])), a["weights"])
    if kind == "min_distance":
        from ros2_ik.core.constraints import MinimumDistanceConstraint
        return MinimumDistanceConstraint(collision, a["min_distance_m"],
                                         a["influence_distance_m"])
    if kind == "min_distance_upper":
        from ros2_ik.core.constraints import MinimumDistanceUpperBoundConstraint
        return MinimumDistanceUpperBoundConstraint(collision, a["bound_m"])
    if kind == "distance":
        from ros2_ik.core.constraints import DistanceConstraint
        return DistanceConstraint(collision, **a)
    raise ValueError(f"unknown term kind {kind!r}")


def build(spec, group, collision=None) -> Problem:
    """``Problem(group, target, constraints, costs)`` of ``spec``.

    A ``pose`` term (``completeness_problems``) is the target: a :class:`PoseTarget` in
    the world frame with the 1e-4 m / 1e-4 rad tolerances, one position axis of the target
    frame free (weight 0) when ``free_axis`` >= 0.
    """
    model = group.robot.model
    poses = [t for t in spec.constraints if t.kind == "pose"]
    target = pose_target(poses[0]) if poses else None
    return Problem(group, target,
                   [build_term(model, t, group, collision) for t in spec.constraints
                    if t.kind != "pose"],
                   [build_term(model, t, group, collision) for t in spec.costs])


def pose_target(term) -> PoseTarget:
    """Return the :class:`PoseTarget` of a ``pose`` term."""
    a = term.args
    weights = [1.0] * 6
    if a["free_axis"] >= 0:
        weights[a["free_axis"]] = 0.0
    return PoseTarget(a["frame"], pin.SE3(np.asarray(a["T"], dtype=float)),
                      weights=tuple(weights), position_tolerance_m=TOL_M,
                      orientation_tolerance_rad=TOL_RAD, position_only=a["position_only"])


def solve_spec(group, problem: Problem, seed: np.ndarray, solver: str, timeout_s: float,
               random_seed: int, max_attempts: int = 0):
    """Run ``solve`` with the 1e-4 m / 1e-4 rad tolerances; returns the IKResult."""
    return solve(group, problem, seed, solver=solver, timeout_s=timeout_s,
                 random_seed=random_seed, max_attempts=max_attempts,
                 constraint_tolerance_m=TOL_M, constraint_tolerance_rad=TOL_RAD)


def scene_checker(arm: str, robot, group, scene_yaml: str, allowed_dir: str):
    """(CollisionChecker of ``arm`` in the scene file, ``group.to_full_q``) for family h."""
    from ros2_ik.core.collision import CollisionChecker, PlanningScene, load_scene_yaml
    scene = PlanningScene.for_model(robot.model)
    scene.add_all(load_scene_yaml(scene_yaml, allowed_dirs=[allowed_dir]))
    checker = CollisionChecker.from_urdf(robot.model, robots.urdf_text(arm),
                                         robots.srdf_text(arm), scene)
    return checker, group.to_full_q
