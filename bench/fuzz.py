"""``make fuzz``: the hypothesis strategies of the fuzz tests, run for >= 10,000 requests.

Ten parts, each with the generators and independent checks of
``ros2_ik/test/test_fuzz_core.py``, ``test_fuzz_node.py``, ``test_constrained_property.py``,
``test_fuzz_whole_body.py``, ``test_fuzz_whole_body_ik.py``, ``test_fuzz_path.py``,
``test_fuzz_scene.py``, ``test_node_upstream.py`` and ``test_fuzz_moveit.py``: the core
API, arbitrary constraint problems through every solver of the core
(``constrained_fuzz.py``: every constraint kind, five arms, checked in metres and radians
by ``constrained_check.py``), ComputeIK over DDS
and ConstrainedIK over DDS (against one ``ik_node`` process on a private, localhost-only
ROS domain), whole-body ConstrainedIK goals on talos (contacts, support polygons, CoM
boxes, base seeds; through the action's goal handler in this process), whole-body
ComputeIK requests on PR2's base, torso and right arm (targets, weights, base seeds, the
left arm's ``joint_states``, collision checks; through the service's handler, every
SUCCESS checked by FK and, when collision-checked, by the checker with the left arm where
``joint_states`` put it), ComputeIKPath requests on the Panda (through
the service's handler in this process), planning-scene batches, each followed by a
collision-checked ComputeIK request, and TIAGo arm requests with the lift under it in the
seed and ``joint_states`` (sensible, past its limits, huge, non-finite; every SUCCESS
checked by FK at the lift held), and MoveIt GetPositionIK requests with joint and position
constraints on the Panda (through the service's handler; every SUCCESS checked by FK
against the pose, each joint window and each region, with MoveIt's meaning).  A failing
check is recorded (not shrunk) and the run goes on; the exit status is 1 when any crash or
false SUCCESS was seen.  Figures go to ``bench/results/fuzz.json``.
"""
from __future__ import annotations

import argparse
import json
import pathlib
import sys
import time
import warnings
from collections import Counter

from hypothesis import HealthCheck, Phase, given, settings
from machine import machine

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "ros2_ik" / "test"))
RESULTS = ROOT / "bench" / "results" / "fuzz.json"


def run_part(name: str, strategy, check, count: int, stats: Counter) -> dict:
    """Call ``check(example)`` on ``count`` generated examples; record failures."""
    failures: list = []
    calls = [0]

    @settings(max_examples=count, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def body(example):
        calls[0] += 1
        try:
            check(example)
        except AssertionError as exc:
            if len(failures) < 10:
                failures.append(str(exc)[:500])
        except Exception as exc:  # a bug of the checker itself: record, go on
            stats["checker_error"] += 1
            if len(failures) < 10:
                failures.append(f"checker {type(exc).__name__}: {exc}"[:500])

    started = time.perf_counter()
    body()
    elapsed = time.perf_counter() - started
    part = {"requests": calls[0], "seconds": round(elapsed, 2),
            "per_second": round(calls[0] / elapsed, 1), "outcomes": dict(sorted(stats.items())),
            "crashes": stats.get("crash", 0), "false_successes": stats.get("false_success", 0),
            "failures": failures}
    print(f"{name:>13}: {calls[0]:6d} requests in {elapsed:6.1f} s, crashes "
          f"{part['crashes']}, false SUCCESS {part['false_successes']}")
    print(" " * 15 + ", ".join(f"{k} {v}" for k, v in part["outcomes"].items()))
    return part


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--core", type=int, default=5000, help="core API requests")
    parser.add_argument("--constrained", type=int, default=5000,
                        help="constraint problems (each through lm, dls, sqp and bfgs)")
    parser.add_argument("--service", type=int, default=4000, help="ComputeIK requests")
    parser.add_argument("--action", type=int, default=1200, help="ConstrainedIK goals")
    parser.add_argument("--whole-body", type=int, default=3000,
                        help="whole-body ConstrainedIK goals on talos (the goal handler)")
    parser.add_argument("--whole-body-ik", type=int, default=2000,
                        help="ComputeIK requests on PR2's base, torso and right arm (the "
                             "service's handler; half check collisions)")
    parser.add_argument("--path", type=int, default=2000,
                        help="ComputeIKPath requests on the Panda (the service's handler)")
    parser.add_argument("--scene", type=int, default=2000,
                        help="planning-scene batches, each then a collision-checked request")
    parser.add_argument("--upstream", type=int, default=2000,
                        help="TIAGo arm requests with the lift in the seed and joint_states")
    parser.add_argument("--moveit", type=int, default=1000,
                        help="GetPositionIK requests with constraints (the handler)")
    parser.add_argument("--quick", action="store_true", help="a small smoke run")
    parser.add_argument("--output", default=str(RESULTS))
    args = parser.parse_args()
    if args.quick:
        args.core, args.constrained, args.service, args.action = 200, 100, 200, 50
        args.whole_body, args.path, args.scene, args.upstream = 50, 50, 50, 50
        args.whole_body_ik, args.moveit = 50, 50
    warnings.simplefilter("ignore", RuntimeWarning)  # overflow in numpy on 1e300 inputs

    import test_fuzz_core as core
    parts = {"core": run_part("core API", core.core_requests(), core.check_core_request,
                              args.core, core.STATS)}
    parts["constrained"] = fuzz_constrained(args.constrained)
    parts.update(fuzz_node(args))
    import test_fuzz_whole_body as whole_body
    parts["whole_body"] = run_part("whole-body", whole_body.whole_body_goals(),
                                   whole_body.check_goal, args.whole_body, whole_body.STATS)
    import test_fuzz_whole_body_ik as whole_body_ik
    parts["whole_body_ik"] = run_part("whole-body ComputeIK", whole_body_ik.whole_body_requests(),
                                      whole_body_ik.check_request, args.whole_body_ik,
                                      whole_body_ik.STATS)
    import test_fuzz_path as path
    parts["path"] = run_part("ComputeIKPath", path.path_requests(), path.check_request,
                             args.path, path.STATS)
    import test_fuzz_scene as scene
    parts["scene"] = run_part("scene", scene.batches(), scene.check_batch, args.scene,
                              scene.STATS)
    import test_node_upstream as upstream
    parts["upstream"] = run_part("upstream", upstream.held_requests(),
                                 upstream.check_held_request, args.upstream, upstream.STATS)
    import test_fuzz_moveit as moveit
    parts["moveit"] = run_part("GetPositionIK", moveit.requests(), moveit.check_request,
                               args.moveit, moveit.STATS)
    total = sum(p["requests"] for p in parts.values())
    crashes = sum(p["crashes"] for p in parts.values())
    lies = sum(p["false_successes"] for p in parts.values())
    report = {"total_requests": total, "crashes": crashes, "false_successes": lies,
              "seconds": round(sum(p["seconds"] for p in parts.values()), 1),
              "parts": parts, "machine": machine(),
              "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    pathlib.Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    pathlib.Path(args.output).write_text(json.dumps(report, indent=2) + "\n")
    print(f"total {total} requests, crashes {crashes}, false SUCCESS {lies}, "
          f"{report['seconds']} s -> {args.output}")
    checker_errors = sum(p["outcomes"].get("checker_error", 0) for p in parts.values())
    return 1 if crashes or lies or checker_errors else 0


def fuzz_constrained(count: int) -> dict:
    """Arbitrary constraint problems through every solver (bench/constrained_fuzz.py)."""
    import constrained_fuzz
    started = time.perf_counter()
    stats, details = constrained_fuzz.run(constrained_fuzz.Arms(), count, seed=10)
    elapsed = time.perf_counter() - started
    solves = count * len(constrained_fuzz.SOLVERS)
    part = {"requests": count, "solves": solves, "solvers": list(constrained_fuzz.SOLVERS),
            "seconds": round(elapsed, 2), "per_second": round(solves / elapsed, 1),
            "outcomes": dict(sorted(stats.items())), "crashes": stats.get("crash", 0),
            "false_successes": stats.get("false_success", 0),
            "failures": details["crash"] + details["false_success"]}
    print(f"{'constraints':>13}: {count:6d} problems x {len(constrained_fuzz.SOLVERS)} solvers "
          f"in {elapsed:6.1f} s, crashes {part['crashes']}, false SUCCESS "
          f"{part['false_successes']}")
    return part


def fuzz_node(args) -> dict:
    """Return the service and action parts, against one ik_node process."""
    from ros2_ik.node.harness import isolate_ros
    isolate_ros()
    import rclpy
    rclpy.init()
    import test_fuzz_node as node_fuzz
    node, client = node_fuzz.start_node("fuzz_bench")
    parts = {}
    try:
        parts["service"] = run_part(
            "ComputeIK", node_fuzz.compute_ik_requests(),
            lambda req: node_fuzz.check_compute_ik(client, node, req), args.service,
            node_fuzz.STATS)
        node_fuzz.STATS.clear()
        parts["action"] = run_part(
            "ConstrainedIK", node_fuzz.constrained_goals(),
            lambda goal: node_fuzz.check_goal(client, node, goal), args.action,
            node_fuzz.STATS)
        parts["action"]["node_alive_at_end"] = node.alive()
        parts["action"]["node_log_bytes"] = len(node.output())
    finally:
        client.close()
        code = node.stop()
        rclpy.shutdown()
    parts["service"]["node_exit_code"] = code
    return parts


if __name__ == "__main__":
    sys.exit(main())
