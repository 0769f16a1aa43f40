"""One scene version compiled against the robot: a combined GeometryModel and its pair tables.

Built once per scene version and shared read-only by every thread (each thread owns its
``pin.GeometryData``), from the robot's part built once per checker (:class:`RobotPart`):
a perception that moves an object every tenth of a second makes a version each time.
A version whose objects only moved (same names, frames, shapes) is the previous one with
new placements (:func:`compile_scene`'s ``previous``): it keeps its geometries and pairs,
so a thread keeps its ``GeometryData`` (:attr:`CompiledScene.structure`).
Robot geometries come first (same indices as the robot's model), then one geometry per
scene shape.  Pairs:

* robot/robot: the candidate self pairs;
* robot/world object: every robot geometry not fixed to the world (a fixed link against a
  fixed object has a constant distance no ``q`` can change, e.g. the base on its table);
* attached object: against robot geometries on other bodies except its ``touch_links``,
  against world objects, and against attached objects on other bodies.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import List, Mapping, Optional, Sequence, Tuple

import coal
import numpy as np
import pinocchio as pin

from ..errors import InvalidArgument, InvalidFrame
from ros2_ik.core.kinematics.frames import frame_id
from ros2_ik.core.model.frame_names import nameable_frames
from .bounds import BoundTables, build_bound_tables, placed_bound_tables
from .pairs import geometry_link_name
from .robot_geometry import mesh_hull
from .scene import WORLD_FRAME, Box, Cylinder, Mesh, SceneObject, SceneSnapshot, Sphere


@dataclass(frozen=True)
class CompiledScene:
    """Combined geometry and per-pair tables (arrays are read-only, shape ``(P,)``)."""

    version: int
    geom_model: pin.GeometryModel
    pair_names: Tuple[Tuple[str, str], ...]  # link or object name of each side
    padding_m: np.ndarray                    # summed padding of both sides, [m]
    pad_a_m: np.ndarray                      # padding of side a, [m]
    joint_a: np.ndarray                      # parent joint of side a
    joint_b: np.ndarray
    pair_a: np.ndarray                       # geometry index of side a
    pair_b: np.ndarray
    bounds: BoundTables
    #: Per geometry (G,), robot geometries first: the link or object name it belongs to,
    #: its padding [m] and its parent joint (0: fixed in the world).
    geometry_names: Tuple[str, ...]
    geometry_padding_m: np.ndarray
    geometry_joint: np.ndarray
    #: The scene's objects, sorted by name (what :func:`compile_scene` compares).
    objects: Tuple[SceneObject, ...]
    #: Shared by the versions that differ only in where their objects are: the same
    #: coal geometries (shared, not copied) and the same pairs.  A ``pin.GeometryData``
    #: built on one of them serves every other (its distance functors read the
    #: geometries through the GeometryObjects of the version it was built on, which
    #: hold the same coal objects; placements come from ``oMg``).
    structure: object

    @property
    def num_pairs(self) -> int:
        """Number of checked pairs ``P``."""
        return len(self.pair_names)


def coal_shape(shape) -> coal.CollisionGeometry:
    """Return the coal geometry of a scene shape."""
    if isinstance(shape, Box):
        return coal.Box(*shape.size_m)
    if isinstance(shape, Sphere):
        return coal.Sphere(shape.radius_m)
    if isinstance(shape, Cylinder):
        return coal.Cylinder(shape.radius_m, shape.length_m)
    if isinstance(shape, Mesh):
        return mesh_hull(shape.vertices_m, shape.triangles)
    raise InvalidArgument(f"unknown shape {type(shape).__name__}")


@dataclass
class _Side:
    name: str      # link or object name reported to the user
    joint: int
    padding_m: float
    attached: bool
    touch: frozenset = frozenset()


def _frame_of(model: pin.Model, obj: SceneObject) -> Tuple[int, pin.SE3]:
    """Parent joint and ``T_joint_frame`` of the object's frame (world: joint 0)."""
    if obj.frame_id == WORLD_FRAME and not model.existFrame(WORLD_FRAME):
        return 0, pin.SE3.Identity()
    if not model.existFrame(obj.frame_id):
        raise InvalidFrame(obj.frame_id, nameable_frames(model) + [WORLD_FRAME])
    frame = model.frames[frame_id(model, obj.frame_id)]  # the first of its name
    if not obj.attached and frame.parentJoint != 0:
        raise InvalidArgument(
            f"world object '{obj.name}' is in frame '{obj.frame_id}' that moves with the "
            "robot; give its pose in a fixed frame, or attach it to that link"
        )
    return frame.parentJoint, frame.placement


def _object_placements(model, obj: SceneObject) -> Tuple[int, List[pin.SE3]]:
    """Parent joint of ``obj`` and ``T_joint_shape`` of each of its shapes."""
    joint, T_joint_frame = _frame_of(model, obj)
    T_joint_object = T_joint_frame * pin.SE3(obj.T_frame_object)
    return joint, [T_joint_object * pin.SE3(instance.T_object_shape)
                   for instance in obj.shapes]


def _add_object(model, geom_model, obj: SceneObject, sides: List[_Side]) -> None:
    joint, placements = _object_placements(model, obj)
    touch = frozenset(obj.touch_links) | {obj.frame_id}
    for k, (instance, placement) in enumerate(zip(obj.shapes, placements)):
        geom = pin.GeometryObject(f"{obj.name}/{k}", joint, 0, placement,
                                  coal_shape(instance.shape))
        geom_model.addGeometryObject(geom)
        sides.append(_Side(obj.name, joint, 0.0, obj.attached, touch))


def _same_shapes(a: SceneObject, b: SceneObject) -> bool:
    """Whether ``b`` is ``a`` moved: the same name, frame, attachment and shapes."""
    return (a.name == b.name and a.frame_id == b.frame_id and a.attached == b.attached
            and a.touch_links == b.touch_links and len(a.shapes) == len(b.shapes)
            and all(x.shape is y.shape or x.shape == y.shape
                    for x, y in zip(a.shapes, b.shapes)))


def _robot_sides(model, robot_geom, padding_m, link_padding_m) -> List[_Side]:
    sides = []
    for geom in robot_geom.geometryObjects:
        link = geometry_link_name(model, geom)
        sides.append(_Side(link, geom.parentJoint,
                           float(link_padding_m.get(link, padding_m)), False))
    return sides


def _scene_pair_wanted(a: _Side, b: _Side, a_is_robot: bool) -> bool:
    """Whether shape side ``b`` (scene) is checked against side ``a`` (robot or scene)."""
    if a.joint == b.joint:
        return False  # same rigid body (world/world included): constant distance
    if a_is_robot:
        return not (b.attached and a.name in b.touch)
    return a.attached or b.attached


def _scene_pairs(sides: List[_Side], n_robot: int) -> List[Tuple[int, int]]:
    pairs = []
    for j in range(n_robot, len(sides)):
        for i in range(j):
            if _scene_pair_wanted(sides[i], sides[j], i < n_robot):
                pairs.append((i, j))
    return pairs


@dataclass(frozen=True)
class RobotPart:
    """What every scene version of one checker shares: the robot's geometries, self pairs.

    ``geom_model`` holds the robot geometries (the robot model's indices) and the self
    pairs; each version copies it (the copy shares the geometries) and adds its scene's.
    """

    geom_model: pin.GeometryModel
    sides: Tuple[_Side, ...]
    self_pairs: np.ndarray  # (S, 2) geometry indices, read-only


def robot_part(model: pin.Model, robot_geom: pin.GeometryModel,
               self_pairs: Sequence[Tuple[int, int]], padding_m: float = 0.0,
               link_padding_m: Optional[Mapping[str, float]] = None) -> RobotPart:
    """Return the :class:`RobotPart` of ``robot_geom`` with ``self_pairs`` and its paddings [m]."""
    geom_model = pin.GeometryModel()
    for geom in robot_geom.geometryObjects:
        geom_model.addGeometryObject(pin.GeometryObject(geom))
    for i, j in self_pairs:
        geom_model.addCollisionPair(pin.CollisionPair(i, j))
    sides = _robot_sides(model, robot_geom, padding_m, dict(link_padding_m or {}))
    return RobotPart(geom_model, tuple(sides), _frozen(self_pairs, np.int64).reshape(-1, 2))


def compile_scene(model: pin.Model, part: RobotPart, snapshot: Optional[SceneSnapshot],
                  previous: Optional[CompiledScene] = None) -> CompiledScene:
    """Combine the robot geometry of ``part`` with the scene objects of ``snapshot``.

    ``previous``: the version before, compiled on the same ``part``.  When ``snapshot``'s
    objects are its objects moved (:func:`_same_shapes`), the new version is
    :func:`_moved` from it.
    """
    objects = tuple(sorted(snapshot.objects.values(), key=lambda o: o.name)) \
        if snapshot else ()
    version = snapshot.version if snapshot else 0
    if previous is not None and len(previous.objects) == len(objects) and all(
            _same_shapes(a, b) for a, b in zip(previous.objects, objects)):
        return _moved(model, part, previous, objects, version)
    geom_model = part.geom_model.copy()
    sides = list(part.sides)
    for obj in objects:
        _add_object(model, geom_model, obj, sides)
    scene_pairs = _scene_pairs(sides, len(part.sides))
    for i, j in scene_pairs:
        geom_model.addCollisionPair(pin.CollisionPair(i, j))
    pairs = np.concatenate((part.self_pairs, np.array(scene_pairs, np.int64).reshape(-1, 2)))
    return _tables(version, geom_model, sides, pairs, objects)


def _moved(model, part: RobotPart, previous: CompiledScene,
           objects: Tuple[SceneObject, ...], version: int) -> CompiledScene:
    """``previous`` with its objects at their places in ``objects`` (same shapes, in order).

    The GeometryModel is copied (the copy shares the coal geometries) and its scene
    geometries placed anew; the pairs and their names and paddings are the previous
    version's, the bound tables' placements are computed again
    (:func:`.bounds.placed_bound_tables`), and the :attr:`~CompiledScene.structure` is
    kept.
    """
    geom_model = previous.geom_model.copy()
    first = len(part.sides)  # the scene's geometries follow the robot's
    geoms = geom_model.geometryObjects
    for obj in objects:
        for placement in _object_placements(model, obj)[1]:
            geoms[first].placement = placement
            first += 1
    return replace(previous, version=version, geom_model=geom_model, objects=objects,
                   bounds=placed_bound_tables(previous.bounds, geom_model))


def _frozen(values, dtype) -> np.ndarray:
    array = np.array(values, dtype=dtype)
    array.setflags(write=False)
    return array


def _tables(version, geom_model, sides: List[_Side], ij: np.ndarray,
            objects: Tuple[SceneObject, ...]) -> CompiledScene:
    pad = np.array([side.padding_m for side in sides], dtype=float)
    joint = np.array([side.joint for side in sides], dtype=np.int64)
    names = [side.name for side in sides]
    i, j = ij[:, 0], ij[:, 1]
    return CompiledScene(
        version=version,
        geom_model=geom_model,
        pair_names=tuple(zip([names[k] for k in i.tolist()], [names[k] for k in j.tolist()])),
        padding_m=_frozen(pad[i] + pad[j], float),
        pad_a_m=_frozen(pad[i], float),
        joint_a=_frozen(joint[i], np.int64),
        joint_b=_frozen(joint[j], np.int64),
        pair_a=_frozen(i, np.int64),
        pair_b=_frozen(j, np.int64),
        bounds=build_bound_tables(geom_model, ij),
        geometry_names=tuple(names),
        geometry_padding_m=_frozen(pad, float),
        geometry_joint=_frozen(joint, np.int64),
        objects=objects,
        structure=object(),
    )
