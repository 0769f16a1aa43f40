"""Scene files: YAML text to :class:`~.scene.SceneObject` (schema in config/scene_schema.yaml).

::

    ros2_ik_scene: 1                 # format version, required
    objects:
      - name: table                  # unique, required
        frame_id: world              # "world" or a robot frame (default: world)
        pose: {position: [0.4, 0, -0.2], orientation: [0, 0, 0, 1]}  # T_frame_object
        attached: false              # true: fixed to robot link frame_id, moves with it
        touch_links: []              # attached only: links it may touch
        shapes:                      # one or more, each with an optional pose (T_object_shape)
          - {type: box, size: [1.0, 0.8, 0.04]}               # full extents [m]
          - {type: sphere, radius: 0.05}                      # [m]
          - {type: cylinder, radius: 0.03, length: 0.2}       # axis z, centred [m]
          - {type: mesh, vertices: [[x, y, z], ...], triangles: [[0, 1, 2], ...]}
          - {type: mesh, file: meshes/bin.stl, scale: [1, 1, 1]}   # gated by allowed_dirs

A pose has ``position`` [m] and either ``orientation`` (quaternion x, y, z, w) or ``rpy``
[rad] (fixed-axis roll, pitch, yaw).  Unknown keys are errors (they are usually typos).
A mesh ``file`` is opened only when it resolves (relative paths: from the scene file's
folder) to a path under one of ``allowed_dirs``; otherwise :class:`~.meshes.PathNotAllowed`.
"""
from __future__ import annotations

import os
from typing import Iterable, List, Optional

import coal
import numpy as np
import pinocchio as pin

from ..errors import InvalidArgument
from .meshes import check_allowed_path
from .scene import (Box, Cylinder, Mesh, SceneObject, ShapeInstance, Sphere, as_pose,
                    pose_from_xyz_quat)

FORMAT_VERSION = 1
_OBJECT_KEYS = {"name", "frame_id", "pose", "attached", "touch_links", "shapes"}
_SHAPE_KEYS = {
    "box": {"size"}, "sphere": {"radius"}, "cylinder": {"radius", "length"},
    "mesh": {"vertices", "triangles", "file", "scale"},
}


def _check_keys(entry: dict, valid: set, where: str) -> None:
    if not isinstance(entry, dict):
        raise InvalidArgument(f"{where} must be a mapping, got {type(entry).__name__}")
    unknown = set(entry) - valid
    if unknown:
        raise InvalidArgument(f"{where}: unknown keys {sorted(unknown)}; valid: {sorted(valid)}")


def parse_pose(entry: Optional[dict], where: str) -> np.ndarray:
    """4x4 transform from ``{position, orientation | rpy}`` (``None``: identity)."""
    if entry is None:
        return as_pose(None)
    _check_keys(entry, {"position", "orientation", "rpy"}, where)
    if "orientation" in entry and "rpy" in entry:
        raise InvalidArgument(f"{where}: give either orientation or rpy, not both")
    position = entry.get("position", [0.0, 0.0, 0.0])
    if "rpy" in entry:
        T = np.eye(4)
        T[:3, :3] = pin.rpy.rpyToMatrix(*(float(v) for v in entry["rpy"]))
        T[:3, 3] = position
        return as_pose(T)
    return pose_from_xyz_quat(position, entry.get("orientation", [0.0, 0.0, 0.0, 1.0]))


def _mesh_from_file(entry: dict, base_dir: Optional[str], allowed_dirs, where: str) -> Mesh:
    path = str(entry["file"])
    if base_dir and not os.path.isabs(path) and not path.startswith("file://"):
        path = os.path.join(base_dir, path)
    real = check_allowed_path(path, allowed_dirs)
    if not os.path.isfile(real):
        raise InvalidArgument(f"{where}: mesh file '{real}' does not exist")
    scale = np.asarray(entry.get("scale", [1.0, 1.0, 1.0]), dtype=float)
    bvh = coal.MeshLoader().load(real, scale)
    return Mesh(np.asarray(bvh.vertices()), np.zeros((0, 3), dtype=np.int64))


def parse_shape(entry: dict, base_dir, allowed_dirs, where: str) -> ShapeInstance:
    """One ``shapes`` item to a :class:`ShapeInstance`."""
    kind = entry.get("type") if isinstance(entry, dict) else None
    if kind not in _SHAPE_KEYS:
        raise InvalidArgument(f"{where}: shape type '{kind}'; valid: {sorted(_SHAPE_KEYS)}")
    _check_keys(entry, _SHAPE_KEYS[kind] | {"type", "pose"}, where)
    try:
        if kind == "box":
            shape = Box(tuple(entry["size"]))
        elif kind == "sphere":
            shape = Sphere(entry["radius"])
        elif kind == "cylinder":
            shape = Cylinder(entry["radius"], entry["length"])
        elif "file" in entry:
            shape = _mesh_from_file(entry, base_dir, allowed_dirs, where)
        else:
            shape = Mesh(entry["vertices"], entry.get("triangles", np.zeros((0, 3))))
    except KeyError as exc:
        raise InvalidArgument(f"{where}: {kind} needs '{exc.args[0]}'") from exc
    return ShapeInstance(shape, parse_pose(entry.get("pose"), f"{where}.pose"))


def parse_object(entry: dict, base_dir, allowed_dirs, where: str) -> SceneObject:
    """One ``objects`` item to a :class:`SceneObject`."""
    _check_keys(entry, _OBJECT_KEYS, where)
    if "name" not in entry or "shapes" not in entry:
        raise InvalidArgument(f"{where}: 'name' and 'shapes' are required")
    shapes = tuple(parse_shape(s, base_dir, allowed_dirs, f"{where}.shapes[{k}]")
                   for k, s in enumerate(entry["shapes"] or ()))
    return SceneObject(
        name=str(entry["name"]),
        shapes=shapes,
        frame_id=str(entry.get("frame_id", "world")),
        T_frame_object=parse_pose(entry.get("pose"), f"{where}.pose"),
        attached=bool(entry.get("attached", False)),
        touch_links=tuple(entry.get("touch_links") or ()),
    )


def parse_scene(
    text: str, allowed_dirs: Iterable[str] = (), base_dir: Optional[str] = None
) -> List[SceneObject]:
    """Scene objects of a YAML document (see the module docstring for the schema)."""
    import yaml  # not at import: a third of import ros2_ik.core's time otherwise
    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise InvalidArgument(f"scene file is not valid YAML: {exc}") from exc
    _check_keys(document, {"ros2_ik_scene", "objects"}, "scene")
    if document.get("ros2_ik_scene") != FORMAT_VERSION:
        raise InvalidArgument(f"scene: 'ros2_ik_scene' must be {FORMAT_VERSION}, "
                              f"got {document.get('ros2_ik_scene')!r}")
    objects = [parse_object(o, base_dir, list(allowed_dirs), f"objects[{k}]")
               for k, o in enumerate(document.get("objects") or ())]
    names = [o.name for o in objects]
    if len(set(names)) != len(names):
        raise InvalidArgument(f"scene: duplicate object names in {names}")
    return objects


def load_scene_yaml(path: str, allowed_dirs: Iterable[str] = ()) -> List[SceneObject]:
    """Read a scene file (a configured, trusted path); its mesh files go through the gate."""
    with open(path, encoding="utf-8") as stream:
        text = stream.read()
    return parse_scene(text, allowed_dirs, base_dir=os.path.dirname(os.path.abspath(path)))
