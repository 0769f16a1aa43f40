#!/usr/bin/env python3
"""One revision's pose solves on 7-joint arms, for ``seven_r_ab.py`` (run in its environment).

Written against the API both revisions share (``solve``, ``prepare``, ``PoseTarget``,
``Robot.from_urdf``, ``Group.fk``), so that the same file times the code of issue 48's start
commit and of today.  Per arm: ``poses`` uniform configurations inside the limits (numpy
seed ``seed``; the same targets in every revision), target = FK of the tip, seed at
mid-limits, ``timeout_s`` 5 ms, ``solver="lm"`` as a user calls it.  Each solve follows a
TRAC-IK call on the same target (when pytracik is installed), as in ``sweep_bench.py``: the
solve runs with the caches another solver left, as between a node's requests.  Success is
judged here: pinocchio FK on the full model within 1e-4 m and 1e-3 rad, inside the limits.

    python bench/seven_r_worker.py --arms panda,franka_fr3 --poses 200 --out times.json
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import pinocchio as pin

from ros2_ik.core.pose import PoseTarget
from ros2_ik.core.solve import prepare, solve

try:  # the layout of issue 46
    from ros2_ik.core.model import robots
    from ros2_ik.core.model.robot import Robot
except ImportError:  # the root modules before it
    from ros2_ik.core import robots
    from ros2_ik.core.robot import Robot

REAL_URDFS = Path(os.environ.get("ROS2_IK_REAL_URDFS", "/work/shared/real_urdfs"))
POS_TOL, ORI_TOL = 1e-4, 1e-3
TIMEOUT_S = 0.005
JOINTS = 7


class Arm:
    """A 7-joint arm: name, source, URDF and SRDF text, base and tip."""

    def __init__(self, name, source, urdf, base, tip, srdf=""):
        """Keep the record (the robot is built by :meth:`group`)."""
        self.name, self.source, self.urdf, self.base, self.tip = name, source, urdf, base, tip
        self.srdf = srdf

    def group(self):
        """Build the group from the whole URDF, base -> tip."""
        robot = Robot.from_urdf(self.urdf, self.srdf or None)
        return robot.group(base=self.base, tip=self.tip)


def seven_joint_arms():
    """Every 7-joint arm of example-robot-data's catalogue and of the vendor folder."""
    out = []
    for name, spec in robots.ARMS.items():
        arm = Arm(name, "example-robot-data", robots.urdf_text(name), spec.base, spec.tip,
                  robots.srdf_text(name))
        if arm.group().n == JOINTS:
            out.append(arm)
    manifest = REAL_URDFS / "manifest.json"
    if manifest.is_file():
        for entry in json.loads(manifest.read_text()):
            if entry.get("dof") == JOINTS:
                srdf = REAL_URDFS / entry["srdf"] if entry.get("srdf") else None
                out.append(Arm(entry["name"], "real_urdfs",
                               (REAL_URDFS / entry["file"]).read_text(), entry["base"],
                               entry["tip"], srdf.read_text() if srdf and srdf.is_file() else ""))
    return out


def verified(group, q, T: pin.SE3) -> bool:
    """Pinocchio FK of ``q`` within 1e-4 m / 1e-3 rad of ``T`` and inside the limits."""
    if q is None:
        return False
    q = np.asarray(q, dtype=float)
    M = group.fk(q, group.tip)
    return bool(np.linalg.norm(M.translation - T.translation) <= POS_TOL
                and np.linalg.norm(pin.log3(T.rotation.T @ M.rotation)) <= ORI_TOL
                and np.all(q >= group.lower - 1e-9) and np.all(q <= group.upper + 1e-9))


def targets(group, poses: int, seed: int):
    """FK of ``poses`` uniform configurations inside the limits (infinite ones: [-pi, pi])."""
    rng = np.random.default_rng(seed)
    lo = np.where(np.isfinite(group.lower), group.lower, -np.pi)
    hi = np.where(np.isfinite(group.upper), group.upper, np.pi)
    return [group.fk(rng.uniform(lo, hi), group.tip) for _ in range(poses)]


def trac_ik(arm, group):
    """TRAC-IK on the arm (bench/adapters.py), or None without pytracik."""
    try:
        import adapters
        return adapters.trac_ik(arm, group, 0)
    except Exception as exc:  # missing wheel, or a chain KDL does not parse
        print(f"  TRAC-IK unavailable on {arm.name}: {exc}", file=sys.stderr)
        return None


def run_arm(arm: Arm, poses: int, seed: int) -> dict:
    """Wall times [s] and verified flags of ``solve()`` on the arm's targets."""
    group = arm.group()
    Ts = targets(group, poses, seed)
    start = group.mid_configuration()
    prepare(group, group.tip)
    trac = trac_ik(arm, group)
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
    arms = seven_joint_arms()
    if args.list:
        print(",".join(a.name for a in arms))
        return 0
    wanted = [a for a in args.arms.split(",") if a]
    rows = [run_arm(a, args.poses, args.seed) for a in arms if not wanted or a.name in wanted]
    Path(args.out).write_text(json.dumps(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
