"""What a solve can answer before any iteration: the one place it hooks into the driver.

:meth:`Solver.solve <ros2_ik.core.solvers.base.Solver.solve>` calls :func:`answer`
first.  For a solver that takes closed forms (``Solver.closed_form``) and a pose target
on a chain that has one (:mod:`ros2_ik.core.closed_form`):

* a pose-only problem on every axis is answered exactly: the verified branches within
  the limits, nearest the seed first (up to ``num_solutions``), or NO_SOLUTION with the
  proof's reason when none exists;
* any other problem (weights with a free axis, constraints, costs), and a pose whose
  answer is not proven, gets the exact branches as the first starts after the seed.

A 7R sweep that a searching solver runs for one solution answers after the seed's
attempt instead (:func:`.swept.after_seed`): :meth:`Solver.from_seed
<ros2_ik.core.solvers.base.Solver.from_seed>` calls :func:`after_seed` once that
attempt is not verified.  Anything else returns None: the driver runs as it would
without this module.
"""
from __future__ import annotations

import dataclasses
import functools
import math
import time
from typing import TYPE_CHECKING, List, Optional, Union

import numpy as np
import pinocchio as pin

from ros2_ik.core.problem import Problem
from ros2_ik.core.result import IKResult, IKStatus, Solution
from ros2_ik.core.verify import check

if TYPE_CHECKING:
    from ros2_ik.core.closed_form.branches import Branches
    from ros2_ik.core.closed_form.chain import ClosedForm

#: The answer: a result, exact branches to start from, or None.
Answer = Union[IKResult, List[np.ndarray], None]


def answer(solver, problem: Problem, seed: np.ndarray, options, distinct: float) -> Answer:
    """Return a result, the starts to try after the seed, or None (module docstring).

    ``distinct`` [rad]: two branches are one when no joint differs by more.
    """
    pose = problem.pose
    if pose is None or not solver.closed_form:
        return None
    _, sweep, swept = _forms()
    if problem.pose_only and pose.full_pose:
        if swept.after_seed(solver, problem.group, options.num_solutions):
            return None  # :func:`after_seed`'s
        return pose_answer(solver, problem.group, pose, seed, options, distinct,
                           time.perf_counter())
    if problem.group.n == sweep.JOINTS:
        return None  # 7R: the sweep answers pose-only targets on every axis alone
    solver_form = closed_form(problem.group, pose.frame_id)
    return None if solver_form is None else \
        list(_branches_of(solver_form, problem.group, pose, seed, distinct).q)


def after_seed(solver, problem: Problem, seed: np.ndarray, options, distinct: float,
               iterations: int, start: float) -> Answer:
    """Return the sweep's answer once the seed's attempt (``iterations``) is not verified.

    For the requests whose sweep :func:`answer` left for later
    (:func:`.swept.after_seed`): a SUCCESS counting the attempt's ``iterations``, the
    branches to start from next, or None; None for any other request.  ``start``: when
    the solve began (``time.perf_counter()``).  A solver that made no attempt from the
    seed (lm with a joint jump limit: :func:`seed_request.applies`) calls it with 0
    ``iterations``, before the driver's first attempt: the sweep then goes first.
    """
    pose = problem.pose
    if pose is None or not (solver.closed_form and problem.pose_only and pose.full_pose):
        return None
    return pose_after_seed(solver, problem.group, pose, seed, options, distinct,
                           iterations, start)


def pose_after_seed(solver, group, pose, seed: np.ndarray, options, distinct: float,
                    iterations: int, start: float) -> Answer:
    """:func:`after_seed` of a pose-only target on every axis, CompiledPose ``pose``.

    :mod:`pose_request` answers with it too.
    """
    swept = _forms()[2]
    if not swept.after_seed(solver, group, options.num_solutions):
        return None
    found = swept.answer(solver, group, pose, seed, options, distinct)
    if isinstance(found, IKResult):
        return dataclasses.replace(found, iterations=iterations,
                                   solve_time_s=time.perf_counter() - start)
    return found


def pose_answer(solver, group, pose, seed: np.ndarray, options, distinct: float,
                start: float) -> Answer:
    """:func:`answer` of a pose-only target on every axis, CompiledPose ``pose``.

    7R: the sweep's (:func:`swept.answer`); else the closed form's branches, verified
    (:func:`exact`): a result, or the branches as starts.  ``start``: when the solve
    began (``time.perf_counter()``).  :mod:`pose_request` answers with it too.
    """
    _, sweep, swept = _forms()
    if group.n == sweep.JOINTS:  # 7R: a swept joint (:mod:`.swept` decides)
        return swept.answer(solver, group, pose, seed, options, distinct)
    solver_form = closed_form(group, pose.frame_id)
    if solver_form is None:
        return None
    return form_answer(solver, group, pose, seed, options, start, solver_form, distinct)


def form_answer(solver, group, pose, seed: np.ndarray, options, start: float,
                solver_form: ClosedForm, distinct: float) -> Answer:
    """:func:`pose_answer` on a chain whose closed form ``solver_form`` is known.

    A result (:func:`exact`), or the branches as starts; ``distinct`` [rad] as in
    :func:`answer`.  :mod:`pose_request` answers with it, its plan holding the form.
    """
    branches = _branches_of(solver_form, group, pose, seed, distinct)
    result = exact(group, pose, seed, options, branches, solver_form, start, solver.name)
    return result if result is not None else list(branches.q)


def _branches_of(solver_form: ClosedForm, group, pose, seed: np.ndarray, distinct: float
                 ) -> "Branches":
    """Return ``solver_form``'s branches of CompiledPose ``pose`` (:func:`.branches.branches`).

    They lie within ``group``'s limits, nearest ``seed`` first; ``distinct`` [rad] as in
    :func:`answer`.
    """
    return _branches().branches(solver_form, group.lower, group.upper, pose.H_world_target,
                                seed, distinct)


def closed_form(group, frame_id: int) -> Optional[ClosedForm]:
    """Return ``group``'s closed form to ``frame_id`` (:func:`.chain.of`), or None."""
    chain = _forms()[0]
    return chain.of(group, frame_id) if group.n in chain.JOINTS else None


def first_answer(solver, group, frame_id: int) -> Optional[str]:
    """Name what answers a pose-only target on every axis of ``frame_id`` exactly.

    ``"sweep"`` (a 7R sweep ``solver`` runs: in :func:`answer`, or in :func:`after_seed`
    for one solution, :func:`.swept.after_seed`), ``"closed_form"`` (the chain's closed
    form, :func:`pose_answer`) or None (both return None for every such target of
    ``group``), which :mod:`pose_request` relies on.
    """
    if not solver.closed_form:
        return None
    _, sweep, swept = _forms()
    if group.n == sweep.JOINTS:
        return "sweep" if swept.form(solver, group, frame_id) is not None else None
    if closed_form(group, frame_id) is not None:
        return "closed_form"
    return None


def _branches():
    """:mod:`ros2_ik.core.closed_form.branches`, imported when a closed form is first found.

    It loads numba; an arm without a closed form never needs it.
    """
    global _BRANCHES
    if _BRANCHES is None:
        from ros2_ik.core.closed_form import branches
        _BRANCHES = branches
    return _BRANCHES


_BRANCHES = None


def _forms():
    """:mod:`ros2_ik.core.closed_form`'s ``chain`` and ``sweep``, and :mod:`.swept`.

    Imported at first use: the first pose a closed-form solver is asked imports them, not
    ``import ros2_ik.core`` (:mod:`.swept` imports this module's :func:`exact`).
    """
    global _FORMS
    if _FORMS is None:
        from ros2_ik.core.closed_form import chain, sweep
        from ros2_ik.core.solvers import swept
        _FORMS = chain, sweep, swept
    return _FORMS


_FORMS = None


def prepare(solver, group, frame: str) -> None:
    """Detect ``group``'s closed form to ``frame`` and load its compiled step, if it has one.

    The one-time work of the first answer (EAIK's solver and its self-test, the numba
    kernel), done outside any solve's budget by :func:`ros2_ik.core.solve.prepare`.  A
    7R sweep only where ``solver`` runs it (:func:`.swept.form`).
    """
    chain, sweep, swept = _forms()
    if group.n == sweep.JOINTS:
        if swept.form(solver, group, group.robot.frame_id(frame)) is not None:
            sweep.prepare(group, frame)
    if group.n not in chain.JOINTS:
        return
    frame_id = group.robot.frame_id(frame)
    solver_form = chain.of(group, frame_id)
    if solver_form is None:
        return
    if solver_form.kernel is not None:
        _branches().warm_up()
    data = group.full_data()
    mid = group.mid_configuration()
    pin.framesForwardKinematics(group.robot.model, data, group.to_full_q(mid))
    H = data.oMf[frame_id].homogeneous
    far = H.copy()  # out of reach: the least-squares rows a first unreachable pose gets
    far[:3, 3] += 1e3
    for target in (H, far):
        _branches().branches(solver_form, group.lower, group.upper, target, mid, 1e-2)


@functools.lru_cache(maxsize=64)
def _message(family: str, found: int, returned: int) -> str:
    """:func:`exact`'s message of a SUCCESS: ``found`` branches, ``returned`` of them.

    Made once per family and counts (a request's answer reads it: no formatting per solve).
    """
    return (f"closed form ({family}): {found} branch{'' if found == 1 else 'es'} within the "
            "limits found, " + ("the one nearest the seed returned" if returned == 1 else
                                f"{returned} returned, nearest the seed first"))


def exact(group, pose, seed: np.ndarray, options, found, solver_form: ClosedForm,
          start: float, name: str
          ) -> Optional[IKResult]:
    """Return the result of pose-only target ``pose`` (a CompiledPose) from its branches.

    ``found``: :class:`.Branches` on ``group``.  None: not proven (the search decides).

    Each branch is verified on the full model (:func:`verify.check`); SUCCESS with the
    first ``num_solutions`` that hold and keep ``max_joint_jump_rad``; JUMP_TOO_LARGE
    when some hold but none keeps it; NO_SOLUTION when :func:`.branches.proof`
    proves that none exists.
    """
    data = group.full_data()
    tol = options.constraint_tolerance
    jump = options.max_joint_jump_rad
    wanted, limit_jump = options.num_solutions, jump < math.inf
    seed_values = seed.tolist()
    solutions, nearest_jump = [], None
    for q in found.q:
        values = q.tolist()
        ok, pos, ori, _, _ = check(group, pose, q, (), data, tol, values)
        if not ok:
            continue
        if limit_jump and max(abs(a - b) for a, b in zip(values, seed_values)) > jump:
            nearest_jump = nearest_jump or (q, pos, ori)
            continue
        solutions.append(Solution(q, pos, ori, math.dist(values, seed_values)))
        if len(solutions) >= wanted:
            break
    if solutions:
        best = solutions[0]
        return IKResult(
            best.q, group.joint_names, IKStatus.SUCCESS, 0, 0, best.position_error_m,
            best.orientation_error_rad, time.perf_counter() - start, options.random_seed,
            (), tuple(solutions), _message(solver_form.family, len(found.q), len(solutions)),
            name)
    elapsed = time.perf_counter() - start
    if nearest_jump is not None:
        q, pos, ori = nearest_jump
        moved = float(np.abs(q - seed).max())
        return IKResult(
            q=q, joint_names=group.joint_names, status=IKStatus.JUMP_TOO_LARGE, iterations=0,
            restarts=0, position_error_m=pos, orientation_error_rad=ori, solve_time_s=elapsed,
            random_seed=options.random_seed,
            message=f"nearest solution moves a joint {moved:.3g} rad/m from the seed, above "
                    f"max_joint_jump_rad={jump:.3g}", solver=name)
    if len(found.q):
        return None  # branches that did not verify: the search decides
    reason, best = _branches().proof(group, pose, found, solver_form.family, data)
    if not reason:
        return None
    if not np.isfinite(best).all():
        best = seed
    _, pos, ori, _, _ = check(group, pose, best, (), data, tol)
    return IKResult(
        q=best, joint_names=group.joint_names, status=IKStatus.NO_SOLUTION, iterations=0,
        restarts=0, position_error_m=pos, orientation_error_rad=ori,
        solve_time_s=time.perf_counter() - start, random_seed=options.random_seed,
        message=f"no solution: {reason}", solver=name)
