"""The node's inputs built in-process (tests' helper): its configuration, a robot snapshot.

Not a test module.  As ik_node builds them from its parameters and from the
``robot_description`` / ``robot_description_semantic`` topics, without DDS.
"""
from ros2_ik.core.model.robots import ARMS, urdf_text
from ros2_ik.node.parameters import SCHEMA, GroupConfig, NodeConfig
from ros2_ik.node.robot_source import RobotSource


def config(groups=None, **values) -> NodeConfig:
    """Return the node's configuration: every parameter at its default but ``values``."""
    base = {spec.name: spec.default for spec in SCHEMA}
    base.update(values)
    return NodeConfig(base, groups or {})


def snapshot(urdf: str, srdf: str, root_joint=None, planning_limits=None):
    """Return the robot snapshot the node builds from ``urdf`` and ``srdf`` (XML text).

    ``planning_limits``: joint_limits.yaml's (``RobotSource``'s).
    """
    source = RobotSource(root_joint, planning_limits)
    source.set_srdf(srdf)
    source.set_urdf(urdf)
    return source.snapshot


def tiago_arm():
    """``(snapshot, config)``: TIAGo's URDF and one group ``arm`` (its arm, on the lift)."""
    spec = ARMS["tiago"]
    return snapshot(urdf_text("tiago"), ""), config({"arm": GroupConfig("arm", spec.base,
                                                                        spec.tip)})


def transform_stamped(header_frame: str, child_frame: str, T):
    """A ``geometry_msgs/TransformStamped`` of ``pin.SE3`` ``T`` between the two frames."""
    from geometry_msgs.msg import TransformStamped
    from ros2_ik.node.base_pose import transform
    t = TransformStamped(transform=transform(T))
    t.header.frame_id, t.child_frame_id = header_frame, child_frame
    return t
