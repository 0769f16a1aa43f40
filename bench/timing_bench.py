#!/usr/bin/env python3
"""How long the node's timed paths take: core.path.timing against TOPP-RA's time optimum.

What ik_node sends a controller (an executed path, ComputeIKPath's timed reply) is timed by
``ros2_ik.core.path.timing.path_times``: Fritsch-Carlson cubics through the points, each
joint within its scaled velocity and acceleration limits.  How much slower than possible
is that?  Per arm, the joint paths ``solve_path`` gives for the path benchmark's cases
(lines, arcs, circles and joint motions; complete paths only), with the URDF's velocity
limits and accelerations of twice them [rad/s^2 or m/s^2] (a URDF has none; MoveIt
configs' joint_limits.yaml are of that order), scaling 1, interleaved per path:

  ours     ``path_times`` (as the node times them)
  toppra   TOPP-RA 0.6 (``toppra``), a cubic spline through the same points, the same
           limits, ``ParametrizeConstAccel``: the time-optimal traversal of that spline

Each of ours is checked here: its cubics are sampled (Hermite positions, velocities and
accelerations written apart from the package) against the limits.  Reported per arm: the
duration ratio ours / toppra (median, p90), both computing times (median) and the largest
sampled velocity and acceleration over their limits (<= 1).  Also one-point moves (an
executed solution: the controller's quintic from rest to rest, timed for the cubic too)
against the bang-bang optimum, computed by hand.

    python bench/timing_bench.py            # 8 cases of each kind per arm, five arms
    python bench/timing_bench.py --quick    # 2 per kind, two arms
Writes bench/results/timing.{json,md,png} (timing_quick.* with --quick); exits 1 when a
sampled limit is exceeded.
"""
from __future__ import annotations

import argparse
import datetime
import statistics
import sys
import time
from pathlib import Path
from typing import Dict, List

import numpy as np

from machine import machine, pyplot
import results_files
from path_cases import cases, start_configuration
from ros2_ik.core import robots
from ros2_ik.core.path import solve_path, timing
from ros2_ik.core.pose import PoseTarget

ARMS = ("panda", "ur5", "kinova", "xarm7", "pr2_right")
QUICK_ARMS = ("panda", "ur5")
#: Accelerations of the benchmark [rad/s^2 or m/s^2 per rad/s or m/s of velocity limit].
ACCELERATION_PER_VELOCITY = 2.0
STEP = 0.2
TAU = np.linspace(0.0, 1.0, 101)[:, None]


def sampled_ratios(start, q_path, times, v_max, a_max):
    """Largest |velocity| / limit and |acceleration| / limit on the path's cubics, sampled.

    The points' velocities are Fritsch-Carlson's (harmonic mean of the two steps' means
    when they have one sign, else 0; 0 at both ends), written here apart from the package.
    """
    points = np.vstack([start, q_path])
    stamps = np.concatenate([[0.0], times])
    spans = np.diff(stamps)
    mean = np.divide(np.diff(points, axis=0), spans[:, None], out=np.zeros_like(q_path),
                     where=spans[:, None] > 0)
    inner = np.zeros_like(mean[:-1])
    same = mean[:-1] * mean[1:] > 0
    inner[same] = 2 * mean[:-1][same] * mean[1:][same] / (mean[:-1][same] + mean[1:][same])
    speeds = np.vstack([np.zeros(len(start)), inner, np.zeros(len(start))])
    worst_v = worst_a = 0.0
    for k, T in enumerate(spans):
        if T <= 0:
            continue
        # p(s) = p0 + h01 d + h10 m0 + h11 m1 (h00 = 1 - h01): d, not p1 - p0 of two
        # large numbers, over a step of 1e-15 rad in 1e-8 s.
        d, m0, m1 = points[k + 1] - points[k], speeds[k] * T, speeds[k + 1] * T
        s = TAU
        vel = ((6 * s - 6 * s ** 2) * d + (3 * s ** 2 - 4 * s + 1) * m0
               + (3 * s ** 2 - 2 * s) * m1) / T
        acc = ((6 - 12 * s) * d + (6 * s - 4) * m0 + (6 * s - 2) * m1) / T ** 2
        worst_v = max(worst_v, float(np.max(np.abs(vel) / v_max)))
        worst_a = max(worst_a, float(np.max(np.abs(acc) / a_max)))
    return worst_v, worst_a


def toppra_duration(start, q_path, v_max, a_max):
    """TOPP-RA's time-optimal duration [s] along a cubic spline through the points."""
    import toppra
    import toppra.algorithm as algorithm
    import toppra.constraint as constraint

    points = np.vstack([start, q_path])
    keep = np.concatenate([[True], np.linalg.norm(np.diff(points, axis=0), axis=1) > 1e-9])
    points = points[keep]
    s = np.concatenate([[0.0], np.cumsum(np.linalg.norm(np.diff(points, axis=0), axis=1))])
    path = toppra.SplineInterpolator(s / s[-1], points)
    limits = [constraint.JointVelocityConstraint(np.vstack([-v_max, v_max]).T),
              constraint.JointAccelerationConstraint(np.vstack([-a_max, a_max]).T)]
    instance = algorithm.TOPPRA(limits, path, parametrizer="ParametrizeConstAccel")
    trajectory = instance.compute_trajectory(0, 0)
    return None if trajectory is None else float(trajectory.duration)


def fastest(distance: float, v: float, a: float) -> float:
    """Shortest rest-to-rest time [s] of one joint moving ``distance`` (bang-bang)."""
    if distance <= v ** 2 / a:
        return 2 * np.sqrt(distance / a)
    return distance / v + v / a


def run_arm(arm: str, per_kind: int, rng_seed: int) -> Dict:
    group = robots.load_group(arm)[1]
    v_max = np.where(np.isfinite(group.velocity_limits) & (group.velocity_limits > 0),
                     group.velocity_limits, 1.0)
    a_max = ACCELERATION_PER_VELOCITY * v_max
    rng = np.random.default_rng(rng_seed)
    rows: List[Dict] = []
    for case in cases(group, rng, per_kind, per_kind):
        targets = [PoseTarget(group.tip, T) for T in case.poses]
        result = solve_path(group, targets, case.q_start, STEP, random_seed=0)
        if result.fraction < 1.0 or len(result.q_path) < 2:
            continue
        start, q_path = case.q_start, np.asarray(result.q_path)
        started = time.perf_counter()
        times = timing.path_times(q_path, start, v_max, 1.0, a_max, 1.0)
        ours_s = time.perf_counter() - started
        started = time.perf_counter()
        optimum = toppra_duration(start, q_path, v_max, a_max)
        toppra_s = time.perf_counter() - started
        worst_v, worst_a = sampled_ratios(start, q_path, times, v_max, a_max)
        rows.append(dict(kind=case.kind, points=len(q_path), ours_duration_s=float(times[-1]),
                         toppra_duration_s=optimum, ours_compute_ms=1e3 * ours_s,
                         toppra_compute_ms=1e3 * toppra_s, velocity_over_limit=worst_v,
                         acceleration_over_limit=worst_a))
    one_point = []
    for _ in range(50):
        q0 = start_configuration(group, rng)
        q1 = np.clip(q0 + rng.uniform(-0.5, 0.5, group.n), group.lower, group.upper)
        seconds = timing.rest_to_rest_s(q1 - q0, v_max, 1.0, a_max, 1.0)
        best = max(fastest(abs(d), v, a) for d, v, a in zip(q1 - q0, v_max, a_max))
        one_point.append(seconds / best)
    return dict(arm=arm, paths=rows, one_point_over_optimum=one_point)


def summary(result: Dict) -> Dict:
    rows = [r for r in result["paths"] if r["toppra_duration_s"]]
    ratios = [r["ours_duration_s"] / r["toppra_duration_s"] for r in rows]
    return dict(arm=result["arm"], paths=len(rows),
                duration_ratio_median=statistics.median(ratios) if ratios else None,
                duration_ratio_p90=float(np.percentile(ratios, 90)) if ratios else None,
                ours_compute_ms_median=statistics.median(r["ours_compute_ms"] for r in rows)
                if rows else None,
                toppra_compute_ms_median=statistics.median(r["toppra_compute_ms"]
                                                           for r in rows) if rows else None,
                worst_velocity_over_limit=max((r["velocity_over_limit"] for r in
                                               result["paths"]), default=0.0),
                worst_acceleration_over_limit=max((r["acceleration_over_limit"] for r in
                                                   result["paths"]), default=0.0),
                one_point_ratio_median=statistics.median(result["one_point_over_optimum"]))


def markdown(summaries: List[Dict], info: Dict) -> str:
    lines = ["# Timed paths: core.path.timing against TOPP-RA's time optimum "
             "(bench/timing_bench.py)", "",
             f"Machine: {info['machine']['cpu']}, {info['machine']['cores']} cores, load "
             f"{info['machine']['load_average']}; {info['date']}; accelerations "
             f"{ACCELERATION_PER_VELOCITY:g} x the URDF velocity limits, scaling 1.", "",
             "| arm | paths | ours / TOPP-RA duration (median) | p90 | ours compute [ms] | "
             "TOPP-RA compute [ms] | worst sampled velocity / limit | worst sampled "
             "acceleration / limit | one-point move / bang-bang optimum (median) |",
             "|---|---|---|---|---|---|---|---|---|"]
    for s in summaries:
        def fmt(x, spec=".2f"):
            return "-" if x is None else format(x, spec)
        lines.append(f"| {s['arm']} | {s['paths']} | {fmt(s['duration_ratio_median'])} | "
                     f"{fmt(s['duration_ratio_p90'])} | {fmt(s['ours_compute_ms_median'], '.1f')}"
                     f" | {fmt(s['toppra_compute_ms_median'], '.1f')} | "
                     f"{s['worst_velocity_over_limit']:.3f} | "
                     f"{s['worst_acceleration_over_limit']:.3f} | "
                     f"{s['one_point_ratio_median']:.2f} |")
    lines += ["", "TOPP-RA traverses a cubic spline through the same points at the limits "
              "exactly (bang-bang in the path's speed). Ours binds on the accelerations "
              "(the sampled velocities stay well under their limits): the cubics through "
              "Fritsch-Carlson velocities change their acceleration at every point, and "
              "their largest, at a step's end, is what is held to the limit, where the "
              "spline's is continuous; the speed profile is planned at half the limits "
              "before trimming. The ratio is what that costs. Its tail (p90 up to 2-3x) is "
              "paths on which a joint turns back: Fritsch-Carlson's velocities stop it at "
              "that point (no overshoot of a point), the spline's carry it through. A "
              "one-point move is the controller's quintic from rest to rest (no jump of "
              "acceleration at its start or end): its peak velocity is 1.875x its mean; its "
              "acceleration is held to the limit at 6 d / T^2, the cubic's (a controller "
              "that draws one), above the quintic's 5.77 d / T^2; against the bang-bang "
              "trapezoid.", ""]
    return "\n".join(lines)


def plot(path: Path, results: List[Dict]) -> None:
    plt = pyplot()
    if plt is None:
        return
    fig, ax = plt.subplots(figsize=(7, 4))
    data = [[r["ours_duration_s"] / r["toppra_duration_s"] for r in res["paths"]
             if r["toppra_duration_s"]] for res in results]
    ax.boxplot(data, tick_labels=[res["arm"] for res in results])
    ax.axhline(1.0, color="grey", lw=0.8)
    ax.set_ylabel("ours / TOPP-RA duration")
    ax.set_title("Timed paths against the time optimum (lower is faster)")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2 cases per kind, two arms")
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--out", type=Path, default=results_files.RESULTS)
    args = parser.parse_args(argv)
    arms, per_kind = (QUICK_ARMS, 2) if args.quick else (ARMS, 8)
    results = [run_arm(arm, per_kind, args.seed) for arm in arms]
    summaries = [summary(r) for r in results]
    info = dict(machine=machine(), date=datetime.date.today().isoformat(), quick=args.quick)
    data = dict(info=info, acceleration_per_velocity=ACCELERATION_PER_VELOCITY,
                summaries=summaries, results=results)
    stem = "timing_quick" if args.quick else "timing"  # a quick run keeps the full one
    results_files.write(args.out, stem, data, markdown(summaries, info),
                        lambda path: plot(path, results), echo=True)
    exceeded = [s["arm"] for s in summaries if s["worst_velocity_over_limit"] > 1 + 1e-6
                or s["worst_acceleration_over_limit"] > 1 + 1e-6]
    if exceeded:
        print(f"limits exceeded on {exceeded}", file=sys.stderr)
    return 1 if exceeded else 0


if __name__ == "__main__":
    sys.exit(main())
