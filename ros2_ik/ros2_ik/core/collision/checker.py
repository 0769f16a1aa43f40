"""Signed distances between the robot, itself and the scene, through pinocchio + coal.

No broadphase structure: every candidate pair first gets a cheap numpy lower bound
(:mod:`.bounds`); the pairs that may be closer than the caller's threshold then go through
``pin.computeDistance`` one by one (GJK/EPA on convex shapes, signed: negative =
penetration depth; request settings and depth clamp in :mod:`.coal_calls`).  Padding
inflates each robot geometry by a ball of ``padding_m`` (exactly ``d - pad_a - pad_b`` on
convex shapes).

Thread model: the checker is shared; each thread lazily gets its own ``pin.Data`` and
``pin.GeometryData`` (``threading.local``), rebuilt when the scene version changes.  The
compiled geometry of a scene version is built once under a lock and shared read-only.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Mapping, Optional, Sequence, Tuple

import numpy as np
import pinocchio as pin

from ..errors import InvalidArgument, InvalidFrame
from .bounds import ensure_local_aabb, lower_bounds, reach_squared, squared_gaps
from .coal_calls import clamp_depths, configure_requests
from .compiled import CompiledScene, compile_scene, robot_part
from .meshes import MeshResolver
from .pairs import candidate_self_pairs
from .robot_geometry import build_robot_geometry
from .scene import PlanningScene

_FIRST_PAIRS = 8  # min_distance: pairs computed before the lower bounds prune the rest


def _check_padding(model, geom_model, padding_m: float, link_padding_m: Mapping) -> None:
    for name, value in [("padding_m", padding_m)] + [
            (f"link_padding_m['{link}']", v) for link, v in link_padding_m.items()]:
        if not np.isfinite(value) or value < 0.0:
            raise InvalidArgument(f"{name} must be >= 0 [m], got {value}")
    links = {model.frames[g.parentFrame].name for g in geom_model.geometryObjects}
    for link in link_padding_m:
        if link not in links:
            raise InvalidFrame(link, links)


@dataclass(frozen=True)
class DistanceReport:
    """The closest pair at one configuration.

    ``distance_m`` is signed and padded (< 0: in collision; ``inf`` if there is no pair);
    ``pair`` names the two links or scene objects; ``p_world_a`` / ``p_world_b`` (3,) are
    the witness points on the padded surfaces, in the world frame, in [m].
    """

    distance_m: float
    pair: Tuple[str, str]
    p_world_a: np.ndarray
    p_world_b: np.ndarray

    @property
    def in_collision(self) -> bool:
        """True when the signed padded distance is negative."""
        return self.distance_m < 0.0


@dataclass
class PairDistances:
    """Per-thread result of one distance pass; valid until the next pass on this thread."""

    compiled: CompiledScene
    geom_data: pin.GeometryData
    distances_m: np.ndarray  # (P,) signed, padded; inf for pairs skipped by the bounds

    def witness(self, k: int) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Return the unit normal a->b and padded witness points of pair ``k`` (world frame)."""
        normals, p_a, p_b = self.witnesses(np.array([k]))
        return normals[0], p_a[0], p_b[0]

    def witnesses(self, ks: np.ndarray) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Return normals a->b (k, 3) and padded witness points (k, 3) of computed pairs ``ks``."""
        results = self.geom_data.distanceResults
        raw = np.array([(r.normal, r.getNearestPoint1(), r.getNearestPoint2())
                        for r in (results[int(k)] for k in ks)]).reshape(len(ks), 3, 3)
        normals = raw[:, 0]
        pad_a = self.compiled.pad_a_m[ks][:, None]
        pad_b = self.compiled.padding_m[ks][:, None] - pad_a
        return normals, raw[:, 1] + pad_a * normals, raw[:, 2] - pad_b * normals

    def report(self, k: int) -> DistanceReport:
        """Return computed pair ``k`` as a :class:`DistanceReport` (padded witnesses)."""
        _, p_a, p_b = self.witness(k)
        return DistanceReport(float(self.distances_m[k]), self.compiled.pair_names[k], p_a, p_b)


class CollisionChecker:
    """Self- and scene-collision distances of one robot model.

    Args:
        model: the robot's kinematic model (the solver's model).
        geom_model: its collision geometry (:func:`.robot_geometry.build_robot_geometry`);
            its own collision pairs are ignored.
        scene: world and attached objects; ``None`` checks self-collision only.
        srdf_xml: SRDF text whose ``disable_collisions`` entries are honoured.
        self_pairs: explicit robot geometry index pairs, overriding the SRDF logic.
        padding_m: inflation of every robot geometry, in [m].
        link_padding_m: per-link override of ``padding_m``, in [m].
    """

    def __init__(
        self,
        model: pin.Model,
        geom_model: pin.GeometryModel,
        scene: Optional[PlanningScene] = None,
        *,
        srdf_xml: Optional[str] = None,
        self_pairs: Optional[Sequence[Tuple[int, int]]] = None,
        padding_m: float = 0.0,
        link_padding_m: Optional[Mapping[str, float]] = None,
    ):
        _check_padding(model, geom_model, padding_m, link_padding_m or {})
        self.model = model
        self.robot_geom = geom_model
        for geom in geom_model.geometryObjects:  # before any thread shares them
            ensure_local_aabb(geom.geometry)
        self.scene = scene
        self.padding_m = float(padding_m)
        self.link_padding_m = dict(link_padding_m or {})
        if self_pairs is None:
            self_pairs = candidate_self_pairs(model, geom_model, srdf_xml)
        self.self_pairs = tuple((int(i), int(j)) for i, j in self_pairs)
        self._robot_part = robot_part(model, geom_model, self.self_pairs, self.padding_m,
                                      self.link_padding_m)
        self._compile_lock = threading.Lock()
        self._compiled: Optional[CompiledScene] = None
        self._local = threading.local()
        self._reach: dict = {}  # (id(compiled), threshold) -> (compiled, reach_squared)

    @classmethod
    def from_urdf(
        cls,
        model: pin.Model,
        urdf_xml: str,
        srdf_xml: Optional[str] = None,
        scene: Optional[PlanningScene] = None,
        resolver: Optional[MeshResolver] = None,
        skip_missing_meshes: bool = False,
        **kwargs,
    ) -> "CollisionChecker":
        """Build the geometry from the URDF text, then the checker (kwargs: padding)."""
        geom = build_robot_geometry(model, urdf_xml, resolver, skip_missing_meshes)
        return cls(model, geom, scene, srdf_xml=srdf_xml, **kwargs)

    def compiled(self) -> CompiledScene:
        """Return the compiled geometry of the current scene version (shared, read-only)."""
        version = self.scene.version if self.scene is not None else 0
        compiled = self._compiled
        if compiled is not None and compiled.version == version:
            return compiled
        with self._compile_lock:
            snapshot = self.scene.snapshot() if self.scene is not None else None
            version = snapshot.version if snapshot is not None else 0
            if self._compiled is None or self._compiled.version != version:
                self._compiled = compile_scene(self.model, self._robot_part, snapshot,
                                               self._compiled)
            return self._compiled

    def _thread_state(self) -> Tuple[CompiledScene, pin.GeometryData]:
        """Return this thread's compiled scene and ``GeometryData``, for the current version.

        The data is built again only when the version's structure changed (objects
        added, removed or reshaped); when objects only moved it is kept, with the
        version it was built on (``local.built_on``: its distance functors point into
        that version's GeometryObjects, which must stay alive;
        :attr:`.compiled.CompiledScene.structure`).
        """
        compiled = self.compiled()
        local = self._local
        if getattr(local, "compiled", None) is not compiled:
            built_on = getattr(local, "built_on", None)
            if built_on is None or built_on.structure is not compiled.structure:
                local.geom_data = pin.GeometryData(compiled.geom_model)
                local.configured = bytearray(compiled.num_pairs)
                local.built_on = compiled
            local.compiled = compiled
        return compiled, local.geom_data

    def _ready(self, pairs: list) -> list:
        """Return ``pairs`` (pair indices), their distance requests configured in this thread.

        Each request is set (:func:`.coal_calls.configure_requests`) before its first use,
        not all when a scene version arrives: most pairs of a version are never computed,
        and setting one from Python costs ~5 us (TIAGo's ~1,900 pairs: ~10 ms per version
        and thread, the servo's included).  Precondition: :meth:`_thread_state` in this
        thread, for the data the pairs are computed on.
        """
        local = self._local
        configured = local.configured
        missing = [k for k in pairs if not configured[k]]
        if missing:
            configure_requests(local.geom_data, missing)
            for k in missing:
                configured[k] = 1
        return pairs

    def _own_data(self) -> pin.Data:
        data = getattr(self._local, "data", None)
        if data is None:
            data = self._local.data = self.model.createData()
        return data

    def distances_from_data(self, data: pin.Data, threshold_m: float = np.inf) -> PairDistances:
        """Signed padded distances of the pairs that may be closer than ``threshold_m``.

        Pairs whose cheap lower bound (:mod:`.bounds`) is at least ``threshold_m`` are not
        computed and read ``inf``.  Precondition: ``data.oMi`` is valid (forward kinematics).
        """
        compiled, geom_data = self._thread_state()
        distances = np.full(compiled.num_pairs, np.inf)
        if compiled.num_pairs == 0:
            return PairDistances(compiled, geom_data, distances)
        if np.isfinite(threshold_m):
            wanted = self._wanted(compiled, data, threshold_m)
        else:
            wanted = np.arange(compiled.num_pairs)
        pin.updateGeometryPlacements(self.model, data, compiled.geom_model, geom_data)
        self._compute(compiled, geom_data, wanted, distances)
        return PairDistances(compiled, geom_data, distances)

    def placed_distances(self, placements: Mapping[int, pin.SE3], pairs: np.ndarray
                         ) -> np.ndarray:
        """Signed padded distances (k,) [m] of ``pairs`` (k,), their geometries at ``placements``.

        ``placements``: ``T_world_geometry`` of every geometry of ``pairs``, by geometry
        index of the compiled scene; placements no configuration need give
        (:meth:`MinimumDistanceConstraint.apart_at_target` puts the hand at its target).
        """
        compiled, geom_data = self._thread_state()
        pairs = np.asarray(pairs, dtype=np.int64)
        oMg = geom_data.oMg
        for g, placement in placements.items():
            oMg[g] = placement
        distances = np.full(compiled.num_pairs, np.inf)
        self._compute(compiled, geom_data, pairs, distances)
        return distances[pairs]

    def clear_from_data(self, data: pin.Data, threshold_m: float) -> bool:
        """Return whether no pair is closer (signed, padded) than ``threshold_m`` (finite).

        :meth:`distances_from_data` reduced to a yes/no: the same pairs are computed, up to
        the first one closer than ``threshold_m``.  Precondition: ``data.oMi`` is valid.
        """
        compiled, geom_data = self._thread_state()
        wanted = self._wanted(compiled, data, threshold_m).tolist() if compiled.num_pairs else []
        if not wanted:
            return True
        pin.updateGeometryPlacements(self.model, data, compiled.geom_model, geom_data)
        distance, model, padding = pin.computeDistance, compiled.geom_model, compiled.padding_m
        return all(distance(model, geom_data, k).min_distance - padding[k] >= threshold_m
                   for k in self._ready(wanted))  # NaN: not clear

    def _wanted(self, compiled: CompiledScene, data: pin.Data, threshold_m: float) -> np.ndarray:
        """Pairs (k,) whose lower bound (:meth:`padded_lower_bounds`) is below ``threshold_m``."""
        key = (id(compiled), threshold_m)
        entry = self._reach.get(key)
        if entry is None or entry[0] is not compiled:
            if len(self._reach) > 32:  # old scene versions
                self._reach.clear()
            entry = self._reach[key] = (compiled, reach_squared(
                compiled.bounds, compiled.padding_m, threshold_m))
        return np.flatnonzero(squared_gaps(compiled.bounds, data) <= entry[1])

    @staticmethod
    def padded_lower_bounds(compiled: CompiledScene, data: pin.Data) -> np.ndarray:
        """Lower bounds (P,) [m] on the signed padded distances (see :mod:`.bounds`).

        The ball/box bounds only certify *separation*: a penetration can be deeper than any
        of them, so a bound that is not positive becomes ``-inf`` (always computed).
        """
        bounds = lower_bounds(compiled.bounds, data, compiled.num_pairs)
        bounds[bounds <= 0.0] = -np.inf
        return bounds - compiled.padding_m

    def _compute(self, compiled, geom_data, pairs: np.ndarray, out: np.ndarray) -> None:
        """Run coal on ``pairs`` only and write their signed padded distances into ``out``.

        ``compiled`` and ``geom_data``: this thread's (:meth:`_thread_state`).
        """
        if pairs.size == 0:
            return
        # One computeDistance per pair (it fills distanceResults[k], read by witnesses):
        # cheaper than flagging the active pairs of a (G, G) matrix for computeDistances.
        distance, model = pin.computeDistance, compiled.geom_model
        raw = np.array([distance(model, geom_data, k).min_distance
                        for k in self._ready(pairs.tolist())])
        names = compiled.pair_names
        out[pairs] = clamp_depths(raw, lambda deep: [names[k] for k in pairs[deep]]) \
            - compiled.padding_m[pairs]

    def compute_pairs(self, pairs: PairDistances, ks: np.ndarray) -> None:
        """Compute pairs ``ks`` (k,) of ``pairs`` exactly as well, into its ``distances_m``.

        Precondition: ``pairs`` is this thread's latest distance pass (its geometries are
        still placed where that pass placed them).
        """
        self._compute(pairs.compiled, pairs.geom_data, np.asarray(ks, dtype=np.int64),
                      pairs.distances_m)

    def distances(self, q: np.ndarray, threshold_m: float = np.inf) -> PairDistances:
        """Signed padded distances at ``q`` (nq,); see :meth:`distances_from_data`."""
        q = self._check_q(q)
        data = self._own_data()
        pin.forwardKinematics(self.model, data, q)
        return self.distances_from_data(data, threshold_m)

    def min_distance(self, q: np.ndarray) -> DistanceReport:
        """Return the closest pair at ``q``: signed padded distance [m], names, witnesses."""
        q = self._check_q(q)
        data = self._own_data()
        pin.forwardKinematics(self.model, data, q)
        pairs, k = self.nearest_from_data(data)
        if k < 0:
            nan = np.full(3, np.nan)
            return DistanceReport(float("inf"), ("", ""), nan, nan)
        return pairs.report(k)

    def nearest_from_data(self, data: pin.Data) -> Tuple[PairDistances, int]:
        """Distances with the nearest pair computed exactly, and its index (-1: no pair).

        The pairs with the smallest lower bounds are computed first, then every pair whose
        lower bound is below the best distance found; the others read ``inf``.
        Precondition: ``data.oMi`` is valid (forward kinematics).
        """
        compiled, geom_data = self.placed_from_data(data)
        distances = np.full(compiled.num_pairs, np.inf)
        pairs = PairDistances(compiled, geom_data, distances)
        if compiled.num_pairs == 0:
            return pairs, -1
        bounds = self.padded_lower_bounds(compiled, data)
        order = np.argsort(bounds)
        self._compute(compiled, geom_data, order[:_FIRST_PAIRS], distances)
        rest = order[_FIRST_PAIRS:]
        self._compute(compiled, geom_data, rest[bounds[rest] < distances.min()], distances)
        return pairs, int(np.argmin(distances))

    def placed_from_data(self, data: pin.Data) -> Tuple[CompiledScene, pin.GeometryData]:
        """Return this thread's compiled scene and geometry data, placed at ``data.oMi``."""
        compiled, geom_data = self._thread_state()
        pin.updateGeometryPlacements(self.model, data, compiled.geom_model, geom_data)
        return compiled, geom_data

    def in_collision(self, q: np.ndarray, margin_m: float = 0.0) -> bool:
        """Return whether some pair is closer than ``margin_m`` (0: touching or penetrating)."""
        pairs = self.distances(q, threshold_m=margin_m)
        return bool(pairs.compiled.num_pairs and pairs.distances_m.min() < margin_m)

    def _check_q(self, q) -> np.ndarray:
        q = np.asarray(q, dtype=float)
        if q.shape != (self.model.nq,) or not np.all(np.isfinite(q)):
            raise InvalidArgument(f"q must be finite with shape ({self.model.nq},), "
                                  f"got shape {q.shape}")
        return q
