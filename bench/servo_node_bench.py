"""The servo node on a simulated arm: achieved rate, period jitter, service responsiveness.

Three processes on a private localhost-only ROS domain: ``ik_node`` (the Panda,
panda.yaml, servo at 250 Hz on a forward position controller topic, collision avoidance
on), ``node/fake_controller.py`` (takes the commands, publishes joint_states at 250 Hz,
and records each command's publication, reception and callback times), and this script,
which streams a circle target (0.1 m radius, 0.2 m/s) at 100 Hz and calls ComputeIK 20
times a second.

Measured at the controller's end: the period between commands (median, p99, and the
jitter |period - 4 ms|; the arm sends them in batches once a second) by the three clocks,
the target judged on the middleware's reception (see ``CLOCKS``), the rate achieved;
the tip's tracking error by our own FK of the arm's state (sampled every 40 ms) against the
target sent; ComputeIK round trips during the run.  Also the node's own tick period, from
its status.
Writes bench/results/servo_node.json and servo_node.md.  ``--quick``: 10 s.

``--whole-body``: talos (config/talos_whole_body.yaml, its whole_body group with the
floating base) instead of the Panda: both soles held, the CoM 2 cm inside their polygon,
the left gripper on the circle (in the world frame); the measured base pose is sent once
on ``~/servo/base_pose`` and the tracking error is our FK of the arm's joints with the
base pose the node commands.  Writes servo_node_wholebody.json / .md.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT.parent / "ros2_ik"))
sys.path.insert(0, str(ROOT.parent / "ros2_ik" / "test"))
from machine import machine  # noqa: E402
import results_files  # noqa: E402

RESULTS = results_files.RESULTS
NS, RATE, TARGET_HZ, SERVICE_HZ = "servo_bench", 250.0, 100.0, 20.0
COMMANDS = f"/{NS}/arm/commands"
# The command periods by three clocks (node/fake_controller.py): when the servo published,
# when the controller's middleware received, when its Python callback ran.  The headline is
# the reception: what a ros2_control controller's real-time buffer sees; the callback clock
# adds this Python stand-in's own executor latency, which a C++ controller does not have.
CLOCKS = ("sent", "received", "callback")
HEADLINE_CLOCK = "received"
RADIUS, SPEED = 0.1, 0.2  # circle [m], [m/s]
BASE_COMMANDS = f"/{NS}/base_command"  # the whole-body servo's base pose


class Arm:
    """The Panda: panda.yaml, READY, the hand in panda_link0."""

    name, mode, frame, tip = "panda", "node_position_250hz", "panda_link0", "panda_hand"
    radius = RADIUS

    def __init__(self):
        import panda_node
        self.model = panda_node.description()[2]
        self.joints, self.q0 = panda_node.ARM, np.array(panda_node.READY)

    def start(self, params):
        import panda_node
        return panda_node.start(NS, *params, joints=False)

    def stop(self, node, client):
        import panda_node
        panda_node.stop(node, client)

    def tip_pose(self, q, base=None):
        from panda_node import T_frame
        return T_frame(self.model, self.joints, q, self.tip, self.frame)

    def before_start(self, run):
        """Nothing: an arm's base is fixed."""


class Talos(Arm):
    """Talos standing (base 1.02 m up, joints 0): soles held, the left gripper servoed."""

    name, mode, frame, tip = "talos", "node_wholebody_position_250hz", "", \
        "gripper_left_base_link"
    radius = 0.03  # within the standing hand's reach [m]
    feet = ("left_sole_link", "right_sole_link")

    def __init__(self):
        import pinocchio as pin
        from ros2_ik.core import robots
        urdf = (robots.data_dir() / "talos_data/robots/talos_full_v2.urdf").read_text()
        self.model = pin.buildModelFromXML(urdf, pin.JointModelFreeFlyer())
        self.joints = [self.model.names[j] for j in range(2, self.model.njoints)]
        self.q0 = np.zeros(len(self.joints))
        self.base0 = np.array([0.0, 0.0, 1.02, 0.0, 0.0, 0.0, 1.0])

    def start(self, params):
        from whole_body_checks import SOLE, serve
        from ros2_ik_interfaces.srv import ComputeIK
        points = ",".join(f"{x},{y},0.0" for x, y in SOLE)
        node, client, _ = serve(
            NS, "talos_whole_body.yaml", "talos_data/robots/talos_full_v2.urdf",
            "talos_data/srdf/talos.srdf", *params, f"servo_frame:={self.tip}",
            f"controller_joints:=[{','.join(self.joints)}]",
            f"servo_contacts:=[{','.join(self.feet)}]", f"servo_contact_points:=[{points}]",
            f"servo_base_command_topic:={BASE_COMMANDS}")
        probe = ComputeIK.Request()
        probe.target.pose.position.x = 0.4
        try:
            client.wait_for_model(probe, timeout_s=120.0)
        except BaseException:
            print(node.output()[-3000:])
            self.stop(node, client)
            raise
        return node, client

    def stop(self, node, client):
        from whole_body_checks import stop
        stop(node, client)

    def tip_pose(self, q, base=None):
        import pinocchio as pin
        full = pin.neutral(self.model)
        full[:7] = self.base0 if base is None else base
        full[7:] = q
        data = self.model.createData()
        pin.framesForwardKinematics(self.model, data, full)
        return data.oMf[self.model.getFrameId(self.tip)]

    def before_start(self, run):
        """Send the measured base pose (the node has no estimator)."""
        import pinocchio as pin
        from geometry_msgs.msg import PoseStamped
        from ros2_ik.node.conversions import se3_to_pose
        msg = PoseStamped()
        msg.header.frame_id = "universe"
        msg.pose = se3_to_pose(pin.XYZQUATToSE3(self.base0))
        run.base_pub.publish(msg)
        run.client.spin(0.1)


class Run:
    """The client side: target stream, ComputeIK calls, and what the arm reports."""

    def __init__(self, client, model):
        from geometry_msgs.msg import PoseStamped
        from sensor_msgs.msg import JointState
        from std_msgs.msg import Float64MultiArray
        from std_srvs.srv import Trigger
        from ros2_ik_interfaces.msg import ServoStatus
        n = client.node
        self.client, self.model = client, model
        self.periods = {clock: [] for clock in CLOCKS}
        self.states, self.statuses, self.targets, self.bases = [], [], [], []
        self.round_trips, self.codes = [], []
        n.create_subscription(Float64MultiArray, f"/{NS}/fake_controller/command_periods",
                              self._on_periods, 10)
        n.create_subscription(JointState, f"/{NS}/fake_controller/state_sample",
                              self._on_state, 10)
        n.create_subscription(ServoStatus, f"/{NS}/ik_node/servo/status",
                              self.statuses.append, 100)
        self.pose_pub = n.create_publisher(PoseStamped, f"/{NS}/ik_node/servo/target_pose", 10)
        self.base_pub = n.create_publisher(PoseStamped, f"/{NS}/ik_node/servo/base_pose", 10)
        n.create_subscription(PoseStamped, BASE_COMMANDS,
                              lambda m: self.bases.append((time.monotonic(), m)), 300)
        self.start_client = n.create_client(Trigger, f"/{NS}/ik_node/servo/start")

    def _on_periods(self, msg):
        assert msg.layout.dim[0].label == ",".join(CLOCKS), msg.layout.dim[0].label
        rows = np.reshape(msg.data, (len(CLOCKS), -1))
        for clock, row in zip(CLOCKS, rows):
            self.periods[clock].extend(row)

    def _on_state(self, msg):
        self.states.append((time.monotonic(), np.array(msg.position)))


def _circle(T0, t, radius=RADIUS):
    import pinocchio as pin
    w = SPEED / radius
    c = T0.translation - np.array([radius, 0.0, 0.0])
    return pin.SE3(T0.rotation, c + radius * np.array([np.cos(w * t), np.sin(w * t), 0.0]))


def _drive(run, seconds, T0, request, service_hz, robot):
    """Stream the circle and call ComputeIK for ``seconds``; one call in flight."""
    from geometry_msgs.msg import PoseStamped
    from ros2_ik.node.conversions import se3_to_pose
    start = time.monotonic()
    next_target = next_call = start
    pending = None
    while (now := time.monotonic()) < start + seconds:
        if now >= next_target:
            T = _circle(T0, now - start, robot.radius)
            msg = PoseStamped()
            msg.header.frame_id = robot.frame
            msg.pose = se3_to_pose(T)
            run.pose_pub.publish(msg)
            run.targets.append((now, T))
            next_target += 1.0 / TARGET_HZ
        if service_hz > 0 and pending is None and now >= next_call:
            pending = (time.monotonic(), run.client.ik.call_async(request))
            next_call += 1.0 / service_hz
        if pending is not None and pending[1].done():
            run.round_trips.append(time.monotonic() - pending[0])
            run.codes.append(pending[1].result().error_code.val)
            pending = None
        wake = min(next_target, next_call if service_hz > 0 else next_target)
        run.client.spin(max(0.0, min(wake - time.monotonic(), 0.01)))


def _tracking_rms(run, robot, after_s):
    """RMS distance [m] from the arm's tip (our FK) to the newest target sent before it.

    After ``after_s`` of transient; it includes the servo's lag (speed / gain).  A
    whole-body robot's base: the newest base pose the node commanded before the state.
    """
    t_targets = np.array([t for t, _ in run.targets])
    t_bases = np.array([t for t, _ in run.bases])
    t0 = t_targets[0] + after_s
    errors = []
    for t, q in run.states:
        i = np.searchsorted(t_targets, t) - 1
        if t < t0 or i < 0 or len(q) != len(robot.joints):
            continue
        base = None
        if len(t_bases):
            p = run.bases[max(0, np.searchsorted(t_bases, t) - 1)][1].pose
            base = (p.position.x, p.position.y, p.position.z, p.orientation.x,
                    p.orientation.y, p.orientation.z, p.orientation.w)
        T = robot.tip_pose(q, base)
        errors.append(np.linalg.norm(T.translation - run.targets[i][1].translation))
    return float(np.sqrt(np.mean(np.square(errors)))) if errors else float("nan")


def _period_stats(periods):
    """Return period median/p95/p99/max [ms], jitter p99 |period - 4 ms| [ms], rate [Hz]."""
    p = np.array(periods[RATE_WARMUP:]) * 1e3
    jitter = np.abs(p - 1e3 / RATE)
    return {"success_rate": float(np.mean(jitter <= 2.0)),
            "median_ms": float(np.median(p)), "p95_ms": float(np.percentile(p, 95)),
            "p99_ms": float(np.percentile(p, 99)), "max_ms": float(p.max()),
            "jitter_p99_ms": float(np.percentile(jitter, 99)),
            "rate_hz": float(1e3 / np.mean(p)), "commands": int(p.size)}


def _row(run, robot, seconds):
    from ros2_ik_interfaces.msg import IKErrorCode
    rt = np.array(run.round_trips or [np.nan]) * 1e3
    by_clock = {clock: _period_stats(run.periods[clock]) for clock in CLOCKS}
    return {"robot": robot.name, "solver": "ik_node servo", "mode": robot.mode,
            "seconds": seconds, "period_clock": HEADLINE_CLOCK, **by_clock[HEADLINE_CLOCK],
            **{f"{clock}_{key}": value for clock, stats in by_clock.items()
               for key, value in stats.items() if clock != HEADLINE_CLOCK},
            "tracking_rms_m": _tracking_rms(run, robot, 2.0),
            "compute_ik_calls": int(rt.size),
            "compute_ik_success_rate": float(np.mean(np.array(run.codes)
                                                     == IKErrorCode.SUCCESS))
            if run.codes else float("nan"),
            "compute_ik_p50_ms": float(np.median(rt)),
            "compute_ik_p99_ms": float(np.percentile(rt, 99)),
            "halted_statuses": int(sum(s.state == 3 for s in run.statuses)),
            **_node_side(run)}


def _node_side(run):
    """Return the node's own tick period from its status (1 s windows): p99 median, worst."""
    p99 = np.array([s.period_p99 for s in run.statuses if s.ticks > 100]) * 1e3
    med = np.array([s.period_median for s in run.statuses if s.ticks > 100]) * 1e3
    if not p99.size:
        return {}
    return {"node_period_median_ms": float(np.median(med)),
            "node_period_p99_ms_median_window": float(np.median(p99)),
            "node_period_p99_ms_worst_window": float(p99.max())}


RATE_WARMUP = 250  # commands dropped at the start (the loop's first second)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="10 s instead of 60 s")
    parser.add_argument("--priority", type=int, default=None,
                        help="servo_thread_priority (SCHED_FIFO 1-99; 0: normal; "
                        "default: the node's)")
    parser.add_argument("--no-collisions", action="store_true",
                        help="servo_avoid_collisions:=false (no dampers)")
    parser.add_argument("--service-hz", type=float, default=SERVICE_HZ,
                        help="ComputeIK calls per second during the run (0: none)")
    parser.add_argument("--whole-body", action="store_true",
                        help="talos's whole-body servo (soles, CoM, a hand) instead of the "
                        "Panda")
    args = parser.parse_args()
    seconds = 10.0 if args.quick else 60.0
    import rclpy
    from ros2_ik.node.harness import FakeControllerProcess, isolate_ros, wait_for
    from ros2_ik.node.conversions import se3_to_pose
    from ros2_ik_interfaces.srv import ComputeIK

    isolate_ros()
    rclpy.init()
    robot = Talos() if args.whole_body else Arm()
    node, client = robot.start([
        f"servo_command_topic:={COMMANDS}", f"servo_rate:={RATE}",
        # the whole-body servo avoids no collisions: no collision model to build
        f"servo_avoid_collisions:="
        f"{'false' if args.no_collisions or args.whole_body else 'true'}",
        *([] if args.priority is None else [f"servo_thread_priority:={args.priority}"])])
    arm = FakeControllerProcess(NS, robot.joints, robot.q0, COMMANDS, rate_hz=RATE)
    try:
        run = Run(client, robot.model)
        wait_for(lambda: len(run.states) > 5, 20.0, "joint_states", client.spin)
        robot.before_start(run)
        started = lambda: _start(run)  # noqa: E731
        wait_for(started, 20.0, "the servo to start", client.spin)
        T0 = robot.tip_pose(robot.q0)
        request = ComputeIK.Request()
        request.target.header.frame_id = robot.frame
        request.target.pose = se3_to_pose(robot.tip_pose(robot.q0 + 0.1))
        request.position_only = args.whole_body
        request.timeout = 0.05
        _drive(run, seconds, T0, request, args.service_hz, robot)
        row = {**_row(run, robot, seconds), "thread_priority": _priority(args.priority)}
    finally:
        arm.stop()
        robot.stop(node, client)
        rclpy.try_shutdown()
    _write(row, args.quick, "_wholebody" if args.whole_body else "")


def _priority(asked):
    """Return the servo_thread_priority the node ran with (``asked``, else the default)."""
    from ros2_ik.node.parameters import SCHEMA
    default = next(spec.default for spec in SCHEMA if spec.name == "servo_thread_priority")
    return default if asked is None else asked


def _start(run):
    from ros2_ik.node.harness import wait_for
    from std_srvs.srv import Trigger
    future = run.start_client.call_async(Trigger.Request())
    wait_for(future.done, 10.0, "servo/start", run.client.spin)
    return future.result().success


def _write(row, quick, kind=""):
    name = f"servo_node{kind}_quick" if quick else f"servo_node{kind}"
    out = {"machine": machine(), "rows": [row], "quick": quick,
           "targets": {"rate_hz": RATE, "jitter_p99_ms_max": 2.0}}
    lines = [f"ik_node's servo loop ({row['robot']}, {row['mode']}), {row['seconds']:.0f} s "
             "at 250 Hz on the simulated arm "
             "(node/fake_controller.py), a circle streamed at 100 Hz, ComputeIK at 20 Hz; "
             "command periods by the publisher's stamp (sent), the controller's middleware "
             "reception (received: the target's clock) and the controller's Python callback; "
             f"servo_thread_priority {row['thread_priority']}:",
             "", "| clock | rate Hz | period median ms | p99 ms | max ms | jitter p99 ms |",
             "|---|---|---|---|---|---|"]
    for clock in CLOCKS:
        k = "" if clock == HEADLINE_CLOCK else f"{clock}_"
        lines.append(f"| {clock} | {row[k + 'rate_hz']:.1f} | {row[k + 'median_ms']:.3f} | "
                     f"{row[k + 'p99_ms']:.3f} | {row[k + 'max_ms']:.2f} | "
                     f"{row[k + 'jitter_p99_ms']:.3f} |")
    lines += ["", "| tracking rms mm | ComputeIK p50 / p99 ms (success) |", "|---|---|",
              f"| {1e3 * row['tracking_rms_m']:.2f} | {row['compute_ik_p50_ms']:.2f} / "
              f"{row['compute_ik_p99_ms']:.2f} ({100 * row['compute_ik_success_rate']:.1f} %) |",
              f"\nNode's own tick period: p99 {row.get('node_period_p99_ms_median_window', 0):.3f}"
              f" ms in a median 1 s window, {row.get('node_period_p99_ms_worst_window', 0):.3f}"
              " ms in the worst.",
              f"\n{row['seconds']:.0f} s, {row['commands']} commands at the controller; load "
              f"{out['machine']['load_average']}"]
    results_files.write(RESULTS, name, out, "\n".join(lines) + "\n")
    if not quick and not kind and (RESULTS / "servo.json").exists():
        from servo_bench import merge_rows
        merge_rows([row])  # one servo.json: the step's rows and the node's
    print("\n".join(lines))


if __name__ == "__main__":
    main()
