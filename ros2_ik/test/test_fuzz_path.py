"""Fuzzing ComputeIKPath requests (the Panda) with hypothesis, through the service's handler.

Straight hand lines from a ready pose, a third of them with one or two fields broken
(waypoints, tolerances, check steps, ``max_joint_step``, the seed, the velocity scaling,
the timeout, the frames).  Every answer is SUCCESS with every waypoint reached by our own
forward kinematics, within the limits and the joint step; or another code with a message.
An exception, INTERNAL_ERROR or an answer later than its budget allows is a failure.
``FUZZ_PATH_EXAMPLES`` sets the count (bench/fuzz.py runs more).
"""
import functools
import math
import time
from collections import Counter

import numpy as np
import pinocchio as pin
import pytest
from hypothesis import given
from hypothesis import strategies as st

pytest.importorskip("rclpy")

from ros2_ik.node.compute_ik_path import compute_ik_path  # noqa: E402
from ros2_ik.node.conversions import se3_to_pose  # noqa: E402
from ros2_ik.node.robot_source import JointStateCache  # noqa: E402
from fuzz_answers import counted, drawn, examples, lie, sendable  # noqa: E402
from node_inputs import config, snapshot  # noqa: E402
from ros2_ik_interfaces.msg import IKErrorCode  # noqa: E402
from ros2_ik_interfaces.srv import ComputeIKPath  # noqa: E402
from panda_node import ARM, READY, description, pose_errors  # noqa: E402

STATS: Counter = Counter()
#: The node's ``max_timeout`` here [s], and what an answer may take beyond it [s].
MAX_TIMEOUT_S, LATE_S = 0.3, 2.0
BAD_NUMBERS = st.sampled_from([math.nan, math.inf, -math.inf, -1.0, 0.0, 1e300, 1e-300,
                               5e-324])
_number = functools.partial(drawn, bad=BAD_NUMBERS)  # a number, or a broken one
NAMES = st.sampled_from(["", "nowhere", "panda_link0", "panda_hand", "panda_link3",
                         "panda_joint1", "universe"])


class Panda:
    """The node's snapshot and our own model (from the same URDF)."""

    snapshot = model = None

    @classmethod
    def load(cls):
        if cls.model is None:
            urdf, srdf, cls.model = description()
            cls.snapshot = snapshot(urdf, srdf)
        return cls


def _cfg():
    return config(max_timeout=MAX_TIMEOUT_S)


def _hand(q, frame: str = "panda_hand") -> pin.SE3:
    """``T_world_frame`` at arm configuration ``q`` (7,) by our own FK."""
    model = Panda.load().model
    data = model.createData()
    full = pin.neutral(model)
    full[:7] = q
    pin.framesForwardKinematics(model, data, full)
    return data.oMf[model.getFrameId(frame)]


@st.composite
def path_requests(draw):
    """A hand line from the ready pose; a third of the requests with broken fields."""
    broken = set(draw(st.lists(st.sampled_from(
        ["waypoint", "tolerance", "check", "step", "seed", "scaling", "timeout", "frame"]),
        max_size=2, unique=True))) if draw(st.integers(0, 2)) == 0 else set()
    T0 = _hand(READY)
    offset = np.array([draw(st.floats(-0.15, 0.15)) for _ in range(3)])
    count = draw(st.integers(1, 6))
    req = ComputeIKPath.Request()
    req.header.frame_id = draw(NAMES) if "frame" in broken else "panda_link0"
    req.tip_link = draw(NAMES.filter(bool)) if "frame" in broken and draw(st.booleans()) \
        else "panda_hand"  # named: "" is the node's default tip, which the check cannot know
    req.waypoints = [se3_to_pose(pin.SE3(T0.rotation, T0.translation
                                         + (k / max(count - 1, 1)) * offset))
                     for k in range(count)]
    if "waypoint" in broken:
        how = draw(st.sampled_from(["empty", "nan", "quaternion"]))
        if how == "empty":
            req.waypoints = []
        elif how == "nan":
            req.waypoints[-1].position.x = math.nan
        else:
            req.waypoints[0].orientation.w = 0.0
    req.position_tolerance = _number(draw, st.just(0.0), "tolerance" in broken)
    req.path_position_tolerance = _number(draw, st.sampled_from([0.0, 2e-3]),
                                          "tolerance" in broken and draw(st.booleans()))
    req.check_step_m = _number(draw, st.sampled_from([0.0, 0.01]), "check" in broken)
    req.check_step_rad = _number(draw, st.sampled_from([0.0, 0.1]),
                                 "check" in broken and draw(st.booleans()))
    req.max_joint_step = ([_number(draw, st.just(0.2), True)] * draw(st.sampled_from([1, 7, 3]))
                          if "step" in broken else [0.2])
    req.seed.name = list(ARM)
    req.seed.position = list(READY)
    if "seed" in broken:
        req.seed.position[draw(st.integers(0, 6))] = draw(BAD_NUMBERS)
    req.start_at_seed = draw(st.booleans())
    req.time_from_velocity_limits = draw(st.booleans())
    req.velocity_scaling = _number(draw, st.sampled_from([0.0, 0.5]), "scaling" in broken)
    req.timeout = _number(draw, st.sampled_from([0.0, 0.2]), "timeout" in broken)
    req.random_seed = draw(st.integers(-1, 100))
    return req


def violation(req, res) -> str:
    """What our own FK says a SUCCESS misses ('' when it holds)."""
    model = Panda.model
    names = list(res.trajectory.joint_names)
    if names != ARM:
        return f"joint names {names}"
    q_path = np.array([p.positions for p in res.trajectory.points]).reshape(-1, 7)
    if len(q_path) != len(req.waypoints):
        return f"{len(q_path)} points for {len(req.waypoints)} waypoints"
    lo, hi = model.lowerPositionLimit[:7], model.upperPositionLimit[:7]
    if np.any(q_path < lo - 1e-9) or np.any(q_path > hi + 1e-9):
        return "a point outside the joint limits"
    step = req.max_joint_step[0]
    if len(q_path) > 1 and np.abs(np.diff(q_path, axis=0)).max() > step + 1e-9:
        return f"a joint step above max_joint_step {step}"
    tol = req.position_tolerance if req.position_tolerance > 0 else 1e-4
    for q, pose in zip(q_path, req.waypoints):
        T = pin.XYZQUATToSE3(np.array([pose.position.x, pose.position.y, pose.position.z,
                                       pose.orientation.x, pose.orientation.y,
                                       pose.orientation.z, pose.orientation.w]))
        ref = req.header.frame_id  # panda_link0 is the model's root frame
        if ref not in ("", "universe", "panda_link0"):
            T = _hand(q, ref) * T
        pos, ori = pose_errors(_hand(q, req.tip_link), T)
        if pos > tol + 1e-9 or ori > 1e-3 + 1e-9:
            return f"a waypoint missed by {pos:.2e} m / {ori:.2e} rad"
    return ""


def check_request(req) -> int:
    """Answer ``req`` as the service does; assert what every answer must be."""
    panda = Panda.load()
    started = time.perf_counter()
    answer = compute_ik_path(panda.snapshot, "", _cfg(), JointStateCache(), req)
    elapsed = time.perf_counter() - started
    res = answer.response
    code = res.error_code.val
    counted(STATS, code, res.message, req)
    sendable(STATS, res, req)
    if elapsed > MAX_TIMEOUT_S + LATE_S:
        STATS["late"] += 1
        raise AssertionError(f"answered after {elapsed:.2f} s; request={req!r}")
    if code == IKErrorCode.SUCCESS:
        why = violation(req, res)
        lie(STATS, why, req)
    return code


@examples("FUZZ_PATH_EXAMPLES", 30)
@given(req=path_requests())
def test_path_request_fuzz(req):
    check_request(req)


def test_velocity_scaling_outside_its_range_is_refused_naming_it():
    """A scaling of 1e-300 timed the path at 1e298 s: a Duration no message can carry (the
    reply was never sent); 5e-324 answered INTERNAL_ERROR; 1.5 exceeds the limits."""
    T0 = _hand(READY)
    for scaling, words in ((1e-300, "make the path last"), (5e-324, "make the path last"),
                           (1.5, "in (0, 1]")):
        req = ComputeIKPath.Request(tip_link="panda_hand", max_joint_step=[0.2],
                                    time_from_velocity_limits=True, velocity_scaling=scaling)
        req.header.frame_id = "panda_link0"
        req.waypoints = [se3_to_pose(pin.SE3(T0.rotation, T0.translation + [0.01 * k, 0, 0]))
                         for k in range(3)]
        req.seed.name, req.seed.position = list(ARM), list(READY)
        assert check_request(req) == IKErrorCode.INVALID_GOAL
        res = compute_ik_path(Panda.snapshot, "", _cfg(), JointStateCache(), req).response
        assert "velocity_scaling" in res.message and words in res.message, res.message
