#!/usr/bin/env python3
"""Hand targets inside an obstacle: how long a collision-checked pose request answers.

A grasp or placement sampler sends poses whose hand, at the target, lies in the table, or
in the robot's own body.  No configuration reaching such a pose keeps its clearance, and
before ``apart_at_target`` each one searched its whole budget.

Per arm of the catalogue (example-robot-data, with its SRDF), one scene: a 0.25 m cube
centred where the tip is at mid-limits.  Targets are FK of configurations uniform in the
limits, sorted here, independently of the solver:

* **blocked**: at that configuration, a link carried with the tip (its placement relative
  to the tip the same at two other random configurations, by pinocchio FK) is closer than
  -5 mm to the cube or to a link no group joint moves (the same test against the world).
  Every configuration reaching the target places that link there within the pose
  tolerances (1e-4 m, 1e-3 rad, far below 5 mm), so no solution keeps the clearance;
* **feasible**: the configuration keeps 1 mm of clearance (so a solution exists).

Per target, interleaved, budget 50 ms (the node's default ``timeout``), the seed at
mid-limits, ``MinimumDistanceConstraint(checker, 1e-4, 0.05)`` as ik_node builds it:

  ours     ``solve()`` as a user calls it (the proof after the first attempt)
  search   the same solve with ``apart_at_target`` answering None (as before it)
  drake    Drake's InverseKinematics with AddMinimumDistanceLowerBoundConstraint, SNOPT,
           restarts within the budget (Panda only: ``drake_ik.DrakeMinDistanceIK``), the
           oracle for "has a solution": it must find none on a blocked target.

Every SUCCESS is checked here (pinocchio FK on the arm's full model, limits, the checker's
distances >= 0).  Reported per arm: medians [ms] on blocked targets and the share the
proof answered; on feasible targets ours' success and any proof that fired (must be 0).

    python bench/blocked_bench.py            # 20 blocked + 20 feasible targets per arm
    python bench/blocked_bench.py --quick    # 5 + 5, four arms
Writes bench/results/blocked.{json,md,png}; exits 1 on a false proof, a SUCCESS on a
blocked target (ours or Drake's) or a false SUCCESS.
"""
from __future__ import annotations

import argparse
import datetime
import importlib.util
import logging
import statistics
import sys
import time
from pathlib import Path
from typing import Dict, List

import numpy as np
import pinocchio as pin

from machine import machine, pyplot
import results_files
from ros2_ik.core import robots
from ros2_ik.core.collision import Box, CollisionChecker, PlanningScene, \
    SceneObject, pose_from_xyz_quat
from ros2_ik.core.constraints import MinimumDistanceConstraint
from ros2_ik.core.model.robot import Robot
from ros2_ik.core.pose import PoseTarget
from ros2_ik.core.solve import prepare, solve

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
from doc_sections import write as write_section  # noqa: E402

BUDGET_S = 0.05
MIN_DISTANCE_M, INFLUENCE_M = 1e-4, 0.05
POS_TOL_M, ORI_TOL_RAD = 1e-4, 1e-3
#: How deep a carried link must lie in what does not move for a target to count as blocked.
BLOCKED_DEPTH_M = 5e-3
#: The clearance a feasible target's configuration keeps [m].
FEASIBLE_CLEARANCE_M = 1e-3
CUBE_M = 0.25
#: Configurations sampled per arm at most (an arm with no collision-free one is skipped).
MAX_SAMPLES = 4000
QUICK_ARMS = ("panda", "ur5", "g1_left", "pr2_right")


class Arm:
    """One catalogue arm, its cube scene, checker, an independent FK model, its targets."""

    def __init__(self, name: str, blocked: int, feasible: int, seed: int):
        spec = robots.ARMS[name]
        self.name = name
        self.urdf, self.srdf = robots.urdf_text(name), robots.srdf_text(name)
        self.robot = Robot.from_urdf(self.urdf, self.srdf or None)
        self.group = self.robot.group(base=spec.base, tip=spec.tip)
        self.seed_q = self.group.mid_configuration()
        centre = self.group.fk(self.seed_q, self.group.tip).translation
        self.objects = [SceneObject("cube", [Box((CUBE_M,) * 3)],
                                    T_frame_object=pose_from_xyz_quat(centre))]
        scene = PlanningScene.for_model(self.robot.model)
        scene.add_all(self.objects)
        self.checker = CollisionChecker.from_urdf(self.robot.model, self.urdf,
                                                  self.srdf or None, scene)
        self.fk_model = pin.buildModelFromXML(self.urdf)  # not the solver's
        self.fk_data = self.fk_model.createData()
        self.rng = np.random.default_rng(seed)
        self.carried, self.still = self._sides()
        self.blocked, self.feasible, self.sampled = self._targets(blocked, feasible)
        prepare(self.group, self.group.tip, constrained=True)  # as the node at start-up

    def fk_all(self, q: np.ndarray) -> pin.Data:
        """Every frame's placement at group vector ``q`` (others locked), independent FK."""
        q_full = pin.neutral(self.fk_model)
        locked = dict(self.group.locked)
        for name in list(locked) + list(self.group.joint_names):
            j = self.fk_model.getJointId(name)
            if j >= self.fk_model.njoints:
                continue
            value = locked[name] if name in locked else q[self.group.joint_names.index(name)]
            i = self.fk_model.idx_qs[j]
            if self.fk_model.nqs[j] == 1:
                q_full[i] = value
            elif self.fk_model.nqs[j] == 2:  # a continuous joint: (cos, sin)
                q_full[i:i + 2] = np.cos(value), np.sin(value)
        pin.framesForwardKinematics(self.fk_model, self.fk_data, q_full)
        return self.fk_data

    def _links_at(self, q: np.ndarray) -> Dict[str, pin.SE3]:
        data = self.fk_all(q)
        return {f.name: pin.SE3(data.oMf[k]) for k, f in enumerate(self.fk_model.frames)
                if f.type == pin.FrameType.BODY}

    def _sides(self):
        """Return the links carried with the tip and those no group joint moves (FK, 3 samples)."""
        qs = [self.group.random_configuration(self.rng) for _ in range(3)]
        placed = [self._links_at(q) for q in qs]
        tip = self.group.tip
        carried, still = set(), set()
        for name in placed[0]:
            rel = [p[tip].actInv(p[name]) for p in placed]
            if all(np.allclose(rel[0].homogeneous, r.homogeneous, atol=1e-9) for r in rel[1:]):
                carried.add(name)
            if all(np.allclose(placed[0][name].homogeneous, p[name].homogeneous, atol=1e-9)
                   for p in placed[1:]):
                still.add(name)
        return carried, still | {"cube"}

    def _targets(self, blocked: int, feasible: int):
        b, f, sampled = [], [], 0
        while (len(b) < blocked or len(f) < feasible) and sampled < MAX_SAMPLES:
            q = self.group.random_configuration(self.rng)
            sampled += 1
            pairs = self.checker.distances(self.group.to_full_q(q))
            d = pairs.distances_m
            if len(f) < feasible and (d.size == 0 or d.min() >= FEASIBLE_CLEARANCE_M):
                f.append(self.tip_pose(q))
                continue
            if len(b) < blocked and d.size:
                names = pairs.compiled.pair_names
                deep = [k for k in np.flatnonzero(d < -BLOCKED_DEPTH_M).tolist()
                        if self._one_each(names[k])]
                if deep:
                    b.append(self.tip_pose(q))
        return b, f, sampled

    def _one_each(self, pair) -> bool:
        a, c = pair
        return (a in self.carried and c in self.still) or (c in self.carried and a in self.still)

    def tip_pose(self, q: np.ndarray) -> pin.SE3:
        return pin.SE3(self.fk_all(q).oMf[self.fk_model.getFrameId(self.group.tip)])

    def verified(self, q, T: pin.SE3) -> bool:
        """Independent check of a SUCCESS: FK, limits, clearance."""
        if q is None:
            return False
        q = np.asarray(q, dtype=float)
        if np.any(q < self.group.lower - 1e-12) or np.any(q > self.group.upper + 1e-12):
            return False
        got = self.tip_pose(q)
        if np.linalg.norm(got.translation - T.translation) > POS_TOL_M + 1e-9:
            return False
        if np.linalg.norm(pin.log3(T.rotation.T @ got.rotation)) > ORI_TOL_RAD + 1e-9:
            return False
        return self.checker.min_distance(self.group.to_full_q(q)).distance_m >= 0.0


def ours(arm: Arm):
    def run(T: pin.SE3, i: int):
        c = MinimumDistanceConstraint(arm.checker, MIN_DISTANCE_M, INFLUENCE_M)
        r = solve(arm.group, PoseTarget(arm.group.tip, T), arm.seed_q, "lm", BUDGET_S, 0, i,
                  constraints=[c])
        return (r.q if r.success else None), "at the target" in r.message
    return run


def search(arm: Arm):
    solve_ours = ours(arm)

    def run(T: pin.SE3, i: int):
        saved = MinimumDistanceConstraint.apart_at_target
        MinimumDistanceConstraint.apart_at_target = lambda self, group, pose, tol: None
        try:
            return solve_ours(T, i)
        finally:
            MinimumDistanceConstraint.apart_at_target = saved
    return run


def drake(arm: Arm):
    logging.getLogger("drake").setLevel(logging.ERROR)
    from drake_ik import for_checker
    ik, _ = for_checker(arm.urdf, arm.robot.model, arm.checker, arm.group, arm.objects,
                        MIN_DISTANCE_M, INFLUENCE_M, POS_TOL_M, ORI_TOL_RAD)

    def run(T: pin.SE3, i: int):
        r = ik.solve(T.homogeneous, arm.seed_q, BUDGET_S, np.random.default_rng(i))
        return r.q, False
    return run


def run_arm(arm: Arm, with_drake: bool) -> dict:
    methods = {"ours": ours(arm), "search": search(arm)}
    if with_drake:
        methods["drake"] = drake(arm)
    for run in methods.values():  # warm-up (imports, caches), not counted
        run(arm.blocked[0] if arm.blocked else arm.feasible[0], 10**6)
    row = {"arm": arm.name, "sampled": arm.sampled, "carried_links": sorted(arm.carried),
           "blocked": len(arm.blocked), "feasible": len(arm.feasible)}
    for kind, targets in (("blocked", arm.blocked), ("feasible", arm.feasible)):
        for m, run in methods.items():
            row[f"{kind}_{m}"] = {"times_s": [], "verified": 0, "unverified_success": 0,
                                  "proved": 0}
        for i, T in enumerate(targets):
            for m, run in methods.items():
                t0 = time.perf_counter()
                q, proved = run(T, i)
                cell = row[f"{kind}_{m}"]
                cell["times_s"].append(time.perf_counter() - t0)
                ok = arm.verified(q, T)
                cell["verified"] += ok
                cell["unverified_success"] += q is not None and not ok
                cell["proved"] += proved
    return row


def _median_ms(cell) -> float:
    return 1e3 * statistics.median(cell["times_s"]) if cell["times_s"] else float("nan")


def markdown(rows: List[dict], meta: dict) -> str:
    m = meta["machine"]
    lines = [
        "# Hand targets inside an obstacle (bench/blocked_bench.py)", "",
        f"{meta['date']}; {m['cpu']}, {m['cores']} cores, load {m['load_average']} at "
        f"start, {m.get('load_average_end')} at the end.  Per arm a {CUBE_M} m cube where "
        f"the tip is at mid-limits; budget {BUDGET_S * 1e3:g} ms; blocked: a link carried "
        f"with the tip {BLOCKED_DEPTH_M * 1e3:g} mm deep in the cube or in what the group "
        "does not move; feasible: configurations keeping 1 mm.  ours: `solve()`; search: the "
        "same without `apart_at_target`; Drake: SNOPT with restarts (Panda).", "",
        "| arm | blocked | ours median [ms] | search [ms] | Drake [ms] | search / ours "
        "| answered by the proof | SUCCESS on blocked (ours / Drake) | feasible | ours "
        "success on feasible | proofs on feasible |",
        "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        b = r["blocked"]
        o, s = r["blocked_ours"], r["blocked_search"]
        d = r.get("blocked_drake")
        drake_ms = f"{_median_ms(d):.2f}" if d else "-"
        drake_ok = str(d["verified"]) if d else "-"
        ratio = _median_ms(s) / _median_ms(o) if b else float("nan")
        fo = r["feasible_ours"]
        lines.append(
            f"| {r['arm']} | {b} | {_median_ms(o):.2f} | {_median_ms(s):.2f} | {drake_ms} | "
            f"{ratio:.0f} | {o['proved']}/{b} | {o['verified']} / {drake_ok} | "
            f"{r['feasible']} | {fo['verified']}/{r['feasible']} | {fo['proved']} |")
    lines += ["", *(failures(rows) or [
        "Every blocked target answered NO_SOLUTION by ours and unsolved by Drake; no proof "
        "on a feasible target; no false SUCCESS."])]
    return "\n".join(lines) + "\n"


def doc_table(rows: List[dict]) -> str:
    """Return the table of docs/physical_arms.md's ``blocked`` section."""
    lines = ["| arm | blocked targets | ours median [ms] | search alone [ms] | Drake [ms] | "
             "answered by the proof | proofs on feasible targets |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        d = r.get("blocked_drake")
        lines.append(f"| {r['arm']} | {r['blocked']} | {_median_ms(r['blocked_ours']):.2f} | "
                     f"{_median_ms(r['blocked_search']):.1f} | "
                     f"{f'{_median_ms(d):.1f}' if d else '-'} | "
                     f"{r['blocked_ours']['proved']}/{r['blocked']} | "
                     f"{r['feasible_ours']['proved']}/{r['feasible']} |")
    return "\n".join(lines) + "\n\n([bench/results/blocked.md](bench/results/blocked.md))"


def failures(rows: List[dict]) -> List[str]:
    """Lines saying what failed (none: the bench passes)."""
    out = []
    for r in rows:
        for kind in ("blocked", "feasible"):
            for m in ("ours", "search", "drake"):
                cell = r.get(f"{kind}_{m}")
                if cell and cell["unverified_success"]:
                    out.append(f"{r['arm']}: {m} returned {cell['unverified_success']} "
                               f"SUCCESS that fail the check ({kind})")
        for m in ("ours", "drake"):
            cell = r.get(f"blocked_{m}")
            if cell and cell["verified"]:
                out.append(f"{r['arm']}: {m} solved {cell['verified']} blocked target(s): "
                           "the bench's claim that none has a solution is wrong")
        if r["feasible_ours"]["proved"]:
            out.append(f"{r['arm']}: the proof fired on {r['feasible_ours']['proved']} "
                       "feasible target(s)")
    return out


def plot(rows: List[dict], path: Path) -> None:
    plt = pyplot()
    if plt is None:
        return
    rows = [r for r in rows if r["blocked"]]
    x = np.arange(len(rows))
    fig, ax = plt.subplots(figsize=(9, 3.5))
    for k, (m, label) in enumerate((("ours", "ours"), ("search", "search alone"),
                                    ("drake", "Drake SNOPT"))):
        ys = [_median_ms(r[f"blocked_{m}"]) if f"blocked_{m}" in r else np.nan for r in rows]
        ax.bar(x + (k - 1) * 0.27, ys, 0.27, label=label)
    ax.set_xticks(x, [r["arm"] for r in rows], rotation=30, ha="right")
    ax.set_yscale("log")
    ax.set_ylabel("median answer on blocked targets [ms]")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true")
    p.add_argument("--arms", default="", help="comma list (default: the catalogue)")
    p.add_argument("--targets", type=int, default=None, help="blocked and feasible per arm")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default=str(results_files.RESULTS))
    args = p.parse_args(argv)
    names = [a for a in args.arms.split(",") if a] or \
        (list(QUICK_ARMS) if args.quick else list(robots.ARMS))
    n = args.targets or (5 if args.quick else 20)
    with_drake = importlib.util.find_spec("pydrake") is not None
    meta = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "machine": machine(), "budget_s": BUDGET_S, "targets": n, "seed": args.seed}
    rows = []
    for name in names:
        arm = Arm(name, n, n, args.seed)
        if not arm.blocked or not arm.feasible:
            print(f"{name}: {len(arm.blocked)} blocked, {len(arm.feasible)} feasible targets "
                  f"in {arm.sampled} samples; skipped")
            continue
        row = run_arm(arm, with_drake and name == "panda")
        rows.append(row)
        print(f"{name}: blocked ours {_median_ms(row['blocked_ours']):.2f} ms (proof "
              f"{row['blocked_ours']['proved']}/{row['blocked']}), search "
              f"{_median_ms(row['blocked_search']):.2f} ms; feasible ours "
              f"{row['feasible_ours']['verified']}/{row['feasible']}", flush=True)
    meta["machine"]["load_average_end"] = list(__import__("os").getloadavg())
    out = Path(args.out)
    stem = "blocked_quick" if args.quick else "blocked"
    results_files.write(out, stem, {"info": meta, "rows": rows}, markdown(rows, meta),
                        lambda path: plot(rows, path), echo=True)
    if not args.quick and not args.arms and out.resolve() == results_files.RESULTS.resolve():
        write_section("blocked", doc_table(rows))
    return 1 if failures(rows) else 0


if __name__ == "__main__":
    sys.exit(main())
