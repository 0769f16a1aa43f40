"""GetPositionIK <-> ComputeIK mapping on message-shaped stand-ins, end to end through the
core solver on the Panda (every SUCCESS checked by our own pinocchio FK).

The stand-ins have exactly the fields of moveit_msgs (rolling); where moveit_msgs is
installed, the field names and error-code values are compared with the real messages and
the service is called over DDS.
"""
import os
from dataclasses import dataclass, field
from typing import List

import numpy as np
import pinocchio as pin
import pytest

pytest.importorskip("rclpy")

from geometry_msgs.msg import PoseStamped  # noqa: E402
from panda_node import ARM, READY, T_frame  # noqa: E402
from sensor_msgs.msg import JointState, MultiDOFJointState  # noqa: E402

from ros2_ik.core import robots  # noqa: E402
from ros2_ik.node import moveit_bridge as mb  # noqa: E402
from ros2_ik.node.conversions import se3_to_pose  # noqa: E402
from ros2_ik.node.error_codes import CODE_NAMES  # noqa: E402
from ros2_ik.node.parameters import GroupConfig, NodeConfig  # noqa: E402
from ros2_ik.node.robot_source import JointStateCache  # noqa: E402
import node_inputs  # noqa: E402

FINGERS = ["panda_finger_joint1", "panda_finger_joint2"]
BASE, TIP = "panda_link0", "panda_hand"


# --- stand-ins shaped like moveit_msgs ------------------------------------------------
@dataclass
class Duration:                     # builtin_interfaces/Duration
    sec: int = 0
    nanosec: int = 0


@dataclass
class Constraints:                  # moveit_msgs/Constraints
    name: str = ""
    joint_constraints: List = field(default_factory=list)
    position_constraints: List = field(default_factory=list)
    orientation_constraints: List = field(default_factory=list)
    visibility_constraints: List = field(default_factory=list)


@dataclass
class RobotState:                   # moveit_msgs/RobotState
    joint_state: JointState = field(default_factory=JointState)
    multi_dof_joint_state: MultiDOFJointState = field(default_factory=MultiDOFJointState)
    attached_collision_objects: List = field(default_factory=list)
    is_diff: bool = False


@dataclass
class PositionIKRequest:            # moveit_msgs/PositionIKRequest
    group_name: str = ""
    robot_state: RobotState = field(default_factory=RobotState)
    constraints: Constraints = field(default_factory=Constraints)
    avoid_collisions: bool = False
    ik_link_name: str = ""
    pose_stamped: PoseStamped = field(default_factory=PoseStamped)
    ik_link_names: List[str] = field(default_factory=list)
    pose_stamped_vector: List[PoseStamped] = field(default_factory=list)
    timeout: Duration = field(default_factory=Duration)


@dataclass
class MoveItErrorCodes:             # moveit_msgs/MoveItErrorCodes (ROS 2 after Humble)
    val: int = 0
    message: str = ""
    source: str = ""


@dataclass
class HumbleErrorCodes:             # moveit_msgs/MoveItErrorCodes (humble: no strings)
    val: int = 0


@dataclass
class Ros1ErrorCodes:               # moveit_msgs/MoveItErrorCodes (ROS 1 noetic master)
    val: int = 0
    error_message: str = ""
    error_source: str = ""


@dataclass
class Request:                      # moveit_msgs/srv/GetPositionIK request
    ik_request: PositionIKRequest = field(default_factory=PositionIKRequest)


@dataclass
class Response:                     # moveit_msgs/srv/GetPositionIK response
    solution: RobotState = field(default_factory=RobotState)
    error_code: MoveItErrorCodes = field(default_factory=MoveItErrorCodes)


# --- fixtures ---------------------------------------------------------------------------
def panda_model() -> pin.Model:
    return pin.buildModelFromXML(robots.urdf_text("panda"))


def panda_snapshot():
    return node_inputs.snapshot(robots.urdf_text("panda"), robots.srdf_text("panda"))


def panda_config() -> NodeConfig:
    """The node's configuration: the panda_arm group from panda_link0 to panda_hand."""
    return node_inputs.config({"panda_arm": GroupConfig("panda_arm", BASE, TIP)},
                              group_names=["panda_arm"], default_group="panda_arm")


@pytest.fixture(scope="module")
def model():
    return panda_model()


@pytest.fixture(scope="module")
def snapshot():
    return panda_snapshot()


@pytest.fixture
def cfg():
    return panda_config()


def fk(model, names, positions, frame=TIP, ref=BASE) -> pin.SE3:
    """Our own FK: T_ref_frame at the named joint positions (others at neutral)."""
    return T_frame(model, names, positions, frame, ref)


def stamped(T: pin.SE3, frame=BASE) -> PoseStamped:
    msg = PoseStamped()
    msg.header.frame_id = frame
    msg.pose = se3_to_pose(T)
    return msg


def reachable(model, rng) -> pin.SE3:
    q = np.array(READY) + rng.uniform(-0.3, 0.3, 7)
    return fk(model, ARM, q)


def ik_request(T: pin.SE3, **fields) -> Request:
    req = PositionIKRequest(group_name="panda_arm", pose_stamped=stamped(T),
                            timeout=Duration(sec=0, nanosec=500_000_000))
    req.robot_state.joint_state.name = ARM + FINGERS
    req.robot_state.joint_state.position = READY + [0.02, 0.03]
    for name, value in fields.items():
        setattr(req, name, value)
    return Request(ik_request=req)


def call(snapshot, cfg, request, joints=None, response=None) -> Response:
    response = response if response is not None else Response()
    return mb.answer(snapshot, "no model", cfg, joints or JointStateCache(), request, response)


def assert_reaches(model, response, T, tol_m=1e-4, tol_rad=1e-3):
    state = response.solution.joint_state
    T_reached = fk(model, state.name, state.position)
    assert np.linalg.norm(T_reached.translation - T.translation) <= tol_m
    assert np.linalg.norm(pin.log3(T.rotation.T @ T_reached.rotation)) <= tol_rad


# --- pure mapping -----------------------------------------------------------------------
def test_timeout_is_seconds_plus_nanoseconds():
    assert mb.timeout_s(Duration(1, 250_000_000)) == pytest.approx(1.25)
    assert mb.timeout_s(Duration(0, 5_000_000)) == pytest.approx(0.005)
    assert mb.timeout_s(Duration()) == 0.0          # zero: the node's default timeout
    assert mb.timeout_s(Duration(-3, 0)) == 0.0


def test_request_fields_map_onto_compute_ik():
    T = pin.SE3(np.eye(3), np.array([0.4, 0.1, 0.5]))
    req = ik_request(T, avoid_collisions=True, ik_link_name="panda_link7",
                     timeout=Duration(2, 500_000_000)).ik_request
    ours = mb.to_compute_ik(req, ("panda_link0", "panda_link7"))
    assert ours.group_name == "panda_arm" and ours.tip_link == "panda_link7"
    assert ours.target.header.frame_id == BASE
    assert ours.target.pose.position.x == pytest.approx(0.4)
    assert list(ours.seed.name) == ARM + FINGERS
    assert ours.avoid_collisions is True and ours.execute is False
    assert ours.timeout == pytest.approx(2.5)


def test_vector_fields_win_over_the_single_ones():
    near, far = pin.SE3(np.eye(3), np.array([0.4, 0, 0.5])), pin.SE3(np.eye(3), np.ones(3))
    req = ik_request(far, ik_link_name="panda_link7", ik_link_names=["panda_hand"],
                     pose_stamped_vector=[stamped(near)]).ik_request
    (pose,), (link,) = mb.targets_and_links(req)
    assert link == "panda_hand" and pose.pose.position.x == pytest.approx(0.4)


def test_merged_state_keeps_the_seed_order_and_other_joints():
    names, positions = mb.merged_state(["a", "b", "f"], [1, 2, 3], ["b", "c"], [20, 30])
    assert names == ["a", "b", "f", "c"] and positions == [1, 20, 3, 30]
    assert mb.merged_state([], [], ["b"], [2]) == (["b"], [2.0])


def test_every_ik_code_maps_to_a_moveit_code():
    valid = {v for k, v in vars(mb.MoveItCode).items() if k.isupper()}
    for code in CODE_NAMES:
        assert mb.moveit_code(code) in valid
    assert mb.moveit_code(12345) == mb.MoveItCode.FAILURE


def test_codes_are_moveits():
    """The values of moveit_msgs/msg/MoveItErrorCodes.msg (rolling and humble)."""
    expected = dict(SUCCESS=1, FAILURE=99999, TIMED_OUT=-6, PREEMPTED=-7,
                    GOAL_IN_COLLISION=-12, INVALID_GROUP_NAME=-15,
                    INVALID_GOAL_CONSTRAINTS=-16, INVALID_ROBOT_STATE=-17,
                    INVALID_LINK_NAME=-18, FRAME_TRANSFORM_FAILURE=-21, NO_IK_SOLUTION=-31)
    assert {k: v for k, v in vars(mb.MoveItCode).items() if k.isupper()} == expected


# --- end to end through the core on the Panda ------------------------------------------
def test_success_is_the_seed_state_with_the_arm_solved(model, snapshot, cfg):
    rng = np.random.default_rng(0)
    for _ in range(3):
        T = reachable(model, rng)
        res = call(snapshot, cfg, ik_request(T))
        assert res.error_code.val == mb.MoveItCode.SUCCESS, res.error_code.message
        assert res.error_code.source == "ros2_ik"
        state = res.solution.joint_state
        assert state.name == ARM + FINGERS
        assert list(state.position[7:]) == [0.02, 0.03]    # other joints untouched
        assert_reaches(model, res, T)


def test_one_pose_in_the_vector_is_solved(model, snapshot, cfg):
    T = reachable(model, np.random.default_rng(1))
    far = pin.SE3(np.eye(3), np.array([3.0, 0, 0]))
    res = call(snapshot, cfg, ik_request(far, pose_stamped_vector=[stamped(T)],
                                         ik_link_names=[TIP]))
    assert res.error_code.val == mb.MoveItCode.SUCCESS
    assert_reaches(model, res, T)


def test_ik_link_name_other_than_the_tip(model, snapshot, cfg):
    T = fk(model, ARM, np.array(READY) + 0.1, frame="panda_link7")
    res = call(snapshot, cfg, ik_request(T, ik_link_name="panda_link7"))
    assert res.error_code.val == mb.MoveItCode.SUCCESS
    state = res.solution.joint_state
    T_reached = fk(model, state.name, state.position, frame="panda_link7")
    assert np.linalg.norm(T_reached.translation - T.translation) <= 1e-4


def test_empty_robot_state_seeds_from_joint_states(model, snapshot, cfg):
    joints = JointStateCache()
    joints.update(ARM, READY)
    T = reachable(model, np.random.default_rng(2))
    req = ik_request(T)
    req.ik_request.robot_state = RobotState()
    res = call(snapshot, cfg, req, joints)
    assert res.error_code.val == mb.MoveItCode.SUCCESS
    assert res.solution.joint_state.name == ARM
    assert_reaches(model, res, T)


def test_error_codes_of_every_moveit_msgs_version(snapshot, cfg):
    for codes in (HumbleErrorCodes(), Ros1ErrorCodes(), MoveItErrorCodes()):
        res = call(snapshot, cfg, ik_request(pin.SE3.Identity(), group_name="left_arm"),
                   response=Response(error_code=codes))
        assert res.error_code.val == mb.MoveItCode.INVALID_GROUP_NAME
        text = getattr(codes, "message", getattr(codes, "error_message", "left_arm"))
        assert "left_arm" in text


@pytest.mark.parametrize("case,expected", [
    ("unknown group", mb.MoveItCode.INVALID_GROUP_NAME),
    ("unknown link", mb.MoveItCode.INVALID_LINK_NAME),
    ("unknown frame", mb.MoveItCode.FRAME_TRANSFORM_FAILURE),
    ("two poses, one link", mb.MoveItCode.INVALID_LINK_NAME),
    ("constraints", mb.MoveItCode.INVALID_GOAL_CONSTRAINTS),
    ("bad quaternion", mb.MoveItCode.INVALID_GOAL_CONSTRAINTS),
    ("seed lengths differ", mb.MoveItCode.INVALID_ROBOT_STATE),
    ("unreachable", mb.MoveItCode.NO_IK_SOLUTION),
])
def test_failures_map_to_moveit_codes(snapshot, cfg, case, expected):
    T = pin.SE3(np.eye(3), np.array([0.4, 0.0, 0.5]))
    req = ik_request(T, timeout=Duration(0, 50_000_000))
    r = req.ik_request
    if case == "unknown group":
        r.group_name = "left_arm"
    elif case == "unknown link":
        r.ik_link_name = "gripper_tool0"
    elif case == "unknown frame":
        r.pose_stamped.header.frame_id = "world_of_nowhere"
    elif case == "two poses, one link":
        r.pose_stamped_vector = [stamped(T), stamped(T)]
        r.ik_link_names = [TIP]
    elif case == "constraints":             # no counterpart: refused (moveit_constraints)
        r.constraints.visibility_constraints.append(object())
    elif case == "bad quaternion":
        r.pose_stamped.pose.orientation.w = 0.0
    elif case == "seed lengths differ":
        r.robot_state.joint_state.position = READY[:3]
    elif case == "unreachable":
        r.pose_stamped = stamped(pin.SE3(np.eye(3), np.array([2.0, 0.0, 0.5])))
    res = call(snapshot, cfg, req)
    assert res.error_code.val == expected, res.error_code.message
    assert res.error_code.message
    assert res.solution.joint_state.name == []          # solutions only on SUCCESS


def test_a_malformed_request_is_failure_and_the_next_is_answered(model, snapshot, cfg):
    """A message no rosidl type would carry (a bug's stand-in): FAILURE, no exception."""
    req = ik_request(fk(model, ARM, READY))
    req.ik_request.constraints.joint_constraints.append(object())
    res = call(snapshot, cfg, req)
    assert res.error_code.val == mb.MoveItCode.FAILURE
    assert "internal error" in res.error_code.message
    res = call(snapshot, cfg, ik_request(fk(model, ARM, READY)))
    assert res.error_code.val == mb.MoveItCode.SUCCESS, res.error_code.message


def test_no_model_is_failure(cfg):
    res = call(None, cfg, ik_request(pin.SE3.Identity()))
    assert res.error_code.val == mb.MoveItCode.FAILURE
    assert "no model" in res.error_code.message


def test_avoid_collisions_answers_collision_free_or_refuses(model, snapshot, cfg):
    T = reachable(model, np.random.default_rng(4))
    res = call(snapshot, cfg, ik_request(T, avoid_collisions=True))
    assert res.error_code.val in (mb.MoveItCode.SUCCESS, mb.MoveItCode.GOAL_IN_COLLISION,
                                  mb.MoveItCode.NO_IK_SOLUTION), res.error_code.message
    if res.error_code.val == mb.MoveItCode.SUCCESS:
        assert_reaches(model, res, T)


# --- a MoveIt robot: groups from the SRDF, requests as srv_kinematics_plugin sends them ----
#: MoveIt's panda_moveit_config names the arm "panda_arm", a chain to panda_link8.
MOVEIT_PANDA_GROUP = ('<group name="panda_arm"><chain base_link="panda_link0" '
                      'tip_link="panda_link8"/></group>')
PR2_RIGHT = ["r_shoulder_pan_joint", "r_shoulder_lift_joint", "r_upper_arm_roll_joint",
             "r_elbow_flex_joint", "r_forearm_roll_joint", "r_wrist_flex_joint",
             "r_wrist_roll_joint"]
PR2_LEFT = ["l" + name[1:] for name in PR2_RIGHT]


def snapshot_of(arm: str, srdf: str):
    return node_inputs.snapshot(robots.urdf_text(arm), srdf)


def srdf_only_config() -> NodeConfig:
    """No ros2_ik group at all (group_names empty): every group comes from the SRDF."""
    return node_inputs.config(group_names=[], default_group="")


def plugin_request(model, group, base_frame, tips, targets, seed, request_type=Request):
    """GetPositionIK as MoveIt's srv_kinematics_plugin builds it (searchPositionIK).

    avoid_collisions true; robot_state: every joint of the robot (the group's at the
    seed, the others at 0 within their limits); each pose in the kinematics base frame;
    one tip: pose_stamped + ik_link_name, several: pose_stamped_vector + ik_link_names;
    the timeout is never set (0).  ``request_type``: the stand-in or the real
    GetPositionIK.Request.
    """
    request = request_type()
    req = request.ik_request
    req.group_name, req.avoid_collisions = group, True
    names = [model.names[j] for j in range(1, model.njoints) if model.joints[j].nq >= 1]
    values = {n: float(np.clip(0.0, model.lowerPositionLimit[model.joints[model.getJointId(
        n)].idx_q], model.upperPositionLimit[model.joints[model.getJointId(n)].idx_q]))
        if model.joints[model.getJointId(n)].nq == 1 else 0.0 for n in names}
    values.update(seed)
    req.robot_state.joint_state.name = names
    req.robot_state.joint_state.position = [values[n] for n in names]
    poses = [stamped(T, base_frame) for T in targets]
    if len(tips) > 1:
        req.pose_stamped_vector, req.ik_link_names = poses, list(tips)
    else:
        req.pose_stamped, req.ik_link_name = poses[0], tips[0]
    return request


def assert_tip(model, response, frame, ref, T, tol_m=1e-4, tol_rad=1e-3):
    """The returned state puts ``frame`` at ``T`` (in ``ref``), by our own FK."""
    state = response.solution.joint_state
    T_reached = T_frame(model, state.name, state.position, frame, ref)
    assert np.linalg.norm(T_reached.translation - T.translation) <= tol_m
    assert np.linalg.norm(pin.log3(T.rotation.T @ T_reached.rotation)) <= tol_rad


@pytest.fixture(scope="module")
def pr2():
    snapshot = snapshot_of("pr2_right", robots.srdf_text("pr2_right"))
    return snapshot, snapshot.robot.model


def test_panda_group_defined_only_in_the_srdf(model):
    srdf = robots.srdf_text("panda").replace("</robot>", MOVEIT_PANDA_GROUP + "</robot>")
    snapshot = snapshot_of("panda", srdf)
    q = np.array(READY) + 0.1
    T = fk(model, ARM, q, "panda_link8")
    request = plugin_request(model, "panda_arm", BASE, ["panda_link8"], [T],
                             dict(zip(ARM, READY)))
    res = call(snapshot, srdf_only_config(), request)
    assert res.error_code.val == mb.MoveItCode.SUCCESS, res.error_code.message
    assert_tip(model, res, "panda_link8", BASE, T)
    # example-robot-data's own SRDF group "arm" (a joint list) serves as well.
    request.ik_request.group_name = "arm"
    res = call(snapshot, srdf_only_config(), request)
    assert res.error_code.val == mb.MoveItCode.SUCCESS, res.error_code.message
    assert_tip(model, res, "panda_link8", BASE, T)


def test_without_any_configured_group_the_srdf_first_group_is_the_default(model):
    snapshot = snapshot_of("panda", robots.srdf_text("panda"))   # groups arm, hand, ...
    T = fk(model, ARM, np.array(READY) + 0.1, "panda_hand")
    request = plugin_request(model, "", BASE, ["panda_hand"], [T], dict(zip(ARM, READY)))
    res = call(snapshot, srdf_only_config(), request)
    assert res.error_code.val == mb.MoveItCode.SUCCESS, res.error_code.message
    assert_tip(model, res, "panda_hand", BASE, T)
    assert set(ARM) <= set(res.solution.joint_state.name)


def test_pr2_right_arm_defined_only_in_the_srdf(pr2):
    snapshot, model = pr2
    mid = snapshot.robot.group(base="torso_lift_link", tip="r_wrist_roll_link") \
        .mid_configuration()
    T = T_frame(model, PR2_RIGHT, mid + 0.15, "r_wrist_roll_link", "torso_lift_link")
    request = plugin_request(model, "right_arm", "torso_lift_link", ["r_wrist_roll_link"],
                             [T], dict(zip(PR2_RIGHT, mid)))
    res = call(snapshot, srdf_only_config(), request)
    assert res.error_code.val == mb.MoveItCode.SUCCESS, res.error_code.message
    assert_tip(model, res, "r_wrist_roll_link", "torso_lift_link", T)


def test_pr2_arms_two_poses_are_solved_together(pr2):
    snapshot, model = pr2
    tips = ["l_wrist_roll_link", "r_wrist_roll_link"]
    right = snapshot.robot.group(base="torso_lift_link", tip="r_wrist_roll_link")
    left = snapshot.robot.group(base="torso_lift_link", tip="l_wrist_roll_link")
    q_left, q_right = left.mid_configuration() + 0.1, right.mid_configuration() - 0.1
    names, q = PR2_LEFT + PR2_RIGHT, np.concatenate([q_left, q_right])
    targets = [T_frame(model, names, q, tip, "base_footprint") for tip in tips]
    seed = dict(zip(names, np.concatenate([left.mid_configuration(),
                                           right.mid_configuration()])))
    request = plugin_request(model, "arms", "base_footprint", tips, targets, seed)
    # The plugin sends no timeout: the group's kinematics_solver_timeout applies.
    cfg = srdf_only_config()
    cfg = NodeConfig(cfg.values, {}, {"arms": {"kinematics_solver_timeout": 1.0}})
    res = call(snapshot, cfg, request)
    assert res.error_code.val == mb.MoveItCode.SUCCESS, res.error_code.message
    for tip, T in zip(tips, targets):
        assert_tip(model, res, tip, "base_footprint", T)
    # Without ik_link_names the group's tips (the SRDF's order) are used.
    request.ik_request.ik_link_names = []
    res = call(snapshot, cfg, request)
    assert res.error_code.val == mb.MoveItCode.SUCCESS, res.error_code.message
    for tip, T in zip(tips, targets):
        assert_tip(model, res, tip, "base_footprint", T)


def test_kinematics_yaml_timeout_and_position_only(model, snapshot, cfg):
    from ros2_ik.node.parameters import kinematics_parameter
    assert kinematics_parameter("robot_description_kinematics.arm.position_only_ik") == \
        ("arm", "position_only_ik")
    assert kinematics_parameter("robot_description_kinematics.a.b.kinematics_solver_timeout") \
        == ("a.b", "kinematics_solver_timeout")
    assert kinematics_parameter("robot_description_kinematics.arm.kinematics_solver") is None
    assert kinematics_parameter("timeout") is None
    settings = {"kinematics_solver_timeout": 0.3, "position_only_ik": True}
    req = ik_request(pin.SE3.Identity(), timeout=Duration()).ik_request
    ours = mb.to_compute_ik(req, (), settings)
    assert ours.timeout == pytest.approx(0.3) and ours.position_only
    req.timeout = Duration(0, 100_000_000)          # the request's own timeout wins
    assert mb.to_compute_ik(req, (), settings).timeout == pytest.approx(0.1)
    assert not mb.to_compute_ik(req).position_only
    # position_only_ik: a reachable point with an orientation the hand cannot take there.
    T = reachable(model, np.random.default_rng(7))
    flipped = pin.SE3(pin.rpy.rpyToMatrix(np.pi, 0.0, 0.0) @ T.rotation, T.translation)
    kin = NodeConfig(cfg.values, cfg.groups, {"panda_arm": {"position_only_ik": True}})
    res = call(snapshot, kin, ik_request(flipped))
    assert res.error_code.val == mb.MoveItCode.SUCCESS, res.error_code.message
    assert_reaches(model, res, flipped, tol_rad=np.inf)


def test_ros2_ik_config_overrides_the_srdf_group(pr2):
    snapshot, model = pr2
    cfg = srdf_only_config()
    tool = "r_gripper_tool_frame"
    cfg = NodeConfig({**cfg.values, "group_names": ["right_arm"]},
                     {"right_arm": GroupConfig("right_arm", "torso_lift_link", tool)})
    mid = snapshot.robot.group(base="torso_lift_link", tip=tool).mid_configuration()
    T = T_frame(model, PR2_RIGHT, mid + 0.1, tool, "torso_lift_link")
    request = plugin_request(model, "right_arm", "torso_lift_link", [""], [T],
                             dict(zip(PR2_RIGHT, mid)))
    res = call(snapshot, cfg, request)          # no ik_link_name: the group's tip, ours
    assert res.error_code.val == mb.MoveItCode.SUCCESS, res.error_code.message
    assert_tip(model, res, tool, "torso_lift_link", T)


# --- against the real moveit_msgs, where installed ----------------------------------------
def test_stand_ins_have_the_fields_of_moveit_msgs():
    msgs = pytest.importorskip("moveit_msgs.msg", reason="moveit_msgs is not installed")
    srv = pytest.importorskip("moveit_msgs.srv")
    for stand_in, real in ((PositionIKRequest, msgs.PositionIKRequest),
                           (RobotState, msgs.RobotState), (Constraints, msgs.Constraints),
                           (MoveItErrorCodes, msgs.MoveItErrorCodes),
                           (Request, srv.GetPositionIK.Request),
                           (Response, srv.GetPositionIK.Response)):
        assert set(stand_in.__dataclass_fields__) == set(real.get_fields_and_field_types())
    for name, value in vars(mb.MoveItCode).items():
        if name.isupper():
            assert getattr(msgs.MoveItErrorCodes, name) == value


def test_get_position_ik_over_dds(ros_context, model):
    pytest.importorskip("moveit_msgs.srv", reason="moveit_msgs is not installed")
    from ament_index_python.packages import get_package_share_directory
    from moveit_msgs.srv import GetPositionIK
    from ros2_ik.node.harness import Client, NodeProcess, call_resending, wait_for
    from ros2_ik_interfaces.srv import ComputeIK

    config = os.path.join(get_package_share_directory("ros2_ik"), "config", "panda.yaml")
    node = NodeProcess(extra_args=["--params-file", config, "-r", "__ns:=/mv",
                                   "-p", "group_names:=[panda_arm]",
                                   "-p", "default_group:=panda_arm",
                                   "-p", f"groups.panda_arm.base_link:={BASE}",
                                   "-p", f"groups.panda_arm.tip_link:={TIP}"])
    client = Client("moveit_client", namespace="/mv")
    moveit = client.node.create_client(GetPositionIK, "/mv/moveit/compute_ik")
    try:
        client.publish_description(robots.urdf_text("panda"), robots.srdf_text("panda"))
        assert moveit.wait_for_service(timeout_sec=30), node.output()
        T = reachable(model, np.random.default_rng(5))
        request = GetPositionIK.Request()
        stand_in = ik_request(T).ik_request
        for name in ("group_name", "pose_stamped"):
            setattr(request.ik_request, name, getattr(stand_in, name))
        request.ik_request.robot_state.joint_state = stand_in.robot_state.joint_state
        request.ik_request.timeout.nanosec = 500_000_000
        client.wait_for_model(ComputeIK.Request(group_name="panda_arm", target=stamped(T)))
        # Answered once first: a new client's first response can be lost (call_resending).
        call_resending(moveit, request, client.spin)
        # A long ComputeIK (unreachable, 3 s) runs meanwhile: GetPositionIK has its own
        # callback group, so it is answered without waiting for it.
        slow = ComputeIK.Request(group_name="panda_arm", timeout=3.0)
        # Below the base: out of reach, inside the reach bound (no early proof).
        slow.target = stamped(pin.SE3(np.eye(3), np.array([0.0, 0, -0.5])))
        slow_future = client.ik.call_async(slow)
        future = moveit.call_async(request)
        wait_for(future.done, 30, "GetPositionIK", client.spin)
        res = future.result()
        assert res.error_code.val == mb.MoveItCode.SUCCESS, res.error_code
        assert not slow_future.done()
        state = res.solution.joint_state
        T_reached = fk(model, state.name, state.position)
        assert np.linalg.norm(T_reached.translation - T.translation) <= 1e-4
        wait_for(slow_future.done, 30, "the slow ComputeIK", client.spin)
        # Real moveit_msgs constraints: a joint window and the elbow in a box around
        # where a configuration inside that window puts it; the hand at its pose.
        q_true = np.array(READY) + np.array([0.2, 0.1, -0.1, 0.1, 0.1, -0.1, 0.1])
        T, elbow_at = fk(model, ARM, q_true), fk(model, ARM, q_true, "panda_link4").translation
        request.ik_request.pose_stamped = stamped(T)
        R_hand = fk(model, ARM, q_true).rotation
        request.ik_request.constraints = real_constraints(elbow_at, R_hand)
        res = call_resending(moveit, request, client.spin)
        assert res.error_code.val == mb.MoveItCode.SUCCESS, res.error_code
        state = res.solution.joint_state
        q = dict(zip(state.name, state.position))
        assert 0.1 - 1e-6 <= q["panda_joint1"] <= 0.3 + 1e-6
        elbow = fk(model, state.name, state.position, "panda_link4").translation
        assert np.all(np.abs(elbow - elbow_at) <= 0.05 + 1e-4)
        T_reached = fk(model, state.name, state.position)
        assert np.linalg.norm(T_reached.translation - T.translation) <= 1e-4
    finally:
        client.close()
        assert node.stop() == 0, node.output()


def real_constraints(elbow_at: np.ndarray, R_hand: np.ndarray):
    """moveit_msgs Constraints: panda_joint1 in [0.1, 0.3], the elbow in a 0.1 m box, the
    hand within 0.05 rad of ``R_hand`` about x and y (Euler angles)."""
    from moveit_msgs.msg import (BoundingVolume, Constraints, JointConstraint,
                                 OrientationConstraint, PositionConstraint)
    from shape_msgs.msg import SolidPrimitive
    c = Constraints()
    c.joint_constraints = [JointConstraint(joint_name="panda_joint1", position=0.2,
                                           tolerance_above=0.1, tolerance_below=0.1)]
    box = BoundingVolume(primitives=[SolidPrimitive(type=SolidPrimitive.BOX,
                                                    dimensions=[0.1, 0.1, 0.1])],
                         primitive_poses=[se3_to_pose(pin.SE3(np.eye(3), elbow_at))])
    position = PositionConstraint(link_name="panda_link4", constraint_region=box)
    position.header.frame_id = BASE
    c.position_constraints = [position]
    orientation = OrientationConstraint(link_name=TIP, absolute_x_axis_tolerance=0.05,
                                        absolute_y_axis_tolerance=0.05,
                                        absolute_z_axis_tolerance=3.2)
    orientation.header.frame_id = BASE
    orientation.orientation = se3_to_pose(pin.SE3(R_hand, np.zeros(3))).orientation
    c.orientation_constraints = [orientation]
    return c


def once_the_group_exists(moveit, request, client):
    """Call GetPositionIK until the node has the URDF and then the SRDF (its groups)."""
    from ros2_ik.node.harness import call_resending
    for _ in range(100):
        res = call_resending(moveit, request, client.spin)
        if res.error_code.val not in (mb.MoveItCode.INVALID_GROUP_NAME,
                                      mb.MoveItCode.FAILURE):        # FAILURE: no model
            return res
        client.spin(0.1)
    return res


def test_srdf_group_and_kinematics_yaml_over_dds(ros_context, model):
    """ik_node with no group of its own: the SRDF's panda_arm, kinematics.yaml's settings."""
    pytest.importorskip("moveit_msgs.srv", reason="moveit_msgs is not installed")
    from moveit_msgs.srv import GetPositionIK
    from ros2_ik.node.harness import Client, NodeProcess

    prefix = "robot_description_kinematics.panda_arm."
    node = NodeProcess(extra_args=["-r", "__ns:=/mvk", "-p", f"{prefix}position_only_ik:=true",
                                   "-p", f"{prefix}kinematics_solver_timeout:=0.2"])
    client = Client("moveit_kinematics_client", namespace="/mvk")
    moveit = client.node.create_client(GetPositionIK, "/mvk/moveit/compute_ik")
    srdf = robots.srdf_text("panda").replace("</robot>", MOVEIT_PANDA_GROUP + "</robot>")
    try:
        client.publish_description(robots.urdf_text("panda"), srdf)
        assert moveit.wait_for_service(timeout_sec=30), node.output()
        T = fk(model, ARM, np.array(READY) + 0.1, "panda_link8")
        # An orientation the flange cannot take there: only position-only IK succeeds.
        flipped = pin.SE3(pin.rpy.rpyToMatrix(np.pi, 0.0, 0.0) @ T.rotation, T.translation)
        request = plugin_request(model, "panda_arm", BASE, ["panda_link8"], [flipped],
                                 dict(zip(ARM, READY)), GetPositionIK.Request)
        res = once_the_group_exists(moveit, request, client)
        assert res.error_code.val == mb.MoveItCode.SUCCESS, res.error_code
        assert_tip(model, res, "panda_link8", BASE, flipped, tol_rad=np.inf)
    finally:
        client.close()
        assert node.stop() == 0, node.output()


def test_pr2_arms_two_poses_over_dds(ros_context, pr2):
    """The real GetPositionIK of srv_kinematics_plugin for pr2's arms, on a node with no
    group of its own; both tips checked by our FK."""
    pytest.importorskip("moveit_msgs.srv", reason="moveit_msgs is not installed")
    from moveit_msgs.srv import GetPositionIK
    from ros2_ik.node.harness import Client, NodeProcess

    snapshot, model = pr2
    node = NodeProcess(extra_args=[
        "-r", "__ns:=/mvpr2",
        "-p", "robot_description_kinematics.arms.kinematics_solver_timeout:=1.0"])
    client = Client("moveit_pr2_client", namespace="/mvpr2")
    moveit = client.node.create_client(GetPositionIK, "/mvpr2/moveit/compute_ik")
    tips = ["l_wrist_roll_link", "r_wrist_roll_link"]
    left = snapshot.robot.group(base="torso_lift_link", tip=tips[0]).mid_configuration()
    right = snapshot.robot.group(base="torso_lift_link", tip=tips[1]).mid_configuration()
    names = PR2_LEFT + PR2_RIGHT
    q = np.concatenate([left - 0.1, right + 0.1])
    targets = [T_frame(model, names, q, tip, "base_footprint") for tip in tips]
    request = plugin_request(model, "arms", "base_footprint", tips, targets,
                             dict(zip(names, np.concatenate([left, right]))),
                             GetPositionIK.Request)
    try:
        client.publish_description(robots.urdf_text("pr2_right"),
                                   robots.srdf_text("pr2_right"))
        assert moveit.wait_for_service(timeout_sec=30), node.output()
        res = once_the_group_exists(moveit, request, client)
        assert res.error_code.val == mb.MoveItCode.SUCCESS, res.error_code
        for tip, T in zip(tips, targets):
            assert_tip(model, res, tip, "base_footprint", T)
    finally:
        client.close()
        assert node.stop() == 0, node.output()
