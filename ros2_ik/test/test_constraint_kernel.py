"""The compiled constraint attempt against the Python constraints and the Python loop.

Rows and Jacobians of every frame-based constraint type, computed by the kernel on its
own joint tree, against ``Residuals`` (the classes' ``evaluate_physical`` and
``evaluate_excess``) and against finite differences, on arms with revolute, continuous,
unaligned, prismatic and locked joints (random arms of ``bench/random_arms.py`` among
them); whole attempts against the Python loop (``lm_loop.run``) (same iterations, same end point);
problems the kernel cannot take run the Python loop.
"""
import dataclasses
import sys
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

from ros2_ik.core import constraints as C
from ros2_ik.core import robots
from ros2_ik.core.kinematics.frames import relative_rotation
from ros2_ik.core.model.robot import Robot
from ros2_ik.core.problem import Problem
from ros2_ik.core.solve import solve
from ros2_ik.core.solvers import attempts, chain_kernel, constraint_kernel as ck
from ros2_ik.core.solvers.budget import Budget
from ros2_ik.core.solvers.lm import LevenbergMarquardt
from ros2_ik.core.solvers.residuals import Residuals
from ros2_ik.core.verify import ConstraintTolerance

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))
import constrained_problems as fam  # noqa: E402
from constrained_ours import build  # noqa: E402
from constrained_random import RandomProblems  # noqa: E402
from random_arms import random_arm  # noqa: E402
from test_chain_kernel import MIXED_URDF  # noqa: E402
from test_core_angle_model import UNALIGNED_URDF  # noqa: E402

pytestmark = pytest.mark.skipif(not chain_kernel.available(), reason="numba not installed")
TOL = ConstraintTolerance(1e-4, 1e-4)
#: Kinds the kernel computes (the generator's joint kinds run the Python loop).
FRAME_KINDS = ("position", "orientation", "gaze", "angle", "point_to_point",
               "point_to_line", "polyhedron", "rotation_box")


def _groups():
    out = [("panda", robots.load_group("panda")[1]), ("kinova", robots.load_group("kinova")[1])]
    for seed in (3, 11):
        arm = random_arm(seed)
        out.append((arm.name, Robot.from_urdf(arm.urdf).group(arm.base, arm.tip)))
    out.append(("mixed", Robot.from_urdf(MIXED_URDF).group("base", "tool")))
    # A continuous joint about an unaligned axis (its model binding has no ``axis``).
    out.append(("unaligned", Robot.from_urdf(UNALIGNED_URDF).group("base", "tip")))
    return out


GROUPS = _groups()


def _random_specs(name, group, count, seed):
    """Problems of frame-based constraints only, on random links of ``group``."""
    gen, rng, out = RandomProblems(name, group), np.random.default_rng(seed), []
    while len(out) < count:
        spec = gen.problem(rng, len(out))
        terms = tuple(t for t in spec.constraints if t.kind in FRAME_KINDS)
        if terms:
            out.append(dataclasses.replace(spec, constraints=terms, costs=()))
    return out


def _rows(res: Residuals, q):
    q_full = res.update(q)
    g, J = res.all_rows(q_full)
    xe, xJ, _ = res.excess_rows(q_full)
    return g, J, xe, xJ


def _angles(res: Residuals, q) -> np.ndarray:
    """Angle [rad] of each orientation bound's relative rotation at ``q``, 3 rows each."""
    res.update(q)
    out = []
    for c in res.problem.constraints:
        if isinstance(c, C.OrientationConstraint):
            R_AB, _ = relative_rotation(res.model, res.data, c._fid_Abar, c._R_AbarA,
                                        c._fid_Bbar, c._R_BbarB)
            out += [np.linalg.norm(pin.log3(R_AB))] * 3
    return np.array(out)


@pytest.mark.parametrize("name,group", GROUPS, ids=[g[0] for g in GROUPS])
def test_rows_and_jacobians_equal_the_python_constraints(name, group):
    """Every row and Jacobian entry within 1e-9 of Residuals' at random configurations."""
    rng = np.random.default_rng(5)
    for spec in _random_specs(name, group, 40, seed=1):
        problem = build(spec, group)
        compiled = ck.compile_problem(problem, TOL)
        assert compiled is not None, spec.constraints
        res = Residuals(problem, exact=False, tolerance=TOL)
        np.testing.assert_array_equal(compiled.lo, res.row_lower)
        np.testing.assert_array_equal(compiled.hi, res.row_upper)
        lo, hi, margin = ck.lm().shrunk(compiled.layout.ints, compiled.values)  # the kernels'
        np.testing.assert_array_equal(lo, res.row_lower)
        np.testing.assert_array_equal(hi, res.row_upper)
        np.testing.assert_array_equal(margin, compiled.margin)
        for _ in range(3):
            q = group.random_configuration(rng)
            expected = _rows(res, q)
            got = ck.evaluate(compiled, q)[:4]
            # below 1e-9 rad (a bound of 0 between frames fixed to each other) the excess
            # points along log3's rounding noise, in the kernel as in pinocchio: compare
            # its norm only
            keep = _angles(res, q) >= 1e-9
            np.testing.assert_allclose(np.linalg.norm(got[2]), np.linalg.norm(expected[2]),
                                       rtol=0, atol=1e-9)
            for a, b, rows in zip(got, expected, (slice(None), slice(None), keep, keep)):
                np.testing.assert_allclose(a[rows], b[rows], rtol=0, atol=1e-9,
                                           err_msg=str(spec))


@pytest.mark.parametrize("name,group", GROUPS, ids=[g[0] for g in GROUPS])
def test_jacobians_match_finite_differences(name, group):
    """Kernel Jacobians against central differences of its own rows (away from kinks)."""
    rng = np.random.default_rng(8)
    h = 1e-6
    for spec in _random_specs(name, group, 25, seed=2):
        problem = build(spec, group)
        compiled = ck.compile_problem(problem, TOL)
        q = group.random_configuration(rng)
        g, J, xe, xJ, _ = ck.evaluate(compiled, q)
        # log3's axis is noise near 0 and ill-conditioned near pi; an excess at its bound
        # is a kink: compare the excess rows away from those
        angles = _angles(Residuals(problem, exact=False, tolerance=TOL), q)
        xe_rows = (np.repeat(np.linalg.norm(xe.reshape(-1, 3), axis=1), 3) > 1e-3) & (
            angles > 1e-3) & (angles < np.pi - 1e-2)
        for k in range(group.n):
            dq = np.zeros(group.n)
            dq[k] = h
            plus, minus = ck.evaluate(compiled, q + dq), ck.evaluate(compiled, q - dq)
            for value, jac, i, rows in ((g, J, 0, slice(None)), (xe, xJ, 2, xe_rows)):
                fd = (plus[i][rows] - minus[i][rows]) / (2 * h)
                one_sided = (plus[i][rows] - value[rows]) / h
                jac = jac[rows]
                # a kink (an angle at 0, an excess at its bound) has one-sided slopes
                ok = (np.abs(fd - jac[:, k]) < 1e-5) | (np.abs(one_sided - jac[:, k]) < 1e-5)
                assert ok.all(), (spec.constraints, k, fd, jac[:, k])


def test_orientation_bound_of_zero_at_no_rotation_equals_the_python_rows():
    """An orientation bound of 0 (shrunk below 0) where ``R_AB = I`` on two moving frames.

    The excess has no axis there: its rows are 0 and its Jacobian the derivative of
    ``log3`` at the identity, ``R_WA^T (w_B - w_A)``, not zero.
    """
    group = robots.load_group("panda")[1]
    model, data = group.robot.model, group.robot.model.createData()
    q = group.clamp(np.array([0.3, -0.2, 0.1, -1.5, 0.2, 1.2, 0.4]))
    pin.framesForwardKinematics(model, data, group.to_full_q(q))
    fa, fb = model.getFrameId("panda_link3"), model.getFrameId("panda_link8")
    R_AbarA = data.oMf[fa].rotation.T @ data.oMf[fb].rotation  # R_AB = I at q
    problem = Problem(group, None, [
        C.OrientationConstraint(model, "panda_link3", R_AbarA, "panda_link8", np.eye(3), 0.0),
        C.PositionConstraint(model, "universe", [-1, -1, -1], [1, 1, 1], "panda_link8",
                             [0, 0, 0])])
    _, _, xe, xJ, worst = ck.evaluate(ck.compile_problem(problem, TOL), q)
    res = Residuals(problem, exact=False, tolerance=TOL)
    e, J, _ = res.excess_rows(res.update(q))
    assert worst == 0.0 and np.abs(J).max() > 0.5
    np.testing.assert_array_equal(xe, e)
    np.testing.assert_allclose(xJ, J, atol=1e-12)


@pytest.mark.parametrize("arm", fam.ARMS)
def test_attempts_equal_the_python_loop(arm):
    """Same iterations, verdict and end point as the Python loop on the families."""
    group = robots.load_group(arm)[1]
    lm = LevenbergMarquardt()
    settings = ck.Settings(lm.damping_scale, lm.bias, lm.stall_ratio, True)
    rng = np.random.default_rng(4)
    same = total = 0
    for family in "abcdef":
        for spec in fam.generate(family, arm, group, 6, seed=1):
            problem = build(spec, group)
            state = ck.KernelState(ck.compile_problem(problem, TOL), problem, TOL)
            for q0 in (spec.seed, group.random_configuration(rng)):
                py = _python_attempt(lm, state, q0)
                q, it, done, _ = ck.attempt(state.compiled, q0, state.lower, state.upper,
                                            settings, lm.max_iterations_constrained)
                total += 1
                if it == py[1] and done == py[2]:
                    same += 1
                    assert np.abs(q - py[0]).max() < 1e-6, (family, spec.index)
    assert same >= 0.95 * total, (same, total)  # rounding may flip a stall test


def _python_attempt(lm, state, q0):
    """The Python loop's attempt (:func:`lm_loop.run` on the stacked rows) from ``q0``."""
    return attempts.StackedAttempt(lm, state.residuals).project(q0, Budget(10.0))


def _with_pose(spec, group, weights=(1.0,) * 6, offset_m=0.02):
    """The problem of ``spec`` plus a pose target: the tip at ``q_star``, moved by ``offset_m``.

    Moved (the default), the target contradicts the family's box: attempts run to their end.
    """
    from ros2_ik.core.pose import PoseTarget
    T = group.fk(spec.q_star, group.tip)
    T.translation = T.translation + offset_m
    problem = build(spec, group)
    return Problem(group, PoseTarget(group.tip, T, weights=weights), problem.constraints)


@pytest.mark.parametrize("weights", [(1.0,) * 6, (1.0, 1.0, 1.0, 0.3, 0.3, 0.0)])
def test_pose_rows_equal_the_python_ones(weights):
    """Pose + constraints: the six weighted pose rows first, as Residuals.pose_rows."""
    group = robots.load_group("panda")[1]
    rng = np.random.default_rng(3)
    for family in "adf":
        for spec in fam.generate(family, "panda", group, 4, seed=5):
            problem = _with_pose(spec, group, weights)
            compiled = ck.compile_problem(problem, TOL)
            res = Residuals(problem, exact=False, tolerance=TOL)
            for _ in range(3):
                q = group.random_configuration(rng)
                g, J, xe, xJ = _rows(res, q)
                pe, pJ, _ = res.pose_rows()
                got = ck.evaluate(compiled, q)
                np.testing.assert_allclose(got[0], g, atol=1e-9)
                np.testing.assert_allclose(got[1], J, atol=1e-9)
                np.testing.assert_allclose(got[2][:6], pe, atol=1e-9)
                np.testing.assert_allclose(got[3][:6], pJ, atol=1e-9)
                np.testing.assert_allclose(got[2][6:], xe, atol=1e-9)


def test_pose_attempts_equal_the_python_loop():
    """Pose + constraints: same iterations, verdict and end point as the Python loop."""
    group = robots.load_group("xarm7")[1]
    lm = LevenbergMarquardt()
    settings = ck.Settings(lm.damping_scale, lm.bias, lm.stall_ratio, True)
    same = total = 0
    for family in "abcdef":
        for spec in fam.generate(family, "xarm7", group, 5, seed=3):
            problem = _with_pose(spec, group)
            state = ck.KernelState(ck.compile_problem(problem, TOL), problem, TOL)
            py = _python_attempt(lm, state, spec.seed)
            q, it, done, _ = ck.attempt(state.compiled, spec.seed, state.lower, state.upper,
                                        settings, lm.max_iterations_constrained)
            total += 1
            if it == py[1] and done == py[2]:
                same += 1
                assert np.abs(q - py[0]).max() < 1e-6, (family, spec.index)
    assert same >= 0.9 * total, (same, total)


def test_unsupported_problems_run_the_python_loop():
    """Bounds of a joint outside the group, bounds alone or a subclass: no compiled form."""
    group = robots.load_group("panda")[1]
    model = group.robot.model
    box = C.PositionConstraint(model, group.base, [0.3, -0.1, 0.3], [0.5, 0.1, 0.6],
                               group.tip, np.zeros(3))
    bounds = C.JointBoundsConstraint(model, {"panda_finger_joint1": (0.0, 0.01)})
    window = C.JointBoundsConstraint(model, {group.joint_names[0]: (-0.5, 0.5)})

    class Shifted(C.PositionConstraint):
        pass

    shifted = Shifted(model, group.base, [0.3, -0.1, 0.3], [0.5, 0.1, 0.6], group.tip,
                      np.zeros(3))
    assert ck.compile_problem(Problem(group, None, [box]), TOL) is not None
    for terms in ([box, bounds], [shifted], [window]):
        problem = Problem(group, None, terms)
        assert ck.compile_problem(problem, TOL) is None
        assert not isinstance(LevenbergMarquardt().setup(problem), ck.KernelState)


def test_joint_windows_are_the_compiled_attempts_limits():
    """Bounds of group joints are no rows: the attempt is projected into them."""
    group = robots.load_group("panda")[1]
    model = group.robot.model
    box = C.PositionConstraint(model, group.base, [0.3, -0.1, 0.3], [0.5, 0.1, 0.6],
                               group.tip, np.zeros(3))
    window = C.JointBoundsConstraint(model, {group.joint_names[0]: (-0.5, 0.5),
                                             group.joint_names[3]: (-2.0, -1.9)})
    problem = Problem(group, None, [box, window])
    state = LevenbergMarquardt().setup(problem)
    assert isinstance(state, ck.KernelState)
    assert problem.row_constraints == (box,) and problem.folded == (window,)
    assert state.lower[0] == -0.5 and state.upper[0] == 0.5
    assert state.lower[3] == -2.0 and state.upper[3] == -1.9
    assert state.lower[1] == group.lower[1] and state.upper[6] == group.upper[6]
    result = solve(group, problem, group.mid_configuration(), timeout_s=1.0, random_seed=2)
    assert result.status.name == "SUCCESS", result.message
    assert -0.5 <= result.q[0] <= 0.5 and -2.0 <= result.q[3] <= -1.9


def test_locked_joints_fold_into_the_tree():
    """A random arm's locked lift and branch: frames below them placed as pinocchio does."""
    arm = random_arm(5)
    group = Robot.from_urdf(arm.urdf).group(arm.base, arm.tip)
    model = group.robot.model
    tree = ck.tree_of(group)
    assert (tree.kinds != 0).sum() == group.n
    frames = [f.name for f in model.frames if f.type == pin.FrameType.BODY]
    rng = np.random.default_rng(2)
    data = model.createData()
    for name in frames:
        c = C.PositionConstraint(model, "universe", -np.ones(3), np.ones(3), name,
                                 np.zeros(3))
        compiled = ck.compile_problem(Problem(group, None, [c]), TOL)
        q = group.random_configuration(rng)
        pin.framesForwardKinematics(model, data, group.to_full_q(q))
        fid = model.getFrameId(name)
        np.testing.assert_allclose(ck.evaluate(compiled, q)[0],
                                   data.oMf[fid].translation, atol=1e-12)


def test_compiled_problems_try_the_seed_before_ranking_the_library():
    """Cheap attempts: the seed first, then the ranked library without the seed again."""
    from ros2_ik.core.solvers import seed_library
    from ros2_ik.core.solvers.options import SolveOptions
    from ros2_ik.core.solvers.search import Search
    group = robots.load_group("panda")[1]
    spec = fam.generate("a", "panda", group, 1, seed=2)[0]
    problem = build(spec, group)
    lm = LevenbergMarquardt()
    lm.options = SolveOptions(constraint_tolerance=TOL)
    assert lm.cheap_attempts(lm.setup(problem))
    assert not lm.cheap_attempts(attempts.StackedAttempt(lm, Residuals(problem)))
    search = Search(problem, spec.seed, lm.options)
    search.seed_first = True
    starts = []
    for _ in range(4):
        starts.append(search.next_start())
        search.attempts += 1
    ranked = [q for q in seed_library.constraint_starts(group, problem.constraints, 32,
                                                        spec.seed)
              if not np.array_equal(q, spec.seed)]
    np.testing.assert_array_equal(starts[0], spec.seed)
    for got, expected in zip(starts[1:], ranked):
        np.testing.assert_array_equal(got, expected)


def test_the_tree_keeps_only_the_joints_that_move_the_frames():
    """A whole robot loaded for one arm: rows and Jacobians as on the full tree."""
    group = robots.load_group("tiago")[1]
    model = group.robot.model
    full = ck.tree_of(group)
    rng = np.random.default_rng(4)
    for spec in _random_specs("tiago", group, 20, seed=8):
        problem = build(spec, group)
        compiled = ck.compile_problem(problem, TOL)
        assert len(compiled.tree.parents) < len(full.parents)
        fparent = np.array([model.frames[f].parentJoint - 1 for f in compiled.fids])
        unpruned = ck.Compiled(compiled.layout.with_tree(full, fparent), compiled.values)
        q = group.random_configuration(rng)
        for a, b in zip(ck.evaluate(compiled, q), ck.evaluate(unpruned, q)):
            np.testing.assert_array_equal(a, b)
