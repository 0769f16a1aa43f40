#!/usr/bin/env python3
"""How much a solve's time depends on the solver that ran just before it (cache state).

Why ``constrained_bench.py`` draws the solvers' order at random per problem: for each
problem, each predecessor P and each measured solver S, P runs on the problem, then S,
and S's wall-clock time is kept (``constrained_bench.run_one``: building included).
Medians per (S, P), in ms.  A diagnostic, not a benchmark with targets: nothing is written.

    python bench/constrained_order.py                      # panda, family a, 150 problems
    python bench/constrained_order.py --arm ur5 --family d -n 300
"""
from __future__ import annotations

import argparse
import logging
from collections import defaultdict

import numpy as np

import constrained_bench as cb
import constrained_problems as fam

PREDECESSORS = ("drake_ipopt", "dls", "sqp", "drake_snopt", "lm")
MEASURED = ("lm", "drake_snopt")


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--arm", default="panda")
    p.add_argument("--family", default="a", help="a letter of constrained_problems")
    p.add_argument("-n", type=int, default=150, help="problems")
    p.add_argument("--budget-ms", type=float, default=20.0)
    return p.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    logging.getLogger("drake").setLevel(logging.ERROR)
    arm = cb.Arm(args.arm, need_drake=True, need_scene=False)
    budget_s = args.budget_ms * 1e-3
    specs = fam.generate(args.family, args.arm, arm.group, args.n + 1, 0)
    times = defaultdict(list)
    for k, spec in enumerate(specs):
        for before in PREDECESSORS:
            for solver in MEASURED:
                cb.run_one(arm, spec, before, budget_s)
                t = cb.run_one(arm, spec, solver, budget_s)["t"]
                if k:  # the first problem warms imports and caches up
                    times[(solver, before)].append(t)
    print(f"{args.arm} family {args.family}, {args.n} problems: median ms of each solver "
          "by the solver run just before it")
    print("| solver | " + " | ".join(f"after {p}" for p in PREDECESSORS) + " |")
    print("|---|" + "---|" * len(PREDECESSORS))
    for solver in MEASURED:
        cells = [f"{1e3 * np.median(times[(solver, p)]):.3f}" for p in PREDECESSORS]
        print(f"| {solver} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
