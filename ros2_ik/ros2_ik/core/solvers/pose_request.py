"""The lean path of a plain pose request answered by the seed's attempt.

A plain request: a :class:`~ros2_ik.core.pose.PoseTarget` on every axis with unit
weights, no constraints or costs, one solution, no joint jump limit, solver ``lm``, on a
frame whose chain runs the compiled attempt, or has a closed form that
:func:`before_iterating.answer` tries first.  Most pose requests are answered by
the attempt from the seed (~80 % of 7R targets), and for those the driver's objects
(:class:`Problem`, the solver, its :class:`PoseState`, the restarts' state) cost more
than the compiled attempt itself (docs/design.md).

:func:`plan` resolves once per group, frame and solver what depends only on them (the
solver class, the compiled chain, its search limits), stored by
:func:`ros2_ik.core.solve.prepare`; :func:`answer` then makes the request in a handful of
calls: ONE compiled call (:func:`chain_kernel.attempt`, the generated loop), the end
point unwrapped and clamped (:func:`search.returned_pose`) and checked on the full model
(:func:`seed_request.verified`: only :func:`verify.check` accepts), the IKResult built
as the driver builds one.  An end point that is not verified goes to a 7R sweep lm
runs, when the chain has one (:func:`before_iterating.pose_after_seed`, as
:meth:`base.Solver.from_seed`), then into the driver as its first attempt
(:meth:`base.Solver.resume`: restarts, seed library, proofs), so the result is the one
:meth:`base.Solver.solve` gives, to the bit.

A frame with a closed form (6R) takes the same path with its answer in place of the
attempt (:func:`before_iterating.pose_answer`: step 1 of :meth:`base.Solver.solve`).
"""
from __future__ import annotations

import math
import time
from typing import NamedTuple, Optional

import numpy as np

from ros2_ik.core import errors
from ros2_ik.core.kinematics.model import Chain
from ros2_ik.core.pose import CompiledPose
from ros2_ik.core.problem import Problem
from ros2_ik.core.result import IKResult, IKStatus
from ros2_ik.core.solvers import before_iterating, chain_kernel, seed_request
from ros2_ik.core.solvers.attempts import chain_settings
from ros2_ik.core.solvers.base import proven_or
from ros2_ik.core.solvers.options import DISTINCT_TOLERANCE, Begun, LocalResult, SolveOptions
from ros2_ik.core.solvers.search import returned_pose
from ros2_ik.core.solvers.lm import LevenbergMarquardt
from ros2_ik.core.solvers.pose_state import compiled_chain, squared_tolerances


class Plan(NamedTuple):
    """What a plain pose request on one group, frame and solver needs, resolved once.

    ``solver``: the solver class; ``chain``, ``lower``, ``upper``, ``bounded``: the
    compiled attempt's chain and search limits [rad or m]
    (:func:`pose_state.compiled_chain`), ``swept``: a 7R sweep answers after it; or
    ``form``: the chain's closed form (:func:`before_iterating.closed_form`), which
    answers first (:func:`before_iterating.first_answer`).  Holds no reference to the
    group (a plan is stored per group: it would keep the group alive).
    """

    solver: type
    chain: Optional[Chain] = None
    lower: Optional[np.ndarray] = None
    upper: Optional[np.ndarray] = None
    bounded: bool = False
    form: Optional[object] = None
    swept: bool = False


def plan(group, frame: str, solver_class: type) -> Optional[Plan]:
    """Return the :class:`Plan` of plain pose requests for ``frame``, or None (not lean).

    None unless ``solver_class`` is lm itself (a subclass may answer otherwise), the
    group has a fixed base, the frame exists, and either its chain has a closed form or
    it runs the compiled attempt (then perhaps a sweep lm runs).
    """
    if solver_class is not LevenbergMarquardt or group.has_base:
        return None
    try:
        frame_id = group.robot.frame_id(frame)
    except errors.InvalidFrame:
        return None
    first = before_iterating.first_answer(solver_class, group, frame_id)
    if first == "closed_form":
        return Plan(solver_class, form=before_iterating.closed_form(group, frame_id))
    found = compiled_chain(group, frame_id)
    return None if found is None else Plan(solver_class, *found, swept=first == "sweep")


def answer(plan: Plan, group, pose: CompiledPose, seed: np.ndarray,
           options: SolveOptions) -> IKResult:
    """Return the result of plain pose request ``pose`` from ``seed`` (module docstring).

    ``seed``: the clamped seed (:meth:`Group.clamped_seed`), ``options`` validated; the
    request is one :func:`ros2_ik.core.solve.solve` takes this path for (one solution,
    no jump limit, unit weights on every axis).
    """
    start = time.perf_counter()
    cls = plan.solver
    if plan.form is not None:
        return _first_answer(cls, group, pose, seed, options, plan.form, start)
    q, iterations, converged, merit = chain_kernel.attempt(
        plan.chain, seed, pose.H_target_world,
        plan.lower, plan.upper, plan.bounded, float(pose.sqrt_w[0]),
        *squared_tolerances(pose.target), chain_settings(cls))
    if converged and math.isfinite(sum(q.tolist())):
        seed_values = seed.tolist()
        q_out, values = returned_pose(group, group.limit_lists, q, seed_values)
        result = seed_request.verified(group, pose, (), q_out, values, seed_values,
                                       iterations, options.constraint_tolerance,
                                       options.random_seed, start, cls.name)
        if result is not None:
            return result
    # Not verified: a sweep, then the driver, the seed's attempt its first (as from_seed).
    starts = None
    if plan.swept:
        late = before_iterating.pose_after_seed(cls, group, pose, seed, options,
                                                DISTINCT_TOLERANCE, iterations, start)
        if isinstance(late, IKResult):
            return late
        starts = late
    problem = Problem(group, pose.target)
    solver = cls()
    solver.options = options
    begun = Begun(start, solver.setup(problem), LocalResult(q, iterations, converged, merit))
    return solver.resume(problem, seed, options, begun, starts, True, start)


def _first_answer(cls: type, group, pose: CompiledPose, seed: np.ndarray,
                  options: SolveOptions, form, start: float) -> IKResult:
    """:func:`answer` where closed form ``form`` answers first.

    As :meth:`base.Solver.solve` step 1 (:func:`before_iterating.pose_answer`, here
    :func:`before_iterating.form_answer` with the plan's form): a SUCCESS returned as it
    is, another result through the proofs (:func:`base.proven_or`); else the driver's
    steps 2-4 (:meth:`base.Solver.from_seed`) with the branches found as the first
    starts.
    """
    early = before_iterating.form_answer(cls, group, pose, seed, options, start, form,
                                         DISTINCT_TOLERANCE)
    if isinstance(early, IKResult) and early.status is IKStatus.SUCCESS:
        return early
    problem = Problem(group, pose.target)
    if isinstance(early, IKResult):
        return proven_or(early, problem, options, start)
    return cls().from_seed(problem, seed, options, early, start)
