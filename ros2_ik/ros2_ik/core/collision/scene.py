"""The planning scene: world objects and objects attached to robot links.

Shapes mirror ``shape_msgs``: :class:`Box`, :class:`Sphere`, :class:`Cylinder` (axis ``z``,
centred) and :class:`Mesh` (vertex and triangle arrays; never a file path here, see
:mod:`.scene_yaml` for the gated file loading).  A :class:`SceneObject` is a set of shapes
with poses ``T_object_shape`` placed at ``T_frame_object`` in the frame ``frame_id``:

* a *world* object (``attached=False``) is in ``"world"`` or a robot frame fixed to the
  world (e.g. ``panda_link0``);
* an *attached* object (``attached=True``) is rigidly fixed to the robot frame
  ``frame_id`` and moves with it; it is not checked against its own link nor against
  ``touch_links`` (as MoveIt's ``AttachedCollisionObject``).

:class:`PlanningScene` is thread-safe and versioned: every change bumps ``version`` and
:meth:`PlanningScene.snapshot` returns an immutable view that checkers compile once per
version.
"""
from __future__ import annotations

import threading
import types
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Optional, Tuple, Union

import numpy as np

from ..errors import InvalidArgument, InvalidFrame
from ..model.world import MAX_COORDINATE_M
from .hull import plate_points

WORLD_FRAME = "world"


def _frozen_array(values, shape_tail: Tuple[int, ...], dtype, what: str) -> np.ndarray:
    array = np.array(values, dtype=dtype)
    if array.ndim != 1 + len(shape_tail) or array.shape[1:] != shape_tail:
        raise InvalidArgument(f"{what} must have shape (n, {shape_tail}), got {array.shape}")
    array.setflags(write=False)
    return array


def _values_equal(a, b) -> bool:
    """Field-wise equality that compares arrays by value (dataclass eq would raise)."""
    if type(a) is not type(b):
        return False
    for name in a.__dataclass_fields__:
        x, y = getattr(a, name), getattr(b, name)
        same = np.array_equal(x, y) if isinstance(x, np.ndarray) else x == y
        if not same:
            return False
    return True


def _positive(value: float, what: str) -> float:
    """Return a shape's size [m]: positive, at most :data:`.world.MAX_COORDINATE_M`.

    coal's EPA gave wrong penetration depths on sizes near the float range.
    """
    value = float(value)
    if not 0.0 < value <= MAX_COORDINATE_M:  # NaN too
        raise InvalidArgument(f"{what} must be a positive length in [m] up to "
                              f"{MAX_COORDINATE_M:g} m, got {value}")
    return value


def as_pose(T) -> np.ndarray:
    """Return a read-only 4x4 transform from a 4x4 array-like (``None``: identity)."""
    matrix = np.eye(4) if T is None else np.array(T, dtype=float)
    if matrix.shape != (4, 4) or not np.all(np.isfinite(matrix)):
        raise InvalidArgument(f"a pose must be a finite 4x4 matrix, got shape {matrix.shape}")
    rotation = matrix[:3, :3]
    if not np.allclose(rotation @ rotation.T, np.eye(3), atol=1e-6):
        raise InvalidArgument("the rotation block of a pose is not orthonormal")
    matrix.setflags(write=False)
    return matrix


def pose_from_xyz_quat(position_m, quaternion_xyzw=(0.0, 0.0, 0.0, 1.0)) -> np.ndarray:
    """4x4 transform from a position [m] and a unit quaternion ``(x, y, z, w)``."""
    x, y, z, w = (float(v) for v in quaternion_xyzw)
    norm = np.sqrt(x * x + y * y + z * z + w * w)
    if not np.isfinite(norm) or norm < 1e-9:
        raise InvalidArgument(f"quaternion {quaternion_xyzw} has zero norm")
    x, y, z, w = x / norm, y / norm, z / norm, w / norm
    T = np.eye(4)
    T[:3, :3] = [
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ]
    T[:3, 3] = np.asarray(position_m, dtype=float).reshape(3)
    return as_pose(T)


@dataclass(frozen=True)
class Box:
    """Axis-aligned box centred at its pose; ``size_m`` = full extents (x, y, z) in [m]."""

    size_m: Tuple[float, float, float]

    def __post_init__(self):
        sizes = tuple(_positive(v, "box size") for v in self.size_m)
        if len(sizes) != 3:
            raise InvalidArgument(f"box size needs 3 values, got {len(sizes)}")
        object.__setattr__(self, "size_m", sizes)


@dataclass(frozen=True)
class Sphere:
    """Sphere centred at its pose; ``radius_m`` in [m]."""

    radius_m: float

    def __post_init__(self):
        object.__setattr__(self, "radius_m", _positive(self.radius_m, "sphere radius"))


@dataclass(frozen=True)
class Cylinder:
    """Cylinder centred at its pose, axis ``z``; ``radius_m`` and ``length_m`` in [m]."""

    radius_m: float
    length_m: float

    def __post_init__(self):
        object.__setattr__(self, "radius_m", _positive(self.radius_m, "cylinder radius"))
        object.__setattr__(self, "length_m", _positive(self.length_m, "cylinder length"))


@dataclass(frozen=True, eq=False)
class Mesh:
    """Triangle mesh: ``vertices_m`` (n, 3) in [m], ``triangles`` (k, 3) vertex indices.

    Used through its convex hull (like the robot's meshes).
    """

    vertices_m: np.ndarray
    triangles: np.ndarray

    def __post_init__(self):
        vertices = _frozen_array(self.vertices_m, (3,), float, "mesh vertices")
        triangles = _frozen_array(self.triangles, (3,), np.int64, "mesh triangles")
        if len(vertices) < 4 or not np.all(np.isfinite(vertices)):
            raise InvalidArgument("a mesh needs at least 4 finite vertices")
        if len(triangles) and (triangles.min() < 0 or triangles.max() >= len(vertices)):
            raise InvalidArgument("mesh triangle indices must be in [0, len(vertices))")
        plate_points(vertices)  # raises on a mesh whose hull cannot be built
        object.__setattr__(self, "vertices_m", vertices)
        object.__setattr__(self, "triangles", triangles)

    __eq__ = _values_equal
    __hash__ = None  # arrays inside: compared by value, not hashable


Shape = Union[Box, Sphere, Cylinder, Mesh]


@dataclass(frozen=True, eq=False)
class ShapeInstance:
    """A shape at ``T_object_shape`` (4x4) in its object's frame."""

    shape: Shape
    T_object_shape: np.ndarray = field(default_factory=lambda: as_pose(None))

    def __post_init__(self):
        if not isinstance(self.shape, (Box, Sphere, Cylinder, Mesh)):
            raise InvalidArgument(f"unknown shape type {type(self.shape).__name__}; "
                                  "valid: [Box, Cylinder, Mesh, Sphere]")
        object.__setattr__(self, "T_object_shape", as_pose(self.T_object_shape))

    __eq__ = _values_equal
    __hash__ = None


@dataclass(frozen=True, eq=False)
class SceneObject:
    """Named collision object: shapes placed at ``T_frame_object`` in ``frame_id``."""

    name: str
    shapes: Tuple[ShapeInstance, ...]
    frame_id: str = WORLD_FRAME
    T_frame_object: np.ndarray = field(default_factory=lambda: as_pose(None))
    attached: bool = False
    touch_links: Tuple[str, ...] = ()

    def __post_init__(self):
        if not self.name:
            raise InvalidArgument("a scene object needs a non-empty name")
        shapes = tuple(s if isinstance(s, ShapeInstance) else ShapeInstance(s)
                       for s in self.shapes)
        if not shapes:
            raise InvalidArgument(f"scene object '{self.name}' has no shapes")
        if self.attached and self.frame_id == WORLD_FRAME:
            raise InvalidArgument(f"attached object '{self.name}' needs a robot link frame_id")
        object.__setattr__(self, "shapes", shapes)
        object.__setattr__(self, "T_frame_object", as_pose(self.T_frame_object))
        object.__setattr__(self, "touch_links", tuple(self.touch_links))

    __eq__ = _values_equal
    __hash__ = None


@dataclass(frozen=True)
class SceneSnapshot:
    """Immutable view of a scene at one ``version``; ``objects`` maps name to object."""

    version: int
    objects: Mapping[str, SceneObject]


class PlanningScene:
    """Thread-safe, versioned set of :class:`SceneObject` keyed by name.

    Args:
        valid_frames: if given, ``frame_id`` and ``touch_links`` of added objects are
            checked against these names (plus ``"world"``) and rejected with InvalidFrame.
        world_frames: if given, a world (not attached) object must be in one of these
            frames (plus ``"world"``): frames that do not move with the robot.
            :meth:`for_model` fills both from a pinocchio model.
    """

    def __init__(self, valid_frames: Optional[Iterable[str]] = None,
                 world_frames: Optional[Iterable[str]] = None):
        self._lock = threading.Lock()
        self._objects: dict = {}
        self._version = 0
        self._valid = None if valid_frames is None else frozenset(valid_frames) | {WORLD_FRAME}
        self._world = None if world_frames is None else frozenset(world_frames) | {WORLD_FRAME}

    @classmethod
    def for_model(cls, model) -> "PlanningScene":
        """Scene validating frames against ``model`` (a ``pin.Model``) when objects are added."""
        frames = [frame.name for frame in model.frames]
        fixed = [frame.name for frame in model.frames if frame.parentJoint == 0]
        return cls(valid_frames=frames, world_frames=fixed)

    @property
    def version(self) -> int:
        """Counter bumped by every change."""
        return self._version

    def snapshot(self) -> SceneSnapshot:
        """Return the current objects and version, consistent with each other."""
        with self._lock:
            return SceneSnapshot(self._version, types.MappingProxyType(dict(self._objects)))

    def _check_frames(self, obj: SceneObject) -> None:
        if self._valid is not None:
            for frame in (obj.frame_id,) + obj.touch_links:
                if frame not in self._valid:
                    raise InvalidFrame(frame, self._valid)
        if self._world is not None and not obj.attached and obj.frame_id not in self._world:
            raise InvalidArgument(
                f"world object '{obj.name}' is in frame '{obj.frame_id}' that moves with the "
                f"robot; use a fixed frame {sorted(self._world)} or attach it to that link")

    def add(self, obj: SceneObject) -> None:
        """Add ``obj``, replacing any object of the same name."""
        self.add_all([obj])

    def add_all(self, objects: Iterable[SceneObject]) -> None:
        """Add several objects as one change (one version bump)."""
        objects = list(objects)
        for obj in objects:
            self._check_frames(obj)
        with self._lock:
            for obj in objects:
                self._objects[obj.name] = obj
            self._version += 1

    def move(self, name: str, T_frame_object, frame_id: Optional[str] = None) -> None:
        """Set the pose (and optionally the frame) of an existing object."""
        with self._lock:
            old = self._require(name)
            new = SceneObject(old.name, old.shapes, frame_id or old.frame_id,
                              as_pose(T_frame_object), old.attached, old.touch_links)
            self._check_frames(new)
            self._objects[name] = new
            self._version += 1

    def remove(self, name: str) -> None:
        """Remove an object; an unknown name raises InvalidArgument listing the present ones."""
        with self._lock:
            self._require(name)
            del self._objects[name]
            self._version += 1

    def clear(self) -> None:
        """Remove every object."""
        with self._lock:
            self._objects.clear()
            self._version += 1

    def names(self) -> Tuple[str, ...]:
        """Sorted names of the present objects."""
        with self._lock:
            return tuple(sorted(self._objects))

    def _require(self, name: str) -> SceneObject:
        if name not in self._objects:
            raise InvalidArgument(f"no scene object '{name}'; present: {sorted(self._objects)}")
        return self._objects[name]
