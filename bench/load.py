"""``make load``: latency, load and soak figures of ``ik_node`` over DDS on loopback.

One ``ik_node`` process (the Panda, panda.yaml), on a private ROS domain with ROS's
default discovery range (SUBNET): as a user runs it, so the node's Fast DDS participant is
on UDPv4 alone (node/transport.py), while the clients and the joint_states driver keep
Fast DDS's defaults (shared memory + UDPv4).  ``--discovery-range LOCALHOST`` runs all on
shared memory, as the tests do.  Clients run in separate processes (spawned), so they do
not share a GIL with each other, with the node or with the measuring parent.  Every
part is bounded in count and in time and the script stops by itself.

1. ``single_client``: one client, one call in flight.  Per request: the round trip,
   the reply's ``solve_time``, and in the client process, right after, the same
   request solved in-process: the core's ``solve()`` alone (the reference) and the
   node's whole ``compute_ik`` without ROS; then the floors (bench/load_floor.py):
   the node's ``get_parameters``, an Empty service and an echo ComputeIK of a bare
   server, and rclpy's message conversions of the call, timed in-process.
2. ``four_clients``: 4 clients x 2,500 calls, one in flight each: lost (no answer in
   10 s), failed (not SUCCESS), round trip.
3. ``action``: reachable pose goals one after another: goal sent -> result received.
4. ``with_joint_states``: 1 to 3 again while a driver streams joint_states at 1 kHz;
   the node's ``~/diagnostics`` gives the longest gap between joint_states callbacks.
5. ``cancel``: goals on an unreachable target, each cancelled after its first
   feedback: cancel request -> result.
6. ``soak``: 100,000 calls (4 clients x 25,000) on the same node process; its RSS
   (``/proc/<pid>/status``) sampled every second, growth from the end of the warm-up
   (first 10 %) to the end.

Targets (issue 11) are evaluated in ``targets``.  ``--quick`` runs a small smoke
version into ``load_quick.json``; the full run writes ``load.json``, ``load.md`` and
the docs table (between ``<!-- load:begin -->`` and ``<!-- load:end -->``, docs/robustness.md).
"""
from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import pathlib
import sys
import time
from collections import Counter

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tools"))
import results_files  # noqa: E402

RESULTS = results_files.RESULTS
NAMESPACE = "/load"
PARTS = "single_client,four_clients,action,with_joint_states,cancel,soak"

from load_clients import (  # noqa: E402
    action_worker, cancel_worker, diagnostics_worker, percentiles, service_worker,
    stream_worker)
from load_floor import floor_process  # noqa: E402
from doc_sections import write as write_section  # noqa: E402
from load_report import evaluate, markdown  # noqa: E402
from machine import machine  # noqa: E402


def rss_kb(pid: int) -> int:
    """Resident set size of process ``pid`` [kB]."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def start_node(node_source: str = ""):
    """Return the ik_node process under test and a parent-side client, model loaded.

    ``node_source``: a folder holding another ``ros2_ik`` Python package to run the node
    from (a before/after comparison); '' runs the installed one.
    """
    from ament_index_python.packages import get_package_share_directory
    from ros2_ik.core import robots
    from ros2_ik.node.harness import Client, NodeProcess
    from ros2_ik_interfaces.srv import ComputeIK
    config = os.path.join(get_package_share_directory("ros2_ik"), "config", "panda.yaml")
    env = {"PYTHONPATH": os.pathsep.join([node_source, os.environ.get("PYTHONPATH", "")])} \
        if node_source else None
    node = NodeProcess(extra_args=["--params-file", config, "-r", f"__ns:={NAMESPACE}"],
                       env=env)
    client = Client("load_parent", namespace=NAMESPACE)
    client.publish_description(robots.urdf_text("panda"), robots.srdf_text("panda"))
    client.wait_for_service(60)
    assert client.action.wait_for_server(timeout_sec=60)
    req = ComputeIK.Request()
    req.target.pose.orientation.w = 1.0
    client.wait_for_model(req, timeout_s=60)
    return node, client


def spawn(target, *args):
    """Start ``target(domain, namespace, *args)`` in a spawned process."""
    proc = mp.get_context("spawn").Process(
        target=target, args=(os.environ["ROS_DOMAIN_ID"], NAMESPACE) + args)
    proc.start()
    return proc


def finish(proc, timeout_s: float = 30.0) -> None:
    """Join a worker; kill it if it hangs in DDS teardown (see ``load_clients.send``)."""
    proc.join(timeout_s)
    if proc.is_alive():
        print(f"   worker {proc.pid} hung after sending its figures (DDS teardown); killed",
              flush=True)
        proc.kill()
        proc.join(5)


def run_workers(count_each: int, clients: int, deadline: float, node_pid: int = 0,
                sample_rss: bool = False, in_process: bool = False) -> dict:
    """``clients`` service workers, ``count_each`` calls each; merged figures.

    ``in_process``: with the in-process references and the floors (a bare server runs).
    """
    if in_process:
        with floor_process():
            return _run_workers(count_each, clients, deadline, node_pid, sample_rss, True)
    return _run_workers(count_each, clients, deadline, node_pid, sample_rss, False)


def _run_workers(count_each: int, clients: int, deadline: float, node_pid: int,
                 sample_rss: bool, in_process: bool) -> dict:
    ctx = mp.get_context("spawn")
    progress, results = ctx.Value("q", 0), ctx.Queue()
    procs = [spawn(service_worker, i, count_each, 100 + i, progress, results, deadline,
                   in_process) for i in range(clients)]
    curve, started = [], time.monotonic()
    while any(p.is_alive() for p in procs) and results.qsize() < clients:
        if sample_rss:
            curve.append((progress.value, round(time.monotonic() - started, 1),
                          rss_kb(node_pid)))
        time.sleep(1.0 if sample_rss else 0.1)
    parts = [results.get(timeout=120) for _ in procs]
    for p in procs:
        finish(p)
    if sample_rss:
        curve.append((progress.value, round(time.monotonic() - started, 1), rss_kb(node_pid)))
    return merge(parts, time.monotonic() - started, curve)


def merge(parts, elapsed_s, curve) -> dict:
    """One result of the workers' ``parts`` (see service_worker)."""
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
           "reply_solve_time_ms": percentiles(solve * 1e3),
           "added_over_solve_time_ms": percentiles((rtt - solve) * 1e3),
           "stopped_by_deadline": any(p["stopped_by_deadline"] for p in parts)}
    core = np.concatenate([p["core_s"] for p in parts])
    if len(core) == len(rtt) and len(core):
        out.update(floor_figures(parts, rtt, solve, core))
    if curve:
        out["rss_curve"] = [{"requests": n, "t_s": t, "rss_mb": round(kb / 1024, 1)}
                            for n, t, kb in curve]
    return out


def floor_figures(parts, rtt, solve, core) -> dict:
    """Return the one client's in-process references and floors (load_floor.py) [ms]."""
    def ms(key):
        values = np.concatenate([p[key] for p in parts])
        return values[np.isfinite(values)] * 1e3
    echo = np.concatenate([p["echo_compute_ik_s"] for p in parts])
    return {"in_process_solve_ms": percentiles(core * 1e3),
            # The same solve after sleeping one round trip: the idle gap the node has.
            "in_process_solve_after_idle_ms": percentiles(ms("core_after_idle_s")),
            "in_process_compute_ik_ms": percentiles(ms("node_path_s")),
            "round_trip_minus_in_process_solve_ms": percentiles((rtt - core) * 1e3),
            "get_parameters_round_trip_ms": percentiles(ms("get_parameters_s")),
            "empty_service_round_trip_ms": percentiles(ms("empty_s")),
            "echo_compute_ik_round_trip_ms": percentiles(ms("echo_compute_ik_s")),
            # Call by call: what the node adds over a server that answers at once.
            "round_trip_minus_echo_ms": percentiles((rtt - echo)[np.isfinite(echo)] * 1e3),
            "round_trip_minus_echo_minus_solve_time_ms": percentiles(
                (rtt - echo - solve)[np.isfinite(echo)] * 1e3),
            "message_conversions_node_ms": percentiles(ms("node_conversions_s")),
            "message_conversions_client_ms": percentiles(ms("client_conversions_s"))}


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


def action_latency(goals: int, deadline: float) -> dict:
    """Reachable pose goals one after another from a spawned client."""
    results = mp.get_context("spawn").Queue()
    proc = spawn(action_worker, goals, 7, results, deadline)
    out = results.get(timeout=max(60.0, deadline - time.time() + 60))
    finish(proc)
    return out


def latency_parts(args, deadline: float) -> dict:
    """Parts 1 to 3: one client (with the in-process reference), four clients, the action."""
    return {"single_client": run_workers(args.single, 1, deadline, in_process=True),
            "four_clients": run_workers(args.requests, args.clients, deadline),
            "action": action_latency(args.goals, deadline)}


def with_joint_states(args, deadline: float) -> dict:
    """Parts 1 to 3 while joint_states stream at ``args.stream_hz``; the node's gaps."""
    ctx = mp.get_context("spawn")
    stop, stream_out, diag_out = ctx.Event(), ctx.Queue(), ctx.Queue()
    diag = spawn(diagnostics_worker, stop, diag_out)
    stream = spawn(stream_worker, args.stream_hz, stop, stream_out)
    time.sleep(3.0)  # both discover the node (the first window is dropped anyway)
    parts = latency_parts(args, deadline)
    time.sleep(1.5)  # one more full diagnostics window with the stream alone
    stop.set()
    stream_stats, windows = stream_out.get(timeout=60), diag_out.get(timeout=60)
    finish(stream)
    finish(diag)
    counts = [w["messages"] for w in windows]
    live = [i for i, c in enumerate(counts) if c > 0]
    inner = windows[live[1]:live[-1]] if len(live) > 2 else windows  # minus partial ends
    # A late diagnostics tick is followed by an early one: rates from windows >= 0.5 s.
    rates = [w["messages"] / w["window_s"] for w in inner if w["window_s"] >= 0.5]
    parts["joint_states"] = {
        "publisher_hz": args.stream_hz, "publisher_sent": stream_stats["sent"],
        "publisher_worst_send_gap_ms": round(1e3 * stream_stats["worst_send_gap_s"], 2),
        "windows": len(inner),
        "node_worst_gap_ms": round(1e3 * max(w["max_gap_s"] for w in inner), 2)
        if inner else None,
        "node_callbacks_per_s_min": round(min(rates), 1) if rates else None,
        "node_callbacks_per_s_median": round(float(np.median(rates)), 1) if rates else None,
        "node_gap_ms_per_window": [round(1e3 * w["max_gap_s"], 1) for w in windows]}
    return parts


def cancel_latency(cancels: int, deadline: float) -> dict:
    """Cancel ``cancels`` running goals after their first feedback, from a spawned client."""
    results = mp.get_context("spawn").Queue()
    proc = spawn(cancel_worker, cancels, results, deadline)
    out = results.get(timeout=max(60.0, deadline - time.time() + 60))
    finish(proc)
    return out


def soak(args, node, deadline: float) -> dict:
    """``args.soak`` calls from ``args.clients`` clients; the node's RSS curve."""
    out = run_workers(args.soak // args.clients, args.clients, deadline, node.proc.pid,
                      sample_rss=True)
    out["memory"] = rss_growth(out["rss_curve"])
    return out


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--single", type=int, default=2000, help="calls of the one client")
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--requests", type=int, default=2500, help="per client")
    parser.add_argument("--goals", type=int, default=300, help="action goals")
    parser.add_argument("--stream-hz", type=float, default=1000.0)
    parser.add_argument("--soak", type=int, default=100000, help="total soak requests")
    parser.add_argument("--cancels", type=int, default=100)
    parser.add_argument("--budget-s", type=float, default=900.0, help="whole-run bound")
    parser.add_argument("--quick", action="store_true", help="a small smoke run")
    parser.add_argument("--parts", default=PARTS, help="comma-separated subset to run")
    parser.add_argument("--discovery-range", default="SUBNET", choices=("SUBNET", "LOCALHOST"),
                        help="ROS_AUTOMATIC_DISCOVERY_RANGE of every process (see above)")
    parser.add_argument("--node-source", default="",
                        help="folder holding another ros2_ik package to run the node from")
    parser.add_argument("--output", default="", help="JSON path (default: bench/results/"
                        "load.json, load_quick.json with --quick)")
    args = parser.parse_args()
    if args.quick:
        args.single, args.requests, args.goals = 300, 200, 40
        args.soak, args.cancels = 4000, 20
    args.output = args.output or str(RESULTS / ("load_quick.json" if args.quick
                                                else "load.json"))
    return args


def run_parts(args, parts, node, client, deadline: float, report: dict) -> None:
    """Run the selected parts in order, printing each as it ends."""
    steps = [("single_client", lambda: run_workers(args.single, 1, deadline,
                                                   in_process=True)),
             ("four_clients", lambda: run_workers(args.requests, args.clients, deadline)),
             ("action", lambda: action_latency(args.goals, deadline)),
             ("with_joint_states", lambda: with_joint_states(args, deadline)),
             ("cancel", lambda: cancel_latency(args.cancels, deadline)),
             ("soak", lambda: soak(args, node, deadline))]
    for name, run in steps:
        if name in parts:
            report[name] = run()
            print_part(name, report[name])


def main() -> int:
    args = parse_args()
    parts = args.parts.split(",")
    from ros2_ik.node.harness import isolate_ros
    isolate_ros(discovery_range=args.discovery_range)
    import rclpy
    rclpy.init()
    deadline = time.time() + args.budget_s
    node, client = start_node(args.node_source)
    report = {"machine": machine(), "args": vars(args),
              "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    try:
        run_parts(args, parts, node, client, deadline, report)
        report["node_alive"] = node.alive()
        report["node_log_bytes"] = len(node.output())
    finally:
        client.close()
        report["node_exit_code"] = node.stop()
        rclpy.shutdown()
    report["machine"]["load_average_at_end"] = list(os.getloadavg())
    report["targets"] = evaluate(report)
    write(args, report)
    return 0


def write(args, report: dict) -> None:
    """load.json (and for a full run load.md and the docs table)."""
    out = pathlib.Path(args.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=1) + "\n")
    print(f"-> {out}")
    for t in report["targets"]:
        print(f"   {'met    ' if t['met'] else 'NOT MET'} {t['target']}: {t['measured']}")
    if not args.quick and out.resolve() == (RESULTS / "load.json").resolve():
        table = markdown(report)
        (RESULTS / "load.md").write_text(table + "\n")
        page = write_section("load", table)
        print(f"-> bench/results/load.md, {page.relative_to(ROOT)}")


def print_part(name: str, part: dict) -> None:
    print(f"== {name}")
    for key, value in part.items():
        if key != "rss_curve":
            print(f"   {key}: {value}")
    sys.stdout.flush()


if __name__ == "__main__":
    sys.exit(main())
