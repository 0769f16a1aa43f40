"""What the solvers that drive scipy.optimize share (bfgs, sqp): the base, bounds, stop.

scipy's minimisers have no callback that ends their loop: the objective raises
:class:`Stop` (converged, or out of time) and the attempt returns the point it carries.
scipy's variables are the group vector itself, or for a whole-body group (a floating or
planar base) the tangent offset ``x`` from the start (:class:`Chart`).
"""
from __future__ import annotations

from typing import Any, Callable, Dict, Tuple

import numpy as np

from ros2_ik.core.problem import Problem
from ros2_ik.core.result import IKResult
from ros2_ik.core.runtime.blas import single_threaded
from ros2_ik.core.solvers.base import Solver
from ros2_ik.core.solvers.options import SolveOptions
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


class Chart:
    """A whole-body group's chart around ``q0``: ``q = group.integrate(q0, x)``, ``x`` (nv,).

    ``bounds``: scipy's bounds of ``x`` (the joints' search limits; the base none);
    :meth:`pull` turns a gradient or Jacobian in the tangent at ``q`` into one in ``x``.
    """

    def __init__(self, group, q0: np.ndarray, lower: np.ndarray, upper: np.ndarray):
        """Chart of ``group`` around group vector ``q0`` within the bounds (nq,)."""
        self.group, self.q0 = group, np.array(q0, dtype=float)
        self.x0 = np.zeros(group.nv)
        lo, hi = group.tangent_bounds(lower - self.q0, upper - self.q0)
        self.bounds = [(None if not np.isfinite(a) else a, None if not np.isfinite(b) else b)
                       for a, b in zip(lo, hi)]
        self._key, self._jacobian = None, None

    def q(self, x: np.ndarray) -> np.ndarray:
        """Return the group vector at ``x``."""
        return self.group.integrate(self.q0, np.asarray(x, dtype=float))

    def pull(self, x: np.ndarray, G: np.ndarray) -> np.ndarray:
        """Return ``G`` (..., nv) in the tangent at ``q(x)`` as a derivative in ``x``."""
        key = np.asarray(x, dtype=float).tobytes()
        if key != self._key:
            self._jacobian = self.group.integrate_jacobian(self.q0, np.asarray(x, dtype=float))
            self._key = key
        return np.asarray(G) @ self._jacobian

    def value(self, fun: Callable[[np.ndarray], Any]) -> Callable[[np.ndarray], Any]:
        """Return ``fun`` of group vectors as a function of ``x``."""
        return lambda x: fun(self.q(x))

    def derivative(self, fun: Callable[[np.ndarray], np.ndarray]
                   ) -> Callable[[np.ndarray], np.ndarray]:
        """Return ``fun`` (a tangent gradient or Jacobian at ``q``) as a derivative in ``x``."""
        return lambda x: self.pull(x, fun(self.q(x)))

    def value_and_gradient(self, fun: Callable[[np.ndarray], Tuple[float, np.ndarray]]
                           ) -> Callable[[np.ndarray], Tuple[float, np.ndarray]]:
        """Return ``fun(q) -> (f, gradient)`` as a function of ``x``."""
        def at(x: np.ndarray) -> Tuple[float, np.ndarray]:
            f, g = fun(self.q(x))
            return f, self.pull(x, g)
        return at

    def rows(self, fun: Callable[[np.ndarray], Dict[str, Any]]
             ) -> Callable[[np.ndarray], Dict[str, Any]]:
        """Return ``fun(q) -> dict`` as a function of ``x``, its ``*_J`` lists pulled."""
        def at(x: np.ndarray) -> Dict[str, Any]:
            v = fun(self.q(x))
            return {k: [self.pull(x, J) for J in v[k]] if k.endswith("_J") else v[k]
                    for k in v}
        return at


class ScipySolver(Solver):
    """Base of the solvers that drive scipy.optimize (bfgs, sqp)."""

    #: Whole-body groups: minimised in the tangent chart of each start (:class:`Chart`).
    supports_base = True

    def solve(self, problem: Problem, seed: np.ndarray, options: SolveOptions) -> IKResult:
        """Restart-drive with BLAS single-threaded (:mod:`blas`: threads slow scipy here)."""
        with single_threaded():
            return super().solve(problem, seed, options)
