"""Servo (differential IK) step: ours (core.servo) vs Pink, interleaved on the same task.

Panda at 250 Hz: a 0.1 m-radius circle at 0.2 m/s and a 0.1 m step.  Per step: wall time
of the step call (median, p99), tip position error by independent full-model FK after a
1 s transient, and limit violations (position, velocity by finite differences) counted.
Both controllers integrate their own commands; steps alternate ours/Pink.
Writes bench/results/servo.json, servo.md and servo.png.
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
from ros2_ik.core import robots  # noqa: E402
from ros2_ik.core.servo import Servo, ServoConfig  # noqa: E402

DT, TIP, GAIN = 0.004, "panda_hand", 20.0
RESULTS = ROOT / "results"


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


def _trajectory(T0, kind, steps):
    if kind == "step":
        T = pin.SE3(T0.rotation, T0.translation + np.array([-0.05, -0.05, -0.07]))
        return [T] * steps
    r, w = 0.1, 0.2 / 0.1
    c = T0.translation - np.array([r, 0.0, 0.0])
    return [pin.SE3(T0.rotation, c + r * np.array([np.cos(w * t), np.sin(w * t), 0.0]))
            for t in np.arange(1, steps + 1) * DT]


def _run(group, kind, steps):
    q0 = group.mid_configuration()
    q0[3] = -1.5
    targets = _trajectory(group.fk(q0, TIP), kind, steps)
    ours = Servo(group, TIP, ServoConfig(gain=GAIN))
    pink_servo = PinkServo(group, q0)
    runs = {"ours": (lambda q, T: ours.step_pose(q, T, DT).q_next),
            "pink": pink_servo.step}
    qs = {k: [q0.copy()] for k in runs}
    times = {k: [] for k in runs}
    for T in targets:
        for name, fn in runs.items():  # interleaved, same target each step
            t0 = time.perf_counter()
            q = fn(qs[name][-1], T)
            times[name].append(time.perf_counter() - t0)
            qs[name].append(q)
    return targets, {k: np.array(v) for k, v in qs.items()}, times


def _row(group, kind, name, targets, qs, times):
    v = np.diff(qs, axis=0) / DT
    viol = int(((qs < group.lower - 1e-9) | (qs > group.upper + 1e-9)).any(axis=1).sum()
               + (np.abs(v) > group.velocity_limits + 1e-7).any(axis=1).sum())
    idx = range(250, len(targets), 5)  # after the 1 s transient
    err = np.array([np.linalg.norm(group.fk(qs[i + 1], TIP).translation
                                   - targets[i].translation) for i in idx])
    ms = np.array(times) * 1e3
    return {"robot": "panda", "solver": name, "mode": kind, "success_rate": float(viol == 0),
            "median_ms": float(np.median(ms)), "p95_ms": float(np.percentile(ms, 95)),
            "p99_ms": float(np.percentile(ms, 99)),
            "rms_error_m": float(np.sqrt(np.mean(err ** 2))),
            "max_error_m": float(err.max()), "violations": viol, "steps": len(targets)}


def _plot(targets, qs, group, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    tgt = np.array([T.translation for T in targets])
    fig, ax = plt.subplots(figsize=(5, 5))
    ax.plot(tgt[:, 0], tgt[:, 1], "k--", label="target")
    for name, q in qs.items():
        p = np.array([group.fk(x, TIP).translation for x in q[::5]])
        ax.plot(p[:, 0], p[:, 1], label=name)
    ax.set_xlabel("x [m]")
    ax.set_ylabel("y [m]")
    ax.axis("equal")
    ax.legend()
    fig.savefig(path, dpi=100)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="one lap / 2 s only")
    args = parser.parse_args()
    group = robots.load_group("panda")[1]
    steps = 800 if args.quick else 3 * 785
    rows, circle = [], None
    for kind in ("circle", "step"):
        targets, qs, times = _run(group, kind, steps if kind == "circle" else 500)
        rows += [_row(group, kind, n, targets, qs[n], times[n]) for n in qs]
        if kind == "circle":
            circle = (targets, qs)
    by = {(r["mode"], r["solver"]): r for r in rows}
    ratios = {k: by[(k, "pink")]["median_ms"] / by[(k, "ours")]["median_ms"]
              for k in ("circle", "step")}
    RESULTS.mkdir(exist_ok=True)
    out = {"machine": machine(), "rows": rows, "pink_over_ours_median": ratios,
           "quick": args.quick, "dt_s": DT}
    (RESULTS / "servo.json").write_text(json.dumps(out, indent=1))
    lines = ["| mode | solver | median ms | p99 ms | rms err mm | max err mm | violations |",
             "|---|---|---|---|---|---|---|"]
    lines += [f"| {r['mode']} | {r['solver']} | {r['median_ms']:.3f} | {r['p99_ms']:.3f} | "
              f"{1e3 * r['rms_error_m']:.2f} | {1e3 * r['max_error_m']:.2f} | "
              f"{r['violations']} |" for r in rows]
    lines.append(f"\nPink/ours median time: {ratios}; load {out['machine']['load_average']}")
    (RESULTS / "servo.md").write_text("\n".join(lines) + "\n")
    _plot(*circle, group, RESULTS / "servo.png")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
