#!/usr/bin/env python3
"""7R arms by a swept joint over 6R closed forms: what the sweep gives the user.

Arms: the 7-joint chains of example-robot-data (:data:`ros2_ik.core.robots.ARMS`) and of
the vendor descriptions in ``shared/real_urdfs`` (read there, never copied; skipped with
a note when the folder is absent), then every 6-joint one of them on an 8 m rail
(:func:`dof_arms.on_rail`: the rail is the prismatic joint swept; ``--no-rails``:
none).  For each: whether a joint held leaves a closed form
(:mod:`ros2_ik.core.closed_form.sweep`: the swept joint and EAIK's family, or the
reason), then, interleaved on the same reachable targets (FK of uniform configurations
in the limits, seed at mid-limits, ``timeout_s`` 5 ms):

* ``ours``: ``solve()`` as a user calls it (lm: it answers from the sweep where the
  sweep is cheap, :attr:`~ros2_ik.core.closed_form.sweep.Sweep.cheap`, else searches);
* ``analytic``: ``solve(..., solver="analytic")`` (the sweep, then lm's search for what
  it did not answer), on arms with a swept joint;
* ``lm_today``: ``solve()`` with lm's closed forms and sweep switched off
  (``LevenbergMarquardt.closed_form``; the class changed since ``prepare()``, so not on
  the lean path of :mod:`ros2_ik.core.solvers.pose_request` either: "ours / lm today"
  is the sweep's and the lean path's gain together);
* ``trac_ik``: TRAC-IK (pytracik, Speed, 5 ms), when installed.

Success is checked here by pinocchio FK on the full model (1e-4 m, 1e-3 rad, limits).
Also the share of answers the sweep gave (the rest: lm's search after the sweep's
budget) and the ratios of medians to lm today (issue 48's target, <= 0.5 of lm at its
start, is measured against that commit by ``seven_r_ab.py``).
Writes bench/results/sweep.json, sweep.md and sweep.png.
"""
from __future__ import annotations

import argparse
import statistics
from typing import Dict, List

import numpy as np

from dof_arms import Arm, arms, on_rail, timed, trac_ik_adapter, verified
from machine import machine, median_bars
import results_files
from ros2_ik.core.closed_form import sweep
from ros2_ik.core.pose import PoseTarget
from ros2_ik.core.result import IKStatus
from ros2_ik.core.solve import prepare, solve
from ros2_ik.core.solvers.lm import LevenbergMarquardt

TIMEOUT_S = 0.005


def run_arm(arm: Arm, poses: int) -> Dict:
    """Every figure of one arm (module docstring)."""
    robot, group = arm.group()
    fid = robot.frame_id(group.tip)
    found = sweep.of(group, fid)
    row: Dict = {"arm": arm.name, "source": arm.source, "sweep": found is not None,
                 "swept_joint": found.name if found else "",
                 "swept_joint_at_chain_end": bool(found and found.end),
                 "lm_sweeps": bool(found and found.cheap),
                 "family": found.family if found else "",
                 "reason": "" if found else sweep.reason(group, fid)}
    rng = np.random.default_rng(0)
    qs = [group.random_configuration(rng) for _ in range(poses)]
    targets = [group.fk(q, group.tip) for q in qs]
    seed = group.mid_configuration()
    prepare(group, group.tip)
    trac = trac_ik_adapter(arm, group)
    keys = ("ours", "analytic", "lm_today", "trac_ik")
    times: Dict[str, List[float]] = {k: [] for k in keys}
    ok: Dict[str, int] = {k: 0 for k in times}
    counts = {"ours_by_sweep": 0, "analytic_by_sweep": 0, "no_solution": 0}

    def run(key, solver, k, T):
        r, dt = timed(solve, group, PoseTarget(group.tip, T), seed, solver, TIMEOUT_S, 0, k)
        times[key].append(dt)
        ok[key] += verified(group, r.q if r.success else None, T)
        counts[f"{key}_by_sweep"] += r.success and "swept" in r.message
        counts["no_solution"] += r.status is IKStatus.NO_SOLUTION

    def ours(k, T):
        run("ours", "lm", k, T)

    def analytic(k, T):
        if found:
            run("analytic", "analytic", k, T)

    def lm_today(k, T):
        LevenbergMarquardt.closed_form = False
        r, dt = timed(solve, group, PoseTarget(group.tip, T), seed, "lm", TIMEOUT_S, 0, k)
        LevenbergMarquardt.closed_form = True
        times["lm_today"].append(dt)
        ok["lm_today"] += verified(group, r.q if r.success else None, T)

    def trac_ik(k, T):
        q, dt = timed(trac, T, seed)
        times["trac_ik"].append(dt)
        ok["trac_ik"] += verified(group, q, T)

    try:  # interleaved: TRAC-IK first (the solve after it runs cache-cold), then ours and
        for k, T in enumerate(targets):  # lm today, each first on every other target
            if trac is not None:
                trac_ik(k, T)
            runs = (ours, analytic, lm_today)
            for one in (runs if k % 2 == 0 else runs[::-1]):
                one(k, T)
    finally:
        LevenbergMarquardt.closed_form = True
    for key, values in times.items():
        if values:
            row[f"{key}_median_us"] = statistics.median(values) * 1e6
            row[f"{key}_p90_us"] = float(np.percentile(values, 90)) * 1e6
            row[f"{key}_success"] = ok[key] / len(values)
    row["poses"] = poses
    row["ours_answered_by_sweep"] = counts["ours_by_sweep"] / poses
    row["analytic_answered_by_sweep"] = counts["analytic_by_sweep"] / poses
    row["false_no_solution"] = counts["no_solution"]
    for key in ("ours", "analytic"):
        if f"{key}_median_us" in row:
            row[f"median_ratio_{key}_to_lm_today"] = \
                row[f"{key}_median_us"] / row["lm_today_median_us"]
    return row


def report(rows: List[Dict], info: Dict) -> str:
    """Markdown table of the run."""
    lines = ["# 7R arms: a swept joint over 6R closed forms (bench/sweep_bench.py)", "",
             f"Machine: {info['cpu']}, {info['cores']} cores, load {info['load_average']}"
             " (shared: medians, ratios)", "",
             "| arm | source | swept joint | lm sweeps | ours median [us] | analytic [us] "
             "| lm today [us] | ours / lm today | analytic / lm today | analytic by sweep "
             "| TRAC-IK [us] | ours success | analytic success | lm today success "
             "| TRAC-IK success |", "|" + "---|" * 15]

    def cell(r, key, form):
        return form.format(r[key]) if key in r else "-"
    for r in rows:
        end = " (end)" if r["swept_joint_at_chain_end"] else ""
        lines.append(
            f"| {r['arm']} | {r['source']} | {r['swept_joint'] or '-'}{end} | "
            f"{'yes' if r['lm_sweeps'] else 'no'} | {r['ours_median_us']:.1f} | "
            f"{cell(r, 'analytic_median_us', '{:.1f}')} | {r['lm_today_median_us']:.1f} | "
            f"{r['median_ratio_ours_to_lm_today']:.2f} | "
            f"{cell(r, 'median_ratio_analytic_to_lm_today', '{:.2f}')} | "
            f"{100 * r['analytic_answered_by_sweep']:.0f} % | "
            f"{cell(r, 'trac_ik_median_us', '{:.0f}')} | {100 * r['ours_success']:.1f} % | "
            f"{cell(r, 'analytic_success', '{:.1%}')} | {100 * r['lm_today_success']:.1f} % "
            f"| {cell(r, 'trac_ik_success', '{:.1%}')} |")
    lines += ["", "Without a swept joint (lm; ours against lm today: the lean path's gain):", ""]
    lines += [f"- {r['arm']} ({r['source']}): {r['reason']}" for r in rows if not r["sweep"]]
    lines += ["", "Swept joints and EAIK's families of the rest:", ""]
    lines += [f"- {r['arm']}: {r['family']}" for r in rows if r["sweep"]]
    return "\n".join(lines) + "\n"


def plot(rows: List[Dict], path) -> None:
    """Medians per arm: ours, analytic, lm today, TRAC-IK (log scale)."""
    median_bars(path, rows, [("ours_median_us", "ours (solve)"),
                             ("analytic_median_us", "analytic"),
                             ("lm_today_median_us", "lm today"),
                             ("trac_ik_median_us", "TRAC-IK")],
                [r["arm"] + ("" if r["sweep"] else " (no sweep)") for r in rows],
                "pose solve median [us]", 0.8)


def main() -> None:
    """Run every arm and write the results."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="200 poses an arm")
    parser.add_argument("--poses", type=int, default=0)
    parser.add_argument("--arms", nargs="*", help="only these arms (by name)")
    parser.add_argument("--no-rails", action="store_true", help="no 6R arm on a rail")
    args = parser.parse_args()
    poses = args.poses or (200 if args.quick else 2000)
    rows = []
    railed = [] if args.no_rails else [on_rail(a) for a in arms(sweep.JOINTS - 1)]
    for arm in arms(sweep.JOINTS) + railed:
        if args.arms and arm.name not in args.arms:
            continue
        print(f"{arm.name} ({arm.source})", flush=True)
        rows.append(run_arm(arm, poses))
    info = machine()
    results_files.write(
        results_files.RESULTS, "sweep", {"machine": info, "quick": args.quick,
                                         "poses_per_arm": poses, "timeout_s": TIMEOUT_S,
                                         "arms": rows},
        report(rows, info), lambda path: plot(rows, path), echo=True)


if __name__ == "__main__":
    main()
