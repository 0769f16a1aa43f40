#!/usr/bin/env python3
"""Old commit against new (issue 39): the pose, constrained and collision benchmarks, interleaved.

Each revision is checked out into a temporary git worktree (``git worktree add --detach``,
with a ``.venv`` symlink to this repository's venv; removed at the end), its package's
entry points written (``setup.py egg_info``, so the solver registry finds lm, dls, ...) and
its numba kernels compiled (``python -m ros2_ik.core.runtime.warm_up``, or the
revision's ``ros2_ik.core.warm_up`` before issue 46) before anything is timed.
Every benchmark then runs as a subprocess with ``PYTHONPATH`` starting at that worktree's
``ros2_ik`` package source (checked: the subprocess prints ``ros2_ik.__file__``), from the
revision's own ``bench/`` scripts, old and new back to back, for R rounds in the order
OLD NEW, NEW OLD, OLD NEW, ... (a drift of the machine's speed within a round hits both
alike).  Only our solvers run (no TRAC-IK, no Drake: they are the same on both sides):

  pose         ik_bench.py --solvers lm --chain-arms '' (catalogue and random arms)
  constrained  constrained_bench.py --solvers lm,sqp,bfgs,dls (families a-h), per arm
  collision    collision_bench.py --methods lm+collision,lm_reject_restart

Then ``completeness.py`` (``--quick``: its 600 problems) once per revision, for lm's
verified rate, false SUCCESS and false failures.  ``ab_report.py`` turns the scripts' own
JSON into ``bench/results/ab.{json,md,png}``: per row the old and new medians of each
round, the median of the ratios new/old, success rates and false SUCCESS, and the verdict.

    python bench/ab.py --old 1a1e2a7 --new HEAD            # R=3, the scripts' own N
    python bench/ab.py --old 1a1e2a7 --new HEAD --quick    # R=1, small N (~6 min)

Revisions are commits: a worktree holds no uncommitted edit, so commit before comparing.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, NamedTuple

import ab_report as report
import results_files
from machine import machine

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = results_files.RESULTS
LOGS = ROOT / "log" / "ab"
OURS_CONSTRAINED = "lm,sqp,bfgs,dls"
COLLISION_METHODS = ("lm+collision", "lm_reject_restart")
#: constrained_bench.py's arms (constrained_problems.ARMS): one run per arm, old and new
#: back to back, so the two runs of a pair are seconds apart rather than a whole benchmark.
CONSTRAINED_ARMS = ("panda", "ur5", "kinova", "xarm7")


class Script(NamedTuple):
    """How ab.py runs one benchmark script: its arguments, ``--quick``'s, and its parts.

    ``--quick`` starts from each script's own quick sizes and raises those whose medians,
    1a1e2a7 against itself, moved by more than the 5 % to be seen: ik_bench 200 targets
    per arm and the fastest of 2 passes (its own: 100, one pass), collision_bench 200
    targets (100), constrained_bench 60 problems per cell (10).  Each part (arguments
    added to one run) runs old then new before the next part starts.
    """

    file: str
    args: List[str]
    quick_args: List[str]
    parts: List[List[str]] = [[]]


SCRIPTS = {
    "pose": Script("ik_bench.py", ["--solvers", "lm", "--chain-arms", ""],
                   ["--quick", "-n", "200", "--repeat", "2"]),
    "constrained": Script("constrained_bench.py", ["--solvers", OURS_CONSTRAINED],
                          ["--quick", "-n", "60"], [["--arms", a] for a in CONSTRAINED_ARMS]),
    "collision": Script("collision_bench.py", ["--methods", ",".join(COLLISION_METHODS),
                                               "--generous-ms", "0"], ["--quick", "-n", "200"]),
}


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--old", default="1a1e2a7", help="old revision (any git rev)")
    p.add_argument("--new", default="HEAD", help="new revision (any git rev)")
    p.add_argument("--rounds", type=int, default=None, help="rounds (default 3, 1 with --quick)")
    p.add_argument("--quick", action="store_true", help="small N, one round, fuzz --quick")
    p.add_argument("--benchmarks", default=",".join(report.BENCHMARKS),
                   help=f"comma list from {list(report.BENCHMARKS)}")
    p.add_argument("--no-completeness", action="store_true", help="skip the completeness fuzz")
    p.add_argument("--out", default=str(RESULTS), help="folder of ab.json, ab.md, ab.png")
    p.add_argument("--rejudge", metavar="AB_JSON",
                   help="run nothing: the figures and verdict again from AB_JSON's runs")
    args = p.parse_args(argv)
    args.rounds = args.rounds or (1 if args.quick else 3)
    args.benchmarks = [b for b in args.benchmarks.split(",") if b]
    unknown = set(args.benchmarks) - set(report.BENCHMARKS)
    if unknown or args.rounds < 1:
        raise SystemExit(f"unknown benchmarks {sorted(unknown)} (valid: "
                         f"{list(report.BENCHMARKS)}) or --rounds < 1")
    return args


def git(*args: str, cwd: Path = ROOT) -> str:
    """Run git in ``cwd``; its stdout, stripped."""
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout.strip()


class Revision:
    """One revision in its own temporary worktree, and the environment that runs its code."""

    def __init__(self, label: str, rev: str, base: Path):
        self.label, self.rev = label, rev
        self.sha = git("rev-parse", "--verify", f"{rev}^{{commit}}")
        self.subject = git("log", "-1", "--format=%s", self.sha)
        self.path = base / label
        self.env = os.environ.copy()
        kept = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep)
                if p and "/install/ros2_ik/" not in p]  # a colcon install of ours: not it
        self.env["PYTHONPATH"] = os.pathsep.join([str(self.path / "ros2_ik")] + kept)

    def create(self) -> None:
        """Check out, link the venv, write the entry points, compile the kernels, check."""
        git("worktree", "add", "--detach", str(self.path), self.sha)
        (self.path / ".venv").symlink_to(ROOT / ".venv")
        self.run("egg_info", [sys.executable, "setup.py", "-q", "egg_info"],
                 cwd=self.path / "ros2_ik")
        started = time.perf_counter()
        module = "ros2_ik.core.runtime.warm_up"  # ros2_ik.core.warm_up before issue 46
        if not (self.path / "ros2_ik" / "ros2_ik" / "core" / "runtime" / "warm_up.py").exists():
            module = "ros2_ik.core.warm_up"
        self.run("warm_up", [sys.executable, "-m", module])
        self.warm_up_s = time.perf_counter() - started
        self.check_source()

    def check_source(self) -> None:
        """Fail unless ``ros2_ik`` and its lm entry point load from this worktree."""
        code = ("import inspect, ros2_ik; from importlib.metadata import entry_points; "
                "print(ros2_ik.__file__); print(inspect.getfile(next(e for e in entry_points("
                "group='ros2_ik.solvers') if e.name == 'lm').load()))")
        out = self.run("source", [sys.executable, "-c", code]).split()
        self.source_files = out[-2:]
        if not all(f.startswith(str(self.path) + "/") for f in self.source_files):
            raise SystemExit(f"{self.label}: ros2_ik loads from {self.source_files}, "
                             f"not from {self.path}")
        print(f"{self.label} {self.sha[:7]}: ros2_ik from {self.source_files[0]}", flush=True)

    def run(self, name: str, cmd: List[str], cwd: Path = None) -> str:
        """Run ``cmd`` in this revision's environment; its output, also in log/ab/."""
        LOGS.mkdir(parents=True, exist_ok=True)
        log = LOGS / f"{self.label}_{name}.txt"
        done = subprocess.run(cmd, cwd=cwd or self.path, env=self.env, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        log.write_text(done.stdout)
        if done.returncode != 0:
            print(done.stdout[-3000:])
            raise SystemExit(f"{self.label}: {' '.join(cmd)} exited {done.returncode} ({log})")
        return done.stdout

    def remove(self) -> None:
        """Remove the worktree (and its untracked results)."""
        if self.path.exists():
            git("worktree", "remove", "--force", str(self.path))

    def info(self) -> dict:
        return {"rev": self.rev, "sha": self.sha, "subject": self.subject,
                "ros2_ik_loaded_from": getattr(self, "source_files", None),
                "warm_up_s": round(getattr(self, "warm_up_s", float("nan")), 1)}


def run_benchmark(rev: Revision, name: str, quick: bool, part: List[str], out: Path) -> List[dict]:
    """One part of benchmark ``name`` on ``rev`` into ``out``; its rows (``ab_report``)."""
    script = SCRIPTS[name]
    cmd = [sys.executable, str(rev.path / "bench" / script.file), *script.args,
           *(script.quick_args if quick else []), *part, "--out", str(out)]
    started = time.perf_counter()
    rev.run(out.name, cmd)
    print(f"  {name:11s} {' '.join(part):14s} {rev.label} {rev.sha[:7]}  "
          f"{time.perf_counter() - started:6.1f} s", flush=True)
    return digest(name, out)


def digest(name: str, out: Path) -> List[dict]:
    """Return the rows of benchmark ``name`` from the JSON its script wrote into ``out``."""
    if name == "pose":
        return report.pose_digest(json.loads((out / "latest.json").read_text()),
                                  json.loads((out / "ik_failures.json").read_text()))
    if name == "collision":
        return report.collision_digest(json.loads((out / "collision.json").read_text()),
                                       COLLISION_METHODS)
    return report.constrained_digest(json.loads((out / "constrained.json").read_text()))


def run_rounds(revs: List[Revision], benchmarks: List[str], rounds: int, quick: bool,
               runs_dir: Path) -> Dict[str, Dict[str, List[List[dict]]]]:
    """Per benchmark and label, the rows of each round; OLD NEW, then NEW OLD, ..."""
    runs = {b: {r.label: [] for r in revs} for b in benchmarks}
    for k in range(rounds):
        print(f"round {k + 1}/{rounds}", flush=True)
        for name in benchmarks:
            rows: Dict[str, List[dict]] = {r.label: [] for r in revs}
            for j, part in enumerate(SCRIPTS[name].parts):
                for rev in (revs if k % 2 == 0 else revs[::-1]):
                    out = runs_dir / rev.label / f"{name}_round{k + 1}_part{j + 1}"
                    rows[rev.label] += run_benchmark(rev, name, quick, part, out)
            for label, found in rows.items():
                runs[name][label].append(found)
    return runs


def run_completeness(rev: Revision, quick: bool) -> dict:
    """``completeness.py`` once on ``rev``; lm's figures (it exits 1 on a false SUCCESS)."""
    cmd = [sys.executable, str(rev.path / "bench" / "completeness.py")] + \
        (["--quick"] if quick else [])
    started = time.perf_counter()
    done = subprocess.run(cmd, cwd=rev.path, env=rev.env, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    (LOGS / f"{rev.label}_completeness.txt").write_text(done.stdout)
    stem = "completeness_quick" if quick else "completeness"
    path = rev.path / "bench" / "results" / f"{stem}.json"
    if done.returncode not in (0, 1) or not path.is_file():  # 1: its own false-SUCCESS verdict
        print(done.stdout[-3000:])
        raise SystemExit(f"{rev.label}: completeness.py exited {done.returncode}")
    print(f"  completeness {rev.label} {rev.sha[:7]}  {time.perf_counter() - started:6.1f} s",
          flush=True)
    return report.completeness_digest(json.loads(path.read_text()))


def settings(args) -> str:
    """Return the scripts' command lines as run (for the markdown)."""
    def line(name: str) -> str:
        script = SCRIPTS[name]
        words = script.args + (script.quick_args if args.quick else [])
        parts = " | ".join(" ".join(p) for p in script.parts if p)
        return f"{name}: `{script.file} " + " ".join(a or "''" for a in words) + "`" + \
            (f" (one run each: {parts})" if parts else "")
    return "; ".join(line(name) for name in args.benchmarks) + \
        ("" if args.no_completeness else
         "; completeness: `completeness.py" + (" --quick`" if args.quick else "`"))


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.rejudge:  # the figures and verdict again from a run's stored digests
        return finish(report.judge(json.loads(Path(args.rejudge).read_text())), Path(args.out))
    started, load_start = time.perf_counter(), list(os.getloadavg())
    base = Path(tempfile.mkdtemp(prefix="ros2_ik_ab_"))
    revs = [Revision("old", args.old, base), Revision("new", args.new, base)]
    try:
        for rev in revs:
            rev.create()
        runs = run_rounds(revs, args.benchmarks, args.rounds, args.quick, base / "runs")
        fuzz = None if args.no_completeness else \
            {rev.label: run_completeness(rev, args.quick) for rev in revs}
        changed = git("diff", "--name-only", revs[0].sha, revs[1].sha, "--", "bench",
                      ":(exclude)bench/results")
    finally:
        for rev in revs:
            rev.remove()
        shutil.rmtree(base, ignore_errors=True)
    doc = report.judge({"meta": {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "old": revs[0].info(), "new": revs[1].info(), "rounds": args.rounds,
        "quick": args.quick, "order": "old new, then new old, alternating per round",
        "settings": settings(args), "bench_files_changed": changed.split(),
        "machine": machine(), "load_average_start": load_start,
        "load_average_end": list(os.getloadavg()),
        "seconds": round(time.perf_counter() - started, 1)},
        "runs": runs, "completeness_runs": fuzz})
    return finish(doc, Path(args.out))


def finish(doc: dict, out: Path) -> int:
    """Write ``doc`` into ``out``, print its summary; 0 when every target is met, else 1."""
    report.write(out, doc)
    print(report.markdown(doc).split("\n## ")[0])
    print(f"wrote {out / 'ab.json'}, ab.md, ab.png")
    return 0 if all(doc["verdict"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
