"""SRDF groups (core/model/srdf_groups.py) on the real Panda and PR2 SRDFs of example-robot-data.

The expected joint lists are written out from the SRDF and URDF files, not computed.
"""
import pytest

from ros2_ik.core import robots
from ros2_ik.core.model.srdf_groups import srdf_groups, unresolved_reason

PR2_RIGHT = ("r_shoulder_pan_joint", "r_shoulder_lift_joint", "r_upper_arm_roll_joint",
             "r_elbow_flex_joint", "r_forearm_roll_joint", "r_wrist_flex_joint",
             "r_wrist_roll_joint")
PR2_LEFT = tuple("l" + name[1:] for name in PR2_RIGHT)


@pytest.fixture(scope="module")
def pr2():
    robot = robots.load_arm("pr2_right")
    return robot, srdf_groups(robot, robots.srdf_text("pr2_right"))


def test_pr2_chains_joint_lists_and_subgroups(pr2):
    _, groups = pr2
    right = groups["right_arm"]
    assert right.chain and right.base_link == "torso_lift_link"
    assert right.tips == ("r_wrist_roll_link",) and right.joints == PR2_RIGHT
    assert groups["right_arm_and_torso"].joints == ("torso_lift_joint",) + PR2_RIGHT
    arms = groups["arms"]
    assert not arms.chain and arms.tips == ("l_wrist_roll_link", "r_wrist_roll_link")
    assert arms.joints == PR2_LEFT + PR2_RIGHT
    assert groups["head"].joints == ("head_pan_joint", "head_tilt_joint")
    assert groups["head"].tips == ("head_tilt_link",)
    assert groups["torso"].joints == ("torso_lift_joint",)
    # whole_body holds the virtual world_joint (not in the URDF): the rest resolves.
    assert set(groups["whole_body"].joints) == set(PR2_LEFT + PR2_RIGHT) | {"torso_lift_joint"}


def test_a_group_of_links_has_the_joints_that_move_them(pr2):
    _, groups = pr2
    gripper = groups["right_gripper"]
    # r_gripper_palm_link hangs on a fixed joint: r_wrist_roll_joint is not the gripper's.
    assert "r_wrist_roll_joint" not in gripper.joints
    assert "r_gripper_l_finger_joint" in gripper.joints
    # The other fingers follow it (URDF <mimic>): the robot moves them, no group does.
    assert "r_gripper_r_finger_joint" not in gripper.joints


def test_panda_joint_list_groups_end_at_their_last_link():
    robot = robots.load_arm("panda")
    groups = srdf_groups(robot, robots.srdf_text("panda"))
    assert groups["arm"].joints == tuple(f"panda_joint{i}" for i in range(1, 8))
    assert groups["arm"].tips == ("panda_link7",) and not groups["arm"].chain
    assert groups["arm_and_hand"].tips == ("panda_link7", "panda_leftfinger")


def test_unresolvable_groups_are_left_out_and_end_effectors_name_the_tip():
    robot = robots.load_arm("panda")
    srdf = """<robot name="panda">
      <group name="ok"><chain base_link="panda_link0" tip_link="panda_link8"/></group>
      <group name="no_link"><chain base_link="panda_link0" tip_link="nowhere"/></group>
      <group name="loop_a"><group name="loop_b"/></group>
      <group name="loop_b"><group name="loop_a"/></group>
      <group name="missing_sub"><group name="undefined"/></group>
      <group name="fixed"><link name="panda_hand"/></group>
      <group name="listed"><joint name="panda_joint1"/><joint name="panda_joint2"/></group>
      <group name="typo"><joint name="panda_joint1"/><joint name="panda_jiont2"/></group>
      <group name="fixed_listed"><joint name="panda_joint1"/><joint name="panda_joint8"/>
        <joint name="panda_finger_joint2"/></group>
      <end_effector name="ee" parent_link="panda_link3" parent_group="listed" group="x"/>
    </robot>"""
    groups = srdf_groups(robot, srdf)
    assert sorted(groups) == ["fixed_listed", "listed", "ok"]
    # A fixed joint (panda_joint8) and a mimic one (the second finger) are listed, not moved.
    assert groups["fixed_listed"].joints == ("panda_joint1",)
    assert groups["ok"].joints == tuple(f"panda_joint{i}" for i in range(1, 8))
    assert groups["listed"].tips == ("panda_link3",)
    assert srdf_groups(robot, "") == {} and srdf_groups(robot, None) == {}
    # Why each one is left out (a request naming it gets this, not "unknown group").
    reasons = {name: unresolved_reason(robot, srdf, name)
               for name in ("ok", "listed", "no_link", "loop_a", "missing_sub", "fixed", "nope")}
    assert reasons["ok"] is None and reasons["listed"] is None and reasons["nope"] is None
    assert "unknown frame 'nowhere'" in reasons["no_link"]
    assert "subgroup 'loop_" in reasons["loop_a"] and "cycle" in reasons["loop_a"]
    assert "subgroup 'undefined'" in reasons["missing_sub"]
    assert reasons["fixed"] == "it moves no joint of this model"
    # A joint the URDF lacks (a typo): MoveIt refuses the group; dropping it would lock it.
    assert "unknown joint 'panda_jiont2'" in unresolved_reason(robot, srdf, "typo")
