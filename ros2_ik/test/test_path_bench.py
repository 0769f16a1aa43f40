"""bench/path_bench.py runs end to end on a few paths and writes its JSON and table.

Not a timed test: it checks the files, their fields, and the figures against each other
and against the per-path rows (never a speed).
"""
import json
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"


def test_path_bench_writes_rows_targets_and_table(tmp_path):
    done = subprocess.run(
        [sys.executable, str(BENCH / "path_bench.py"), "--quick", "--arms", "ur5",
         "--paths-per-kind", "1", "--joint-paths", "2", "--timing-lines", "2",
         "--out", str(tmp_path)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads((tmp_path / "path_quick.json").read_text())
    paths = report["paths"]
    assert {p["kind"] for p in paths} == {"line", "line_rot", "arc", "arc_rot", "circle",
                                          "circle_rot", "joint"}
    assert sum(p["feasible"] for p in paths) == 2
    for p in paths:
        assert 0.0 <= p["ours"]["fraction"] <= 1.0 and p["ours"]["jumps"] == 0
        assert p["ours"]["wrong_pose"] == 0
        for name in ("seq_ours", "seq_tracik"):
            if name in p:
                assert 0.0 <= p[name]["fraction"] <= 1.0 and p[name]["jumps"] >= 0
    goals = report["targets"]
    assert goals["ours_jumps"] == sum(p["ours"]["jumps"] for p in paths)
    assert goals["feasible_paths"] == 2
    assert set(goals["panda_timing"]) <= {"free", "scene"}
    assert goals["panda_timing"]["free"]["paths"] == 2
    table = (tmp_path / "path_quick.md").read_text()
    assert "## Targets" in table and "| ur5 | joint | 2 |" in table
