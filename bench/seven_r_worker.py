#!/usr/bin/env python3
"""One revision's pose solves on 7-joint arms, for ``seven_r_ab.py`` (run in its environment).

Written against the API both revisions share (``solve``, ``prepare``, ``PoseTarget``,
``Robot.from_urdf``, ``Group.fk``; the arms and the judge of :mod:`dof_arms`), so that the
same file times the code of issue 48's start commit and of today.  Per arm: ``poses``
uniform configurations inside the limits (numpy seed ``seed``; the same targets in every
revision), target = FK of the tip, seed at mid-limits, ``timeout_s`` 5 ms,
``solver="lm"`` as a user calls it.  Each solve follows a TRAC-IK call on the same target
(when pytracik is installed), as in ``sweep_bench.py``: the solve runs with the caches
another solver left, as between a node's requests.  Success is judged here
(:func:`dof_arms.verified`): pinocchio FK on the full model within 1e-4 m and 1e-3 rad,
inside the limits.

    python bench/seven_r_worker.py --arms panda,franka_fr3 --poses 200 --out times.json
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

import dof_arms
from dof_arms import Arm, trac_ik_adapter, verified
from ros2_ik.core.pose import PoseTarget
from ros2_ik.core.solve import prepare, solve

TIMEOUT_S = 0.005
JOINTS = 7


def targets(group, poses: int, seed: int):
    """FK of ``poses`` uniform configurations inside the limits (infinite ones: [-pi, pi])."""
    rng = np.random.default_rng(seed)
    lo = np.where(np.isfinite(group.lower), group.lower, -np.pi)
    hi = np.where(np.isfinite(group.upper), group.upper, np.pi)
    return [group.fk(rng.uniform(lo, hi), group.tip) for _ in range(poses)]


def run_arm(arm: Arm, poses: int, seed: int) -> dict:
    """Wall times [s] and verified flags of ``solve()`` on the arm's targets."""
    group = arm.group()[1]
    Ts = targets(group, poses, seed)
    start = group.mid_configuration()
    prepare(group, group.tip)
    trac = trac_ik_adapter(arm, group)
    times, ok = [], []
    for k, T in enumerate(Ts):
        if trac is not None:
            trac(T, start)
        t0 = time.perf_counter()
        r = solve(group, PoseTarget(group.tip, T), start, "lm", TIMEOUT_S, 0, k)
        times.append(time.perf_counter() - t0)
        ok.append(verified(group, r.q if r.success else None, T))
    return {"arm": arm.name, "source": arm.source, "times_s": times, "verified": ok,
            "trac_ik_between": trac is not None}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--arms", default="", help="comma list (default: every 7-joint arm)")
    p.add_argument("--poses", type=int, default=200)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--list", action="store_true", help="print the arms' names and stop")
    p.add_argument("--out", required=False)
    args = p.parse_args(argv)
    arms = dof_arms.arms(JOINTS)
    if args.list:
        print(",".join(a.name for a in arms))
        return 0
    wanted = [a for a in args.arms.split(",") if a]
    rows = [run_arm(a, args.poses, args.seed) for a in arms if not wanted or a.name in wanted]
    Path(args.out).write_text(json.dumps(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
