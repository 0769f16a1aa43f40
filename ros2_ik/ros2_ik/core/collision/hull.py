"""The points whose convex hull stands for a mesh: checked, and a flat mesh given thickness.

Meshes (the robot's and the scene's) are used through their convex hulls, which coal builds
with qhull.  qhull crashes the process (a segmentation fault, not an exception) on
vertices that are coplanar, such as a wall or a table top given as one quad, and on
coordinates near the float range.  :func:`plate_points` runs before every hull: a flat
mesh becomes a plate :data:`FLAT_THICKNESS_M` thick (its vertices moved by half of it to
each side of their plane); coordinates beyond :data:`.world.MAX_COORDINATE_M`, or
vertices on a line or at one point, raise ``InvalidArgument``.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from ..errors import InvalidArgument
from ..model.world import MAX_COORDINATE_M

#: Thickness [m] of the plate that stands for a flat mesh (and the least a hull has).
FLAT_THICKNESS_M = 1e-3
#: Least extent [m] of a mesh across its longest axis in the plane: less is a line.
MIN_WIDTH_M = 1e-9


def plate_points(vertices: np.ndarray, what: str = "mesh") -> Optional[np.ndarray]:
    """Return the points (2n, 3) [m] of the plate that stands for flat ``vertices`` (n, 3).

    None when the mesh has volume (its own vertices make the hull); the vertices moved to
    both sides of their plane when it is thinner than :data:`FLAT_THICKNESS_M`.  Raises
    ``InvalidArgument`` naming ``what`` on coordinates beyond :data:`.world.MAX_COORDINATE_M` or
    on vertices on a line or at one point.
    """
    vertices = np.asarray(vertices, dtype=float).reshape(-1, 3)
    largest = float(np.abs(vertices).max(initial=0.0))
    if not largest <= MAX_COORDINATE_M:  # NaN too
        raise InvalidArgument(f"{what}: a vertex coordinate is {largest:.3g} m; they must "
                              f"lie within {MAX_COORDINATE_M:g} m of the mesh frame")
    centred = vertices - vertices.mean(axis=0)
    axes = np.linalg.eigh(centred.T @ centred)[1][:, ::-1]  # columns: longest axis first
    extent = np.ptp(centred @ axes, axis=0) if len(vertices) else np.zeros(3)
    if extent[1] < MIN_WIDTH_M:
        raise InvalidArgument(f"{what}: its vertices lie on a line or at one point (widths "
                              f"{extent[0]:.3g} m and {extent[1]:.3g} m); a hull needs an area")
    if extent[2] >= FLAT_THICKNESS_M:
        return None
    normal = axes[:, 2] * (0.5 * FLAT_THICKNESS_M)
    return np.vstack([vertices - normal, vertices + normal])
