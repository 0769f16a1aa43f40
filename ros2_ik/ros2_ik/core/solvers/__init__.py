"""Solver plugins: the base interface, the registry and the built-in algorithms."""
from ros2_ik.core.solvers.base import Solver
from ros2_ik.core.solvers.options import SolveOptions
from ros2_ik.core.solvers.registry import available, create

__all__ = ["SolveOptions", "Solver", "available", "create"]
