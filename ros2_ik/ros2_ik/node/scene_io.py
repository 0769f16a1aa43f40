"""CollisionObject messages <-> the core's planning-scene objects, and batch application.

Mesh objects come as vertex/triangle data in the message; no file path in a request is
ever opened.  A batch is validated as a whole on a scratch copy before the live scene
changes, so a bad entry changes nothing.
"""
from __future__ import annotations

from typing import Iterable, List

import numpy as np
import pinocchio as pin
from geometry_msgs.msg import Point, Pose
from shape_msgs.msg import Mesh as MeshMsg
from shape_msgs.msg import MeshTriangle, SolidPrimitive

from ros2_ik.core.collision import (
    Box, Cylinder, Mesh, PlanningScene, SceneObject, ShapeInstance, Sphere)
from ros2_ik.core.collision.scene import WORLD_FRAME
from ros2_ik.core.errors import InvalidArgument, InvalidGoal
from ros2_ik.node.conversions import pose_to_se3, se3_to_pose
from ros2_ik_interfaces.msg import CollisionObject


class SceneTooLarge(InvalidArgument):
    """A mesh in scene input exceeds ``max_mesh_triangles``."""


def _T(pose: Pose, field: str) -> np.ndarray:
    return pose_to_se3(pose, field).homogeneous


def _primitive(msg: SolidPrimitive, where: str):
    d = list(msg.dimensions)
    if msg.type == SolidPrimitive.BOX and len(d) >= 3:
        return Box(tuple(d[:3]))
    if msg.type == SolidPrimitive.SPHERE and len(d) >= 1:
        return Sphere(d[0])
    if msg.type == SolidPrimitive.CYLINDER and len(d) >= 2:
        return Cylinder(radius_m=d[1], length_m=d[0])
    raise InvalidGoal(f"{where}: unsupported primitive type {msg.type} with {len(d)} "
                      "dimensions; valid: BOX (x y z), SPHERE (r), CYLINDER (height r)")


def _mesh(msg: MeshMsg, where: str, max_triangles: int) -> Mesh:
    if len(msg.triangles) > max_triangles:
        raise SceneTooLarge(f"{where}: {len(msg.triangles)} triangles; the limit is "
                            f"max_mesh_triangles={max_triangles}")
    vertices = np.array([[v.x, v.y, v.z] for v in msg.vertices], dtype=float).reshape(-1, 3)
    triangles = np.array([list(t.vertex_indices) for t in msg.triangles],
                         dtype=np.int64).reshape(-1, 3)
    return Mesh(vertices, triangles)


def object_from_msg(msg: CollisionObject, max_triangles: int) -> SceneObject:
    """Return the scene object of an ADD/APPEND message."""
    where = f"collision object '{msg.id}'"
    if len(msg.primitive_poses) != len(msg.primitives) or \
            len(msg.mesh_poses) != len(msg.meshes):
        raise InvalidGoal(f"{where}: each primitive and mesh needs exactly one pose")
    shapes: List[ShapeInstance] = []
    for k, (prim, pose) in enumerate(zip(msg.primitives, msg.primitive_poses)):
        shapes.append(ShapeInstance(_primitive(prim, f"{where} primitive {k}"),
                                    _T(pose, f"{where}.primitive_poses[{k}]")))
    for k, (mesh, pose) in enumerate(zip(msg.meshes, msg.mesh_poses)):
        shapes.append(ShapeInstance(_mesh(mesh, f"{where} mesh {k}", max_triangles),
                                    _T(pose, f"{where}.mesh_poses[{k}]")))
    attached = bool(msg.attach_link)
    frame = msg.attach_link or msg.header.frame_id or WORLD_FRAME
    return SceneObject(msg.id, tuple(shapes), frame, _T(msg.pose, f"{where}.pose"), attached,
                       tuple(msg.touch_links))


def apply(scene: PlanningScene, msg: CollisionObject, max_triangles: int) -> None:
    """Apply one operation to ``scene`` (raises the core errors on bad input)."""
    op = msg.operation
    if op == CollisionObject.CLEAR:
        scene.clear()
    elif op == CollisionObject.REMOVE:
        scene.remove(msg.id)
    elif op == CollisionObject.MOVE:
        frame = msg.attach_link or msg.header.frame_id or None
        scene.move(msg.id, _T(msg.pose, f"collision object '{msg.id}'.pose"), frame)
    elif op in (CollisionObject.ADD, CollisionObject.APPEND):
        new = object_from_msg(msg, max_triangles)
        if op == CollisionObject.APPEND and msg.id in scene.names():
            old = scene.snapshot().objects[msg.id]
            new = SceneObject(old.name, old.shapes + new.shapes, old.frame_id,
                              old.T_frame_object, old.attached, old.touch_links)
        scene.add(new)
    else:
        raise InvalidGoal(f"unknown operation {op}; valid: ADD=0 REMOVE=1 APPEND=2 MOVE=3 "
                          "CLEAR=4")


def apply_batch(scene: PlanningScene, msgs: Iterable[CollisionObject],
                max_triangles: int, model) -> None:
    """Validate ``msgs`` on a copy of ``scene``, then apply them to ``scene`` in order.

    Frames are checked against the pinocchio ``model``.
    """
    msgs = list(msgs)
    scratch = PlanningScene.for_model(model)
    scratch.add_all(scene.snapshot().objects.values())
    for msg in msgs:
        apply(scratch, msg, max_triangles)
    for msg in msgs:
        apply(scene, msg, max_triangles)


def object_to_msg(obj: SceneObject) -> CollisionObject:
    """Return a CollisionObject (ADD) describing ``obj``."""
    msg = CollisionObject(id=obj.name, operation=CollisionObject.ADD)
    msg.header.frame_id = "" if obj.attached else obj.frame_id
    msg.attach_link = obj.frame_id if obj.attached else ""
    msg.touch_links = list(obj.touch_links)
    msg.pose = se3_to_pose(pin.SE3(obj.T_frame_object))
    for inst in obj.shapes:
        pose = se3_to_pose(pin.SE3(inst.T_object_shape))
        shape = inst.shape
        if isinstance(shape, Mesh):
            mesh = MeshMsg()
            mesh.vertices = [Point(x=float(x), y=float(y), z=float(z))
                             for x, y, z in shape.vertices_m]
            mesh.triangles = [MeshTriangle(vertex_indices=[int(i) for i in t])
                              for t in shape.triangles]
            msg.meshes.append(mesh)
            msg.mesh_poses.append(pose)
            continue
        prim = SolidPrimitive()
        if isinstance(shape, Box):
            prim.type, prim.dimensions = SolidPrimitive.BOX, list(shape.size_m)
        elif isinstance(shape, Sphere):
            prim.type, prim.dimensions = SolidPrimitive.SPHERE, [shape.radius_m]
        else:
            prim.type = SolidPrimitive.CYLINDER
            prim.dimensions = [shape.length_m, shape.radius_m]
        msg.primitives.append(prim)
        msg.primitive_poses.append(pose)
    return msg
