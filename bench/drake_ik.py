"""Drake's InverseKinematics with a minimum-distance constraint, on our URDF and scene.

The reference method (c) of the collision benchmark (issue 4).  Geometry given to Drake:

* the same URDF text (example-robot-data's Panda), ``package://`` resolved through a
  ``PackageMap`` entry for example-robot-data's share folder;
* ``<visual>`` tags dropped (IK needs none; Drake would try to load the ``.dae`` files);
* each collision ``.stl`` (which Drake 1.51 refuses for proximity) replaced by the **convex
  hull that our checker uses** (coal + qhull), written as an ``.obj`` into a temporary folder
  and declared ``<drake:declare_convex/>``, so both sides test exactly the same hulls; the
  fingers' collision boxes are kept as boxes;
* the locked finger joints (prismatic, locked at 0 m) made ``fixed`` at the same origin;
* the scene's boxes and cylinders welded to the world as Drake ``Box`` / ``Cylinder``;
* collision filtering set to exactly our checker's candidate pairs (every robot link pair
  that our checker does not test is excluded in Drake too).

One solve: position constraint (box of half-width ``tol / (2 sqrt(3))`` per axis), orientation
constraint (angle <= tol / 2), joint limits,
``AddMinimumDistanceLowerBoundConstraint(d_min, influence)``; no cost (feasibility), the
solver is SNOPT when the wheel has it (major feasibility tolerance 1e-8), else IPOPT.
Restarts (the seed first, then uniform random within the limits) until the solver reports
success or the budget is spent.  An
attempt cannot be cut short: the SNOPT of this wheel ignores its "Time limit" option (measured:
a 50 ms solve with "Time limit" 0.005), so an attempt started before the deadline runs to its
end and the benchmark counts an answer after the budget as late (a failure).  IPOPT gets
``max_cpu_time`` = the time left.

Why half the tolerances: a feasibility problem stops on the first feasible point, which is on
the boundary of the pose constraints give or take SNOPT's feasibility tolerance; at the full
tolerances 28 of 30 answers missed our independent check by ~1e-6 (e.g. 1.001e-3 rad).
Halving keeps Drake's answers inside the check without changing what is asked.
"""
from __future__ import annotations

import math
import tempfile
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, FrozenSet, Iterable, List, Optional, Sequence, Tuple

import coal
import numpy as np
import pinocchio as pin
from scipy.spatial import ConvexHull

from pydrake.geometry import (Box, CollisionFilterDeclaration, Cylinder, GeometrySet,
                              Role, Sphere)
from pydrake.math import RigidTransform, RotationMatrix
from pydrake.multibody.inverse_kinematics import InverseKinematics
from pydrake.multibody.parsing import Parser
from pydrake.multibody.plant import AddMultibodyPlantSceneGraph, CoulombFriction
from pydrake.solvers import IpoptSolver, SnoptSolver, SolverOptions
from pydrake.systems.framework import DiagramBuilder

DRAKE_NS = "http://drake.mit.edu"
#: SNOPT "Major feasibility tolerance" (its default 1e-6 lets the trace form of Drake's
#: orientation constraint, tr(R) >= 1 + 2 cos(theta), end at ~2e-3 rad for theta = 5e-4).
FEASIBILITY_TOLERANCE = 1e-8


@dataclass(frozen=True)
class DrakeAttempt:
    """Outcome of one target: the answer (n,) or None, attempts run, solver claims."""

    q: Optional[np.ndarray]
    attempts: int
    claimed_success: bool


def solver_choice():
    """(solver instance, name): SNOPT when this wheel ships it, else IPOPT."""
    snopt = SnoptSolver()
    if snopt.available() and snopt.enabled():
        return snopt, "SNOPT"
    return IpoptSolver(), "IPOPT"


def write_hull_obj(stl_path: str, out_path: Path) -> int:
    """Write the convex hull of a mesh (as our checker builds it) as an .obj; vertex count."""
    bvh = coal.MeshLoader().load(stl_path)
    bvh.buildConvexHull(False, "Qt")
    points = np.asarray(bvh.convex.points(), dtype=float).reshape(-1, 3)
    hull = ConvexHull(points)
    lines = [f"v {x:.9g} {y:.9g} {z:.9g}" for x, y, z in points]
    for simplex, eq in zip(hull.simplices, hull.equations):
        a, b, c = simplex
        normal = np.cross(points[b] - points[a], points[c] - points[a])
        if normal @ eq[:3] < 0:  # outward winding
            b, c = c, b
        lines.append(f"f {a + 1} {b + 1} {c + 1}")
    out_path.write_text("\n".join(lines) + "\n")
    return len(points)


def _fold_into_origin(joint: ET.Element, value: float) -> None:
    """Give a joint locked at ``value`` [rad or m] the origin of its child at that value."""
    origin = joint.find("origin")
    if origin is None:
        origin = ET.SubElement(joint, "origin")
    xyz = np.array([float(v) for v in origin.get("xyz", "0 0 0").split()])
    rpy = np.array([float(v) for v in origin.get("rpy", "0 0 0").split()])
    axis_el = joint.find("axis")
    axis = np.array([float(v) for v in (axis_el.get("xyz") if axis_el is not None
                                        else "1 0 0").split()])
    axis /= np.linalg.norm(axis)
    if joint.get("type") == "prismatic":
        motion = pin.SE3(np.eye(3), value * axis)
    else:
        motion = pin.SE3(pin.exp3(value * axis), np.zeros(3))
    T = pin.SE3(pin.rpy.rpyToMatrix(*rpy), xyz) * motion
    origin.set("xyz", " ".join(f"{v:.12g}" for v in T.translation))
    origin.set("rpy", " ".join(f"{v:.12g}" for v in pin.rpy.matrixToRpy(T.rotation)))


def drake_urdf(urdf_xml: str, resolve, locked: Dict[str, float], tmp: Path) -> Tuple[str, list]:
    """Return the URDF text Drake parses (see module docstring) and its geometry list.

    ``resolve`` None: the collision geometry is dropped too (IK without distances).
    """
    ET.register_namespace("drake", DRAKE_NS)
    root = ET.fromstring(urdf_xml)
    # Transmissions make Drake actuators (vendors repeat actuator names across them: xArm,
    # Piper), top-level materials may name textures in packages Drake has no path to
    # (Interbotix); IK needs neither, and every visual is dropped below.
    for element in root.findall("transmission") + root.findall("material"):
        root.remove(element)
    used = []
    for link in root.iter("link"):
        for visual in list(link.findall("visual")) + (
                list(link.findall("collision")) if resolve is None else []):
            link.remove(visual)
        for k, collision in enumerate(link.findall("collision")):
            mesh = collision.find("geometry/mesh")
            if mesh is None:
                shape = collision.find("geometry")[0]
                used.append((link.get("name"), shape.tag, dict(shape.attrib)))
                continue
            obj = tmp / f"{link.get('name')}_{k}.obj"
            n = write_hull_obj(resolve(mesh.get("filename")), obj)
            mesh.set("filename", obj.as_uri())
            ET.SubElement(mesh, f"{{{DRAKE_NS}}}declare_convex")
            used.append((link.get("name"), "convex hull .obj", {"vertices": n}))
    for joint in root.iter("joint"):
        # Drake warns and ignores safety_controller; pinocchio (as ros2_ik builds models)
        # reads no mimic element: each such joint is a joint of its own on both sides.
        for child in joint.findall("safety_controller") + joint.findall("mimic"):
            joint.remove(child)
        name = joint.get("name")
        if name in locked:
            if locked[name] != 0.0:
                _fold_into_origin(joint, locked[name])
            joint.set("type", "fixed")
            for tag in ("limit", "mimic", "dynamics", "axis"):
                for child in joint.findall(tag):
                    joint.remove(child)
    return ET.tostring(root, encoding="unicode"), used


class DrakeMinDistanceIK:
    """One Drake plant + scene for many targets (see module docstring).

    Args:
        urdf_xml: the robot description (same text as our side).
        package_dirs: ``{package_name: folder}`` for ``package://`` URIs.
        resolve: ``uri -> absolute path`` (our MeshResolver's) for the .stl files.
        base: link welded to the world at the origin; tip: the target frame.
        joint_names: the group's joints in our order; locked: ``{joint: value}``.
        scene_objects: our ``SceneObject`` list (world-fixed boxes, cylinders, spheres).
        allowed_link_pairs: unordered robot link pairs our checker tests.
    """

    def __init__(self, urdf_xml: str, package_dirs: Dict[str, str], resolve, base: str,
                 tip: str, joint_names: Sequence[str], locked: Dict[str, float],
                 scene_objects: Iterable, allowed_link_pairs: Iterable[FrozenSet[str]],
                 min_distance_m: float, influence_distance_m: float,
                 position_tolerance_m: float, orientation_tolerance_rad: float):
        self._tmp = tempfile.TemporaryDirectory(prefix="drake_panda_")
        text, self.robot_geometry = drake_urdf(urdf_xml, resolve, locked, Path(self._tmp.name))
        builder = DiagramBuilder()
        self.plant, self.scene_graph = AddMultibodyPlantSceneGraph(builder, 0.0)
        parser = Parser(self.plant)
        for name, folder in package_dirs.items():
            parser.package_map().Add(name, folder)
        parser.AddModelsFromString(text, "urdf")
        self.plant.WeldFrames(self.plant.world_frame(), self.plant.GetFrameByName(base))
        self.scene_geometry = self._add_scene(scene_objects)
        self.plant.Finalize()
        self.diagram = builder.Build()
        self._filter(set(allowed_link_pairs))
        self.context = self.diagram.CreateDefaultContext()
        self.plant_context = self.plant.GetMyMutableContextFromRoot(self.context)
        self.index = np.array([self.plant.GetJointByName(n).position_start()
                               for n in joint_names])
        assert self.plant.num_positions() == len(joint_names)
        self.lower = self.plant.GetPositionLowerLimits()
        self.upper = self.plant.GetPositionUpperLimits()
        self.tip = self.plant.GetFrameByName(tip)
        self.min_distance_m = min_distance_m
        self.influence_offset_m = influence_distance_m - min_distance_m
        self.half_box_m = 0.5 * position_tolerance_m / math.sqrt(3.0)
        self.orientation_tolerance_rad = 0.5 * orientation_tolerance_rad
        self.solver, self.solver_name = solver_choice()
        self.feasibility_tolerance = FEASIBILITY_TOLERANCE

    def _add_scene(self, scene_objects) -> List[str]:
        world, described = self.plant.world_body(), []
        friction = CoulombFriction(0.5, 0.5)
        for obj in scene_objects:
            if obj.attached or obj.frame_id not in ("world", ""):
                raise ValueError(f"scene object {obj.name}: only world-fixed objects")
            for k, inst in enumerate(obj.shapes):
                T = np.asarray(obj.T_frame_object) @ np.asarray(inst.T_object_shape)
                shape = _drake_shape(inst.shape)
                self.plant.RegisterCollisionGeometry(
                    world, RigidTransform(T), shape, f"{obj.name}/{k}", friction)
                described.append(f"{obj.name}/{k}: {type(shape).__name__}")
        return described

    def _filter(self, allowed: set) -> None:
        """Exclude every robot link pair that our checker does not test."""
        inspector = self.scene_graph.model_inspector()
        by_link: Dict[str, list] = {}
        for gid in inspector.GetAllGeometryIds(Role.kProximity):
            body = self.plant.GetBodyFromFrameId(inspector.GetFrameId(gid))
            if body.index() != self.plant.world_body().index():
                by_link.setdefault(body.name(), []).append(gid)
        declaration = CollisionFilterDeclaration()
        links = sorted(by_link)
        self.excluded_link_pairs = []
        for i, a in enumerate(links):
            for b in links[i + 1:]:
                if frozenset((a, b)) not in allowed:
                    declaration.ExcludeBetween(GeometrySet(by_link[a]), GeometrySet(by_link[b]))
                    self.excluded_link_pairs.append((a, b))
        self.scene_graph.collision_filter_manager().Apply(declaration)

    def tested_link_pairs(self) -> set:
        """Robot link pairs (and link/scene pairs) Drake actually tests, for a sanity check."""
        inspector = self.scene_graph.model_inspector()
        names = {}
        for gid in inspector.GetAllGeometryIds(Role.kProximity):
            body = self.plant.GetBodyFromFrameId(inspector.GetFrameId(gid))
            names[gid] = body.name() if body.index() != self.plant.world_body().index() \
                else inspector.GetName(gid).split("::")[-1].split("/")[0]
        out = set()
        for a, b in inspector.GetCollisionCandidates():
            out.add(frozenset((names[a], names[b])))
        return out

    def _program(self, T_target: np.ndarray) -> InverseKinematics:
        ik = InverseKinematics(self.plant, self.plant_context, with_joint_limits=True)
        p = np.asarray(T_target[:3, 3])
        ik.AddPositionConstraint(self.tip, np.zeros(3), self.plant.world_frame(),
                                 p - self.half_box_m, p + self.half_box_m)
        ik.AddOrientationConstraint(self.plant.world_frame(),
                                    RotationMatrix(np.asarray(T_target[:3, :3])), self.tip,
                                    RotationMatrix(), self.orientation_tolerance_rad)
        ik.AddMinimumDistanceLowerBoundConstraint(self.min_distance_m, self.influence_offset_m)
        return ik

    def solve(self, T_target: np.ndarray, seed: np.ndarray, budget_s: float,
              rng: np.random.Generator) -> DrakeAttempt:
        """Restart until the solver claims success or ``budget_s`` [s] is spent."""
        start = time.perf_counter()
        ik = self._program(T_target)
        guess = np.empty(self.plant.num_positions())
        guess[self.index] = seed
        attempts = 0
        while True:
            left = budget_s - (time.perf_counter() - start)
            if left <= 0.0:
                return DrakeAttempt(None, attempts, False)
            options = SolverOptions()
            if self.solver_name == "SNOPT" and self.feasibility_tolerance:
                options.SetOption(self.solver.solver_id(), "Major feasibility tolerance",
                                  self.feasibility_tolerance)
            if self.solver_name == "IPOPT":
                options.SetOption(self.solver.solver_id(), "max_cpu_time", max(left, 1e-4))
            result = self.solver.Solve(ik.prog(), guess, options)
            attempts += 1
            if result.is_success():
                q = result.GetSolution(ik.q())
                return DrakeAttempt(np.asarray(q)[self.index], attempts, True)
            guess = self.lower + (self.upper - self.lower) * rng.random(len(guess))


def for_checker(urdf_xml: str, robot_model: pin.Model, checker, group, scene_objects,
                min_distance_m: float, influence_distance_m: float,
                position_tolerance_m: float, orientation_tolerance_rad: float
                ) -> Tuple[DrakeMinDistanceIK, set]:
    """Return Drake's program for ``group`` of an example-robot-data URDF, and the link pairs.

    The robot link pairs Drake tests are those ``checker`` (ours) tests; the meshes are
    found as ours are (``MeshResolver``).  Returns ``(ik, allowed)``, ``allowed`` those
    pairs as frozensets of link names.
    """
    from ros2_ik.core import robots
    from ros2_ik.core.collision import MeshResolver
    from ros2_ik.core.collision.pairs import geometry_link_name
    g = checker.robot_geom.geometryObjects
    allowed = {frozenset((geometry_link_name(robot_model, g[i]),
                          geometry_link_name(robot_model, g[j])))
               for i, j in checker.self_pairs}
    ik = DrakeMinDistanceIK(
        urdf_xml, {"example-robot-data": str(robots.data_dir().parent)}, MeshResolver().resolve,
        group.base, group.tip, group.joint_names, group.locked, scene_objects, allowed,
        min_distance_m, influence_distance_m, position_tolerance_m, orientation_tolerance_rad)
    return ik, allowed


def _drake_shape(shape):
    kind = type(shape).__name__
    if kind == "Box":
        return Box(*shape.size_m)
    if kind == "Cylinder":
        return Cylinder(shape.radius_m, shape.length_m)
    if kind == "Sphere":
        return Sphere(shape.radius_m)
    raise ValueError(f"scene shape {kind} not supported on the Drake side")
