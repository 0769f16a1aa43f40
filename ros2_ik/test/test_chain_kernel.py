"""The compiled pose attempt against pinocchio and against the Python loop it replaces.

Forward kinematics and the LOCAL Jacobian of the kernel's chain (the compiled model,
``test_kinematics.py``) are compared with pinocchio's on arms with revolute, continuous
(as angles), unaligned and prismatic joints; whole attempts with the Python loop (same
iterations, same end point).
"""
import math
import sys
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

from ros2_ik.core import robots
from ros2_ik.core.model.robot import Robot
from ros2_ik.core.pose import PoseTarget
from ros2_ik.core.problem import Problem
from ros2_ik.core.solvers import attempts, chain_kernel
from ros2_ik.core.solvers.budget import Budget
from ros2_ik.core.solvers.lm import LevenbergMarquardt
from ros2_ik.core.solvers.pose_state import PoseState

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from random_arms import random_arm  # noqa: E402

pytestmark = pytest.mark.skipif(not chain_kernel.available(), reason="numba not installed")

#: A chain with every joint kind the kernel takes: unaligned revolute, prismatic, a
#: continuous joint, a fixed tool offset, and a locked side branch.
MIXED_URDF = """<?xml version="1.0"?><robot name="mixed">
<link name="base"/><link name="l1"/><link name="l2"/><link name="l3"/><link name="l4"/>
<link name="tool"/><link name="side"/>
<joint name="j1" type="revolute"><parent link="base"/><child link="l1"/>
 <origin xyz="0 0 0.2" rpy="0 0 0"/><axis xyz="0 0.6 0.8"/>
 <limit lower="-2" upper="2" effort="1" velocity="1"/></joint>
<joint name="j2" type="prismatic"><parent link="l1"/><child link="l2"/>
 <origin xyz="0.1 0 0.1" rpy="0.3 0 0"/><axis xyz="1 0 0"/>
 <limit lower="0" upper="0.3" effort="1" velocity="1"/></joint>
<joint name="j3" type="continuous"><parent link="l2"/><child link="l3"/>
 <origin xyz="0 0.2 0" rpy="0 1.57 0"/><axis xyz="0 0 1"/></joint>
<joint name="side_joint" type="revolute"><parent link="l2"/><child link="side"/>
 <origin xyz="0 0 0.1"/><axis xyz="0 1 0"/><limit lower="-1" upper="1" effort="1" velocity="1"/>
</joint>
<joint name="j4" type="revolute"><parent link="l3"/><child link="l4"/>
 <origin xyz="0.25 0 0" rpy="-1.57 0 0.4"/><axis xyz="0 1 0"/>
 <limit lower="-2.5" upper="2.5" effort="1" velocity="1"/></joint>
<joint name="tool_joint" type="fixed"><parent link="l4"/><child link="tool"/>
 <origin xyz="0 0.05 0.12" rpy="0.2 0.1 0"/></joint>
</robot>"""


def groups():
    out = [("panda", robots.load_group("panda")[1]), ("kinova", robots.load_group("kinova")[1])]
    arm = random_arm(3)
    out.append((arm.name, Robot.from_urdf(arm.urdf).group(arm.base, arm.tip)))
    out.append(("mixed", Robot.from_urdf(MIXED_URDF).group("base", "tool")))
    return out


def kernel_fk(chain, q):
    """The tip's placement and LOCAL Jacobian as the kernel computes them."""
    from ros2_ik.core.kinematics import forward
    k, n = chain.tree.parents.shape[0], q.shape[0]
    oMi, waxes, oMf, Jf = np.empty((k, 4, 4)), np.empty((k, 3)), np.empty((1, 4, 4)), \
        np.empty((1, 6, n))
    forward.kinematics(*chain.tree, q, chain.fparent, chain.fplace, oMi, oMf, Jf, waxes)
    forward.to_local(oMf, 0, Jf)
    return oMf[0], Jf[0]


@pytest.mark.parametrize("name,group", groups(), ids=lambda v: v if isinstance(v, str) else "")
def test_forward_kinematics_and_jacobian_are_pinocchios(name, group):
    model, fid = group.angle_model, group.reduced_frame_id(group.tip)
    chain = chain_kernel.chain_of(model, fid)
    assert chain is not None
    data = model.createData()
    rng = np.random.default_rng(1)
    for _ in range(25):
        q = group.random_configuration(rng)
        T, J = kernel_fk(chain, q)
        pin.forwardKinematics(model, data, q)
        np.testing.assert_allclose(T, pin.updateFramePlacement(model, data, fid).homogeneous,
                                   atol=1e-12)
        J_pin = pin.computeFrameJacobian(model, data, q, fid, pin.LOCAL)
        np.testing.assert_allclose(J, J_pin, atol=1e-12)
        # and the full model, independently of the reduced one
        np.testing.assert_allclose(T, group.fk(q, group.tip).homogeneous, atol=1e-12)


def test_nan_ends_an_attempt_instead_of_raising():
    """A diverged attempt (NaN in the kinematics) ends unconverged; nothing raises.

    ``make fuzz`` found ``solve()`` raising ZeroDivisionError out of ``log3`` (numba's
    Python error model) on a target ~1e150 m away, once in ~5,000 requests.
    """
    chain_kernel.jit()  # numba loaded: lie's functions compiled
    from ros2_ik.core.kinematics.lie import log3
    w = np.empty(3)
    for R in (np.full((3, 3), np.nan), np.diag([np.inf, -np.inf, np.inf])):
        assert math.isnan(log3(R, w)) and np.isnan(w).all()
    group = robots.load_group("panda")[1]
    lm = LevenbergMarquardt()
    state = PoseState(Problem(group, PoseTarget(group.tip, pin.SE3.Identity())))
    chain, lower, upper = state.chain
    for q0 in (np.full(group.n, np.nan), np.full(group.n, np.inf)):
        q, it, done, E = chain_kernel.attempt(
            chain, q0, state.T_target_inv_h, lower, upper, state.bounded, 1.0,
            state.pos_tol2, state.ori_tol2, state.near2, attempts.chain_settings(type(lm)))
        assert not done and it <= 3, (q0[0], it, E)


@pytest.mark.parametrize("name,group", groups(), ids=lambda v: v if isinstance(v, str) else "")
def test_compiled_attempt_is_the_python_attempt(name, group):
    lm, seed = LevenbergMarquardt(), group.mid_configuration()
    same = 0
    for i in range(40):
        q_goal = group.random_configuration(np.random.default_rng(100 + i))
        problem = Problem(group, PoseTarget(group.tip, group.fk(q_goal, group.tip)))
        start = group.random_configuration(np.random.default_rng(i)) if i % 2 else seed
        runs = []
        for compiled in (True, False):  # setup chooses the attempt once per solve
            lm.compiled = compiled
            state = lm.setup(problem)
            assert state.state.chain is not None
            assert isinstance(state, attempts.CompiledPose) == compiled
            runs.append(lm.local_solve(state, start, Budget(10.0)))
        a, b = runs
        if a.iterations == b.iterations and a.converged == b.converged \
                and np.allclose(a.q, b.q, atol=1e-8):
            same += 1
    # Rounding differs (own FK, own Cholesky): a rare attempt may take another turn.
    assert same >= 38


def test_unsupported_joints_or_no_numba_fall_back(monkeypatch):
    model = pin.Model()
    j = model.addJoint(0, pin.JointModelSpherical(), pin.SE3.Identity(), "ball")
    fid = model.addFrame(pin.Frame("tip", j, pin.SE3.Identity(), pin.FrameType.OP_FRAME))
    assert chain_kernel.chain_of(model, fid) is None  # nq 4 != nv 3
    group = robots.load_group("panda")[1]
    fid = group.reduced_frame_id(group.tip)
    assert chain_kernel.chain_of(group.angle_model, fid) is not None
    monkeypatch.setattr(chain_kernel, "available", lambda: False)
    monkeypatch.setattr(chain_kernel, "_JIT", None)
    assert chain_kernel.chain_of(group.angle_model, fid) is None


def test_warm_up_loads_forward_many_for_the_seed_libraries_arrays():
    """After warm_up, the seed library's read-only samples need no new compiled signature.

    (Loading one from numba's cache inside a solve cost ~30 ms: a first constraint
    ranking came back after a 20 ms budget.)
    """
    from ros2_ik.core import robots
    from ros2_ik.core.solvers import seed_library
    from ros2_ik.core.solvers import _chain_jit
    chain_kernel.warm_up()
    before = list(_chain_jit.forward_many.signatures)
    _, group = robots.load_group("ur5")
    lib = seed_library.library(group)
    assert not lib.q.flags.writeable
    chain = chain_kernel.chain_of(group.angle_model, group.reduced_frame_id(group.tip))
    chain_kernel.forward_many(chain, lib.q[:10])
    chain_kernel.forward_many(chain, np.array(lib.q[:10]))
    assert list(_chain_jit.forward_many.signatures) == before
