#!/usr/bin/env python3
"""7R arms whose swept roll is compiled: the compiled form against EAIK's per value.

On every 7-joint arm (``dof_arms.arms(7)``) whose sweep holds a joint between a shoulder
and an elbow with a spherical wrist (``Sweep.inner``: ``core/closed_form/inner.py``,
found from the kinematics), each target is solved twice in one process, in turn (the
order alternates): with the compiled form, and with ``Sweep.inner`` set to None (EAIK's
closed form per value, as before).  lm (its seed's attempt first, the sweep after it)
and ``analytic`` (the sweep alone), one solution, 5 ms; a TRAC-IK call before each solve
(the caches another solver leaves); targets: FK of uniform configurations (numpy seed
0).  Two seeds: mid-limits (as the other 7R benchmarks), and a random configuration per
target (a robot's state: the seed's value of the swept joint changes every request, and
EAIK builds a form for each new one).  Every answer is checked by pinocchio FK (1e-4 m,
1e-3 rad, limits).  Reported per arm, solver and seed: the medians, p90 and p99 [us]
and their ratios compiled / EAIK.

    python bench/inner_ab.py              # 400 targets per arm
    python bench/inner_ab.py --quick      # 100 targets
Writes bench/results/inner.json, inner.md and inner.png.
"""
from __future__ import annotations

import argparse
import datetime
import statistics
import time
from pathlib import Path
from typing import Dict, List

import numpy as np

from dof_arms import arms, trac_ik_adapter, verified
from machine import machine, median_bars
import results_files
from ros2_ik.core.closed_form import sweep
from ros2_ik.core.pose import PoseTarget
from ros2_ik.core.solve import prepare, solve
from seven_r_worker import targets

SOLVERS = ("lm", "analytic")
SEEDS = ("mid", "random")


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--poses", type=int, default=None, help="targets per arm (400; 100 quick)")
    p.add_argument("--quick", action="store_true")
    p.add_argument("--out", default=str(results_files.RESULTS))
    args = p.parse_args(argv)
    args.poses = args.poses or (100 if args.quick else 400)
    return args


def _percentile(values: List[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(int(share * len(ordered)), len(ordered) - 1)]


def run_arm(arm, poses: int) -> Dict:
    """Time every cell of one arm (module docstring); None when its sweep is not compiled."""
    group = arm.group()[1]
    for solver in SOLVERS:
        prepare(group, group.tip, solver=solver)
    found = sweep.of(group, group.robot.frame_id(group.tip))
    if found is None or found.inner is None:
        return {}
    compiled = found.inner
    trac = trac_ik_adapter(arm, group)
    mid = group.mid_configuration()
    rng = np.random.default_rng(1)
    times: Dict[tuple, List[float]] = {}
    failed = 0
    try:
        for k, T in enumerate(targets(group, poses, 0)):
            seeds = {"mid": mid, "random": group.random_configuration(rng)}
            for solver in SOLVERS:
                for seed_name, seed in seeds.items():
                    for mode in (("compiled", "eaik") if k % 2 else ("eaik", "compiled")):
                        found.inner = compiled if mode == "compiled" else None
                        if trac is not None:
                            trac(T, seed)
                        start = time.perf_counter()
                        result = solve(group, PoseTarget(group.tip, T), seed, solver, 0.005,
                                       0, k)
                        elapsed = time.perf_counter() - start
                        failed += not verified(group, result.q if result.success else None, T)
                        times.setdefault((solver, seed_name, mode), []).append(elapsed)
    finally:
        found.inner = compiled
    cells = {}
    for solver in SOLVERS:
        for seed_name in SEEDS:
            cell = {}
            for mode in ("compiled", "eaik"):
                v = times[(solver, seed_name, mode)]
                cell[f"{mode}_median_us"] = statistics.median(v) * 1e6
                cell[f"{mode}_p90_us"] = _percentile(v, 0.9) * 1e6
                cell[f"{mode}_p99_us"] = _percentile(v, 0.99) * 1e6
            for stat in ("median", "p90", "p99"):
                cell[f"{stat}_ratio"] = cell[f"compiled_{stat}_us"] / cell[f"eaik_{stat}_us"]
            cells[f"{solver}_{seed_name}"] = cell
    return {"arm": arm.name, "source": arm.source, "swept_joint": group.joint_names[
        found.joint], "targets": poses, "failed_checks": failed, "cells": cells}


def markdown(data: dict) -> str:
    m = data["machine"]
    lines = ["# 7R arms whose swept roll is compiled (bench/inner_ab.py)", "",
             f"Machine: {m['cpu']}, {m['cores']} cores, load {m['load_average']} at start; "
             f"{data['when']}; {data['poses']} targets per arm; compiled and EAIK's form per "
             "value in turn per target, TRAC-IK between solves.", "",
             "| arm | swept joint | solver | seed | compiled median [us] | EAIK median [us] | "
             "median ratio | p90 ratio | p99 ratio | failed checks |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for row in data["arms"]:
        for name, c in row["cells"].items():
            solver, seed = name.split("_", 1)
            lines.append(f"| {row['arm']} | {row['swept_joint']} | {solver} | {seed} | "
                         f"{c['compiled_median_us']:.1f} | {c['eaik_median_us']:.1f} | "
                         f"{c['median_ratio']:.2f} | {c['p90_ratio']:.2f} | "
                         f"{c['p99_ratio']:.2f} | {row['failed_checks']} |")
    if not data["arms"]:
        lines.append("(no arm has a compiled swept roll)")
    return "\n".join(lines) + "\n"


def main(argv=None) -> None:
    args = parse_args(argv)
    data = {"when": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "machine": machine(), "poses": args.poses, "arms": []}
    for arm in arms(7):
        row = run_arm(arm, args.poses)
        if row:
            data["arms"].append(row)
            print(row["arm"], {k: round(c["median_ratio"], 2) for k, c in row["cells"].items()},
                  flush=True)
    flat = [dict(name=f"{r['arm']} {k}", **c) for r in data["arms"] for k, c in
            r["cells"].items()]
    results_files.write(Path(args.out), "inner", data, markdown(data), lambda path: median_bars(
        path, flat, [("compiled_median_us", "compiled"), ("eaik_median_us", "EAIK per value")],
        [f["name"] for f in flat], "median solve time [us]", 0.5), echo=True)


if __name__ == "__main__":
    main()
