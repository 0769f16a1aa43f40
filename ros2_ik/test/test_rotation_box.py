"""RotationBoxConstraint: MoveIt's OrientationConstraint, checked against MoveIt's own test.

``moveit_decide`` is MoveIt's ``OrientationConstraint::decide`` written again from its
source (``bench/moveit_orientation.py``: ``calcEulerAngles``, the singular branches,
``normalizeAbsoluteAngle``; Eigen's AngleAxis for the rotation vector), on the rotation
our own FK gives; other tests import it from here.  The constraint must hold exactly
where it says yes; its Jacobian must match finite differences; solves must meet it.
"""
from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

from ros2_ik.core import robots
from ros2_ik.core.constraints import RotationBoxConstraint, finite_difference, \
    update_kinematics
from ros2_ik.core.errors import InvalidGoal
from ros2_ik.core.model.robot import Robot
from ros2_ik.core.pose import PoseTarget
from ros2_ik.core.solve import solve

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from moveit_orientation import calc_euler_angles, moveit_decide  # noqa: E402,F401


def margin(R_diff: np.ndarray, tol, parameterization: int) -> float:
    """How far inside (> 0) or outside the box ``R_diff`` is [rad] (regular rotations)."""
    if parameterization == 0:
        xyz = np.abs(calc_euler_angles(R_diff)[0])
    else:
        xyz = np.abs(pin.log3(R_diff))
    return float(min(t - v for t, v in zip(tol, xyz)))


@pytest.fixture(scope="module")
def panda():
    robot = Robot.from_urdf(robots.urdf_text("panda"))
    return robot, robot.group(base="panda_link0", tip="panda_hand")


CASES = [((0.3, 0.2, 0.5), "xyz_euler", 0, "panda_link0"),
         ((0.4, 0.3, math.pi), "xyz_euler", 0, "panda_link0"),        # yaw free
         ((0.5, 2.0, 0.4), "xyz_euler", 0, "panda_link2"),            # pitch free, moving A
         ((0.3, 0.5, 0.4), "rotation_vector", 1, "panda_link0"),
         ((math.pi, 0.3, 0.6), "rotation_vector", 1, "panda_link3")]


@pytest.mark.parametrize("tol,param,code,frame_a", CASES)
def test_holds_exactly_where_moveit_says_yes(panda, tol, param, code, frame_a):
    robot, group = panda
    model, data = robot.model, robot.model.createData()
    rng = np.random.default_rng(len(frame_a) + code)
    mid = group.mid_configuration() + rng.uniform(-0.5, 0.5, 7)
    pin.framesForwardKinematics(model, data, group.to_full_q(mid))   # the box around here
    R_des = data.oMf[model.getFrameId(frame_a)].rotation.T \
        @ data.oMf[model.getFrameId("panda_hand")].rotation @ pin.rpy.rpyToMatrix(0.1, -0.1, 0.2)
    c = RotationBoxConstraint(model, frame_a, R_des, "panda_hand", np.eye(3), tol, param)
    seen = {True: 0, False: 0}
    for _ in range(3000):
        q = group.to_full_q(mid + rng.uniform(-0.6, 0.6, 7))
        pin.framesForwardKinematics(model, data, q)
        R_diff = (data.oMf[model.getFrameId(frame_a)].rotation @ R_des).T \
            @ data.oMf[model.getFrameId("panda_hand")].rotation
        if abs(margin(R_diff, tol, code)) < 1e-7:
            continue
        says = moveit_decide(R_diff, tol, code)
        assert c.holds(model, data, q) == says
        assert (c.measure_rows(_placements(model, data, q)) == [0.0] * len(c.rows)) == says
        seen[says] += 1
    assert seen[True] > 30 and seen[False] > 30, seen


def _placements(model, data, q):
    from ros2_ik.core.kinematics.frames import Placements
    return Placements.of(model, data, q)


@pytest.mark.parametrize("param", ["xyz_euler", "rotation_vector"])
def test_jacobian_matches_finite_differences(panda, param):
    robot, group = panda
    model, data = robot.model, robot.model.createData()
    c = RotationBoxConstraint(model, "panda_link1", pin.rpy.rpyToMatrix(0.2, 0.1, -0.4),
                              "panda_hand", np.eye(3), (0.1, 0.1, 0.1), param)
    rng = np.random.default_rng(3)
    for _ in range(20):
        q = group.to_full_q(group.mid_configuration() + rng.uniform(-1, 1, 7))
        update_kinematics(model, data, q)
        _, J = c.evaluate(model, data, q)
        assert np.allclose(J, finite_difference(c, model, data, q), atol=1e-5)


def test_rows_are_the_bounded_components_only(panda):
    model = panda[0].model
    c = RotationBoxConstraint(model, "universe", np.eye(3), "panda_hand", np.eye(3),
                              (0.1, math.pi / 2, 4.0))
    assert c.rows == (0,) and c.num_constraints == 1
    with pytest.raises(InvalidGoal, match="always holds"):
        RotationBoxConstraint(model, "universe", np.eye(3), "panda_hand", np.eye(3),
                              (math.pi, math.pi / 2, math.inf))
    with pytest.raises(InvalidGoal, match="tolerances"):
        RotationBoxConstraint(model, "universe", np.eye(3), "panda_hand", np.eye(3),
                              (0.1, -0.1, 0.1))
    with pytest.raises(InvalidGoal, match="parameterization"):
        RotationBoxConstraint(model, "universe", np.eye(3), "panda_hand", np.eye(3),
                              (0.1,) * 3, "zyx")


@pytest.mark.parametrize("param,code", [("xyz_euler", 0), ("rotation_vector", 1)])
def test_a_solve_keeps_the_hand_in_the_box(panda, param, code):
    """Position-only targets with the hand's orientation boxed: answers lie in the box."""
    robot, group = panda
    model, data = robot.model, robot.model.createData()
    R_des = pin.rpy.rpyToMatrix(math.pi, 0.0, 0.3)           # pointing down
    tol = (0.05, 0.1, math.pi)
    c = RotationBoxConstraint(model, "universe", R_des, "panda_hand", np.eye(3), tol, param)
    rng = np.random.default_rng(7)
    for k in range(10):
        p = np.array([0.45, 0.0, 0.35]) + rng.uniform(-0.1, 0.1, 3)
        target = PoseTarget("panda_hand", pin.SE3(np.eye(3), p), position_only=True)
        r = solve(group, target, group.mid_configuration(), "lm", 1.0, constraints=[c],
                  random_seed=k)
        assert r.success, r.message
        q = group.to_full_q(r.q)
        pin.framesForwardKinematics(model, data, q)
        R_hand = data.oMf[model.getFrameId("panda_hand")].rotation
        assert margin(R_des.T @ R_hand, [t + 1e-3 for t in tol], code) >= 0
        assert np.linalg.norm(data.oMf[model.getFrameId("panda_hand")].translation - p) <= 1e-4


def _kernel_groups():
    """Revolute, continuous, prismatic, unaligned joints (the kernel test's); whole bodies."""
    import wholebody_groups
    from test_constraint_kernel import GROUPS
    return [group for _, group in GROUPS] + [
        wholebody_groups.talos(), wholebody_groups.solo(), wholebody_groups.pr2()]


def _random_boxes(group, rng, count):
    """Rotation boxes between random frames of ``group``, random offsets and tolerances."""
    model = group.robot.model
    picked = rng.choice(len(model.frames), 4)
    frames = [group.base, group.tip] + [model.frames[int(i)].name for i in picked]
    out = []
    while len(out) < count:
        tol = [float(rng.choice([0.0, 0.1, 1.0, math.pi / 2, math.pi, math.inf]))
               for _ in range(3)]
        param = str(rng.choice(["xyz_euler", "rotation_vector"]))
        a, b = (str(f) for f in rng.choice(frames, 2))
        try:
            out.append(RotationBoxConstraint(model, a, pin.exp3(rng.normal(size=3)), b,
                                             pin.exp3(rng.normal(size=3)), tol, param))
        except InvalidGoal:  # bounds no component
            continue
    return out


def test_compiled_rows_equal_the_python_ones():
    """The kernels' rows and Jacobian within 1e-9 of ``evaluate`` on every joint kind.

    Fixed-base chains of every joint kind, and floating (talos, solo) and planar (pr2)
    bases.
    """
    from ros2_ik.core.constraints import registry
    from ros2_ik.core.problem import Problem
    from ros2_ik.core.solvers import constraint_kernel as ck
    from ros2_ik.core.solvers.residuals import Residuals
    from ros2_ik.core.verify import ConstraintTolerance
    tol = ConstraintTolerance(1e-4, 1e-4)
    rng = np.random.default_rng(11)
    for group in _kernel_groups():
        for c in _random_boxes(group, rng, 12):
            assert registry.kind_of(c).code is not None  # a compiled type
            problem = Problem(group, None, [c])
            compiled = ck.compile_problem(problem, tol)
            assert compiled is not None
            res = Residuals(problem, exact=False, tolerance=tol)
            np.testing.assert_array_equal(compiled.lo, res.row_lower)
            np.testing.assert_array_equal(compiled.hi, res.row_upper)
            for _ in range(4):
                q = group.random_configuration(rng)
                g, J = res.all_rows(res.update(q))
                got_g, got_J = ck.evaluate(compiled, q)[:2]
                np.testing.assert_allclose(got_g, g, rtol=0, atol=1e-9)
                np.testing.assert_allclose(got_J, J, rtol=0, atol=1e-9)
