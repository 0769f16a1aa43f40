"""The centre of mass inside a support polygon, with a margin [m].

The polygon is the convex hull of contact points projected on a plane (normal ``n``,
default the world's z axis: the ground), fixed when the constraint is made: from points
given in the world, or from contact frames (their origins, or points fixed in each, such
as a sole's corners) at a configuration (:meth:`ComInSupportPolygonConstraint.from_frames`).
The CoM is projected on the plane along ``n``.  One row per edge of the hull: the
distance [m] of the projected CoM inside that edge, at least ``margin``.
"""
from __future__ import annotations

from typing import Optional, Sequence, Tuple

import numpy as np
import pinocchio as pin

from ros2_ik.core.kinematics.frames import frame_id, perpendicular

from ..errors import InvalidGoal
from . import checks as check
from ._base import BoundedConstraint
from .com import com_value, com_world


def convex_hull_2d(points: np.ndarray) -> np.ndarray:
    """Vertices (h, 2) of the convex hull of ``points`` (k, 2), counter-clockwise.

    Andrew's monotone chain; collinear points are left out.
    """
    pts = sorted(set(map(tuple, np.asarray(points, dtype=float).tolist())))
    if len(pts) < 3:
        return np.array(pts, dtype=float).reshape(-1, 2)

    def turn(o, a, b) -> float:
        return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])

    lower: list = []
    for p in pts:
        while len(lower) >= 2 and turn(lower[-2], lower[-1], p) <= 1e-12:
            lower.pop()
        lower.append(p)
    upper: list = []
    for p in reversed(pts):
        while len(upper) >= 2 and turn(upper[-2], upper[-1], p) <= 1e-12:
            upper.pop()
        upper.append(p)
    return np.array(lower[:-1] + upper[:-1], dtype=float)


class ComInSupportPolygonConstraint(BoundedConstraint):
    """Projected CoM at least ``margin`` [m] inside every edge of the support polygon.

    ``points_W`` (k, 3): contact points in the world [m]; ``normal``: the plane's normal
    (world); ``margin`` >= 0.  One row per hull edge, ``margin <= d_i`` [m].
    """

    unit = "m"

    def __init__(self, model: pin.Model, points_W, margin: float = 0.0,
                 normal=(0.0, 0.0, 1.0), *, name: Optional[str] = None):
        points = check.matrix(points_W, "points_W", cols=3)
        n = check.unit_vector3(normal, "normal")
        self.margin = check.non_negative(margin, "margin")
        u = perpendicular(n)
        v = np.cross(n, u)
        self._basis = np.vstack((u, v))  # (2, 3): plane coordinates of a world point
        hull = convex_hull_2d(points @ self._basis.T)
        if hull.shape[0] < 3:
            raise InvalidGoal(
                f"points_W: the support polygon is degenerate ({hull.shape[0]} vertices on "
                "the plane); give each contact several points (e.g. a sole's corners)")
        #: Hull vertices (h, 2) in the plane's coordinates [m], counter-clockwise.
        self.vertices = hull
        edges = np.roll(hull, -1, axis=0) - hull
        inward = np.column_stack((-edges[:, 1], edges[:, 0]))
        inward /= np.linalg.norm(inward, axis=1)[:, None]
        #: Row i: ``d_i = A[i] . c_W - b[i]`` (A (h, 3) inward normals in the world).
        self._A = inward @ self._basis
        self._b = np.einsum("ij,ij->i", inward, hull)
        h = hull.shape[0]
        super().__init__(check.term_name(name, "com_in_support_polygon"),
                         [self.margin] * h, [np.inf] * h)

    @classmethod
    def from_frames(cls, model: pin.Model, q: np.ndarray, frames: Sequence[str],
                    local_points: Optional[Sequence] = None, margin: float = 0.0,
                    normal=(0.0, 0.0, 1.0), *, name: Optional[str] = None
                    ) -> "ComInSupportPolygonConstraint":
        """Return the constraint on the polygon of contact ``frames`` at configuration ``q``.

        ``q``: a full configuration (nq,).

        ``local_points``: per frame, points (k_i, 3) fixed in it [m] (a sole's corners);
        None: each frame's origin.
        """
        q = check.array_of_shape(q, (model.nq,), "q")
        if isinstance(frames, str) or not len(frames):
            raise InvalidGoal("frames must be a non-empty list of frame names")
        if local_points is not None and len(local_points) != len(frames):
            raise InvalidGoal(
                f"local_points has {len(local_points)} entries for {len(frames)} frames")
        data = model.createData()
        pin.framesForwardKinematics(model, data, q)
        points = []
        for k, name_k in enumerate(frames):
            X = data.oMf[frame_id(model, name_k)]
            local = [np.zeros(3)] if local_points is None else check.matrix(
                local_points[k], f"local_points[{k}]", cols=3)
            points += [X.act(np.asarray(p, dtype=float)) for p in local]
        return cls(model, np.array(points), margin, normal, name=name)

    def evaluate(self, model: pin.Model, data: pin.Data, q: np.ndarray
                 ) -> Tuple[np.ndarray, np.ndarray]:
        """Distances (h,) [m] of the projected CoM inside each edge, Jacobian ``(h, nv)``."""
        c, J = com_world(model, data)
        return self._A @ c - self._b, self._A @ J

    def value(self, model: pin.Model, data: pin.Data, q: np.ndarray) -> np.ndarray:
        """Return the distances (h,) [m] alone (``centerOfMass``): the verification's figure."""
        return self._A @ com_value(model, data, 0) - self._b
