"""Fuzzing GetPositionIK requests with constraints (the Panda), through the service's handler.

A hand pose (or its position: ``position_only_ik``) from a configuration near the ready
pose, with joint, position (boxes, spheres, cylinders, and shapes ros2_ik refuses) and
orientation constraints (XYZ Euler angles or rotation vector) built around that
configuration, so that most problems have a solution; half the requests break one or two
fields (numbers, frames, links, joints, primitives, poses, orientations).  Every answer is
SUCCESS, checked here by our own forward kinematics (the pose, the limits, each joint
window, each region and each orientation with MoveIt's meaning: test_rotation_box's
``moveit_decide``); or another MoveIt code with a message.
An exception, FAILURE (a bug: the model is there) or an unknown code is a failure.
``FUZZ_MOVEIT_EXAMPLES`` sets the count (bench/fuzz.py runs more).
"""
import math
from collections import Counter

import numpy as np
import pinocchio as pin
import pytest
from hypothesis import given
from hypothesis import strategies as st

pytest.importorskip("rclpy")

from geometry_msgs.msg import Quaternion, Vector3  # noqa: E402
from panda_node import ARM, READY, full_configuration  # noqa: E402
from fuzz_answers import examples, lie  # noqa: E402
import test_moveit_constraints as mct  # noqa: E402
import test_moveit_mapping as mapping  # noqa: E402
from test_rotation_box import moveit_decide  # noqa: E402
from moveit_orientation import rotation_inside  # noqa: E402  (bench/, on the path since)

from ros2_ik.node import moveit_bridge as mb  # noqa: E402
from ros2_ik.node.parameters import NodeConfig  # noqa: E402

STATS: Counter = Counter()
CODES = {v: k for k, v in vars(mb.MoveItCode).items() if k.isupper()}
BAD_NUMBERS = st.sampled_from([math.nan, math.inf, -math.inf, -1.0, 1e300, 5e-324])
FRAMES = st.sampled_from(["", "panda_link0", "panda_link3", "panda_hand", "nowhere"])
LINKS = st.sampled_from(["panda_link3", "panda_link4", "panda_link5", "panda_hand",
                         "panda_leftfinger", "", "nowhere"])
JOINTS = st.sampled_from(ARM + ["panda_finger_joint1", "nowhere"])
BREAKS = ["number", "frame", "link", "joint", "primitive", "pose", "orientation"]
TIMEOUT_NS = 100_000_000


class Panda:
    """The node's snapshot, its configuration and our own model (the same URDF)."""

    snapshot = model = cfg = position_only = None

    @classmethod
    def load(cls):
        if cls.model is None:
            cls.model, cls.snapshot = mapping.panda_model(), mapping.panda_snapshot()
            cls.cfg = mapping.panda_config()
            cls.position_only = NodeConfig(cls.cfg.values, cls.cfg.groups,
                                           {"panda_arm": {"position_only_ik": True}})
        return cls


def full_q(names, positions) -> np.ndarray:
    """The model's configuration with ``names`` at ``positions`` (the rest neutral)."""
    model = Panda.load().model
    known = [(n, v) for n, v in zip(names, positions) if model.existJointName(n)]
    return full_configuration(model, [n for n, _ in known], [v for _, v in known])


def _number(draw, good, broken: bool) -> float:
    return draw(BAD_NUMBERS) if broken else good


@st.composite
def requests(draw):
    """A reachable hand pose with constraints around its configuration; some broken."""
    broken = set(draw(st.lists(st.sampled_from(BREAKS), max_size=2, unique=True))) \
        if draw(st.booleans()) else set()
    q_true = np.array(READY) + np.array([draw(st.floats(-0.4, 0.4)) for _ in range(7)])
    model = Panda.load().model
    q_true = np.clip(q_true, model.lowerPositionLimit[:7], model.upperPositionLimit[:7])
    req = mapping.ik_request(mapping.fk(model, ARM, q_true),
                             timeout=mapping.Duration(0, TIMEOUT_NS))
    joints = []
    for k in draw(st.lists(st.integers(0, 6), max_size=2, unique=True)):  # one window each
        name = draw(JOINTS) if "joint" in broken else ARM[k]
        lo = q_true[k] - draw(st.floats(0.0, 0.3))   # a window [lo, hi] holding q_true
        hi = q_true[k] + draw(st.floats(0.0, 0.3))
        position = lo + draw(st.floats(0.0, 1.0)) * (hi - lo)
        joints.append(mct.JointConstraint(
            name, _number(draw, position, "number" in broken), hi - position,
            _number(draw, position - lo, "number" in broken and draw(st.booleans()))))
    regions = [_region(draw, q_true, broken) for _ in range(draw(st.integers(0, 2)))]
    orientation = [_orientation(draw, q_true, broken)
                   for _ in range(draw(st.integers(0, 1)))]
    req.position_only = draw(st.booleans())  # the group's position_only_ik
    req.ik_request.constraints = mct.mb_constraints(joint=joints, position=regions,
                                                    orientation=orientation)
    req.solvable = not broken  # q_true meets every constraint (not asserted: counted)
    return req


def _region(draw, q_true, broken):
    """A position constraint whose region holds the link's point at ``q_true``."""
    kind = draw(st.sampled_from([1, 2, 3, 4, 5])) if "primitive" in broken \
        else draw(st.sampled_from([1, 2, 3]))
    frame = draw(FRAMES) if "frame" in broken else draw(st.sampled_from(["", "panda_link0",
                                                                         "panda_link3"]))
    link = draw(LINKS) if "link" in broken else draw(st.sampled_from(
        ["panda_link3", "panda_link4", "panda_link5", "panda_hand"]))
    offset = [draw(st.floats(-0.1, 0.1)) for _ in range(3)]
    size = draw(st.floats(0.005, 0.3))
    dims = {1: [size] * 3, 2: [size], 3: [size, size / 2]}.get(kind, [size, size])
    if "number" in broken and draw(st.booleans()):
        dims[0] = draw(BAD_NUMBERS)
    T_frame_region = pin.SE3(pin.rpy.rpyToMatrix(*[draw(st.floats(-3, 3)) for _ in range(3)]),
                             np.zeros(3))
    c = mct.region(kind, dims, T_frame_region, frame, link, offset)
    if frame != "nowhere" and link not in ("", "nowhere"):   # centre it on the point
        model, data = Panda.load().model, Panda.model.createData()
        q = full_q(ARM, q_true)
        pin.framesForwardKinematics(model, data, q)
        p = data.oMf[model.getFrameId(link)].act(np.array(offset))
        T_world_frame = data.oMf[model.getFrameId(frame)] if frame else pin.SE3.Identity()
        T_frame_region.translation = T_world_frame.actInv(p)
        c = mct.region(kind, dims, T_frame_region, frame, link, offset)
    if "pose" in broken:
        c.constraint_region.primitive_poses[0].orientation.w = draw(st.sampled_from([0.0, 2.0]))
    if "number" in broken and draw(st.booleans()):
        c.target_point_offset = Vector3(x=draw(BAD_NUMBERS))
    return c


def _orientation(draw, q_true, broken):
    """An orientation constraint the link's rotation at ``q_true`` meets."""
    code = draw(st.sampled_from([0, 1]))
    tol = [draw(st.sampled_from([0.01, 0.1, 0.5, math.pi, 4.0])) for _ in range(3)]
    frame = draw(FRAMES) if "frame" in broken else draw(st.sampled_from(["", "panda_link0",
                                                                         "panda_link2"]))
    link = draw(LINKS) if "link" in broken else draw(st.sampled_from(
        ["panda_link5", "panda_link7", "panda_hand"]))
    # R_desired = R_frame^T R_link P^T at q_true, P inside the box: R_desired^T R_link = P.
    P = rotation_inside(tol, [draw(st.floats(-0.9, 0.9)) for _ in tol], code == 1)
    R = np.eye(3)
    if frame != "nowhere" and link not in ("", "nowhere"):
        model, data = Panda.load().model, Panda.model.createData()
        pin.framesForwardKinematics(model, data, full_q(ARM, q_true))
        R_frame = data.oMf[model.getFrameId(frame)].rotation if frame else np.eye(3)
        R = R_frame.T @ data.oMf[model.getFrameId(link)].rotation @ P.T
    quat = pin.Quaternion(R)
    c = mct.OrientationConstraint(
        orientation=Quaternion(x=quat.x, y=quat.y, z=quat.z, w=quat.w), link_name=link,
        absolute_x_axis_tolerance=tol[0], absolute_y_axis_tolerance=tol[1],
        absolute_z_axis_tolerance=tol[2], parameterization=code)
    c.header.frame_id = frame
    if "orientation" in broken:
        how = draw(st.sampled_from(["parameterization", "quaternion", "tolerance"]))
        if how == "parameterization":
            c.parameterization = draw(st.sampled_from([2, 255]))
        elif how == "quaternion":
            c.orientation = Quaternion(x=0.0, y=0.0, z=0.0, w=draw(st.sampled_from([0.0, 2.0])))
        else:
            c.absolute_z_axis_tolerance = draw(BAD_NUMBERS)
    return c


def violation(req, res) -> str:
    """What our own FK says a SUCCESS misses ('' when it holds)."""
    model = Panda.model
    state = res.solution.joint_state
    solved = dict(zip(state.name, state.position))
    if any(name not in solved for name in ARM):
        return f"joints missing from the answer: {list(state.name)}"
    q = full_q(state.name, state.position)
    lo, hi = model.lowerPositionLimit, model.upperPositionLimit
    if np.any(q < lo - 1e-9) or np.any(q > hi + 1e-9):
        return "outside the joint limits"
    r = req.ik_request
    T_reached = mapping.fk(model, state.name, state.position)
    pose = r.pose_stamped.pose
    T = pin.XYZQUATToSE3(np.array([pose.position.x, pose.position.y, pose.position.z,
                                   pose.orientation.x, pose.orientation.y,
                                   pose.orientation.z, pose.orientation.w]))
    pos = np.linalg.norm(T_reached.translation - T.translation)
    ori = 0.0 if req.position_only else np.linalg.norm(pin.log3(T.rotation.T
                                                                @ T_reached.rotation))
    if pos > 1e-4 + 1e-9 or ori > 1e-3 + 1e-9:
        return f"the pose missed by {pos:.2e} m / {ori:.2e} rad"
    tol_m, tol_rad = Panda.cfg.position_tolerance, Panda.cfg.orientation_tolerance
    for c in r.constraints.joint_constraints:
        v = solved.get(c.joint_name)
        low, high = c.position - c.tolerance_below, c.position + c.tolerance_above
        j = model.joints[model.getJointId(c.joint_name)].idx_q
        if high < lo[j]:       # MoveIt: a window beyond a limit is that limit (configure)
            low = high = lo[j]
        elif low > hi[j]:
            low = high = hi[j]
        if v is None or not low - tol_rad <= v <= high + tol_rad:
            return f"joint {c.joint_name} at {v} outside its window"
    for i, c in enumerate(r.constraints.position_constraints):
        margin = mct.point_in_region(model, q, c)
        if margin < -tol_m - 1e-9:
            return f"position_constraints[{i}]'s point {-margin:.2e} m outside its region"
    data = model.createData()
    pin.framesForwardKinematics(model, data, q)
    for i, c in enumerate(r.constraints.orientation_constraints):
        o = c.orientation
        R_desired = pin.Quaternion(o.w, o.x, o.y, o.z).toRotationMatrix()
        if c.header.frame_id:
            R_desired = data.oMf[model.getFrameId(c.header.frame_id)].rotation @ R_desired
        R_link = data.oMf[model.getFrameId(c.link_name)].rotation
        tol = [abs(getattr(c, f"absolute_{a}_axis_tolerance")) + tol_rad for a in "xyz"]
        if not moveit_decide(R_desired.T @ R_link, tol, c.parameterization):
            return f"orientation_constraints[{i}] violated"
    return ""


def check_request(req) -> int:
    """Answer ``req`` as the service does; assert what every answer must be."""
    panda = Panda.load()
    res = mapping.call(panda.snapshot, panda.position_only if getattr(req, "position_only",
                                                                      False) else panda.cfg,
                       req)
    code = res.error_code.val
    STATS[CODES.get(code, str(code))] += 1
    if code not in CODES or code == mb.MoveItCode.FAILURE:
        STATS["crash"] += 1
        raise AssertionError(f"code {code}: {res.error_code.message}; input={req!r}")
    assert code == mb.MoveItCode.SUCCESS or res.error_code.message.strip(), "no message"
    if code == mb.MoveItCode.SUCCESS:
        lie(STATS, violation(req, res), req)
    elif getattr(req, "solvable", False):
        STATS[f"{CODES[code]} where one exists"] += 1
    return code


@examples("FUZZ_MOVEIT_EXAMPLES", 30)
@given(req=requests())
def test_moveit_constraints_fuzz(req):
    check_request(req)
