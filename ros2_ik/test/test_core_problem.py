"""Drake-style problems (constraints and costs, no pose target) through every solver."""
import numpy as np
import pinocchio as pin
import pytest

from ros2_ik.core import constraints as C
from ros2_ik.core import errors, robots
from ros2_ik.core.model.joint_values import with_joint_value
from ros2_ik.core.pose import PoseTarget
from ros2_ik.core.problem import Problem, pose_constraints
from ros2_ik.core.result import IKStatus
from ros2_ik.core.solve import solve
from ros2_ik.core.verify import ConstraintTolerance, verify_pose


@pytest.fixture(scope="module")
def panda():
    return robots.load_group("panda")


def box_problem(robot, group):
    # Hand origin inside a 4 cm box in front of the robot, expressed in panda_link0.
    box = C.PositionConstraint(robot.model, "panda_link0", [0.45, -0.02, 0.28],
                               [0.49, 0.02, 0.32], "panda_hand", np.zeros(3))
    return Problem(group, None, constraints=[box])


@pytest.mark.parametrize("solver", ["lm", "dls", "bfgs", "sqp"])
def test_constraints_only(panda, solver):
    robot, group = panda
    problem = box_problem(robot, group)
    result = solve(group, problem, group.mid_configuration(), solver=solver, timeout_s=3.0,
                   random_seed=0)
    assert result.status is IKStatus.SUCCESS, result.message
    p = group.fk(result.q, "panda_hand").translation
    assert np.all(p >= [0.45 - 1e-4, -0.02 - 1e-4, 0.28 - 1e-4])
    assert np.all(p <= [0.49 + 1e-4, 0.02 + 1e-4, 0.32 + 1e-4])
    ok, _, _, reason = verify_pose(group, None, result.q, problem.constraints)
    assert ok, reason


def test_box_outside_the_workspace_is_no_solution(panda):
    robot, group = panda
    far = C.PositionConstraint(robot.model, "panda_link0", [3.0, 3.0, 3.0], [3.1, 3.1, 3.1],
                               "panda_hand", np.zeros(3))
    result = solve(group, Problem(group, None, constraints=[far]), group.mid_configuration(),
                   solver="sqp", timeout_s=0.2, random_seed=0)
    assert result.status is IKStatus.NO_SOLUTION
    assert result.violations and result.violations[0][1] > 1.0


def test_problem_needs_something(panda):
    from ros2_ik.core import errors
    _, group = panda
    with pytest.raises(errors.InvalidGoal):
        Problem(group, None)
    with pytest.raises(errors.InvalidGoal):
        Problem(group, None, constraints=["not a constraint"])


def test_constraints_only_reports_violation_not_pose_errors(panda):
    """No pose target: nan pose errors, the message names the largest violation."""
    robot, group = panda
    far = C.PositionConstraint(robot.model, "panda_link0", [3.0, 3.0, 3.0], [3.1, 3.1, 3.1],
                               "panda_hand", np.zeros(3), name="far_box")
    result = solve(group, Problem(group, None, constraints=[far]), group.mid_configuration(),
                   solver="lm", timeout_s=0.05, random_seed=0)
    assert result.status is IKStatus.NO_SOLUTION
    assert np.isnan(result.position_error_m) and np.isnan(result.orientation_error_rad)
    assert "far_box" in result.message and " m / " not in result.message
    assert f"{result.violations[0][1]:.3g}" in result.message
    ok, pos, ori, _ = verify_pose(group, None, result.q, [far])
    assert not ok and np.isnan(pos) and np.isnan(ori)


def test_constraints_only_solution_has_nan_pose_errors(panda):
    robot, group = panda
    result = solve(group, box_problem(robot, group), group.mid_configuration(), timeout_s=3.0,
                   random_seed=0)
    assert result.status is IKStatus.SUCCESS
    assert np.isnan(result.position_error_m) and np.isnan(result.solutions[0].position_error_m)


def test_with_terms_copies_only_when_terms_are_added(panda):
    # solve() passes a Problem through with_terms(): with nothing to add, the same problem
    # (no second validation of its terms, no second compilation of a pose target).
    robot, group = panda
    problem = box_problem(robot, group)
    assert problem.with_terms() is problem
    assert problem.with_terms([], iter(())) is problem
    extra = C.PositionConstraint(robot.model, "panda_link0", [-1, -1, 0], [1, 1, 1],
                                 "panda_link4", np.zeros(3))
    more = problem.with_terms([extra])
    assert more is not problem and more.constraints == problem.constraints + (extra,)
    assert problem.constraints == (problem.constraints[0],)  # the original is unchanged


def _frame_pose(robot, q_full, frame):
    data = robot.model.createData()
    pin.framesForwardKinematics(robot.model, data, q_full)
    return data.oMf[robot.model.getFrameId(frame)]


def test_pose_constraints_hold_within_the_tolerance_ball_only(panda):
    """A second pose goal's box and orientation rows, judged by pinocchio's FK."""
    robot, group = panda
    q = group.to_full_q(group.mid_configuration())
    T = _frame_pose(robot, q, "panda_hand")
    tol_m, tol_rad = 1e-3, 2e-3
    target = PoseTarget("panda_hand", T, position_tolerance_m=tol_m,
                        orientation_tolerance_rad=tol_rad)
    terms = pose_constraints(robot.model, [target])
    assert [c.name for c in terms] == ["pose_position(panda_hand)",
                                       "pose_orientation(panda_hand)"]
    ok, _, _, reason = verify_pose(group, None, group.mid_configuration(), terms)
    assert ok, reason
    for offset, rotation, holds in (
            ([0.9 * tol_m / np.sqrt(3)] * 3, 0.0, True),  # near a corner of the box (its axes)
            ([1.1 * tol_m, 0, 0], 0.0, False),  # outside the ball
            ([0, 0, 0], 0.9 * tol_rad, True), ([0, 0, 0], 1.1 * tol_rad, False)):
        moved = T * pin.SE3(pin.exp3(np.array([0.0, 0.0, rotation])), np.array(offset))
        shifted = PoseTarget("panda_hand", moved, position_tolerance_m=tol_m,
                             orientation_tolerance_rad=tol_rad)
        ok, _, _, _ = verify_pose(group, None, group.mid_configuration(),
                                  pose_constraints(robot.model, [shifted]),
                                  tolerance=ConstraintTolerance(1e-12, 1e-12))
        assert ok is holds, (offset, rotation)
    only = pose_constraints(robot.model, [PoseTarget("panda_hand", T, position_only=True)])
    assert [c.name for c in only] == ["pose_position(panda_hand)"]
    with pytest.raises(errors.InvalidGoal):
        pose_constraints(robot.model, [T])


_CONTINUOUS = """<robot name="c"><link name="a"/><link name="b"/><link name="c"/>
<joint name="spin" type="continuous"><parent link="a"/><child link="b"/>
<axis xyz="0 0 1"/></joint>
<joint name="slide" type="prismatic"><parent link="b"/><child link="c"/>
<axis xyz="1 0 0"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint></robot>"""


def test_with_joint_value_writes_one_joint_in_pinocchios_layout():
    model = pin.buildModelFromXML(_CONTINUOUS)
    q = pin.neutral(model)
    out = with_joint_value(model, q, "spin", 2.5)
    assert np.allclose(out, [np.cos(2.5), np.sin(2.5), 0.0])
    assert np.allclose(q, pin.neutral(model))  # a copy: the input is untouched
    assert np.allclose(with_joint_value(model, out, "slide", -0.25)[2], -0.25)
    with pytest.raises(errors.InvalidJoint, match="valid: .*slide.*spin|spin.*slide"):
        with_joint_value(model, q, "nope", 0.0)
    with pytest.raises(errors.InvalidJoint):
        with_joint_value(model, q, "universe", 0.0)
