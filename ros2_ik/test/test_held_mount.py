"""A group held with its mount moved shares what depends on its chain's shape alone.

The node holds a locked joint above an arm where the robot holds it (node/upstream.py): a
torso lift, a rail.  Each new value is a group of its own (``Group.held_at``), prepared on
its first request.  Whether lm runs a 7R arm's sweep (``Sweep.cheap``) depends on the
chain's shape, which such a joint does not change (``Group.shape_owner``): the held group
asks the group it was held from, and detects its own sweep only when lm would run it.  A
lift whose encoder jitters by 1e-5 m between requests cost ~0.2 s per request on TIAGo's
arm, the sweep detection; answers are checked by pinocchio FK of the full model.  The
seed library and the reach bound are the source's too (the bound's sphere moved with the
chain), so a new lift height costs a group build, not a prepare.
"""
import sys
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

from panda_node import T_frame
from ros2_ik.core.closed_form import sweep
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
        pose.T_world_target, True, True, seed_library.SAMPLES)
    np.testing.assert_array_equal(shared, np.argsort(own, kind="stable")[:8])
    prepare(held, held.tip, solver="analytic")  # analytic runs every sweep: its own
    assert detections == [held]


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


def test_a_cheap_sweep_is_detected_again_where_the_mount_moved(detections):
    """A vendor iiwa (its sweep cheap: lm runs it) on a locked rail, held 1 m along it."""
    arm = next((a for a in dof_arms.arms(7) if a.name == "kuka_lbr_iiwa14_r820"), None)
    if arm is None:
        pytest.skip("the vendor folder's kuka_lbr_iiwa14_r820 is absent")
    railed = dof_arms.on_rail(arm)
    robot, on_rail = railed.group()
    group = robot.group(railed.base, railed.tip, joints=list(on_rail.joint_names[1:]))
    frame_id = robot.frame_id(group.tip)
    prepare(group, group.tip)
    assert sweep.of(group, frame_id).cheap
    detections.clear()
    held = group.held_at({"rail_joint": 1.0})
    assert held.shape_owner(frame_id) is group
    prepare(held, held.tip)
    assert detections == [held]
    q = held.random_configuration(np.random.default_rng(0))
    T = T_frame(robot.model, list(held.joint_names) + ["rail_joint"], list(q) + [1.0],
                held.tip)
    result = solve(held, PoseTarget(held.tip, T), held.mid_configuration(), "lm", 0.5, 0, 1)
    assert result.status is IKStatus.SUCCESS, result.message
    assert dof_arms.verified(held, result.q, T)


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
