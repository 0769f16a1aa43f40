"""Follow MoveIt's ``/monitored_planning_scene`` when ``moveit_msgs`` is importable.

The conversion works on anything shaped like ``moveit_msgs/PlanningScene`` (attribute
names only), so it is unit-tested without MoveIt.  A full scene (``is_diff`` false)
replaces ours; a diff applies its operations in order. Its ``fixed_frame_transforms``
(every TF frame outside the robot, as move_group sees them) become frames a request may
name (node/request_frames.py).
"""
from __future__ import annotations

from typing import List

from ros2_ik.node.request_frames import moveit_frames
from ros2_ik_interfaces.msg import CollisionObject

_COPIED = ("id", "pose", "primitives", "primitive_poses", "meshes", "mesh_poses")


def _ours(moveit_object, attach_link: str = "", touch_links=()) -> CollisionObject:
    msg = CollisionObject()
    msg.header = moveit_object.header
    for name in _COPIED:
        setattr(msg, name, getattr(moveit_object, name))
    op = moveit_object.operation  # a `byte` field: bytes of length 1 in rclpy
    msg.operation = bytes(op) if isinstance(op, (bytes, bytearray)) else bytes([op])
    msg.attach_link = attach_link
    msg.touch_links = list(touch_links)
    return msg


def scene_operations(planning_scene) -> List[CollisionObject]:
    """Our CollisionObject operations equivalent to a moveit_msgs/PlanningScene."""
    ops: List[CollisionObject] = []
    if not planning_scene.is_diff:
        ops.append(CollisionObject(operation=CollisionObject.CLEAR))
    for obj in planning_scene.world.collision_objects:
        ops.append(_ours(obj))
    for attached in planning_scene.robot_state.attached_collision_objects:
        ops.append(_ours(attached.object, attached.link_name, attached.touch_links))
    return ops


def follow_frames(node, planning_scene) -> None:
    """Take the scene's ``fixed_frame_transforms`` (node/request_frames.py).

    A full scene replaces the frames known; a diff adds or updates those it lists (an
    empty list: no change), as MoveIt's ``PlanningScene`` reads them.
    """
    transforms = planning_scene.fixed_frame_transforms
    if planning_scene.is_diff and not transforms:
        return
    frames, problems = moveit_frames(transforms)
    node.robot.outside_frames.update(frames, replace=not planning_scene.is_diff)
    if problems:
        node.get_logger().warning("monitored_planning_scene: " + "; ".join(problems),
                                  throttle_duration_sec=1.0)


def follow_monitored_scene(node, scene_server, callback_group) -> bool:
    """Subscribe to /monitored_planning_scene; False when moveit_msgs is not installed."""
    try:
        from moveit_msgs.msg import PlanningScene
    except ImportError:
        return False

    def on_scene(msg) -> None:
        scene_server.apply_logged(scene_operations(msg), "monitored_planning_scene")
        follow_frames(node, msg)

    node.create_subscription(PlanningScene, node.config.monitored_scene_topic, on_scene, 5,
                             callback_group=callback_group)
    return True
