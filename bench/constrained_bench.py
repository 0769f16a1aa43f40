#!/usr/bin/env python3
"""Constrained-IK benchmark (issue 10): our solvers and Drake (SNOPT, IPOPT) on the same problems.

Protocol: the families of ``constrained_problems.py`` (a-g on panda, ur5, kinova, xarm7;
h on the panda in ``panda_scene.yaml``), N problems each built from a uniform random
configuration, seed at mid-limits, a 20 ms budget per problem.  Per problem every solver
runs back to back (interleaved: a slow phase of the shared machine hits all alike), in an
order drawn at random per problem (seeded), so that each solver follows each other alike:
what ran just before sets the caches a solve starts with (with a fixed order, lm always
followed Drake IPOPT, whose run left it 5-37 % slower than after dls or SNOPT, while
SNOPT, which followed dls, took about as long after either; ``constrained_order.py``):
ours through ``ros2_ik.core.solve.solve`` (``timeout_s`` = the budget left after building
the problem, restarts within it), Drake's
``InverseKinematics`` with restarts (``constrained_drake.py``).  Times are wall-clock per
problem, building the problem / program included, failures included.  Success is decided
by ``constrained_check.py`` alone (1e-4 m, 1e-4 rad, joint limits exactly, min distance by
coal), and an answer after the budget is a failure ("late").  For family g the objective
of each verified answer is re-evaluated there and compared with Drake SNOPT's, and with
SNOPT started from the posture cost's ``q_nominal`` (``drake_snopt_nominal``, run on
problems with costs only): lm tries that start too, so this is the anchor at its best.
Then lm and SNOPT solve each problem twice more, back to back, and the second time is
kept (``median_warm_ms``): how much of the interleaved median is a cold start, reported
beside it, not judged.  Before each cell's timed problems the process collects its garbage
and exempts what is alive from later collections (``gc.freeze``), as ``ik_node`` does
after loading a model: a full collection of the ~160k objects Drake and the arms leave
took ~26 ms, more than the budget, and made one answer in 300 late in two runs.

    python bench/constrained_bench.py            # N=500 per family and arm (~5-12 min)
    python bench/constrained_bench.py --quick    # N=10
    python bench/constrained_bench.py --other-arms   # a-g on 7 other arms, lm vs SNOPT
"""
from __future__ import annotations

import argparse
import datetime
import importlib.util
import logging
import os
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import constrained_problems as fam  # noqa: E402
from constrained_check import checker_for  # noqa: E402
from constrained_ours import build, scene_checker, solve_spec  # noqa: E402
from constrained_report import summarise_rows, write_markdown, write_plot  # noqa: E402
from machine import machine  # noqa: E402
import results_files  # noqa: E402

from ros2_ik.core import errors, robots, settle_memory  # noqa: E402

OURS = ("lm", "sqp", "bfgs", "dls")
DRAKE = ("drake_snopt", "drake_ipopt", "drake_snopt_nominal")
#: Solvers run only on problems with costs (started from the posture cost's nominal).
COSTS_ONLY = ("drake_snopt_nominal",)
SCENE = HERE / "panda_scene.yaml"
RESULTS = results_files.RESULTS
#: Solvers also timed on a second, immediate solve of each problem (``_warm_pass``).
WARM_PASS = ("lm", "drake_snopt")
#: ``--other-arms``: arms the families were not developed on (example-robot-data; whole
#: robots load with every other joint locked), lm against Drake SNOPT, 300 problems.
OTHER_ARMS = ("z1", "ur10", "so101", "baxter_left", "pr2_right", "tiago", "g1_left")


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="N=10 (development)")
    p.add_argument("-n", type=int, default=None, help="problems per family and arm (500)")
    p.add_argument("--arms", default=",".join(fam.ARMS), help="comma list")
    p.add_argument("--families", default="".join(fam.FAMILIES), help="letters, e.g. abc")
    p.add_argument("--solvers", default=",".join(OURS + DRAKE), help="comma list")
    p.add_argument("--budget-ms", type=float, default=20.0, help="budget per problem [ms]")
    p.add_argument("--seed", type=int, default=0, help="numpy seed of the problems")
    p.add_argument("--out", default=None, help="results folder (bench/results)")
    p.add_argument("--other-arms", action="store_true",
                   help="families a-g on OTHER_ARMS, lm and Drake SNOPT, N=300, into "
                   "bench/results/constrained_other_arms")
    args = p.parse_args(argv)
    if args.other_arms:
        args.arms, args.families = ",".join(OTHER_ARMS), "abcdefg"
        args.solvers = "lm,drake_snopt,drake_snopt_nominal"
        args.n = args.n or (None if args.quick else 300)
        args.out = args.out or str(RESULTS / "constrained_other_arms")
    args.out = args.out or str(RESULTS)
    return args


class Arm:
    """An arm's group, its independent checker, its Drake plant(s), its scene checker."""

    def __init__(self, name: str, need_drake: bool, need_scene: bool):
        self.name = name
        self.robot, self.group = robots.load_group(name)
        urdf = robots.urdf_text(name)
        self.collision = scene_checker(name, self.robot, self.group, str(SCENE), str(HERE)) \
            if need_scene else None
        self.checker = checker_for(self.group, urdf, self.collision)
        self.drake = self.drake_scene = None
        if need_drake:
            from constrained_drake import DrakeArm
            self.drake = DrakeArm(urdf, self.group)
            if need_scene:
                self.drake_scene = DrakeArm(urdf, self.group, _drake_min_distance(self))

    def clearance(self, q: np.ndarray) -> float:
        """Signed distance [m] of group vector ``q`` to the scene and itself."""
        return self.collision[0].min_distance(self.group.to_full_q(q)).distance_m


def _drake_min_distance(arm: Arm):
    """drake_ik.DrakeMinDistanceIK's Panda + scene plant (its geometry, its filtered pairs)."""
    from drake_ik import DrakeMinDistanceIK
    from ros2_ik.core.collision import MeshResolver, load_scene_yaml
    from ros2_ik.core.collision.pairs import geometry_link_name
    checker = arm.collision[0]
    g = checker.robot_geom.geometryObjects
    allowed = {frozenset((geometry_link_name(arm.robot.model, g[i]),
                          geometry_link_name(arm.robot.model, g[j])))
               for i, j in checker.self_pairs}
    objects = load_scene_yaml(str(SCENE), allowed_dirs=[str(HERE)])
    return DrakeMinDistanceIK(
        robots.urdf_text(arm.name), {"example-robot-data": str(robots.data_dir().parent)},
        MeshResolver().resolve, arm.group.base, arm.group.tip, arm.group.joint_names,
        arm.group.locked, objects, allowed, fam.MIN_DISTANCE_M, fam.INFLUENCE_M, 1e-4, 1e-4)


def run_one(arm: Arm, spec, solver: str, budget_s: float) -> dict:
    """Solve ``spec`` with ``solver``; the independent verdict, time and claims."""
    start = time.perf_counter()
    claimed, q, note = False, None, ""
    if solver in DRAKE:
        drake = arm.drake_scene if spec.family == "h" else arm.drake
        attempt = drake.solve(spec, solver, budget_s, np.random.default_rng(spec.index))
        q, claimed = attempt.q, attempt.claimed_success
    else:
        try:
            problem = build(spec, arm.group, arm.collision and arm.collision[0])
            left = budget_s - (time.perf_counter() - start)  # as Drake: building counts
            result = solve_spec(arm.group, problem, spec.seed, solver, max(left, 1e-4),
                                spec.index)
            q, claimed = result.q, result.status.name == "SUCCESS"
        except errors.InvalidArgument as exc:
            if not spec.costs:
                raise
            return {"unsupported": str(exc)}
        except Exception as exc:  # a crash of our solver: a failure, recorded
            note = f"{type(exc).__name__}: {exc}"
    dt = time.perf_counter() - start
    verdict = arm.checker.check(q if claimed or solver in DRAKE else None, spec)
    why = verdict.reason.split(" by ")[0].split(";")[0] if not note else "exception"
    if verdict.ok and dt > budget_s:
        why = "late"
    return {"ok": why == "ok", "t": dt, "claimed": claimed, "why": why,
            "objective": verdict.objective if verdict.ok else None, "note": note}


def run_cell(arm: Arm, family: str, solvers, n: int, seed: int, budget_s: float) -> list:
    """Every problem of one (family, arm) through every solver, interleaved; the rows."""
    specs = fam.generate(family, arm.name, arm.group, n + 1, seed,
                         clearance=arm.clearance if family == "h" else None)
    if not specs[0].costs:
        solvers = [s for s in solvers if s not in COSTS_ONLY]
    for solver in solvers:  # warm-up on an extra problem (imports, caches): not counted
        run_one(arm, specs[-1], solver, budget_s)
    settle_memory()
    records = {s: [] for s in solvers}
    order = np.random.default_rng(seed)  # the solvers' order per problem (module doc)
    started = time.perf_counter()
    for spec in specs[:-1]:
        for k in order.permutation(len(solvers)):
            records[solvers[k]].append(run_one(arm, spec, solvers[k], budget_s))
    rows = summarise_rows(arm.name, family, records, budget_s, _warm_pass(arm, specs[:-1],
                                                                          solvers, budget_s))
    line = "  ".join(f"{r['solver']} {_pct(r)}" for r in rows)
    print(f"  {family} {arm.name:7s} {time.perf_counter() - started:6.1f} s  {line}", flush=True)
    return rows


def _warm_pass(arm: Arm, specs, solvers, budget_s: float) -> dict:
    """Time lm and Drake SNOPT solving each problem a second time at once (warm caches).

    Not the targets' figure (the interleaved pass above is: each solver starts with
    caches the others have filled, as a request to an idle node does); it tells how
    much of a median is the cost of a cold start.  Same seeds: the same work again.
    """
    pair = [s for s in WARM_PASS if s in solvers]
    if len(pair) < len(WARM_PASS):
        return {}
    times: dict = {s: [] for s in pair}
    for spec in specs:
        for solver in pair:
            run_one(arm, spec, solver, budget_s)
            times[solver].append(run_one(arm, spec, solver, budget_s)["t"])
    return times


def _pct(row: dict) -> str:
    if row.get("skipped"):
        return "n/a"
    return f"{100 * row['success_rate']:.0f}%/{row['median_ms']:.1f}ms"


def main(argv=None) -> int:
    args = parse_args(argv)
    logging.getLogger("drake").setLevel(logging.ERROR)  # URDF tags Drake ignores
    n = args.n or (10 if args.quick else 500)
    budget_s = args.budget_ms * 1e-3
    solvers = [s for s in args.solvers.split(",") if s]
    skipped = []
    if importlib.util.find_spec("pydrake") is None and any(s in DRAKE for s in solvers):
        skipped = [s for s in solvers if s in DRAKE]
        solvers = [s for s in solvers if s not in DRAKE]
        print(f"  {skipped} skipped: pydrake not installed "
              "(pip install -r bench/requirements-collision.txt)")
    meta = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "n": n, "budget_s": budget_s, "seed": args.seed, "machine": machine(),
            "seed_configuration": "mid-limits", "tolerances": {"m": 1e-4, "rad": 1e-4},
            "families": {f: fam.FAMILY_TITLES[f] for f in args.families}}
    if not skipped and any(s in DRAKE for s in solvers):
        from drake_ik import FEASIBILITY_TOLERANCE
        from importlib import metadata
        meta["drake"] = {"version": metadata.version("drake"),
                         "snopt_major_feasibility_tolerance": FEASIBILITY_TOLERANCE}
    print(f"constrained benchmark: N={n} per family and arm, budget {args.budget_ms:g} ms, "
          f"solvers {solvers}")
    t0, rows = time.perf_counter(), []
    for arm_name in args.arms.split(","):
        families = [f for f in args.families if f != "h" or arm_name == "panda"]
        arm = Arm(arm_name, any(s in DRAKE for s in solvers), "h" in families)
        for family in families:
            rows += run_cell(arm, family, solvers, n, args.seed, budget_s)
    meta["seconds"] = round(time.perf_counter() - t0, 1)
    meta["machine"]["load_average_end"] = list(os.getloadavg())
    for row in rows:
        row.update({"date": meta["date"], "machine": meta["machine"]["cpu"]})
    out = Path(args.out)
    results_files.write_json(out, "constrained", {"meta": meta, "rows": rows})
    write_markdown(out / "constrained.md", rows, meta, skipped)
    write_plot(out / "constrained.png", rows)
    print(f"{meta['seconds']} s; wrote {out / 'constrained.json'}, constrained.md, "
          "constrained.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
