"""``make load``: load and soak figures of ``ik_node`` over DDS on loopback.

One ``ik_node`` process (the Panda, panda.yaml), on a private ROS domain with
localhost-only discovery.  Client load runs in separate processes (spawned), so the
clients do not share a GIL with each other or with the measuring parent.  Every part
is bounded in count and in time and the script stops by itself.

1. ``concurrency``: 4 clients x 2,500 ComputeIK calls, one in flight per client:
   lost (no answer within 10 s) and failed (not SUCCESS) replies, round-trip p50/p99,
   and the latency added over the node's own ``solve_time``.
2. ``joint_states``: a publisher at 500 Hz while 2 service clients and an action
   client solve; the node's ``~/diagnostics`` reports the longest gap between two
   joint_states callbacks (the publisher's own worst send gap is reported next to it).
3. ``soak``: 100,000 ComputeIK calls (4 clients x 25,000) against the same node
   process; its resident memory (``/proc/<pid>/status`` VmRSS) is sampled every
   second; growth is measured from the end of the warm-up (first 10 %) to the end.
4. ``cancel``: 100 goals on an unreachable target, each cancelled after its first
   feedback; latency from the cancel request to the result (p99 target: 50 ms).

``--quick`` runs a small smoke version.  Figures go to ``bench/results/load.json``.
"""
from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import pathlib
import sys
import threading
import time
from collections import Counter

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
RESULTS = ROOT / "bench" / "results" / "load.json"
NAMESPACE = "/load"
ARM = [f"panda_joint{i}" for i in range(1, 8)]
READY = np.array([0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785])

from machine import machine  # noqa: E402
from load_clients import (  # noqa: E402
    percentiles, request_maker, service_worker, stream_worker)


def rss_kb(pid: int) -> int:
    """Resident set size of process ``pid`` [kB]."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def start_node():
    """Return the ik_node process under test and a parent-side client, model loaded."""
    from ament_index_python.packages import get_package_share_directory
    from ros2_ik.core import robots
    from ros2_ik.node.harness import Client, NodeProcess
    from ros2_ik_interfaces.srv import ComputeIK
    config = os.path.join(get_package_share_directory("ros2_ik"), "config", "panda.yaml")
    node = NodeProcess(extra_args=["--params-file", config, "-r", f"__ns:={NAMESPACE}"])
    client = Client("load_parent", namespace=NAMESPACE)
    client.publish_description(robots.urdf_text("panda"), robots.srdf_text("panda"))
    client.wait_for_service(60)
    assert client.action.wait_for_server(timeout_sec=60)
    req = ComputeIK.Request()
    req.target.pose.orientation.w = 1.0
    client.wait_for_model(req, timeout_s=60)
    return node, client


def run_workers(count_each: int, clients: int, deadline: float, node_pid: int = 0,
                sample_rss: bool = False) -> dict:
    """``clients`` service workers, ``count_each`` calls each; merged figures."""
    ctx = mp.get_context("spawn")
    progress = ctx.Value("q", 0)
    results = ctx.Queue()
    procs = [ctx.Process(target=service_worker,
                         args=(os.environ["ROS_DOMAIN_ID"], NAMESPACE, i, count_each, 100 + i,
                               progress, results, deadline))
             for i in range(clients)]
    for p in procs:
        p.start()
    curve = []
    started = time.monotonic()
    while any(p.is_alive() for p in procs) and results.qsize() < clients:
        if sample_rss:
            curve.append((progress.value, round(time.monotonic() - started, 1),
                          rss_kb(node_pid)))
        time.sleep(1.0)
    parts = [results.get(timeout=120) for _ in procs]
    for p in procs:
        p.join(30)
    if sample_rss:
        curve.append((progress.value, round(time.monotonic() - started, 1), rss_kb(node_pid)))
    return merge(parts, time.monotonic() - started, curve)


def merge(parts, elapsed_s, curve) -> dict:
    rtt = np.concatenate([p["rtt_s"] for p in parts])
    solve = np.concatenate([p["solve_s"] for p in parts])
    codes = Counter()
    for p in parts:
        codes.update(p["codes"])
    out = {"clients": len(parts), "requests": int(sum(p["sent"] for p in parts)),
           "answered": int(len(rtt)), "lost": int(sum(p["lost"] for p in parts)),
           "lost_at_request_index": [p["lost_at"] for p in parts],
           "warmup_retries": [p["warmup_retries"] for p in parts],
           "failed": int(sum(v for k, v in codes.items() if k != "SUCCESS")),
           "codes": dict(codes), "seconds": round(elapsed_s, 1),
           "throughput_per_s": round(len(rtt) / max(p["busy_s"] for p in parts), 1),
           "round_trip_ms": percentiles(rtt * 1e3),
           "solve_time_ms": percentiles(solve * 1e3),
           "added_over_solve_ms": percentiles((rtt - solve) * 1e3),
           "stopped_by_deadline": any(p["stopped_by_deadline"] for p in parts)}
    if curve:
        out["rss_curve"] = [{"requests": n, "t_s": t, "rss_mb": round(kb / 1024, 1)}
                            for n, t, kb in curve]
    return out


def rss_growth(curve, warmup_fraction: float = 0.1) -> dict:
    """Growth of the node's RSS from the end of the warm-up to the end [%]."""
    total = curve[-1]["requests"]
    after = [c for c in curve if c["requests"] >= warmup_fraction * total]
    base, end = after[0]["rss_mb"], curve[-1]["rss_mb"]
    peak = max(c["rss_mb"] for c in after)
    return {"warmup_requests": after[0]["requests"], "rss_after_warmup_mb": base,
            "rss_end_mb": end, "rss_peak_after_warmup_mb": peak,
            "growth_percent": round(100.0 * (end - base) / base, 2),
            "peak_growth_percent": round(100.0 * (peak - base) / base, 2)}


def joint_states_under_load(client, seconds: float, deadline: float) -> dict:
    """500 Hz joint_states while 2 service clients and an action client solve."""
    from std_msgs.msg import String
    gaps, counts = [], []

    def on_diag(msg):
        js = json.loads(msg.data).get("joint_states", {})
        gaps.append(js.get("max_gap_s", 0.0))
        counts.append(js.get("messages", 0))

    sub = client.node.create_subscription(String, f"{NAMESPACE}/ik_node/diagnostics",
                                          on_diag, 10)
    ctx = mp.get_context("spawn")
    stream_out = ctx.Queue()
    startup_s = 5.0  # spawned clients import rclpy and discover the node meanwhile
    stream = ctx.Process(target=stream_worker, args=(os.environ["ROS_DOMAIN_ID"], NAMESPACE,
                                                     500.0, seconds + startup_s, stream_out))
    stream.start()
    stop = min(deadline, time.time() + seconds + startup_s)
    box = {}
    services = threading.Thread(target=lambda: box.update(
        service=run_workers(10**6, 2, stop)))
    services.start()
    actions = action_load(client, stop)
    services.join()
    stream_stats = stream_out.get(timeout=60)
    stream.join(30)
    client.node.destroy_subscription(sub)
    live = [i for i, c in enumerate(counts) if c > 0]  # windows with the stream on,
    windows = gaps[live[1]:live[-1]] if len(live) > 2 else gaps  # minus partial ends
    rates = counts[live[1]:live[-1]] if len(live) > 2 else counts
    return {"seconds": seconds + startup_s, "publisher_hz": 500.0,
            "node_gap_ms_per_window": [round(1e3 * g, 1) for g in gaps],
            "node_callbacks_per_window": counts,
            "node_worst_gap_ms": round(1e3 * max(windows), 2) if windows else None,
            "node_callbacks_per_s_min": min(rates) if rates else None,
            "node_callbacks_per_s_median": float(np.median(rates)) if rates else None,
            "publisher_worst_send_gap_ms": round(1e3 * stream_stats["worst_gap_s"], 2),
            "publisher_sent": stream_stats["sent"],
            "service_during": {k: box["service"][k] for k in
                               ("requests", "lost", "lost_at_request_index",
                                "warmup_retries", "failed", "round_trip_ms")},
            "action_during": actions}


def action_load(client, stop: float) -> dict:
    """Reachable pose goals back to back until ``stop``; codes and round trips."""
    from ros2_ik.node.harness import wait_for
    from ros2_ik_interfaces.action import ConstrainedIK
    from ros2_ik_interfaces.msg import PoseGoal
    make = request_maker(7)
    codes, rtts = Counter(), []
    while time.time() < stop:
        req = make()
        goal = ConstrainedIK.Goal()
        goal.group_name, goal.timeout, goal.seed = "arm", 0.05, req.seed
        pg = PoseGoal(tip_link="panda_hand", target=req.target)
        goal.pose_goals = [pg]
        t0 = time.perf_counter()
        send = client.action.send_goal_async(goal)
        wait_for(send.done, 10, "goal acceptance", client.spin)
        result = send.result().get_result_async()
        wait_for(result.done, 10, "the result", client.spin)
        rtts.append(time.perf_counter() - t0)
        codes[str(result.result().result.error_code.val)] += 1
    return {"goals": len(rtts), "codes": dict(codes),
            "round_trip_ms": percentiles(np.array(rtts) * 1e3)}


def cancel_latency(client, cancels: int, deadline: float) -> dict:
    """Cancel ``cancels`` running goals after their first feedback; time to the result."""
    from action_msgs.msg import GoalStatus
    from ros2_ik.node.harness import wait_for
    from ros2_ik_interfaces.action import ConstrainedIK
    from ros2_ik_interfaces.msg import PoseGoal
    to_result, to_accept, statuses = [], [], Counter()
    for i in range(cancels):
        if time.time() > deadline:
            break
        goal = ConstrainedIK.Goal()
        goal.group_name, goal.timeout, goal.random_seed = "arm", 10.0, i
        pg = PoseGoal(tip_link="panda_hand")
        pg.target.header.frame_id = "panda_link0"
        pg.target.pose.position.x, pg.target.pose.orientation.w = 3.0, 1.0
        goal.pose_goals = [pg]
        feedback = []
        send = client.action.send_goal_async(goal, feedback_callback=feedback.append)
        wait_for(send.done, 10, "goal acceptance", client.spin)
        handle = send.result()
        result = handle.get_result_async()
        wait_for(lambda: feedback, 10, "the first feedback", client.spin)
        t0 = time.perf_counter()
        cancel = handle.cancel_goal_async()
        wait_for(cancel.done, 10, "the cancel response", client.spin)
        to_accept.append(time.perf_counter() - t0)
        wait_for(result.done, 10, "the cancelled result", client.spin)
        to_result.append(time.perf_counter() - t0)
        statuses["CANCELED" if result.result().status == GoalStatus.STATUS_CANCELED
                 else str(result.result().status)] += 1
    return {"cancels": len(to_result), "statuses": dict(statuses),
            "cancel_to_result_ms": percentiles(np.array(to_result) * 1e3),
            "cancel_to_response_ms": percentiles(np.array(to_accept) * 1e3)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--requests", type=int, default=2500, help="per client")
    parser.add_argument("--stream-seconds", type=float, default=20.0)
    parser.add_argument("--soak", type=int, default=100000, help="total soak requests")
    parser.add_argument("--cancels", type=int, default=100)
    parser.add_argument("--budget-s", type=float, default=1800.0, help="whole-run bound")
    parser.add_argument("--quick", action="store_true", help="a small smoke run")
    parser.add_argument("--parts", default="concurrency,joint_states,cancel,soak",
                        help="comma-separated subset to run")
    parser.add_argument("--output", default=str(RESULTS))
    args = parser.parse_args()
    parts = args.parts.split(",")
    if args.quick:
        args.requests, args.stream_seconds, args.soak, args.cancels = 100, 5.0, 2000, 20
    from ros2_ik.node.harness import isolate_ros
    isolate_ros()
    import rclpy
    rclpy.init()
    deadline = time.time() + args.budget_s
    node, client = start_node()
    report = {"machine": machine(), "args": vars(args),
              "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    try:
        if "concurrency" in parts:
            report["concurrency"] = run_workers(args.requests, args.clients, deadline)
            print_part("concurrency", report["concurrency"])
        if "joint_states" in parts:
            report["joint_states"] = joint_states_under_load(client, args.stream_seconds,
                                                             deadline)
            print_part("joint_states", report["joint_states"])
        if "cancel" in parts:
            report["cancel"] = cancel_latency(client, args.cancels, deadline)
            print_part("cancel", report["cancel"])
        if "soak" in parts:
            soak = run_workers(args.soak // args.clients, args.clients, deadline,
                               node.proc.pid, sample_rss=True)
            soak["memory"] = rss_growth(soak["rss_curve"])
            report["soak"] = soak
            print_part("soak", {k: v for k, v in soak.items() if k != "rss_curve"})
        report["node_alive"] = node.alive()
        report["node_log_bytes"] = len(node.output())
    finally:
        client.close()
        report["node_exit_code"] = node.stop()
        rclpy.shutdown()
    pathlib.Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    pathlib.Path(args.output).write_text(json.dumps(report, indent=1) + "\n")
    print(f"-> {args.output}")
    return 0


def print_part(name: str, part: dict) -> None:
    print(f"== {name}")
    for key, value in part.items():
        print(f"   {key}: {value}")
    sys.stdout.flush()


if __name__ == "__main__":
    sys.exit(main())
