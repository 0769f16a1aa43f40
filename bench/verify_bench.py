"""Cost of the independent check (``verify.check``) per solve, in-process (issue 46).

The check every SUCCESS goes through: forward kinematics on the full model, the joint
limits, every constraint's physical measure [m] / [rad].  Timed on the panda's
constrained families a-g (``constrained_problems``), at ``q_star`` (every constraint
holds: a SUCCESS's usual case) and at ``q_star`` with one joint moved by 0.05 rad (most
problems then violate a constraint: the rejection path).  Two figures per problem:

reused  the same problem checked again (caches per problem warm: a solve's second check)
new     a freshly built problem's first check (what a one-solve request pays)

Prints medians [us] per family and overall, with the load; ``--json`` writes them.
``--against DIR`` compares with another tree (a checkout whose ``ros2_ik`` package is
``DIR/ros2_ik``): each round runs that tree then this one, in fresh processes, and the
ratios this / that of the overall medians are printed per round (the machine is shared:
interleaving keeps the load alike).

    python bench/verify_bench.py            # 30 problems per family
    python bench/verify_bench.py --quick    # 10
    python bench/verify_bench.py --quick --against /tmp/base --rounds 3
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import constrained_problems as fam  # noqa: E402
from constrained_ours import TOL_M, TOL_RAD, build  # noqa: E402
from ros2_ik.core import robots  # noqa: E402
from ros2_ik.core.verify import ConstraintTolerance, check  # noqa: E402

FAMILIES = "abcdefg"


def _time(fn, repeat: int) -> float:
    """Median [us] of ``repeat`` calls of ``fn``."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return 1e6 * statistics.median(times)


def measure(n: int, repeat: int) -> dict:
    """Medians [us] per family of the reused and new checks, at q_star and moved."""
    _, group = robots.load_group("panda")
    data = group.full_data()
    tol = ConstraintTolerance(TOL_M, TOL_RAD)
    out = {}
    for family in FAMILIES:
        specs = fam.generate(family, "panda", group, n, seed=0)
        cells = {"reused": [], "new": [], "reused_moved": [], "rejected": 0}
        for spec in specs:
            q = np.asarray(spec.q_star, dtype=float)
            moved = q.copy()
            moved[spec.index % group.n] += 0.05
            problem = build(spec, group)
            cons = problem.constraints
            ok = check(group, None, q, cons, data, tol)[0]
            assert ok, f"{family}{spec.index}: q_star rejected"
            cells["rejected"] += not check(group, None, moved, cons, data, tol)[0]
            cells["reused"].append(_time(lambda: check(group, None, q, cons, data, tol),
                                         repeat))
            cells["reused_moved"].append(_time(
                lambda: check(group, None, moved, cons, data, tol), repeat))
            fresh = [build(spec, group).constraints for _ in range(repeat)]
            it = iter(fresh)
            cells["new"].append(_time(lambda: check(group, None, q, next(it), data, tol),
                                      repeat))
        out[family] = {k: statistics.median(v) if isinstance(v, list) else v
                       for k, v in cells.items()}
        out[family]["all_reused"] = cells["reused"]
        out[family]["all_new"] = cells["new"]
    return out


def against(other: str, rounds: int, n: int, repeat: int) -> None:
    """Alternate runs of tree ``other`` and of this one; print each round's ratios."""
    here = str(HERE.parent / "ros2_ik")
    path = os.environ.get("PYTHONPATH", "")
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(rounds):
            medians = {}
            for side, tree in (("other", os.path.join(other, "ros2_ik")), ("this", here)):
                out = os.path.join(tmp, f"{side}.json")
                env = dict(os.environ, PYTHONPATH=f"{tree}:{path}" if path else tree)
                subprocess.run([sys.executable, __file__, "-n", str(n), "--repeat",
                                str(repeat), "--json", out], env=env, check=True,
                               stdout=subprocess.DEVNULL)
                medians[side] = json.loads(Path(out).read_text())
            this, that = medians["this"], medians["other"]
            print(f"round {r + 1}: reused {this['median_reused_us']:.2f} / "
                  f"{that['median_reused_us']:.2f} us = "
                  f"{this['median_reused_us'] / that['median_reused_us']:.3f}, new "
                  f"{this['median_new_us']:.2f} / {that['median_new_us']:.2f} us = "
                  f"{this['median_new_us'] / that['median_new_us']:.3f}, load "
                  f"{this['load_1min']:.2f}", flush=True)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="10 problems per family")
    p.add_argument("-n", type=int, default=None, help="problems per family (30)")
    p.add_argument("--repeat", type=int, default=200, help="timed calls per problem")
    p.add_argument("--json", default=None, help="write the medians here")
    p.add_argument("--against", default=None, help="another tree to compare with")
    p.add_argument("--rounds", type=int, default=3, help="rounds of --against")
    args = p.parse_args(argv)
    n = args.n or (10 if args.quick else 30)
    if args.against:
        against(args.against, args.rounds, n, args.repeat)
        return
    res = measure(n, args.repeat)
    reused = statistics.median(x for f in res.values() for x in f["all_reused"])
    new = statistics.median(x for f in res.values() for x in f["all_new"])
    load = os.getloadavg()[0]
    print(f"verify.check on panda a-g, N={n}/family, load {load:.2f}")
    print("family  reused_us  new_us  moved_us  moved_rejected")
    for family, r in res.items():
        print(f"{family:6s}  {r['reused']:9.2f}  {r['new']:6.2f}  {r['reused_moved']:8.2f}"
              f"  {r['rejected']}/{n}")
    print(f"all     {reused:9.2f}  {new:6.2f}")
    if args.json:
        summary = {"load_1min": load, "n_per_family": n, "median_reused_us": reused,
                   "median_new_us": new,
                   "families": {f: {k: v for k, v in r.items() if not k.startswith("all_")}
                                for f, r in res.items()}}
        Path(args.json).write_text(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
