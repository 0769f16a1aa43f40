"""Solver plugins: the base interface, the registry and the built-in algorithms."""
from ros2_ik.core.solvers.base import SolveOptions, Solver
from ros2_ik.core.solvers.registry import available, create

__all__ = ["SolveOptions", "Solver", "available", "create"]
