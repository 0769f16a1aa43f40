#!/usr/bin/env python3
"""Old commit against new in ONE process: ``solve()`` paired per target, old and new alternated.

Made for the VM's noisy phases, where alternating whole processes (``ab.py``,
``seven_r_ab.py``) cannot see a change below ~10 %: each revision's package is exported
(``git archive``) into a folder of its own under another name (``ros2_ik_old``,
``ros2_ik_new``: every ``ros2_ik`` import in it renamed, and the solver registry's entry
points mapped into it), both are imported side by side, and each target is solved by one
then the other in alternating order, with the same calls before each solve:

* ``cold`` (the analytic benchmark's order): lm with its closed form off, TRAC-IK (when
  installed) and ``num_solutions=1000``, made by this tree's package, before each timed
  solve;
* ``warm``: the targets solved one after another by one revision, then by the other
  (twice each, alternated).

Reported per arm: each revision's median [us], their ratio new / old and the median of
the per-target ratios (cold), and each revision's success verified here (pinocchio FK on
the full model, 1e-4 m, 1e-3 rad, limits).  The targets: FK of uniform configurations
in the limits, numpy seed ``--seed``; the seed at mid-limits; ``solve()``'s defaults.

    python bench/paired_ab.py --old a310403 --arms ur5,kinova,panda
    python bench/paired_ab.py --old a310403 --quick     # ur5 and panda, 60 targets

Each revision's numba kernels compile at its first solve in a new folder (~1 min);
the folders are kept under ``log/paired_ab/<label>-<sha>`` and reused.  Writes
``paired_ab.json``, ``.md`` and ``.png`` to ``--out`` (default bench/results/).

``--scale`` estimates what ``bench/analytic_bench.py`` would read today on the machine
of one of its committed runs, made there at the old revision: each arm's median there
(with the other methods between requests, and alone) times this run's ratio new / old
(cold, warm), with issue 48's median target (:func:`estimate`).  An estimate across
machines, not a measurement: the table says so.

    python bench/paired_ab.py --old 43c9edb --scale bench/results/analytic.json
    python bench/paired_ab.py --report-only --out DIR --scale bench/results/analytic.json
"""
from __future__ import annotations

import argparse
import importlib
import json
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List, Optional

import numpy as np

from dof_arms import Arm, arms, trac_ik_adapter, verified
from machine import machine, median_bars
import results_files

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
TREES = ROOT / "log" / "paired_ab"
QUICK_ARMS = ("ur5", "panda")
#: ``ros2_ik.`` in an import, or ``ros2_ik`` imported as a package: what is renamed.
_IMPORT = re.compile(r"\bros2_ik(?=\.(core|node|__)\b)|(?<=^from )ros2_ik(?= import)"
                     r"|(?<=^import )ros2_ik\b", re.MULTILINE)


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--old", default="", help="old revision (any git rev; needed for a run)")
    p.add_argument("--new", default="HEAD", help="new revision (any git rev)")
    p.add_argument("--arms", default="", help="comma list (default: every 6R and 7R arm)")
    p.add_argument("--poses", type=int, default=None, help="targets per arm (300; quick 60)")
    p.add_argument("--seed", type=int, default=0, help="numpy seed of the targets")
    p.add_argument("--quick", action="store_true", help=f"{', '.join(QUICK_ARMS)}, 60 targets")
    p.add_argument("--out", default=str(results_files.RESULTS))
    p.add_argument("--scale", default="",
                   help="an analytic_bench JSON made at --old elsewhere: estimate it today")
    p.add_argument("--report-only", action="store_true",
                   help="write the .md anew from --out's paired_ab.json (no run)")
    args = p.parse_args(argv)
    if not args.old and not args.report_only:
        p.error("--old is needed for a run")
    args.poses = args.poses or (60 if args.quick else 300)
    names = [a for a in args.arms.split(",") if a] or (list(QUICK_ARMS) if args.quick else [])
    args.arms = names
    return args


def git(*args: str) -> str:
    """Run git in this repository; its stdout, stripped."""
    return subprocess.run(["git", *args], cwd=ROOT, check=True, capture_output=True,
                          text=True).stdout.strip()


def export(rev: str, label: str) -> Dict:
    """Import revision ``rev``'s package as ``ros2_ik_<label>``; its sha and subject.

    Exported once per sha under :data:`TREES` (its numba caches kept there too).
    """
    sha = git("rev-parse", "--verify", f"{rev}^{{commit}}")
    folder = TREES / f"{label}-{sha}"
    package = folder / f"ros2_ik_{label}"
    if not package.is_dir():  # made whole in a scratch folder, then moved in place
        scratch = TREES / f"{label}-{sha}.part"
        shutil.rmtree(scratch, ignore_errors=True)
        scratch.mkdir(parents=True)
        archive = subprocess.run(["git", "archive", sha, "ros2_ik/ros2_ik"], cwd=ROOT,
                                 check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(scratch)], input=archive, check=True)
        for path in (scratch / "ros2_ik" / "ros2_ik").rglob("*.py"):
            path.write_text(rename(path.read_text(), label))
        registry = scratch / "ros2_ik" / "ros2_ik" / "core" / "solvers" / "registry.py"
        if f"'ros2_ik_{label}.'" not in registry.read_text():  # else: this tree's solvers
            raise SystemExit(f"{rev}: its solver registry loads entry points another way; "
                             "extend paired_ab.rename for it")
        folder.mkdir(parents=True, exist_ok=True)
        (scratch / "ros2_ik" / "ros2_ik").rename(package)
        shutil.rmtree(scratch)
    sys.path.insert(0, str(folder))
    module = importlib.import_module(f"ros2_ik_{label}")
    assert Path(module.__file__).resolve().is_relative_to(folder), module.__file__
    return {"label": label, "rev": rev, "sha": sha,
            "subject": git("log", "-1", "--format=%s", sha)}


def rename(text: str, label: str) -> str:
    """``text`` (a module's source) with its ``ros2_ik`` imports renamed ``ros2_ik_<label>``.

    The solver registry loads its entry points' modules from the renamed package too.
    """
    text = _IMPORT.sub(f"ros2_ik_{label}", text)
    return text.replace(
        "        cls = eps[name].load()",
        "        import importlib\n"
        "        module, _, attribute = eps[name].value.partition(':')\n"
        "        cls = getattr(importlib.import_module(module.replace(\n"
        f"            'ros2_ik.', 'ros2_ik_{label}.', 1)), attribute)")


class Side:
    """One revision's ``solve``, ``PoseTarget`` and group of an arm (prepared)."""

    def __init__(self, label: str, arm: Arm):
        """Load the arm through the package's own exports, which every revision has.

        ``Robot``, ``solve`` and ``PoseTarget``, wherever the revision's modules lie;
        ``prepare`` where it exists, else one solve first (the kernels' loading, outside
        the timed solves).
        """
        core = importlib.import_module(f"ros2_ik_{label}.core")
        robot = core.Robot.from_urdf(arm.urdf, arm.srdf or None)
        self.group = robot.group(base=arm.base, tip=arm.tip)
        self.solve, self.Target = core.solve, core.PoseTarget
        if hasattr(core, "prepare"):
            core.prepare(self.group, self.group.tip)
        else:
            mid = self.group.mid_configuration()
            self.solve(self.group, self.Target(self.group.tip, self.group.fk(mid, self.group.tip)),
                       mid)

    def timed(self, T, seed: np.ndarray):
        """``(q or None, seconds)`` of one solve of ``T`` from ``seed``."""
        target = self.Target(self.group.tip, T)
        start = time.perf_counter()
        result = self.solve(self.group, target, seed)
        return (result.q if result.success else None), time.perf_counter() - start


def run_arm(arm: Arm, poses: int, seed: int) -> Dict:
    """Every figure of one arm (module docstring)."""
    from ros2_ik.core.pose import PoseTarget
    from ros2_ik.core.solve import prepare, solve
    from ros2_ik.core.solvers.lm import LevenbergMarquardt

    robot, group = arm.group()
    prepare(group, group.tip)
    sides = {label: Side(label, arm) for label in ("old", "new")}
    rng = np.random.default_rng(seed)
    targets = [group.fk(group.random_configuration(rng), group.tip) for _ in range(poses)]
    mid = group.mid_configuration()
    trac = trac_ik_adapter(arm, group)

    def between(k: int, T) -> None:
        LevenbergMarquardt.closed_form = False
        solve(group, PoseTarget(group.tip, T), mid, "lm", 0.005, 0, k)
        LevenbergMarquardt.closed_form = True
        if trac is not None:
            trac(T, mid)
        solve(group, PoseTarget(group.tip, T), mid, num_solutions=1000)

    cold: Dict[str, List[float]] = {"old": [], "new": []}
    ok = {"old": 0, "new": 0}
    for rep in range(2):
        for k, T in enumerate(targets):
            for label in (("old", "new") if (k + rep) % 2 == 0 else ("new", "old")):
                between(k, T)
                q, dt = sides[label].timed(T, mid)
                cold[label].append(dt)
                ok[label] += rep == 0 and verified(group, q, T)
    warm: Dict[str, List[float]] = {"old": [], "new": []}
    for label in ("old", "new", "old", "new"):
        warm[label] += [sides[label].timed(T, mid)[1] for T in targets]
    row = {"arm": arm.name, "source": arm.source, "joints": group.n, "poses": poses,
           "trac_ik_between": trac is not None}
    for mode, times in (("cold", cold), ("warm", warm)):
        for label in ("old", "new"):
            row[f"{mode}_{label}_median_us"] = statistics.median(times[label]) * 1e6
        row[f"{mode}_ratio"] = row[f"{mode}_new_median_us"] / row[f"{mode}_old_median_us"]
    row["cold_paired_ratio"] = statistics.median(
        b / a for a, b in zip(cold["old"], cold["new"]))
    row.update({f"{label}_success": ok[label] / poses for label in ok})
    return row


def estimate(rows: List[Dict], committed: Dict) -> Dict:
    """Scale a committed analytic_bench run (JSON ``committed``) by this run's ratios.

    Per arm in both: its median there with the other methods between requests
    (``ours_median_us``) times ``cold_ratio``, alone (``ours_alone_median_us``) times
    ``warm_ratio``.  Returns the machine it was made on and the rows.
    """
    there = {r["arm"]: r for r in committed["arms"] if r.get("closed_form")}
    scaled = []
    for r in rows:
        old = there.get(r["arm"])
        if old is None:
            continue
        scaled.append({"arm": r["arm"],
                       "committed_median_us": old["ours_median_us"],
                       "estimated_median_us": old["ours_median_us"] * r["cold_ratio"],
                       "committed_alone_median_us": old["ours_alone_median_us"],
                       "estimated_alone_median_us":
                           old["ours_alone_median_us"] * r["warm_ratio"]})
    return {"machine": committed["machine"]["cpu"], "arms": scaled}


def estimate_report(found: Dict) -> List[str]:
    """Markdown of :func:`estimate`'s rows and the worst of each against issue 48's target."""
    from analytic_bench import MEDIAN_TARGET_US

    rows = found["arms"]
    if not rows:
        return []
    lines = [f"Estimated on {found['machine']} (its committed analytic_bench run, made at "
             "the old revision, times this run's ratios; an estimate across machines, not "
             "a measurement):", "",
             "| arm | there [us] | estimate [us] | there, alone [us] | estimate, alone [us] |",
             "|---|---|---|---|---|"]
    lines += [f"| {r['arm']} | {r['committed_median_us']:.1f} | {r['estimated_median_us']:.1f} "
              f"| {r['committed_alone_median_us']:.1f} | {r['estimated_alone_median_us']:.1f} |"
              for r in rows]
    lines.append("")
    for key, what in (("estimated_median_us", "the other methods between requests"),
                      ("estimated_alone_median_us", "one request after another")):
        worst = max(rows, key=lambda r: r[key])
        lines.append(f"- estimated median, {what}: worst {worst[key]:.1f} us ({worst['arm']}; "
                     f"issue 48's target <= {MEDIAN_TARGET_US:g} us)")
    return lines + [""]


def report(rows: List[Dict], info: Dict, revisions: List[Dict],
           scaled: Optional[Dict] = None) -> str:
    """Return the markdown table of the run (and :func:`estimate_report` of ``scaled``)."""
    old, new = revisions
    lines = ["# Old against new in one process (bench/paired_ab.py)", "",
             f"Machine: {info['cpu']}, {info['cores']} cores, load {info['load_average']}; "
             f"old {old['sha'][:7]} ({old['subject']}), new {new['sha'][:7]} "
             f"({new['subject']}); the same targets, old and new alternated per target.", "",
             "| arm | joints | cold old [us] | cold new [us] | cold new / old "
             "| paired median | warm old [us] | warm new [us] | warm new / old "
             "| old success | new success |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(
            f"| {r['arm']} | {r['joints']} | {r['cold_old_median_us']:.1f} "
            f"| {r['cold_new_median_us']:.1f} | {r['cold_ratio']:.3f} "
            f"| {r['cold_paired_ratio']:.3f} | {r['warm_old_median_us']:.1f} "
            f"| {r['warm_new_median_us']:.1f} | {r['warm_ratio']:.3f} "
            f"| {100 * r['old_success']:.1f} % | {100 * r['new_success']:.1f} % |")
    lines += ["", "Cold: lm with its closed form off, TRAC-IK (when installed) and "
              "num_solutions=1000 before each solve, as bench/analytic_bench.py runs them; "
              "warm: one solve after another.", ""]
    return "\n".join(lines + (estimate_report(scaled) if scaled else []))


def main(argv=None) -> None:
    """Run the arms and write the results."""
    args = parse_args(argv)
    committed = json.loads(Path(args.scale).read_text()) if args.scale else None
    if args.report_only:
        run = json.loads((Path(args.out) / "paired_ab.json").read_text())
        if committed is not None:
            run["estimate"] = estimate(run["arms"], committed)
        results_files.write_json(Path(args.out), "paired_ab", run)
        (Path(args.out) / "paired_ab.md").write_text(
            report(run["arms"], run["machine"], run["revisions"], run.get("estimate")))
        return
    revisions = [export(args.old, "old"), export(args.new, "new")]
    chosen = [a for a in arms(6) + arms(7) if not args.arms or a.name in args.arms]
    missing = set(args.arms) - {a.name for a in chosen}
    if missing:
        raise SystemExit(f"unknown arms {sorted(missing)}")
    rows = []
    for arm in chosen:
        rows.append(run_arm(arm, args.poses, args.seed))
        r = rows[-1]
        print(f"{arm.name:32s} cold {r['cold_old_median_us']:7.1f} -> "
              f"{r['cold_new_median_us']:7.1f} us ({r['cold_ratio']:.3f}, paired "
              f"{r['cold_paired_ratio']:.3f}); warm {r['warm_ratio']:.3f}", flush=True)
    info = machine()
    scaled = estimate(rows, committed) if committed is not None else None
    results_files.write(
        Path(args.out), "paired_ab" + ("_quick" if args.quick else ""),
        {"machine": info, "revisions": revisions, "poses_per_arm": args.poses,
         "seed": args.seed, "arms": rows, **({"estimate": scaled} if scaled else {})},
        report(rows, info, revisions, scaled),
        lambda path: median_bars(path, rows, [("cold_old_median_us", "old, cold"),
                                              ("cold_new_median_us", "new, cold"),
                                              ("warm_old_median_us", "old, warm"),
                                              ("warm_new_median_us", "new, warm")],
                                 [r["arm"] for r in rows], "median solve() [us]", 0.9),
        echo=True)


if __name__ == "__main__":
    main()
