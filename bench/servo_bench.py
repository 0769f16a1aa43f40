"""Servo (differential IK) step: ours (core.servo) vs Pink, interleaved on the same tasks.

Panda at 250 Hz (dt = 4 ms), three tasks, each run by both controllers, steps alternating
ours/Pink on the same target:

* ``circle``: a 0.1 m-radius circle at 0.2 m/s, no obstacles;
* ``step``: a 0.1 m step of the target, no obstacles;
* ``scene``: in the bench scene (bench/panda_scene.yaml): the target first moves at
  0.2 m/s in a straight line down to the table, then runs a 0.1 m circle at 0.2 m/s so
  low that the fingers would sweep through the low box.  Ours runs with the collision dampers
  on the live coal scene; Pink (FrameTask + PostureTask, its default configuration and
  velocity limits, no collision barrier) runs the same targets: its clearance shows what
  the task asks of an arm that does not avoid.

Per row: the wall time of each step call (median, p95, p99 [ms]); the tip position error by
independent full-model FK after a 1 s transient (rms, max [m]); violations counted per
step on the commands both controllers integrate: position (outside the URDF limits),
velocity (finite differences above the URDF limits), acceleration (second differences
above ``ACC`` [rad/s^2], from rest); in the scene, the minimum clearance (the checker's
exact ``min_distance`` at every commanded q [m]) and the steps below the bound.
``success_rate`` = fraction of steps without any violation (and not below the bound).
Writes bench/results/servo.json (rows), servo.md and servo.png (tracked path vs target).
Then the whole-body tasks (humanoids: soles held, CoM in the support polygon, a hand
tracking; bench/servo_wholebody.py): servo_whole_body.{json,md,png}; ``--whole-body`` runs
only those.
"""
import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import pinocchio as pin

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT.parent / "ros2_ik"))
from machine import machine  # noqa: E402
import results_files  # noqa: E402
import servo_wholebody  # noqa: E402
from ros2_ik.core import robots  # noqa: E402
from ros2_ik.core.collision import (CollisionChecker, PlanningScene,  # noqa: E402
                                    load_scene_yaml)
from ros2_ik.core.servo import Servo, ServoConfig  # noqa: E402

DT, TIP, GAIN, ACC = 0.004, "panda_hand", 20.0, 10.0
RESULTS = results_files.RESULTS
SCENE = ROOT / "panda_scene.yaml"
CONFIG = ServoConfig(gain=GAIN, acceleration_limit=ACC)


class PinkServo:
    """Pink on the group's reduced model: FrameTask + small PostureTask, daqp backend."""

    def __init__(self, group, q0):
        import pink
        from pink.tasks import FrameTask, PostureTask
        self.pink, self.model = pink, group.reduced_model
        self.data = self.model.createData()
        self.frame = FrameTask(TIP, position_cost=1.0, orientation_cost=0.3,
                               lm_damping=1e-3, gain=GAIN * DT)
        posture = PostureTask(cost=1e-2, gain=DT)  # same weight and 1/s gain as ours
        posture.set_target(group.mid_configuration())
        self.tasks = [self.frame, posture]
        self.config = pink.Configuration(self.model, self.data, q0.copy())

    def step(self, q, T):
        self.config.update(q)
        self.frame.set_target(T)
        v = self.pink.solve_ik(self.config, self.tasks, DT, solver="daqp", damping=1e-6)
        return q + v * DT


def _circle(centre, rotation, steps, t0=0.0):
    r, w = 0.1, 0.2 / 0.1
    return [pin.SE3(rotation, centre + r * np.array([np.cos(w * t), np.sin(w * t), 0.0]))
            for t in t0 + np.arange(1, steps + 1) * DT]


def _targets(T0, kind, steps):
    """Targets per step and the index after which the error counts (1 s transient)."""
    if kind == "step":
        step = pin.SE3(T0.rotation, T0.translation + np.array([-0.05, -0.05, -0.07]))
        return [step] * steps, 250
    if kind == "circle":
        return _circle(T0.translation - np.array([0.1, 0.0, 0.0]), T0.rotation, steps), 250
    centre = np.array([0.5, -0.1, 0.19])  # scene: low over the low box and the table
    start = _circle(centre, T0.rotation, 1, -DT)[0].translation
    ramp = int(np.ceil(np.linalg.norm(start - T0.translation) / (0.2 * DT)))  # at 0.2 m/s
    approach = [pin.SE3(T0.rotation, T0.translation + s * (start - T0.translation))
                for s in np.arange(1, ramp + 1) / ramp]
    return approach + _circle(centre, T0.rotation, steps), ramp + 250


def _q0(group):
    q0 = group.mid_configuration()
    q0[3] = -1.5
    return q0


def _run(group, kind, steps, checker=None):
    """Interleave ours and Pink on the same targets: targets, commands, times, holds."""
    q0 = _q0(group)
    targets, settle = _targets(group.fk(q0, TIP), kind, steps)
    ours = Servo(group, TIP, CONFIG, checker=checker)
    pink_servo = PinkServo(group, q0)
    holds = [0]

    def ours_step(q, T):
        step = ours.step_pose(q, T, DT)
        holds[0] += step.flag != 1
        return step.q_next
    runs = {"ours": ours_step, "pink": pink_servo.step}
    qs = {k: [q0.copy()] for k in runs}
    times = {k: [] for k in runs}
    for T in targets:
        for name, fn in runs.items():  # interleaved, same target each step
            t0 = time.perf_counter()
            q = fn(qs[name][-1], T)
            times[name].append(time.perf_counter() - t0)
            qs[name].append(q)
    return targets, settle, {k: np.array(v) for k, v in qs.items()}, times, holds[0]


def _violations(group, qs):
    """Per-step booleans (steps,): position, velocity and acceleration violations."""
    q = qs[1:]
    pos = ((q < group.lower - 1e-9) | (q > group.upper + 1e-9)).any(axis=1)
    v = np.diff(qs, axis=0) / DT
    vel = (np.abs(v) > group.velocity_limits + 1e-7).any(axis=1)
    a = np.diff(np.vstack([np.zeros(group.n), v]), axis=0) / DT
    acc = (np.abs(a) > ACC + 1e-6).any(axis=1)
    return pos, vel, acc


def _row(group, kind, name, run, checker=None):
    targets, settle, qs, times, holds = run
    qs, times = qs[name], times[name]
    pos, vel, acc = _violations(group, qs)
    bad = pos | vel | acc
    idx = range(settle, len(targets), 5)
    err = np.array([np.linalg.norm(group.fk(qs[i + 1], TIP).translation
                                   - targets[i].translation) for i in idx])
    ms = np.array(times) * 1e3
    row = {"robot": "panda_scene" if checker else "panda", "solver": name, "mode": kind,
           "median_ms": float(np.median(ms)), "p95_ms": float(np.percentile(ms, 95)),
           "p99_ms": float(np.percentile(ms, 99)),
           "rms_error_m": float(np.sqrt(np.mean(err ** 2))), "max_error_m": float(err.max()),
           "position_violations": int(pos.sum()), "velocity_violations": int(vel.sum()),
           "acceleration_violations": int(acc.sum()), "steps": len(targets),
           "holds": int(holds) if name == "ours" else 0}
    if checker is not None:
        d = np.array([checker.min_distance(group.to_full_q(q)).distance_m for q in qs[1:]])
        below = d < CONFIG.clearance_m
        bad |= below
        row.update(min_clearance_m=float(d.min()), below_bound=int(below.sum()),
                   clearance_bound_m=CONFIG.clearance_m)
    row["success_rate"] = float(1.0 - bad.mean())
    return row


def bench_checker(robot):
    """Our checker on the Panda's full model with the bench scene (panda_scene.yaml)."""
    scene = PlanningScene.for_model(robot.model)
    scene.add_all(load_scene_yaml(str(SCENE), allowed_dirs=[str(ROOT)]))
    return CollisionChecker.from_urdf(robot.model, robots.urdf_text("panda"),
                                      robots.srdf_text("panda"), scene)


def _ratios(rows):
    """Pink/ours median step time and ours/Pink rms tracking error, per mode."""
    by = {(r["mode"], r["solver"]): r for r in rows}
    modes = sorted({r["mode"] for r in rows})
    return ({m: by[(m, "pink")]["median_ms"] / by[(m, "ours")]["median_ms"] for m in modes},
            {m: by[(m, "ours")]["rms_error_m"] / by[(m, "pink")]["rms_error_m"] for m in modes})


def _markdown(out):
    lines = ["| mode | solver | median ms | p99 ms | rms err mm | max err mm | pos/vel/acc "
             "violations | min clearance mm (below bound) | success |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in out["rows"]:
        clear = (f"{1e3 * r['min_clearance_m']:.1f} ({r['below_bound']})"
                 if "min_clearance_m" in r else "-")
        lines.append(
            f"| {r['mode']} | {r['solver']} | {r['median_ms']:.3f} | {r['p99_ms']:.3f} | "
            f"{1e3 * r['rms_error_m']:.2f} | {1e3 * r['max_error_m']:.2f} | "
            f"{r['position_violations']}/{r['velocity_violations']}/"
            f"{r['acceleration_violations']} | {clear} | {r['success_rate']:.3f} |")
    speed = ", ".join(f"{m} {v:.2f}x" for m, v in out["pink_over_ours_median"].items())
    error = ", ".join(f"{m} {v:.2f}" for m, v in out["ours_over_pink_rms_error"].items())
    lines.append(f"\nPink/ours median step time: {speed}. Ours/Pink rms tracking error: "
                 f"{error}. Steps interleaved ours/Pink; clearance bound "
                 f"{1e3 * CONFIG.clearance_m:.0f} mm (ours only avoids: Pink has no barrier "
                 f"here); acceleration limit {ACC} rad/s^2; load "
                 f"{out['machine']['load_average']} (2 cores shared with other jobs).")
    return "\n".join(lines) + "\n"


def _plot(runs, group, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    views = [(kind, (0, 1)) for kind in runs] + [("scene", (0, 2))]  # + the scene's side
    fig, axes = plt.subplots(1, len(views), figsize=(5 * len(views), 5))
    for ax, (kind, (i, j)) in zip(np.atleast_1d(axes), views):
        targets, _, qs, _, _ = runs[kind]
        tgt = np.array([T.translation for T in targets])
        ax.plot(tgt[:, i], tgt[:, j], "k--", label="target")
        for name, q in qs.items():
            p = np.array([group.fk(x, TIP).translation for x in q[::5]])
            ax.plot(p[:, i], p[:, j], label=name)
        ax.set_title(f"{kind}: tip path ({'top' if j == 1 else 'side'} view)")
        ax.set_xlabel("x [m]")
        ax.set_ylabel("y [m]" if j == 1 else "z [m]")
        ax.axis("equal")
        ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def merge_rows(rows, path=RESULTS / "servo.json"):
    """Append ``rows`` (dicts with robot/solver/mode/...) to the results JSON, e.g. the node's.

    The node's rate/jitter benchmark (a separate script) calls this after this one ran, so
    one servo.json holds the step and the node figures.
    """
    out = json.loads(Path(path).read_text())
    keys = {(r["robot"], r["solver"], r["mode"]) for r in rows}
    out["rows"] = [r for r in out["rows"]
                   if (r["robot"], r["solver"], r["mode"]) not in keys] + list(rows)
    Path(path).write_text(json.dumps(out, indent=1))


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="one lap / 2 s per task")
    parser.add_argument("--out", default=str(RESULTS), help="results folder")
    parser.add_argument("--whole-body", action="store_true",
                        help="only the whole-body tasks (servo_wholebody.py)")
    args = parser.parse_args()
    out_dir = Path(args.out)
    out_dir.mkdir(exist_ok=True)
    if args.whole_body:
        print(servo_wholebody.markdown(servo_wholebody.main(out_dir, args.quick, machine())))
        return
    robot, group = robots.load_group("panda")
    checker = bench_checker(robot)
    laps = 800 if args.quick else 3 * 785
    rows, runs = [], {}
    for kind, steps in (("circle", laps), ("step", 500), ("scene", laps)):
        use = checker if kind == "scene" else None
        runs[kind] = _run(group, kind, steps, use)
        rows += [_row(group, kind, name, runs[kind], use) for name in ("ours", "pink")]
    speed, error = _ratios(rows)
    out = {"machine": machine(), "rows": rows, "pink_over_ours_median": speed,
           "ours_over_pink_rms_error": error, "quick": args.quick, "dt_s": DT,
           "config": {k: getattr(CONFIG, k) for k in CONFIG.__dataclass_fields__}}
    results_files.write(out_dir, "servo", out, _markdown(out),
                        lambda path: _plot({k: runs[k] for k in ("circle", "scene")}, group, path),
                        echo=True)
    print(servo_wholebody.markdown(servo_wholebody.main(out_dir, args.quick, out["machine"])))


if __name__ == "__main__":
    main()
