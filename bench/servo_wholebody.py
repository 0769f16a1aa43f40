"""Whole-body servo: ours (core.servo.whole_body) vs Pink, interleaved on the same tasks.

Humanoids of example-robot-data on a free-flyer (talos, g1), at 250 Hz (dt = 4 ms), from
their standing configuration: both soles held (6D), the CoM inside the support polygon of
the sole corners with a 2 cm margin, the left hand tracking a moving target:

* ``circle``: a 0.1 m-radius circle at 0.2 m/s in the hand's frontal plane;
* ``reach``: a target 0.25 m forward and 0.2 m down, reached in 1 s and held (the CoM
  must shift over the polygon to reach it).

Pink (pin-pink, daqp backend) runs the same tasks the way its users write them: the soles
as FrameTasks given to ``solve_ik(constraints=...)`` (equalities, as ours), a ComTask at
the starting CoM (x, y only: Pink has no support-polygon limit), the hand FrameTask and a
small PostureTask, its default configuration and velocity limits.

Per row, measured outside both controllers on the configurations they integrate: the wall
time of each step call (median, p95, p99 [ms]); the hand position error (rms after 1 s,
max [m]); the largest sole drift [m]; the CoM's smallest margin inside the polygon [m]
(pinocchio's centerOfMass on a fresh Data) and the steps where it is under 2 cm - 1 mm;
joint position-limit violations.  Then ours alone in a 250 Hz loop on its own thread
(node/periodic.py at SCHED_FIFO priority 40, as the node's servo runs) for ``loop_s``
seconds: the achieved period's jitter |period - 4 ms| (p99 [ms]).
"""
from __future__ import annotations

import logging
import time
from pathlib import Path

import numpy as np
import pinocchio as pin

import results_files
from ros2_ik.core import robots
from ros2_ik.core.servo.whole_body import Contact, WholeBodyConfig, WholeBodyServo
from ros2_ik.node.periodic import PeriodicThread

DT, MARGIN = 0.004, 0.02
#: SCHED_FIFO priority of the loop thread: the node's servo_thread_priority default.
PRIORITY = 40
#: robot: URDF, SRDF (its standing configuration), soles, sole half-size [m], hand.
HUMANOIDS = {
    "talos": ("talos_data/robots/talos_full_v2.urdf", "talos_data/srdf/talos.srdf",
              "half_sitting", ("left_sole_link", "right_sole_link"), (0.10, 0.05),
              "gripper_left_base_link"),
    "g1": ("g1_description/urdf/g1_29dof_rev_1_0.urdf", None, None,
           ("left_ankle_roll_link", "right_ankle_roll_link"), (0.06, 0.03),
           "left_rubber_hand"),
}
CONFIG = WholeBodyConfig(com_margin_m=MARGIN)


def load(name: str):
    """Free-flyer model, standing configuration (feet on z = 0), contacts, hand frame."""
    urdf, srdf, state, soles, (hx, hy), hand = HUMANOIDS[name]
    model = pin.buildModelFromUrdf(str(robots.data_dir() / urdf), pin.JointModelFreeFlyer())
    q0 = pin.neutral(model)
    if srdf:
        pin.loadReferenceConfigurations(model, str(robots.data_dir() / srdf), False)
        q0 = np.array(model.referenceConfigurations[state])
    else:  # g1: knees and hips bent a little, as it stands
        for joint, value in (("hip_pitch", -0.3), ("knee", 0.6), ("ankle_pitch", -0.3),
                             ("elbow", 0.6)):
            for side in ("left", "right"):
                j = model.joints[model.getJointId(f"{side}_{joint}_joint")]
                q0[j.idx_q] = value
    data = model.createData()
    pin.framesForwardKinematics(model, data, q0)
    q0[2] -= data.oMf[model.getFrameId(soles[0])].translation[2]  # soles on the floor
    corners = np.array([[sx * hx, sy * hy, 0.0] for sx in (1, -1) for sy in (1, -1)])
    return model, q0, [Contact(s, corners) for s in soles], hand


def targets(T0: pin.SE3, kind: str, steps: int):
    """Hand targets per step (world frame)."""
    t = np.arange(1, steps + 1) * DT
    if kind == "circle":
        r, w = 0.1, 0.2 / 0.1
        offsets = np.stack([np.zeros_like(t), r * np.sin(w * t), r * (np.cos(w * t) - 1)], 1)
    else:
        s = np.clip(t / 1.0, 0.0, 1.0)[:, None]
        offsets = s * np.array([0.25, 0.0, -0.2])
    return [pin.SE3(T0.rotation, T0.translation + o) for o in offsets]


class PinkWholeBody:
    """Pink: sole FrameTasks as equality constraints, ComTask (xy), hand FrameTask, posture."""

    def __init__(self, model, q0, contacts, hand):
        import pink
        # Pink logs a warning on every update where a joint is 1e-6 past a limit (its own
        # integration overshoots): off, so that the timing is its solve, not the log.
        logging.getLogger().setLevel(logging.ERROR)
        from pink.tasks import ComTask, FrameTask, PostureTask
        self.pink, self.model = pink, model
        self.config = pink.Configuration(model, model.createData(), q0.copy())
        self.hand = FrameTask(hand, position_cost=1.0, orientation_cost=0.3,
                              lm_damping=1e-3, gain=CONFIG.hand_gain * DT)
        self.feet = [FrameTask(c.frame, position_cost=1.0, orientation_cost=1.0,
                               gain=CONFIG.contact_gain * DT) for c in contacts]
        for task in self.feet:
            task.set_target_from_configuration(self.config)
        com = ComTask(cost=[1.0, 1.0, 0.0], gain=CONFIG.com_gain * DT)
        com.set_target_from_configuration(self.config)
        posture = PostureTask(cost=1e-3, gain=DT)
        posture.set_target(q0)
        self.tasks = [self.hand, com, posture]

    def step(self, q, T):
        self.config.update(q)
        self.hand.set_target(T)
        v = self.pink.solve_ik(self.config, self.tasks, DT, solver="daqp", damping=1e-6,
                               constraints=self.feet, safety_break=False)
        return pin.integrate(self.model, q, v * DT)


def run(name: str, kind: str, steps: int):
    """Interleave ours and Pink on the same targets: (targets, configurations, step times)."""
    model, q0, contacts, hand = load(name)
    ours = WholeBodyServo(model, hand, contacts, CONFIG, posture=q0)
    ours.hold(q0)
    data = model.createData()
    pin.framesForwardKinematics(model, data, q0)
    goal = targets(data.oMf[model.getFrameId(hand)], kind, steps)
    pink_wb = PinkWholeBody(model, q0, contacts, hand)
    ours.step(q0, goal[0], DT)  # first calls out of the timing (both)
    pink_wb.step(q0, goal[0])
    ours.reset()
    runs = {"ours": lambda q, T: ours.step(q, T, DT).q_next, "pink": pink_wb.step}
    qs = {k: [q0.copy()] for k in runs}
    times = {k: [] for k in runs}
    for T in goal:
        for solver, fn in runs.items():
            t0 = time.perf_counter()
            q = fn(qs[solver][-1], T)
            times[solver].append(time.perf_counter() - t0)
            qs[solver].append(q)
    return (model, contacts, hand, ours.polygon, goal,
            {k: np.array(v) for k, v in qs.items()}, times)


def measure(model, contacts, hand, polygon, goal, qs, q0) -> dict:
    """Independent figures of one controller's configurations (fresh Data, full FK)."""
    data = model.createData()
    fid = model.getFrameId(hand)
    feet = [model.getFrameId(c.frame) for c in contacts]
    pin.framesForwardKinematics(model, data, q0)
    T_feet0 = [data.oMf[f].copy() for f in feet]
    A, b = polygon
    err, drift, margin, limits = [], 0.0, [], 0
    for q, T in zip(qs[1:], goal):
        pin.framesForwardKinematics(model, data, q)
        err.append(np.linalg.norm(data.oMf[fid].translation - T.translation))
        drift = max(drift, max(np.linalg.norm(data.oMf[f].translation - T0.translation)
                               for f, T0 in zip(feet, T_feet0)))
        com = pin.centerOfMass(model, data, q, False)
        margin.append(float(np.min(b - A @ com[:2])))
        limits += bool(np.any(q[7:] < model.lowerPositionLimit[7:] - 1e-9)
                       or np.any(q[7:] > model.upperPositionLimit[7:] + 1e-9))
    err, margin = np.array(err), np.array(margin)
    settled = err[int(1.0 / DT):]
    return {"rms_error_m": float(np.sqrt(np.mean(settled ** 2))),
            "max_error_m": float(settled.max()), "max_foot_drift_m": float(drift),
            "min_com_margin_m": float(margin.min()),
            "com_below_margin": int(np.sum(margin < MARGIN - 1e-3)),
            "limit_violations": int(limits)}


def rows(name: str, kind: str, steps: int) -> list:
    """One row per controller for robot ``name`` and task ``kind``."""
    model, contacts, hand, polygon, goal, qs, times = run(name, kind, steps)
    out = []
    for solver in ("ours", "pink"):
        ms = np.array(times[solver]) * 1e3
        row = {"robot": f"{name}_whole_body", "solver": solver, "mode": kind,
               "nv": model.nv, "steps": steps, "median_ms": float(np.median(ms)),
               "p95_ms": float(np.percentile(ms, 95)), "p99_ms": float(np.percentile(ms, 99))}
        row.update(measure(model, contacts, hand, polygon, goal, qs[solver], qs[solver][0]))
        row["success_rate"] = float(row["com_below_margin"] == 0 and
                                    row["limit_violations"] == 0 and
                                    row["max_foot_drift_m"] < 1e-3)
        out.append(row)
    return out


def loop_jitter(name: str, seconds: float) -> dict:
    """Ours at 250 Hz on a PeriodicThread (circle task) for ``seconds``: period jitter."""
    model, q0, contacts, hand = load(name)
    servo = WholeBodyServo(model, hand, contacts, CONFIG, posture=q0)
    servo.hold(q0)
    data = model.createData()
    pin.framesForwardKinematics(model, data, q0)
    goal = targets(data.oMf[model.getFrameId(hand)], "circle", int(seconds / DT) + 10)
    state = {"q": q0, "k": 0, "stamps": [], "step_s": []}

    def tick():
        state["stamps"].append(time.monotonic())
        t0 = time.perf_counter()
        state["q"] = servo.step(state["q"], goal[min(state["k"], len(goal) - 1)], DT).q_next
        state["step_s"].append(time.perf_counter() - t0)
        state["k"] += 1
    loop = PeriodicThread(DT, tick, "whole_body_servo", priority=PRIORITY)
    loop.wait_started()
    time.sleep(seconds)
    loop.stop()
    period_ms = np.diff(state["stamps"]) * 1e3
    jitter = np.abs(period_ms - DT * 1e3)
    return {"robot": f"{name}_whole_body", "seconds": seconds, "ticks": len(period_ms) + 1,
            "rate_hz": float(1e3 / np.mean(period_ms)),
            "period_median_ms": float(np.median(period_ms)),
            "jitter_p99_ms": float(np.percentile(jitter, 99)),
            "jitter_max_ms": float(jitter.max()), "skipped": loop.skipped,
            "step_p99_ms": float(np.percentile(state["step_s"], 99) * 1e3),
            "priority": PRIORITY, "priority_error": loop.priority_error}


def markdown(result: dict) -> str:
    """Return the whole-body table, the speed ratios and the loop's jitter (markdown)."""
    lines = ["| robot | mode | solver | median ms | p99 ms | rms err mm | max foot drift mm | "
             "min CoM margin mm (steps < 19 mm) | limit violations |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in result["rows"]:
        lines.append(
            f"| {r['robot']} | {r['mode']} | {r['solver']} | {r['median_ms']:.3f} | "
            f"{r['p99_ms']:.3f} | {1e3 * r['rms_error_m']:.2f} | "
            f"{1e3 * r['max_foot_drift_m']:.3f} | {1e3 * r['min_com_margin_m']:.1f} "
            f"({r['com_below_margin']}) | {r['limit_violations']} |")
    speed = ", ".join(f"{k} {v:.2f}x" for k, v in result["pink_over_ours_median"].items())
    lines.append(f"\nPink/ours median step time: {speed}.\n")
    lines += ["| robot | loop s | rate Hz | period median ms | jitter p99 ms | jitter max ms "
              "| skipped | step p99 ms |", "|---|---|---|---|---|---|---|---|"]
    for j in result["loop"]:
        lines.append(f"| {j['robot']} | {j['seconds']:g} | {j['rate_hz']:.1f} | "
                     f"{j['period_median_ms']:.3f} | {j['jitter_p99_ms']:.3f} | "
                     f"{j['jitter_max_ms']:.3f} | {j['skipped']} | {j['step_p99_ms']:.3f} |")
    lines.append(f"\nSteps interleaved ours/Pink at {1 / DT:.0f} Hz; CoM margin {MARGIN} m "
                 f"(Pink holds its CoM at the start instead: it has no polygon limit); load "
                 f"{result['machine']['load_average']} (2 cores shared with other jobs).")
    return "\n".join(lines) + "\n"


def ratios(all_rows: list) -> dict:
    """Pink/ours median step time per robot and mode."""
    by = {(r["robot"], r["mode"], r["solver"]): r["median_ms"] for r in all_rows}
    return {f"{robot}/{mode}": by[(robot, mode, "pink")] / by[(robot, mode, "ours")]
            for robot, mode, solver in by if solver == "ours"}


def plot(name: str, kind: str, steps: int, path: Path) -> None:
    """Hand path vs target (x-z side view) and the CoM in the support polygon (top view)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    model, contacts, hand, (A, b), goal, qs, _ = run(name, kind, steps)
    data = model.createData()
    fid = model.getFrameId(hand)
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 5))
    tgt = np.array([T.translation for T in goal])
    ax1.plot(tgt[:, 0], tgt[:, 2], "k--", label="target")
    for solver, q in qs.items():
        hand_p, com = [], []
        for x in q[::5]:
            pin.framesForwardKinematics(model, data, x)
            hand_p.append(data.oMf[fid].translation.copy())
            com.append(pin.centerOfMass(model, data, x, False)[:2].copy())
        hand_p, com = np.array(hand_p), np.array(com)
        ax1.plot(hand_p[:, 0], hand_p[:, 2], label=solver)
        ax2.plot(com[:, 0], com[:, 1], label=f"CoM {solver}")
    vertices = _vertices(A, b)
    ax2.fill(vertices[:, 0], vertices[:, 1], alpha=0.2, label="support polygon")
    ax1.set(title=f"{name} {kind}: hand (side view)", xlabel="x [m]", ylabel="z [m]")
    ax2.set(title="CoM (top view)", xlabel="x [m]", ylabel="y [m]")
    for ax in (ax1, ax2):
        ax.axis("equal")
        ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def _vertices(A: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Vertices of the polygon ``A p <= b`` (edges in order): consecutive edge crossings."""
    out = [np.linalg.solve(np.array([A[i - 1], A[i]]), np.array([b[i - 1], b[i]]))
           for i in range(len(b))]
    return np.array(out)


def main(out_dir: Path, quick: bool, machine_info: dict) -> dict:
    """Run every humanoid and task, the loop, write servo_whole_body.{json,md,png}."""
    steps = 750 if quick else 2500
    all_rows = [row for name in HUMANOIDS for kind in ("circle", "reach")
                for row in rows(name, kind, steps)]
    loop = [loop_jitter(name, 10.0 if quick else 60.0) for name in HUMANOIDS]
    result = {"machine": machine_info, "rows": all_rows, "loop": loop,
              "pink_over_ours_median": ratios(all_rows), "quick": quick, "dt_s": DT,
              "targets": {"jitter_p99_ms_max": 2.0, "pink_over_ours_median_min": 2.0},
              "config": {k: getattr(CONFIG, k) for k in CONFIG.__dataclass_fields__}}
    results_files.write(out_dir, "servo_whole_body", result, markdown(result),
                        lambda path: plot("talos", "reach", min(steps, 750), path))
    return result
