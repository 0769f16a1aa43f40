"""The ``analytic`` solver: closed-form pose IK (:mod:`ros2_ik.core.closed_form`).

For a pose target on every axis, without constraints or costs, on a chain that has a
closed form: every exact branch within the joint limits, verified on the full model,
nearest the seed first; or NO_SOLUTION with the proof's reason
(:mod:`~ros2_ik.core.solvers.before_iterating`).  Anything else is refused with the
reason.  When neither is proven (a branch just outside a limit, a pose reachable within
the tolerances only), the search of :class:`~ros2_ik.core.solvers.lm.LevenbergMarquardt`
runs from the branches, as ``lm`` would.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from ros2_ik.core import errors
from ros2_ik.core.closed_form import chain, sweep
from ros2_ik.core.problem import Problem
from ros2_ik.core.result import IKResult
from ros2_ik.core.solvers.options import Begun, SolveOptions
from ros2_ik.core.solvers.lm import LevenbergMarquardt


class Analytic(LevenbergMarquardt):
    """Closed-form pose IK; lm's search only where the closed form proves nothing."""

    name = "analytic"
    closed_form = True
    #: 7R chains: a swept joint over 6R closed forms (:mod:`.swept`); ``lm`` does not
    #: sweep (on Panda and FR3 its median is ~1.2x lm's own: docs/closed_form.md).
    sweep = True

    def solve(self, problem: Problem, seed: np.ndarray, options: SolveOptions,
              begun: Optional[Begun] = None) -> IKResult:
        """Answer from the closed form (module docstring); InvalidArgument when it has none."""
        pose = problem.pose
        if not problem.pose_only or not pose.full_pose:
            raise errors.InvalidArgument(
                "solver 'analytic' answers pose targets on every axis without constraints "
                "or costs; use 'lm' (which starts from the closed form's branches)")
        group = problem.group
        if chain.of(group, pose.frame_id) is None and sweep.of(group, pose.frame_id) is None:
            raise errors.InvalidArgument(
                f"solver 'analytic': the chain of {group} to '{pose.target.frame}' has no "
                f"closed form ({chain.reason(group, pose.frame_id)}; "
                f"{sweep.reason(group, pose.frame_id)}); use 'lm'")
        return super().solve(problem, seed, options, begun)
