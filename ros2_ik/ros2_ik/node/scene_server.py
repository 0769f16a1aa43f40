"""Planning-scene input of the node.

The ``collision_object`` topic, the ``apply_planning_scene`` / ``get_planning_scene``
services, and the YAML scene file.  An object placed in a frame that stands for the
model's world, or outside the model (node/request_frames.py: MoveIt's planning frame, a
TF frame of the monitored scene), is put in the world (``"world"``) as it arrives.
"""
from __future__ import annotations

from std_msgs.msg import Header

from ros2_ik.core.collision import load_scene_yaml
from ros2_ik.core.collision.scene import WORLD_FRAME
from ros2_ik.node.conversions import pose_to_se3, se3_to_pose
from ros2_ik.node.parameters import clean_list
from ros2_ik.node.request_frames import placed_in_world
from ros2_ik.node.scene_io import apply_batch, object_to_msg
from ros2_ik_interfaces.msg import CollisionObject
from ros2_ik_interfaces.srv import ApplyPlanningScene, GetPlanningScene


class SceneServer:
    """Feeds the current robot snapshot's planning scene (objects survive model updates)."""

    def __init__(self, node, callback_group) -> None:
        self._node = node
        self._file_loaded = False
        node.create_subscription(CollisionObject, "collision_object", self._on_object, 50,
                                 callback_group=callback_group)
        node.create_service(ApplyPlanningScene, "apply_planning_scene", self._on_apply,
                            callback_group=callback_group)
        node.create_service(GetPlanningScene, "get_planning_scene", self._on_get,
                            callback_group=callback_group)

    def _apply(self, msgs) -> str:
        """Apply a batch; returns '' or the reason nothing was changed."""
        snapshot = self._node.robot.snapshot
        if snapshot is None:
            return "no robot model yet: scene frames cannot be checked"
        try:
            apply_batch(snapshot.scene, [in_world(snapshot, m) for m in msgs],
                        self._node.config.max_mesh_triangles, snapshot.robot.model)
        except Exception as exc:  # noqa: BLE001 - bad input must not kill the node
            return f"{type(exc).__name__}: {exc}"
        return ""

    def _on_object(self, msg: CollisionObject) -> None:
        self.apply_logged([msg], f"collision_object '{msg.id}'")

    def apply_logged(self, msgs, source: str) -> None:
        """Apply a batch from a topic; a bad one is logged (rate-limited) and ignored."""
        reason = self._apply(msgs)
        if reason:
            self._node.get_logger().warning(f"{source} ignored: {reason}",
                                            throttle_duration_sec=1.0)

    def _on_apply(self, request, response):
        reason = self._apply(request.objects)
        response.success, response.message = not reason, reason or "applied"
        return response

    def _on_get(self, _request, response):
        snapshot = self._node.robot.snapshot
        if snapshot is not None:
            scene = snapshot.scene.snapshot()
            response.version = scene.version
            response.objects = [object_to_msg(o) for o in scene.objects.values()]
        return response

    def load_file_once(self) -> None:
        """Load ``scene_file`` into the scene of the first model (later models keep it)."""
        cfg, snapshot = self._node.config, self._node.robot.snapshot
        if self._file_loaded or not cfg.scene_file or snapshot is None:
            return
        self._file_loaded = True
        try:
            objects = load_scene_yaml(cfg.scene_file, clean_list(cfg.allowed_mesh_dirs))
            snapshot.scene.add_all(objects)
        except Exception as exc:  # noqa: BLE001 - a bad scene file is reported, not fatal
            self._node.get_logger().error(f"scene_file {cfg.scene_file} not loaded: {exc}")
            return
        self._node.get_logger().info(f"scene_file: {len(objects)} objects loaded")


#: The operations whose ``pose`` places the object in ``header.frame_id``.
_PLACED = (CollisionObject.ADD, CollisionObject.APPEND, CollisionObject.MOVE)


def in_world(snapshot, msg: CollisionObject) -> CollisionObject:
    """``msg``, or a copy placed in ``"world"`` when its frame resolves to the world.

    A frame of the model, an unknown one (the scene's own check names it) and an attached
    object are left as they came.  The scene's world is the model's, so a floating or
    planar base's parent frame counts as it (``base_moves``).
    """
    frame = msg.header.frame_id
    if msg.operation not in _PLACED or msg.attach_link or frame == WORLD_FRAME:
        return msg
    T_world_frame = placed_in_world(snapshot, frame, True)
    if T_world_frame is None:
        return msg
    T_world_object = T_world_frame * pose_to_se3(msg.pose, f"collision object '{msg.id}'.pose")
    placed = CollisionObject()
    for name in CollisionObject.get_fields_and_field_types():
        setattr(placed, name, getattr(msg, name))
    placed.header = Header(stamp=msg.header.stamp, frame_id=WORLD_FRAME)
    placed.pose = se3_to_pose(T_world_object)
    return placed
