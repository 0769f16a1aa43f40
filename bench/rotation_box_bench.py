#!/usr/bin/env python3
"""MoveIt's orientation constraint (RotationBoxConstraint) against Drake, on the same problems.

Per arm (example-robot-data's panda, ur5, kinova) and family, feasible problems: a
configuration ``q_true`` uniform in the limits, its tip position as a position-only target
(1e-4 m), and the tip's rotation from a desired orientation boxed: the desired one is the
tip's at ``q_true`` turned by a rotation inside the box, so ``q_true`` meets it.  Families:

* ``level``: XYZ Euler angles, x and y within 0.05 rad, yaw free (a cup kept upright);
* ``euler_all``: XYZ Euler angles, each within 0.1 rad;
* ``rotation_vector``: each rotation-vector component within 0.1 rad.

Ours: ``solve()`` (lm, 0.5 s, mid-limits seed).  The anchor: Drake's InverseKinematics with
``AddPositionConstraint`` (a box of half-side 1e-4 / (2 sqrt(3)): half the tolerance, as
``drake_ik`` halves it, keeps SNOPT's answers on the box's corner within 1e-4 m) and the
components as a generic constraint on q (Drake has no per-axis orientation box: the rows
``euler_xyz`` / ``log3`` of R_WB(q) on Drake's AutoDiffXd plant, the same formulas), SNOPT
with restarts (``constrained_drake.DrakeArm``), 2 s.  Both judged here by pinocchio FK and
MoveIt's ``decide`` (``moveit_orientation.moveit_decide``, written from MoveIt's source)
with the tolerances plus ros2_ik's default constraint tolerance.  A false failure: Drake
verified, ours not.  Interleaved per problem; wall times at the caller.

``python bench/rotation_box_bench.py [--quick]`` writes ``bench/results/rotation_box.*``.
"""
from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from pathlib import Path
from typing import Dict, List

import numpy as np
import pinocchio as pin

from constrained_drake import DrakeArm
from constrained_random import turned
from drake_ik import FEASIBILITY_TOLERANCE
from machine import machine, median_bars
import results_files
from ros2_ik.core import robots
from ros2_ik.core.constraints import RotationBoxConstraint
from ros2_ik.core.pose import PoseTarget
from ros2_ik.core.solve import prepare, solve
from ros2_ik.core.verify import CONSTRAINT_TOLERANCE_RAD

from moveit_orientation import moveit_decide  # noqa: E402

from pydrake.solvers import SnoptSolver, SolverOptions  # noqa: E402

ARMS = ("panda", "ur5", "kinova")
FAMILIES = {"level": ("xyz_euler", (0.05, 0.05, math.pi)),
            "euler_all": ("xyz_euler", (0.1, 0.1, 0.1)),
            "rotation_vector": ("rotation_vector", (0.1, 0.1, 0.1))}
OURS_TIMEOUT_S, DRAKE_BUDGET_S, POSITION_TOL_M = 0.5, 2.0, 1e-4


class DrakeBox:
    """Drake's program of one arm: position box + the components as a generic constraint."""

    def __init__(self, name: str, group):
        self.arm = DrakeArm(robots.urdf_text(name), group)
        self.tip, self.mid = group.tip, group.mid_configuration()
        self.engine = SnoptSolver()

    def solve(self, p_target, R_desired, param, tol, rng):
        """Return (q or None, attempts): restarts until SNOPT claims success or the budget."""
        from pydrake.multibody.inverse_kinematics import InverseKinematics
        arm = self.arm
        ik = InverseKinematics(arm.plant, arm.plant_context, with_joint_limits=True)
        half = POSITION_TOL_M / (2 * math.sqrt(3)) * np.ones(3)  # drake_ik: half, inside
        ik.AddPositionConstraint(arm.plant.GetFrameByName(self.tip), np.zeros(3),
                                 arm.plant.world_frame(), p_target - half, p_target + half)
        arm.add_rotation_box(ik, dict(frame_Abar=arm.plant.world_frame().name(),
                                      R_AbarA=R_desired, frame_Bbar=self.tip,
                                      R_BbarB=np.eye(3), tolerances=tol,
                                      parameterization=param))
        start, attempts = time.perf_counter(), 0
        guess = arm.to_drake(self.mid)
        while time.perf_counter() - start < DRAKE_BUDGET_S:
            options = SolverOptions()
            options.SetOption(self.engine.solver_id(), "Major feasibility tolerance",
                              FEASIBILITY_TOLERANCE)
            result = self.engine.Solve(ik.prog(), guess, options)
            attempts += 1
            if result.is_success():
                return np.asarray(result.GetSolution(ik.q()))[arm.index], attempts
            guess = arm.sample_lo + (arm.sample_hi - arm.sample_lo) * rng.random(len(guess))
        return None, attempts


def verified(group, model, data, q, p_target, R_desired, param, tol) -> bool:
    """Judge ``q`` by pinocchio FK and MoveIt's decide (+ ros2_ik's constraint tolerance)."""
    if q is None or np.any(q < group.lower - 1e-9) or np.any(q > group.upper + 1e-9):
        return False
    pin.framesForwardKinematics(model, data, group.to_full_q(q))
    X = data.oMf[model.getFrameId(group.tip)]
    if np.linalg.norm(X.translation - p_target) > POSITION_TOL_M + 1e-9:
        return False
    return moveit_decide(R_desired.T @ X.rotation, [t + CONSTRAINT_TOLERANCE_RAD for t in tol],
                         0 if param == "xyz_euler" else 1)


def run_arm(name: str, problems: int) -> List[Dict]:
    """Return every family's figures on one arm."""
    robot, group = robots.load_group(name)
    model, data = robot.model, robot.model.createData()
    prepare(group, group.tip, constrained=True)
    drake = DrakeBox(name, group)
    rows = []
    for index, (family, (param, tol)) in enumerate(FAMILIES.items()):
        rng = np.random.default_rng(index)
        times = {"ours": [], "drake": []}
        ok = {"ours": 0, "drake": 0}
        false_failures = 0
        for k in range(problems):
            q_true = group.random_configuration(rng)
            pin.framesForwardKinematics(model, data, group.to_full_q(q_true))
            X = data.oMf[model.getFrameId(group.tip)]
            p, R_desired = X.translation.copy(), X.rotation @ turned(param, tol, rng).T
            box = RotationBoxConstraint(model, "universe", R_desired, group.tip, np.eye(3),
                                        tol, param)
            target = PoseTarget(group.tip, pin.SE3(np.eye(3), p), position_only=True)
            t0 = time.perf_counter()
            r = solve(group, target, group.mid_configuration(), "lm", OURS_TIMEOUT_S,
                      constraints=[box], random_seed=k)
            times["ours"].append(time.perf_counter() - t0)
            ours = verified(group, model, data, r.q if r.success else None, p, R_desired,
                            param, tol)
            t0 = time.perf_counter()
            q_drake, _ = drake.solve(p, R_desired, param, tol, rng)
            times["drake"].append(time.perf_counter() - t0)
            theirs = verified(group, model, data, q_drake, p, R_desired, param, tol)
            ok["ours"] += ours
            ok["drake"] += theirs
            false_failures += theirs and not ours
        row = {"arm": name, "family": family, "parameterization": param,
               "tolerances_rad": list(tol), "problems": problems,
               "false_failures": false_failures}
        for key in times:
            row[f"{key}_success"] = ok[key] / problems
            row[f"{key}_median_ms"] = statistics.median(times[key]) * 1e3
        row["drake_over_ours_median"] = row["drake_median_ms"] / row["ours_median_ms"]
        rows.append(row)
        print(f"{name:7s} {family:16s} ours {row['ours_success']:.0%} "
              f"{row['ours_median_ms']:.2f} ms, Drake {row['drake_success']:.0%} "
              f"{row['drake_median_ms']:.1f} ms, false failures {false_failures}")
    return rows


def report(rows: List[Dict], info: Dict) -> str:
    """Return the markdown table of every row."""
    lines = ["# MoveIt's orientation constraint (RotationBoxConstraint) against Drake "
             "(bench/rotation_box_bench.py)", "",
             f"Machine: {info['cpu']}, {info['cores']} cores, load "
             f"{[round(x, 2) for x in info['load_average']]} (shared: medians, ratios); "
             f"{rows[0]['problems']} feasible problems per row, position-only target with "
             f"the tip's rotation boxed, interleaved; Drake SNOPT with restarts (2 s), ours lm "
             f"(0.5 s); both verified by pinocchio FK and MoveIt's decide.", "",
             "| arm | family | tolerances [rad] | ours verified | Drake verified | "
             "false failures | ours median [ms] | Drake median [ms] | Drake / ours |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        tol = ", ".join("free" if t >= math.pi else f"{t:g}" for t in r["tolerances_rad"])
        lines.append(f"| {r['arm']} | {r['family']} | {tol} | {r['ours_success']:.1%} | "
                     f"{r['drake_success']:.1%} | {r['false_failures']} | "
                     f"{r['ours_median_ms']:.2f} | {r['drake_median_ms']:.1f} | "
                     f"{r['drake_over_ours_median']:.0f}x |")
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--problems", type=int, default=100)
    parser.add_argument("--quick", action="store_true", help="10 problems per row")
    parser.add_argument("--out", default=str(results_files.RESULTS))
    args = parser.parse_args()
    problems = 10 if args.quick else args.problems
    rows = [row for name in ARMS for row in run_arm(name, problems)]
    info = machine()
    names = [f"{r['arm']}\n{r['family']}" for r in rows]
    results_files.write(
        Path(args.out), "rotation_box", {"rows": rows, "machine": info}, report(rows, info),
        lambda path: median_bars(path, rows, [("ours_median_ms", "ours (lm)"),
                                              ("drake_median_ms", "Drake SNOPT")],
                                 names, "median wall time [ms]", 0.9), echo=True)
    return 1 if any(r["false_failures"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
