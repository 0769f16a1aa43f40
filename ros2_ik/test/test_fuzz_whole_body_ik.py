"""Fuzzing ComputeIK on a whole-body group (PR2's planar base, torso, right arm) with hypothesis.

The node's ComputeIK handler (``compute_ik``, as the service calls it) gets sensible
requests on the group ``right_body``, a third of them with one or two fields broken: the
target's frame, position and orientation, the weights, the base seed, the left arm's
``joint_states``; half of them check collisions.  Every answer is a non-success code with
a message, or a SUCCESS that our own check confirms: the wrist by pinocchio FK on a model
built here (base from ``solution_base``, joints by name), and with ``avoid_collisions``
the collision checker at the reply with the left arm where ``joint_states`` put it.  An
exception or INTERNAL_ERROR is a crash: before 2026-11-26 every collision-checked request
on a whole-body group answered INTERNAL_ERROR, and the left arm stayed at zero.
``FUZZ_WHOLE_BODY_IK_EXAMPLES`` sets the count (bench/fuzz.py runs more).
"""
import functools
import math
from collections import Counter

import numpy as np
import pinocchio as pin
import pytest
from hypothesis import given
from hypothesis import strategies as st

pytest.importorskip("rclpy")

from geometry_msgs.msg import Transform  # noqa: E402
from sensor_msgs.msg import MultiDOFJointState  # noqa: E402

from ros2_ik.core import robots  # noqa: E402
from ros2_ik.node import compute_ik as C  # noqa: E402
from ros2_ik.node.parameters import GroupConfig  # noqa: E402
from ros2_ik.node.robot_source import JointStateCache  # noqa: E402
from ros2_ik_interfaces.msg import IKErrorCode  # noqa: E402
from ros2_ik_interfaces.srv import ComputeIK  # noqa: E402
from fuzz_answers import counted, drawn, examples, lie, sendable  # noqa: E402
from node_inputs import config, snapshot  # noqa: E402
from whole_body_checks import clearance_on_robot, full_q  # noqa: E402

STATS: Counter = Counter()
WRIST = "r_wrist_roll_link"
RIGHT_ARM = ("r_shoulder_pan_joint", "r_shoulder_lift_joint", "r_upper_arm_roll_joint",
             "r_elbow_flex_joint", "r_forearm_roll_joint", "r_wrist_flex_joint",
             "r_wrist_roll_joint")
LEFT_ARM = tuple(n.replace("r_", "l_", 1) for n in RIGHT_ARM)
#: The frames the root frame stands for (the base's parent, as MoveIt plans in it).
WORLD = ("odom_combined", "", "universe")
POS_TOL, ORI_TOL, SLACK = 1e-4, 1e-3, 1e-9
BAD_NUMBERS = st.sampled_from([math.nan, math.inf, -math.inf, 1e300, -1e-300])
_number = functools.partial(drawn, bad=BAD_NUMBERS)
FRAMES = st.sampled_from(["nowhere", "base_link", WRIST, "head_plate_frame", "world_joint"])


class PR2:
    """The node's snapshot (the SRDF's planar base), configuration, checker; our own model."""

    snapshot = cfg = checker = model = group = left = None

    @classmethod
    def load(cls):
        if cls.model is None:
            folder = robots.data_dir() / "pr2_description"
            urdf = (folder / "urdf/pr2.urdf").read_text()
            cls.snapshot = snapshot(urdf, (folder / "srdf/pr2.srdf").read_text(), "srdf")
            cls.cfg = config({"right_body": GroupConfig(
                "right_body", "base_footprint", WRIST,
                ("world_joint", "torso_lift_joint") + RIGHT_ARM)}, timeout=0.05)
            cls.checker = C.collision_checker(cls.snapshot, cls.cfg)
            cls.group = C.resolve_group(cls.snapshot, cls.cfg, "right_body", "", "")[0]
            cls.left = cls.snapshot.robot.group(base="torso_lift_link", tip="l_wrist_roll_link")
            cls.model = pin.buildModelFromXML(urdf, pin.JointModelPlanar())
        return cls


def _base_seed(draw, broken: bool) -> MultiDOFJointState:
    if not broken and draw(st.booleans()):
        return MultiDOFJointState()  # no base seed: the node's default
    tf = Transform()
    tf.translation.x, tf.translation.y = draw(st.floats(-2, 2)), draw(st.floats(-2, 2))
    yaw = draw(st.floats(-math.pi, math.pi))
    tf.rotation.z, tf.rotation.w = math.sin(yaw / 2), math.cos(yaw / 2)
    msg = MultiDOFJointState(joint_names=["world_joint"], transforms=[tf])
    msg.header.frame_id = "odom_combined"
    if broken:
        how = draw(st.sampled_from(["name", "nan", "far", "height", "quaternion", "frame"]))
        if how == "name":
            msg.joint_names = [draw(FRAMES)]
        elif how == "nan":
            tf.translation.y = math.nan
        elif how == "far":
            tf.translation.x = draw(st.sampled_from([1e300, 2e4]))
        elif how == "height":
            tf.translation.z = 0.3  # a planar base has none
        elif how == "quaternion":
            tf.rotation.w = tf.rotation.z = 0.0
        else:
            msg.header.frame_id = draw(FRAMES)
    return msg


@st.composite
def whole_body_requests(draw):
    """A ComputeIK request on ``right_body`` and the left arm's joint_states (or None)."""
    broken = set(draw(st.lists(st.sampled_from(
        ["frame", "position", "orientation", "weights", "base", "left"]),
        max_size=2, unique=True))) if draw(st.integers(0, 2)) == 0 else set()
    req = ComputeIK.Request(group_name="right_body", timeout=0.05,
                            random_seed=draw(st.integers(0, 2 ** 31)),
                            avoid_collisions=draw(st.booleans()),
                            position_only=draw(st.booleans()))
    req.target.header.frame_id = draw(FRAMES) if "frame" in broken else \
        draw(st.sampled_from(WORLD))
    p = req.target.pose.position
    p.x = _number(draw, st.floats(-1.5, 2.5), "position" in broken)
    p.y, p.z = draw(st.floats(-1.5, 1.0)), draw(st.floats(0.3, 1.4))
    quat = np.array([draw(st.floats(-1, 1)) for _ in range(4)]) + [0.0, 0.0, 0.0, 1e-3]
    quat /= np.linalg.norm(quat)
    if "orientation" in broken:
        quat = draw(st.sampled_from([np.zeros(4), np.full(4, math.nan), quat * 3.0]))
    o = req.target.pose.orientation
    o.x, o.y, o.z, o.w = (float(v) for v in quat)
    if "weights" in broken:
        req.weights = draw(st.sampled_from([[math.nan] * 6, [-1.0] * 6, [1.0] * 5, [0.0] * 6]))
    elif draw(st.integers(0, 3)) == 0:
        req.weights = [1.0, 1.0, 1.0, 0.0, 0.0, 0.0]
    req.seed_base = _base_seed(draw, "base" in broken)
    left = None
    if "left" in broken:
        left = [draw(BAD_NUMBERS)] + [0.0] * (len(LEFT_ARM) - 1)
    elif draw(st.booleans()):
        left = [draw(st.floats(-0.5, 0.5)) for _ in LEFT_ARM]
    return req, left


def miss(req, res, left) -> str:
    """What our own check says a SUCCESS misses ('' when it holds)."""
    pr2 = PR2.load()
    tf = res.solution_base.transforms[0]
    q = full_q(pr2.model, res.solution.name, res.solution.position, tf)
    data = pr2.model.createData()
    pin.framesForwardKinematics(pr2.model, data, q)
    X = data.oMf[pr2.model.getFrameId(WRIST)]
    p, o = req.target.pose.position, req.target.pose.orientation
    target = pin.XYZQUATToSE3(np.array([p.x, p.y, p.z, o.x, o.y, o.z, o.w]))
    weights = list(req.weights) or [1.0] * 6
    if any(weights[:3]) and np.linalg.norm(X.translation - target.translation) > \
            POS_TOL + SLACK:
        return f"wrist {np.linalg.norm(X.translation - target.translation):.2e} m off"
    if not req.position_only and all(weights[3:]) and np.linalg.norm(
            pin.log3(target.rotation.T @ X.rotation)) > ORI_TOL + SLACK:
        return "wrist turned off its target"
    if req.avoid_collisions:
        # where the robot holds the left arm: joint_states' finite values (NaN: ignored)
        held = {n: v for n, v in zip(LEFT_ARM, left or ()) if math.isfinite(v)}
        distance = clearance_on_robot(pr2.checker, pr2.group, held, res)
        if distance < pr2.cfg.minimum_distance - SLACK:
            return f"in collision on the robot: {distance:.4f} m"
    return ""


def check_request(case) -> int:
    """Answer ``case`` as the service does; assert what every answer must be."""
    req, left = case
    pr2 = PR2.load()
    joints = JointStateCache()
    if left is not None:
        joints.update(list(LEFT_ARM), left)
    try:
        res = C.compute_ik(pr2.snapshot, "", pr2.cfg, joints, req).response
    except Exception as exc:  # the handler must answer, not raise
        STATS["crash"] += 1
        raise AssertionError(f"{type(exc).__name__}: {exc}; request={req!r}") from exc
    code = res.error_code.val
    counted(STATS, code, res.message, req)
    sendable(STATS, res, req)
    if code == IKErrorCode.SUCCESS:
        assert req.target.header.frame_id in WORLD, res.message  # a moving frame: refused
        lie(STATS, miss(req, res, left), req)
    return code


@examples("FUZZ_WHOLE_BODY_IK_EXAMPLES", 30)
@given(case=whole_body_requests())
def test_whole_body_compute_ik_fuzz(case):
    check_request(case)
