"""A process's first solve keeps its budget once ``prepare`` has run (issue 48).

In a fresh interpreter (nothing loaded, as a user's process starts): ``prepare`` on a
UR5, then its first constrained solve with ``timeout_s=0.02`` returns within a bound
that only a kept budget meets (generous: 0.3 s of wall time, the one-time loading alone
takes ~0.3-2 s); a solve on a group nobody prepared still answers, doing the work itself,
and warns that ``prepare`` is the step to call.
"""
import json
import subprocess
import sys

import pytest

FIRST_SOLVE = r"""
import json, time
import numpy as np
from ros2_ik.core import Problem, prepare, robots, solve
from ros2_ik.core.constraints import PositionConstraint

def box_problem(group):
    p = group.fk(group.mid_configuration() + 0.3, group.tip).translation
    box = PositionConstraint(group.robot.model, group.base, p - 0.01, p + 0.01, group.tip,
                             np.zeros(3))
    return Problem(group, None, [box])

group = robots.load_group("ur5")[1]
problem = box_problem(group)
started = time.perf_counter()
prepare(group, None, constrained=True)
prepare_s = time.perf_counter() - started
started = time.perf_counter()
first = solve(group, problem, group.mid_configuration(), timeout_s=0.02, random_seed=0)
first_s = time.perf_counter() - started
other = robots.load_group("ur5")[1]  # a new group: nobody prepared it
late = solve(other, box_problem(other), other.mid_configuration(), timeout_s=1e-4,
             random_seed=0)
print(json.dumps(dict(prepare_s=prepare_s, first_s=first_s, first=first.status.name,
                      late=late.status.name)))
"""


def test_the_first_solve_after_prepare_keeps_its_budget():
    run = subprocess.run([sys.executable, "-c", FIRST_SOLVE], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout.strip().splitlines()[-1])
    assert out["first"] == "SUCCESS"
    assert out["first_s"] < 0.3, out
    # The unprepared group's solve did its own one-time work, and said what to call.
    assert out["late"] in ("SUCCESS", "NO_SOLUTION", "TIMED_OUT")
    assert run.stderr.count("call ros2_ik.core.prepare(") == 1, run.stderr


FIRST_POSES = r"""
import gc, json, sys
import numpy as np
import pinocchio as pin
from numba.core.registry import CPUDispatcher
from ros2_ik.core import prepare, robots, solve
from ros2_ik.core.pose import PoseTarget

def loaded():
    '''Compiled versions loaded in this process, and our modules imported.'''
    versions = sum(len(d.overloads) for d in gc.get_objects() if isinstance(d, CPUDispatcher))
    return versions, {m for m in sys.modules if m.startswith("ros2_ik")}

arm, solver = sys.argv[1:3]
group = robots.load_group(arm)[1]
prepare(group, group.tip, solver=solver)
before = loaded()
T = group.fk(group.mid_configuration() + 0.2, group.tip)
far = pin.SE3(T.rotation, 3.0 * T.translation / np.linalg.norm(T.translation))
inside = pin.SE3(T.rotation, 0.02 * T.translation / np.linalg.norm(T.translation))
statuses = [solve(group, PoseTarget(group.tip, target), group.mid_configuration(),
                  solver, timeout_s=0.005).status.name for target in (T, far, inside)]
after = loaded()
print(json.dumps(dict(statuses=statuses, versions=[before[0], after[0]],
                      modules=sorted(after[1] - before[1]))))
"""


@pytest.mark.parametrize("arm, solver", [("ur5", "lm"), ("panda", "analytic")])
def test_prepare_loads_what_the_first_pose_solves_need(arm, solver):
    """After ``prepare``, a reachable, an unreachable and an in-reach-sphere pose (the closed
    form's proof) load no compiled version and import none of our modules.

    Each would otherwise be one-time work inside that request's budget: EAIK's read-only rows
    made the first unreachable pose load another version of the branches' kernel (~15 ms), and
    the proofs' module was imported at the first failed attempt (~3 ms from source).  On a 7R
    arm the analytic solver sweeps a joint: its ranking's compiled step loaded in the first
    solve (~20 ms, 0.6 s once).
    """
    run = subprocess.run([sys.executable, "-c", FIRST_POSES, arm, solver],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout.strip().splitlines()[-1])
    assert out["statuses"][:2] == ["SUCCESS", "NO_SOLUTION"], out
    assert out["versions"][1] == out["versions"][0], out
    assert out["modules"] == [], out
