"""The whole-body families in the completeness fuzz (issue 47): lm beside Drake SNOPT.

Problems of ``wholebody_problems`` (humanoid, quadruped, mobile, legged_arm), cycling over
its robots, each feasible by construction; ros2_ik (``wholebody_ours``) and Drake SNOPT
with restarts (``wholebody_drake``) solve each with the same budget, which goes first
alternating, and ``wholebody_check`` judges both.  Records have the shape of
``completeness.outcomes``' (``robot_kind`` "whole-body", ``combo`` the family), so the
fuzz's cells, false failures (those Drake solved among them) and false SUCCESS count
them alike.
"""
from __future__ import annotations

import zlib
from typing import Dict, List

import numpy as np

import wholebody_problems as wb
from wholebody_bench import adapters, run_one
from wholebody_check import WholeBodyChecker

KIND = "whole-body"


class WholeBodyCase:
    """One robot: its generator, checker, and the two methods (or why they cannot run)."""

    def __init__(self, robot: str):
        self.robot = robot
        self.generator = wb.Generator(robot)
        self.checker = WholeBodyChecker(robot)
        self.solvers, self.skipped = adapters(robot, ("ours", "drake_snopt"))


def cases(robots=None) -> List[WholeBodyCase]:
    """Return a case per robot of ``wholebody_problems.ROBOTS`` (or of those named)."""
    return [WholeBodyCase(r) for r in (robots or wb.ROBOTS)]


def outcomes(robot_cases: List[WholeBodyCase], count: int, budget_s: float,
             seed: int) -> List[dict]:
    """``count`` problems over the cases whose ros2_ik side runs; one record per problem."""
    usable = [c for c in robot_cases if "ours" in c.solvers]
    rngs = {c.robot: np.random.default_rng([seed, zlib.crc32(c.robot.encode())])
            for c in usable}
    records = []
    for i in range(count if usable else 0):
        case = usable[i % len(usable)]
        problem = case.generator.problem(rngs[case.robot], i)
        runs: Dict[str, dict] = {}
        order = ["ours", "drake_snopt"] if i % 2 == 0 else ["drake_snopt", "ours"]
        for method in order:
            if method in case.solvers:
                runs[method] = run_one(case.checker, case.solvers[method], problem, budget_s)
        records.append({"robot": case.robot, "robot_kind": KIND, "combo": problem.family,
                        "index": i, "ours": _ours(runs["ours"]),
                        "drake": _drake(runs.get("drake_snopt"), budget_s)})
    return records


def _ours(run: dict) -> dict:
    status = "EXCEPTION" if run["why"] == "exception" else run["note"].split(":")[0]
    return {"status": status, "ok": run["ok"], "time_s": run["time_s"],
            "message": run["note"], "reason": run["why"]}


def _drake(run, budget_s: float):
    if run is None:
        return None
    return {"ok": run["ok"] or (run["why"] == "late" and run["time_s"] <= 1.5 * budget_s),
            "time_s": run["time_s"], "attempts": run["note"], "reason": run["why"]}


def unavailable(robot_cases: List[WholeBodyCase]) -> Dict[str, str]:
    """``{robot/method: why}`` of the sides that could not run."""
    return {f"{c.robot}/{m}": why for c in robot_cases for m, why in c.skipped.items()}
