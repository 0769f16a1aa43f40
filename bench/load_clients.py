"""Client processes of ``bench/load.py``: ComputeIK callers and a joint_states streamer.

Each runs in its own spawned process with its own rclpy context, on the domain the
parent chose; results go back through a multiprocessing queue.
"""
from __future__ import annotations

import os
import time
from collections import Counter

import numpy as np

ARM = [f"panda_joint{i}" for i in range(1, 8)]
READY = np.array([0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785])
LOST_AFTER_S = 10.0


def percentiles(values_ms: np.ndarray) -> dict:
    """p50 / p90 / p99 / max of ``values_ms`` [ms]."""
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


def service_worker(domain_id: str, namespace: str, index: int, count: int, seed: int,
                   progress, results, deadline: float) -> None:
    """Call compute_ik ``count`` times, one in flight; put the figures on ``results``."""
    os.environ["ROS_DOMAIN_ID"] = domain_id
    from ros2_ik.node.harness import isolate_ros
    isolate_ros(int(domain_id))
    import rclpy
    from ros2_ik.node.error_codes import CODE_NAMES
    from ros2_ik.node.harness import Client
    rclpy.init()
    client = Client(f"load_client_{index}", namespace=namespace)
    client.ik = deep_client(client, namespace)
    client.wait_for_service(60)
    make = request_maker(seed)
    warmup_retries = warm_up(client, make)
    rtts, solves, codes, lost, sent, lost_at = [], [], Counter(), 0, 0, []
    stopped = False
    first = time.perf_counter()
    try:
        for _ in range(count):
            if time.time() > deadline:
                stopped = True
                break
            req = make()
            sent += 1
            t0 = time.perf_counter()
            future = client.ik.call_async(req)
            while not future.done() and time.perf_counter() - t0 < LOST_AFTER_S:
                rclpy.spin_once(client.node, timeout_sec=0.05)
            if not future.done():
                lost += 1
                lost_at.append(sent - 1)
                client.ik.remove_pending_request(future)
                continue
            rtts.append(time.perf_counter() - t0)
            res = future.result()
            solves.append(res.solve_time)
            codes[CODE_NAMES.get(res.error_code.val, str(res.error_code.val))] += 1
            with progress.get_lock():
                progress.value += 1
    finally:
        results.put({"sent": sent, "lost": lost, "lost_at": lost_at, "codes": dict(codes),
                     "rtt_s": np.array(rtts), "solve_s": np.array(solves),
                     "stopped_by_deadline": stopped, "warmup_retries": warmup_retries,
                     "busy_s": time.perf_counter() - first})
        client.close()
        rclpy.shutdown()


def deep_client(client, namespace: str):
    """Return a compute_ik client whose response history holds 1000 answers, not 10.

    With the default keep-last 10, make load lost about 1 answer in 20,000-100,000
    on 2 busy cores, with nothing in the node's log, also after the node's own
    service history went to 100: the likely cause is the client's response reader
    overwriting an answer it had not taken yet while the process was descheduled.
    """
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from ros2_ik_interfaces.srv import ComputeIK
    client.node.destroy_client(client.ik)
    return client.node.create_client(
        ComputeIK, f"{namespace.rstrip('/')}/compute_ik",
        qos_profile=QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE))


def warm_up(client, make, attempts: int = 5, timeout_s: float = 2.0) -> int:
    """Call until one answer arrives; the retries needed (a discovery race, not load).

    ``wait_for_service`` can return before the server has matched this client's
    response reader; a response sent in that window is lost by DDS.
    """
    import rclpy
    for retry in range(attempts):
        future = client.ik.call_async(make())
        t0 = time.perf_counter()
        while not future.done() and time.perf_counter() - t0 < timeout_s:
            rclpy.spin_once(client.node, timeout_sec=0.05)
        if future.done():
            return retry
        client.ik.remove_pending_request(future)
    raise TimeoutError(f"no answer to {attempts} warm-up calls")


def stream_worker(domain_id: str, namespace: str, rate_hz: float, seconds: float,
                  results) -> None:
    """Publish joint_states at ``rate_hz`` for ``seconds``; report the worst send gap."""
    from ros2_ik.node.harness import isolate_ros
    isolate_ros(int(domain_id))
    import rclpy
    from ros2_ik.node.harness import Client
    rclpy.init()
    client = Client("load_joint_states", namespace=namespace)
    period = 1.0 / rate_hz
    sent, worst, last = 0, 0.0, None
    start = time.perf_counter()
    next_t = start
    while time.perf_counter() - start < seconds:
        now = time.perf_counter()
        if now < next_t:
            time.sleep(min(next_t - now, 0.0005))
            continue
        client.publish_joints(ARM, READY + 0.01 * np.sin(now))
        if last is not None:
            worst = max(worst, now - last)
        last, sent = now, sent + 1
        next_t += period
    results.put({"sent": sent, "worst_gap_s": worst})
    client.close()
    rclpy.shutdown()
