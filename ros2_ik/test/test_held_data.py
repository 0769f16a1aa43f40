"""A group held elsewhere is cheap to make: no ``Data`` of the full model of its own.

A real robot's encoders report new values on every reading, so each collision-checked
request holds the joints outside the group at new values: a new group
(``Group.held_at``).  Its full model is its source's, so it uses its source's ``Data``
of it in each thread, and its placements at the locked values (``locked_data``) are copies
out of one forward kinematics, not a ``Data`` kept per group (5-12 ms to make on a big
model).  Checked against pinocchio on a ``Data`` of our own: the placements, and the
held group's answers by FK with the other arm where it is held.
"""
import threading

import numpy as np
import pinocchio as pin
import pytest

from ros2_ik.core.model.robot import Robot
from ros2_ik.core.model.robots import ARMS, srdf_text, urdf_text
from ros2_ik.core.pose import PoseTarget
from ros2_ik.core.result import IKStatus
from ros2_ik.core.solve import prepare, solve
from ros2_ik.core.solvers import chain_kernel
from ros2_ik.core.solvers.pose_state import compiled_chain
from test_hardening_false_success import independent_q

LEFT = ("l_shoulder_pan_joint", "l_shoulder_lift_joint", "l_upper_arm_roll_joint",
        "l_elbow_flex_joint", "l_forearm_roll_joint", "l_wrist_flex_joint")


def _pr2_right():
    spec = ARMS["pr2_right"]
    robot = Robot.from_urdf(urdf_text("pr2_right"), srdf_text("pr2_right"))
    return robot, robot.group(base=spec.base, tip=spec.tip)


def _full_q(model: pin.Model, values: dict) -> np.ndarray:
    """Our own full configuration: ``values`` by joint name."""
    return independent_q(model, list(values), list(values.values()))


def test_a_held_group_uses_its_sources_full_data_in_each_thread():
    _, group = _pr2_right()
    held = group.held_at({n: 0.3 for n in LEFT})
    assert held.full_data() is group.full_data()
    assert held.residuals_data() is group.residuals_data()
    # its reduced model is its own, and so is that model's Data
    assert held.reduced_model is not group.reduced_model
    assert held.reduced_data() is not group.reduced_data()
    other = []
    thread = threading.Thread(target=lambda: other.append(held.full_data()))
    thread.start()
    thread.join()
    assert other[0] is not group.full_data()  # another thread: another Data


def test_locked_placements_are_pinocchios_at_the_held_values():
    robot, group = _pr2_right()
    values = {n: -0.2 - 0.1 * k for k, n in enumerate(LEFT)}
    held = group.held_at(values)
    model = robot.model
    data = model.createData()
    # the group's own joints where its locked configuration has them: at 0
    pin.framesForwardKinematics(model, data, _full_q(model, {
        **{n: 0.0 for n in held.joint_names if model.nqs[model.getJointId(n)] == 1},
        **held.locked}))
    found = held.locked_data()
    for mine, theirs in ((found.oMi, data.oMi), (found.liMi, data.liMi),
                         (found.oMf, data.oMf)):
        assert len(mine) == len(theirs)
        for a, b in zip(mine, theirs):
            assert np.allclose(a.homogeneous, b.homogeneous, atol=1e-12)
    l_wrist = robot.frame_id("l_wrist_roll_link")
    assert held.locked_placement(l_wrist).isApprox(data.oMf[l_wrist], 1e-12)
    # the source's placements are its own: the left arm at the source's values
    assert not group.locked_placement(l_wrist).isApprox(data.oMf[l_wrist], 1e-6)


def test_held_groups_answer_on_their_own_model_while_sharing_data():
    robot, group = _pr2_right()
    prepare(group, group.tip)
    model = robot.model
    rng = np.random.default_rng(3)
    for k in range(6):
        held = group.held_at({n: float(rng.uniform(-0.4, 0.0)) for n in LEFT})
        q = np.clip(held.mid_configuration() + rng.uniform(-0.3, 0.3, held.n),
                    held.lower, held.upper)
        T = held.fk(q, held.tip)
        result = solve(held, PoseTarget(held.tip, T), held.mid_configuration(), "lm", 0.05,
                       0, k)
        assert result.status is IKStatus.SUCCESS, result.message
        values = dict(held.locked)
        values.update(zip(held.joint_names, result.q.tolist()))
        data = model.createData()
        pin.framesForwardKinematics(model, data, _full_q(model, values))
        X = data.oMf[robot.frame_id(held.tip)]
        assert np.linalg.norm(X.translation - T.translation) <= 1e-4 + 1e-9
        assert np.linalg.norm(pin.log3(T.rotation.T @ X.rotation)) <= 1e-3 + 1e-9
        # the source still answers on its own values, on the same Data
        assert solve(group, PoseTarget(group.tip, group.fk(q, group.tip)),
                     group.mid_configuration(), "lm", 0.05, 0, k).success


def test_a_held_group_shares_its_sources_compiled_chain_unless_its_chain_moved():
    robot, group = _pr2_right()
    tip = robot.frame_id(group.tip)
    beside = group.held_at({n: 0.3 for n in LEFT})  # the left arm: not the right's chain
    assert compiled_chain(beside, tip)[0] is compiled_chain(group, tip)[0]
    # the torso lift carries the chain (world placements differ): a chain of its own,
    # whose FK is the held group's
    lifted = group.held_at({"torso_lift_joint": 0.2})
    chain = compiled_chain(lifted, tip)[0]
    assert chain is not compiled_chain(group, tip)[0]
    q = lifted.mid_configuration()[None]
    np.testing.assert_allclose(chain_kernel.forward_many(chain, q)[0],
                               lifted.fk(q[0], lifted.tip).homogeneous, atol=1e-12)


def _built(group, values):
    """The group ``Robot.group`` builds with ``values`` held (the models built anew)."""
    return group.robot.group(base=group.base, tip=group.tip, joints=group.joint_names,
                             locked=group._relocked(values))


def _same_placements(a, b, tol=1e-12):
    for attr in ("oMi", "liMi", "oMf"):
        for x, y in zip(getattr(a, attr), getattr(b, attr), strict=True):
            assert np.allclose(x.homogeneous, y.homogeneous, atol=tol), attr


def _check_held_is_built(source, values, rng, k):
    """``source.held_at(values)`` (a copy) against ``Robot.group``'s build; returns it."""
    robot = source.robot
    model, tip = robot.model, robot.frame_id(source.tip)
    held, built = source.held_at(values), _built(source, values)
    assert held.reduced_model is not source.reduced_model
    assert held.locked == built.locked
    np.testing.assert_array_equal(held.q_full_locked, built.q_full_locked)
    _same_placements(held.locked_data(), built.locked_data())
    for attr in ("reduced_model", "angle_model"):
        a, b = getattr(held, attr), getattr(built, attr)
        assert (a.njoints, len(a.frames)) == (b.njoints, len(b.frames))
        for j in range(a.njoints):
            assert a.jointPlacements[j].isApprox(b.jointPlacements[j], 1e-12)
            if j:  # the group joints' bodies (the world's: no solve reads it)
                assert a.inertias[j].isApprox(b.inertias[j], 1e-12), j
        for fa, fb in zip(a.frames, b.frames):
            assert (fa.name, fa.parentJoint) == (fb.name, fb.parentJoint)
            assert fa.placement.isApprox(fb.placement, 1e-12), fa.name
    q = held.random_configuration(rng)
    for frame in (held.tip, held.base):
        assert held.fk(q, frame).isApprox(built.fk(q, frame), 1e-12)
    found, fresh = compiled_chain(held, tip), compiled_chain(built, tip)
    if fresh is not None:
        chain = found[0]
        np.testing.assert_allclose(chain_kernel.forward_many(chain, q[None])[0],
                                   built.fk(q, held.tip).homogeneous, atol=1e-12)
        # the transforms (row 3 holds a body, which a pose chain does not read: a group
        # held with the fingers elsewhere shares its source's chain, their bodies there)
        np.testing.assert_allclose(chain.tree.placements[:, :3],
                                   fresh[0].tree.placements[:, :3], atol=1e-12)
    T = built.fk(np.clip(q, held.lower, held.upper), held.tip)
    result = solve(held, PoseTarget(held.tip, T), held.mid_configuration(), "lm", 0.05, 0, k)
    assert result.success, result.message
    values_all = dict(held.locked)
    values_all.update(zip(held.joint_names, result.q.tolist()))
    data = model.createData()
    pin.framesForwardKinematics(model, data, _full_q(model, values_all))
    X = data.oMf[tip]
    assert np.linalg.norm(X.translation - T.translation) <= 1e-4 + 1e-9
    assert np.linalg.norm(pin.log3(T.rotation.T @ X.rotation)) <= 1e-3 + 1e-9
    return held


def _random_values(robot, names, rng):
    values = {}
    for n in names:
        lo, hi = robot.joint_limits(n)
        values[n] = float(rng.uniform(max(lo, -0.5), min(hi, 0.5)))
    return values


@pytest.mark.parametrize("arm", ["g1_left", "pr2_right", "tiago", "talos_left"])
@pytest.mark.parametrize("which", ["above", "every"])
def test_a_group_held_elsewhere_is_a_copy_equal_to_the_group_robot_builds(arm, which):
    """A new reading of the joints outside the group makes a copy of the group with the
    placements a changed joint lies behind rewritten (``Group._placed_elsewhere``), not new
    models: the joints above it (a lift, a waist: every request holds them), or every
    locked joint (a collision-checked request on a robot whose encoders all jitter).  It
    is the group ``Robot.group`` builds: the same models' placements, frames and FK, the
    same locked placements and compiled chain, the same answers, checked by FK on a
    ``Data`` of our own with the joints where they are held.  Held three times in a row:
    a copy of a copy."""
    spec = ARMS[arm]
    robot = Robot.from_urdf(urdf_text(arm), srdf_text(arm))
    group = robot.group(base=spec.base, tip=spec.tip)
    prepare(group, group.tip)
    rng = np.random.default_rng(7)
    source = group
    names = group.upstream if which == "above" else list(group.locked)
    for k in range(3):
        values = _random_values(robot, [n for n in names if n not in robot.mimics], rng)
        assert source._placed_elsewhere(source._relocked(values)) is not None
        source = _check_held_is_built(source, values, rng, k)


def test_a_locked_joint_inside_the_chain_changes_the_chains_shape():
    """Panda's group without its fourth joint (locked inside the chain): a new value of it
    rewrites the placement of the joint after it, and the compiled chain is built anew."""
    robot = Robot.from_urdf(urdf_text("panda"), srdf_text("panda"))
    joints = [f"panda_joint{i}" for i in (1, 2, 3, 5, 6, 7)]
    group = robot.group(base="panda_link0", tip="panda_hand", joints=joints)
    prepare(group, group.tip)
    rng = np.random.default_rng(2)
    source = group
    for k, value in enumerate((-1.2, -2.0, -0.4)):
        source = _check_held_is_built(source, {"panda_joint4": value}, rng, k)


def test_no_joint_changed_is_no_copy():
    robot, group = _pr2_right()
    assert group._placed_elsewhere(group._relocked({"torso_lift_joint": 0.0})) is None
    assert group._placed_elsewhere(group._relocked({LEFT[0]: group.locked[LEFT[0]]})) is None
