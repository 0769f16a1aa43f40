#!/usr/bin/env python3
"""Whole-body IK benchmark (issue 47): ros2_ik, Drake SNOPT and Pink on the same problems.

Protocol: the families of ``wholebody_problems`` (humanoid: talos, g1, romeo; quadruped:
solo12, anymal, go2; mobile: pr2, tiago; legged arm: b1_z1), N problems per robot, each
feasible by construction, every method from the same seed (the nominal stance) with the
same wall-clock budget per problem.  Per problem the methods run back to back in an order
drawn at random (seeded), so a slow phase of the shared machine hits all alike:

* ``ours``: ``wholebody_ours`` (ros2_ik's core; ``timeout_s`` = the budget left after
  building the problem, restarts within it);
* ``drake_snopt``: ``wholebody_drake`` (InverseKinematics, the floating base's unit
  quaternion, ComInPolyhedronConstraint, SNOPT with restarts);
* ``pink``: ``wholebody_pink`` (FrameTasks, a CoM task, a posture task; solve_ik +
  integrate until converged).

Times are wall-clock per problem, building the problem or program included, failures
included; the process's CPU time of each solve is kept beside it (``median_cpu_ms``): on
this shared machine a solve of a few ms is often preempted, which the wall clock counts and
the CPU time does not, so the CPU-time ratios are the steadier comparison under load.
Success is decided by ``wholebody_check`` alone (1e-4 m, 1e-3 rad, the CoM margin, joint
limits, unit quaternion, locked joints); an answer after the budget is a failure ("late").
Then a few of each robot's problems made impossible go through every method, two ways:
the CoM margin past the polygon (``wholebody_problems.with_impossible_com``), and one
contact's target 3 m from the others (``with_far_contact``).  Any claim of success there is
false, and ros2_ik should answer NO_SOLUTION naming the CoM term, or the contact moved.
The same few problems of the mobile robots then run with their answer moved 30-300 m
across the floor (``with_far_base``: feasible, the seed left at the origin).
A false SUCCESS is a method claiming success (ours: SUCCESS; Drake:
SNOPT's success; Pink: its own stopping test) on an answer the check refuses.  An extra
problem per robot runs first through every method, untimed (imports, caches).  The
process then collects its garbage and freezes what is alive (as ``constrained_bench``),
and ``WARM_UP`` extra problems run through every method, untimed, before the timed ones:
the collection walks the whole heap, and the first solves after it, and the references'
first solves, found their caches cold (ros2_ik's quadruped request ~0.55 ms, then
~0.3 ms, against ~0.2 ms interleaved; with 10 problems per robot those few set the
median).

    python bench/wholebody_bench.py            # N=100 per robot
    python bench/wholebody_bench.py --quick    # N=10
"""
from __future__ import annotations

import argparse
import datetime
import gc
import logging
import os
import re
import sys
import time
import traceback
from pathlib import Path
from typing import Dict, List, NamedTuple, Optional

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import wholebody_problems as wb  # noqa: E402
from machine import machine, pyplot  # noqa: E402
import results_files  # noqa: E402
from wholebody_check import TOL_M, TOL_RAD, WholeBodyChecker  # noqa: E402
from ros2_ik.core import settle_memory  # noqa: E402

RESULTS = results_files.RESULTS
METHODS = ("ours", "drake_snopt", "pink")
#: Extra problems per robot through every method before the timed ones, untimed.
WARM_UP = 4
REFERENCES = ("drake_snopt", "pink")
#: A NO_SOLUTION message that names the CoM-in-support-polygon term.
NAMES_COM = re.compile(r"support[_ ]polygon|ComInSupport|cent(re|er)[_ ]of[_ ]mass|\bCoM\b",
                       re.I)


class Answer(NamedTuple):
    """A method's answer: full-model q or None, whether it claims success, a note."""

    q: Optional[np.ndarray]
    claimed: bool
    note: str = ""


def adapters(robot: str, methods) -> Dict[str, object]:
    """Return ``({method: solve(problem, budget_s, rng) -> Answer}, {method: why not})``."""
    out, skipped = {}, {}
    for method in methods:
        try:
            out[method] = _adapter(robot, method)
        except Exception as exc:  # noqa: BLE001 - a method that cannot run here: said
            skipped[method] = f"{type(exc).__name__}: {str(exc)[:200]}"
    return out, skipped


def _adapter(robot: str, method: str):
    if method == "ours":
        from wholebody_ours import OursWholeBody
        ours = OursWholeBody(robot)
        return lambda p, budget_s, rng: Answer(*ours.solve(p, budget_s, rng))
    if method == "drake_snopt":
        from wholebody_drake import DrakeWholeBody
        drake = DrakeWholeBody(robot)

        def solve(p, budget_s, rng):
            attempt = drake.solve(p, budget_s, rng)
            return Answer(attempt.q, attempt.claimed_success, f"attempts {attempt.attempts}")
        return solve
    if method == "pink":
        from wholebody_pink import PinkWholeBody
        pink = PinkWholeBody(robot)

        def solve_pink(p, budget_s, rng):
            q, iterations, converged = pink.solve(p, budget_s)
            return Answer(q, converged, f"iterations {iterations}")
        return solve_pink
    raise ValueError(f"unknown method {method!r}; valid: {METHODS}")


def run_one(checker: WholeBodyChecker, solve, problem, budget_s: float) -> dict:
    """One method on one problem: the check's verdict, the time [s], the claim.

    The method's random generator is made before the clock starts: making one costs
    ~15 us warm and ~30 us with cold caches (numpy's seeding), the harness's work, not
    the method's.
    """
    rng = np.random.default_rng(problem.index)
    start, cpu = time.perf_counter(), time.process_time()
    try:
        answer = solve(problem, budget_s, rng)
    except Exception as exc:  # noqa: BLE001 - counted, never expected
        return {"ok": False, "time_s": time.perf_counter() - start, "claimed": False,
                "cpu_s": time.process_time() - cpu, "why": "exception", "note": "".join(
                    traceback.format_exception_only(exc)).strip()[:300]}
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    verdict = checker.check(answer.q, problem)
    why = verdict.reason if not verdict.ok else ("late" if elapsed > budget_s else "ok")
    return {"ok": why == "ok", "time_s": elapsed, "cpu_s": cpu, "claimed": bool(answer.claimed),
            "why": why[:300], "note": answer.note[:300],
            "base_displacement_m": verdict.base_displacement_m if verdict.ok else None}


def run_infeasible(checker, solvers, impossible, budget_s: float, names) -> Dict[str, dict]:
    """Run problems made impossible through every method.

    ``impossible``: problems (``with_impossible_com``, ``with_far_contact``); ``names(problem,
    note)``: whether our message names the term that cannot hold.  Per method: how many,
    the median time [ms], false SUCCESS (any claim: no answer exists), and for ours how many
    NO_SOLUTION answers name the term.
    """
    out = {}
    for method, solve in solvers.items() if impossible else ():
        runs = [run_one(checker, solve, p, budget_s) for p in impossible]
        row = {"problems": len(runs),
               "median_ms": 1e3 * float(np.median([r["time_s"] for r in runs])),
               "false_successes": sum(r["claimed"] for r in runs),
               "first_message": runs[0]["note"][:200]}
        if method == "ours":
            row["no_solution_naming_the_term"] = sum(
                r["note"].startswith("NO_SOLUTION") and names(p, r["note"])
                for p, r in zip(impossible, runs))
        out[method] = row
    return out


def run_far_base(checker, solvers, moved, budget_s: float) -> Dict[str, dict]:
    """Run problems whose answer lies 30-300 m from the seed (``with_far_base``).

    Per method: how many, how many verified, the median time [ms], false SUCCESS.
    """
    out = {}
    for method, solve in solvers.items() if moved else ():
        runs = [run_one(checker, solve, p, budget_s) for p in moved]
        out[method] = {"problems": len(runs), "verified": sum(r["ok"] for r in runs),
                       "median_ms": 1e3 * float(np.median([r["time_s"] for r in runs])),
                       "false_successes": sum(r["claimed"] and not r["ok"] for r in runs)}
    return out


def _names_com(problem, note: str) -> bool:
    return bool(NAMES_COM.search(note))


def _names_contact(problem, note: str) -> bool:
    return problem.meta["infeasible"] in note and " m apart, reach " in note


def run_robot(robot: str, methods, n: int, seed: int, budget_s: float,
              infeasible: int = 0) -> dict:
    """Every problem of one robot through every method, interleaved; per-method records."""
    problems = wb.problems(robot, n + WARM_UP, seed)  # the first n: the same for any count
    checker = WholeBodyChecker(robot)
    solvers, skipped = adapters(robot, methods)
    for solve in solvers.values():  # untimed warm-up on the first extra problem
        run_one(checker, solve, problems[n], budget_s)
    settle_memory()
    for problem in problems[n:]:  # again, on them all: the collection walked the heap
        for solve in solvers.values():
            run_one(checker, solve, problem, budget_s)
    names = list(solvers)
    records: Dict[str, List[dict]] = {m: [] for m in names}
    order = np.random.default_rng(seed)
    for problem in problems[:n]:
        for k in order.permutation(len(names)):
            records[names[k]].append(run_one(checker, solvers[names[k]], problem, budget_s))
    few = problems[:infeasible]
    impossible = run_infeasible(checker, solvers, [q for q in map(wb.with_impossible_com, few)
                                                   if q is not None], budget_s, _names_com)
    far = run_infeasible(checker, solvers, [q for q in map(wb.with_far_contact, few)
                                            if q is not None], budget_s, _names_contact)
    moved = run_far_base(checker, solvers, [q for q in map(wb.with_far_base, few)
                                            if q is not None], budget_s)
    gc.unfreeze()
    return {"records": records, "skipped": skipped, "infeasible": impossible,
            "infeasible_contact": far, "far_base": moved,
            "draws_median": float(np.median([p.meta["draws"] for p in problems[:n]]))}


def summary(records: List[dict]) -> dict:
    """Figures of one method on one robot."""
    times = np.array([r["time_s"] for r in records]) * 1e3
    shifts = [r["base_displacement_m"] for r in records if r.get("base_displacement_m")]
    failures: Dict[str, int] = {}
    for r in records:
        if not r["ok"]:
            key = r["why"].split(" by ")[0].split(";")[0]
            failures[key] = failures.get(key, 0) + 1
    return {"problems": len(records),
            "verified_success_rate": float(np.mean([r["ok"] for r in records])),
            "median_ms": float(np.median(times)), "p95_ms": float(np.percentile(times, 95)),
            "median_cpu_ms": 1e3 * float(np.median([r["cpu_s"] for r in records])),
            "false_successes": sum(r["claimed"] and not r["ok"] and r["why"] != "late"
                                   for r in records),
            "exceptions": sum(r["why"] == "exception" for r in records),
            "late": sum(r["why"] == "late" for r in records),
            "median_base_displacement_m": float(np.median(shifts)) if shifts else None,
            "failure_reasons": failures}


def rows_of(robot: str, run: dict) -> List[dict]:
    """One row per method, with the ratios of the references' medians to ours."""
    spec = wb.ROBOTS[robot]
    rows = [{"family": spec.family, "robot": robot, "method": m, **summary(rs),
             **{key: run[key][m] for key in ("infeasible", "infeasible_contact", "far_base")
                if m in run.get(key, {})}}
            for m, rs in run["records"].items()]
    ours = next((r for r in rows if r["method"] == "ours"), None)
    for row in rows:
        if ours and row["method"] in REFERENCES:
            row["median_ratio_to_ours"] = row["median_ms"] / ours["median_ms"]
            row["median_cpu_ratio_to_ours"] = row["median_cpu_ms"] / ours["median_cpu_ms"]
    for method, why in run["skipped"].items():
        rows.append({"family": spec.family, "robot": robot, "method": method, "skipped": why})
    return rows


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="N=10 per robot")
    p.add_argument("-n", type=int, default=None, help="problems per robot (100)")
    p.add_argument("--robots", default=",".join(wb.ROBOTS), help="comma list")
    p.add_argument("--methods", default=",".join(METHODS), help="comma list")
    p.add_argument("--budget-ms", type=float, default=1000.0, help="per problem [ms]")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--infeasible", type=int, default=None,
                   help="problems per robot made impossible, each way: a CoM margin past the "
                   "polygon, a contact 3 m away (3 quick, 20)")
    p.add_argument("--out", default=str(RESULTS), help="results folder")
    args = p.parse_args(argv)
    for name, given, valid in (("--methods", args.methods, METHODS),
                               ("--robots", args.robots, tuple(wb.ROBOTS))):
        unknown = [x for x in given.split(",") if x and x not in valid]
        if unknown:
            p.error(f"{name}: unknown {', '.join(unknown)}; valid: {', '.join(valid)}")
    return args


def main(argv=None) -> int:
    """Run the benchmark; exit 1 on an exception or a false SUCCESS of ours."""
    args = parse_args(argv)
    try:  # pydrake sets up its logger on import: import it first, then quieten it
        import pydrake.multibody.parsing  # noqa: F401
    except ImportError:
        pass
    logging.getLogger("drake").setLevel(logging.ERROR)  # URDF tags Drake ignores
    n = args.n or (10 if args.quick else 100)
    infeasible = args.infeasible if args.infeasible is not None else (3 if args.quick else 20)
    budget_s = args.budget_ms * 1e-3
    methods = [m for m in args.methods.split(",") if m]
    meta = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "problems_per_robot": n, "budget_s": budget_s, "seed": args.seed,
            "machine": machine(), "seed_configuration": "nominal stance (mobile: origin)",
            "tolerances": {"m": TOL_M, "rad": TOL_RAD, "com_margin_m": wb.COM_MARGIN_M},
            "families": {f: list(r) for f, r in wb.FAMILIES.items()}}
    print(f"whole-body benchmark: N={n} per robot, budget {args.budget_ms:g} ms, {methods}")
    started, rows = time.perf_counter(), []
    for robot in args.robots.split(","):
        t0 = time.perf_counter()
        run = run_robot(robot, methods, n, args.seed, budget_s, min(infeasible, n))
        new = rows_of(robot, run)
        rows += new
        print(f"  {robot:7s} {time.perf_counter() - t0:6.1f} s  " + "  ".join(
            f"{r['method']} " + ("n/a" if "skipped" in r else
                                 f"{100 * r['verified_success_rate']:.0f}%/"
                                 f"{r['median_ms']:.1f}ms") for r in new), flush=True)
    meta["seconds"] = round(time.perf_counter() - started, 1)
    meta["machine"]["load_average_end"] = list(os.getloadavg())
    out = Path(args.out)
    results_files.write_json(out, "wholebody", {"meta": meta, "rows": rows})
    from wholebody_report import write_markdown, write_plot
    write_markdown(out / "wholebody.md", rows, meta)
    write_plot(out / "wholebody.png", rows, pyplot())
    print(f"{meta['seconds']} s; wrote {out / 'wholebody.json'}, wholebody.md, wholebody.png")
    bad = [r for r in rows if r["method"] == "ours" and "skipped" not in r
           and (r["false_successes"] or r["exceptions"])]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
