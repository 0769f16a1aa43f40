"""Client processes of ``bench/load.py``: ComputeIK callers, an action client, a streamer.

Each runs in its own spawned process with its own rclpy context, on the domain the
parent chose; results go back through a multiprocessing queue.  Clients are lean: one
rclpy node holding only what it calls, spun by the ``EventsExecutor`` until the answer
(what a latency-minded client does; the harness ``Client`` also plays a driver and
robot_state_publisher).  Requests are generated before the timed loop.
"""
from __future__ import annotations

import os
import time
from collections import Counter

import numpy as np

from load_floor import Floors, conversions_s

ARM = [f"panda_joint{i}" for i in range(1, 8)]
READY = np.array([0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785])
LOST_AFTER_S = 10.0


def percentiles(values_ms) -> dict:
    """p50 / p90 / p99 / max of ``values_ms`` [ms]."""
    values_ms = np.asarray(values_ms, dtype=float)
    if len(values_ms) == 0:
        return {}
    p50, p90, p99 = np.percentile(values_ms, [50, 90, 99])
    return {"p50": round(float(p50), 3), "p90": round(float(p90), 3),
            "p99": round(float(p99), 3), "max": round(float(np.max(values_ms)), 3)}


def request_maker(seed: int):
    """Return a function returning reachable ComputeIK requests, seeded near their answer."""
    import pinocchio as pin
    from ros2_ik.core import robots
    from ros2_ik.node.conversions import se3_to_pose
    from ros2_ik_interfaces.srv import ComputeIK
    model = pin.buildModelFromXML(robots.urdf_text("panda"))
    data = model.createData()
    lo, hi = model.lowerPositionLimit[:7], model.upperPositionLimit[:7]
    hand, link0 = model.getFrameId("panda_hand"), model.getFrameId("panda_link0")
    rng = np.random.default_rng(seed)

    def make() -> ComputeIK.Request:
        q = np.clip(READY + rng.uniform(-0.4, 0.4, 7), lo + 0.05, hi - 0.05)
        q_full = pin.neutral(model)
        q_full[:7] = q
        pin.framesForwardKinematics(model, data, q_full)
        req = ComputeIK.Request()
        req.target.header.frame_id = "panda_link0"
        req.target.pose = se3_to_pose(data.oMf[link0].actInv(data.oMf[hand]))
        req.seed.name = ARM
        req.seed.position = [float(v) for v in np.clip(q + rng.normal(0, 0.03, 7), lo, hi)]
        req.timeout = 0.05
        req.random_seed = int(rng.integers(0, 2**31))
        return req
    return make


def _start_ros(domain_id: str):
    """Init rclpy on the parent's private domain; return a fresh executor."""
    from ros2_ik.node.harness import isolate_ros
    isolate_ros(int(domain_id))
    import rclpy
    from ros2_ik.node.spinning import make_executor
    rclpy.init()
    return make_executor()


def _spin_until(executor, future, timeout_s: float) -> bool:
    """Spin ``executor`` until ``future`` is done or ``timeout_s`` passed; True when done."""
    deadline = time.perf_counter() + timeout_s
    while not future.done():
        left = deadline - time.perf_counter()
        if left <= 0:
            return False
        executor.spin_until_future_complete(future, timeout_sec=left)
    return True


def send(results, value) -> None:
    """Put ``value`` on ``results`` and flush it to the pipe before DDS is torn down.

    Fast DDS 3.2 can deadlock deleting a participant while another participant leaves
    (seen once in ~17 ``make load`` runs: ``destroy_node`` spinning in
    ``DomainParticipant::set_listener`` with the GIL held); the queue's feeder thread then
    never runs, and the parent would miss the figures.  The parent kills a worker that
    hangs so (``load.finish``).
    """
    results.put(value)
    results.close()
    results.join_thread()


def service_client(node, namespace: str):
    """Return a compute_ik client whose response history holds 1000 answers, not 10.

    With the default keep-last 10, make load lost about 1 answer in 20,000-100,000
    on 2 busy cores, with nothing in the node's log: the likely cause is the client's
    response reader overwriting an answer it had not taken yet while the process was
    descheduled.
    """
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from ros2_ik_interfaces.srv import ComputeIK
    return node.create_client(
        ComputeIK, f"{namespace.rstrip('/')}/compute_ik",
        qos_profile=QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE))


def service_worker(domain_id: str, namespace: str, index: int, count: int, seed: int,
                   progress, results, deadline: float, in_process: bool = False) -> None:
    """Call compute_ik ``count`` times, one in flight; put the figures on ``results``.

    ``in_process``: after each call, time the same request in this process too (the
    core's ``solve()`` alone, then the node's whole ``compute_ik`` path without ROS).
    """
    import rclpy
    from ros2_ik.node.error_codes import CODE_NAMES
    executor = _start_ros(domain_id)
    node = rclpy.create_node(f"load_client_{index}")
    client = service_client(node, namespace)
    executor.add_node(node)
    if not client.wait_for_service(timeout_sec=60):
        raise TimeoutError("compute_ik did not appear")
    make = request_maker(seed)
    local = InProcess() if in_process else None
    floors = Floors(node, namespace) if in_process else None
    warmup_retries = warm_up(executor, client, make, local, floors)
    requests = [make() for _ in range(count)]
    out = {key: [] for key in ("rtt_s", "solve_s", "core_s", "core_after_idle_s",
                               "node_path_s", "lost_at", "node_conversions_s",
                               "client_conversions_s") + Floors.KEYS}
    codes, sent, stopped = Counter(), 0, False
    first = time.perf_counter()
    try:
        for req in requests:
            if time.time() > deadline:
                stopped = True
                break
            sent += 1
            t0 = time.perf_counter()
            future = client.call_async(req)
            if not _spin_until(executor, future, LOST_AFTER_S):
                out["lost_at"].append(sent - 1)
                client.remove_pending_request(future)
                continue
            out["rtt_s"].append(time.perf_counter() - t0)
            res = future.result()
            out["solve_s"].append(res.solve_time)
            codes[CODE_NAMES.get(res.error_code.val, str(res.error_code.val))] += 1
            if local is not None:
                out["core_s"].append(local.core_s(req))
                out["core_after_idle_s"].append(local.core_s(req, idle_s=out["rtt_s"][-1]))
                out["node_path_s"].append(local.node_path_s(req))
                for key, value in dict(floors.round_trips_s(executor, req),
                                       **conversions_s(req, res)).items():
                    out[key].append(value)
            with progress.get_lock():
                progress.value += 1
    finally:
        send(results, dict({k: np.array(v) for k, v in out.items() if k != "lost_at"},
                           sent=sent, lost=len(out["lost_at"]), lost_at=out["lost_at"],
                           codes=dict(codes), stopped_by_deadline=stopped,
                           warmup_retries=warmup_retries, busy_s=time.perf_counter() - first))
        node.destroy_node()
        executor.shutdown()
        rclpy.shutdown()


def warm_up(executor, client, make, local=None, floors=None, calls: int = 50,
            attempts: int = 5) -> int:
    """Call until one answer arrives, then ``calls`` more; the retries needed at first.

    ``wait_for_service`` can return before the server has matched this client's
    response reader; a response sent in that window is lost by DDS (a discovery race,
    not load).  The extra calls warm both sides (and ``local``, ``floors``) before timing.
    """
    retries = 0
    for retries in range(attempts):
        future = client.call_async(make())
        if _spin_until(executor, future, 2.0):
            break
        client.remove_pending_request(future)
    else:
        raise TimeoutError(f"no answer to {attempts} warm-up calls")
    for _ in range(calls):
        req = make()
        _spin_until(executor, client.call_async(req), LOST_AFTER_S)
        if local is not None:
            local.core_s(req)
            local.node_path_s(req)
            if floors is not None:
                floors.round_trips_s(executor, req)
    return retries


class InProcess:
    """The node's model and configuration (config/panda.yaml), solved in this process."""

    def __init__(self) -> None:
        import yaml
        from ament_index_python.packages import get_package_share_directory
        from ros2_ik.core import robots
        from ros2_ik.node.parameters import SCHEMA, GroupConfig, NodeConfig
        from ros2_ik.node.robot_source import JointStateCache, RobotSource
        path = os.path.join(get_package_share_directory("ros2_ik"), "config", "panda.yaml")
        with open(path) as f:
            params = yaml.safe_load(f)["/**"]["ros__parameters"]
        groups = {name: GroupConfig(name, g["base_link"], g["tip_link"],
                                    tuple(g.get("joints", ())))
                  for name, g in params.pop("groups").items()}
        values = {spec.name: params.get(spec.name, spec.default) for spec in SCHEMA}
        self.cfg = NodeConfig(values, groups)
        source = RobotSource()
        source.set_srdf(robots.srdf_text("panda"))
        source.set_urdf(robots.urdf_text("panda"))
        self.snapshot = source.snapshot
        self.joints = JointStateCache()

    def core_s(self, req, idle_s: float = 0.0) -> float:
        """Time [s] of the core's ``solve()`` alone on ``req`` (inputs converted before).

        ``idle_s`` [s]: sleep that long first, as the node waits between one client's
        calls (on this VM a solve after sleeping ~1 ms runs 1.6-2.6x slower than back to
        back in a plain loop, and 1.2x slower than timed right after a call here).
        """
        from ros2_ik.core.solve import solve
        from ros2_ik.node import compute_ik as node
        from ros2_ik.node.base_pose import has_base
        group, tip = node.resolve_group(self.snapshot, self.cfg, req.group_name,
                                        req.base_link, req.tip_link)
        target = node.pose_target(req, tip, self.cfg, self.snapshot, has_base(group))
        seed = node.seed_for(group, req.seed, self.joints, self.cfg)
        options = node.solve_options(req, self.cfg)
        if idle_s:
            time.sleep(idle_s)
        t0 = time.perf_counter()
        solve(group, target, seed, **options)
        return time.perf_counter() - t0

    def node_path_s(self, req) -> float:
        """Time [s] of the node's ``compute_ik`` (conversions, solve, re-check) on ``req``.

        Into a reply made before, as the executor hands the node one.
        """
        from ros2_ik.node.compute_ik import compute_ik
        from ros2_ik_interfaces.srv import ComputeIK
        response = ComputeIK.Response()
        t0 = time.perf_counter()
        compute_ik(self.snapshot, "", self.cfg, self.joints, req, response=response)
        return time.perf_counter() - t0


def action_worker(domain_id: str, namespace: str, goals: int, seed: int, results,
                  deadline: float) -> None:
    """Send ``goals`` reachable pose goals one after another; goal -> result times."""
    from ros2_ik_interfaces.action import ConstrainedIK
    from ros2_ik_interfaces.msg import PoseGoal
    executor, node, action = _action_client("load_action_client", namespace, domain_id)
    make = request_maker(seed)

    def one_goal():
        req = make()
        goal = ConstrainedIK.Goal(group_name="arm", timeout=0.05, seed=req.seed)
        goal.pose_goals = [PoseGoal(tip_link="panda_hand", target=req.target)]
        t0 = time.perf_counter()
        send = action.send_goal_async(goal)
        if not _spin_until(executor, send, LOST_AFTER_S):
            return None
        done = send.result().get_result_async()
        if not _spin_until(executor, done, LOST_AFTER_S):
            return None
        return time.perf_counter() - t0, done.result().result

    for _ in range(10):  # warm-up
        one_goal()
    codes, rtts, solves, lost = Counter(), [], [], 0
    for _ in range(goals):
        if time.time() > deadline:
            break
        answer = one_goal()
        if answer is None:
            lost += 1
            continue
        rtts.append(answer[0])
        solves.append(answer[1].solve_time)
        codes[str(answer[1].error_code.val)] += 1
    send(results, {"goals": len(rtts), "lost": lost, "codes": dict(codes),
                   "goal_to_result_ms": percentiles(np.array(rtts) * 1e3),
                   "result_solve_time_ms": percentiles(np.array(solves) * 1e3)})
    _close_action_client(executor, node, action)


def stream_worker(domain_id: str, namespace: str, rate_hz: float, stop, results) -> None:
    """Publish joint_states at ``rate_hz`` until ``stop`` is set; report the worst send gap."""
    import rclpy
    from sensor_msgs.msg import JointState
    _start_ros(domain_id)
    node = rclpy.create_node("load_joint_states")
    pub = node.create_publisher(JointState, f"{namespace.rstrip('/')}/joint_states", 10)
    msg = JointState(name=ARM)
    period = 1.0 / rate_hz
    sent, worst, last = 0, 0.0, None
    next_t = time.perf_counter()
    while not stop.is_set():
        now = time.perf_counter()
        if now < next_t:
            time.sleep(next_t - now)
            continue
        msg.header.stamp = node.get_clock().now().to_msg()
        msg.position = [float(v) for v in READY + 0.01 * np.sin(now)]
        pub.publish(msg)
        if last is not None:
            worst = max(worst, now - last)
        last, sent = now, sent + 1
        next_t = max(next_t + period, now - 10 * period)  # no burst after a stall
    send(results, {"sent": sent, "worst_send_gap_s": worst})
    node.destroy_node()
    rclpy.shutdown()


def diagnostics_worker(domain_id: str, namespace: str, stop, results) -> None:
    """Collect the node's ``~/diagnostics`` joint_states windows until ``stop`` is set."""
    import json
    import rclpy
    from std_msgs.msg import String
    executor = _start_ros(domain_id)
    node = rclpy.create_node("load_diagnostics")
    windows = []
    node.create_subscription(String, f"{namespace.rstrip('/')}/ik_node/diagnostics",
                             lambda msg: windows.append(json.loads(msg.data)["joint_states"]),
                             10)
    executor.add_node(node)
    while not stop.is_set():
        executor.spin_once(timeout_sec=0.1)
    send(results, windows)
    node.destroy_node()
    executor.shutdown()
    rclpy.shutdown()


def cancel_worker(domain_id: str, namespace: str, cancels: int, results,
                  deadline: float) -> None:
    """Goals on an unreachable target, each cancelled after its first feedback.

    The target is 0.5 m below the base: out of reach, but inside the reach bound, so the
    goal searches (and sends feedback) instead of being answered before any attempt.

    Times cancel request -> cancel response and -> result.
    """
    from action_msgs.msg import GoalStatus
    from ros2_ik_interfaces.action import ConstrainedIK
    from ros2_ik_interfaces.msg import PoseGoal
    from rclpy.task import Future
    executor, node, action = _action_client("load_cancel_client", namespace, domain_id)
    to_result, to_response, statuses = [], [], Counter()
    for i in range(cancels):
        if time.time() > deadline:
            break
        goal = ConstrainedIK.Goal(group_name="arm", timeout=10.0, random_seed=i)
        pose = PoseGoal(tip_link="panda_hand")
        pose.target.header.frame_id = "panda_link0"
        pose.target.pose.position.z, pose.target.pose.orientation.w = -0.5, 1.0
        goal.pose_goals = [pose]
        first_feedback = Future()
        sent = action.send_goal_async(
            goal, feedback_callback=lambda _: first_feedback.done()
            or first_feedback.set_result(True))
        if not (_spin_until(executor, sent, LOST_AFTER_S)
                and _spin_until(executor, first_feedback, LOST_AFTER_S)):
            raise TimeoutError("no goal acceptance or feedback")
        result = sent.result().get_result_async()
        t0 = time.perf_counter()
        cancel = sent.result().cancel_goal_async()
        _spin_until(executor, cancel, LOST_AFTER_S)
        to_response.append(time.perf_counter() - t0)
        _spin_until(executor, result, LOST_AFTER_S)
        to_result.append(time.perf_counter() - t0)
        status = result.result().status if result.done() else -1
        statuses["CANCELED" if status == GoalStatus.STATUS_CANCELED else str(status)] += 1
    send(results, {"cancels": len(to_result), "statuses": dict(statuses),
                   "cancel_to_result_ms": percentiles(np.array(to_result) * 1e3),
                   "cancel_to_response_ms": percentiles(np.array(to_response) * 1e3)})
    _close_action_client(executor, node, action)


def _action_client(name: str, namespace: str, domain_id: int):
    """(executor, node, ActionClient of constrained_ik), the server already matched."""
    import rclpy
    from rclpy.action import ActionClient
    from ros2_ik_interfaces.action import ConstrainedIK
    executor = _start_ros(domain_id)
    node = rclpy.create_node(name)
    action = ActionClient(node, ConstrainedIK, f"{namespace.rstrip('/')}/constrained_ik")
    executor.add_node(node)
    if not action.wait_for_server(timeout_sec=60):
        raise TimeoutError("constrained_ik did not appear")
    return executor, node, action


def _close_action_client(executor, node, action) -> None:
    """Tear down what :func:`_action_client` opened, and this process's rclpy."""
    import rclpy
    action.destroy()
    node.destroy_node()
    executor.shutdown()
    rclpy.shutdown()
