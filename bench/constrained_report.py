"""Rows, targets, markdown and plot of the constrained-IK benchmark (constrained_bench.py).

Objective comparison (family g): on the problems where both the solver and Drake SNOPT
return a verified answer, the objectives ``f`` (re-evaluated by ``constrained_check``) are
compared as ``ratio = (f + eps) / (f_snopt + eps)`` with ``eps = 1e-6`` (objective units;
it only matters when both are near zero), and "within 1 %" means ``f <= 1.01 f_snopt +
eps``: as good as Drake's or better, up to 1 %.
"""
from __future__ import annotations

from pathlib import Path
from typing import Dict, List, Optional

import numpy as np
from machine import pyplot

EPS_OBJECTIVE = 1e-6
REFERENCE = "drake_snopt"
NAMES = {"drake_snopt": "Drake SNOPT", "drake_ipopt": "Drake IPOPT",
         "drake_snopt_nominal": "Drake SNOPT from q_nominal"}
#: A second anchor for problems with costs: SNOPT started from the posture cost's nominal.
NOMINAL = "drake_snopt_nominal"
DETAILS = "<!-- constrained-details -->"


def _row(arm: str, family: str, solver: str, recs: List[dict], budget_s: float) -> dict:
    base = {"robot": arm, "family": family, "solver": solver, "budget_s": budget_s}
    if any("unsupported" in r for r in recs):
        return dict(base, n=len(recs), skipped="not supported (solver does not minimise costs)",
                    success_rate=None, median_ms=None, p95_ms=None)
    t = 1e3 * np.array([r["t"] for r in recs])
    outcomes: Dict[str, int] = {}
    for r in recs:
        outcomes[r["why"]] = outcomes.get(r["why"], 0) + 1
    notes = sorted({r["note"] for r in recs if r["note"]})[:3]
    return dict(base, n=len(recs), skipped=None,
                success_rate=sum(r["ok"] for r in recs) / len(recs),
                median_ms=float(np.median(t)), p95_ms=float(np.percentile(t, 95)),
                mean_ms=float(t.mean()),
                claimed_success_rate=sum(r["claimed"] for r in recs) / len(recs),
                false_success=sum(r["claimed"] and r["why"] not in ("ok", "late")
                                  for r in recs),
                outcomes=dict(sorted(outcomes.items())), exceptions=notes)


def _objectives(row: dict, recs: List[dict], ref: List[dict], suffix: str = "") -> None:
    """Objective ratios of ``recs`` to ``ref``'s on the problems both solve (keys + suffix)."""
    pairs = [(r["objective"], d["objective"]) for r, d in zip(recs, ref)
             if r.get("ok") and d.get("ok")]
    keys = [k + suffix for k in ("objective_compared", "objective_ratio_median",
                                 "objective_within_1pct", "objective_better_1pct")]
    row[keys[0]] = len(pairs)
    if not pairs:
        row.update(dict.fromkeys(keys[1:]))
        return
    f, f_ref = np.array(pairs).T
    row[keys[1]] = float(np.median((f + EPS_OBJECTIVE) / (f_ref + EPS_OBJECTIVE)))
    row[keys[2]] = float(np.mean(f <= 1.01 * f_ref + EPS_OBJECTIVE))
    row[keys[3]] = float(np.mean(f < 0.99 * f_ref - EPS_OBJECTIVE))


def targets(row: dict, ref: dict) -> str:
    """Judge one of our rows against Drake SNOPT's by the issue's targets: met / what not."""
    if row.get("skipped") or ref is None or ref.get("skipped"):
        return ""
    missed = []
    if not (row["success_rate"] >= max(ref["success_rate"], 0.995)):
        missed.append("success")
    if not (row["speedup_vs_drake_snopt"] >= 5.0):
        missed.append("5x median")
    if not (row["p95_ms"] <= 1e3 * row["budget_s"]):
        missed.append("p95 in budget")
    if row["family"] == "g" and not ((row.get("objective_within_1pct") or 0.0) >= 0.95):
        missed.append("objective")
    return "met" if not missed else "NOT met: " + ", ".join(missed)


def summarise_rows(arm: str, family: str, records: Dict[str, List[dict]],
                   budget_s: float, warm: Optional[Dict[str, List[float]]] = None) -> list:
    """One row per solver of a (family, arm) cell, with ratios and targets vs Drake SNOPT.

    ``warm``: per solver, the times [s] of an immediate second solve of each problem
    (``median_warm_ms``; lm's ``speedup_vs_drake_snopt_warm``), beside the targets.
    """
    rows = {s: _row(arm, family, s, recs, budget_s) for s, recs in records.items()}
    for solver, times in (warm or {}).items():
        rows[solver]["median_warm_ms"] = float(np.median(times)) * 1e3
    ref = rows.get(REFERENCE)
    for solver, row in rows.items():
        if row.get("skipped") or solver == REFERENCE or ref is None:
            continue
        row["speedup_vs_drake_snopt"] = ref["median_ms"] / row["median_ms"]
        if "median_warm_ms" in row and "median_warm_ms" in ref:
            row["speedup_vs_drake_snopt_warm"] = ref["median_warm_ms"] / row["median_warm_ms"]
        if family == "g":
            _objectives(row, records[solver], records[REFERENCE])
        if not solver.startswith("drake"):
            row["targets"] = targets(row, ref)
            _against_nominal_start(row, rows.get(NOMINAL), records[solver],
                                   records.get(NOMINAL))
    return list(rows.values())


def _against_nominal_start(row: dict, ref: dict, recs: List[dict], ref_recs) -> None:
    """Speed and objective of one of our rows against SNOPT started from ``q_nominal``."""
    if ref is None or ref.get("skipped"):
        return
    row["speedup_vs_drake_snopt_nominal"] = ref["median_ms"] / row["median_ms"]
    _objectives(row, recs, ref_recs, "_vs_drake_snopt_nominal")


def _cell(row: dict) -> str:
    if row is None:
        return ""
    if row.get("skipped"):
        return "n/s"
    return f"{100 * row['success_rate']:.1f} % / {row['median_ms']:.2f}"


def _within(row: dict) -> str:
    return (f"{100 * row['objective_within_1pct']:.1f} % (better by > 1 %: "
            f"{100 * row['objective_better_1pct']:.1f} %)")


def write_markdown(path: Path, rows: list, meta: dict, skipped: list) -> None:
    """constrained.md: the summary table (README), then one detail line per solver row."""
    solvers = list(dict.fromkeys(r["solver"] for r in rows))
    by = {(r["family"], r["robot"], r["solver"]): r for r in rows}
    cells = list(dict.fromkeys((r["family"], r["robot"]) for r in rows))
    m = meta["machine"]
    drake = meta.get("drake", {})
    lines = [f"Constrained IK (issue 10), {meta['date']}: N={meta['n']} problems per family "
             f"and arm from uniform random configurations, seed mid-limits, budget "
             f"{1e3 * meta['budget_s']:g} ms, every answer checked by `bench/constrained_check"
             f".py` (1e-4 m, 1e-4 rad, joint limits; a late answer fails); solvers interleaved "
             f"per problem in a random order; garbage collected and frozen before each "
             f"cell's timed problems, as ik_node does; {m['cpu']}, {m['cores']} cores shared with "
             f"other jobs (1-min load "
             f"{m['load_average'][0]:.2f} at start, {m['load_average_end'][0]:.2f} at end), "
             f"{meta['seconds']:.0f} s in all."
             + (f" Drake {drake['version']}, SNOPT major feasibility tolerance "
                f"{drake['snopt_major_feasibility_tolerance']:g}, IPOPT defaults; restarts "
                "from uniform random configurations within the budget." if drake else "")
             + (f" Skipped: {skipped} (pydrake not installed)." if skipped else ""), "",
             "Cells: verified success / median ms (n/s: costs not supported).", "",
             "| family | arm | " + " | ".join(NAMES.get(s, s) for s in solvers)
             + " | SNOPT / lm median | targets (lm) |",
             "|---|---|" + "---|" * (len(solvers) + 2)]
    for family, arm in cells:
        lm = by.get((family, arm, "lm"), {})
        speed = lm.get("speedup_vs_drake_snopt")
        lines.append(f"| {family} | {arm} | " + " | ".join(
            _cell(by.get((family, arm, s))) for s in solvers)
            + f" | {'' if speed is None else f'{speed:.1f}x'} | {lm.get('targets', '')} |")
    lines.append("")
    for solver in [s for s in solvers if not s.startswith("drake")]:
        judged = [r for r in rows if r["solver"] == solver and r.get("targets")]
        met = sum(r["targets"] == "met" for r in judged)
        lies = sum(r.get("false_success") or 0 for r in rows if r["solver"] == solver)
        lines.append(f"- {solver}: targets met in {met} of {len(judged)} (family, arm) cells; "
                     f"{lies} false SUCCESS in all.")
    lines += _nominal_lines(rows)
    lines += _warm_lines(rows)
    lines += ["", "Families: " + "; ".join(f"({f}) {t}" for f, t in meta["families"].items())
              + ".", "", "Targets per row: verified success >= Drake SNOPT's and >= 99.5 %, "
              "median >= 5x lower than Drake SNOPT's, p95 within the budget; (g) objective "
              "within 1 % of Drake SNOPT's (or better) on >= 95 % of the problems both solve.",
              "", DETAILS, "", "| family | arm | solver | success | claimed | false SUCCESS | "
              "median ms | p95 ms | SNOPT / this median | objective ratio (median) | within "
              "1 % | targets | failures |", "|" + "---|" * 13]
    for r in rows:
        if r.get("skipped"):
            lines.append(f"| {r['family']} | {r['robot']} | {r['solver']} | {r['skipped']} |"
                         + " |" * 9)
            continue
        fails = ", ".join(f"{k} {v}" for k, v in r["outcomes"].items() if k != "ok") or "-"
        ratio, within = r.get("objective_ratio_median"), r.get("objective_within_1pct")
        speed = r.get("speedup_vs_drake_snopt")
        lines.append(
            f"| {r['family']} | {r['robot']} | {NAMES.get(r['solver'], r['solver'])} | "
            f"{100 * r['success_rate']:.1f} % | {100 * r['claimed_success_rate']:.1f} % | "
            f"{r['false_success']} | {r['median_ms']:.2f} | {r['p95_ms']:.2f} | "
            f"{'' if speed is None else f'{speed:.1f}x'} | "
            f"{'' if ratio is None else f'{ratio:.4f}'} | "
            f"{'' if within is None else _within(r)} | {r.get('targets', '')} | "
            f"{fails} |")
    lines += ["", "Objective (g): compared on the problems where both this solver and Drake "
              "SNOPT return a verified answer; ratio (f + 1e-6) / (f_SNOPT + 1e-6), within "
              "1 %: f <= 1.01 f_SNOPT + 1e-6.  Failures: none = no answer claimed, late = a "
              "correct answer after the budget, exception = raised out of solve(), else the "
              "first constraint kind (or limits) the independent check found violated."]
    path.write_text("\n".join(lines) + "\n")


def _nominal_lines(rows: list) -> List[str]:
    """Compare lm with Drake SNOPT started from the posture cost's nominal (family g)."""
    judged = [r for r in rows if r["solver"] == "lm" and r.get("speedup_vs_drake_snopt_nominal")]
    if not judged:
        return []
    lines = ["", "lm against Drake SNOPT started from the posture cost's `q_nominal` (the "
             "start lm also tries; the table's SNOPT starts from the seed, as the issue "
             "sets): SNOPT from q_nominal / lm median, and lm's objective within 1 % of "
             "(or better than) that SNOPT's.", "",
             "| family | arm | SNOPT from q_nominal / lm median | objective within 1 % |",
             "|---|---|---|---|"]
    for r in judged:
        within = r.get("objective_within_1pct_vs_drake_snopt_nominal")
        lines.append(f"| {r['family']} | {r['robot']} | "
                     f"{r['speedup_vs_drake_snopt_nominal']:.1f}x | "
                     f"{'' if within is None else f'{100 * within:.1f} %'} |")
    return lines


def _warm_lines(rows: list) -> List[str]:
    """Medians of the interleaved pass beside those of an immediate second solve."""
    judged = [r for r in rows if r["solver"] == "lm" and r.get("speedup_vs_drake_snopt_warm")]
    if not judged:
        return []
    snopt = {(r["family"], r["robot"]): r for r in rows if r["solver"] == REFERENCE}
    lines = ["", "Cold and warm starts (not the targets' figures): the medians above come "
             "from solvers interleaved per problem in a random order, so each starts with "
             "caches the others have filled, as a request to an idle node does. Below, "
             "beside them, the median of solving each problem again at once (warm caches, "
             "same seeds, same work). Medians in ms.", "",
             "| family | arm | lm | lm warm | SNOPT | SNOPT warm | SNOPT / lm | "
             "SNOPT / lm warm |", "|---|---|---|---|---|---|---|---|"]
    for r in judged:
        s = snopt[(r["family"], r["robot"])]
        lines.append(f"| {r['family']} | {r['robot']} | {r['median_ms']:.2f} | "
                     f"{r['median_warm_ms']:.2f} | {s['median_ms']:.2f} | "
                     f"{s['median_warm_ms']:.2f} | {r['speedup_vs_drake_snopt']:.1f}x | "
                     f"{r['speedup_vs_drake_snopt_warm']:.1f}x |")
    return lines


def write_plot(path: Path, rows: list) -> None:
    """Per family: mean verified success over the arms and median of the medians, per solver."""
    plt = pyplot()
    if plt is None:
        return
    rows = [r for r in rows if not r.get("skipped")]
    families = sorted({r["family"] for r in rows})
    solvers = list(dict.fromkeys(r["solver"] for r in rows))
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.2))
    width = 0.8 / max(1, len(solvers))
    x = np.arange(len(families))
    for k, s in enumerate(solvers):
        succ = [np.mean([r["success_rate"] for r in rows if r["solver"] == s
                         and r["family"] == f] or [np.nan]) * 100 for f in families]
        med = [np.median([r["median_ms"] for r in rows if r["solver"] == s
                          and r["family"] == f] or [np.nan]) for f in families]
        axes[0].bar(x + k * width, succ, width, label=NAMES.get(s, s))
        axes[1].bar(x + k * width, med, width, label=NAMES.get(s, s))
    axes[0].set_title("verified success [%] (mean over arms)")
    axes[0].set_ylim(0, 105)
    axes[1].set_title("median time [ms] (median over arms)")
    axes[1].set_yscale("log")
    for ax in axes:
        ax.set_xticks(x + 0.4 - width / 2, families)
        ax.set_xlabel("family")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(solvers), fontsize=8)
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)
