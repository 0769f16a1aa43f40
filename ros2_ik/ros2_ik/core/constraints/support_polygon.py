"""The centre of mass inside a support polygon, with a margin [m].

The polygon is the convex hull of contact points projected on a plane (normal ``n``,
default the world's z axis: the ground), fixed when the constraint is made: from points
given in the world, or from contact frames (their origins, or points fixed in each, such
as a sole's corners) at a configuration (:meth:`ComInSupportPolygonConstraint.from_frames`).
The CoM is projected on the plane along ``n``.  One row per edge of the hull: the
distance [m] of the projected CoM inside that edge, at least ``margin``.

A margin deeper than the polygon's inradius (the largest distance any point of the plane
has inside every edge) leaves no place for the CoM whatever the joints do:
:meth:`ComInSupportPolygonConstraint.impossible` says so before a solve iterates.
"""
from __future__ import annotations

import itertools
import math
from typing import Optional, Sequence, Tuple

import numpy as np
import pinocchio as pin

from ros2_ik.core.kinematics.frames import Placements, frame_id, perpendicular_floats, \
    placements_at
from ros2_ik.core.kinematics.model import COM_FRAME
from ros2_ik.core.runtime.compiled import jit

from ..errors import InvalidGoal
from . import checks as check
from . import compiled as kernel
from ._base import BoundedConstraint
from .com import com_value, com_world


def inradius(A: np.ndarray, b: np.ndarray) -> float:
    """Largest ``t`` with a point ``x`` where ``A x - b >= t`` on every row [m].

    ``A`` (h, 2) unit inward normals, ``b`` (h,): the half-planes of a bounded convex
    polygon (h >= 3).  The linear program's optimum lies where three rows are equal, so
    every triple of rows is tried (h is a handful of contact points).
    """
    h = A.shape[0]
    i, j, k = np.array([t for t in itertools.combinations(range(h), 3)]).T
    M = np.stack((np.column_stack((A[i], -np.ones(len(i)))),
                  np.column_stack((A[j], -np.ones(len(j)))),
                  np.column_stack((A[k], -np.ones(len(k))))), axis=1)  # (T, 3, 3)
    regular = np.abs(np.linalg.det(M)) > 1e-12
    rhs = np.column_stack((b[i], b[j], b[k]))[regular][:, :, None]
    x = np.linalg.solve(M[regular], rhs)[:, :, 0]
    # each vertex's t is its least distance inside every row: the best is the optimum
    return float(np.max(np.min(x[:, :2] @ A.T - b, axis=1))) if len(x) else 0.0


def convex_hull_2d(points, as_lists: bool = False):
    """Vertices (h, 2) of the convex hull of ``points`` (k, 2), counter-clockwise.

    Andrew's monotone chain; collinear points are left out.  ``points``: an array or
    pairs of floats; ``as_lists``: the vertices as a list of pairs (no array).
    """
    pairs = np.asarray(points, dtype=float).tolist() if isinstance(points, np.ndarray) \
        else points
    pts = sorted(set(map(tuple, pairs)))
    if len(pts) < 3:
        return pts if as_lists else np.array(pts, dtype=float).reshape(-1, 2)
    hull = _chain(pts)[:-1] + _chain(pts[::-1])[:-1]
    return hull if as_lists else np.array(hull, dtype=float)


def _chain(pts: list) -> list:
    """One half of Andrew's monotone chain: the points of ``pts`` that turn left."""
    out: list = []
    for p in pts:
        x, y = p
        while len(out) >= 2:  # (a - o) x (p - o) <= 0: a is not a left turn, dropped
            (ox, oy), (ax, ay) = out[-2], out[-1]
            if (ax - ox) * (y - oy) - (ay - oy) * (x - ox) > 1e-12:
                break
            out.pop()
        out.append(p)
    return out


#: The default normal: the world's z axis (a unit vector: not checked again).
_UP = (0.0, 0.0, 1.0)


class ComInSupportPolygonConstraint(BoundedConstraint):
    """Projected CoM at least ``margin`` [m] inside every edge of the support polygon.

    ``points_W`` (k, 3): contact points in the world [m]; ``normal``: the plane's normal
    (world); ``margin`` >= 0.  One row per hull edge, ``margin <= d_i`` [m].
    """

    unit = "m"

    #: Row i: ``d_i = A[i] . c_W - b[i]`` (A (h, 3) inward normals in the world); the
    #: edges' inward normals (h, 2) in the plane; hull vertices (h, 2) in the plane's
    #: coordinates [m], counter-clockwise.  Arrays made when first read (the compiled
    #: solver reads the lists).
    _A, _b, _inward = (check.lazy_array("_A_list"), check.lazy_array("_b_list"),
                       check.lazy_array("_inward_list"))
    vertices = check.lazy_array("_corners")

    def __init__(self, model: pin.Model, points_W, margin: float = 0.0,
                 normal=_UP, *, name: Optional[str] = None):
        points = check.matrix_lists(points_W, "points_W", cols=3)
        check.has_mass(model, "support_polygon")
        (nx, ny, nz), = (_UP,) if normal is _UP else check.vector_lists(
            (normal,), ("normal",), units=(0,))
        self.margin = check.non_negative(margin, "margin")
        # plane coordinates of a world point: along u and n x u (floats: cheaper)
        ux, uy, uz = perpendicular_floats((nx, ny, nz))
        vx, vy, vz = ny * uz - nz * uy, nz * ux - nx * uz, nx * uy - ny * ux
        corners = convex_hull_2d([(ux * x + uy * y + uz * z, vx * x + vy * y + vz * z)
                                  for x, y, z in points], as_lists=True)
        h = len(corners)
        if h < 3:
            raise InvalidGoal(
                f"points_W: the support polygon is degenerate ({h} vertices on "
                "the plane); give each contact several points (e.g. a sole's corners)")
        self._corners = corners
        inward, A, b = [], [], []  # floats: cheaper than numpy for a few edges
        cx = cy = 0.0
        x0, y0 = corners[0]
        for x1, y1 in corners[1:] + corners[:1]:  # the edge from vertex (x0, y0) to the next
            length = math.hypot(x1 - x0, y1 - y0)
            nx_, ny_ = (y0 - y1) / length, (x1 - x0) / length  # the edge turned left: inward
            inward.append((nx_, ny_))
            A.append([nx_ * ux + ny_ * vx, nx_ * uy + ny_ * vy, nx_ * uz + ny_ * vz])
            b.append(nx_ * x0 + ny_ * y0)
            cx, cy, x0, y0 = cx + x0, cy + y0, x1, y1
        self._A_list, self._b_list, self._inward_list = A, b, inward
        cx, cy = cx / h, cy / h
        #: Least distance [m] of the vertices' mean inside the edges (:meth:`impossible`).
        self._centre_depth = min([n0 * cx + n1 * cy - bi for (n0, n1), bi in zip(inward, b)])
        super().__init__(check.term_name(name, "com_in_support_polygon"),
                         [self.margin] * h, [math.inf] * h)

    @classmethod
    def from_frames(cls, model: pin.Model, q: np.ndarray, frames: Sequence[str],
                    local_points: Optional[Sequence] = None, margin: float = 0.0,
                    normal=_UP, *, name: Optional[str] = None
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
        placements = placements_at(model, q)
        points = []
        for k, name_k in enumerate(frames):
            X = placements[frame_id(model, name_k)]
            local = [np.zeros(3)] if local_points is None else check.matrix(
                local_points[k], f"local_points[{k}]", cols=3)
            points += [X.act(np.asarray(p, dtype=float)) for p in local]
        return cls(model, np.array(points), margin, normal, name=name)

    def impossible(self) -> Optional[str]:
        """Return why no CoM meets the margin (deeper than the polygon's inradius), or None.

        Cheap when the margin is met at the vertices' mean (the usual problem).
        """
        if self._centre_depth >= self.margin:
            return None
        radius = inradius(self._inward, self._b)
        if self.margin <= radius + 1e-9:
            return None
        return (f"{self.name}: margin {self.margin:.3g} m is deeper than the support "
                f"polygon's inradius {radius:.3g} m: no centre of mass meets it")

    def evaluate(self, model: pin.Model, data: pin.Data, q: np.ndarray
                 ) -> Tuple[np.ndarray, np.ndarray]:
        """Distances (h,) [m] of the projected CoM inside each edge, Jacobian ``(h, nv)``."""
        c, J = com_world(model, data)
        return self._A @ c - self._b, self._A @ J

    def value(self, model: pin.Model, data: pin.Data, q: np.ndarray) -> np.ndarray:
        """Return the distances (h,) [m] alone (``centerOfMass``): the verification's figure."""
        return self._A @ com_value(model, data, 0) - self._b

    def measure_rows(self, placements: Placements) -> list:
        """Distance [m] of the projected CoM short of ``margin`` inside each edge (h floats).

        :meth:`value` against the bounds (``margin``, ``inf``), on floats (no array).
        """
        cx, cy, cz = com_value(placements.model, placements.data, 0).tolist()
        m = self.margin
        return [max(m - (x * cx + y * cy + z * cz - bi), 0.0)  # NaN stays NaN
                for (x, y, z), bi in zip(self._A_list, self._b_list)]


# The kernels' form (``registry``), on the centre of mass as a frame (``COM_FRAME``:
# ``oMf`` its position, ``Jf`` its Jacobian, ``kinematics.forward.center_of_mass``):
# parameters ``h``, then ``A`` (h, 3) row by row and ``b`` (h,).  The compiled part of
# this file; the class above is the Python one.
def _encode(c: ComInSupportPolygonConstraint, tolerance) -> tuple:
    b = c._b_list
    return COM_FRAME, COM_FRAME, [float(len(b))] + [x for row in c._A_list for x in row] + b


@jit
def rows(oMf, Jf, fa, fb, prm, g, Jg, row, p3, J3):  # pragma: no cover - compiled
    """``evaluate_physical``: the CoM's distances [m] inside each edge from ``row``; h."""
    h = int(prm[0])
    cx, cy, cz = oMf[fa, 0, 3], oMf[fa, 1, 3], oMf[fa, 2, 3]
    for i in range(h):
        x, y, z = prm[1 + 3 * i], prm[2 + 3 * i], prm[3 + 3 * i]
        g[row + i] = x * cx + y * cy + z * cz - prm[1 + 3 * h + i]
        for c in range(Jg.shape[1]):
            Jg[row + i, c] = x * Jf[fa, 0, c] + y * Jf[fa, 1, c] + z * Jf[fa, 2, c]
    return h


KIND = kernel.Kind(ComInSupportPolygonConstraint, _encode, kernel.physical_rows, rows)
