"""The frames a request's poses may be given in, besides the model's own.

A target's ``header.frame_id`` names a frame of the robot model, or one of:

- **the frame the model's world stands for**: the SRDF's fixed ``virtual_joint``'s
  ``parent_frame`` (MoveIt's planning frame, ``world`` in most MoveIt configurations,
  which no URDF needs to define), and, for a group whose floating or planar base moves,
  that base joint's ``parent_frame`` (``odom_combined``);
- **a frame outside the model**: a camera's, a table's, a fiducial's, from MoveIt's
  scene (below), else from TF (node/tf_tree.py: ``/tf`` and ``/tf_static`` as they are
  now, composed to a world name or the model's root link, as move_group's tf2 lookup
  does). MoveIt's ``move_group`` lists every TF frame outside the robot in the
  ``fixed_frame_transforms`` of the planning scene it publishes
  (``/monitored_planning_scene``: its PlanningSceneMonitor looks each one up in TF and
  keeps it up to date), so a node that follows that scene resolves them as move_group's
  ``/compute_ik`` does. Each entry is MoveIt's ``Transforms`` convention:
  ``header.frame_id`` the outside frame, ``child_frame_id`` MoveIt's model frame, and the
  transform ``T_model_outside`` (the outside frame's pose in the model frame).

:func:`resolve` puts a pose given in such a frame into the model's world
(reference ``""``); any other name is left as it is, for the model's own check to refuse
(FRAME_NOT_FOUND, listing the frames). No rclpy here: messages are read by attribute.
"""
from __future__ import annotations

import threading
from typing import Dict, Iterable, List, NamedTuple, Optional, Tuple

import pinocchio as pin

from ros2_ik.core.errors import InvalidGoal
from ros2_ik.node.conversions import transform_to_se3


class OutsideFrame(NamedTuple):
    """A frame outside the model: its pose ``T_reference_frame`` [m] in ``reference``."""

    reference: str
    T_reference_frame: pin.SE3


class OutsideFrames:
    """The outside frames known now, by name; safe to read while a callback writes."""

    def __init__(self) -> None:
        self._frames: Dict[str, OutsideFrame] = {}
        self._lock = threading.Lock()

    def get(self, name: str) -> Optional[OutsideFrame]:
        """Return the frame named ``name``, or None."""
        return self._frames.get(name)

    def names(self) -> Tuple[str, ...]:
        """Return every known outside frame's name, sorted."""
        return tuple(sorted(self._frames))

    def update(self, frames: Dict[str, OutsideFrame], replace: bool) -> None:
        """Add ``frames`` (a newer entry of a name replaces the older); ``replace``: only them."""
        with self._lock:
            merged = {} if replace else dict(self._frames)
            merged.update(frames)
            self._frames = merged  # one assignment: readers see the old or the new table


def moveit_frames(transforms: Iterable) -> Tuple[Dict[str, OutsideFrame], List[str]]:
    """Outside frames of MoveIt's ``fixed_frame_transforms`` (module docstring), and problems.

    An entry with no name, one naming the model frame itself, or a transform with NaN,
    infinite or non-unit rotation components is left out, and described in the problems.
    """
    frames: Dict[str, OutsideFrame] = {}
    problems: List[str] = []
    for k, t in enumerate(transforms):
        name, reference = t.header.frame_id, t.child_frame_id
        where = f"fixed_frame_transforms[{k}] ('{name}')"
        if not name or not reference or name == reference:
            problems.append(f"{where}: needs header.frame_id and another child_frame_id")
            continue
        try:
            frames[name] = OutsideFrame(reference,
                                        transform_to_se3(t.transform, f"{where}.transform"))
        except InvalidGoal as exc:
            problems.append(str(exc))
    return frames, problems


def world_names(snapshot, base_moves: bool) -> Tuple[str, ...]:
    """Names that stand for the model's world in a request (module docstring).

    "universe", and the virtual joint's parent frame where the model is fixed to it (a
    fixed virtual joint) or where the request's group moves the base joint that hangs
    from it.
    """
    names = ["universe"]
    if snapshot.fixed_parent_frame:
        names.append(snapshot.fixed_parent_frame)
    if base_moves and snapshot.base_parent_frame != "universe":
        names.append(snapshot.base_parent_frame)
    return tuple(names)


def resolve(snapshot, frame: str, T_frame_target: pin.SE3, base_moves: bool
            ) -> Tuple[str, pin.SE3]:
    """``(reference_frame, T_ref_target)`` of a pose ``T_frame_target`` [m] given in ``frame``.

    ``""`` (the model's world) for a world name (:func:`world_names`) or an outside frame
    (its pose composed in); a frame of the model, or an unknown name, as it came.
    ``base_moves``: the request's group moves the base (node/base_pose.has_base).
    """
    if not frame or snapshot.robot.has_frame(frame):
        return frame, T_frame_target
    world = world_names(snapshot, base_moves)
    if frame in world:
        return "", T_frame_target
    outside = snapshot.outside_frames.get(frame)
    if outside is not None:
        T_world_reference = _world_placement(snapshot, outside.reference, world)
        if T_world_reference is not None:
            return "", T_world_reference * outside.T_reference_frame * T_frame_target
    T_world_frame = _from_tf(snapshot, frame, world)
    if T_world_frame is None:
        return frame, T_frame_target
    return "", T_world_frame * T_frame_target


def placed_in_world(snapshot, frame: str, base_moves: bool) -> Optional[pin.SE3]:
    """``T_world_frame`` of a non-empty ``frame`` :func:`resolve` puts in the world, else None.

    Markers of a request in such a frame are computed in the world and drawn in the
    request's frame (rviz knows it from TF); a model frame or '' keeps its own path.
    """
    if not frame:
        return None
    resolved, T_world_frame = resolve(snapshot, frame, pin.SE3.Identity(), base_moves)
    return None if resolved else T_world_frame


def _from_tf(snapshot, frame: str, world: Tuple[str, ...]) -> Optional[pin.SE3]:
    """``T_world_frame`` from TF, through a world name or the model's root link, or None."""
    model = snapshot.robot.model
    roots = tuple(f.name for f in model.frames
                  if f.parentJoint == 0 and f.type == pin.FrameType.BODY)[:1]
    for anchor in world + roots:
        T_anchor_frame = snapshot.tf.lookup(anchor, frame)
        if T_anchor_frame is not None:
            return _world_placement(snapshot, anchor, world) * T_anchor_frame
    return None


def _world_placement(snapshot, name: str, world: Tuple[str, ...]) -> Optional[pin.SE3]:
    """``T_world_name`` of a frame that stands still in the world, or None (it moves)."""
    if name in world:
        return pin.SE3.Identity()
    robot = snapshot.robot
    if not robot.has_frame(name):
        return None
    frame = robot.model.frames[robot.frame_id(name)]
    return frame.placement if frame.parentJoint == 0 else None
