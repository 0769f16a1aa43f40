"""Run arbitrary constrained problems through ``solve`` and judge them (issue 10).

Shared by ``ros2_ik/test/test_constrained_property.py`` and ``bench/fuzz.py``: one
outcome per (problem, solver), decided by ``constrained_check`` (never by the solver).
Allowed exception: ``InvalidArgument`` for a problem with costs on a solver whose
``supports_costs`` is False (documented in ``ros2_ik.core.solvers.base.Solver``).
"""
from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from constrained_check import checker_for
from constrained_ours import build, scene_checker, solve_spec
from constrained_random import RandomProblems, problems
from ros2_ik.core import errors, robots
from ros2_ik.core.solvers import registry

SOLVERS = ("lm", "dls", "sqp", "bfgs")
ARMS = ("panda", "ur5", "kinova", "xarm7", "z1")
SCENE = Path(__file__).resolve().parent / "panda_scene.yaml"


class Arms:
    """Groups, generators and independent checkers of several arms (loaded once)."""

    def __init__(self, arms=ARMS, scene: bool = True):
        self.groups, self.checkers, self.generators = {}, {}, []
        collision = None
        for arm in arms:
            robot, group = robots.load_group(arm)
            self.groups[arm] = group
            if arm == "panda" and scene:
                collision = scene_checker(arm, robot, group, str(SCENE), str(SCENE.parent))
            self.checkers[arm] = checker_for(group, robots.urdf_text(arm), collision
                                             if arm == "panda" else None)
            scene = arm == "panda" and collision is not None
            self.generators.append(RandomProblems(arm, group, with_min_distance=scene,
                                                  collision=collision if scene else None))
        self.collision = collision[0] if collision else None

    def problems(self, count: int, seed: int = 0):
        """``count`` arbitrary problems cycling over the arms."""
        return problems(self.generators, count, seed)


def outcome(arms: Arms, spec, solver: str, timeout_s: float = 0.002,
            max_attempts: int = 3, problem=None) -> Tuple[str, str]:
    """(outcome, detail): success, false_success, a status name, costs_not_supported, crash."""
    group = arms.groups[spec.arm]
    try:
        problem = problem or build(spec, group, arms.collision)
        result = solve_spec(group, problem, spec.seed, solver, timeout_s, spec.index,
                            max_attempts=max_attempts)
    except errors.InvalidArgument as exc:
        if spec.costs and not registry.solver_class(solver).supports_costs:
            return "costs_not_supported", ""
        return "crash", f"{solver} {spec.arm} #{spec.index}: InvalidArgument: {exc}"
    except Exception as exc:  # any other exception out of build/solve on valid input
        return "crash", f"{solver} {spec.arm} #{spec.index}: {type(exc).__name__}: {exc}"
    if result.status.name != "SUCCESS":
        return result.status.name.lower(), ""
    verdict = arms.checkers[spec.arm].check(result.q, spec)
    if verdict.ok:
        return "success", ""
    kinds = ", ".join(t.kind for t in spec.constraints)
    return "false_success", f"{solver} {spec.arm} #{spec.index} [{kinds}]: {verdict.reason}"


def run(arms: Arms, count: int, seed: int = 0, solvers=SOLVERS, timeout_s: float = 0.002,
        max_attempts: int = 3, progress=None) -> Tuple[Counter, Dict[str, List[str]]]:
    """Every problem through every solver: outcome counts and up to 10 details per kind."""
    stats: Counter = Counter()
    details: Dict[str, List[str]] = {"crash": [], "false_success": []}
    for k, spec in enumerate(arms.problems(count, seed)):
        problem: Optional[object] = None
        try:
            problem = build(spec, arms.groups[spec.arm], arms.collision)
        except Exception:
            problem = None  # outcome() rebuilds and records the exception
        for solver in solvers:
            kind, detail = outcome(arms, spec, solver, timeout_s, max_attempts, problem)
            stats[kind] += 1
            stats[f"{solver}:{kind}"] += 1
            if kind == "crash":  # which exception: "crash: ValueError: Several frames ..."
                stats["crash: " + detail.split(": ", 1)[1][:60]] += 1
            if detail and len(details.setdefault(kind, [])) < 10:
                details[kind].append(detail)
        if progress is not None:
            progress(k + 1)
    return stats, details
