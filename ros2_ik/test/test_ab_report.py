"""The old-against-new report's maths (bench/ab_report.py) on hand-made benchmark JSON.

No timing: the documents below have the shapes the benchmark scripts write, with figures
chosen so each ratio, pooled success rate and verdict can be worked out by hand.
"""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import ab_report as report  # noqa: E402


def _pose_rows(panda_ms, ur5_ms, panda_rate=1.0):
    """latest.json rows: lm on two arms, a TRAC-IK row and a chain row (both ignored)."""
    return [{"robot": "panda", "solver": "lm", "mode": "pose", "n": 100, "repeat": 1,
             "median_ms": panda_ms, "success_rate": panda_rate, "skipped": None},
            {"robot": "ur5", "solver": "lm", "mode": "pose", "n": 100, "repeat": 1,
             "median_ms": ur5_ms, "success_rate": 1.0, "skipped": None},
            {"robot": "panda", "solver": "trac_ik", "mode": "pose", "n": 100, "repeat": 1,
             "median_ms": 9.0, "success_rate": 0.5, "skipped": None},
            {"robot": "panda", "solver": "lm", "mode": "chain_alone", "n": 100, "repeat": 1,
             "median_ms": 9.0, "success_rate": 0.5, "skipped": None}]


def test_pose_digest_keeps_lm_pose_rows_and_counts_claimed_failures():
    failures = [{"robot": "panda", "solver": "lm", "status": "SUCCESS"},
                {"robot": "panda", "solver": "lm", "status": "TIMEOUT"},
                {"robot": "ur5", "solver": "lm", "status": "NO_SOLUTION"}]
    rows = report.pose_digest(_pose_rows(0.2, 0.1, panda_rate=0.98), failures)
    assert rows == [
        {"key": "panda", "solver": "lm", "median_ms": 0.2, "n": 100, "successes": 98,
         "false_success": 1},
        {"key": "ur5", "solver": "lm", "median_ms": 0.1, "n": 100, "successes": 100,
         "false_success": 0}]


def test_collision_digest_counts_rejected_answers_as_false_success():
    rows = [{"solver": "lm+collision", "n": 50, "median_ms": 0.3, "success_rate": 0.9,
             "outcomes": {"ok": 45, "none": 2, "late": 1, "touching": 1, "pose": 1}},
            {"solver": "drake_mindist", "n": 50, "median_ms": 3.0, "success_rate": 0.9,
             "outcomes": {"ok": 45, "pose": 5}}]
    assert report.collision_digest(rows, ("lm+collision",)) == [
        {"key": "lm+collision", "solver": "lm+collision", "median_ms": 0.3, "n": 50,
         "successes": 45, "false_success": 2}]


def test_ratios_are_per_round_and_the_figure_is_their_median():
    old = [report.pose_digest(_pose_rows(1.0, 2.0), []) for _ in range(3)]
    new = [report.pose_digest(_pose_rows(ms, 2.0 * ms), [])
           for ms in (1.02, 1.10, 0.90)]
    b = report.compare_benchmark(old, new)
    panda = b["rows"]["panda"]
    assert panda["ratio_new_old_per_round"] == pytest.approx([1.02, 1.10, 0.90])
    assert panda["median_ratio_new_old"] == pytest.approx(1.02)
    assert b["rows"]["ur5"]["median_ratio_new_old"] == pytest.approx(1.02)
    assert b["solvers"]["lm"]["median_of_row_ratios"] == pytest.approx(1.02)
    assert b["verdict"] == {"median_within_limit": True, "success_unchanged": True,
                            "zero_false_success_new": True}


def test_a_benchmark_six_percent_slower_fails_the_speed_target_only():
    old = [report.pose_digest(_pose_rows(1.0, 1.0), [])]
    new = [report.pose_digest(_pose_rows(1.06, 1.06), [])]
    b = report.compare_benchmark(old, new)
    assert b["solvers"]["lm"]["rows_slower_than_limit"] == 2
    assert b["verdict"]["median_within_limit"] is False
    assert b["verdict"]["success_unchanged"] is True
    faster = report.compare_benchmark(new, old)  # 1 / 1.06: faster passes
    assert faster["verdict"]["median_within_limit"] is True


def test_success_drop_beyond_three_standard_errors_is_lower_five_problems_are_noise():
    old = [report.pose_digest(_pose_rows(1.0, 1.0, panda_rate=1.0), [])]
    five_less = [report.pose_digest(_pose_rows(1.0, 1.0, panda_rate=0.95), [])]
    ten_less = [report.pose_digest(_pose_rows(1.0, 1.0, panda_rate=0.90), [])]
    # 5 of 100: p = 0.975, se = sqrt(p (1 - p) 2 / 100) = 0.0221, 3 se = 0.066 > 0.05
    assert report.compare_benchmark(old, five_less)["rows"]["panda"]["success_change"] \
        == "within noise"
    # 10 of 100: p = 0.95, 3 se = 0.0925 < 0.10
    b = report.compare_benchmark(old, ten_less)
    assert b["rows"]["panda"]["success_change"] == "lower"
    assert b["solvers"]["lm"]["rows_success_lower"] == 1
    assert b["verdict"]["success_unchanged"] is False
    assert report.compare_benchmark(ten_less, old)["rows"]["panda"]["success_change"] \
        == "higher"


def test_constrained_false_success_and_rows_missing_from_a_run():
    def doc(with_dls):
        rows = [{"robot": "panda", "family": "a", "solver": "lm", "n": 20, "median_ms": 0.5,
                 "success_rate": 1.0, "false_success": 0, "skipped": None},
                {"robot": "panda", "family": "g", "solver": "dls", "n": 20, "skipped": "n/s"}]
        if with_dls:
            rows.append({"robot": "panda", "family": "a", "solver": "dls", "n": 20,
                         "median_ms": 0.7, "success_rate": 0.95, "false_success": 1,
                         "skipped": None})
        return {"rows": rows}
    b = report.compare_benchmark([report.constrained_digest(doc(False))],
                                 [report.constrained_digest(doc(True))])
    assert list(b["rows"]) == ["panda a lm"]
    assert b["rows_not_in_every_run"] == ["panda a dls"]
    both = report.compare_benchmark([report.constrained_digest(doc(True))],
                                    [report.constrained_digest(doc(True))])
    assert both["solvers"]["dls"]["new_false_success"] == 1
    assert both["solvers"]["lm"]["new_false_success"] == 0
    assert both["verdict"]["zero_false_success_new"] is False


def _completeness(rate, lies):
    return {"cells": {"all / all": {
        "problems": 600, "ours_verified_success": rate, "false_successes": lies,
        "false_failures": round(600 * (1 - rate)), "exceptions": 0, "ours_median_ms": 0.4}}}


def test_completeness_and_overall_verdict():
    old = report.completeness_digest(_completeness(1.0, 0))
    new = report.completeness_digest(_completeness(0.98, 1))
    c = report.compare_completeness(old, new)
    assert new["false_failures"] == 12
    assert c["success_change"] == "lower"  # 12 of 600: p = 0.99, 3 se = 0.0172 < 0.02
    assert c["verdict"] == {"success_unchanged": False, "zero_false_success_new": False}
    same = [report.pose_digest(_pose_rows(1.0, 1.0), [])]
    benches = {"pose": report.compare_benchmark(same, same)}
    assert report.overall_verdict(benches, c) == {
        "medians_within_limit": True, "success_unchanged": False,
        "zero_false_success_new": False}
    assert all(report.overall_verdict(benches, None).values())


def test_markdown_states_the_verdict_and_every_row():
    same = [report.pose_digest(_pose_rows(1.0, 2.0), [])]
    slower = [report.pose_digest(_pose_rows(1.2, 2.4), [])]
    benches = {"pose": report.compare_benchmark(same, slower)}
    rev = {"rev": "HEAD", "sha": "0123456789abcdef"}
    doc = {"meta": {"old": rev, "new": rev, "date": "d", "rounds": 1, "quick": True,
                    "order": "old new", "machine": {"cpu": "cpu", "cores": 2},
                    "load_average_start": [1.0, 1.0, 1.0], "load_average_end": [2.0, 2.0, 2.0],
                    "seconds": 1.0, "settings": "s", "bench_files_changed": []},
           "benchmarks": benches, "completeness": None,
           "verdict": report.overall_verdict(benches, None)}
    text = report.markdown(doc)
    assert "success rates unchanged (no row lower by more than 3 standard errors): yes" \
        in text
    assert "medians within 5 % (new / old <= 1.05, per benchmark and solver the median of " \
        "the rows' median ratios): **NO**" in text
    assert "| pose | lm | 2 | 1.200 | 1.200 - 1.200 | 2 | 0 | 0 / 0 |" in text
    assert "| panda | 1.000 | 1.200 | 1.200 | 100.00 / 100.00 % (same) | 0 / 0 |" in text


def test_each_solver_is_judged_on_its_own_rows():
    def doc(dls_ms):
        return {"rows": [{"robot": arm, "family": "a", "solver": solver, "n": 20,
                          "median_ms": 1.0 if solver == "lm" else dls_ms, "success_rate": 1.0,
                          "false_success": 0, "skipped": None}
                         for arm in ("panda", "ur5", "kinova") for solver in ("lm", "dls")]}
    b = report.compare_benchmark([report.constrained_digest(doc(2.0))],
                                 [report.constrained_digest(doc(2.2))])
    assert b["solvers"]["lm"]["median_of_row_ratios"] == pytest.approx(1.0)
    assert b["solvers"]["dls"]["median_of_row_ratios"] == pytest.approx(1.1)
    assert b["solvers"]["dls"]["median_within_limit"] is False
    assert b["verdict"]["median_within_limit"] is False


def test_judge_recomputes_figures_and_verdict_from_the_stored_runs():
    old = [report.pose_digest(_pose_rows(1.0, 1.0), [])] * 2
    new = [report.pose_digest(_pose_rows(1.1, 1.1), [])] * 2
    doc = report.judge({"runs": {"pose": {"old": old, "new": new}},
                        "completeness_runs": None})
    assert doc["benchmarks"]["pose"]["solvers"]["lm"]["median_of_row_ratios"] == \
        pytest.approx(1.1)
    assert doc["verdict"]["medians_within_limit"] is False
    assert doc["completeness"] is None
