"""Issue 48's closed-form targets as bench/analytic_bench.py reads them, on hand-made rows.

No timing: the rows below have the fields the benchmark writes, with figures chosen on
either side of each target.
"""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import analytic_bench  # noqa: E402


def _row(arm, **figures):
    row = {"arm": arm, "closed_form": True, "ours_success": 1.0, "false_no_solution": 0,
           "ours_median_us": 20.0, "ours_alone_median_us": 15.0,
           "num_solutions_equal_eaik": 1.0, "unreachable_median_us": 50.0,
           "unreachable_no_solution": 1.0, "batch_ratio": 15.0}
    row.update(figures)
    return row


def _said(rows):
    return [line.rsplit(": ", 1)[1] for line in analytic_bench.verdicts(rows)]


def test_every_target_met_on_rows_that_meet_them():
    rows = [_row("a"), _row("b", ours_median_us=25.0), {"arm": "c", "closed_form": False}]
    assert _said(rows) == ["met"] * 6


def test_each_target_is_missed_by_the_worst_arm_alone():
    misses = [({"ours_success": 0.995}, 0), ({"false_no_solution": 1}, 0),
              ({"ours_median_us": 25.1}, 1), ({"ours_alone_median_us": 26.0}, 2),
              ({"num_solutions_equal_eaik": 0.99}, 3), ({"unreachable_median_us": 1001.0}, 4),
              ({"unreachable_no_solution": 0.95}, 4), ({"batch_ratio": 9.9}, 5)]
    for figures, line in misses:
        said = _said([_row("a"), _row("b", **figures)])
        assert said[line] == "missed", (figures, said)
        assert said.count("missed") == 1, (figures, said)
        assert "(b" in analytic_bench.verdicts([_row("a"), _row("b", **figures)])[line] \
            or "false_no_solution" in figures


def test_no_closed_form_arm_no_verdict():
    assert analytic_bench.verdicts([{"arm": "c", "closed_form": False}]) == []


def test_paired_ab_scales_a_committed_run_by_each_arms_ratios():
    """bench/paired_ab.py --scale: the committed medians times this run's new / old."""
    import paired_ab

    committed = {"machine": {"cpu": "elsewhere"},
                 "arms": [_row("a", ours_median_us=30.0, ours_alone_median_us=20.0),
                          _row("b", ours_median_us=40.0, ours_alone_median_us=10.0),
                          {"arm": "c", "closed_form": False}]}
    ratios = [{"arm": "a", "cold_ratio": 0.5, "warm_ratio": 0.8},
              {"arm": "b", "cold_ratio": 0.7, "warm_ratio": 0.9},
              {"arm": "c", "cold_ratio": 0.1, "warm_ratio": 0.1},
              {"arm": "d", "cold_ratio": 0.1, "warm_ratio": 0.1}]
    found = paired_ab.estimate(ratios, committed)
    assert found["machine"] == "elsewhere"
    assert [r["arm"] for r in found["arms"]] == ["a", "b"]
    assert [r["estimated_median_us"] for r in found["arms"]] == pytest.approx([15.0, 28.0])
    assert [r["estimated_alone_median_us"] for r in found["arms"]] == pytest.approx([16.0, 9.0])
    lines = paired_ab.estimate_report(found)
    assert "worst 28.0 us (b;" in lines[-3] and "worst 16.0 us (a;" in lines[-2]
