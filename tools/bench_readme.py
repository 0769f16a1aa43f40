"""Copy the latest benchmark tables (bench/results/*.md) into the docs.

Run ``python tools/bench_readme.py`` after the benchmarks (make bench does).  Each table
goes between its markers, in whichever of README.md and docs/*.md holds them
(``doc_sections``): ``<!-- bench:begin/end -->`` the IK and collision tables,
``<!-- constrained:begin/end -->`` the constrained-IK summary (constrained.md up to its
per-solver details, which stay in bench/results/constrained.md), ``<!-- constrained-other:
begin/end -->`` the same of the ``--other-arms`` run, ``<!-- servo:begin/end
-->`` servo.md, servo_node.md and servo_whole_body.md, ``<!-- batch:begin/end -->``
batch.md, ``<!-- wholebody:begin/end -->`` the whole-body summary (wholebody.md up to its
per-method details), ``<!-- analytic:begin/end -->`` analytic.md (closed-form pose IK),
``<!-- sweep:begin/end -->`` sweep.md (7R arms by a swept joint), ``<!-- seven-r:begin/end
-->`` seven_r.md (7R arms against lm at issue 48's start).
"""
import pathlib

import doc_sections

ROOT = pathlib.Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
DETAILS = "<!-- constrained-details -->"


def tables() -> str:
    """Return the tables of the latest IK and collision benchmark runs, in that order."""
    parts = []
    for name in ("latest.md", "collision.md"):
        path = RESULTS / name
        if path.is_file():
            parts.append(path.read_text().strip())
    return "\n\n".join(parts)


def constrained(folder: str = "") -> str:
    """Return the summary part of a constrained-IK benchmark ('' when absent).

    ``folder``: under bench/results (``constrained_other_arms``: the ``--other-arms`` run).
    """
    name = f"{folder}/constrained.md" if folder else "constrained.md"
    path = RESULTS / name
    if not path.is_file():
        return ""
    return path.read_text().split(DETAILS)[0].strip() \
        + "\n\nPer solver (claimed success, false SUCCESS, p95, objective ratios): " \
        f"[bench/results/{name}](bench/results/{name})."


def servo() -> str:
    """Return servo.md, servo_node.md and servo_whole_body.md (whole-body), or ''."""
    parts = [(RESULTS / name).read_text().strip()
             for name in ("servo.md", "servo_node.md", "servo_whole_body.md")
             if (RESULTS / name).exists()]
    return "\n\n".join(parts)


def batch() -> str:
    """Return the batch benchmark's table and summary (batch.md), or ''."""
    path = RESULTS / "batch.md"
    return path.read_text().strip() if path.exists() else ""


def after_title(name: str) -> str:
    """Return a benchmark's tables without their title (analytic.md, sweep.md), or ''."""
    path = RESULTS / name
    return path.read_text().split("\n", 2)[2].strip() if path.exists() else ""


def wholebody() -> str:
    """Return the whole-body benchmark's summary (wholebody.md before its details), or ''."""
    path = RESULTS / "wholebody.md"
    if not path.exists():
        return ""
    return path.read_text().split("<!-- wholebody-details -->")[0].strip() \
        + "\n\nPer method (claims, late answers, failure reasons, base displacement): " \
        "[bench/results/wholebody.md](bench/results/wholebody.md)."


if __name__ == "__main__":
    sections = {"bench": tables(), "servo": servo(), "batch": batch(),
                "analytic": after_title("analytic.md"), "sweep": after_title("sweep.md"),
                "seven-r": after_title("seven_r.md"),
                "wholebody": wholebody(),
                "constrained-other": constrained("constrained_other_arms"),
                "constrained": constrained()}
    for name, body in sections.items():
        if body:
            print(f"{name} -> {doc_sections.write(name, body).relative_to(ROOT)}")
