"""Markdown table and plot of the pose benchmark (ik_bench.py): one row per arm.

The table puts each arm on a line (family, joints), one cell per solver (success % /
median / p95 / mean ms), the ratio of our ``lm`` median to TRAC-IK's in the same run, and
a summary of what the issue-12 targets ask (>= 99.9 %, median <= TRAC-IK's, the full robot
within 1.3x of the chain alone).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from machine import pyplot

SUCCESS_TARGET = 0.999
CHAIN_RATIO_TARGET = 1.3


def _cell(r) -> str:
    if r is None:
        return ""
    if r.get("skipped"):
        return f"skipped: {r['skipped']}"
    return (f"{100 * r['success_rate']:.2f} % / {r['median_ms']:.3f} / {r['p95_ms']:.3f} / "
            f"{r['mean_ms']:.3f}")


def _ratio(cell, arm, ours="lm", ref="trac_ik"):
    a, b = cell.get((arm, ours)), cell.get((arm, ref))
    if not a or not b or a.get("skipped") or b.get("skipped"):
        return None
    return a["median_ms"] / b["median_ms"]


def pose_table(rows, meta) -> list:
    """Lines of the per-arm table and its summary."""
    rows = [r for r in rows if r.get("mode", "pose") == "pose"]
    arms = list(dict.fromkeys(r["robot"] for r in rows))
    solvers = list(dict.fromkeys(r["solver"] for r in rows))
    cell = {(r["robot"], r["solver"]): r for r in rows}
    info = {r["robot"]: r for r in rows}
    repeat = meta["repeat"]
    how = (f"each target's time is the fastest of {repeat} passes (same targets, same random "
           f"seeds; pass k of every solver before pass k + 1 of any), success averaged over "
           f"the passes" if repeat > 1 else "one pass")
    lines = [f"IK benchmark, {meta['date']}, N={meta['n']} per arm, 5 ms budget, {how}; "
             f"cells: success % / median / p95 / mean ms; {meta['machine']['cpu']}, "
             f"{meta['machine']['cores']} cores (1-min load average "
             f"{meta['machine']['load_average'][0]:.2f} at start, "
             f"{meta['machine']['load_average_end'][0]:.2f} at end; wall-clock times).", "",
             "| arm | family | joints | " + " | ".join(solvers) + " | lm / trac_ik median |",
             "|---|---|---|" + "---|" * (len(solvers) + 1)]
    for arm in arms:
        ratio = _ratio(cell, arm)
        lines.append(f"| {arm} | {info[arm].get('family', '')} | {info[arm].get('joints', '')} | "
                     + " | ".join(_cell(cell.get((arm, s))) for s in solvers)
                     + f" | {'' if ratio is None else f'{ratio:.2f}'} |")
    return lines + [""] + summary(cell, arms)


def summary(cell, arms) -> list:
    """Return the targets' figures: arms below 99.9 %, arms where lm is slower."""
    lm = [cell[(a, "lm")] for a in arms
          if (a, "lm") in cell and not cell[(a, "lm")].get("skipped")]
    if not lm:
        return []
    below = [f"{r['robot']} {100 * r['success_rate']:.2f} %" for r in lm
             if r["success_rate"] < SUCCESS_TARGET]
    ratios = {a: _ratio(cell, a) for a in arms}
    slower = [f"{a} {r:.2f}" for a, r in ratios.items() if r is not None and r > 1.0]
    known = [r for r in ratios.values() if r is not None]
    out = [f"lm: success >= {100 * SUCCESS_TARGET:.1f} % on {len(lm) - len(below)} of {len(lm)} "
           f"arms" + (f" (below: {', '.join(below)})" if below else "") + "."]
    if known:
        out.append(f"lm median / TRAC-IK median: {min(known):.2f}-{max(known):.2f} "
                   f"(median of arms {float(np.median(known)):.2f}); slower than TRAC-IK on "
                   f"{len(slower)} of {len(known)} arms" + (f": {', '.join(slower)}"
                                                            if slower else "") + ".")
    return out


def chain_table(rows) -> list:
    """Lines of the full-robot vs chain-alone comparison ([] without such rows)."""
    rows = [r for r in rows if r.get("mode") in ("full_robot", "chain_alone")]
    if not rows:
        return []
    cell = {(r["robot"], r["mode"]): r for r in rows}
    arms = list(dict.fromkeys(r["robot"] for r in rows))
    lines = ["Full robot vs the same chain loaded alone (lm, same targets in the chain's base "
             "frame, interleaved target by target): median ms (success %), ratio of medians "
             f"(target <= {CHAIN_RATIO_TARGET}).", "",
             "| arm | joints of the full model | full robot | chain alone | ratio |",
             "|---|---|---|---|---|"]
    worst = 0.0
    for arm in arms:
        full, alone = cell[(arm, "full_robot")], cell[(arm, "chain_alone")]
        ratio = full["median_ms"] / alone["median_ms"]
        worst = max(worst, ratio)
        lines.append(f"| {arm} | {full.get('model_joints', '')} | {full['median_ms']:.3f} "
                     f"({100 * full['success_rate']:.1f} %) | {alone['median_ms']:.3f} "
                     f"({100 * alone['success_rate']:.1f} %) | {ratio:.2f} |")
    return lines + ["", f"Largest ratio {worst:.2f} (target <= {CHAIN_RATIO_TARGET})."]


def write_markdown(path: Path, rows, meta) -> None:
    """Write the pose table and the chain comparison."""
    lines = pose_table(rows, meta)
    chain = chain_table(rows)
    if chain:
        lines += [""] + chain
    path.write_text("\n".join(lines) + "\n")


def write_plot(path: Path, rows) -> None:
    """Success and median per arm and solver (log time axis)."""
    plt = pyplot()
    if plt is None:
        return
    rows = [r for r in rows if not r.get("skipped") and r.get("mode", "pose") == "pose"]
    arms = list(dict.fromkeys(r["robot"] for r in rows))
    solvers = list(dict.fromkeys(r["solver"] for r in rows))
    fig, axes = plt.subplots(2, 1, figsize=(max(8, 0.45 * len(arms) + 3), 7), sharex=True)
    width = 0.8 / max(1, len(solvers))
    for k, s in enumerate(solvers):
        xs = np.arange(len(arms)) + k * width
        get = {r["robot"]: r for r in rows if r["solver"] == s}
        axes[0].bar(xs, [100 * get[a]["success_rate"] if a in get else 0 for a in arms],
                    width, label=s)
        axes[1].bar(xs, [get[a]["median_ms"] if a in get else 0 for a in arms], width,
                    label=s)
    axes[0].set_ylim(95, 100.2)
    axes[0].axhline(100 * SUCCESS_TARGET, color="k", lw=0.6, ls="--")
    axes[0].set_title("success [%] (dashed: 99.9 %)")
    axes[1].set_title("median time [ms]")
    axes[1].set_xticks(np.arange(len(arms)) + 0.4 - width / 2)
    axes[1].set_xticklabels(arms, rotation=70, fontsize=7)
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
