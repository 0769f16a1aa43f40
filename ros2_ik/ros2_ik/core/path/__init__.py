"""IK along Cartesian paths: :func:`solve_path` and its parts.

:mod:`.solve_path` (the entry point), :mod:`.ladder` (following solution branches),
:mod:`.bridge` (bridging a waypoint no branch reaches), :mod:`.options` (the knobs),
:mod:`.segments` (checking the joint path between waypoints), :mod:`.timing` (timing a
joint path within velocity and acceleration limits).
"""
from ros2_ik.core.path.solve_path import PathResult, PathStatus, solve_path

__all__ = ["PathResult", "PathStatus", "solve_path"]
