"""solve.prepare does each group's one-time work once per (frame, constrained, solver)."""
import importlib

from ros2_ik.core import robots
from ros2_ik.core.pose import PoseTarget
from ros2_ik.core.solvers import seed_library
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


def test_a_first_solve_does_not_spend_its_budget_on_the_models_data():
    """A whole robot's Data (tiago_dual: ~30 ms to make) is made before the clock starts.

    The completeness fuzz found a first request on such a group answered TIMED_OUT 'before
    any candidate was evaluated' with a 0.1 s budget.
    """
    import time

    import numpy as np

    from ros2_ik.core import PoseTarget, Robot, robots, solve

    path = robots.data_dir() / "tiago_description" / "robots" / "tiago_dual.urdf"
    if not path.exists():
        path = next(robots.data_dir().rglob("tiago_dual.urdf"))
    robot = Robot.from_urdf(path.read_text())
    group = robot.group(tip="hand_left_index_flex_3_link")
    started = time.perf_counter()
    robot.model.createData()
    make_data_s = time.perf_counter() - started
    seed = group.mid_configuration()
    target = PoseTarget(group.tip, group.fk(seed + 0.01, group.tip))
    result = solve(group, target, seed, timeout_s=1.0, random_seed=0)
    assert result.status.name == "SUCCESS"
    assert result.solve_time_s < 0.5 * make_data_s, (result.solve_time_s, make_data_s)
    assert np.all(np.isfinite(result.q))


def test_prepare_builds_the_reach_bound_of_its_frame():
    """The reach proof of every solve reads the bound; prepare builds it, not the 1st solve."""
    from ros2_ik.core.kinematics import reach
    _, group = robots.load_group("ur5")
    assert not reach._BOUNDS.table(group)
    solve_module.prepare(group, None, constrained=True)
    tip = group.robot.model.getFrameId(group.tip)
    assert reach._BOUNDS.table(group)[tip] is not None


def test_prepare_builds_a_whole_body_frames_bound_from_the_base():
    """Whole-body pose targets and restarts read it (``reach.base_distance_bound``)."""
    import wholebody_groups
    from ros2_ik.core.kinematics import reach
    group = wholebody_groups.pr2()
    tip = group.robot.frame_id(group.tip)
    assert not reach._BASE.table(group)
    solve_module.prepare(group, group.tip)
    assert reach._BASE.table(group)[tip] > 0.5


def test_prepare_makes_the_per_group_tables_a_first_request_reads():
    """The frames' locked placements (the proofs') and, with ``constrained``, the constraint
    kernels' tree: each needs a model Data (5-12 ms on tiago_dual's 101 joints), which the
    first constrained request on a big model made inside its budget (60 ms)."""
    from ros2_ik.core.kinematics import model as kinematics_model
    group = robots.load_group("panda")[1]
    assert group._locked_data is None and kinematics_model._TREES.get(group) is None
    solve_module.prepare(group, group.tip)
    assert group._locked_data is not None
    assert len(group.locked_placements()) == group.robot.model.nframes
    assert kinematics_model._TREES.get(group) is None  # only with constrained
    solve_module.prepare(group, group.tip, constrained=True)
    assert kinematics_model._TREES.get(group) is not None
    # every frame's placement is the model's at the locked joints' values
    T = group.fk(group.mid_configuration(), group.base)
    assert (group.locked_placement(group.robot.frame_id(group.base)).homogeneous
            == T.homogeneous).all()


def test_constrained_prepare_reads_the_joints_and_frames_a_first_constraint_needs(
        monkeypatch):
    """Every joint of the model (~0.25-0.6 ms) and every frame name (~0.03-0.12 ms), read
    once at ``prepare`` with ``constrained``: the first constrained request on each model
    read them."""
    from ros2_ik.core.constraints import JointBoundsConstraint, PositionConstraint, joints
    from ros2_ik.core.kinematics import frames
    robot, group = robots.load_group("pr2_right")
    read = []
    read_joint = joints._read_joint
    monkeypatch.setattr(joints, "_read_joint", lambda m, j: read.append(j) or read_joint(m, j))
    assert frames._FRAME_IDS.get(robot.model) is None
    solve_module.prepare(group, group.tip, constrained=True)
    assert len(read) == robot.model.njoints - 1
    table = frames._FRAME_IDS.get(robot.model)
    assert table is not None and len(table[1]) == len({f.name for f in robot.model.frames})
    read.clear()
    JointBoundsConstraint(robot.model, {group.joint_names[0]: (-0.1, 0.1)})
    PositionConstraint(robot.model, "universe", [-1.0] * 3, [1.0] * 3, group.tip, [0.0] * 3)
    assert not read and frames._FRAME_IDS.get(robot.model) is table


def test_settle_memory_freezes_what_lives_then():
    """After ``settle_memory`` the objects alive are exempt from collections; later ones not."""
    import gc

    from ros2_ik.core import settle_memory
    gc.unfreeze()
    try:
        before = [[] for _ in range(10)]  # tracked containers alive at the call
        settle_memory()
        frozen = gc.get_freeze_count()
        assert frozen >= len(before)
        later = [[] for _ in range(10)]  # made after it: tracked, not frozen
        assert gc.get_freeze_count() == frozen and all(map(gc.is_tracked, later))
    finally:
        gc.unfreeze()  # the other tests' heap as it was
