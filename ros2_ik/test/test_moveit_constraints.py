"""GetPositionIK's ``constraints``: MoveIt's meaning, checked by our own geometry.

The mapping (node/moveit_constraints.py) is checked two ways: the terms it builds accept
exactly the configurations MoveIt's ``kinematic_constraints`` would (a point inside a box,
sphere or cylinder, computed here from pinocchio FK), and requests with constraints are
answered with solutions that meet them.  Stand-ins shaped like moveit_msgs (checked
against the real messages where installed), as in test_moveit_mapping.py.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import List

import numpy as np
import pinocchio as pin
import pytest

pytest.importorskip("rclpy", reason="ROS 2 Python packages not installed")
from geometry_msgs.msg import Pose, Quaternion, Vector3  # noqa: E402
from panda_node import ARM, READY, full_configuration  # noqa: E402
from shape_msgs.msg import Mesh, SolidPrimitive  # noqa: E402
from std_msgs.msg import Header  # noqa: E402
import test_moveit_mapping as mapping  # noqa: E402
from test_rotation_box import moveit_decide  # noqa: E402
from test_moveit_mapping import Constraints, Duration, call, fk, ik_request  # noqa: E402

from ros2_ik.core.verify import ConstraintTolerance, constraint_violations, \
    update_for_measures  # noqa: E402
from ros2_ik.node import moveit_bridge as mb  # noqa: E402
from ros2_ik.node import moveit_constraints as mc  # noqa: E402
from ros2_ik.node.conversions import se3_to_pose  # noqa: E402
from ros2_ik.node.goal_terms import constraints_of  # noqa: E402
from ros2_ik.node.parameters import NodeConfig  # noqa: E402
from ros2_ik_interfaces.action import ConstrainedIK  # noqa: E402

ELBOW = "panda_link4"


@pytest.fixture(scope="module")
def model():
    return mapping.panda_model()


@pytest.fixture(scope="module")
def snapshot():
    return mapping.panda_snapshot()


@pytest.fixture
def cfg():
    return mapping.panda_config()


@dataclass
class JointConstraint:              # moveit_msgs/JointConstraint
    joint_name: str = ""
    position: float = 0.0
    tolerance_above: float = 0.0
    tolerance_below: float = 0.0
    weight: float = 1.0


@dataclass
class BoundingVolume:               # moveit_msgs/BoundingVolume
    primitives: List = field(default_factory=list)
    primitive_poses: List = field(default_factory=list)
    meshes: List = field(default_factory=list)
    mesh_poses: List = field(default_factory=list)


@dataclass
class PositionConstraint:           # moveit_msgs/PositionConstraint
    header: Header = field(default_factory=Header)
    link_name: str = ""
    target_point_offset: Vector3 = field(default_factory=Vector3)
    constraint_region: BoundingVolume = field(default_factory=BoundingVolume)
    weight: float = 1.0


@dataclass
class OrientationConstraint:        # moveit_msgs/OrientationConstraint
    header: Header = field(default_factory=Header)
    orientation: Quaternion = field(default_factory=Quaternion)
    link_name: str = ""
    absolute_x_axis_tolerance: float = 0.0
    absolute_y_axis_tolerance: float = 0.0
    absolute_z_axis_tolerance: float = 0.0
    parameterization: int = 0
    weight: float = 1.0


def region(kind: int, dims, T_frame_region: pin.SE3, frame: str, link: str = ELBOW,
           offset=(0.05, 0.0, 0.02)) -> PositionConstraint:
    volume = BoundingVolume(primitives=[SolidPrimitive(type=kind, dimensions=list(dims))],
                            primitive_poses=[se3_to_pose(T_frame_region)])
    return PositionConstraint(header=Header(frame_id=frame), link_name=link,
                              target_point_offset=Vector3(x=offset[0], y=offset[1],
                                                          z=offset[2]),
                              constraint_region=volume)


def point_in_region(model, q_full, c: PositionConstraint) -> float:
    """MoveIt's test, computed here: signed margin [m] (> 0 inside) of the link's point."""
    data = model.createData()
    pin.framesForwardKinematics(model, data, q_full)
    o = c.target_point_offset
    p = data.oMf[model.getFrameId(c.link_name)].act(np.array([o.x, o.y, o.z]))
    frame = c.header.frame_id
    T_world_frame = data.oMf[model.getFrameId(frame)] if frame else pin.SE3.Identity()
    pose = c.constraint_region.primitive_poses[0]
    T_frame_region = pin.XYZQUATToSE3(np.array([
        pose.position.x, pose.position.y, pose.position.z, pose.orientation.x,
        pose.orientation.y, pose.orientation.z, pose.orientation.w]))
    local = (T_world_frame * T_frame_region).actInv(p)
    primitive = c.constraint_region.primitives[0]
    d = list(primitive.dimensions)
    if primitive.type == SolidPrimitive.BOX:
        return float(np.min(np.array(d) / 2 - np.abs(local)))
    if primitive.type == SolidPrimitive.SPHERE:
        return d[0] - float(np.linalg.norm(local))
    return min(d[0] / 2 - abs(local[2]), d[1] - float(np.hypot(local[0], local[1])))


def random_full(model, rng) -> np.ndarray:
    return rng.uniform(model.lowerPositionLimit, model.upperPositionLimit)


CASES = [
    (SolidPrimitive.BOX, (0.3, 0.2, 0.4), "panda_link0"),
    (SolidPrimitive.SPHERE, (0.25,), "panda_link0"),
    (SolidPrimitive.CYLINDER, (0.4, 0.15), "panda_link0"),
    (SolidPrimitive.BOX, (0.3, 0.2, 0.4), "panda_link1"),      # a frame the arm moves
    (SolidPrimitive.CYLINDER, (0.4, 0.15), ""),                # '' = the root frame
]


@pytest.mark.parametrize("kind,dims,frame", CASES)
def test_terms_accept_exactly_the_configurations_moveit_does(model, kind, dims, frame):
    """Random configurations: our terms hold where the point lies inside, and only there."""
    rng = np.random.default_rng(kind)
    T = pin.SE3(pin.rpy.rpyToMatrix(0.3, -0.5, 0.8), np.array([0.1, 0.05, 0.45]))
    c = region(kind, dims, T, frame)
    goal = ConstrainedIK.Goal()
    mc.add_to_goal(goal, mb_constraints(position=[c]), tuple(f.name for f in model.frames))
    terms = constraints_of(model, goal)
    data, tight = model.createData(), ConstraintTolerance(1e-9, 1e-9)
    inside = outside = 0
    for _ in range(600):
        q = random_full(model, rng)
        margin = point_in_region(model, q, c)
        if abs(margin) < 1e-6:
            continue
        met = not constraint_violations(update_for_measures(model, data, q, terms), terms,
                                        tight)
        assert met == (margin > 0), (margin, q)
        inside, outside = inside + (margin > 0), outside + (margin < 0)
    assert inside > 30 and outside > 30          # both sides were tried


def mb_constraints(joint=(), position=(), orientation=(), visibility=()):
    return Constraints(joint_constraints=list(joint), position_constraints=list(position),
                       orientation_constraints=list(orientation),
                       visibility_constraints=list(visibility))


def test_joint_windows_have_moveits_meaning(model):
    """Tolerances around the position; beyond a limit: the limit; named twice: both."""
    limits = mc.joint_limits(model)
    lo4, hi4 = model.lowerPositionLimit[3], model.upperPositionLimit[3]
    assert limits["panda_joint4"] == pytest.approx((lo4, hi4, False))
    windows = mc.joint_windows([
        JointConstraint("panda_joint3", 0.4, 0.1, 0.25),
        JointConstraint("panda_joint4", 1.0, 0.1, 0.1),        # above the upper limit
        JointConstraint("panda_joint1", -5.0, 0.1, 0.1),       # below the lower limit
        JointConstraint("panda_joint3", 0.2, 0.2, 0.2),        # again: [0.0, 0.4]
    ], limits)
    assert windows == {"panda_joint3": pytest.approx((0.15, 0.4)),
                       "panda_joint4": pytest.approx((hi4, hi4)),
                       "panda_joint1": pytest.approx((model.lowerPositionLimit[0],) * 2)}
    # a tolerance a few ulps below 0 (upper - position, rounded) is 0; farther, refused
    position = 0.1 + 0.2  # 0.30000000000000004
    below_by_rounding = 0.3 - position
    assert below_by_rounding < 0
    rounded = JointConstraint("panda_joint3", position, below_by_rounding, 0.1)
    assert mc.joint_windows([rounded], limits) == {"panda_joint3": (position - 0.1, position)}
    with pytest.raises(mb.MoveItRequestError, match="tolerance_above must be finite and >= 0"):
        mc.joint_windows([JointConstraint("panda_joint3", 0.3, -1e-9, 0.1)], limits)


def test_a_joint_at_its_limit_through_a_window_beyond_it(model, snapshot, cfg):
    """MoveIt moves a window beyond the limit onto it: the answer has the joint there."""
    q_true = np.array(READY) + np.array([0.2, 0.1, -0.1, 0.0, 0.1, -0.1, 0.1])
    q_true[3] = model.upperPositionLimit[3]
    req = ik_request(fk(model, ARM, q_true))
    req.ik_request.constraints = mb_constraints(
        joint=[JointConstraint("panda_joint4", 0.5, 0.05, 0.05)])
    res = call(snapshot, cfg, req)
    assert res.error_code.val == mb.MoveItCode.SUCCESS, res.error_code.message
    assert solved_state(model, res)["panda_joint4"] == pytest.approx(q_true[3], abs=1e-3)


def solved_state(model, res):
    state = res.solution.joint_state
    return dict(zip(state.name, state.position))


def test_a_joint_window_the_seed_violates_is_met(model, snapshot, cfg):
    """Joint 3 held in a window 0.5 rad from the seed's value: the answer lies in it."""
    q_true = np.array(READY) + np.array([0.2, 0.3, 0.5, 0.2, -0.3, 0.2, 0.1])
    T = fk(model, ARM, q_true)
    req = ik_request(T)
    req.ik_request.constraints = mb_constraints(
        joint=[JointConstraint("panda_joint3", float(q_true[2]), 0.02, 0.03)])
    res = call(snapshot, cfg, req)
    assert res.error_code.val == mb.MoveItCode.SUCCESS, res.error_code.message
    q = solved_state(model, res)
    assert q_true[2] - 0.03 - 1e-6 <= q["panda_joint3"] <= q_true[2] + 0.02 + 1e-6
    state = res.solution.joint_state
    T_reached = fk(model, state.name, state.position)
    assert np.linalg.norm(T_reached.translation - T.translation) <= 1e-4
    assert np.linalg.norm(pin.log3(T.rotation.T @ T_reached.rotation)) <= 1e-3


@pytest.mark.parametrize("kind,dims", [(SolidPrimitive.BOX, (0.03, 0.03, 0.03)),
                                       (SolidPrimitive.SPHERE, (0.02,)),
                                       (SolidPrimitive.CYLINDER, (0.04, 0.015))])
def test_the_elbow_held_in_a_region_with_the_hand_at_a_pose(model, snapshot, cfg, kind, dims):
    """The elbow's point in a small region around where another configuration puts it."""
    q_true = np.array(READY) + np.array([0.3, 0.2, -0.6, 0.3, 0.2, -0.2, 0.1])
    T = fk(model, ARM, q_true)
    full = full_configuration(model, ARM, q_true)
    data = model.createData()
    pin.framesForwardKinematics(model, data, full)
    centre = data.oMf[model.getFrameId(ELBOW)].act(np.array([0.05, 0.0, 0.02]))
    c = region(kind, dims, pin.SE3(pin.rpy.rpyToMatrix(0.2, 0.4, -0.3), centre), "panda_link0")
    assert point_in_region(model, full, c) > 0
    req = ik_request(T)
    req.ik_request.constraints = mb_constraints(position=[c])
    res = call(snapshot, cfg, req)
    assert res.error_code.val == mb.MoveItCode.SUCCESS, res.error_code.message
    state = res.solution.joint_state
    q = full_configuration(model, state.name, state.position)
    assert point_in_region(model, q, c) >= -1e-4        # the node's constraint tolerance
    T_reached = fk(model, state.name, state.position)
    assert np.linalg.norm(T_reached.translation - T.translation) <= 1e-4


def bad(case: str):
    """A constraint MoveIt takes that ros2_ik refuses, or a malformed one."""
    T = pin.SE3.Identity()
    if case == "orientation parameterization":
        return mb_constraints(orientation=[OrientationConstraint(
            link_name=ELBOW, orientation=Quaternion(w=1.0), absolute_x_axis_tolerance=0.1,
            parameterization=7)])
    if case == "orientation quaternion":
        return mb_constraints(orientation=[OrientationConstraint(
            link_name=ELBOW, orientation=Quaternion(w=0.0), absolute_x_axis_tolerance=0.1)])
    if case == "orientation nan tolerance":
        return mb_constraints(orientation=[OrientationConstraint(
            link_name=ELBOW, orientation=Quaternion(w=1.0), absolute_y_axis_tolerance=math.nan)])
    if case == "orientation link":
        return mb_constraints(orientation=[OrientationConstraint(
            link_name="gripper", orientation=Quaternion(w=1.0))])
    if case == "visibility":
        return mb_constraints(visibility=[object()])
    if case == "two primitives":
        c = region(SolidPrimitive.BOX, (1, 1, 1), T, "panda_link0")
        c.constraint_region.primitives *= 2
        c.constraint_region.primitive_poses *= 2
        return mb_constraints(position=[c])
    if case == "mesh":
        c = region(SolidPrimitive.BOX, (1, 1, 1), T, "panda_link0")
        c.constraint_region.meshes = [Mesh()]
        return mb_constraints(position=[c])
    if case == "cone":
        return mb_constraints(position=[region(SolidPrimitive.CONE, (1, 1), T, "panda_link0")])
    if case == "two dimensions for a box":
        return mb_constraints(position=[region(SolidPrimitive.BOX, (1, 1), T, "panda_link0")])
    if case == "negative radius":
        return mb_constraints(position=[region(SolidPrimitive.SPHERE, (-1,), T, "panda_link0")])
    if case == "no primitive pose":
        c = region(SolidPrimitive.BOX, (1, 1, 1), T, "panda_link0")
        c.constraint_region.primitive_poses = []
        return mb_constraints(position=[c])
    if case == "zero quaternion":
        c = region(SolidPrimitive.BOX, (1, 1, 1), T, "panda_link0")
        c.constraint_region.primitive_poses = [Pose(orientation=Quaternion(w=0.0))]
        return mb_constraints(position=[c])
    if case == "nan offset":
        return mb_constraints(position=[region(SolidPrimitive.BOX, (1, 1, 1), T, "panda_link0",
                                               offset=(float("nan"), 0, 0))])
    if case == "unknown link":
        return mb_constraints(position=[region(SolidPrimitive.BOX, (1, 1, 1), T, "panda_link0",
                                               link="gripper")])
    if case == "unknown frame":
        return mb_constraints(position=[region(SolidPrimitive.BOX, (1, 1, 1), T, "map")])
    if case == "unknown joint":
        return mb_constraints(joint=[JointConstraint("elbow", 0.0, 0.1, 0.1)])
    if case == "negative tolerance":
        return mb_constraints(joint=[JointConstraint("panda_joint1", 0.0, -0.1, 0.1)])
    if case == "windows that miss":
        return mb_constraints(joint=[JointConstraint("panda_joint1", 0.0, 0.1, 0.1),
                                     JointConstraint("panda_joint1", 0.5, 0.1, 0.1)])
    if case == "multi-DoF joint":
        return mb_constraints(joint=[JointConstraint("universe", 0.0, 0.1, 0.1)])
    raise AssertionError(case)


@pytest.mark.parametrize("case,code,named", [
    ("orientation parameterization", "INVALID_GOAL_CONSTRAINTS",
     "constraints.orientation_constraints[0].parameterization"),
    ("orientation quaternion", "INVALID_GOAL_CONSTRAINTS",
     "constraints.orientation_constraints[0].orientation"),
    ("orientation nan tolerance", "INVALID_GOAL_CONSTRAINTS",
     "orientation_constraints[0].absolute_y_axis_tolerance"),
    ("orientation link", "INVALID_LINK_NAME", "orientation_constraints[0].link_name"),
    ("visibility", "INVALID_GOAL_CONSTRAINTS", "constraints.visibility_constraints"),
    ("two primitives", "INVALID_GOAL_CONSTRAINTS",
     "constraints.position_constraints[0].constraint_region"),
    ("mesh", "INVALID_GOAL_CONSTRAINTS", "constraints.position_constraints[0].constraint_region"),
    ("cone", "INVALID_GOAL_CONSTRAINTS", "primitives[0]: a cone"),
    ("two dimensions for a box", "INVALID_GOAL_CONSTRAINTS", "primitives[0].dimensions"),
    ("negative radius", "INVALID_GOAL_CONSTRAINTS", "primitives[0].dimensions[0]"),
    ("no primitive pose", "INVALID_GOAL_CONSTRAINTS", "primitive_poses"),
    ("zero quaternion", "INVALID_GOAL_CONSTRAINTS", "primitive_poses[0].orientation"),
    ("nan offset", "INVALID_GOAL_CONSTRAINTS", "target_point_offset.x"),
    ("unknown link", "INVALID_LINK_NAME", "constraints.position_constraints[0].link_name"),
    ("unknown frame", "FRAME_TRANSFORM_FAILURE", "header.frame_id 'map'"),
    ("unknown joint", "INVALID_GOAL_CONSTRAINTS", "joint_constraints[0].joint_name 'elbow'"),
    ("multi-DoF joint", "INVALID_GOAL_CONSTRAINTS", "joint_name 'universe'"),
    ("negative tolerance", "INVALID_GOAL_CONSTRAINTS", "joint_constraints[0].tolerance_above"),
    ("windows that miss", "INVALID_GOAL_CONSTRAINTS", "misses constraints.joint_constraints[0]"),
])
def test_refused_constraints_name_the_field(model, snapshot, cfg, case, code, named):
    req = ik_request(fk(model, ARM, READY), timeout=Duration(0, 50_000_000))
    req.ik_request.constraints = bad(case)
    res = call(snapshot, cfg, req)
    assert res.error_code.val == getattr(mb.MoveItCode, code), res.error_code.message
    assert named in res.error_code.message
    assert res.solution.joint_state.name == []


def test_stand_ins_have_the_fields_of_moveit_msgs():
    msgs = pytest.importorskip("moveit_msgs.msg", reason="moveit_msgs is not installed")
    for stand_in, real in ((JointConstraint, msgs.JointConstraint),
                           (PositionConstraint, msgs.PositionConstraint),
                           (OrientationConstraint, msgs.OrientationConstraint),
                           (BoundingVolume, msgs.BoundingVolume)):
        assert set(stand_in.__dataclass_fields__) == set(real.get_fields_and_field_types())


def test_the_names_of_the_root_and_empty_mean_the_root():
    """MoveIt's planning frame ('world', or a whole-body group's 'odom') is the root, ''."""
    for header in ("odom", "world", ""):
        goal = ConstrainedIK.Goal()
        c = region(SolidPrimitive.BOX, (1, 1, 1), pin.SE3.Identity(), header)
        mc.add_to_goal(goal, mb_constraints(position=[c]), ("odom_not_a_frame", ELBOW),
                       root_names=("universe", "world", "odom"))
        assert goal.position_constraints[0].frame_a == ""


@pytest.mark.parametrize("parameterization", [0, 1])
def test_the_hand_kept_level_while_its_position_is_solved(model, snapshot, cfg,
                                                          parameterization):
    """position_only_ik with an orientation constraint: roll and pitch held, yaw free."""
    q_true = np.array(READY) + np.array([0.3, 0.2, -0.2, 0.3, 0.1, -0.2, 0.4])
    full = full_configuration(model, ARM, q_true)
    data = model.createData()
    pin.framesForwardKinematics(model, data, full)
    R_hand = data.oMf[model.getFrameId("panda_hand")].rotation
    P = pin.exp3(np.array([0.02, 0, 0])) @ pin.exp3(np.array([0, -0.03, 0])) \
        @ pin.exp3(np.array([0, 0, 0.5]))                    # Rx Ry Rz: in the box
    R_desired = R_hand @ P.T
    tol = (0.05, 0.05, math.pi)
    q = pin.Quaternion(R_desired)
    c = OrientationConstraint(orientation=Quaternion(x=q.x, y=q.y, z=q.z, w=q.w),
                              link_name="panda_hand", absolute_x_axis_tolerance=tol[0],
                              absolute_y_axis_tolerance=tol[1], absolute_z_axis_tolerance=tol[2],
                              parameterization=parameterization)
    c.header.frame_id = "panda_link0"
    position_only = NodeConfig(cfg.values, cfg.groups, {"panda_arm": {"position_only_ik": True}})
    req = ik_request(fk(model, ARM, q_true))
    req.ik_request.constraints = mb_constraints(orientation=[c])
    res = call(snapshot, position_only, req)
    assert res.error_code.val == mb.MoveItCode.SUCCESS, res.error_code.message
    state = res.solution.joint_state
    q_solved = full_configuration(model, state.name, state.position)
    pin.framesForwardKinematics(model, data, q_solved)
    R_solved = data.oMf[model.getFrameId("panda_hand")].rotation
    assert moveit_decide(R_desired.T @ R_solved, [t + 1e-3 for t in tol], parameterization)
    assert np.linalg.norm(data.oMf[model.getFrameId("panda_hand")].translation
                          - fk(model, ARM, q_true).translation) <= 1e-4


def test_an_orientation_constraint_that_bounds_nothing_has_no_term(model):
    c = OrientationConstraint(orientation=Quaternion(w=1.0), link_name="panda_hand",
                              absolute_x_axis_tolerance=-4.0, absolute_y_axis_tolerance=2.0,
                              absolute_z_axis_tolerance=math.pi)
    goal = ConstrainedIK.Goal()
    mc.add_to_goal(goal, mb_constraints(orientation=[c]))
    assert list(goal.rotation_box_constraints) == []
    c.absolute_y_axis_tolerance = -0.2             # MoveIt reads |tolerance|
    mc.add_to_goal(goal, mb_constraints(orientation=[c]))
    (term,) = constraints_of(model, goal)
    assert term.rows == (1,) and term.upper_bound.tolist() == [0.2]
    assert term.name == "constraints.orientation_constraints[0]"


def test_the_docs_example_is_answered_as_it_says(model, snapshot, cfg):
    """docs/moveit.md's GetPositionIK call with constraints, answered in this process."""
    import pathlib
    import shlex
    import yaml
    srv = pytest.importorskip("moveit_msgs.srv", reason="moveit_msgs is not installed")
    from rosidl_runtime_py.set_message import set_message_fields
    from ros2_ik.node.robot_source import JointStateCache
    doc = (pathlib.Path(__file__).resolve().parents[2] / "docs" / "moveit.md").read_text()
    text = doc[doc.index("The hand at a position with its z axis kept down"):]
    start = text.index("```bash") + len("```bash")
    words = shlex.split(text[start:text.index("```", start)])
    request = srv.GetPositionIK.Request()
    set_message_fields(request, yaml.safe_load(words[5]))
    res = mb.answer(snapshot, "", cfg, JointStateCache(), request, srv.GetPositionIK.Response())
    assert res.error_code.val == mb.MoveItCode.SUCCESS, res.error_code.message
    state = res.solution.joint_state
    assert abs(solved_state(model, res)["panda_joint1"]) <= 0.5 + 1e-3
    assert fk(model, state.name, state.position, "panda_link4").translation[2] >= 0.3 - 1e-4
    T = fk(model, state.name, state.position)
    assert np.linalg.norm(T.translation - [0.45, 0.1, 0.35]) <= 1e-4
    assert moveit_decide(pin.rpy.rpyToMatrix(np.pi, 0, 0).T @ T.rotation,
                         [0.05 + 1e-3, 0.05 + 1e-3, 3.1416], 0)
