"""Copy the latest benchmark tables (bench/results/*.md) into README.md.

Run ``python tools/bench_readme.py`` after the benchmarks (make bench does).
"""
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[1]
BEGIN, END = "<!-- bench:begin -->", "<!-- bench:end -->"


def tables() -> str:
    """Return the tables of the latest IK and collision benchmark runs, in that order."""
    parts = []
    for name in ("latest.md", "collision.md"):
        path = ROOT / "bench" / "results" / name
        if path.is_file():
            parts.append(path.read_text().strip())
    return "\n\n".join(parts)


if __name__ == "__main__":
    readme = ROOT / "README.md"
    text = readme.read_text()
    head, rest = text.split(BEGIN, 1)
    tail = rest.split(END, 1)[1]
    readme.write_text(f"{head}{BEGIN}\n{tables()}\n{END}{tail}")
