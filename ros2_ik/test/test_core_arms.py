"""FK(IK(x)) = x on real arms, checked with an independent pinocchio model and FK."""
import numpy as np
import pinocchio as pin
import pytest

from ros2_ik.core import robots
from ros2_ik.core.pose import PoseTarget
from ros2_ik.core.result import IKStatus
from ros2_ik.core.solve import solve

ARMS = ["panda", "ur5", "kinova"]


def by_name(model: pin.Model, names, values, q: np.ndarray) -> np.ndarray:
    """``q`` (nq,) with joint ``names`` at ``values`` (a continuous joint's as cos, sin)."""
    for name, value in zip(names, values):
        j = model.getJointId(name)
        iq = model.idx_qs[j]
        if model.nqs[j] == 2:
            q[iq], q[iq + 1] = np.cos(value), np.sin(value)
        else:
            q[iq] = value
    return q


class IndependentFK:
    """A second model built from the same URDF, with its own Data and name mapping."""

    def __init__(self, arm: str):
        self.model = pin.buildModelFromXML(robots.urdf_text(arm))
        self.data = self.model.createData()

    def placement(self, names, values, frame: str) -> pin.SE3:
        q = by_name(self.model, names, values, pin.neutral(self.model))
        pin.framesForwardKinematics(self.model, self.data, q)
        return pin.SE3(self.data.oMf[self.model.getFrameId(frame)])


def random_targets(group, fk, count, rng):
    for _ in range(count):
        q = group.random_configuration(rng)
        yield q, fk.placement(group.joint_names, q, group.tip)


@pytest.mark.parametrize("arm", ARMS)
def test_fk_of_ik_is_the_target(arm):
    _, group = robots.load_group(arm)
    fk = IndependentFK(arm)
    rng = np.random.default_rng(7)
    seed = group.mid_configuration()
    for _, T in random_targets(group, fk, 25, rng):
        result = solve(group, PoseTarget(group.tip, T), seed, timeout_s=1.0, random_seed=1)
        assert result.status is IKStatus.SUCCESS, result.message
        T_got = fk.placement(result.joint_names, result.q, group.tip)
        err = pin.log6(T.actInv(T_got)).vector
        assert np.linalg.norm(err[:3]) <= 1e-4 + 1e-12
        assert np.linalg.norm(err[3:]) <= 1e-3 + 1e-12
        # Claims match the independent check.
        assert result.position_error_m == pytest.approx(np.linalg.norm(T_got.translation
                                                                       - T.translation),
                                                        abs=1e-9)
        assert np.all(result.q >= group.lower) and np.all(result.q <= group.upper)


@pytest.mark.parametrize("arm", ARMS)
def test_target_in_another_reference_frame(arm):
    robot, group = robots.load_group(arm)
    fk = IndependentFK(arm)
    rng = np.random.default_rng(3)
    q = group.random_configuration(rng)
    T_world_tip = fk.placement(group.joint_names, q, group.tip)
    T_world_base = fk.placement((), (), group.base)
    target = PoseTarget(group.tip, T_world_base.actInv(T_world_tip), reference_frame=group.base)
    result = solve(group, target, group.mid_configuration(), timeout_s=1.0, random_seed=0)
    assert result.status is IKStatus.SUCCESS
    T_got = fk.placement(group.joint_names, result.q, group.tip)
    assert np.linalg.norm(T_got.translation - T_world_tip.translation) <= 1e-4


@pytest.mark.parametrize("solver", ["dls", "bfgs", "sqp"])
@pytest.mark.parametrize("arm", ARMS)
def test_every_solver_reaches_a_reachable_target(solver, arm):
    _, group = robots.load_group(arm)
    fk = IndependentFK(arm)
    rng = np.random.default_rng(11)
    for _, T in random_targets(group, fk, 2, rng):
        result = solve(group, PoseTarget(group.tip, T), group.mid_configuration(),
                       solver=solver, timeout_s=3.0, random_seed=2)
        assert result.status is IKStatus.SUCCESS, (solver, result.message)
        T_got = fk.placement(result.joint_names, result.q, group.tip)
        assert np.linalg.norm(T_got.translation - T.translation) <= 1e-4
        assert group.within_limits(result.q)


def test_weighted_axes_are_free():
    _, group = robots.load_group("panda")
    fk = IndependentFK("panda")
    q = group.random_configuration(np.random.default_rng(5))
    T = fk.placement(group.joint_names, q, group.tip)
    spun = T * pin.SE3(pin.utils.rotate("z", 1.0), np.zeros(3))  # about the target's z
    target = PoseTarget(group.tip, spun, weights=(1, 1, 1, 1, 1, 0))
    result = solve(group, target, group.mid_configuration(), timeout_s=1.0, random_seed=0)
    assert result.status is IKStatus.SUCCESS
    T_got = fk.placement(group.joint_names, result.q, group.tip)
    # Position and the tool z axis match; rotation about z is free.
    assert np.linalg.norm(T_got.translation - T.translation) <= 1e-4
    assert np.dot(T_got.rotation[:, 2], T.rotation[:, 2]) > np.cos(1e-3)


def test_locked_joints_stay_locked():
    robot, _ = robots.load_group("panda")
    names = ["panda_joint1", "panda_joint2", "panda_joint4", "panda_joint6"]
    group = robot.group(joints=names, tip="panda_hand",
                        locked={"panda_joint3": 0.3, "panda_joint5": -0.2})
    assert group.joint_names == tuple(names)
    assert group.locked["panda_joint3"] == 0.3
    q = group.random_configuration(np.random.default_rng(1))
    T = group.fk(q, "panda_hand")
    result = solve(group, PoseTarget("panda_hand", T, position_only=True),
                   group.mid_configuration(), timeout_s=1.0, random_seed=0)
    assert result.status is IKStatus.SUCCESS
    full = group.to_full_q(result.q)
    model = robot.model
    assert full[model.idx_qs[model.getJointId("panda_joint3")]] == 0.3
    assert full[model.idx_qs[model.getJointId("panda_joint5")]] == -0.2


@pytest.mark.parametrize("arm", ["panda", "ur5", "tiago", "pr2_right", "mixed"])
def test_to_full_q_places_each_joint_at_its_pinocchio_index(arm):
    """Group vector -> full configuration, by joint name and idx_qs (continuous: cos, sin).

    Whole robots with locked joints and a continuous joint too; the slice fast path and
    the indexed one alike.
    """
    if arm == "mixed":
        from test_chain_kernel import MIXED_URDF
        from ros2_ik.core.model.robot import Robot
        group = Robot.from_urdf(MIXED_URDF).group("base", "tool")
    else:
        group = robots.load_group(arm)[1]
    model = group.robot.model
    rng = np.random.default_rng(2)
    for _ in range(5):
        q = group.clamp(rng.uniform(-3.0, 3.0, group.n))
        expected = by_name(model, group.joint_names, q.tolist(), group.q_full_locked.copy())
        np.testing.assert_array_equal(group.to_full_q(q), expected)
        np.testing.assert_array_equal(group.to_full_q(q.tolist()), expected)
