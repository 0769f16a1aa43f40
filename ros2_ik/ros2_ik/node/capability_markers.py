"""``~/capability_map``: a saved capability map (``reach``) as a latched MarkerArray for rviz.

One CUBE_LIST marker in the map's base frame: a cube per voxel whose reachability index
is above 0, coloured from dark blue (few orientations) to yellow (all).  The file is
named by the parameter ``capability_map_file`` ('' publishes nothing; a change loads
the new file).  A file that is missing or not a map is logged (naming the parameter) and
the node keeps serving.
"""
from __future__ import annotations

from geometry_msgs.msg import Point
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import ColorRGBA
from visualization_msgs.msg import Marker, MarkerArray

from ros2_ik.core import errors
from ros2_ik.core.maps.capability import load_map

LATCHED = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL,
                     reliability=ReliabilityPolicy.RELIABLE)


def markers(arrays, stamp) -> MarkerArray:
    """Return the map as one CUBE_LIST marker (voxels with a reachability index above 0)."""
    marker = Marker()
    marker.header.frame_id = str(arrays["base_frame"])
    marker.header.stamp = stamp
    marker.ns, marker.id = "capability_map", 0
    marker.type, marker.action = Marker.CUBE_LIST, Marker.ADD
    pitch = 0.9 * float(arrays["pitch_m"])
    marker.scale.x = marker.scale.y = marker.scale.z = pitch
    marker.pose.orientation.w = 1.0
    for p, k in zip(arrays["voxels"].tolist(), arrays["reach_index"].tolist()):
        if k <= 0.0:
            continue
        marker.points.append(Point(x=p[0], y=p[1], z=p[2]))
        marker.colors.append(ColorRGBA(r=k, g=0.2 + 0.7 * k, b=0.6 * (1.0 - k), a=0.6))
    return MarkerArray(markers=[marker])


class CapabilityMapPublisher:
    """Publishes the file of ``capability_map_file`` whenever that parameter changes."""

    def __init__(self, node) -> None:
        self._node = node
        self._pub = node.create_publisher(MarkerArray, "~/capability_map", LATCHED)
        self._loaded = None
        self.refresh()

    def refresh(self) -> None:
        """Load and publish the configured file if it changed since the last call."""
        path = self._node.config.capability_map_file
        if path == self._loaded:
            return
        self._loaded = path
        if not path:
            return
        try:
            arrays = load_map(path)
        except errors.IKError as exc:
            self._node.get_logger().error(f"capability_map_file: {exc}")
            return
        msg = markers(arrays, self._node.get_clock().now().to_msg())
        self._pub.publish(msg)
        self._node.get_logger().info(
            f"capability map {path}: {len(msg.markers[0].points)} reachable voxels on "
            f"~/capability_map")
