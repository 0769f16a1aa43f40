"""Cost of ``import ros2_ik.core`` beside ``import pinocchio`` (issue 46), fresh processes.

Target: ``import ros2_ik.core`` costs at most 0.1 s more than ``import pinocchio`` in the
same run.  Each run is a fresh interpreter that times, in order, ``import pinocchio``,
then ``import ros2_ik.core`` (the increment: the target's figure), then
``import ros2_ik.node.ik_node`` (for information: what the node adds on top).  Two
bytecode modes, interleaved run by run so both see the same load:

cached  compiled bytecode read from a cache warmed by one untimed run (what an installed
        package gives its user once it has been imported once); ``PYTHONPYCACHEPREFIX``
        is a temporary directory, so nothing is written into the tree or the venv
source  no bytecode at all: ``PYTHONPYCACHEPREFIX`` an empty directory and
        ``PYTHONDONTWRITEBYTECODE=1``, so every module (the venv's, which
        ``tools/setup.sh`` installs with ``--no-compile``, and ours) is compiled from
        source: a process's first start after the install (the later ones read what it
        wrote)

Medians [s] per mode, the target line on the cached mode, the heavy modules
``import ros2_ik.core`` loads, machine and load: ``results/import.json``, ``import.md``,
``import.png``.

``--against DIR`` adds another tree (a checkout whose package is ``DIR/ros2_ik``, e.g.
``git worktree add /tmp/old <commit>``) run beside this one in every round (each tree
first on ``PYTHONPATH``); the markdown then has both trees and the ratios this / other of
the core's increment.

    python bench/import_bench.py            # 20 runs per mode
    python bench/import_bench.py --quick    # 6
    python bench/import_bench.py --quick --against /tmp/old
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from machine import machine, pyplot  # noqa: E402
import results_files  # noqa: E402

TARGET_S = 0.1
MODES = ("cached", "source")
# Modules the core loads only when first needed (checked by test_import_cost.py too).
HEAVY = ("numba", "scipy", "yaml", "eaik", "ros2_ik.core.collision",
         "ros2_ik.core.closed_form", "ros2_ik.core.solvers.proofs", "rclpy")

CHILD = f"""
import sys, time, json
t0 = time.perf_counter()
import pinocchio
t1 = time.perf_counter()
import ros2_ik.core
t2 = time.perf_counter()
heavy = [m for m in {HEAVY!r} if m in sys.modules]
node = None
try:
    import ros2_ik.node.ik_node
    node = time.perf_counter() - t2
except ImportError as e:
    print("no node:", e, file=sys.stderr)
print(json.dumps({{"pinocchio_s": t1 - t0, "core_after_pinocchio_s": t2 - t1,
                  "node_after_core_s": node, "heavy_loaded_by_core": heavy}}))
"""


def run_once(mode: str, cache: str, tree: str) -> dict:
    """One fresh interpreter in ``mode`` on ``tree``; its three timings [s], heavy modules.

    ``cache``: the bytecode directory of the cached mode; the source mode reads an empty
    one beside it and writes nothing.
    """
    env = dict(os.environ)
    path = env.get("PYTHONPATH", "")
    env["PYTHONPATH"] = f"{tree}:{path}" if path else tree
    if mode == "cached":
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = cache
    else:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env["PYTHONPYCACHEPREFIX"] = cache + "_empty"
    out = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True,
                         text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def measure(runs: int, trees: dict) -> dict:
    """Run ``runs`` interleaved rounds; return every run's timings per tree and mode."""
    rows = {name: {mode: [] for mode in MODES} for name in trees}
    with tempfile.TemporaryDirectory() as cache:
        caches = {}
        for name, tree in trees.items():  # warm each tree's bytecode cache, untimed
            caches[name] = os.path.join(cache, name)
            run_once("cached", caches[name], tree)
        cells = [(name, mode) for name in trees for mode in MODES]
        for i in range(runs):
            for name, mode in (cells if i % 2 == 0 else cells[::-1]):
                rows[name][mode].append(run_once(mode, caches[name], trees[name]))
    return rows


def summary(rows: dict) -> dict:
    """Return medians [s] per mode, the increment's median and the target verdict."""
    out = {}
    for mode, runs in rows.items():
        med = {k: statistics.median(r[k] for r in runs if r[k] is not None)
               for k in ("pinocchio_s", "core_after_pinocchio_s", "node_after_core_s")
               if any(r[k] is not None for r in runs)}
        med["core_after_pinocchio_max_s"] = max(r["core_after_pinocchio_s"] for r in runs)
        med["runs"] = len(runs)
        med["heavy_loaded_by_core"] = sorted({m for r in runs
                                              for m in r["heavy_loaded_by_core"]})
        out[mode] = med
    out["target_s"] = TARGET_S
    out["target_met_cached"] = out["cached"]["core_after_pinocchio_s"] <= TARGET_S
    return out


def markdown(res: dict, mach: dict) -> str:
    """Return the results table with the target line, machine and load."""
    s = res["summary"]
    this = s["this"]
    lines = ["# `import ros2_ik.core` after `import pinocchio` (issue 46)", "",
             f"Fresh interpreters, {this['cached']['runs']} runs per tree and mode, "
             f"interleaved; medians [s]. Load (1/5/15 min) at the start "
             f"{', '.join(f'{x:.2f}' for x in res['load_start'])}, at the end "
             f"{', '.join(f'{x:.2f}' for x in mach['load_average'])}; {mach['cores']} cores "
             f"({mach['cpu']}), shared. Trees: "
             f"{', '.join(f'{k} `{v}`' for k, v in res['trees'].items())}.", "",
             "| tree | mode | import pinocchio | + import ros2_ik.core | (max) "
             "| + import ros2_ik.node.ik_node | core: this / other |",
             "|---|---|---|---|---|---|---|"]
    for name in res["trees"]:
        for mode in MODES:
            m = s[name][mode]
            node = m.get("node_after_core_s")
            ratio = "-"
            if name == "this" and "other" in s:
                other = s["other"][mode]["core_after_pinocchio_s"]
                ratio = f"{m['core_after_pinocchio_s'] / other:.2f}"
            lines.append(f"| {name} | {mode} | {m['pinocchio_s']:.3f} | "
                         f"{m['core_after_pinocchio_s']:.3f} | "
                         f"{m['core_after_pinocchio_max_s']:.3f} | "
                         f"{'-' if node is None else f'{node:.3f}'} | {ratio} |")
    verdict = "met" if this["target_met_cached"] else "NOT met"
    lines += ["", f"Target: `import ros2_ik.core` <= {TARGET_S} s more than `import "
              f"pinocchio` (this tree, cached bytecode, median): {verdict} "
              f"({this['cached']['core_after_pinocchio_s']:.3f} s).",
              "`source`: no bytecode at all (every module compiled at import: a first "
              "start after tools/setup.sh's --no-compile install); for information.",
              f"Heavy modules loaded by `import ros2_ik.core` (this tree): "
              f"{', '.join(this['cached']['heavy_loaded_by_core']) or 'none'} "
              f"(of {', '.join(HEAVY)})."]
    return "\n".join(lines) + "\n"


def plot(rows: dict, path: Path) -> None:
    """Per-run times per tree and mode, with the target line."""
    plt = pyplot()
    if plt is None:
        return
    fig, ax = plt.subplots(figsize=(7, 3.5))
    cells = [(name, mode) for name in rows for mode in MODES]
    for k, (name, mode) in enumerate(cells):
        for j, (key, label) in enumerate((("pinocchio_s", "pinocchio"),
                                          ("core_after_pinocchio_s", "+ ros2_ik.core"),
                                          ("node_after_core_s", "+ ik_node"))):
            ys = [r[key] for r in rows[name][mode] if r[key] is not None]
            ax.plot([4 * k + j] * len(ys), ys, "o", alpha=0.5, color=f"C{j}",
                    label=label if k == 0 else None)
    ax.axhline(TARGET_S, color="k", ls="--", lw=1, label=f"target {TARGET_S} s")
    ax.set_xticks([4 * k + 1 for k in range(len(cells))],
                  [f"{name}\n{mode}" for name, mode in cells])
    ax.set_yscale("log")
    ax.set_ylabel("import time [s]")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="6 runs per mode")
    p.add_argument("--runs", type=int, default=None, help="runs per mode (20)")
    p.add_argument("--against", default=None, help="another tree to run beside this one")
    p.add_argument("--out", default=str(HERE / "results"), help="results directory")
    args = p.parse_args(argv)
    runs = args.runs or (6 if args.quick else 20)
    trees = {"this": str(HERE.parent / "ros2_ik")}
    if args.against:
        trees["other"] = str(Path(args.against).resolve() / "ros2_ik")
    load_start = list(os.getloadavg())
    rows = measure(runs, trees)
    mach = machine()
    res = {"machine": mach, "load_start": load_start, "trees": trees, "runs": rows,
           "summary": {name: summary(r) for name, r in rows.items()}}
    results_files.write(Path(args.out), "import", res, markdown(res, mach),
                        lambda path: plot(rows, path), echo=True)


if __name__ == "__main__":
    main()
