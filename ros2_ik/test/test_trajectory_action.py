"""FollowJointTrajectory outcome reporting (control_msgs is absent here: logic only),
and the fallback to the topic when it is missing."""
import pytest

pytest.importorskip("rclpy")

from action_msgs.msg import GoalStatus  # noqa: E402
from ros2_ik.node.trajectory_action import describe  # noqa: E402


def test_outcomes_are_described_with_names():
    assert describe("/arm/follow", GoalStatus.STATUS_SUCCEEDED, 0, "") == \
        "/arm/follow: succeeded, SUCCESSFUL"
    assert describe("/arm/follow", GoalStatus.STATUS_ABORTED, -4, "joint 3 off path") == \
        "/arm/follow: aborted, PATH_TOLERANCE_VIOLATED (joint 3 off path)"
    assert describe("/a", 99, -17, "") == "/a: status 99, error_code -17"


def test_missing_control_msgs_falls_back_to_the_topic(ros_context):
    import rclpy
    from ros2_ik.node.trajectory_action import make_sender
    try:
        import control_msgs  # noqa: F401
        pytest.skip("control_msgs is installed: the fallback path does not apply")
    except ImportError:
        pass
    node = rclpy.create_node("fallback_test")
    try:
        assert make_sender(node, "", None) is None
        assert make_sender(node, "/arm/follow_joint_trajectory", None) is None
    finally:
        node.destroy_node()
