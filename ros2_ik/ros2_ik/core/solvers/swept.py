"""Answers for 7R chains from a swept joint (:mod:`ros2_ik.core.closed_form.sweep`).

Called by :func:`~ros2_ik.core.solvers.before_iterating.pose_answer` on seven-joint groups,
for pose-only problems on every axis (any other problem keeps the search as before):
for solvers with ``sweep = True`` (``analytic``) on every chain with a sweep; for the
other solvers that take closed forms (``lm``) where the sweep is cheap
(:attr:`.sweep.Sweep.cheap`: one value reaches nearly every sample pose, so an answer
costs about one closed form, less than lm's restarts; elsewhere lm's median is as good
as the sweep's: ``bench/sweep_bench.py``).  For those, with one solution wanted, the
sweep comes after the seed's attempt (:func:`after_seed`).
The answer is the first verified branch nearest the seed (with ``num_solutions`` > 1:
the distinct verified branches the sweep found within its budget, a sample of a 7R
pose's continuum, not every solution).  A pose the sweep did not answer within its
budget gets the branches found (else the nearest ones just outside the limits,
clamped) as the first starts of the search.  The sweep never answers NO_SOLUTION: it
samples one joint, which proves nothing about the values between samples.
"""
from __future__ import annotations

import math
import time
from typing import List, Optional, Union

import numpy as np

from ros2_ik.core.closed_form import sweep
from ros2_ik.core.result import IKResult, IKStatus
from ros2_ik.core.solvers.before_iterating import exact

#: Share of the solve's ``timeout_s`` the sweep may take before the search runs.
BUDGET_SHARE = 0.25
#: Branches handed to the search as starts.
STARTS = 8


def answer(solver, group, pose, seed: np.ndarray, options, distinct: float
           ) -> Union[IKResult, List[np.ndarray], None]:
    """Return a result, the starts to try after the seed, or None (module docstring).

    ``pose``: a CompiledPose on ``group``, pose-only, on every axis
    (:func:`before_iterating.pose_answer`).  ``distinct`` [rad]: two branches are one
    when no joint differs by more.
    """
    found_sweep = form(solver, group, pose.frame_id)
    if found_sweep is None:
        return None
    start = time.perf_counter()
    deadline = start + BUDGET_SHARE * options.timeout_s
    first = options.num_solutions == 1  # answered at the first verified branch
    want = math.inf if first else options.num_solutions
    rows: List[np.ndarray] = []
    near: List[np.ndarray] = []
    for found in sweep.along(found_sweep, group, pose.T_world_target, seed, distinct):
        if len(found.q):
            if first:
                result = exact(group, pose, seed, options, found, found_sweep, start,
                               solver.name)
                if result is not None and result.status is IKStatus.SUCCESS:
                    return result
            rows.extend(found.q)
        elif len(found.outside) and len(near) < STARTS:
            near.append(group.clamp(found.outside[int(np.argmin(found.gap))]))
        if len(rows) >= want or time.perf_counter() > deadline:
            break
    if rows and not first:
        return _many(solver, group, pose, seed, options, rows, found_sweep, start)
    starts = rows[:STARTS] + near
    return starts[:STARTS] or None


def after_seed(solver, group, num_solutions: int) -> bool:
    """Whether ``solver``'s sweep on seven-joint ``group`` answers after the seed's attempt.

    False on any other group (no sweep).  For a solver that searches (its sweeps the cheap
    ones, :func:`form`) when one solution is wanted: the seed's compiled attempt answers
    most poses (~80 % of 7R targets) for less than the sweep costs, and the sweep,
    second, answers nearly every pose it misses, for less than restarts
    (docs/closed_form.md: against the sweep first, the median is lower and the tail about
    even).  ``analytic``, and several solutions (the sweep finds several branches at
    once): the sweep first.
    """
    return group.n == sweep.JOINTS and not getattr(solver, "sweep", False) \
        and num_solutions == 1


def form(solver, group, frame_id: int) -> Optional[sweep.Sweep]:
    """Return the sweep :func:`answer` runs for ``solver`` on ``frame_id``, or None.

    Every chain's sweep for a solver with ``sweep = True``; the cheap ones for the others.
    A group held with its mount moved (a torso lift, a rail) has its source's sweep,
    placed (:class:`.chain.Placed`): it detects none of its own.
    """
    found_sweep = sweep.of(group, frame_id)
    if found_sweep is None or not (getattr(solver, "sweep", False) or found_sweep.cheap):
        return None
    return found_sweep


def _many(solver, group, pose, seed: np.ndarray, options, rows: List[np.ndarray],
          found_sweep: sweep.Sweep, start: float) -> Union[IKResult, List[np.ndarray]]:
    """Verify ``rows`` nearest the seed first: the result, or the rows as starts."""
    from ros2_ik.core.closed_form.branches import Branches
    rows.sort(key=lambda q: float(np.abs(q - seed).sum()))
    every = np.array(rows)
    found = Branches(every, len(rows), every[:0], np.zeros(0), every[:0])
    result = exact(group, pose, seed, options, found, found_sweep, start, solver.name)
    if result is not None and result.status is IKStatus.SUCCESS:
        return result
    return rows[:STARTS]
