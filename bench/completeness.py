"""Completeness fuzz (issue 38): feasible problems on unseen robots, lm against Drake SNOPT.

Every problem is feasible by construction (``completeness_problems``); Drake's
InverseKinematics with SNOPT and random restarts solves the same problem with the same
budget, interleaved (which goes first alternates), and ``constrained_check`` judges both
answers in metres and radians, outside either solver. Per cell (robot class x
combination): verified success of both, false failures (a feasible problem answered
without SUCCESS; among them those Drake solved), exceptions, false SUCCESS, median times.

Joint windows across +-pi (``windows_pi``, issue 48) are a pass of their own,
``--windows-pi N`` problems cycling over the robots with a continuous joint; with the
``windows`` problems whose continuous-joint window straddles +-pi (a few), they make the
cell "across +-pi / windows". Every robot source has an "all" cell too.

The whole-body families (``completeness_wholebody``: humanoid, quadruped, mobile and
legged-arm problems of ``wholebody_problems``, lm beside Drake SNOPT, ``--wholebody N``
problems with ``--wholebody-budget`` each) are cells of their own ("whole-body / family").

Before each pass the process collects its garbage and exempts what is alive from later
collections (``gc.freeze``), as ``ik_node`` does after loading a model and as
``constrained_bench`` does: the ~180k objects the robots and Drake leave made a full
collection last ~0.1 s, which landed inside one solve (seed 7, problem 103, in 4 of 6
runs) and turned its 2 ms answer into a timeout, a false failure of neither solver.

``python bench/completeness.py [--quick] [--problems N] [--budget S]`` writes
``bench/results/completeness.{json,md,png}`` and exits 1 on an exception or a false SUCCESS.
"""
from __future__ import annotations

import argparse
import logging
import math
import pathlib
import time
import traceback
from collections import defaultdict
from typing import Dict, List, Optional

import numpy as np

from completeness_problems import (COMBOS, SCENE_COMBO, TIGHT_COMBOS, WINDOWS_PI_COMBO,
                                   FeasibleProblems, RobotCase, SceneProblems, robot_cases)
from constrained_check import checker_for
from constrained_ours import build, solve_spec
from machine import machine, pyplot
import results_files
from ros2_ik.core import Robot, prepare, robots, settle_memory
from ros2_ik.core.kinematics.reach import reach_bound

#: The cell of the problems whose continuous-joint window straddles +-pi.
ACROSS_PI = "across +-pi / windows"
RESULTS = results_files.RESULTS
DOCS = RESULTS.parents[1] / "docs" / "completeness.md"


class Arm:
    """One robot case: its group, generator, checker and (when Drake loads it) Drake plant."""

    collision = None  # (checker, to_full_q) of a robot in a scene

    def __init__(self, case):
        self.case = case
        robot = Robot.from_urdf(case.urdf)
        self.group = robot.group(base=case.base, tip=case.tip)
        self.problems = FeasibleProblems(case, self.group)
        self.checker = checker_for(self.group, case.urdf)
        self.drake, self.drake_error = None, ""
        try:
            from constrained_drake import DrakeArm
            self.drake = DrakeArm(case.urdf, self.group)
        except Exception as exc:  # noqa: BLE001 - a URDF Drake refuses: ours still runs
            self.drake_error = f"{type(exc).__name__}: {str(exc)[:200]}"
        self.warm_up()

    def combos(self, combos):
        """Return the combinations of ``combos`` this robot is asked.

        Not ``scene``, and ``windows_pi`` only with a continuous joint.
        """
        return [c for c in combos if c != SCENE_COMBO
                and (c != WINDOWS_PI_COMBO or self.group.has_continuous)]

    def warm_up(self) -> None:
        """One untimed problem through both sides: per-group set-up is not a request's.

        ``prepare`` does ours for the problems with constraints, with and without a pose
        (the seed library without a frame, the compiled constraint attempt), as the node
        does at start-up for every group it serves; the reach bounds of the frames the
        problems constrain (``reach_bound``, cached per group and frame, ~1-15 ms each) are
        not built by ``prepare`` yet, so they are built here.
        """
        spec = self.problems.problem(np.random.default_rng(12345), -1, "pose")
        run_ours(self, spec, 1.0)
        run_drake(self, spec, 0.05)
        for frame in (None, self.group.tip):
            prepare(self.group, frame, constrained=True)
        names = {self.group.tip, *self.problems.links}
        for frame_id, frame in enumerate(self.group.robot.model.frames):
            if frame.name in names:
                reach_bound(self.group, frame_id)


class SceneArm(Arm):
    """The Panda in ``bench/panda_scene.yaml`` (constrained_bench's), the ``scene`` cell."""

    def __init__(self):
        from constrained_bench import Arm as BenchArm
        bench = BenchArm("panda", need_drake=True, need_scene=True)
        self.case = RobotCase("panda+scene", "scene", robots.urdf_text("panda"),
                              bench.group.base, bench.group.tip)
        self.group, self.checker, self.collision = bench.group, bench.checker, bench.collision
        self.problems = SceneProblems(self.case, self.group, self.collision)
        self.drake, self.drake_error = bench.drake_scene, ""
        self.warm_up()

    def combos(self, combos):
        """Only ``scene`` (when the run asks it)."""
        return [SCENE_COMBO] if SCENE_COMBO in combos else []


def run_ours(arm: Arm, spec, budget_s: float) -> dict:
    """Run lm on ``spec``: status, the check's verdict and the time [s] (build included)."""
    start = time.perf_counter()
    try:
        problem = build(spec, arm.group, arm.collision and arm.collision[0])
        result = solve_spec(arm.group, problem, spec.seed, "lm", budget_s,
                            random_seed=spec.index)
    except Exception as exc:  # noqa: BLE001 - counted, never expected
        return {"status": "EXCEPTION", "ok": False, "time_s": time.perf_counter() - start,
                "message": "".join(traceback.format_exception_only(exc)).strip()[:300]}
    elapsed = time.perf_counter() - start
    verdict = arm.checker.check(result.q, spec)
    return {"status": result.status.name, "ok": verdict.ok, "time_s": elapsed,
            "message": result.message[:300], "reason": verdict.reason}


def run_drake(arm: Arm, spec, budget_s: float) -> Optional[dict]:
    """Drake SNOPT with restarts on ``spec`` (None when Drake cannot load the robot)."""
    if arm.drake is None:
        return None
    start = time.perf_counter()
    try:
        attempt = arm.drake.solve(spec, "drake_snopt", budget_s,
                                  np.random.default_rng(spec.index))
    except Exception as exc:  # noqa: BLE001 - e.g. a frame Drake names otherwise
        return {"ok": False, "time_s": time.perf_counter() - start,
                "error": f"{type(exc).__name__}: {str(exc)[:200]}"}
    elapsed = time.perf_counter() - start
    verdict = arm.checker.check(attempt.q, spec)
    return {"ok": verdict.ok and elapsed <= 1.5 * budget_s, "time_s": elapsed,
            "attempts": attempt.attempts, "reason": verdict.reason}


def outcomes(arms: List[Arm], count: int, budget_s: float, seed: int,
             combos=COMBOS, start: int = 0) -> List[dict]:
    """``count`` problems cycling over arms and combinations; one record per problem.

    Problem indices run from ``start`` (a later pass: its own random stream).
    """
    rng = np.random.default_rng(seed if not start else [seed, start])
    records = []
    settle_memory()
    arms = [arm for arm in arms if arm.combos(combos)]
    for i in range(start, start + count if arms else start):
        arm = arms[i % len(arms)]
        mine = arm.combos(combos)
        combo = mine[(i + i // len(arms)) % len(mine)]
        spec = arm.problems.problem(rng, i, combo)
        pair = [lambda: run_ours(arm, spec, budget_s), lambda: run_drake(arm, spec, budget_s)]
        if i % 2:
            drake, ours = pair[1](), pair[0]()
        else:
            ours, drake = pair[0](), pair[1]()
        records.append({"robot": arm.case.name, "robot_kind": arm.case.kind, "combo": combo,
                        "index": i, "across_pi": spec.meta.get("across_pi", False), "ours": ours,
                        "drake": drake})
        if (i + 1) % 100 == 0:
            print(f"  {i + 1}/{count} problems", flush=True)
    return records


def cell_summary(records: List[dict]) -> dict:
    """Figures of one cell (or of all problems)."""
    n = len(records)
    ours_ok = sum(r["ours"]["ok"] for r in records)
    with_drake = [r for r in records if r["drake"] is not None]
    drake_ok = sum(r["drake"]["ok"] for r in with_drake)
    false_failures = [r for r in records if not r["ours"]["ok"]
                      and r["ours"]["status"] != "SUCCESS"]
    return {
        "problems": n, "problems_with_drake": len(with_drake),
        "ours_verified_success": ours_ok / n if n else math.nan,
        "drake_verified_success": drake_ok / len(with_drake) if with_drake else math.nan,
        "ours_verified_success_on_drake_problems":
            sum(r["ours"]["ok"] for r in with_drake) / len(with_drake) if with_drake
            else math.nan,
        "false_failures": len(false_failures),
        "false_failures_drake_solved": sum(1 for r in false_failures
                                           if r["drake"] and r["drake"]["ok"]),
        "exceptions": sum(r["ours"]["status"] == "EXCEPTION" for r in records),
        "false_successes": sum(r["ours"]["status"] == "SUCCESS" and not r["ours"]["ok"]
                               for r in records),
        "ours_median_ms": 1e3 * float(np.median([r["ours"]["time_s"] for r in records])),
        "drake_median_ms": 1e3 * float(np.median([r["drake"]["time_s"] for r in with_drake]))
        if with_drake else math.nan,
    }


def summarise(records: List[dict]) -> dict:
    """Per cell: robot kind x combination, combination, robot kind, across +-pi, overall."""
    cells: Dict[str, List[dict]] = defaultdict(list)
    for r in records:
        cells[f"{r['robot_kind']} / {r['combo']}"].append(r)
        cells[f"{r['robot_kind']} / all"].append(r)
        cells[f"all / {r['combo']}"].append(r)
        if r.get("across_pi"):
            cells[ACROSS_PI].append(r)
    out = {name: cell_summary(rs) for name, rs in sorted(cells.items())}
    out["all / all"] = cell_summary(records)
    return out


def write(summary: dict, records: List[dict], arms: List[Arm], args, elapsed: float,
          wholebody_unavailable: Optional[dict] = None) -> None:
    """JSON, markdown table and PNG under bench/results/."""
    failures = [r for r in records if not r["ours"]["ok"]][:60]
    drake_failures = [r for r in records if r["drake"] and not r["drake"]["ok"]][:60]
    stem = args.out or ("completeness_quick" if args.quick else "completeness")
    doc = {"machine": machine(), "budget_s": args.budget, "problems": len(records),
           "robots": len(arms), "robot_names": [a.case.name for a in arms],
           "drake_unavailable": {a.case.name: a.drake_error for a in arms if a.drake is None},
           "wholebody_budget_s": args.wholebody_budget,
           "wholebody_unavailable": wholebody_unavailable or {},
           "seconds": round(elapsed, 1), "cells": summary, "failures": failures,
           "drake_failures": drake_failures}
    results_files.write(RESULTS, stem, doc, markdown(doc), lambda path: plot(summary, path),
                        default=float)
    if not args.quick and args.problems == 0 and not args.robots and not args.out:
        write_docs(markdown(doc))


def write_docs(table: str) -> None:
    """Put ``table`` between the completeness markers of ``docs/completeness.md``."""
    if not DOCS.exists():
        return
    text = DOCS.read_text()
    begin, end = "<!-- completeness:begin -->\n", "<!-- completeness:end -->"
    head, rest = text.split(begin, 1)
    DOCS.write_text(head + begin + table + "\n![lm and SNOPT per combination]"
                    "(../bench/results/completeness.png)\n" + end + rest.split(end, 1)[1])


def markdown(doc: dict) -> str:
    """Return the table of ``doc['cells']``."""
    lines = [f"Completeness fuzz: {doc['problems']} feasible problems on {doc['robots']} robots, "
             f"budget {doc['budget_s']} s each, lm vs Drake SNOPT with restarts, interleaved; "
             f"{doc['machine']['cpu']}, {doc['machine']['cores']} cores"
             f"{_load(doc['machine'])}.", "",
             "| cell | problems | lm verified | SNOPT verified | false failures (SNOPT solved) "
             "| exceptions | false SUCCESS | lm median ms | SNOPT median ms |",
             "|---|---|---|---|---|---|---|---|---|"]
    for name, c in doc["cells"].items():
        lines.append(
            f"| {name} | {c['problems']} | {100 * c['ours_verified_success']:.2f} % | "
            f"{100 * c['drake_verified_success']:.2f} % | {c['false_failures']} "
            f"({c['false_failures_drake_solved']}) | {c['exceptions']} | "
            f"{c['false_successes']} | {c['ours_median_ms']:.2f} | {c['drake_median_ms']:.2f} |")
    return "\n".join(lines + [""] + targets(doc["cells"])) + "\n"


def _load(machine_info: dict) -> str:
    """Return ", load average L (1, 5, 15 min) at the end" when ``machine_info`` has it."""
    load = machine_info.get("load_average")
    return (", load average " + " / ".join(f"{x:.1f}" for x in load) + " (1 / 5 / 15 min) at "
            "the end, cores shared with other work") if load else ""


def _met(ok: bool) -> str:
    return "met" if ok else "MISSED"


def targets(cells: dict) -> List[str]:
    """Issues 38's and 48's targets, as met or not by ``cells``.

    lm is compared with SNOPT on the problems SNOPT ran.
    """
    total, windows = cells["all / all"], cells.get("all / windows")
    behind = [name for name, c in cells.items()
              if c["ours_verified_success_on_drake_problems"] < c["drake_verified_success"]]
    out = [f"- lm verified success >= SNOPT's in every cell: "
           f"{'yes' if not behind else 'no, behind in ' + ', '.join(behind)}",
           f"- lm verified success overall: {100 * total['ours_verified_success']:.2f} % "
           f"(target >= 99.5 %)",
           f"- false failures: {total['false_failures']} of {total['problems']} "
           f"({100 * total['false_failures'] / total['problems']:.2f} %, target <= 0.5 %); "
           f"where SNOPT solved: {total['false_failures_drake_solved']} (target 0): "
           f"{_met(not total['false_failures_drake_solved'])}; exceptions "
           f"{total['exceptions']}, false SUCCESS {total['false_successes']} (target 0): "
           f"{_met(not total['exceptions'] and not total['false_successes'])}"]
    if windows:
        ratio = windows['drake_median_ms'] / windows['ours_median_ms']
        out.append(f"- joint windows: lm {100 * windows['ours_verified_success']:.2f} % at a "
                   f"median of SNOPT's / {ratio:.2f} (target >= 99.5 % at SNOPT's / 3): "
                   f"{_met(windows['ours_verified_success'] >= 0.995 and ratio >= 3)}")
    tight = [(c, cells[f"all / {c}"]) for c in TIGHT_COMBOS if f"all / {c}" in cells]
    if tight:
        ratios = [cell["drake_median_ms"] / cell["ours_median_ms"] for _, cell in tight]
        out.append("- tight families, lm's median faster than SNOPT's by: " + ", ".join(
            f"{c} {r:.1f}x" for (c, _), r in zip(tight, ratios))
            + f" (target >= 3x): {_met(min(ratios) >= 3)}")
    across = cells.get(ACROSS_PI)
    if across:
        ours = across["ours_verified_success"]
        out.append(f"- windows across +-pi: {across['problems']} problems, lm "
                   f"{100 * ours:.2f} %, SNOPT {100 * across['drake_verified_success']:.2f} % "
                   f"(target >= 99.5 % and >= SNOPT): "
                   f"{_met(ours >= 0.995 and ACROSS_PI not in behind)}")
    return out


def plot(summary: dict, path: pathlib.Path) -> None:
    """Plot verified success per combination, lm beside SNOPT."""
    plt = pyplot()
    if plt is None:
        return
    names = [n for n in summary if n.startswith("all /") or n == ACROSS_PI]
    x = np.arange(len(names))
    fig, ax = plt.subplots(figsize=(11, 4.5))
    ours = [100 * summary[n]["ours_verified_success"] for n in names]
    drake = [100 * summary[n]["drake_verified_success"] for n in names]
    ax.bar(x - 0.2, ours, 0.4, label="ros2_ik lm")
    ax.bar(x + 0.2, drake, 0.4, label="Drake SNOPT + restarts")
    ax.set_xticks(x, [n.split(" / ")[1] if n != ACROSS_PI else "across +-pi" for n in names],
                  rotation=30, ha="right")
    ax.set_ylabel("verified success [%]")
    ax.set_ylim(min(80.0, np.nanmin(ours + drake) - 2.0), 100.5)
    ax.legend(loc="lower left")
    ax.set_title("Feasible-by-construction problems on unseen robots")
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def wholebody(args):
    """Run the whole-body families (module docstring): (records, unavailable sides)."""
    import completeness_wholebody as cw
    import wholebody_problems as wb
    count = args.wholebody if args.wholebody is not None else (90 if args.quick else 450)
    names = [r for r in wb.ROBOTS if args.robots in r]
    if not count or not names:
        return [], {}
    cases = cw.cases(names)
    unavailable = cw.unavailable(cases)
    for side, why in unavailable.items():
        print(f"  whole-body {side} not run: {why}")
    print(f"{count} whole-body problems on {len(cases)} robots, budget {args.wholebody_budget} s")
    settle_memory()  # the whole-body robots and Drake's plants: frozen too
    return cw.outcomes(cases, count, args.wholebody_budget, args.seed), unavailable


def main() -> int:
    """Run the fuzz; exit 1 on an exception or a false SUCCESS."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="600 problems (default 5000)")
    parser.add_argument("--problems", type=int, default=0, help="number of problems")
    parser.add_argument("--random-arms", type=int, default=12, help="generated arms")
    parser.add_argument("--budget", type=float, default=0.1, help="per problem and solver [s]")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--windows-pi", type=int, default=None,
                        help="problems of windows across +-pi (50 with --quick, else 250)")
    parser.add_argument("--combos", default=",".join(COMBOS + (SCENE_COMBO, WINDOWS_PI_COMBO)),
                        help="comma-separated")
    parser.add_argument("--robots", default="",
                        help="only robots whose name contains this (or of this kind: vendor)")
    parser.add_argument("--out", default="", help="results stem under bench/results/")
    parser.add_argument("--wholebody", type=int, default=None,
                        help="whole-body problems (90 with --quick, else 450; 0: none)")
    parser.add_argument("--wholebody-budget", type=float, default=1.0,
                        help="per whole-body problem and solver [s]")
    args = parser.parse_args()
    import constrained_drake  # noqa: F401 - pydrake sets up its logger on import
    logging.getLogger("drake").setLevel(logging.ERROR)  # URDF attributes it ignores
    count = args.problems or (600 if args.quick else 5000)
    started = time.perf_counter()
    arms = [Arm(case) for case in robot_cases(args.random_arms)
            if args.robots in case.name or args.robots == case.kind]
    if args.robots in "panda+scene":
        arms.append(SceneArm())
    print(f"{len(arms)} robots ({sum(a.drake is None for a in arms)} without Drake), "
          f"{count} problems, budget {args.budget} s")
    combos = args.combos.split(",")
    records = outcomes(arms, count, args.budget, args.seed,
                       [c for c in combos if c != WINDOWS_PI_COMBO])
    if WINDOWS_PI_COMBO in combos:
        pi_count = args.windows_pi
        if pi_count is None:
            pi_count = 50 if args.quick else 250
        records += outcomes(arms, pi_count, args.budget, args.seed, [WINDOWS_PI_COMBO],
                            start=count)
    records_wb, unavailable = wholebody(args)
    records += records_wb
    summary = summarise(records)
    write(summary, records, arms, args, time.perf_counter() - started, unavailable)
    print(markdown({"problems": len(records), "robots": len(arms), "budget_s": args.budget,
                    "machine": machine(), "cells": summary}))
    total = summary["all / all"]
    return 1 if total["exceptions"] or total["false_successes"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
