#!/usr/bin/env python3
"""Batch IK throughput: Panda pose solves per second on 1 and 2 worker processes.

Targets are poses of the hand at uniformly random configurations (reachable), each
solved from the mid-limits seed with a 5 ms budget; every SUCCESS is re-checked here
by plain FK in [m] and [rad].  1-worker and 2-worker runs alternate (``--repeats``
pairs) on the same targets and batch seed, so background load hits both; the report
gives the median of each and the ratio of medians.  6000 targets a run (about 1 s on one
worker; was 2000): throughput is a batch's steady state, and in runs of 0.2-0.3 s the
per-call costs (submitting, the last chunk) and this VM's short slow phases weighed
5-10 %.  A small capability map (``reach``) is timed too, and its verdicts checked: 1000
random cells of it (quick: 200) re-solved with a 50 ms budget, the agreement of the
reachable/unreachable verdicts reported.
Writes bench/results/batch.json, batch.md and batch_map.png (a slice of the map).
"""
from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import pinocchio as pin

from machine import machine
import results_files
from ros2_ik.core import robots
from ros2_ik.core.maps.batch import GroupSpec, solve_batch, worker_pool
from ros2_ik.core.maps.capability import MapSettings, build_map
from ros2_ik.core.pose import PoseTarget
from ros2_ik.core.result import IKStatus
from ros2_ik.core.solve import solve
from ros2_ik.reach import save_slice_png

RESULTS = results_files.RESULTS
PANDA = GroupSpec(arm="panda")


def _targets(count: int, seed: int) -> np.ndarray:
    _, group = robots.load_group("panda")
    rng = np.random.default_rng(seed)
    return np.stack([group.fk(q, group.tip).homogeneous
                     for q in group.random_configurations(rng, count)])


def _verified(res, T: np.ndarray) -> np.ndarray:
    """(N,) bool: solver SUCCESS and FK within 1e-4 m / 1e-3 rad and the limits."""
    _, group = robots.load_group("panda")
    ok = np.zeros(len(T), bool)
    for k in np.flatnonzero(res.success):
        T_fk = group.fk(res.q[k], group.tip)
        pos = np.linalg.norm(T_fk.translation - T[k, :3, 3])
        ori = np.linalg.norm(pin.log3(T[k, :3, :3].T @ T_fk.rotation))
        ok[k] = pos <= 1e-4 and ori <= 1e-3 and group.within_limits(res.q[k])
    return ok


def _run(T, workers, pool, seed, use_ray=False) -> dict:
    res = solve_batch(PANDA, T, timeout_s=0.005, batch_seed=seed, workers=workers,
                      executor=pool, use_ray=use_ray)
    ok = _verified(res, T)
    return {"rate": len(T) / res.wall_time_s, "success_rate": float(ok.mean()),
            "false_success": int((res.success & ~ok).sum()),
            "times_ms": res.solve_time_s * 1e3}


#: Iterations of the pure-interpreter loop (~0.4 s on one core here).
CPU_LOOP_N = 8_000_000


def _cpu_loop(n: int) -> float:
    """Return the seconds a pure-interpreter loop of ``n`` steps takes (no memory traffic)."""
    start, s = time.perf_counter(), 0
    for i in range(n):
        s += i * i
    return time.perf_counter() - start


def _machine_ratio(pool) -> float:
    """2-process / 1-process throughput of :func:`_cpu_loop`: this machine's own ceiling."""
    one = _cpu_loop(CPU_LOOP_N)
    start = time.perf_counter()
    list(pool.map(_cpu_loop, [CPU_LOOP_N] * 2))
    return 2.0 * one / (time.perf_counter() - start)


def throughput(count: int, repeats: int) -> dict:
    """Alternate 1- and 2-worker runs, then 2 workers and 2 Ray actors; medians per kind.

    Two phases, each ratio from runs under the same conditions: Ray's own processes
    (raylet, GCS) wake up periodically and would take CPU from the 2-worker runs of a
    2-core machine had Ray been started before them.  ``local 2 (ray phase)`` is the
    Ray row's reference.
    """
    T = _targets(count, seed=11)
    runs = {"local 1": [], "local 2": []}
    machine_ratios = []
    with worker_pool(PANDA, 2) as pool:
        solve_batch(PANDA, T[:64], workers=2, executor=pool, chunk_size=8)  # start both
        for r in range(repeats):
            runs["local 1"].append(_run(T, 1, None, r))
            runs["local 2"].append(_run(T, 2, pool, r))
            machine_ratios.append(_machine_ratio(pool))
        if _start_ray():
            runs["ray 2"], runs["local 2 (ray phase)"] = [], []
            try:
                solve_batch(PANDA, T[:64], workers=2, use_ray=True, chunk_size=8)  # actors
                for r in range(repeats):
                    runs["local 2 (ray phase)"].append(_run(T, 2, pool, r))
                    runs["ray 2"].append(_run(T, 2, None, r, use_ray=True))
            finally:
                import ray
                ray.shutdown()
    out = {kind: _summary(v) for kind, v in runs.items()}
    out["machine_ratio_2_over_1"] = statistics.median(machine_ratios)
    return out


def _summary(v) -> dict:
    times = np.concatenate([x["times_ms"] for x in v])
    return {"solves_per_s": statistics.median(x["rate"] for x in v),
            "success_rate": statistics.median(x["success_rate"] for x in v),
            "false_success": sum(x["false_success"] for x in v),
            "median_ms": float(np.median(times)), "p95_ms": float(np.percentile(times, 95))}


def _start_ray() -> bool:
    try:
        import ray
    except ImportError:
        print("ray not installed: no Ray row (make extras, or pip install ray==2.60.0)")
        return False
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    return True


def capability_map(resolution_m: float, workers: int, checks: int) -> dict:
    """Time a map of the Panda's reach sphere (8 directions x 4 rolls per voxel).

    Then re-solve ``checks`` random cells with a 50 ms budget and count agreeing verdicts.
    """
    settings = MapSettings(resolution_m, 1.2, (0.0, 0.0, 0.333), 8, 4, 0.005, 0, 64)
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        arrays = build_map(PANDA, Path(tmp) / "map.npz", settings, workers)
        wall = time.perf_counter() - start
    agree, disagree = _agreement(arrays, checks)
    save_slice_png(arrays, RESULTS / "batch_map.png")
    V, M = arrays["solved"].shape
    return {"resolution_m": resolution_m, "voxels": V, "orientations": M,
            "workers": workers, "wall_s": wall,
            "mean_reach_index": float(arrays["reach_index"].mean()),
            "cells_by_method": {"not_solved": int((arrays["method"] == 0).sum()),
                                "brief": int((arrays["method"] == 1).sum()),
                                "from_sample": int((arrays["method"] == 2).sum())},
            "agreement_checks": checks, "agreement": agree,
            "disagreements": disagree}


def _agreement(arrays, checks: int):
    """Fraction of ``checks`` random cells whose verdict a 50 ms solve confirms."""
    _, group = robots.load_group("panda")
    V, M = arrays["solved"].shape
    rng = np.random.default_rng(7)
    agree, disagree = 0, []
    for c in rng.choice(V * M, checks, replace=False).tolist():
        v, k = divmod(c, M)
        T = pin.SE3(arrays["rotations"][k], arrays["voxels"][v])
        r = solve(group, PoseTarget(group.tip, T, reference_frame=group.base),
                  group.mid_configuration(), timeout_s=0.05, random_seed=c)
        solved = r.status is IKStatus.SUCCESS
        if solved == bool(arrays["solved"][v, k]):
            agree += 1
        else:
            disagree.append({"voxel": v, "orientation": k, "method": int(arrays["method"][v, k]),
                             "map_solved": bool(arrays["solved"][v, k]),
                             "generous_solved": solved})
    return agree / checks, disagree


def _markdown(rows, cmap, info) -> str:
    lines = ["| path | solves/s | success (FK-verified) | false SUCCESS | median ms | p95 ms |",
             "|---|---|---|---|---|---|"]
    lines += [f"| {r['family']} | {r['solves_per_s']:.0f} | {r['success_rate']:.3f} | "
              f"{r['false_success']} | {r['median_ms']:.2f} | {r['p95_ms']:.2f} |" for r in rows]
    lines += ["", f"2 workers / 1 worker throughput: {info['ratio_2_over_1']:.2f}x "
              f"(median of {info['repeats']} alternating runs, {info['targets']} targets each)",
              "", "The machine's own 2 / 1 in the same runs (a pure-Python loop, no memory "
              f"traffic, on the same pool): {info['machine_ratio_2_over_1']:.2f}x",
              "", "Ray (2 actors kept across calls, local ray.init) / local 2 workers, "
              "alternating after the 1-vs-2 runs: "
              + (f"{info['ratio_ray_over_local']:.2f}x" if info["ratio_ray_over_local"]
                 else "not measured (ray not installed)"),
              "", f"Capability map: {cmap['voxels']} voxels x {cmap['orientations']} orientations"
              f" at {cmap['resolution_m']} m on {cmap['workers']} workers"
              f" in {cmap['wall_s']:.1f} s"
              f" (mean reachability index {cmap['mean_reach_index']:.3f}); cells solved from a "
              f"marking sample {cmap['cells_by_method']['from_sample']}, given brief attempts "
              f"{cmap['cells_by_method']['brief']}, not solved (no sample near) "
              f"{cmap['cells_by_method']['not_solved']}. Verdicts confirmed by a 50 ms solve "
              f"on {100 * cmap['agreement']:.1f} % of {cmap['agreement_checks']} random cells"
              f" ({len(cmap['disagreements'])} disagree: "
              + (", ".join(f"method {d['method']} map {d['map_solved']} 50 ms "
                           f"{d['generous_solved']}" for d in cmap["disagreements"]) or "none")
              + ").", "",
              f"Load average (1/5/15 min) at the start {info['load_average_before']}, "
              f"at the end {info['machine']['load_average']} (the benchmark's own "
              "processes count: 2 workers, or Ray's, load 2 cores to about 2)."]
    return "\n".join(lines) + "\n"


def main() -> None:
    """Run and write results/batch.json and batch.md."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="small counts (about a minute)")
    args = p.parse_args()
    count, repeats, res_m, checks = (400, 3, 0.1, 200) if args.quick else (6000, 7, 0.05, 1000)
    load_before = list(os.getloadavg())
    tp = throughput(count, repeats)
    machine_ratio = tp.pop("machine_ratio_2_over_1")
    with_ray = "ray 2" in tp
    RESULTS.mkdir(exist_ok=True)
    cmap = capability_map(res_m, 2, checks)
    rows = [{"robot": "panda", "solver": "lm", "mode": "batch", "family": kind,
             "workers": 1 if kind == "local 1" else 2, **v} for kind, v in tp.items()]
    info = {"quick": args.quick, "targets": count, "repeats": repeats,
            "ratio_2_over_1": tp["local 2"]["solves_per_s"] / tp["local 1"]["solves_per_s"],
            "machine_ratio_2_over_1": machine_ratio,
            "ratio_ray_over_local": (tp["ray 2"]["solves_per_s"]
                                     / tp["local 2 (ray phase)"]["solves_per_s"]
                                     if with_ray else None),
            "load_average_before": load_before, "machine": machine()}
    results_files.write(RESULTS, "batch", {"rows": rows, "capability_map": cmap, **info},
                        _markdown(rows, cmap, info), echo=True, newline=True)


if __name__ == "__main__":
    main()
