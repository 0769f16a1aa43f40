"""``solve()`` hands each of its arguments to the solver as the option of that name.

``solve`` builds :class:`SolveOptions` positionally (cheaper than by keyword): a field
added or moved in ``SolveOptions`` must not shift the values.  Every option gets a value
unlike its default and unlike the others', and the solver's view is compared by name.
"""
import math

import pinocchio as pin

from ros2_ik.core import PoseTarget, robots, solve
from ros2_ik.core.solvers import registry, seed_library
from ros2_ik.core.verify import ConstraintTolerance, DEFAULT_TOLERANCE


def _capture(monkeypatch):
    seen = []
    create = registry.create

    def capturing(name):
        instance = create(name)
        solve_real = instance.solve

        def solve_seen(problem, seed, options, *rest):
            seen.append(options)
            return solve_real(problem, seed, options, *rest)

        instance.solve = solve_seen
        return instance

    monkeypatch.setattr(registry, "create", capturing)
    return seen


def test_every_argument_reaches_the_solver_under_its_name(monkeypatch):
    seen = _capture(monkeypatch)
    _, group = robots.load_group("ur5")
    seed = group.mid_configuration()
    target = PoseTarget(group.tip, group.fk(seed + 0.1, group.tip))

    def cancel():
        return False

    def feedback(progress):
        return None

    solve(group, target, seed, timeout_s=0.25, max_attempts=7, random_seed=11,
          max_joint_jump_rad=2.5, num_solutions=3, cancel=cancel, feedback=feedback,
          constraint_tolerance_m=2e-4, constraint_tolerance_rad=3e-3, library_starts=5)
    o = seen[-1]._asdict()
    assert o.pop("constraint_tolerance") == ConstraintTolerance(2e-4, 3e-3)
    assert o == {"timeout_s": 0.25, "max_attempts": 7, "random_seed": 11,
                 "max_joint_jump_rad": 2.5, "num_solutions": 3, "cancel": cancel,
                 "feedback": feedback, "library_starts": 5}


def test_the_defaults_reach_the_solver(monkeypatch):
    seen = _capture(monkeypatch)
    _, group = robots.load_group("ur5")
    seed = group.mid_configuration()
    solve(group, PoseTarget(group.tip, pin.SE3(group.fk(seed, group.tip))), seed,
          random_seed=3)
    o = seen[-1]
    assert o.constraint_tolerance == DEFAULT_TOLERANCE
    assert (o.timeout_s, o.max_attempts, o.random_seed, o.num_solutions) == (0.005, 0, 3, 1)
    assert math.isinf(o.max_joint_jump_rad) and o.cancel is None and o.feedback is None
    assert o.library_starts == seed_library.LIBRARY_STARTS
