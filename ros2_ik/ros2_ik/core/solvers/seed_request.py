"""Step 1 of the driver for lm (:meth:`base.Solver.seed_answer`): a request answered from its seed.

Most requests are solved by the attempt from the seed: constraint problems without a pose
target (``bench/constrained_bench.py``), the whole-body ones with their contacts and a pose
target (``bench/wholebody_bench.py``), and most pose targets.  For those, the driver
(:class:`search.Search`: starts, candidates, the result's assembly) cost as much as the
compiled attempt itself (docs/design.md).  :func:`answer`
makes that attempt (with costs, the driver's first: the seed and the costs' preferred
configurations projected, the best polished), unwraps and clamps its end point and
checks it as the driver does (:func:`search.returned_q`, then :func:`verify.check` on the
full model: each constraint's own measure in [m] and [rad], independent of the kernel's
packing); a verified end point is the answer, built as the driver builds one
(:func:`search.solved`).  Anything else goes to the
driver with the attempt already counted (:class:`options.Begun`), so it is made once either way.
"""
from __future__ import annotations

import math
import time
from typing import Optional, Sequence, Union

import numpy as np

from ros2_ik.core import terms
from ros2_ik.core.pose import CompiledPose as ResolvedPose  # not attempts.CompiledPose
from ros2_ik.core.problem import Problem
from ros2_ik.core.result import IKResult, Solution
from ros2_ik.core.solvers.attempts import CompiledConstraints, CompiledPose, \
    compiled_constraints
from ros2_ik.core.solvers.options import Begun, LocalResult, SolveOptions
from ros2_ik.core.solvers.search import cost_starts, in_windows, returned, solved
from ros2_ik.core.solvers.budget import Budget
from ros2_ik.core.verify import ConstraintTolerance, check


def applies(problem: Problem, options: SolveOptions) -> bool:
    """Return True for the requests :func:`answer` takes.

    A pose target or constraints (and costs), one solution asked, no joint jump limit:
    the driver would then try the seed first (with costs, the seed and the costs'
    preferred configurations, :meth:`Solver.first_attempt`) and stop at its first
    verified solution.  Not with costs and a ``feedback`` callback: polishing may last
    past the driver's first feedback (``budget.FEEDBACK_PERIOD_S``).
    """
    return ((problem.pose is not None or bool(problem.constraints))
            and options.num_solutions == 1 and math.isinf(options.max_joint_jump_rad)
            and not (problem.costs and options.feedback is not None))


def answer(solver, problem: Problem, seed: np.ndarray, options: SolveOptions
           ) -> Union[IKResult, Begun, None]:
    """Return the result when the seed's attempt is verified; else the attempt begun, or None.

    ``solver``: lm.  With a pose target, the attempt is the driver's own
    (:meth:`Solver.setup`), whose first start is the seed.  Without one, the driver tries
    the seed first only when an attempt is cheap: the compiled attempt
    (:func:`attempts.compiled_constraints`), else None (the driver runs as usual, the
    library ranked first).  The seed is the driver's first start
    (:meth:`search.Search.next_start`: in the joint windows).
    """
    start = time.perf_counter()
    if problem.pose is None:
        state = compiled_constraints(solver, problem)
        if state is None:
            return None
    else:
        state = solver.setup(problem)
    q0 = in_windows(problem, seed) if problem.folded else seed.copy()
    if problem.costs:  # the driver's first attempt of a problem with costs
        budget = Budget(options.timeout_s, options.cancel, None, start)
        q, iterations, converged, merit = solver.first_attempt(
            state, [q0] + cost_starts(problem, seed, math.inf), budget)
    elif type(state) is CompiledConstraints:  # one compiled call: no budget to poll
        q, iterations, converged, merit = state.project(q0)
    elif type(state) is CompiledPose:  # one compiled call too
        q, iterations, converged, merit = state.run(q0, None)
    else:
        q, iterations, converged, merit = solver.local_solve(
            state, q0, Budget(options.timeout_s, options.cancel, None, start))
    if converged and math.isfinite(sum(q.tolist())):
        seed_values = seed.tolist()
        q_out, values = returned(problem, q, seed, seed_values)
        result = verified(problem.group, problem.pose, problem.constraints, q_out, values,
                          seed_values, iterations, options.constraint_tolerance,
                          options.random_seed, start, solver.name)
        if result is not None:
            return result
    return Begun(start, state, LocalResult(q, iterations, converged, merit))


def verified(group, pose: Optional[ResolvedPose], constraints: Sequence[terms.Constraint],
             q: np.ndarray, values: list, seed_values: list, iterations: int,
             tolerance: ConstraintTolerance, random_seed: int, start: float, name: str
             ) -> Optional[IKResult]:
    """Return the SUCCESS of the seed's attempt ending at returned ``q``, or None.

    ``q``: :func:`search.returned`'s group vector, ``values`` its floats; ``seed_values``
    the seed's.  Only the full model's check accepts (:func:`verify.check`: the kernel's
    measure shares its packing); the result is built as the driver builds one
    (:func:`search.solved`), ``start`` when the solve began (``time.perf_counter()``).
    """
    ok, pos, ori, _, _ = check(group, pose, q, constraints, group.full_data(), tolerance,
                               values)
    if not ok:
        return None
    solution = Solution(q, pos, ori, math.dist(values, seed_values))
    return solved(group, (solution,), 1, iterations, time.perf_counter() - start,
                  random_seed, name)
