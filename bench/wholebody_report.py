"""Markdown table and plot of the whole-body benchmark (``wholebody_bench.py``).

The summary table (one row per robot: each method's verified success, median and p95, the
ratios Drake / ours and Pink / ours, ours' false SUCCESS and exceptions) is what
``tools/bench_readme.py`` copies into docs/whole_body_benchmark.md; the per-method details
follow the ``<!-- wholebody-details -->`` marker and stay in bench/results/wholebody.md.
"""
from __future__ import annotations

from pathlib import Path
from typing import Dict, List, Optional

import numpy as np

DETAILS = "<!-- wholebody-details -->"
LABELS = {"ours": "ros2_ik", "drake_snopt": "Drake SNOPT", "pink": "Pink"}


def _by_robot(rows: List[dict]) -> Dict[str, Dict[str, dict]]:
    out: Dict[str, Dict[str, dict]] = {}
    for row in rows:
        out.setdefault(row["robot"], {})[row["method"]] = row
    return out


def _cell(row: Optional[dict], key: str, fmt: str) -> str:
    if row is None or "skipped" in row or row.get(key) is None:
        return "n/a"
    return fmt.format(row[key] * (100 if key == "verified_success_rate" else 1))


def write_markdown(path: Path, rows: List[dict], meta: dict) -> None:
    """Write the summary table, the targets and the per-method details to ``path``."""
    m = meta["machine"]
    lines = [f"Whole-body IK ({meta['date']}): {meta['problems_per_robot']} problems per robot, "
             f"feasible by construction; budget {1e3 * meta['budget_s']:g} ms per problem; "
             f"ros2_ik, Drake SNOPT (restarts) and Pink interleaved; success judged by one "
             f"independent check ({meta['tolerances']['m']:g} m, {meta['tolerances']['rad']:g} "
             f"rad, CoM margin {100 * meta['tolerances']['com_margin_m']:g} cm); {m['cpu']}, "
             f"{m['cores']} cores, load {m['load_average'][0]:.1f} at start, "
             f"{m.get('load_average_end', [float('nan')])[0]:.1f} at the end.", "",
             "| family | robot | ros2_ik verified | Drake verified | Pink verified "
             "| ros2_ik median / p95 ms | Drake median / p95 ms | Pink median / p95 ms "
             "| Drake / ros2_ik wall (CPU) | Pink / ros2_ik wall (CPU) | ros2_ik false SUCCESS "
             "| exceptions |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for robot, methods in _by_robot(rows).items():
        o, d, p = (methods.get(k) for k in ("ours", "drake_snopt", "pink"))
        family = next(iter(methods.values()))["family"]
        lines.append("| " + " | ".join([
            family, robot, *(_cell(r, "verified_success_rate", "{:.1f} %") for r in (o, d, p)),
            *(f"{_cell(r, 'median_ms', '{:.2f}')} / {_cell(r, 'p95_ms', '{:.1f}')}"
              for r in (o, d, p)),
            f"{_cell(d, 'median_ratio_to_ours', '{:.1f}x')} "
            f"({_cell(d, 'median_cpu_ratio_to_ours', '{:.1f}x')})",
            f"{_cell(p, 'median_ratio_to_ours', '{:.2f}x')} "
            f"({_cell(p, 'median_cpu_ratio_to_ours', '{:.2f}x')})",
            _cell(o, "false_successes", "{}"),
            ", ".join(f"{LABELS[k]} {r['exceptions']}" for k, r in methods.items()
                      if "skipped" not in r and r["exceptions"]) or "0"]) + " |")
    lines += [""] + targets(rows) + [""] + impossible(rows) + far_base(rows) + [
        "", DETAILS, "", *details(rows)]
    path.write_text("\n".join(lines) + "\n")


def targets(rows: List[dict]) -> List[str]:
    """Issue 47's targets, met or not, per robot (or why they cannot be judged).

    Judged on the wall-clock medians (the user's end); the CPU-time ratios are given beside.
    """
    out = []
    for robot, methods in _by_robot(rows).items():
        o = methods.get("ours")
        if o is None or "skipped" in o:
            out.append(f"- {robot}: ros2_ik not run ({(o or {}).get('skipped', 'not asked')})")
            continue
        d, p = methods.get("drake_snopt"), methods.get("pink")
        checks = [("success >= 99.5 %", o["verified_success_rate"] >= 0.995)]
        if d and "skipped" not in d:
            checks += [("success >= Drake's",
                        o["verified_success_rate"] >= d["verified_success_rate"]),
                       (f"median >= 5x faster than Drake (wall {d['median_ratio_to_ours']:.1f}x, "
                        f"CPU {d['median_cpu_ratio_to_ours']:.1f}x)",
                        d["median_ratio_to_ours"] >= 5.0)]
        if p and "skipped" not in p:
            checks += [("success >= Pink's",
                        o["verified_success_rate"] >= p["verified_success_rate"]),
                       (f"median <= Pink's (Pink / ros2_ik wall {p['median_ratio_to_ours']:.2f}x, "
                        f"CPU {p['median_cpu_ratio_to_ours']:.2f}x)",
                        p["median_ratio_to_ours"] >= 1.0)]
        checks += [("0 false SUCCESS, 0 exceptions",
                    not o["false_successes"] and not o["exceptions"])]
        missed = [name for name, ok in checks if not ok]
        out.append(f"- {robot}: " + ("every target met" if not missed
                                     else "missed: " + "; ".join(missed)))
    return out


#: The impossible problems: row key, what was made impossible, the term ours must name.
IMPOSSIBLE = (("infeasible", "Impossible CoM margin (half the footholds' span + 1 cm, on the "
               "robots with a CoM term)", "the CoM term"),
              ("infeasible_contact", "A contact 3 m from the others (its target moved along x, "
               "on the robots with contacts)", "the contact"))


def impossible(rows: List[dict]) -> List[str]:
    """Return a line per kind of impossible problem: false SUCCESS, our messages, times."""
    lines = []
    for key, title, term in IMPOSSIBLE:
        parts = []
        for method in LABELS:
            cells = [r[key] for r in rows if r["method"] == method and key in r]
            if not cells:
                continue
            n = sum(c["problems"] for c in cells)
            text = f"{LABELS[method]} false SUCCESS {sum(c['false_successes'] for c in cells)}/{n}"
            if method == "ours":
                named = sum(c["no_solution_naming_the_term"] for c in cells)
                text += f", NO_SOLUTION naming {term} {named}/{n}"
            text += f", median {float(np.median([c['median_ms'] for c in cells])):.1f} ms"
            parts.append(text)
        if parts:
            lines += [f"{title}: " + "; ".join(parts) + ".", ""]
    return lines[:-1]


def far_base(rows: List[dict]) -> List[str]:
    """Return the line of the problems whose answer lies 30-300 m away ([] when none ran)."""
    parts = []
    for method in LABELS:
        cells = [r["far_base"] for r in rows if r["method"] == method and "far_base" in r]
        if cells:
            n = sum(c["problems"] for c in cells)
            parts.append(f"{LABELS[method]} verified {sum(c['verified'] for c in cells)}/{n}, "
                         f"false SUCCESS {sum(c['false_successes'] for c in cells)}, median "
                         f"{float(np.median([c['median_ms'] for c in cells])):.1f} ms")
    return ["", "The answer moved 30-300 m across the floor (mobile robots; the seed stays at "
            "the origin): " + "; ".join(parts) + "."] if parts else []


def details(rows: List[dict]) -> List[str]:
    """Per method and robot: claims, late answers, failure reasons, base displacement."""
    lines = ["| robot | method | verified | false SUCCESS | late | exceptions | p95 ms "
             "| median CPU ms | median base displacement m | failures (reason: count) |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for row in rows:
        if "skipped" in row:
            lines.append(f"| {row['robot']} | {LABELS[row['method']]} | skipped: "
                         f"{row['skipped'][:120]} | | | | | | | |")
            continue
        shift = row["median_base_displacement_m"]
        reasons = ", ".join(f"{k}: {v}" for k, v in sorted(row["failure_reasons"].items()))
        lines.append(f"| {row['robot']} | {LABELS[row['method']]} | "
                     f"{100 * row['verified_success_rate']:.1f} % | {row['false_successes']} | "
                     f"{row['late']} | {row['exceptions']} | {row['p95_ms']:.1f} | "
                     f"{row['median_cpu_ms']:.2f} | "
                     f"{'' if shift is None else f'{shift:.3f}'} | {reasons} |")
    return lines


def write_plot(path: Path, rows: List[dict], plt) -> None:
    """Median time per robot and method (log scale), verified success over each bar."""
    if plt is None:
        return
    robots = list(_by_robot(rows))
    methods = [m for m in LABELS if any(r["method"] == m and "skipped" not in r for r in rows)]
    fig, ax = plt.subplots(figsize=(10, 4))
    width = 0.8 / max(1, len(methods))
    x = np.arange(len(robots))
    for k, method in enumerate(methods):
        cells = [_by_robot(rows)[r].get(method) for r in robots]
        medians = [c["median_ms"] if c and "skipped" not in c else np.nan for c in cells]
        bars = ax.bar(x + (k - (len(methods) - 1) / 2) * width, medians, width,
                      label=LABELS[method])
        for bar, c in zip(bars, cells):
            if c and "skipped" not in c:
                ax.annotate(f"{100 * c['verified_success_rate']:.0f}%",
                            (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                            ha="center", va="bottom", fontsize=7)
    ax.set_yscale("log")
    ax.set_xticks(x, robots)
    ax.set_ylabel("median wall time per problem [ms]")
    ax.set_title("Whole-body IK: median time (verified success above each bar)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
