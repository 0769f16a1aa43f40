"""Servo (differential IK) step: ours (core.servo) vs Pink, interleaved on the same task.

Panda at 250 Hz: a 0.1 m-radius circle at 0.2 m/s and a 0.1 m step.  Per step: wall time
of the step call (median, p99), tip position error by independent full-model FK after a
1 s transient, and limit violations (position; velocity and acceleration by finite
differences) counted.  Both controllers integrate their own commands; steps alternate
ours/Pink.  Then ours alone with collision avoidance (Pink 4.4 has no collision barrier
on this setup): the circle in bench/panda_scene.yaml, and a step whose straight path runs
through a 3 cm ball added to that scene; the clearance of every command is re-measured
by the checker's own ``min_distance`` (independent of the dampers), and commands below
the 2 cm bound are counted.
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
CLEARANCE_M, INFLUENCE_M = 0.02, 0.1
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


def _start(group):
    q0 = group.mid_configuration()
    q0[3] = -1.5
    return q0


def _run(group, kind, steps):
    q0 = _start(group)
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


def _scene_checker(robot, ball_center=None):
    """The bench scene (and a 3 cm ball at ``ball_center`` [m]) around the Panda."""
    from ros2_ik.core.collision import CollisionChecker, PlanningScene, load_scene_yaml
    from ros2_ik.core.collision.scene import SceneObject, Sphere, pose_from_xyz_quat
    scene = PlanningScene.for_model(robot.model)
    scene.add_all(load_scene_yaml(str(ROOT / "panda_scene.yaml"), allowed_dirs=[str(ROOT)]))
    if ball_center is not None:
        scene.add(SceneObject("ball", [Sphere(0.03)],
                              T_frame_object=pose_from_xyz_quat(ball_center)))
    return CollisionChecker.from_urdf(robot.model, robots.urdf_text("panda"),
                                      robots.srdf_text("panda"), scene)


def _run_scene(robot, group, kind, steps):
    """Ours with dampers: ``circle`` in the bench scene, ``obstacle``: a ball in the path."""
    q0 = _start(group)
    T0 = group.fk(q0, TIP)
    if kind == "circle_scene":
        targets, checker = _trajectory(T0, "circle", steps), _scene_checker(robot)
    else:
        goal = pin.SE3(T0.rotation, T0.translation + np.array([0.0, 0.3, 0.0]))
        targets = [goal] * steps
        checker = _scene_checker(robot, T0.translation + np.array([0.0, 0.15, 0.0]))
    servo = Servo(group, TIP, ServoConfig(gain=GAIN, clearance_m=CLEARANCE_M,
                                          influence_m=INFLUENCE_M), checker=checker)
    qs, times = [q0.copy()], []
    for T in targets:
        t0 = time.perf_counter()
        qs.append(servo.step_pose(qs[-1], T, DT).q_next)
        times.append(time.perf_counter() - t0)
    clearance = np.array([checker.min_distance(group.to_full_q(q)).distance_m for q in qs])
    return targets, np.array(qs), times, clearance


def _violations(group, qs, acceleration_limit):
    """Commands outside the position limits, velocity and acceleration limits (FD)."""
    v = np.diff(qs, axis=0) / DT
    a = np.diff(np.vstack([np.zeros(group.n), v]), axis=0) / DT
    return {"position_violations": int(((qs < group.lower - 1e-9)
                                        | (qs > group.upper + 1e-9)).any(axis=1).sum()),
            "velocity_violations": int((np.abs(v) > group.velocity_limits
                                        + 1e-7).any(axis=1).sum()),
            "acceleration_violations": int((np.abs(a) > acceleration_limit
                                            + 1e-6).any(axis=1).sum())}


def _row(group, kind, name, targets, qs, times, clearance=None):
    counts = _violations(group, qs, ServoConfig().acceleration_limit if name == "ours"
                         else np.inf)
    viol = sum(counts.values())
    idx = range(250, len(targets), 5)  # after the 1 s transient
    err = np.array([np.linalg.norm(group.fk(qs[i + 1], TIP).translation
                                   - targets[i].translation) for i in idx])
    ms = np.array(times) * 1e3
    row = {"robot": "panda", "solver": name, "mode": kind,
           "success_rate": float(viol == 0 and (clearance is None
                                                or clearance.min() >= CLEARANCE_M - 1e-4)),
           "median_ms": float(np.median(ms)), "p95_ms": float(np.percentile(ms, 95)),
           "p99_ms": float(np.percentile(ms, 99)),
           "rms_error_m": float(np.sqrt(np.mean(err ** 2))),
           "max_error_m": float(err.max()), "final_error_m": float(np.linalg.norm(
               group.fk(qs[-1], TIP).translation - targets[-1].translation)),
           "violations": viol, **counts, "steps": len(targets)}
    if clearance is not None:
        row.update(min_clearance_m=float(clearance.min()), clearance_bound_m=CLEARANCE_M,
                   below_bound=int((clearance < CLEARANCE_M).sum()))
    return row


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
    robot, group = robots.load_group("panda")
    steps = 800 if args.quick else 3 * 785
    rows, circle = [], None
    for kind in ("circle", "step"):
        targets, qs, times = _run(group, kind, steps if kind == "circle" else 500)
        rows += [_row(group, kind, n, targets, qs[n], times[n]) for n in qs]
        if kind == "circle":
            circle = (targets, qs)
    for kind in ("circle_scene", "obstacle"):
        targets, qs, times, clearance = _run_scene(robot, group, kind,
                                                   steps if kind == "circle_scene" else 750)
        rows.append(_row(group, kind, "ours", targets, qs, times, clearance))
    by = {(r["mode"], r["solver"]): r for r in rows}
    ratios = {k: by[(k, "pink")]["median_ms"] / by[(k, "ours")]["median_ms"]
              for k in ("circle", "step")}
    errors = {k: by[(k, "ours")]["rms_error_m"] / max(by[(k, "pink")]["rms_error_m"], 1e-12)
              for k in ("circle", "step")}
    RESULTS.mkdir(exist_ok=True)
    out = {"machine": machine(), "rows": rows, "pink_over_ours_median": ratios,
           "ours_over_pink_rms_error": errors, "quick": args.quick, "dt_s": DT}
    (RESULTS / "servo.json").write_text(json.dumps(out, indent=1))
    lines = ["| mode | solver | median ms | p99 ms | rms err mm | final err mm | "
             "violations (pos/vel/acc) | min clearance mm |",
             "|---|---|---|---|---|---|---|---|"]
    lines += [f"| {r['mode']} | {r['solver']} | {r['median_ms']:.3f} | {r['p99_ms']:.3f} | "
              f"{1e3 * r['rms_error_m']:.2f} | {1e3 * r['final_error_m']:.2f} | "
              f"{r['position_violations']}/{r['velocity_violations']}/"
              f"{r['acceleration_violations']} | "
              + (f"{1e3 * r['min_clearance_m']:.1f} (bound {1e3 * CLEARANCE_M:.0f})"
                 if "min_clearance_m" in r else "") + " |" for r in rows]
    lines.append("\nPink / ours median step time: " + ", ".join(
        f"{k} {v:.2f}x" for k, v in ratios.items()) + "; ours / Pink rms error: " + ", ".join(
        f"{k} {v:.3f}" for k, v in errors.items())
        + f"; load {out['machine']['load_average']}")
    (RESULTS / "servo.md").write_text("\n".join(lines) + "\n")
    _plot(*circle, group, RESULTS / "servo.png")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
