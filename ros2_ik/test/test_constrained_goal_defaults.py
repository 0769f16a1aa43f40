"""What a ConstrainedIK goal means where it leaves a field empty, as ComputeIK does.

In-process: the node's goal handler (``solve_goal``, as the action server calls it) on the
node's own snapshot and configuration; each answer checked by pinocchio on a model of its
own.
"""
import numpy as np
import pinocchio as pin
import pytest

pytest.importorskip("rclpy")

import node_inputs  # noqa: E402
from panda_node import T_frame  # noqa: E402
from ros2_ik.core import robots  # noqa: E402
from ros2_ik.node.constrained_ik import solve_goal  # noqa: E402
from ros2_ik.node.conversions import se3_to_pose  # noqa: E402
from ros2_ik.node.parameters import GroupConfig  # noqa: E402
from ros2_ik.node.robot_source import JointStateCache  # noqa: E402
from ros2_ik_interfaces.action import ConstrainedIK  # noqa: E402
from ros2_ik_interfaces.msg import IKErrorCode, PoseGoal  # noqa: E402

BASE, HAND, OTHER = "panda_link0", "panda_hand", "panda_link7"


@pytest.fixture(scope="module")
def panda():
    """(snapshot, config with group ``arm`` from BASE to HAND, an independent model)."""
    snapshot = node_inputs.snapshot(robots.urdf_text("panda"), robots.srdf_text("panda"))
    cfg = node_inputs.config({"arm": GroupConfig("arm", BASE, HAND)})
    return snapshot, cfg, pin.buildModelFromXML(robots.urdf_text("panda"))


def _goal(T: pin.SE3, tip_link: str = "", goal_tip: str = "") -> ConstrainedIK.Goal:
    goal = ConstrainedIK.Goal(group_name="arm", tip_link=goal_tip, timeout=0.5,
                              random_seed=3)
    goal.pose_goals = [PoseGoal(tip_link=tip_link)]
    goal.pose_goals[0].target.header.frame_id = BASE
    goal.pose_goals[0].target.pose = se3_to_pose(T)
    return goal


def _error(model, result, frame, T) -> float:
    """Distance [m] + angle [rad] from ``frame`` at the answer to ``T``."""
    state = result.solutions[0].joint_state
    err = pin.log6(T.actInv(T_frame(model, state.name, state.position, frame, BASE)))
    return float(np.linalg.norm(err.linear) + np.linalg.norm(err.angular))


@pytest.mark.parametrize("tip_link, goal_tip, frame", [
    ("", "", HAND),          # neither names a link: the group's tip, as ComputeIK
    ("", OTHER, OTHER),      # the goal's tip_link
    (OTHER, HAND, OTHER),    # the pose goal's own link first
])
def test_a_pose_goal_is_for_the_link_it_names_else_the_goal_s_else_the_group_s(
        panda, tip_link, goal_tip, frame):
    snapshot, cfg, model = panda
    arm = [f"panda_joint{k}" for k in range(1, 8)]
    T = T_frame(model, arm, [0.1, -0.6, 0.2, -2.2, 0.1, 1.7, 0.9], frame, BASE)
    result = solve_goal(snapshot, "", cfg, JointStateCache(), _goal(T, tip_link, goal_tip),
                        lambda: False)
    assert result.error_code.val == IKErrorCode.SUCCESS, result.message
    assert _error(model, result, frame, T) < 2e-4
    # and not for the frame a wrong default would have taken
    wrong = OTHER if frame == HAND else HAND
    assert _error(model, result, wrong, T) > 1e-2
