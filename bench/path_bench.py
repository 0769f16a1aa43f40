#!/usr/bin/env python3
"""IK along Cartesian paths (issue 42): solve_path vs sequential per-pose IK.

On panda, ur5, kinova, xarm7 and pr2_right (continuous wrist and forearm joints), over
the paths of :mod:`path_cases` (lines, arcs and circles with fixed and rotating
orientation, and joint motions that are continuously feasible by construction):

  ours        ``solve_path(group, waypoints, seed, max_joint_step=0.2)``
  seq_ours    ``solve()`` per pose (lm, 5 ms, restarts), seeded with the previous answer
  seq_tracik  TRAC-IK Distance mode (pytracik, 5 ms), seeded with the previous answer

Every method starts from the same seed (the group's mid-limits configuration, as a user
who knows nothing of the path would).  Counted by the benchmark itself: jumps (steps where
some joint moves more than ``max_joint_step``, plain differences of the returned values),
the fraction reached (sequential: the prefix up to the first failure or jump, as MoveIt's
computeCartesianPath stops), total joint motion over that prefix [rad] and wall time per
waypoint.  ``ours`` is also checked by independent FK at every waypoint.  Writes
bench/results/path.{json,md,png}; ``--quick`` runs a few paths per arm.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import pinocchio as pin

from adapters import missing_dependency, ours, trac_ik
from bench_arms import catalogue
from machine import machine, pyplot
import results_files
from path_cases import cases, line, start_configuration

from ros2_ik.core.path import solve_path
from ros2_ik.core.path.options import DEFAULT_BRANCHES
from ros2_ik.core.pose import PoseTarget
from ros2_ik.core.solve import prepare

HERE = Path(__file__).resolve().parent
OUT = HERE / "results"
ARMS = ("panda", "ur5", "kinova", "xarm7", "pr2_right")
STEP = 0.2
TOL_M, TOL_RAD = 1e-4, 1e-3


def sequential(run, group, poses, seed):
    """Per-pose IK seeded with the previous answer: (qs or None per pose, seconds)."""
    out, q_prev = [], seed
    started = time.perf_counter()
    for T in poses:
        q = run(T, q_prev)
        out.append(q)
        if q is not None:
            q_prev = q
    return out, time.perf_counter() - started


def sequential_row(qs, seconds, count):
    """Jumps over the whole run, and the prefix before the first failure or jump."""
    jumps, prefix, last, stopped = 0, 0, None, False
    for q in qs:
        jump = last is not None and q is not None and np.abs(q - last).max() > STEP
        jumps += int(jump)
        if q is None or jump:
            stopped = True
        if not stopped:
            prefix += 1
        last = q if q is not None else last
    return dict(jumps=jumps, fraction=prefix / count, motion=_motion(np.array(qs[:prefix])),
                ms_per_waypoint=1e3 * seconds / count)


def ours_row(group, poses, seed, random_seed, branches):
    targets = [PoseTarget(group.tip, T) for T in poses]
    result = solve_path(group, targets, seed, STEP, random_seed=random_seed,
                        num_solutions=branches)
    q = np.asarray(result.q_path)
    bad = sum(1 for qi, T in zip(q, poses) if not _on_pose(group, qi, T))
    jumps = int(np.sum(np.abs(np.diff(q, axis=0)).max(axis=1, initial=0.0) > STEP)) \
        if len(q) > 1 else 0
    return dict(jumps=jumps, fraction=len(q) / len(poses), motion=_motion(q),
                ms_per_waypoint=1e3 * result.solve_time_s / len(poses), wrong_pose=bad,
                reason=result.message), q


def _on_pose(group, q, T) -> bool:
    reached = group.fk(q, group.tip)
    return (np.linalg.norm(reached.translation - T.translation) <= TOL_M
            and np.linalg.norm(pin.log3(T.rotation.T @ reached.rotation)) <= TOL_RAD)


def _motion(q: np.ndarray) -> float:
    return float(np.sum(np.linalg.norm(np.diff(q, axis=0), axis=1))) if len(q) > 1 else 0.0


def run_arm(arm, per_kind: int, joint_paths: int, rng_seed: int, branches: int,
            baselines: bool = True):
    """All paths on one arm: a list of per-path records, and one path's joint curves.

    The curves: of the path that ``solve_path`` completes where sequential lm jumped most.
    """
    robot, group = arm.group()
    prepare(group, group.tip)
    methods = {"seq_ours": ours("lm")(arm, group, rng_seed)} if baselines else {}
    if baselines and missing_dependency("trac_ik") is None:
        import pytracik
        methods["seq_tracik"] = trac_ik(arm, group, rng_seed,
                                        solve_type=pytracik.SolveType.Distance)
    seed = group.mid_configuration()
    records, curves = [], None
    for k, case in enumerate(cases(group, np.random.default_rng(rng_seed), per_kind,
                                   joint_paths)):
        row, q = ours_row(group, case.poses, seed, rng_seed + k, branches)
        record = dict(arm=arm.name, kind=case.kind, feasible=case.feasible,
                      waypoints=len(case.poses), ours=row)
        seq_q = {}
        for name, run in methods.items():
            qs, seconds = sequential(run, group, case.poses, seed)
            record[name] = sequential_row(qs, seconds, len(case.poses))
            seq_q[name] = qs
        records.append(record)
        if baselines and row["fraction"] == 1.0 and (
                curves is None or record["seq_ours"]["jumps"] > curves["jumps"]):
            curves = dict(arm=arm.name, kind=case.kind, jumps=record["seq_ours"]["jumps"],
                          joints=list(group.joint_names), ours=q.tolist(),
                          **{name: [None if x is None else x.tolist() for x in qs]
                             for name, qs in seq_q.items()})
        print(f"{arm.name:10s} {case.kind:10s} ours {row['fraction']:.2f} "
              f"{row['ms_per_waypoint']:.2f} ms/wp | " + " | ".join(
                  f"{name} {record[name]['fraction']:.2f} jumps {record[name]['jumps']}"
                  for name in methods), flush=True)
    return records, curves


def panda_timing(count: int, branches: int, rng_seed: int = 7) -> dict:
    """Median time per waypoint [ms] of solve_path on ``count`` 100-waypoint Panda lines.

    Without collision, and with the collision benchmark's scene (``panda_scene.yaml``,
    clearance >= 0 as a constraint at every waypoint and check), on the same lines.  Wall
    time, and the process's CPU time (what wall time would be on cores of its own: the
    benchmark machine's cores are shared).
    """
    arm = catalogue(["panda"])[0]
    robot, group = arm.group()
    prepare(group, group.tip)
    rng = np.random.default_rng(rng_seed)
    lines = []
    while len(lines) < count:
        q = start_configuration(group, rng)
        lines.append([PoseTarget(group.tip, T) for T in line(group.fk(q, group.tip), rng,
                                                             False)[:100]])
    out = {}
    for name, constraints in (("free", ()), ("scene", (_scene_clearance(arm, robot),))):
        if name == "scene" and constraints[0] is None:
            continue
        ms, cpu_ms, complete = [], [], 0
        for k, targets_k in enumerate(lines):
            cpu = time.process_time()
            result = solve_path(group, targets_k, group.mid_configuration(), STEP,
                                constraints=constraints, random_seed=k,
                                num_solutions=branches)
            cpu_ms.append(1e3 * (time.process_time() - cpu) / len(targets_k))
            ms.append(1e3 * result.solve_time_s / len(targets_k))
            complete += result.complete
        out[name] = dict(paths=count, complete=complete, ms_per_waypoint_median=float(
            np.median(ms)), ms_per_waypoint_p90=float(np.percentile(ms, 90)),
            cpu_ms_per_waypoint_median=float(np.median(cpu_ms)))
        print(f"panda timing ({name}): {out[name]}", flush=True)
    return out


def _scene_clearance(arm, robot):
    """Return the collision benchmark's scene as a clearance constraint (None without coal)."""
    try:
        from ros2_ik.core.collision import CollisionChecker, PlanningScene, load_scene_yaml
        from ros2_ik.core.constraints import MinimumDistanceConstraint
    except ImportError:
        return None
    scene = PlanningScene.for_model(robot.model)
    scene.add_all(load_scene_yaml(str(HERE / "panda_scene.yaml"), allowed_dirs=[str(HERE)]))
    checker = CollisionChecker.from_urdf(robot.model, arm.urdf, arm.srdf, scene)
    return MinimumDistanceConstraint(checker, 1e-4, 0.05)


def summary(records):
    """Per arm and kind: each method's jumps, mean fraction, complete share, motion, time."""
    groups = {}
    for r in records:
        groups.setdefault((r["arm"], r["kind"]), []).append(r)
    rows = []
    for (arm, kind), rs in groups.items():
        row = dict(arm=arm, kind=kind, paths=len(rs))
        for method in ("ours", "seq_ours", "seq_tracik"):
            if method not in rs[0]:
                continue
            m = [r[method] for r in rs]
            row[method] = dict(
                jumps=int(sum(x["jumps"] for x in m)),
                fraction=float(np.mean([x["fraction"] for x in m])),
                complete=float(np.mean([x["fraction"] == 1.0 for x in m])),
                motion=float(np.median([x["motion"] for x in m])),
                ms_per_waypoint=float(np.median([x["ms_per_waypoint"] for x in m])))
        rows.append(row)
    return rows


def targets(records):
    """Measure the issue's targets."""
    ours_jumps = sum(r["ours"]["jumps"] for r in records)
    wrong = sum(r["ours"]["wrong_pose"] for r in records)
    below = [(r["arm"], r["kind"], m) for r in records for m in ("seq_ours", "seq_tracik")
             if m in r and r["ours"]["fraction"] < r[m]["fraction"]]
    feasible = [r for r in records if r["feasible"]]
    complete = sum(r["ours"]["fraction"] == 1.0 for r in feasible)
    panda = [r["ours"]["ms_per_waypoint"] for r in records
             if r["arm"] == "panda" and r["kind"] == "line"]
    return dict(
        ours_jumps=ours_jumps, ours_wrong_pose=wrong,
        paths_where_a_baseline_reaches_farther=len(below), below=below[:20],
        feasible_paths=len(feasible), feasible_complete=complete,
        feasible_complete_share=complete / len(feasible) if feasible else float("nan"),
        panda_line_ms_per_waypoint_median=float(np.median(panda)) if panda else None)


def write_markdown(path: Path, rows, goals, info) -> None:
    methods = [m for m in ("ours", "seq_ours", "seq_tracik") if m in rows[0]]
    head = "| arm | kind | paths | " + " | ".join(
        f"{m} jumps | {m} fraction | {m} complete | {m} motion [rad] | {m} ms/wp"
        for m in methods) + " |"
    lines = ["# IK along paths (bench/path_bench.py)", "",
             f"max_joint_step {STEP} rad; seed: mid-limits for every method; "
             f"machine: {info['cpu']}, {info['cores']} cores, load {info['load_average']}.",
             "", head, "|" + "---|" * (3 + 5 * len(methods))]
    for r in rows:
        cells = [r["arm"], r["kind"], str(r["paths"])]
        for m in methods:
            x = r[m]
            cells += [str(x["jumps"]), f"{x['fraction']:.3f}", f"{100 * x['complete']:.0f} %",
                      f"{x['motion']:.2f}", f"{x['ms_per_waypoint']:.2f}"]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "## Targets", "",
              f"- jumps above max_joint_step in ours: {goals['ours_jumps']} "
              f"(waypoints off their pose by our FK: {goals['ours_wrong_pose']})",
              f"- paths where a sequential baseline reaches farther than ours: "
              f"{goals['paths_where_a_baseline_reaches_farther']} {goals['below']}",
              f"- continuously feasible paths complete: {goals['feasible_complete']} / "
              f"{goals['feasible_paths']} ({100 * goals['feasible_complete_share']:.1f} %)",
              f"- Panda 100-waypoint lines, median time per waypoint (solve_path, 2 mm "
              f"steps): {_timing_text(goals['panda_timing'])}", ""]
    path.write_text("\n".join(lines))


def _timing_text(timing: dict) -> str:
    return "; ".join(f"{name}: {x['ms_per_waypoint_median']:.3f} ms wall (p90 "
                     f"{x['ms_per_waypoint_p90']:.3f}; CPU time of the process "
                     f"{x['cpu_ms_per_waypoint_median']:.3f} ms), {x['complete']}/{x['paths']}"
                     f" complete" for name, x in timing.items())


def plot(path: Path, curves) -> None:
    plt = pyplot()
    if plt is None or curves is None:
        return
    n = len(curves["joints"])
    fig, axes = plt.subplots(n, 1, figsize=(8, 1.6 * n), sharex=True)
    for j, ax in enumerate(np.atleast_1d(axes)):
        for name, style in (("seq_tracik", ":"), ("seq_ours", "--"), ("ours", "-")):
            if name not in curves:
                continue
            ys = [np.nan if q is None else q[j] for q in curves[name]]
            ax.plot(ys, style, label=name)
        ax.set_ylabel(curves["joints"][j], fontsize=7)
    np.atleast_1d(axes)[0].legend(fontsize=7)
    np.atleast_1d(axes)[0].set_title(f"{curves['arm']} {curves['kind']}: joint curves "
                                     f"[rad] per waypoint")
    fig.tight_layout()
    fig.savefig(path, dpi=90)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="2 paths per kind, 10 joint paths per arm, 10 timing lines")
    parser.add_argument("--arms", nargs="*", default=list(ARMS))
    parser.add_argument("--branches", type=int, default=DEFAULT_BRANCHES,
                        help="solve_path's num_solutions (branches followed)")
    parser.add_argument("--no-baselines", action="store_true", help="only solve_path")
    parser.add_argument("--paths-per-kind", type=int, default=0,
                        help="geometric paths per kind and arm (0: 2 quick, 8 full)")
    parser.add_argument("--joint-paths", type=int, default=0,
                        help="joint-motion paths per arm (0: 10 quick, 30 full)")
    parser.add_argument("--timing-lines", type=int, default=0,
                        help="Panda lines timed (0: 10 quick, 30 full)")
    parser.add_argument("--rng-seed", type=int, default=0,
                        help="first arm's path generator seed (arm k: + 100 k); another "
                        "value gives paths the method was not tuned on")
    parser.add_argument("--out", type=Path, default=OUT, help="output directory")
    args = parser.parse_args(argv)
    per_kind = args.paths_per_kind or (2 if args.quick else 8)
    joint_paths = args.joint_paths or (10 if args.quick else 30)
    records, curves = [], None
    for k, arm in enumerate(catalogue(args.arms)):
        rs, c = run_arm(arm, per_kind, joint_paths, args.rng_seed + 100 * k, args.branches,
                        not args.no_baselines)
        records += rs
        if c is not None and (curves is None or c["jumps"] > curves["jumps"]):
            curves = c
    timing = panda_timing(args.timing_lines or (10 if args.quick else 30), args.branches)
    info = machine()
    rows, goals = summary(records), targets(records)
    goals["panda_timing"] = timing
    stem = ("path_quick" if args.quick else "path") + (
        "" if args.branches == DEFAULT_BRANCHES else f"_b{args.branches}") + (
        f"_rng{args.rng_seed}" if args.rng_seed else "")
    results_files.write_json(args.out, stem, dict(
        machine=info, max_joint_step=STEP, summary=rows, targets=goals, paths=records,
        curves=curves))
    write_markdown(args.out / f"{stem}.md", rows, goals, info)
    plot(args.out / f"{stem}.png", curves)
    print(json.dumps(goals, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
