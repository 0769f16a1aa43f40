"""Proofs that held contacts, targets or a CoM bound cannot hold together (issue 47).

:func:`proofs.held_proof` compares the sets the terms hold points in with the bounds of
``kinematics/reach.py`` (their soundness: test_reach_pairs.py).  Checked here: problems
feasible by construction (every term met at a random configuration q*, by pinocchio FK
and ``centerOfMass``) are never proven impossible; feet held 3 m apart, a hand target
beyond reach of the held feet, a CoM box or ball out of reach of the feet, and a foot
held on a far line (a box with free axes) answer NO_SOLUTION after one attempt, the
message naming the terms and the distances.
"""
import numpy as np
import pinocchio as pin
import pytest

from ros2_ik.core import PoseTarget, solve
from ros2_ik.core import constraints as C
from ros2_ik.core.problem import Problem
from ros2_ik.core.solvers import base, proofs
from ros2_ik.core.solvers.options import SolveOptions
from wholebody_groups import full_q, talos

FEET = ("left_sole_link", "right_sole_link")
HAND = "gripper_left_joint"


@pytest.fixture(scope="module")
def group():
    return talos()


def _standing(g, rng):
    """A random q* (base anywhere, joints in limits), its full q and data."""
    q = g.random_configuration(rng)
    qf = full_q(g, q)
    data = g.robot.model.createData()
    pin.framesForwardKinematics(g.robot.model, data, qf)
    pin.centerOfMass(g.robot.model, data, qf)
    return q, qf, data


def _seed(g):
    seed = g.mid_configuration()
    seed[2] = 1.0
    return seed


def _no_solution(g, problem):
    res = solve(g, problem, _seed(g), timeout_s=2.0, random_seed=0)
    assert res.status.name == "NO_SOLUTION", (res.status, res.message)
    assert res.restarts == 0
    return res.message


def test_feasible_problems_are_never_proven_impossible(group):
    g, model = group, group.robot.model
    rng = np.random.default_rng(11)
    for _ in range(40):
        q, qf, data = _standing(g, rng)
        c = data.com[0]
        terms = [C.FramePlacementConstraint.at_current(model, f, qf) for f in FEET]
        terms += [C.CenterOfMassConstraint(model, c - 0.01, c + 0.01),
                  C.CenterOfMassDistanceConstraint(model, c + [0.05, 0.0, 0.0], 0.0, 0.06),
                  C.PositionConstraint(model, frame_A="universe", frame_B="arm_right_7_link",
                                       p_BQ=np.zeros(3),
                                       p_AQ_lower=[-np.inf, -np.inf, -np.inf],
                                       p_AQ_upper=[np.inf, np.inf, np.inf])]
        p_hand = data.oMf[model.getFrameId("arm_right_7_link")].translation
        terms.append(C.PositionConstraint(model, frame_A="universe",
                                          frame_B="arm_right_7_link", p_BQ=np.zeros(3),
                                          p_AQ_lower=[-np.inf, p_hand[1], p_hand[2]],
                                          p_AQ_upper=[np.inf, p_hand[1], p_hand[2]]))
        problem = Problem(g, PoseTarget(HAND, g.fk(q, HAND)), terms)
        assert proofs.no_solution(problem, SolveOptions()) is None


def test_feet_held_three_metres_apart(group):
    g, model = group, group.robot.model
    _, qf, data = _standing(g, np.random.default_rng(1))
    left = C.FramePlacementConstraint.at_current(model, FEET[0], qf)
    T = pin.SE3(data.oMf[model.getFrameId(FEET[1])])
    T.translation = left.T_world_target.translation + [0.0, 3.0, 0.0]
    right = C.FramePlacementConstraint(model, FEET[1], T)
    message = _no_solution(g, Problem(g, None, [left, right]))
    assert f"contact({FEET[0]}) and contact({FEET[1]}): targets 3.00 m apart" in message
    assert "reach" in message


def test_hand_target_beyond_reach_of_the_held_feet(group):
    g, model = group, group.robot.model
    q, qf, _ = _standing(g, np.random.default_rng(2))
    feet = [C.FramePlacementConstraint.at_current(model, f, qf) for f in FEET]
    T = g.fk(q, HAND)
    T.translation = T.translation + [0.0, 0.0, 2.5]
    message = _no_solution(g, Problem(g, PoseTarget(HAND, T), feet))
    assert "pose target and contact(" in message and f"'{HAND}'" in message
    # within reach: not proven
    T.translation = T.translation - [0.0, 0.0, 2.5]
    assert proofs.no_solution(Problem(g, PoseTarget(HAND, T), feet), SolveOptions()) is None


def test_com_box_and_com_ball_out_of_reach_of_the_feet(group):
    g, model = group, group.robot.model
    _, qf, data = _standing(g, np.random.default_rng(3))
    feet = [C.FramePlacementConstraint.at_current(model, f, qf) for f in FEET]
    up = data.oMf[model.getFrameId(FEET[0])].translation + [0.0, 0.0, 3.0]
    box = C.CenterOfMassConstraint(model, up - 0.1, up + 0.1, name="com_high")
    message = _no_solution(g, Problem(g, None, feet + [box]))
    assert "com_high and contact(" in message and "the CoM is at most" in message
    ball = C.CenterOfMassDistanceConstraint(model, up, 0.0, 0.5, name="com_near")
    assert "com_near" in _no_solution(g, Problem(g, None, feet + [ball]))


def test_a_foot_on_a_far_line(group):
    """A position box free along x (a line) 3 m to the side of the other, held, foot."""
    g, model = group, group.robot.model
    _, qf, data = _standing(g, np.random.default_rng(4))
    left = C.FramePlacementConstraint.at_current(model, FEET[0], qf)
    p = left.T_world_target.translation
    line = C.PositionConstraint(model, frame_A="universe", frame_B=FEET[1], p_BQ=np.zeros(3),
                                p_AQ_lower=[-np.inf, p[1] + 3.0, p[2]],
                                p_AQ_upper=[np.inf, p[1] + 3.0, p[2]], name="line")
    message = _no_solution(g, Problem(g, None, [left, line]))
    assert f"contact({FEET[0]}) and line: targets 3.00 m apart" in message


@pytest.mark.parametrize("robot", ["talos", "solo12"])
def test_bench_problems_and_their_far_contact_variants(robot):
    """The benchmark's families (feasible by construction) are not proven impossible; with a
    contact moved 3 m (``with_far_contact``) they are, naming that contact."""
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    import wholebody_problems as wb
    from wholebody_ours import OursWholeBody
    ours = OursWholeBody(robot)
    for problem in wb.problems(robot, 3, seed=5):
        assert proofs.no_solution(ours.problem(problem), SolveOptions()) is None
        far = wb.with_far_contact(problem)
        reason = proofs.no_solution(ours.problem(far), SolveOptions())
        assert reason is not None and far.meta["infeasible"] in reason, reason
        assert " m apart, reach " in reason


def test_a_foot_on_a_plane_out_of_reach_and_one_within(group):
    """PointOnPlaneConstraint: a slab; 3 m above the held foot is out of reach, at it not."""
    g, model = group, group.robot.model
    _, qf, data = _standing(g, np.random.default_rng(6))
    left = C.FramePlacementConstraint.at_current(model, FEET[0], qf)
    p = data.oMf[model.getFrameId(FEET[1])].translation
    tilted = np.array([0.3, -0.2, 1.0]) / np.linalg.norm([0.3, -0.2, 1.0])
    for height, proven in ((3.0, True), (0.0, False)):
        plane = C.PointOnPlaneConstraint(model, FEET[1], p_FP=(0.01, 0.0, 0.0),
                                         plane_point=p + height * tilted,
                                         plane_normal=tilted, cone_rad=np.pi, name="plane")
        problem = Problem(g, None, [left, plane])
        if proven:
            assert "and plane: targets" in _no_solution(g, problem)
        else:
            assert proofs.no_solution(problem, SolveOptions()) is None


def test_the_node_answers_no_solution_naming_the_contacts():
    """The constrained-IK action on talos: soles held where the seed puts them, the gripper
    3 m away: NO_SOLUTION (the node's error code) with the proof's sentence."""
    pytest.importorskip("rclpy")
    from geometry_msgs.msg import PoseStamped, Transform
    from sensor_msgs.msg import MultiDOFJointState
    from ros2_ik.core import robots
    from node_inputs import config, snapshot
    from ros2_ik.node.constrained_ik import solve_goal
    from ros2_ik.node.parameters import GroupConfig
    from ros2_ik.node.robot_source import JointStateCache
    from ros2_ik_interfaces.action import ConstrainedIK
    from ros2_ik_interfaces.msg import ContactConstraint, IKErrorCode, PoseGoal
    talos = snapshot((robots.data_dir() / "talos_data/robots/talos_full_v2.urdf").read_text(),
                     (robots.data_dir() / "talos_data/srdf/talos.srdf").read_text(), "floating")
    hand = "gripper_left_base_link"
    cfg = config({"whole_body": GroupConfig("whole_body", "", hand, ("root_joint",))},
                 timeout=2.0)
    goal = ConstrainedIK.Goal(group_name="whole_body", timeout=2.0)
    tf = Transform()
    tf.translation.z, tf.rotation.w = 1.02, 1.0
    goal.seed_base = MultiDOFJointState(joint_names=["root_joint"], transforms=[tf])
    target = PoseStamped()
    target.header.frame_id = "universe"
    target.pose.position.x, target.pose.position.z, target.pose.orientation.w = 3.0, 0.8, 1.0
    goal.pose_goals = [PoseGoal(tip_link=hand, target=target, position_only=True)]
    goal.contact_constraints = [ContactConstraint(frame=f, hold_current=True) for f in FEET]
    result = solve_goal(talos, "", cfg, JointStateCache(), goal, lambda: False)
    assert result.error_code.val == IKErrorCode.NO_SOLUTION, result.message
    assert "m apart, reach" in result.message and "sole_link" in result.message, result.message


def test_two_hands_held_farther_apart_than_the_arms_reach(group):
    """A position box in a moving frame (the left hand) for the right hand: 3 m away is
    proven out of reach, the box where q* puts it is not."""
    g, model = group, group.robot.model
    _, qf, data = _standing(g, np.random.default_rng(8))
    left, right = (model.getFrameId(f) for f in ("arm_left_7_link", "arm_right_7_link"))
    p = data.oMf[left].actInv(data.oMf[right].translation)
    offset = pin.SE3(pin.rpy.rpyToMatrix(0.3, -0.2, 0.5), np.array([0.02, 0.0, -0.01]))
    p = offset.actInv(p)  # in A = left hand frame * offset
    for shift, proven in ((3.0, True), (0.0, False)):
        box = C.PositionConstraint(model, frame_A="arm_left_7_link", frame_B="arm_right_7_link",
                                   p_BQ=np.zeros(3), p_AQ_lower=p + [shift, 0.0, 0.0],
                                   p_AQ_upper=p + [shift + 0.01, 0.0, 0.01],
                                   X_AbarA=offset, name="hands")
        problem = Problem(g, None, [box])
        if proven:
            message = _no_solution(g, problem)
            assert "hands: box " in message
            assert " m from frame 'arm_left_7_link', reach " in message
        else:
            assert proofs.no_solution(problem, SolveOptions()) is None


def test_bounds_are_built_within_the_solves_share_of_its_budget(monkeypatch):
    """A bound between two held frames is built only before the proofs' deadline.

    Building one costs ~0.3-1.5 ms on a humanoid, and the first solve that holds a new
    set of frames built every pair's inside its budget: with four contacts and a hand and
    ``timeout_s`` = 5 ms, TALOS full and a human model answered NO_SOLUTION after ~10 ms
    on problems they solve.  Past the deadline, the pairs not built are left out (no proof
    from them, none built); the next solve with time builds them, and the proof fires.
    """
    from ros2_ik.core.kinematics import reach
    g = talos()  # a group of its own: no bound built yet
    model = g.robot.model
    _, qf, data = _standing(g, np.random.default_rng(1))
    left = C.FramePlacementConstraint.at_current(model, FEET[0], qf)
    T = pin.SE3(data.oMf[model.getFrameId(FEET[1])])
    T.translation = left.T_world_target.translation + [0.0, 3.0, 0.0]
    apart = Problem(g, None, [left, C.FramePlacementConstraint(model, FEET[1], T)])
    feet = [model.getFrameId(f) for f in FEET]
    assert proofs.no_solution(apart, SolveOptions(), deadline=0.0) is None
    assert not reach.distance_bound_built(g, *feet)
    monkeypatch.setattr(base, "PROOF_BUILD_SHARE", 0.0)  # every solve past its deadline
    result = solve(g, apart, _seed(g), timeout_s=0.05, max_attempts=2, random_seed=0)
    assert result.status.name == "NO_SOLUTION" and result.restarts > 0  # searched, unproven
    assert not reach.distance_bound_built(g, *feet)
    monkeypatch.undo()
    assert "3.00 m apart" in _no_solution(g, apart)  # built now, proven after one attempt
    assert reach.distance_bound_built(g, *feet)
