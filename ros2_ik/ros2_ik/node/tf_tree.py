"""Frames from TF: the newest transform of every ``/tf`` and ``/tf_static`` edge.

ik_node follows ``/tf_static`` (and ``/tf`` with ``tf_frames: all``; ``tf2_msgs/TFMessage``)
when ``tf2_msgs`` is installed (:func:`follow_tf`).  A message's transforms are kept
as they came, the newest per child frame (``header.frame_id`` the parent,
``child_frame_id`` the child, the transform ``T_parent_child``), and read only when a
request names a frame neither the model nor MoveIt's scene knows
(node/request_frames.py): :meth:`TfTree.lookup` composes ``T_target_source`` through
the two frames' nearest common ancestor, with each edge's newest transform, as tf2's
``lookupTransform`` at time 0 does.  The tree reads messages by attribute; only
:func:`follow_tf` touches rclpy.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Tuple

import pinocchio as pin

from ros2_ik.core.errors import InvalidGoal
from ros2_ik.node.conversions import transform_to_se3

#: Longest chain of parents followed (a tree deeper than this, or a loop, is not walked).
MAX_DEPTH = 256
#: The topics each value of the ``tf_frames`` parameter follows.
TOPICS = {"static": ("/tf_static",), "all": ("/tf_static", "/tf"), "none": ()}


class TfTree:
    """The newest ``TransformStamped`` of each TF child frame; safe to read while one is added."""

    def __init__(self) -> None:
        self._edges: Dict[str, object] = {}

    def add(self, transforms) -> None:
        """Keep ``transforms`` (each replaces its child's older one); nothing is converted here."""
        edges = self._edges
        for t in transforms:
            edges[t.child_frame_id.lstrip("/")] = t  # one dict store each: atomic

    def lookup(self, target: str, source: str) -> Optional[pin.SE3]:
        """``T_target_source`` [m]: ``source``'s pose in ``target``; None when not connected.

        An edge with a non-finite translation or a quaternion far from unit breaks the
        chain there (as a missing one does).
        """
        up_source = dict(self._up(source))
        for name, T_name_target in self._up(target):
            T_name_source = up_source.get(name)
            if T_name_source is not None:
                return T_name_target.actInv(T_name_source)
        return None

    def _up(self, frame: str) -> List[Tuple[str, pin.SE3]]:
        """``frame`` and its ancestors, each with ``T_ancestor_frame``, nearest first."""
        chain = [(frame, pin.SE3.Identity())]
        T = chain[0][1]
        for _ in range(MAX_DEPTH):
            edge = self._edges.get(chain[-1][0])
            parent = None if edge is None else edge.header.frame_id.lstrip("/")
            T_parent_child = None if not parent else _transform(edge.transform)
            if T_parent_child is None or any(parent == name for name, _ in chain):
                break
            T = T_parent_child * T
            chain.append((parent, T))
        return chain


def _transform(t) -> Optional[pin.SE3]:
    """``pin.SE3`` of a ``geometry_msgs/Transform``, or None when it is not one."""
    try:
        return transform_to_se3(t, "transform")
    except InvalidGoal:
        return None


def follow_tf(node, tree: TfTree, mode: str, callback_group) -> Tuple[str, ...]:
    """Subscribe ``tree`` to the topics of ``tf_frames`` ``mode`` (:data:`TOPICS`).

    Returns the topics followed: none without ``tf2_msgs``.

    The QoS are tf2_ros's listener's: ``/tf`` reliable, volatile, depth 100;
    ``/tf_static`` reliable, transient local (the latched static frames), depth 100.
    rclpy's reading of a ``/tf`` message costs the node ~0.6 ms per 30 transforms (measured
    at 190 messages a second: 11.5 % of a core against 0.9 % without), hence ``/tf`` only
    when asked.
    """
    topics = TOPICS[mode]
    try:
        from tf2_msgs.msg import TFMessage
    except ImportError:
        return ()
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

    def on_tf(msg) -> None:
        tree.add(msg.transforms)

    dynamic = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE,
                         durability=DurabilityPolicy.VOLATILE)
    static = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE,
                        durability=DurabilityPolicy.TRANSIENT_LOCAL)
    for topic in topics:
        node.create_subscription(TFMessage, topic, on_tf,
                                 static if topic == "/tf_static" else dynamic,
                                 callback_group=callback_group)
    return topics
