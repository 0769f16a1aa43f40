"""The fast paths added for service latency (issue 11) give the answers of the general ones.

No DDS here: conversions, the exact-seed shortcut, the goal worker and the load report's
target checks (the node tests cover the executor over real DDS).
"""
import math
import sys
import threading
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

pytest.importorskip("rclpy")

from geometry_msgs.msg import Pose  # noqa: E402
from ros2_ik.core import robots  # noqa: E402
from ros2_ik.core.errors import InvalidGoal  # noqa: E402
from ros2_ik.node import compute_ik as C  # noqa: E402
from ros2_ik.node.conversions import joint_state, pose_to_se3  # noqa: E402
from ros2_ik.node.parameters import GroupConfig  # noqa: E402
from ros2_ik.node.robot_source import JointStateCache  # noqa: E402
from ros2_ik.node.spinning import GoalWorker  # noqa: E402
from ros2_ik_interfaces.msg import IKErrorCode  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
import node_inputs  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))


@pytest.fixture(scope="module")
def arm():
    return robots.load_group("panda")[1]


def test_pose_to_se3_matches_pinocchio_quaternion():
    rng = np.random.default_rng(0)
    for _ in range(50):
        xyzw = rng.normal(size=4)
        xyzw /= np.linalg.norm(xyzw)
        pose = Pose()
        pose.position.x, pose.position.y, pose.position.z = rng.normal(size=3).tolist()
        o = pose.orientation
        o.x, o.y, o.z, o.w = (xyzw * (1 + 5e-4)).tolist()  # near-unit: normalised
        x, y, z, w = xyzw
        expected = pin.Quaternion(w, x, y, z).toRotationMatrix()
        T = pose_to_se3(pose, "target.pose")
        np.testing.assert_allclose(T.rotation, expected, atol=1e-12)
        np.testing.assert_allclose(T.translation, [pose.position.x, pose.position.y,
                                                   pose.position.z])


@pytest.mark.parametrize("field,value,words", [
    ("w", math.nan, "NaN or infinite"), ("x", math.inf, "NaN or infinite"),
    ("w", 2.0, "norm is"), ("w", 0.0, "norm is")])
def test_pose_to_se3_rejects_bad_quaternions_naming_the_field(field, value, words):
    pose = Pose()
    pose.orientation.w = 1.0
    setattr(pose.orientation, field, value)
    with pytest.raises(InvalidGoal, match=words) as err:
        pose_to_se3(pose, "target.pose")
    assert "target.pose.orientation" in str(err.value)


def test_position_nan_is_rejected():
    pose = Pose()
    pose.orientation.w, pose.position.y = 1.0, math.nan
    with pytest.raises(InvalidGoal, match="target.pose.position"):
        pose_to_se3(pose, "target.pose")


def _config():
    return node_inputs.config({"arm": GroupConfig("arm", "panda_link0", "panda_hand")})


def test_config_values_read_as_attributes_and_stay_in_sync():
    cfg = _config()
    assert cfg.timeout == cfg.values["timeout"] == 0.05
    assert cfg.default_group_name == "arm"  # a property is not shadowed by a value
    with pytest.raises(AttributeError):
        cfg.no_such_parameter  # noqa: B018


def test_exact_seed_shortcut_equals_the_general_path(arm):
    cfg, joints = _config(), JointStateCache()
    rng = np.random.default_rng(1)
    for _ in range(20):
        q = arm.lower + rng.random(arm.n) * (arm.upper - arm.lower)
        in_order = JointState(name=list(arm.joint_names), position=q.tolist())
        shuffled = list(zip(arm.joint_names, q))[::-1] + [("panda_finger_joint1", 0.01)]
        other = JointState(name=[n for n, _ in shuffled], position=[v for _, v in shuffled])
        np.testing.assert_array_equal(C.seed_for(arm, in_order, joints, cfg), q)
        np.testing.assert_array_equal(C.seed_for(arm, other, joints, cfg), q)
    outside = JointState(name=list(arm.joint_names), position=(arm.upper + 0.1).tolist())
    with pytest.raises(C.RequestError, match="outside the joint limits"):
        C.seed_for(arm, outside, joints, cfg)
    nan = JointState(name=list(arm.joint_names), position=[math.nan] * arm.n)
    with pytest.raises(Exception, match="not finite"):
        C.seed_for(arm, nan, joints, cfg)


def test_group_resolution_is_cached_per_model_and_config():
    snapshot = node_inputs.snapshot(robots.urdf_text("panda"), robots.srdf_text("panda"))
    cfg = _config()
    group, tip = C.resolve_group(snapshot, cfg, "", "", "")
    assert (group, tip) == C.resolve_group(snapshot, cfg, "", "", "")
    assert tip == "panda_hand" and snapshot.resolved[("", "", "")][0] is cfg
    # A parameter change is a new config: resolved again under it (here a new tip).
    other = node_inputs.config({"arm": GroupConfig("arm", "panda_link0", "panda_link7")})
    assert C.resolve_group(snapshot, other, "", "", "")[1] == "panda_link7"
    with pytest.raises(C.RequestError, match="unknown group") as raised:  # not cached
        C.resolve_group(snapshot, cfg, "leg", "", "")
    assert ("leg", "", "") not in snapshot.resolved
    assert "no SRDF yet" not in str(raised.value)


def test_an_srdf_group_that_does_not_fit_the_urdf_says_why():
    """An SRDF written for another description (a renamed link): not "unknown group"."""
    srdf = robots.srdf_text("panda").replace('<joint name="panda_joint7"/>',
                                             '<joint name="panda_joint_7"/>')
    assert srdf != robots.srdf_text("panda")
    snapshot = node_inputs.snapshot(robots.urdf_text("panda"), srdf)
    with pytest.raises(C.RequestError, match="does not fit the robot description: joint: "
                       "unknown joint 'panda_joint_7'") as raised:
        C.resolve_group(snapshot, _config(), "arm_and_hand", "", "")  # its subgroup "arm"
    assert raised.value.code == IKErrorCode.INVALID_GROUP


def test_an_unknown_group_before_the_srdf_says_so():
    """The URDF and the SRDF come on two topics: a group asked for in between is unknown,
    and the answer says that no SRDF has come yet (a client may ask again)."""
    from ros2_ik.node.robot_source import RobotSource
    source = RobotSource()
    source.set_urdf(robots.urdf_text("panda"))
    with pytest.raises(C.RequestError, match="no SRDF yet"):
        C.resolve_group(source.snapshot, _config(), "arm_and_hand", "", "")
    source.set_srdf(robots.srdf_text("panda"))
    assert C.resolve_group(source.snapshot, _config(), "arm_and_hand", "", "")[1]


def test_status_codes_by_member_and_by_name_agree():
    from ros2_ik.core.result import IKStatus
    from ros2_ik.node.error_codes import code_for_status
    for status in IKStatus:
        assert code_for_status(status) == code_for_status(status.name)


def test_joint_state_fills_a_given_message():
    msg = JointState()
    out = joint_state(("a", "b"), np.array([1.0, -2.5]), msg=msg)
    assert out is msg and list(msg.name) == ["a", "b"] and list(msg.position) == [1.0, -2.5]


def test_goal_worker_runs_jobs_in_order_and_survives_a_failing_one(capsys):
    worker = GoalWorker("test_worker")
    seen, done = [], threading.Event()
    worker.submit(lambda: seen.append(1))
    worker.submit(lambda: 1 / 0)
    worker.submit(lambda: seen.append(threading.current_thread().name))
    worker.submit(done.set)
    assert done.wait(5)
    worker.stop()
    assert seen == [1, "test_worker"]
    assert "ZeroDivisionError" in capsys.readouterr().err


def test_load_report_checks_each_target():
    from load_report import evaluate
    one = {"in_process_solve_ms": {"p50": 0.2, "p99": 0.3},
           "reply_solve_time_ms": {"p50": 0.25, "p99": 0.4},
           "round_trip_ms": {"p50": 0.8, "p99": 2.0}}
    report = {"single_client": one, "four_clients": {"lost": 1, "round_trip_ms": {"p50": 1.5}},
              "cancel": {"cancel_to_result_ms": {"p99": 60.0}},
              "soak": {"memory": {"growth_percent": 4.9}}}
    met = {t["target"]: t["met"] for t in evaluate(report)}
    assert met == {
        "one client: reply solve_time p50 / in-process solve p50": True,   # 1.25 <= 1.3
        "one client: round trip p50 - in-process solve p50 [ms]": False,  # 0.6 > 0.5
        "one client: round trip p99 - in-process solve p99 [ms]": False,  # 1.7 > 1.5
        "4 clients: lost replies": False,
        "4 clients: round trip p50 [ms]": True,
        "cancel -> result p99 [ms]": False,
        "soak: RSS growth after warm-up [%]": True}


def test_load_report_shows_the_floors():
    from load_report import markdown
    ms = {"p50": 0.5, "p90": 0.6, "p99": 0.9, "max": 1.0}
    one = {"answered": 10, "lost": 0, "round_trip_ms": dict(ms, p50=0.8),
           "reply_solve_time_ms": dict(ms, p50=0.25), "in_process_solve_ms": dict(ms, p50=0.1),
           "in_process_compute_ik_ms": ms, "get_parameters_round_trip_ms": ms,
           "empty_service_round_trip_ms": dict(ms, p50=0.3),
           "echo_compute_ik_round_trip_ms": dict(ms, p50=0.45),
           "message_conversions_node_ms": dict(ms, p50=0.08),
           "message_conversions_client_ms": dict(ms, p50=0.04)}
    text = markdown({"machine": {}, "date_utc": "now", "single_client": one, "targets": []})
    assert "ComputeIK echo of a bare rclpy server" in text
    assert "node side 0.080 / 0.900, client side 0.040 / 0.900" in text
    assert "ComputeIK, with no work, in 0.450 ms" in text and "0.350 ms above the echo" in text
    # an echo under the 0.5 ms target leaves the node the rest: 0.5 - 0.45 = 0.05 ms
    assert "leaves a node 0.050 ms of its own work above the echo" in text


def test_load_report_says_when_the_echo_alone_misses_the_target():
    from load_report import floor_note
    ms = {"p50": 0.6}
    one = {"round_trip_ms": {"p50": 0.9}, "reply_solve_time_ms": {"p50": 0.2},
           "in_process_solve_ms": {"p50": 0.1}, "empty_service_round_trip_ms": ms,
           "echo_compute_ik_round_trip_ms": {"p50": 0.7},
           "message_conversions_node_ms": ms, "message_conversions_client_ms": ms}
    text = floor_note({"single_client": one})
    assert "would be 0.700 ms above it, against the 0.5 ms target" in text
    assert "leaves a node" not in text


def test_message_conversions_are_timed_on_both_sides():
    from load_floor import _reply, conversions_s
    from ros2_ik_interfaces.srv import ComputeIK
    times = conversions_s(ComputeIK.Request(), _reply())
    assert set(times) == {"node_conversions_s", "client_conversions_s"}
    assert all(t > 0 for t in times.values())
