"""The compiled kinematic model with a floating or planar base, against pinocchio.

Whole-body groups of example-robot-data robots loaded as users load them (talos and
solo12 with a free-flyer root, pr2 with its SRDF's planar virtual joint): at random
configurations, the compiled joint and frame placements and ``LOCAL_WORLD_ALIGNED``
Jacobians (tangent columns) against pinocchio on the full model, the Jacobians against
finite differences of the compiled FK along the compiled ``integrate``, and
``integrate``/``difference`` against the group's (pinocchio's ``integrate`` and
``difference`` on the base): the round trip, the quaternion kept unit, the limits.
"""
import math

import numpy as np
import pinocchio as pin
import pytest

import wholebody_groups
from ros2_ik.core import robots
from ros2_ik.core.kinematics import model as km
from ros2_ik.core.model.floating_base import BaseBounds
from ros2_ik.core.solvers import chain_kernel

pytestmark = pytest.mark.skipif(not chain_kernel.available(), reason="numba not installed")
SAMPLES = 5


GROUPS = {"talos": wholebody_groups.talos, "solo12": wholebody_groups.solo,
          "pr2": wholebody_groups.pr2}
_CACHE: dict = {}


def _group(name):
    if name not in _CACHE:
        _CACHE[name] = GROUPS[name]()
    return _CACHE[name]


def _random_q(group, rng):
    """The base anywhere near the origin (any heading), the joints uniform in their limits."""
    q = group.random_configuration(rng)
    if group.base_kind == "floating":
        q[:3] = rng.uniform(-1.0, 1.0, 3)
        q[3:7] = pin.Quaternion(pin.exp3(rng.normal(0.0, 1.0, 3))).coeffs()
    else:
        q[:3] = rng.uniform(-2.0, 2.0, 3)
    return q


def _frames(model, group):
    fids = [model.getFrameId(group.tip), 0]
    fids += [i for i, f in enumerate(model.frames) if f.type == pin.FrameType.BODY]
    return sorted(set(fids))


def _compiled(tree, fparent, fplace, q, nv):
    """The compiled kinematics: ``(oMi, oMf, Jf)``."""
    from ros2_ik.core.kinematics import forward, jit  # noqa: F401 - jit loads numba
    k, f = tree.parents.shape[0], fparent.shape[0]
    oMi, oMf = np.empty((k, 4, 4)), np.empty((f, 4, 4))
    Jf, waxes = np.empty((f, 6, nv)), np.empty((k, 3))
    forward.kinematics(*tree, q, fparent, fplace, oMi, oMf, Jf, waxes)
    return oMi, oMf, Jf


def _configuration():
    from ros2_ik.core.kinematics import configuration, jit  # noqa: F401 - jit loads numba
    return configuration


def _integrate(tree, q, dq, lower=None, upper=None):
    out = np.array(q, dtype=float)
    lower = np.full(q.shape[0], -np.inf) if lower is None else lower
    upper = np.full(q.shape[0], np.inf) if upper is None else upper
    _configuration().integrate(tree.kinds, out, np.asarray(dq, dtype=float), lower, upper)
    return out


def _difference(tree, q0, q1, nv):
    dq = np.empty(nv)
    _configuration().difference(tree.kinds, q0, q1, dq, np.empty((4, 4)))
    return dq


@pytest.mark.parametrize("name", sorted(GROUPS))
def test_placements_and_jacobians_are_pinocchios(name):
    group = _group(name)
    model = group.robot.model
    tree = km.tree_of(group)
    assert tree is not None and tree.kinds[0] == (
        km.FREEFLYER if group.base_kind == "floating" else km.PLANAR)
    fids = _frames(model, group)
    frames = [model.frames[i] for i in fids]
    fparent = np.array([f.parentJoint - 1 for f in frames], dtype=np.int64)
    fplace = np.array([f.placement.homogeneous for f in frames])
    small, small_parent = km.pruned(tree, fparent[:1])  # the tip's supports alone
    rng = np.random.default_rng(0)
    for _ in range(SAMPLES):
        q = _random_q(group, rng)
        oMi, oMf, Jf = _compiled(tree, fparent, fplace, q, group.nv)
        data = model.createData()
        pin.computeJointJacobians(model, data, wholebody_groups.full_q(group, q))
        pin.updateFramePlacements(model, data)
        ref_oMi = np.array([data.oMi[j].homogeneous for j in range(1, model.njoints)])
        ref_oMf = np.array([data.oMf[i].homogeneous for i in fids])
        ref_J = np.array([pin.getFrameJacobian(model, data, i, pin.LOCAL_WORLD_ALIGNED)[
            :, group.iv_full] for i in fids])
        np.testing.assert_allclose(oMi, ref_oMi, atol=1e-10)
        np.testing.assert_allclose(oMf, ref_oMf, atol=1e-10)
        np.testing.assert_allclose(Jf, ref_J, atol=1e-10)
        _, tip, J_tip = _compiled(small, small_parent, fplace[:1], q, group.nv)
        np.testing.assert_allclose(tip[0], ref_oMf[0], atol=1e-10)
        np.testing.assert_allclose(J_tip[0], ref_J[0], atol=1e-10)


@pytest.mark.parametrize("name", sorted(GROUPS))
def test_jacobians_match_finite_differences_along_integrate(name):
    """World-aligned rates of the tip's origin and rotation, central differences."""
    group = _group(name)
    model = group.robot.model
    tree = km.tree_of(group)
    frame = model.frames[model.getFrameId(group.tip)]
    fparent = np.array([frame.parentJoint - 1], dtype=np.int64)
    fplace = frame.placement.homogeneous[None].copy()
    q = _random_q(group, np.random.default_rng(3))
    _, _, Jf = _compiled(tree, fparent, fplace, q, group.nv)
    h = 1e-6
    for c in range(group.nv):
        step = np.zeros(group.nv)
        step[c] = h
        _, Tp, _ = _compiled(tree, fparent, fplace, _integrate(tree, q, step), group.nv)
        _, Tm, _ = _compiled(tree, fparent, fplace, _integrate(tree, q, -step), group.nv)
        lin = (Tp[0, :3, 3] - Tm[0, :3, 3]) / (2 * h)
        ang = pin.log3(Tp[0, :3, :3] @ Tm[0, :3, :3].T) / (2 * h)
        np.testing.assert_allclose(lin, Jf[0, :3, c], atol=1e-6)
        np.testing.assert_allclose(ang, Jf[0, 3:, c], atol=1e-6)


@pytest.mark.parametrize("name", sorted(GROUPS))
def test_integrate_and_difference_are_the_groups(name):
    """Against ``WholeBodyGroup.integrate``/``difference`` (pinocchio's on the base)."""
    group = _group(name)
    tree = km.tree_of(group)
    rng = np.random.default_rng(5)
    for scale in (1e-9, 1e-3, 0.3, 1.5):
        for _ in range(SAMPLES):
            q0 = _random_q(group, rng)
            dq = rng.normal(0.0, scale, group.nv)
            q1 = _integrate(tree, q0, dq)
            np.testing.assert_allclose(q1, group.integrate(q0, dq), atol=1e-12)
            if group.base_kind == "floating":
                assert abs(np.linalg.norm(q1[3:7]) - 1.0) < 1e-14
            back = _difference(tree, q0, q1, group.nv)
            np.testing.assert_allclose(back, group.difference(q0, q1), atol=1e-9)
            if scale < 1.0:  # inside the exponential's injectivity radius: the round trip
                np.testing.assert_allclose(back, dq, atol=1e-9)
            np.testing.assert_allclose(_integrate(tree, q0, back), q1, atol=1e-9)


def test_the_quaternion_stays_unit_over_many_steps():
    group = _group("solo12")
    tree = km.tree_of(group)
    rng = np.random.default_rng(7)
    q = _random_q(group, rng)
    for _ in range(2000):
        q = _integrate(tree, q, rng.normal(0.0, 0.5, group.nv))
    assert abs(np.linalg.norm(q[3:7]) - 1.0) < 1e-14


def test_integrate_clamps_the_base_box_and_the_joints_and_pushed_out_keeps_the_base():
    """The base's position box and the joint limits hold after a step; the base is kept."""
    robot = _group("pr2").robot
    group = robot.whole_body(tip="r_gripper_tool_frame", joints=["torso_lift_joint"],
                             base_bounds=BaseBounds((-0.5, -0.5, -1.0), (0.5, 0.5, 1.0),
                                                    -1.0, 1.0))
    tree = km.tree_of(group)
    lower, upper = np.array(group.search_lower), np.array(group.search_upper)
    q = group.mid_configuration()
    for dq in ([3.0, -3.0, 5.0, 10.0], [0.2, 0.1, -0.4, -0.01]):
        dq = np.array(dq)
        np.testing.assert_allclose(_integrate(tree, q, dq, lower, upper),
                                   group.clamp(group.integrate(q, dq)), atol=1e-12)
    out = _integrate(tree, _integrate(tree, q, np.array([3.0, -3.0, 0.0, 10.0]), lower, upper),
                     np.array([0.0, 0.0, 5.0, 0.0]), lower, upper)
    assert out.tolist() == [0.5, -0.5, 1.0, upper[3]]
    keep = np.zeros(group.nv, dtype=np.bool_)
    assert _configuration().pushed_out(tree.kinds, out, np.array([1.0, 1, 1, 1]), lower,
                                       upper, keep)
    assert keep.tolist() == [True, True, True, False]
    assert not _configuration().pushed_out(tree.kinds, out, np.array([1.0, 1, 1, -1]),
                                           lower, upper, keep)
    assert keep.all()


def test_fixed_base_trees_are_unchanged():
    """A fixed-base group's tree has no base kind; integrate is the clamped sum."""
    group = robots.load_group("panda")[1]
    tree = km.tree_of(group)
    assert tree.kinds.max() <= km.PRISMATIC
    q = group.mid_configuration()
    lower, upper = np.array(group.search_lower), np.array(group.search_upper)
    dq = np.linspace(-5.0, 5.0, group.n)
    np.testing.assert_array_equal(_integrate(tree, q, dq, lower, upper),
                                  np.clip(q + dq, lower, upper))
    assert math.isclose(_difference(tree, q, q + dq, group.n)[0], dq[0])


@pytest.mark.parametrize("name", sorted(GROUPS) + ["panda"])
def test_center_of_mass_and_its_jacobian_are_pinocchios(name):
    """The CoM frame against ``pin.centerOfMass`` and ``pin.jacobianCenterOfMass``."""
    group = robots.load_group("panda")[1] if name == "panda" else _group(name)
    model = group.robot.model
    fid = model.getFrameId(group.tip)
    fparent = np.array([model.frames[fid].parentJoint - 1, km.COM_PARENT], dtype=np.int64)
    fplace = np.array([model.frames[fid].placement.homogeneous, np.eye(4)])
    tree, fparent = km.pruned(km.tree_of(group), fparent)  # the CoM keeps every joint
    assert len(tree.parents) == model.njoints - 1
    nv = group.nv if group.has_base else group.n
    rng = np.random.default_rng(11)
    for _ in range(SAMPLES):
        q = _random_q(group, rng) if group.has_base else group.random_configuration(rng)
        _, oMf, Jf = _compiled(tree, fparent, fplace, q, nv)
        qf = wholebody_groups.full_q(group, q) if group.has_base else group.to_full_q(q)
        data = model.createData()
        com = pin.centerOfMass(model, data, qf)
        Jcom = pin.jacobianCenterOfMass(model, data, qf)[:, group.iv_full]
        np.testing.assert_allclose(oMf[1, :3, 3], com, atol=1e-10)
        np.testing.assert_allclose(oMf[1, :3, :3], np.eye(3))
        np.testing.assert_allclose(Jf[1, :3], Jcom, atol=1e-10)
        np.testing.assert_array_equal(Jf[1, 3:], 0.0)
        pin.updateFramePlacements(model, data)  # the tip beside it is unchanged
        np.testing.assert_allclose(oMf[0], data.oMf[fid].homogeneous, atol=1e-10)
