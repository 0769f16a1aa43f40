"""A group held with its mount moved shares what depends on its chain's shape alone.

The node holds a locked joint above an arm where the robot holds it (node/upstream.py): a
torso lift, a rail.  Each new value is a group of its own (``Group.held_at``), prepared on
its first request.  Whether lm runs a 7R arm's sweep (``Sweep.cheap``) depends on the
chain's shape, which such a joint does not change (``Group.shape_owner``); so does the
closed form or the sweep itself, placed where the chain now is (``closed_form.chain.Placed``:
the source's for ``D^-1 T``).  A lift whose encoder jitters by 1e-5 m between requests cost
~0.2 s per request on TIAGo's arm, the sweep detection; answers are checked by pinocchio FK
of the full model.  The seed library and the reach bound are the source's too (the bound's
sphere moved with the chain), so a new lift height costs a group build, not a prepare.
"""
import sys
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

from panda_node import T_frame
from ros2_ik.core.closed_form import chain, sweep
from ros2_ik.core.kinematics import reach
from ros2_ik.core.model.robot import Robot
from ros2_ik.core.model.robots import ARMS, urdf_text
from ros2_ik.core.pose import PoseTarget
from ros2_ik.core.result import IKStatus
from ros2_ik.core.solve import prepare, solve
from ros2_ik.core.solvers import seed_library

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import dof_arms  # noqa: E402

pytest.importorskip("eaik")

LIFT = "torso_lift_joint"


@pytest.fixture
def detections(monkeypatch):
    """The groups whose sweep is detected from now on (``sweep.detect`` counted)."""
    calls = []
    real = sweep.detect

    def counted(group, frame_id):
        calls.append(group)
        return real(group, frame_id)
    monkeypatch.setattr(sweep, "detect", counted)
    return calls


def test_a_new_lift_height_detects_no_sweep_lm_does_not_run(detections):
    spec = ARMS["tiago"]
    group = Robot.from_urdf(urdf_text("tiago")).group(spec.base, spec.tip)
    frame_id = group.robot.frame_id(group.tip)
    prepare(group, group.tip)
    assert not sweep.of(group, frame_id).cheap
    detections.clear()
    held = group.held_at({LIFT: 0.25})
    assert held.chain_owner(frame_id) is held and held.shape_owner(frame_id) is group
    prepare(held, held.tip)
    assert detections == []
    model = group.robot.model
    rng = np.random.default_rng(3)
    for k in range(20):
        q = held.random_configuration(rng)
        names = list(held.joint_names) + [LIFT]
        T = T_frame(model, names, list(q) + [0.25], held.tip)
        result = solve(held, PoseTarget(held.tip, T), held.mid_configuration(), "lm", 0.5, 0, k)
        assert result.status is IKStatus.SUCCESS, result.message
        M = T_frame(model, names, list(result.q) + [0.25], held.tip)
        assert np.linalg.norm(M.translation - T.translation) < 1e-4
        assert np.linalg.norm(pin.log3(M.rotation.T @ T.rotation)) < 1e-3
    assert detections == []
    # The seed library and reach bound are the source's, the bound's sphere moved with it.
    assert seed_library._LIBRARIES.get(held) is None
    moved, source = reach.reach_bound(held, frame_id), reach.reach_bound(group, frame_id)
    assert moved.radius_m == source.radius_m
    rise = [0.0, 0.0, 0.25 - group.locked[LIFT]]
    np.testing.assert_allclose(moved.centre, np.add(source.centre, rise))
    pose = PoseTarget(held.tip, T).compile(held)  # ranked as a library of its own would
    shared = seed_library.nearest_indices(held, pose, 8, held.mid_configuration())
    own = seed_library.SeedLibrary(held).ranking(held, held.tip).distances(
        pose.world_target_rows, True, True, seed_library.SAMPLES)
    np.testing.assert_array_equal(shared, np.argsort(own, kind="stable")[:8])
    prepare(held, held.tip, solver="analytic")  # analytic runs every sweep: the source's
    assert detections == [] and sweep.of(held, frame_id).form is sweep.of(group, frame_id)


def _without_arm_4():
    """TIAGo and its arm group without ``arm_4_joint`` (locked inside the chain)."""
    spec = ARMS["tiago"]
    robot = Robot.from_urdf(urdf_text("tiago"))
    full = robot.group(spec.base, spec.tip)
    return robot, robot.group(spec.base, spec.tip,
                              joints=[n for n in full.joint_names if n != "arm_4_joint"])


def test_a_joint_locked_inside_the_chain_changes_its_shape():
    robot, group = _without_arm_4()
    frame_id = robot.frame_id(group.tip)
    inside = group.held_at({"arm_4_joint": 0.5})
    assert inside.shape_owner(frame_id) is inside
    above = group.held_at({LIFT: 0.1})
    assert above.shape_owner(frame_id) is group
    both = group.held_at({LIFT: 0.1, "arm_4_joint": 0.5})
    assert both.shape_owner(frame_id) is both
    beside = group.held_at({"head_1_joint": 0.3})  # moves neither the chain nor the frame
    assert beside.shape_owner(frame_id) is group and beside.chain_owner(frame_id) is group


def _railed(name: str, joints: int):
    """(robot, the arm's group on a locked rail) of arm ``name`` (``joints`` joints)."""
    arm = next((a for a in dof_arms.arms(joints) if a.name == name), None)
    if arm is None:
        pytest.skip(f"arm {name} is absent (the vendor folder?)")
    railed = dof_arms.on_rail(arm)
    robot, on_rail = railed.group()
    return robot, robot.group(railed.base, railed.tip, joints=list(on_rail.joint_names[1:]))


def _on_rail_at(robot, group, q: np.ndarray, x: float) -> pin.SE3:
    """``T_world_tip`` of ``group``'s values ``q`` with the rail at ``x`` [m], by pinocchio FK."""
    return T_frame(robot.model, list(group.joint_names) + ["rail_joint"], list(q) + [x],
                   group.tip)


def test_a_cheap_sweep_is_the_sources_placed_where_the_mount_moved(detections):
    """A vendor iiwa (its sweep cheap: lm runs it) on a locked rail, held 1 m along it.

    The held group solves its source's sweep for ``D^-1 T``: no detection of its own
    (~0.24 s per new rail position before).  Answers checked by pinocchio FK at x = 1 m.
    """
    robot, group = _railed("kuka_lbr_iiwa14_r820", 7)
    frame_id = robot.frame_id(group.tip)
    prepare(group, group.tip)
    assert sweep.of(group, frame_id).cheap
    detections.clear()
    held = group.held_at({"rail_joint": 1.0})
    assert held.shape_owner(frame_id) is group
    prepare(held, held.tip)
    prepare(held, held.tip, solver="analytic")
    assert detections == []
    placed = sweep.of(held, frame_id)
    assert isinstance(placed, chain.Placed) and placed.form is sweep.of(group, frame_id)
    rng = np.random.default_rng(0)
    for k in range(10):
        T = _on_rail_at(robot, held, held.random_configuration(rng), 1.0)
        for solver in ("lm", "analytic"):
            result = solve(held, PoseTarget(held.tip, T), held.mid_configuration(), solver,
                           0.5, 0, k)
            assert result.status is IKStatus.SUCCESS, result.message
            assert dof_arms.verified(held, result.q, T)
            M = _on_rail_at(robot, held, result.q, 1.0)
            assert np.linalg.norm(M.translation - T.translation) < 1e-4
    assert "swept" in result.message and detections == []


def test_a_closed_form_on_a_moved_rail_finds_the_branches_of_its_own():
    """A UR5 on a rail held 1.3 m along it: its source's closed form, placed.

    Every branch (``analytic``, ``num_solutions=8``) equals that of a group built at
    x = 1.3 m from the start, which detects a closed form of its own; so do the batch
    rows (``solve_many``) and the proof that an unreachable pose has none.
    """
    robot, group = _railed("ur5", 6)
    frame_id = robot.frame_id(group.tip)
    prepare(group, group.tip)
    held = group.held_at({"rail_joint": 1.3})
    own = robot.group(held.base, held.tip, joints=list(held.joint_names),
                      locked=dict(held.locked))
    placed = chain.of(held, frame_id)
    assert isinstance(placed, chain.Placed) and placed.form is chain.of(group, frame_id)
    assert not isinstance(chain.of(own, frame_id), chain.Placed)
    rng = np.random.default_rng(1)
    targets = []
    for k in range(10):
        T = _on_rail_at(robot, held, held.random_configuration(rng), 1.3)
        targets.append(T.homogeneous)
        answers = [solve(g, PoseTarget(g.tip, T), g.mid_configuration(), "analytic", 0.5, 0,
                         k, num_solutions=8) for g in (held, own)]
        for result in answers:
            assert result.status is IKStatus.SUCCESS, result.message
            assert all(dof_arms.verified(held, s.q, T) for s in result.solutions)
        branches = [sorted(tuple(np.round(s.q, 9)) for s in r.solutions) for r in answers]
        assert len(branches[0]) >= 1 and branches[0] == branches[1]
    Q, ls = placed.solve_many(np.array(targets))
    Q_own, ls_own = chain.of(own, frame_id).solve_many(np.array(targets))
    np.testing.assert_array_equal(ls, ls_own)
    np.testing.assert_allclose(Q[~ls], Q_own[~ls_own], atol=1e-9)
    # On the shoulder's axis, inside the reach sphere: the closed form's proof answers.
    above = pin.SE3(np.eye(3), held.fk(np.zeros(6), "shoulder_link").translation + [0, 0, 0.2])
    proofs = [solve(g, PoseTarget(g.tip, above), g.mid_configuration(), "analytic", 0.5, 0, 0)
              for g in (held, own)]
    assert [r.status for r in proofs] == [IKStatus.NO_SOLUTION] * 2
    misses = [r.message.split(" m / ")[0] for r in proofs]  # the angle's roundoff differs
    assert "closed form" in misses[0] and misses[0] == misses[1]


def test_mount_motion_moves_the_chain_as_the_held_group_has_it():
    """``Group.mount_motion``: the chain's frames at the new lift are D times the old ones."""
    robot, group = _without_arm_4()
    D = group.mount_motion({LIFT: 0.3, "head_1_joint": 0.4})
    held = group.held_at({LIFT: 0.3})
    rng = np.random.default_rng(4)
    for _ in range(5):
        q = group.random_configuration(rng)
        for frame in (group.tip, "arm_3_link"):
            np.testing.assert_allclose((D * group.fk(q, frame)).homogeneous,
                                       held.fk(q, frame).homogeneous, atol=1e-12)
    assert np.allclose(D.translation, [0.0, 0.0, 0.3 - group.locked[LIFT]], atol=1e-12)
    assert group.mount_motion({"head_1_joint": 0.4}) == pin.SE3.Identity()
    assert group.mount_motion({"arm_4_joint": 0.5}) is None
    with pytest.raises(Exception, match="no_such_joint"):
        group.mount_motion({"no_such_joint": 0.1})
    panda = Robot.from_urdf(urdf_text("panda")).group(ARMS["panda"].base, ARMS["panda"].tip)
    # A mimic joint's name is taken (joint_states name them): it raised InvalidJoint.
    assert panda.mount_motion({"panda_finger_joint2": 0.02}) == pin.SE3.Identity()


def test_a_group_held_with_other_fingers_shares_its_library_and_reach_bound():
    """Fingers beside the chain: the same seed library and reach bound as the source's.

    Each new finger reading (a collision-checked request holds them) built a library and
    a bound of its own, ~6 ms per request on a Panda whose gripper reading jitters.
    Answers on the held group are checked by pinocchio FK.
    """
    spec = ARMS["panda"]
    robot = Robot.from_urdf(urdf_text("panda"))
    group = robot.group(spec.base, spec.tip)
    prepare(group, group.tip)
    held = group.held_at({"panda_finger_joint1": 0.031})
    fid = robot.frame_id(held.tip)
    assert held.chain_owner(fid) is group
    prepare(held, held.tip)
    assert seed_library._LIBRARIES.get(held) is None and not reach._BOUNDS.table(held)
    assert reach.reach_bound(held, fid) is reach.reach_bound(group, fid)
    rng = np.random.default_rng(5)
    restarted = 0
    for k in range(20):
        T = held.fk(held.random_configuration(rng), held.tip)
        result = solve(held, PoseTarget(held.tip, T), held.mid_configuration(), "lm", 0.5, 0, k)
        assert result.status is IKStatus.SUCCESS, result.message
        assert dof_arms.verified(held, result.q, T)
        restarted += result.restarts > 0  # library starts ranked
    assert restarted and seed_library._LIBRARIES.get(held) is None
