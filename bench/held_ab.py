#!/usr/bin/env python3
"""ComputeIK while ``joint_states`` jitter: today against another revision, on the same requests.

A real robot's encoders never report the same value twice, so each request holds the
joints outside the group (the other arm, the head, the fingers, a lift) at new values: a
collision-checked request holds every one of them (``avoid_collisions``), any request its
upstream joints.  Each such request is answered on a group held elsewhere
(``Group.held_at``), which the node builds anew.  ``held_worker.py`` (this folder's) answers
the same requests with the node's handler in each revision's worktree (:class:`ab.Revision`),
in the order OLD NEW, then NEW OLD, ... for R rounds, per robot; reported per robot and
cell (``avoid_collisions`` off / on, ``joint_states`` steady / jittering): each revision's
median [ms] (median of the rounds' medians), the ratio new / old, every SUCCESS checked by
our own FK (false successes counted), and the share of SUCCESS.

A fifth cell moves a box in the scene before each collision-checked request, as a
perception reports an object: a new scene version each time.

    python bench/held_ab.py                    # 5 robots, 80 requests, 3 rounds, vs 33d6e79
    python bench/held_ab.py --quick            # 2 robots, 30 requests, 1 round
    python bench/held_ab.py --old 33d6e79
Writes bench/results/held.json, held.md and held.png, and the table of docs/physical_arms.md
(section ``held``).
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

from ab import Revision
from machine import machine, median_bars
import results_files

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
from doc_sections import write as write_section  # noqa: E402

HERE = Path(__file__).resolve().parent
RESULTS = results_files.RESULTS
ROBOTS = "panda,pr2_right,tiago,baxter_left,g1_left"
QUICK_ROBOTS = "panda,pr2_right"
#: Each cell's avoid_collisions and what changes between requests (held_worker.py).
CELLS = {"avoid_false_jitter_0": ("off", "steady"),
         "avoid_false_jitter_0.0001": ("off", "jittering"),
         "avoid_true_jitter_0": ("on", "steady"),
         "avoid_true_jitter_0.0001": ("on", "jittering"),
         "avoid_true_scene_moving": ("on", "steady; a box moved 1 mm before each request")}
#: Requests at the start of each cell left out of its median (the first reading's work).
SKIP = 2


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--old", default="33d6e79", help="the revision to compare with")
    p.add_argument("--new", default="HEAD")
    p.add_argument("--robots", default=None, help=f"comma list (default {ROBOTS})")
    p.add_argument("--requests", type=int, default=None, help="per cell (80; 30 quick)")
    p.add_argument("--rounds", type=int, default=None, help="rounds (3; 1 quick)")
    p.add_argument("--quick", action="store_true")
    p.add_argument("--out", default=str(RESULTS))
    args = p.parse_args(argv)
    args.robots = args.robots or (QUICK_ROBOTS if args.quick else ROBOTS)
    args.requests = args.requests or (30 if args.quick else 80)
    args.rounds = args.rounds or (1 if args.quick else 3)
    return args


def summary(robot: str, runs: Dict[str, List[dict]]) -> dict:
    """Per cell: medians [ms] per revision, the ratio new / old, successes, false ones."""
    row: Dict = {"robot": robot, "source": runs["new"][0]["source"],
                 "locked_joints": runs["new"][0]["locked_joints"], "cells": {}}
    for cell in CELLS:
        out = {}
        for label, found in runs.items():
            medians = [statistics.median(r["cells"][cell]["times_s"][SKIP:]) * 1e3
                       for r in found]
            codes = [c for r in found for c in r["cells"][cell]["codes"]]
            out[f"{label}_median_ms"] = statistics.median(medians)
            out[f"{label}_median_ms_per_round"] = medians
            out[f"{label}_success"] = sum(c == 1 for c in codes) / len(codes)
            out[f"{label}_false_success"] = sum(r["cells"][cell]["false_success"] for r in found)
        out["median_ratio_new_to_old"] = statistics.median(
            n / o for n, o in zip(out["new_median_ms_per_round"], out["old_median_ms_per_round"]))
        row["cells"][cell] = out
    return row


def report(rows: List[dict], info: dict) -> str:
    """Markdown table."""
    lines = ["# ComputeIK while joint_states jitter (bench/held_ab.py)", "",
             f"Machine: {info['machine']['cpu']}, {info['machine']['cores']} cores, load "
             f"{info['load_start']} at start, {info['load_end']} at the end; old "
             f"{info['old']['sha'][:7]}, new {info['new']['sha'][:7]}; {info['requests']} "
             f"requests per cell, {info['rounds']} round(s); the node's handler in-process, "
             f"timeout 50 ms; jitter: every joint re-read with noise of 1e-4 rad (or m) "
             f"before each request.", "",
             "| robot | joints outside the group | avoid_collisions | joint_states | old median "
             "[ms] | new median [ms] | new / old | old SUCCESS | new SUCCESS | false SUCCESS "
             "(old / new) |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        for cell, c in r["cells"].items():
            avoid, jitter = CELLS[cell]
            lines.append(
                f"| {r['robot']} | {r['locked_joints']} | {avoid} | {jitter} | "
                f"{c['old_median_ms']:.2f} | {c['new_median_ms']:.2f} | "
                f"{c['median_ratio_new_to_old']:.2f} | {100 * c['old_success']:.0f} % | "
                f"{100 * c['new_success']:.0f} % | {c['old_false_success']} / "
                f"{c['new_false_success']} |")
    return "\n".join(lines) + "\n"


def doc_table(rows: List[dict], info: dict) -> str:
    """Return the docs' table (docs/physical_arms.md, section ``held``): collision checks."""
    lines = [f"Collision-checked ComputeIK (`avoid_collisions`), median of the node's handler "
             f"[ms] ({info['machine']['cpu']}, {info['date'][:10]}, "
             f"[bench/results/held.md](bench/results/held.md)):", "",
             "| robot | joints outside the group | joint_states steady | jittering, "
             f"{info['old']['sha'][:7]} | jittering, {info['new']['sha'][:7]} | SUCCESS |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        steady = r["cells"]["avoid_true_jitter_0"]["new_median_ms"]
        jitter = r["cells"]["avoid_true_jitter_0.0001"]
        lines.append(f"| {r['robot']} | {r['locked_joints']} | {steady:.2f} | "
                     f"{jitter['old_median_ms']:.2f} | {jitter['new_median_ms']:.2f} | "
                     f"{100 * jitter['new_success']:.0f} % |")
    return "\n".join(lines)


def plot(rows: List[dict], path: Path) -> None:
    """Old and new medians of each cell, per robot (log scale)."""
    flat = [dict(c, robot=r["robot"], cell=cell) for r in rows for cell, c in r["cells"].items()]
    median_bars(path, flat, [("old_median_ms", "old"), ("new_median_ms", "new")],
                [f"{c['robot']} {c['cell']}" for c in flat],
                "median ComputeIK handler [ms]", 0.5)


def main(argv=None) -> int:
    args = parse_args(argv)
    load_start = [round(x, 2) for x in os.getloadavg()]
    base = Path(tempfile.mkdtemp(prefix="ros2_ik_held_"))
    revs = [Revision("old", args.old, base), Revision("new", args.new, base)]
    try:
        for rev in revs:
            rev.create()
            rev.env["PYTHONPATH"] = os.pathsep.join([str(HERE), rev.env["PYTHONPATH"]])
        rows = []
        for robot in args.robots.split(","):
            runs: Dict[str, List[dict]] = {"old": [], "new": []}
            for k in range(args.rounds):
                for rev in (revs if k % 2 == 0 else revs[::-1]):
                    out = base / f"{rev.label}_{robot}_{k}.json"
                    rev.run(f"held_{robot}", [
                        sys.executable, str(HERE / "held_worker.py"), "--robot", robot,
                        "--requests", str(args.requests), "--out", str(out)])
                    runs[rev.label].append(json.loads(out.read_text()))
            rows.append(summary(robot, runs))
            for cell, c in rows[-1]["cells"].items():
                print(f"{robot:32s} {cell:26s} old {c['old_median_ms']:6.2f} ms  new "
                      f"{c['new_median_ms']:6.2f} ms  ratio {c['median_ratio_new_to_old']:.2f}"
                      f"  false SUCCESS {c['old_false_success']}/{c['new_false_success']}",
                      flush=True)
        info = {"machine": machine(), "load_start": load_start,
                "load_end": [round(x, 2) for x in os.getloadavg()],
                "old": revs[0].info(), "new": revs[1].info(), "requests": args.requests,
                "rounds": args.rounds,
                "date": datetime.datetime.now(datetime.timezone.utc).isoformat()}
    finally:
        for rev in revs:
            rev.remove()
    out = Path(args.out)
    stem = "held_quick" if args.quick else "held"
    results_files.write(out, stem, {"info": info, "rows": rows}, report(rows, info))
    plot(rows, out / f"{stem}.png")
    if not args.quick and out.resolve() == Path(RESULTS).resolve():
        write_section("held", doc_table(rows, info))
    return 0


if __name__ == "__main__":
    sys.exit(main())
