#!/usr/bin/env python3
"""One revision's pose solves on 7-joint arms, for ``seven_r_ab.py`` (run in its environment).

Written against the API both revisions share (``solve``, ``prepare``, ``PoseTarget``,
``Robot.from_urdf``, ``Group.fk``; the arms and the judge of :mod:`dof_arms`), so that the
same file times the code of issue 48's start commit and of today.  Per arm: ``poses``
uniform configurations inside the limits (numpy seed ``seed``; the same targets in every
revision), target = FK of the tip, seed at mid-limits, ``timeout_s`` 5 ms,
``solver="lm"`` as a user calls it.  Each solve follows a TRAC-IK call on the same target
(when pytracik is installed), as in ``sweep_bench.py``: the solve runs with the caches
another solver left, as between a node's requests.  Success is judged here, after each
solve (:func:`dof_arms.verified`): pinocchio FK on the full model within 1e-4 m and
1e-3 rad, inside the limits.  The two together leave the next solve's caches cold
(either alone leaves them nearly warm).  ``--warm``: no TRAC-IK call between solves (the
judge still runs).

``--floor`` (today's revision only) then times, per target, in a pass of its own after the
solves (they run exactly as on the old revision) and between the same calls (the judge,
TRAC-IK), the parts no plain pose request
can skip: the PoseTarget, its resolution for the group, ONE compiled attempt from the seed
and the full model's check (:func:`verify.check`), and the IKResult, with no validation,
unwrap, options or driver between them (None where that attempt is not verified: those
targets need more than the floor).  Its median bounds what any request path built on one
compiled attempt and one pinocchio check can reach.

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


def run_arm(arm: Arm, poses: int, seed: int, warm: bool = False, floor: bool = False
            ) -> dict:
    """Wall times [s] and verified flags of ``solve()`` on the arm's targets.

    With ``floor``: also ``floor_s``, the floor's time per target (module docstring).
    """
    group = arm.group()[1]
    Ts = targets(group, poses, seed)
    start = group.mid_configuration()
    prepare(group, group.tip)
    trac = None if warm else trac_ik_adapter(arm, group)
    floor_of = _floor(group) if floor else None
    times, ok, floors = [], [], []
    for k, T in enumerate(Ts):
        if trac is not None:
            trac(T, start)
        t0 = time.perf_counter()
        r = solve(group, PoseTarget(group.tip, T), start, "lm", TIMEOUT_S, 0, k)
        times.append(time.perf_counter() - t0)
        ok.append(verified(group, r.q if r.success else None, T))
    for k, T in enumerate(Ts if floor_of is not None else ()):  # after: solve() runs as old
        if trac is not None:
            trac(T, start)
        elapsed, q = floor_of(T, start, k)
        floors.append(elapsed)
        verified(group, q, T)  # as after each solve: the next request's caches alike
    row = {"arm": arm.name, "source": arm.source, "times_s": times, "verified": ok,
           "trac_ik_between": trac is not None}
    if floor_of is not None:
        row["floor_s"] = floors
    return row


def _floor(group):
    """Return the floor's request (module docstring) on ``group``'s tip, or None (no attempt).

    The request returns ``(its time [s] or None when not verified, q)``.  Today's API
    only: the lean path's plan gives the compiled chain.
    """
    from ros2_ik.core.result import IKResult, IKStatus
    from ros2_ik.core.solvers import chain_kernel, pose_request
    from ros2_ik.core.solvers.attempts import chain_settings
    from ros2_ik.core.solvers.lm import LevenbergMarquardt
    from ros2_ik.core.solvers.pose_state import squared_tolerances
    from ros2_ik.core.verify import DEFAULT_TOLERANCE, check
    plan = pose_request.plan(group, group.tip, LevenbergMarquardt)
    if plan is None or plan.chain is None:
        return None
    settings, data = chain_settings(LevenbergMarquardt), group.full_data()

    def request(T, seed, k):
        t0 = time.perf_counter()
        pose = PoseTarget(group.tip, T).compile(group)
        q, it, done, _ = chain_kernel.attempt(
            plan.chain, seed, pose.H_target_world,
            plan.lower, plan.upper, plan.bounded, 1.0, *squared_tolerances(pose.target), settings)
        good, pos, ori, _, _ = check(group, pose, q, (), data, DEFAULT_TOLERANCE)
        IKResult(q, group.joint_names, IKStatus.SUCCESS, it, 0, pos, ori,
                 time.perf_counter() - t0, k, (), (), "", "lm")
        elapsed = time.perf_counter() - t0
        return (elapsed if done and good else None), q
    return request


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--arms", default="", help="comma list (default: every 7-joint arm)")
    p.add_argument("--poses", type=int, default=200)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--warm", action="store_true", help="no TRAC-IK call between solves")
    p.add_argument("--floor", action="store_true", help="time the floor too (today only)")
    p.add_argument("--list", action="store_true", help="print the arms' names and stop")
    p.add_argument("--out", required=False)
    args = p.parse_args(argv)
    arms = dof_arms.arms(JOINTS)
    if args.list:
        print(",".join(a.name for a in arms))
        return 0
    wanted = [a for a in args.arms.split(",") if a]
    rows = [run_arm(a, args.poses, args.seed, args.warm, args.floor) for a in arms
            if not wanted or a.name in wanted]
    Path(args.out).write_text(json.dumps(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
