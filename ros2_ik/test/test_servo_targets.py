"""Servo targets from messages (node/servo_targets.py), checked by our own FK, no DDS."""
import numpy as np
import pinocchio as pin
import pytest

pytest.importorskip("geometry_msgs")

from geometry_msgs.msg import PoseStamped, TwistStamped  # noqa: E402
from ros2_ik.core import robots  # noqa: E402
from ros2_ik.node.conversions import se3_to_pose  # noqa: E402
from ros2_ik.node.servo_targets import pose_target, twist_target  # noqa: E402


@pytest.fixture(scope="module")
def group():
    return robots.load_group("panda")[1]


def test_pose_in_a_robot_frame_is_taken_at_the_command(group):
    q = group.mid_configuration()
    T_link3_target = pin.SE3(pin.rpy.rpyToMatrix(0.1, 0.2, 0.3), np.array([0.1, 0.2, 0.3]))
    msg = PoseStamped()
    msg.header.frame_id = "panda_link3"  # moves with the arm
    msg.pose = se3_to_pose(T_link3_target)
    T = pose_target(group, q, msg).pose
    expected = group.fk(q, "panda_link3") * T_link3_target
    assert np.allclose(T.homogeneous, expected.homogeneous, atol=1e-12)
    msg.header.frame_id = ""
    assert np.allclose(pose_target(group, q, msg).pose.homogeneous,
                       T_link3_target.homogeneous, atol=1e-12)


def test_twist_axes_tip_or_world_aligned(group):
    q = group.mid_configuration()
    msg = TwistStamped()
    msg.twist.linear.x, msg.twist.angular.z = 0.1, 0.2
    msg.header.frame_id = "panda_hand"
    local = twist_target(group, "panda_hand", q, msg)
    assert not local.twist_in_world and np.allclose(local.twist, [0.1, 0, 0, 0, 0, 0.2])
    msg.header.frame_id = "panda_link2"
    world = twist_target(group, "panda_hand", q, msg)
    R = group.fk(q, "panda_link2").rotation
    assert world.twist_in_world
    assert np.allclose(world.twist[:3], R @ [0.1, 0, 0]) and np.allclose(world.twist[3:],
                                                                         R @ [0, 0, 0.2])


def test_bad_targets_name_the_field(group):
    q = group.mid_configuration()
    msg = PoseStamped()
    msg.header.frame_id = "no_such_frame"
    msg.pose.orientation.w = 1.0
    with pytest.raises(ValueError, match="target_pose.*no_such_frame"):
        pose_target(group, q, msg)
    msg.header.frame_id = ""
    msg.pose.orientation.w = 0.0  # not a rotation
    with pytest.raises(ValueError, match="target_pose"):
        pose_target(group, q, msg)
    twist = TwistStamped()
    twist.twist.linear.x = float("nan")
    with pytest.raises(ValueError, match="target_twist.twist"):
        twist_target(group, "panda_hand", q, twist)
    twist.twist.linear.x = 0.0
    twist.header.frame_id = "nowhere"
    with pytest.raises(ValueError, match="target_twist.header.frame_id"):
        twist_target(group, "panda_hand", q, twist)


def test_targets_in_moveit_planning_frame_and_a_camera_frame():
    """A pose or twist in 'world' (the SRDF's fixed virtual joint's parent) or in a camera
    frame of the monitored scene is taken in the world (node/request_frames.py)."""
    from ros2_ik.node.request_frames import OutsideFrame
    from ros2_ik.node.servo_targets import in_world
    from node_inputs import snapshot
    srdf = ('<robot name="panda"><virtual_joint name="v" type="fixed" parent_frame="world" '
            'child_link="panda_link0"/></robot>')
    snap = snapshot(robots.urdf_text("panda"), srdf)
    group = snap.robot.group("panda_link0", "panda_hand")
    q = group.mid_configuration()
    T_world_camera = pin.SE3(pin.rpy.rpyToMatrix(0.4, -1.0, 2.0), np.array([1.0, 0.2, 0.8]))
    snap.outside_frames.update({"camera": OutsideFrame("world", T_world_camera)}, True)
    T_frame_target = pin.SE3(pin.rpy.rpyToMatrix(0.1, 0.2, 0.3), np.array([0.1, 0.2, 0.3]))
    for frame, T_world_frame in (("world", pin.SE3.Identity()), ("camera", T_world_camera)):
        msg = PoseStamped()
        msg.header.frame_id = frame
        msg.pose = se3_to_pose(T_frame_target)
        T = pose_target(group, q, in_world(snap, group, msg)).pose
        assert np.allclose(T.homogeneous, (T_world_frame * T_frame_target).homogeneous,
                           atol=1e-12)
        twist = TwistStamped()
        twist.header.frame_id = frame
        twist.twist.linear.x, twist.twist.angular.z = 0.1, 0.2
        world = twist_target(group, "panda_hand", q, in_world(snap, group, twist))
        R = T_world_frame.rotation
        assert world.twist_in_world and np.allclose(world.twist[:3], R @ [0.1, 0, 0])
        assert np.allclose(world.twist[3:], R @ [0, 0, 0.2])
    msg.header.frame_id = "panda_link3"  # a model frame: as it came
    assert in_world(snap, group, msg) is msg
