"""The compiled kinematic model (:mod:`ros2_ik.core.kinematics`) against pinocchio.

On every bench arm (``bench/bench_arms.py``'s catalogue: example-robot-data robots,
every other joint locked) and on random arms (``random_arm``: revolute and continuous
joints; ``mixed``: prismatic joints and unaligned axes too), at random configurations:
the joint and frame placements and the ``LOCAL_WORLD_ALIGNED`` frame Jacobians of the
whole tree, of the tree pruned to some frames, and the tip's ``LOCAL`` Jacobian on the
serial chain of the pose kernel, each against pinocchio on the full model; the
Jacobians also against finite differences of the compiled FK.  The Lie helpers against
pinocchio's near 0 and near pi.
"""
import math
import os
import sys
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

from ros2_ik.core import robots
from ros2_ik.core.kinematics import model as km
from ros2_ik.core.model.robot import Robot
from ros2_ik.core.solvers import chain_kernel

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from random_arms import random_arm  # noqa: E402

pytestmark = pytest.mark.skipif(not chain_kernel.available(), reason="numba not installed")
SAMPLES = 6


def _arms():
    out = [(name, "catalogue") for name in robots.ARMS]
    out += [(seed, "random") for seed in range(3)] + [(seed, "mixed") for seed in range(8)]
    return out


def _group(arm):
    name, family = arm
    if family == "catalogue":
        return robots.load_group(name)[1]
    spec = random_arm(name, mixed=family == "mixed")
    return Robot.from_urdf(spec.urdf).group(spec.base, spec.tip)


def _compiled(tree, fparent, fplace, q):
    """The compiled kinematics: ``(oMi, oMf, Jf)``."""
    from ros2_ik.core.kinematics import forward
    k, f = tree.parents.shape[0], fparent.shape[0]
    oMi, oMf = np.empty((k, 4, 4)), np.empty((f, 4, 4))
    Jf, waxes = np.empty((f, 6, q.shape[0])), np.empty((k, 3))
    forward.kinematics(*tree, q, fparent, fplace, oMi, oMf, Jf, waxes)
    return oMi, oMf, Jf


def _frames(model, group):
    """Frame ids to check: the tip, the base, a frame on the world, every joint's body."""
    fids = [model.getFrameId(group.tip), model.getFrameId(group.base), 0]
    fids += [i for i, f in enumerate(model.frames) if f.type == pin.FrameType.BODY]
    return sorted(set(fids))


def _frame_arrays(model, fids):
    frames = [model.frames[i] for i in fids]
    return (np.array([f.parentJoint - 1 for f in frames], dtype=np.int64),
            np.array([f.placement.homogeneous for f in frames]))


def _pinocchio(group, q, fids, reference):
    """Joint and frame placements and frame Jacobians (group columns) of the full model."""
    model = group.robot.model
    data = model.createData()
    q_full = group.to_full_q(q)
    pin.computeJointJacobians(model, data, q_full)
    pin.updateFramePlacements(model, data)
    oMi = np.array([data.oMi[j].homogeneous for j in range(1, model.njoints)])
    oMf = np.array([data.oMf[i].homogeneous for i in fids])
    J = np.array([pin.getFrameJacobian(model, data, i, reference)[:, group.iv_full]
                  for i in fids])
    return oMi, oMf, J


@pytest.mark.parametrize("arm", _arms(), ids=lambda a: f"{a[1]}-{a[0]}")
def test_tree_placements_and_jacobians_are_pinocchios(arm):
    group = _group(arm)
    model = group.robot.model
    tree = km.tree_of(group)
    assert tree is not None
    fids = _frames(model, group)
    fparent, fplace = _frame_arrays(model, fids)
    small, small_parent = km.pruned(tree, fparent[:1])  # the tip's supports alone
    rng = np.random.default_rng(0)
    for _ in range(SAMPLES):
        q = group.random_configuration(rng)
        oMi, oMf, Jf = _compiled(tree, fparent, fplace, q)
        ref_oMi, ref_oMf, ref_J = _pinocchio(group, q, fids, pin.LOCAL_WORLD_ALIGNED)
        np.testing.assert_allclose(oMi, ref_oMi, atol=1e-10)
        np.testing.assert_allclose(oMf, ref_oMf, atol=1e-10)
        np.testing.assert_allclose(Jf, ref_J, atol=1e-10)
        _, tip, J_tip = _compiled(small, small_parent, fplace[:1], q)
        np.testing.assert_allclose(tip[0], ref_oMf[0], atol=1e-10)
        np.testing.assert_allclose(J_tip[0], ref_J[0], atol=1e-10)


@pytest.mark.parametrize("arm", _arms(), ids=lambda a: f"{a[1]}-{a[0]}")
def test_chain_tip_and_local_jacobian_are_pinocchios(arm):
    """The pose kernel's chain (the tree of the angle model cut to the tip's supports)."""
    from ros2_ik.core.kinematics import forward
    group = _group(arm)
    if not group.angle_q:  # a continuous joint without a plain twin: no chain
        assert km.chain_of(group.reduced_model, group.reduced_frame_id(group.tip)) is None
        return
    chain = km.chain_of(group.angle_model, group.reduced_frame_id(group.tip))
    assert chain is not None
    fid = group.robot.model.getFrameId(group.tip)
    rng = np.random.default_rng(1)
    for _ in range(SAMPLES):
        q = group.random_configuration(rng)
        _, oMf, Jf = _compiled(chain.tree, chain.fparent, chain.fplace, q)
        forward.to_local(oMf, 0, Jf)
        _, ref_T, ref_J = _pinocchio(group, q, [fid], pin.LOCAL)
        np.testing.assert_allclose(oMf[0], ref_T[0], atol=1e-10)
        np.testing.assert_allclose(Jf[0], ref_J[0], atol=1e-10)


@pytest.mark.parametrize("seed", range(4))
def test_jacobians_match_finite_differences_of_the_compiled_fk(seed):
    """World-aligned rates of the frames' origins and rotations, central differences."""
    spec = random_arm(seed, mixed=True)
    group = Robot.from_urdf(spec.urdf).group(spec.base, spec.tip)
    model = group.robot.model
    tree = km.tree_of(group)
    fids = _frames(model, group)
    fparent, fplace = _frame_arrays(model, fids)
    q = group.random_configuration(np.random.default_rng(seed))
    _, _, Jf = _compiled(tree, fparent, fplace, q)
    h = 1e-6
    for c in range(q.shape[0]):
        dq = np.zeros_like(q)
        dq[c] = h
        _, plus, _ = _compiled(tree, fparent, fplace, q + dq)
        _, minus, _ = _compiled(tree, fparent, fplace, q - dq)
        for f in range(len(fids)):
            v = (plus[f, :3, 3] - minus[f, :3, 3]) / (2 * h)
            w = pin.log3(plus[f, :3, :3] @ minus[f, :3, :3].T) / (2 * h)
            np.testing.assert_allclose(Jf[f, :3, c], v, atol=1e-6)
            np.testing.assert_allclose(Jf[f, 3:, c], w, atol=1e-6)


def test_a_wrong_jacobian_fails_the_comparison():
    """The comparisons above can fail: a joint axis flipped changes FK and Jacobian."""
    group = _group((1, "mixed"))
    model = group.robot.model
    tree = km.tree_of(group)
    moving = int(np.flatnonzero(tree.kinds)[0])
    axes = tree.axes.copy()
    axes[moving] *= -1.0
    fids = _frames(model, group)
    fparent, fplace = _frame_arrays(model, fids)
    q = group.random_configuration(np.random.default_rng(3))
    _, _, J = _compiled(tree._replace(axes=axes), fparent, fplace, q)
    _, _, ref_J = _pinocchio(group, q, fids, pin.LOCAL_WORLD_ALIGNED)
    assert np.abs(J - ref_J).max() > 1e-3


def _lie():
    from ros2_ik.core.kinematics import lie
    return lie


def _rotations(rng):
    """Rotations near 0, in between and near pi, about random axes."""
    out = []
    for angle in (0.0, 1e-9, 1e-5, 1e-3, 0.5, 2.0, math.pi - 1e-2, math.pi - 1e-4,
                  math.pi - 1e-7, math.pi):
        for _ in range(10):
            axis = rng.normal(size=3)
            out.append(pin.exp3(angle * axis / np.linalg.norm(axis)))
    return out


def test_log3_and_log6_are_pinocchios_near_zero_and_near_pi():
    rng = np.random.default_rng(2)
    cases = [pin.SE3.Random() for _ in range(200)]
    cases += [pin.SE3(R, rng.normal(size=3)) for R in _rotations(rng)]
    e, w = np.empty(6), np.empty(3)
    lie = _lie()
    for M in cases:
        R = np.ascontiguousarray(M.rotation)
        lie.log6(R, np.ascontiguousarray(M.translation), e, w)
        theta = lie.log3(R, w)
        ref = pin.log6(M).vector
        if np.linalg.norm(ref[3:]) > math.pi - 1e-6:  # +-pi: either sign is the same rotation
            assert np.allclose(pin.exp6(pin.Motion(e)).homogeneous, M.homogeneous, atol=1e-6)
            assert np.allclose(pin.exp3(w), R, atol=1e-6)
        else:
            np.testing.assert_allclose(e, ref, atol=1e-9)
            np.testing.assert_allclose(w, pin.log3(R), atol=1e-9)
        assert theta == pytest.approx(np.linalg.norm(w), abs=1e-8)  # acos near 0, pi


def test_jlog3_and_log_map_are_pinocchios():
    """``Jlog3`` near 0, in between and near pi; ``log_map`` its world-velocity form."""
    rng = np.random.default_rng(0)
    lie = _lie()
    S = np.empty((5, 3, 3))
    for R in _rotations(rng)[::3]:
        w = pin.log3(R)
        theta = float(np.linalg.norm(w))
        if theta > math.pi - 1e-3:  # Jlog3 is singular at pi
            continue
        lie.jlog3(w[0], w[1], w[2], theta, S, 1)
        np.testing.assert_allclose(S[1], pin.Jlog3(R), atol=1e-9)
        R_WA = pin.exp3(rng.normal(size=3))
        S[0], S[2] = R_WA, R
        lie.log_map(w[0], w[1], w[2], theta, S)
        np.testing.assert_allclose(S[4], pin.Jlog3(R) @ R.T @ R_WA.T, atol=1e-9)


def test_compose_is_the_product_of_transforms():
    A, B, out = pin.SE3.Random(), pin.SE3.Random(), np.empty((4, 4))
    _lie().compose(A.homogeneous, B.homogeneous, out)
    np.testing.assert_allclose(out, (A * B).homogeneous, atol=1e-14)


def test_every_compiled_file_of_the_package_is_a_source_of_the_stale_cache_check():
    """numba checks only a function's own file: the kernels drop caches older than these."""
    from ros2_ik.core.kinematics import jit
    folder = Path(jit.__file__).resolve().parent
    compiled = {p for p in folder.glob("*.py") if "@jit" in p.read_text()}
    decorator = folder.parent / "runtime" / "compiled.py"  # the one jit decorator's file
    assert compiled | {decorator} == set(jit.SOURCES)


def test_a_cache_older_than_a_kinematics_source_is_dropped(tmp_path):
    from ros2_ik.core.kinematics import jit
    kernel, source = tmp_path / "_kernel_jit.py", tmp_path / "forward.py"
    cache = tmp_path / "__pycache__"
    cache.mkdir()
    stale, fresh = cache / "_kernel_jit.attempt-1.py311.nbi", cache / "forward.f-1.py311.nbi"
    for i, path in enumerate((stale, kernel, source, fresh)):
        path.write_text("")
        os.utime(path, (1000 + i, 1000 + i))
    jit._drop([kernel], [kernel, source])  # source is newer than the kernel's cache
    jit._drop([source], [source])  # forward's own cache is newer than it
    assert not stale.exists() and fresh.exists()
