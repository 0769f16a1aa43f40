"""solve.prepare does each group's one-time work once per (frame, constrained, solver)."""
import importlib

from ros2_ik.core import robots, seed_library
from ros2_ik.core.pose import PoseTarget
from ros2_ik.core.solvers import registry

solve_module = importlib.import_module("ros2_ik.core.solve")


def test_each_frame_is_prepared_once(monkeypatch):
    group = robots.load_group("ur5")[1]
    calls = []
    real = seed_library.prepare
    monkeypatch.setattr(seed_library, "prepare",
                        lambda g, frame: (calls.append(frame), real(g, frame)))
    for _ in range(3):
        solve_module.prepare(group, group.tip)
    assert calls == [group.tip]
    fid = group.reduced_frame_id(group.tip)
    assert fid in seed_library.library(group)._rankings  # the ranking was built
    solve_module.prepare(group, group.base)  # another frame: its own ranking
    solve_module.prepare(group, group.tip, constrained=True)  # the constrained kernels
    assert calls == [group.tip, group.base, group.tip]


def test_a_new_group_is_prepared_again(monkeypatch):
    calls = []
    monkeypatch.setattr(seed_library, "library", lambda g: calls.append(g))
    for _ in range(2):
        group = robots.load_group("ur5")[1]  # a new Group object each time
        solve_module.prepare(group)
        solve_module.prepare(group)
    assert len(calls) == 2


def test_each_solver_warms_itself_up_once(monkeypatch):
    """prepare reaches a solver's compiled parts through its own warm_up hook."""
    group = robots.load_group("ur5")[1]
    calls = []
    for name in ("lm", "dls"):
        cls = registry.solver_class(name)
        monkeypatch.setattr(cls, "warm_up", classmethod(
            lambda c, constrained=False: calls.append((c.name, constrained))))
    solve_module.prepare(group, group.tip, solver="dls")
    solve_module.prepare(group, group.tip, solver="dls")
    assert calls == [("dls", False)]
    solve_module.prepare(group, group.tip, constrained=True, solver="lm")
    solve_module.solve(group, PoseTarget(group.tip, group.fk(group.mid_configuration(),
                                                             group.tip)),
                       group.mid_configuration(), solver="lm", max_attempts=1)
    assert calls == [("dls", False), ("lm", True), ("lm", False)]
