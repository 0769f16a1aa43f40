#!/usr/bin/env python3
"""7-joint arms: ``solve()`` today against lm at issue 48's start, on the same targets.

Issue 48's target: "7R arms (FR3, iiwa, Gen3 7-DoF, xArm7, Panda): >= 99.9 % at a median
<= half of today's", today being the commit the issue was filed at (``--old``, default
ef381ac).  Each revision is checked out into its own worktree (:class:`ab.Revision`: venv
link, entry points, numba warm-up, a check that the code loads from there), and
``seven_r_worker.py`` (this folder's, written against the API both share) runs each arm
there: the same targets (FK of uniform configurations, numpy seed 0), the same mid-limits
seed, 5 ms, ``solver="lm"``, a TRAC-IK call before each solve in both.  Old and new run
back to back per arm, in the order OLD NEW, then NEW OLD, ... for R rounds.  Reported per
arm: each revision's median per round, the median of the rounds' ratios new/old, and the
verified success (pinocchio FK on the full model, 1e-4 m, 1e-3 rad, limits).

Today's worker also times the floor (``seven_r_worker.py --floor``: the PoseTarget, ONE
compiled attempt, the full model's check and the IKResult, nothing between them) on the
arms that run the compiled attempt.  On the targets that floor answers, the table gives
its median against old's and today's there: a floor above half of old's median means no
request path of that shape meets the target on that arm.

    python bench/seven_r_ab.py                   # 1000 targets per arm, 3 rounds
    python bench/seven_r_ab.py --quick           # 200 targets, 1 round
    python bench/seven_r_ab.py --warm            # no TRAC-IK between solves
Writes bench/results/seven_r.json, seven_r.md and seven_r.png (``--warm``: seven_r_warm.*).
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Dict, List

import numpy as np

from ab import Revision
from machine import machine, pyplot
import results_files

HERE = Path(__file__).resolve().parent
RESULTS = results_files.RESULTS
#: The arms issue 48 names (xArm7 from both sources), judged against its target.
NAMED = ("panda", "franka_fr3", "kuka_lbr_iiwa14_r820", "kinova_gen3_7dof", "xarm7",
         "ufactory_xarm7")
TARGET_RATIO, TARGET_SUCCESS = 0.5, 0.999


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--old", default="ef381ac", help="issue 48's start (any git rev)")
    p.add_argument("--new", default="HEAD", help="today (any git rev)")
    p.add_argument("--rounds", type=int, default=None, help="rounds (3; 1 with --quick)")
    p.add_argument("--poses", type=int, default=None, help="targets per arm (1000; 200 quick)")
    p.add_argument("--arms", default="", help="comma list (default: every 7-joint arm)")
    p.add_argument("--quick", action="store_true")
    p.add_argument("--warm", action="store_true", help="no TRAC-IK call between solves")
    p.add_argument("--out", default=str(RESULTS))
    args = p.parse_args(argv)
    args.rounds = args.rounds or (1 if args.quick else 3)
    args.poses = args.poses or (200 if args.quick else 1000)
    return args


def run_one(rev: Revision, arm: str, poses: int, out: Path, warm: bool) -> dict:
    """Run the worker on ``rev`` for one arm (the floor too on today's); return its row."""
    cmd = [sys.executable, str(HERE / "seven_r_worker.py"), "--arms", arm, "--poses",
           str(poses), "--out", str(out)] + (["--warm"] if warm else []) + (
        ["--floor"] if rev.label == "new" else [])
    rev.env["PYTHONPATH"] = os.pathsep.join([str(HERE)] + [
        p for p in rev.env["PYTHONPATH"].split(os.pathsep) if p != str(HERE)])
    rev.run(f"seven_r_{arm}", cmd)
    return json.loads(out.read_text())[0]


def summary(arm: str, runs: Dict[str, List[dict]]) -> dict:
    """Medians per round, the median ratio new/old, verified success per revision."""
    row: Dict = {"arm": arm, "source": runs["new"][0]["source"]}
    for label, found in runs.items():
        row[f"{label}_median_us_per_round"] = [statistics.median(r["times_s"]) * 1e6
                                               for r in found]
        flags = [ok for r in found for ok in r["verified"]]
        row[f"{label}_success"] = sum(flags) / len(flags)
        row[f"{label}_median_us"] = statistics.median(row[f"{label}_median_us_per_round"])
    row["median_ratio_new_to_old"] = statistics.median(
        n / o for n, o in zip(row["new_median_us_per_round"], row["old_median_us_per_round"]))
    row.update(tail_figures(runs))
    row.update(floor_figures(runs))
    row["named_by_issue"] = arm in NAMED
    row["target_met"] = (row["median_ratio_new_to_old"] <= TARGET_RATIO
                         and row["new_success"] >= TARGET_SUCCESS)
    return row


#: The tail's percentiles reported beside the median (a hard target's wait).
TAIL = (90, 99)


def tail_figures(runs: Dict[str, List[dict]]) -> dict:
    """Each revision's 90th and 99th percentile [us] over every round's targets, and new/old.

    Pooled over the rounds (one round's 99th percentile of 1000 targets rests on its ten
    slowest); the median's verdict is unchanged.
    """
    out: Dict = {}
    for label, found in runs.items():
        times = [t for r in found for t in r["times_s"]]
        for p in TAIL:
            out[f"{label}_p{p}_us"] = float(np.percentile(times, p)) * 1e6
    for p in TAIL:
        out[f"p{p}_ratio_new_to_old"] = out[f"new_p{p}_us"] / out[f"old_p{p}_us"]
    return out


def floor_figures(runs: Dict[str, List[dict]]) -> dict:
    """Medians [us] of the floor, old and new on the targets the floor answers (all rounds).

    Empty when today's worker timed no floor (the arm does not run the compiled attempt).
    """
    floors = [r.get("floor_s") for r in runs["new"]]
    if not all(floors):
        return {}
    picked = {label: [t for r, f in zip(found, floors) for t, ok in zip(r["times_s"], f)
                      if ok is not None] for label, found in runs.items()}
    floor = [t for f in floors for t in f if t is not None]
    out = {"floor_share_answered": len(floor) / sum(len(f) for f in floors),
           "floor_median_us": statistics.median(floor) * 1e6}
    for label, times in picked.items():
        out[f"{label}_median_us_where_floor_answers"] = statistics.median(times) * 1e6
    out["floor_to_old"] = out["floor_median_us"] / out["old_median_us_where_floor_answers"]
    return out


def report(rows: List[dict], info: dict) -> str:
    """Markdown table and verdict."""
    lines = ["# 7-joint arms: solve() today against lm at issue 48's start "
             "(bench/seven_r_ab.py)", "",
             f"Machine: {info['machine']['cpu']}, {info['machine']['cores']} cores, "
             f"load {info['load_start']} at start, "
             f"{info['load_end']} at the end; old {info['old']['sha'][:7]}, new "
             f"{info['new']['sha'][:7]}; {info['poses']} targets per arm, {info['rounds']} "
             f"round(s), {'no TRAC-IK' if info.get('warm') else 'TRAC-IK'} between solves "
             "in both.", "",
             "| arm | source | old median [us] | new median [us] | new / old (median of "
             "rounds) | old success | new success | issue names it | <= 0.5 and >= 99.9 % |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(
            f"| {r['arm']} | {r['source']} | {r['old_median_us']:.1f} | "
            f"{r['new_median_us']:.1f} | {r['median_ratio_new_to_old']:.2f} | "
            f"{100 * r['old_success']:.1f} % | {100 * r['new_success']:.1f} % | "
            f"{'yes' if r['named_by_issue'] else ''} | {'met' if r['target_met'] else 'missed'} |")
    lines += ["", "The tail: each revision's percentiles over every round's targets (the "
              "verdict above reads the median only):", "",
              "| arm | old p90 [us] | new p90 [us] | p90 new / old | old p99 [us] | "
              "new p99 [us] | p99 new / old |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        if "old_p90_us" in r:
            lines.append(
                f"| {r['arm']} | {r['old_p90_us']:.1f} | {r['new_p90_us']:.1f} | "
                f"{r['p90_ratio_new_to_old']:.2f} | {r['old_p99_us']:.1f} | "
                f"{r['new_p99_us']:.1f} | {r['p99_ratio_new_to_old']:.2f} |")
    floored = [r for r in rows if "floor_median_us" in r]
    if floored:
        lines += ["", "The floor (bench/seven_r_worker.py --floor) on the targets the seed's "
                  "compiled attempt answers, against old and today on the same targets:", "",
                  "| arm | targets the floor answers | old there [us] | today there [us] | "
                  "floor [us] | floor / old |", "|---|---|---|---|---|---|"]
        for r in floored:
            lines.append(
                f"| {r['arm']} | {100 * r['floor_share_answered']:.0f} % | "
                f"{r['old_median_us_where_floor_answers']:.1f} | "
                f"{r['new_median_us_where_floor_answers']:.1f} | {r['floor_median_us']:.1f} | "
                f"{r['floor_to_old']:.2f} |")
    named = [r for r in rows if r["named_by_issue"]]
    lines += ["", f"Verdict on the arms issue 48 names: "
              f"{'met' if named and all(r['target_met'] for r in named) else 'missed'} "
              f"({sum(r['target_met'] for r in named)}/{len(named)})."]
    return "\n".join(lines) + "\n"


def plot(rows: List[dict], path: Path) -> None:
    """Old and new medians per arm."""
    plt = pyplot()
    if plt is None:
        return
    fig, ax = plt.subplots(figsize=(10, 4))
    xs = range(len(rows))
    ax.bar([x - 0.2 for x in xs], [r["old_median_us"] for r in rows], 0.4, label="lm at start")
    ax.bar([x + 0.2 for x in xs], [r["new_median_us"] for r in rows], 0.4, label="today")
    ax.set_xticks(list(xs), [r["arm"] for r in rows], rotation=60, ha="right", fontsize=7)
    ax.set_ylabel("median solve() [us]")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv=None) -> int:
    args = parse_args(argv)
    load_start = [round(x, 2) for x in os.getloadavg()]
    base = Path(tempfile.mkdtemp(prefix="ros2_ik_7r_"))
    revs = [Revision("old", args.old, base), Revision("new", args.new, base)]
    try:
        for rev in revs:
            rev.create()
        names = [a for a in args.arms.split(",") if a] or revs[1].run(
            "seven_r_list", [sys.executable, str(HERE / "seven_r_worker.py"), "--list"]
        ).strip().splitlines()[-1].split(",")
        rows = []
        for arm in names:
            runs: Dict[str, List[dict]] = {"old": [], "new": []}
            for k in range(args.rounds):
                for rev in (revs if k % 2 == 0 else revs[::-1]):
                    runs[rev.label].append(run_one(
                        rev, arm, args.poses, base / f"{rev.label}_{arm}_{k}.json", args.warm))
            rows.append(summary(arm, runs))
            r = rows[-1]
            print(f"{arm:32s} old {r['old_median_us']:7.1f} us  new {r['new_median_us']:7.1f}"
                  f" us  ratio {r['median_ratio_new_to_old']:.2f}  success "
                  f"{r['old_success']:.3f} / {r['new_success']:.3f}"
                  + (f"  floor / old {r['floor_to_old']:.2f}" if "floor_to_old" in r else ""),
                  flush=True)
        info = {"machine": machine(), "load_start": load_start,
                "load_end": [round(x, 2) for x in os.getloadavg()],
                "old": revs[0].info(), "new": revs[1].info(), "poses": args.poses,
                "rounds": args.rounds, "warm": args.warm,
                "date": datetime.datetime.now(datetime.timezone.utc).isoformat()}
    finally:
        for rev in revs:
            rev.remove()
    stem = "seven_r" + ("_warm" if args.warm else "") + ("_quick" if args.quick else "")
    results_files.write(Path(args.out), stem, {"info": info, "rows": rows}, report(rows, info),
                        lambda path: plot(rows, path), echo=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
