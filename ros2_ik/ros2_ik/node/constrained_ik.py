"""ConstrainedIK goal -> core Problem -> ranked, independently verified solutions.

Locked joints leave the group (Drake's ``Joint::Lock``): the solve runs on the other
joints with the locked ones held at their values.  The first pose goal is the
problem's pose target; further pose goals become position + orientation constraints
with the same tolerances (:func:`ros2_ik.core.problem.pose_constraints`).
"""
from __future__ import annotations

import math
import time
from typing import Callable, Optional

import numpy as np

from ros2_ik.core.constraints import (DistanceConstraint, MinimumDistanceConstraint,
                                      MinimumDistanceUpperBoundConstraint)
from ros2_ik.core.problem import Problem, pose_constraints
from ros2_ik.core.result import Progress
from ros2_ik.core.solve import solve
from ros2_ik.core.verify import ConstraintTolerance, check
from ros2_ik.node.compute_ik import (
    collision_checker, minimum_distance, resolve_group, seed_for, solve_options)
from ros2_ik.node.base_pose import base_state, has_base, joint_part, split
from ros2_ik.node.request_frames import world_names
from ros2_ik.node.conversions import finite_or, joint_state, near_limits
from ros2_ik.node.error_codes import (
    CODE_NAMES, RequestError, code_for_exception, code_for_status, error_reply)
from ros2_ik.node.goal_terms import (
    constraints_of, costs_of, count_terms, distance_constraints_of, pose_goals,
    reads_beside_the_chain, scene_constraints)
from ros2_ik.node.parameters import NodeConfig
from ros2_ik.node.robot_source import JointStateCache, RobotSnapshot
from ros2_ik.node.upstream import beside, held_group
from ros2_ik.node.whole_body_terms import base_motion_costs
from ros2_ik_interfaces.action import ConstrainedIK
from ros2_ik_interfaces.msg import IKErrorCode, IKSolution


def solve_goal(snapshot: Optional[RobotSnapshot], model_error: str, cfg: NodeConfig,
               joints: JointStateCache, goal, cancel: Callable[[], bool],
               feedback: Optional[Callable[[ConstrainedIK.Feedback], None]] = None,
               extra_constraints=()) -> ConstrainedIK.Result:
    """Answer one goal; never raises (a bug answers INTERNAL_ERROR)."""
    result = ConstrainedIK.Result()
    result.random_seed = int(goal.random_seed)
    started = time.perf_counter()
    try:
        if snapshot is None:
            raise RequestError(IKErrorCode.NO_ROBOT_MODEL, model_error)
        if count_terms(goal) > cfg.max_constraints:
            raise RequestError(IKErrorCode.REQUEST_TOO_LARGE,
                               f"{count_terms(goal)} constraints/costs/pose goals; the "
                               f"limit is max_constraints={cfg.max_constraints}")
        tolerance = goal_tolerance(goal, cfg)
        notes: list = []
        problem, seed = build_problem(snapshot, cfg, joints, goal, extra_constraints,
                                      tolerance, notes)
        options = solve_options(goal, cfg, notes)
        on_progress = _progress_adapter(problem, feedback) if feedback else None
        core = solve(problem.group, problem, seed, num_solutions=max(goal.num_solutions, 1),
                     cancel=cancel, feedback=on_progress, constraint_tolerance_m=tolerance.m,
                     constraint_tolerance_rad=tolerance.rad, **options)
        _fill(result, problem, core, goal.locked_joints, tolerance,
              snapshot.base_parent_frame, snapshot.verification_data())
        result.message = "; ".join([result.message] + notes)
    except Exception as exc:  # noqa: BLE001 - every failure becomes an error code
        error_reply(result, code_for_exception(exc), str(exc))
    result.solve_time = time.perf_counter() - started
    return result


def goal_tolerance(goal, cfg: NodeConfig) -> ConstraintTolerance:
    """Return the goal's constraint tolerances [m] and [rad] (the node's where it gives none)."""
    return ConstraintTolerance(
        finite_or(goal.position_tolerance, cfg.position_tolerance, "position_tolerance"),
        finite_or(goal.orientation_tolerance, cfg.orientation_tolerance,
                  "orientation_tolerance"))


def build_problem(snapshot: RobotSnapshot, cfg: NodeConfig, joints: JointStateCache, goal,
                  extra_constraints=(), tolerance: ConstraintTolerance = ConstraintTolerance(),
                  notes: Optional[list] = None):
    """(Problem, seed) of a goal, on the group minus its locked joints.

    The group is held at its upstream joints' values (node/upstream.py); why not, to
    ``notes``.
    """
    tip = goal.tip_link or (goal.pose_goals[0].tip_link if goal.pose_goals else "")
    group, tip = resolve_group(snapshot, cfg, goal.group_name, goal.base_link, tip)
    group = held_group(snapshot, group, goal.seed.name, goal.seed.position, joints, cfg, notes,
                       every=reads_beside_the_chain(goal, group) or beside(
                           group, [m.target.header.frame_id for m in goal.pose_goals]))
    targets, _ = pose_goals(goal, cfg, snapshot, has_base(group), tip)
    seed = seed_for(group, goal.seed, joints, cfg, seed_base=goal.seed_base,
                    parent_frame=snapshot.base_parent_frame)
    group, seed = _lock(snapshot, group, seed, goal.locked_joints)
    model = snapshot.robot.model
    q_seed_full = group.to_full_q(seed)
    # MoveIt's planning frame (and a moving base's parent) name the root in a term too.
    roots = ("",) + world_names(snapshot, has_base(group))
    terms = constraints_of(model, goal, q_seed_full, roots) \
        + pose_constraints(model, targets[1:])
    if scene_constraints(goal):
        checker = collision_checker(snapshot, cfg)
        terms += [minimum_distance(checker, cfg, m.minimum_distance, m.influence_distance,
                                   tolerance.m)
                  for m in goal.minimum_distance_constraints]
        terms += distance_constraints_of(checker, goal)
    costs = costs_of(model, goal, q_seed_full, roots)
    costs += base_motion_costs(model, goal, group, seed)
    problem = Problem(group, targets[0] if targets else None,
                      terms + list(extra_constraints), costs)
    return problem, seed


def _lock(snapshot: RobotSnapshot, group, seed: np.ndarray, locked_msg):
    """Return the group without the locked joints, held at their values (and the seed for it)."""
    if len(locked_msg.position) != len(locked_msg.name):  # before the empty case: no
        raise RequestError(IKErrorCode.INVALID_GOAL,  # stray positions in the solution
                           "locked_joints: name and position differ in length")
    if not locked_msg.name:
        return group, seed
    locked = dict(group.locked)
    locked.update(zip(locked_msg.name, (float(v) for v in locked_msg.position)))
    names, part = joint_part(group)
    unknown = [n for n in locked_msg.name if n not in names]
    if unknown:
        raise RequestError(IKErrorCode.INVALID_GOAL,
                           f"locked_joints {unknown} are not in the group; valid: "
                           f"{list(names)}")
    free = [n for n in names if n not in locked_msg.name]
    if not free:
        raise RequestError(IKErrorCode.INVALID_GOAL, "every joint of the group is locked")
    robot = snapshot.robot
    for name in locked_msg.name:
        _check_locked(robot, name, locked[name])
    key = ("locked", group.base, group.tip, tuple(free), tuple(sorted(locked.items())),
           has_base(group))
    reduced = snapshot.group(key, lambda: robot.whole_body(
        tip=group.tip, joints=free, locked=locked) if has_base(group) else robot.group(
        base=group.base, tip=group.tip, joints=free, locked=locked))
    by_name = dict(zip(names, seed[part]))
    reduced_names, _ = joint_part(reduced)
    return reduced, np.concatenate((seed[:part.start or 0],
                                    [by_name[n] for n in reduced_names]))


def _check_locked(robot, name: str, value: float) -> None:
    """Refuse a locked value [rad or m] that is not finite or lies outside joint ``name``'s limits.

    As a seed (:func:`~.conversions.near_limits`): just outside, the group holds
    the joint clamped into its limits, and the solutions report where it was held.
    """
    lo, hi = robot.joint_limits(name)
    if not near_limits(value, lo, hi):
        raise RequestError(IKErrorCode.INVALID_GOAL,
                           f"locked_joints: joint '{name}' = {value:.6g} is not in its "
                           f"limits [{lo:.6g}, {hi:.6g}]")


def _progress_adapter(problem: Problem, publish):
    names = problem.group.joint_names

    def on_progress(progress: Progress) -> None:
        fb = ConstrainedIK.Feedback()
        fb.iteration = int(progress.iterations)
        fb.restarts = int(progress.restarts)
        fb.constraint_violation = float(progress.best_violation)
        fb.cost = float(progress.best_cost)
        if progress.best_q is not None:
            fb.best = joint_state(names, progress.best_q)
        publish(fb)
    return on_progress


def _fill(result: ConstrainedIK.Result, problem: Problem, core, locked,
          tolerance: ConstraintTolerance, base_parent: str = "universe",
          data=None) -> None:
    """Ranked solutions, each re-verified here on ``data`` (a Data no solver uses).

    ``data``: the snapshot's verification Data of the model (:meth:`RobotSnapshot.
    verification_data`; made once per thread: a fresh one per goal took 5-12 ms on
    tiago_dual's 101 joints); None: a fresh one.  Each solution's joint state lists the
    moved joints, then the locked ones where the solve held them (a value given just
    outside a limit, clamped into it: :func:`_check_locked`).
    """
    result.random_seed = int(core.random_seed)
    code = code_for_status(core.status.name)
    result.error_code.val = code
    result.message = core.message or CODE_NAMES.get(code, "")
    qs = [s.q for s in core.solutions] or ([core.q] if len(core.q) else [])
    if data is None:
        data = problem.group.robot.model.createData()
    held = problem.group.locked  # where the solve held them (clamped into their limits)
    held_positions = [float(held[name]) for name in locked.name]
    for q in qs:
        sol = _solution(problem, np.asarray(q), data, tolerance, base_parent)
        sol.joint_state.name = list(sol.joint_state.name) + list(locked.name)
        sol.joint_state.position = list(sol.joint_state.position) + held_positions
        result.solutions.append(sol)
    if code == IKErrorCode.SUCCESS and not any(
            s.error_code.val == IKErrorCode.SUCCESS for s in result.solutions):
        result.error_code.val = IKErrorCode.NO_SOLUTION
        result.message = "solver claimed success but the independent check failed"


#: The constraints on a collision checker: a solution then reports the nearest pair.
_ON_CHECKER = (MinimumDistanceConstraint, MinimumDistanceUpperBoundConstraint,
               DistanceConstraint)


def _solution(problem: Problem, q: np.ndarray, data, tolerance: ConstraintTolerance,
              base_parent: str = "universe") -> IKSolution:
    ok, pos, ori, reason, violations = check(problem.group, problem.pose, q,
                                             problem.constraints, data, tolerance)
    sol = IKSolution()
    group = problem.group
    sol.joint_state = joint_state(*split(group, group.joint_names, q))
    if has_base(group):
        base_state(group, q, base_parent, sol.base)
    sol.error_code.val = IKErrorCode.SUCCESS if ok else IKErrorCode.NO_SOLUTION
    sol.message = reason
    sol.position_error, sol.orientation_error = float(pos), float(ori)
    sol.violated_constraints = [v.name for v in violations]
    sol.violations = [float(v.amount) for v in violations]
    sol.violation_units = [v.unit for v in violations]
    checkers = [c.checker for c in problem.constraints if isinstance(c, _ON_CHECKER)]
    sol.min_distance = (checkers[0].min_distance(problem.group.to_full_q(q)).distance_m
                        if checkers else math.nan)
    return sol
