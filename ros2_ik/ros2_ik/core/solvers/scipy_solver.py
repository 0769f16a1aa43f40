"""What the solvers that drive scipy.optimize share (bfgs, sqp): the base, bounds, stop.

scipy's minimisers have no callback that ends their loop: the objective raises
:class:`Stop` (converged, or out of time) and the attempt returns the point it carries.
"""
from __future__ import annotations

import numpy as np

from ros2_ik.core.problem import Problem
from ros2_ik.core.result import IKResult
from ros2_ik.core.runtime.blas import single_threaded
from ros2_ik.core.solvers.base import SolveOptions, Solver
from ros2_ik.core.solvers.residuals import Residuals


class Stop(Exception):
    """Raised inside the objective to end scipy's loop (converged or out of time)."""

    def __init__(self, q: np.ndarray, converged: bool):
        super().__init__()
        self.q, self.converged = q, converged


def bounds_of(res: Residuals):
    """Return scipy bounds from the group's search limits (None where unbounded)."""
    return [(None if not np.isfinite(lo) else lo, None if not np.isfinite(hi) else hi)
            for lo, hi in zip(res.lower, res.upper)]


class ScipySolver(Solver):
    """Base of the solvers that drive scipy.optimize (bfgs, sqp)."""

    def solve(self, problem: Problem, seed: np.ndarray, options: SolveOptions) -> IKResult:
        """Restart-drive with BLAS single-threaded (:mod:`blas`: threads slow scipy here)."""
        with single_threaded():
            return super().solve(problem, seed, options)
