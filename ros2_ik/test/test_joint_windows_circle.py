"""Joint windows on continuous joints are windows on the circle, across +-pi too (issue 48).

"Keep this joint within +-0.3 rad of where it is" must work when it sits near +-pi:
``[2.67, 3.27]``, the same window written ``[-3.62, -3.02]``, or 2 pi further.  Rows are
checked against values computed here; solves (every solver, the compiled and the Python
lm) against pinocchio FK and the angle's distance to the window on the circle computed
here; and beside Drake SNOPT on a Kinova arm when Drake and the vendor arms are present.
"""
import math
import sys
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

from ros2_ik.core import PoseTarget, errors, robots, solve
from ros2_ik.core.constraints import JointBoundsConstraint, LockedJointConstraint
from ros2_ik.core.problem import Problem
from ros2_ik.core.solvers import registry

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))
import vendor_arms  # noqa: E402

TWO_PI = 2 * math.pi


def circle_outside(angle: float, lower: float, upper: float) -> float:
    """Distance [rad] from ``angle`` to ``[lower, upper]`` over its 2 pi equivalents."""
    return min(max(lower - a, a - upper, 0.0)
               for a in (angle + TWO_PI * k for k in range(-4, 5)))


@pytest.fixture(scope="module")
def pr2():
    """PR2's right arm: two continuous joints (forearm roll, wrist roll)."""
    return robots.load_group("pr2_right")[1]


def continuous_names(group):
    return [n for n, c in zip(group.joint_names, group.continuous) if c]


def full_q(group, name, angle):
    q = group.mid_configuration()
    q[group.joint_index[name]] = angle
    return group.to_full_q(q)


def test_the_row_is_the_angle_within_pi_of_the_window_centre(pr2):
    model, name = pr2.robot.model, continuous_names(pr2)[0]
    seam = JointBoundsConstraint(model, {name: (2.67, 3.27)})
    # Centre 2.97: rows in (2.97 - pi, 2.97 + pi] = (-0.17, 6.11].
    for angle, row in ((-3.1, TWO_PI - 3.1), (3.0, 3.0), (0.0, 0.0), (-0.1, -0.1),
                       (-0.2, TWO_PI - 0.2)):
        value = seam.value(model, model.createData(), full_q(pr2, name, angle))
        assert value[0] == pytest.approx(row, abs=1e-12), angle
    assert seam.holds(model, model.createData(), full_q(pr2, name, -3.1))
    assert not seam.holds(model, model.createData(), full_q(pr2, name, 0.0))
    shifted = JointBoundsConstraint(model, {name: (5.9, 6.5)})  # around 2 pi
    assert shifted.holds(model, model.createData(), full_q(pr2, name, 0.1))
    assert not shifted.holds(model, model.createData(), full_q(pr2, name, 0.5))
    whole = JointBoundsConstraint(model, {name: (-4.0, 4.0)})  # wider than 2 pi: any angle
    for angle in np.linspace(-math.pi, math.pi, 13):
        assert whole.holds(model, model.createData(), full_q(pr2, name, angle))
    at_pi = LockedJointConstraint(model, {name: math.pi})
    for angle in (-math.pi + 1e-9, math.pi - 1e-9):  # either side of the seam: pi, not -pi
        value = at_pi.value(model, model.createData(), full_q(pr2, name, angle))
        assert value[0] == pytest.approx(math.pi, abs=1e-8)


def test_a_continuous_window_must_be_finite(pr2):
    name = continuous_names(pr2)[0]
    with pytest.raises(errors.InvalidGoal, match="finite"):
        JointBoundsConstraint(pr2.robot.model, {name: (-math.inf, 1.0)})


def seam_problem(group, rng, shift):
    """Pose of ``q*`` with its continuous joints near +-pi, each held within +-0.3 rad.

    ``shift``: each window written ``k * 2 pi`` away (k in -1, 0, 1), as a user may.
    """
    q_star = group.random_configuration(rng)
    bounds = {}
    for name in continuous_names(group):
        i = group.joint_index[name]
        q_star[i] = rng.choice([-1.0, 1.0]) * rng.uniform(math.pi - 0.25, math.pi)
        centre = q_star[i] + shift * TWO_PI
        bounds[name] = (centre - 0.3, centre + 0.3)
    target = PoseTarget(group.tip, group.fk(q_star, group.tip))
    return q_star, bounds, target


def assert_holds(group, target, bounds, q):
    T = group.fk(q, group.tip)
    assert np.linalg.norm(T.translation - target.T_ref_target.translation) <= 1.01e-4
    assert np.linalg.norm(pin.log3(T.rotation.T @ target.T_ref_target.rotation)) <= 1.01e-3
    assert group.within_limits(q)
    for name, (lo, hi) in bounds.items():
        assert circle_outside(float(q[group.joint_index[name]]), lo, hi) <= 1e-4, (name, q)


@pytest.mark.parametrize("solver", ["lm", "lm_python", "dls", "bfgs", "sqp"])
def test_windows_across_pi_solve(pr2, solver, monkeypatch):
    if solver == "lm_python":  # the Python path, as without numba
        monkeypatch.setattr(registry.solver_class("lm"), "compiled_constraints", False)
        solver = "lm"
    model = pr2.robot.model
    rng = np.random.default_rng(48)
    solved = 0
    for k in range(6):
        q_star, bounds, target = seam_problem(pr2, rng, shift=k % 3 - 1)
        problem = Problem(pr2, target, [JointBoundsConstraint(model, bounds)])
        result = solve(pr2, problem, pr2.mid_configuration(), solver=solver, timeout_s=2.0,
                       random_seed=k)
        if result.status.name == "SUCCESS":
            assert_holds(pr2, target, bounds, result.q)
            solved += 1
    assert solved == 6 if solver in ("lm", "sqp") else solved >= 4, solved


def test_windows_across_pi_on_kinova_beside_drake():
    """Gen3 7-DoF (4 continuous joints): lm and Drake SNOPT both solve, both answers hold."""
    pytest.importorskip("pydrake", reason="Drake is a benchmark dependency")
    arm = next((a for a in vendor_arms.arms() if a.name == "kinova_gen3_7dof"), None)
    if arm is None:
        pytest.skip(vendor_arms.absent_reason())
    from constrained_drake import DrakeArm
    from constrained_problems import ProblemSpec, Term

    group = vendor_arms.load_group(arm)
    drake = DrakeArm(arm.path.read_text(), group)
    rng = np.random.default_rng(5)
    for k in range(4):
        q_star, bounds, target = seam_problem(group, rng, shift=0)
        problem = Problem(group, target, [JointBoundsConstraint(group.robot.model, bounds)])
        ours = solve(group, problem, group.mid_configuration(), timeout_s=2.0, random_seed=k)
        assert ours.status.name == "SUCCESS", ours.message
        assert_holds(group, target, bounds, ours.q)
        spec = ProblemSpec("windows", arm.name, k, q_star, group.mid_configuration(), (
            Term("pose", dict(frame=arm.tip, T=target.T_ref_target.homogeneous,
                              free_axis=-1, position_only=False)),
            Term("joint_bounds", dict(bounds=bounds))))
        theirs = drake.solve(spec, "drake_snopt", 20.0, np.random.default_rng(k))
        assert theirs.claimed_success
        assert_holds(group, target, bounds, theirs.q)


def test_the_action_goal_takes_a_window_across_pi(pr2):
    """The constrained-IK action's joint_bounds reach the core as a window on the circle."""
    from ros2_ik_interfaces.action import ConstrainedIK

    from ros2_ik.node.goal_terms import constraints_of

    model, name = pr2.robot.model, continuous_names(pr2)[0]
    goal = ConstrainedIK.Goal()
    goal.joint_bounds.joint_names = [name]
    goal.joint_bounds.lower, goal.joint_bounds.upper = [2.67], [3.27]
    (window,) = constraints_of(model, goal)
    assert window.holds(model, model.createData(), full_q(pr2, name, -3.1))
    assert not window.holds(model, model.createData(), full_q(pr2, name, 2.5))
