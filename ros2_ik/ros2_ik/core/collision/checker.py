"""Signed distances between the robot, itself and the scene, through pinocchio + coal.

No broadphase: every candidate pair goes through ``pin.computeDistances`` (one C++ loop,
GJK/EPA on convex shapes, signed: negative = penetration depth).  Padding inflates each
robot geometry by a ball of ``padding_m`` (exactly ``d - pad_a - pad_b`` on convex shapes).

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

from ..errors import InvalidArgument
from .compiled import CompiledScene, compile_scene
from .meshes import MeshResolver
from .pairs import candidate_self_pairs
from .robot_geometry import build_robot_geometry
from .scene import PlanningScene


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
    distances_m: np.ndarray  # (P,) signed, padded

    def witness(self, k: int) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Unit normal a->b and padded witness points on a and b of pair ``k``, world frame."""
        result = self.geom_data.distanceResults[k]
        normal = np.array(result.normal)
        pad_a = self.compiled.pad_a_m[k]
        pad_b = self.compiled.padding_m[k] - pad_a
        p_a = np.array(result.getNearestPoint1()) + pad_a * normal
        p_b = np.array(result.getNearestPoint2()) - pad_b * normal
        return normal, p_a, p_b


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
        if not np.isfinite(padding_m) or padding_m < 0.0:
            raise InvalidArgument(f"padding_m must be >= 0 [m], got {padding_m}")
        self.model = model
        self.robot_geom = geom_model
        self.scene = scene
        self.padding_m = float(padding_m)
        self.link_padding_m = dict(link_padding_m or {})
        if self_pairs is None:
            self_pairs = candidate_self_pairs(model, geom_model, srdf_xml)
        self.self_pairs = tuple((int(i), int(j)) for i, j in self_pairs)
        self._compile_lock = threading.Lock()
        self._compiled: Optional[CompiledScene] = None
        self._local = threading.local()

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
        """The compiled geometry of the current scene version (shared, read-only)."""
        version = self.scene.version if self.scene is not None else 0
        compiled = self._compiled
        if compiled is not None and compiled.version == version:
            return compiled
        with self._compile_lock:
            snapshot = self.scene.snapshot() if self.scene is not None else None
            version = snapshot.version if snapshot is not None else 0
            if self._compiled is None or self._compiled.version != version:
                self._compiled = compile_scene(self.model, self.robot_geom, self.self_pairs,
                                               snapshot, self.padding_m, self.link_padding_m)
            return self._compiled

    def _thread_state(self) -> Tuple[CompiledScene, pin.GeometryData]:
        compiled = self.compiled()
        local = self._local
        if getattr(local, "compiled", None) is not compiled:
            local.geom_data = pin.GeometryData(compiled.geom_model)
            local.compiled = compiled
        return compiled, local.geom_data

    def _own_data(self) -> pin.Data:
        data = getattr(self._local, "data", None)
        if data is None:
            data = self._local.data = self.model.createData()
        return data

    def distances_from_data(self, data: pin.Data) -> PairDistances:
        """Signed padded distances of every pair, using the joint placements in ``data``.

        Precondition: forward kinematics has been run on ``data`` (``data.oMi`` valid).
        """
        compiled, geom_data = self._thread_state()
        pin.updateGeometryPlacements(self.model, data, compiled.geom_model, geom_data)
        pin.computeDistances(compiled.geom_model, geom_data)
        raw = np.fromiter((r.min_distance for r in geom_data.distanceResults), float,
                          compiled.num_pairs)
        return PairDistances(compiled, geom_data, raw - compiled.padding_m)

    def distances(self, q: np.ndarray) -> PairDistances:
        """Signed padded distances of every pair at configuration ``q`` (nq,)."""
        q = self._check_q(q)
        data = self._own_data()
        pin.forwardKinematics(self.model, data, q)
        return self.distances_from_data(data)

    def min_distance(self, q: np.ndarray) -> DistanceReport:
        """The closest pair at ``q``: signed padded distance [m], names, witness points."""
        pairs = self.distances(q)
        if pairs.compiled.num_pairs == 0:
            nan = np.full(3, np.nan)
            return DistanceReport(float("inf"), ("", ""), nan, nan)
        k = int(np.argmin(pairs.distances_m))
        _, p_a, p_b = pairs.witness(k)
        return DistanceReport(float(pairs.distances_m[k]), pairs.compiled.pair_names[k],
                              p_a, p_b)

    def in_collision(self, q: np.ndarray, margin_m: float = 0.0) -> bool:
        """True when some pair is closer than ``margin_m`` (0: touching or penetrating)."""
        pairs = self.distances(q)
        return bool(pairs.compiled.num_pairs and pairs.distances_m.min() < margin_m)

    def _check_q(self, q) -> np.ndarray:
        q = np.asarray(q, dtype=float)
        if q.shape != (self.model.nq,) or not np.all(np.isfinite(q)):
            raise InvalidArgument(f"q must be finite with shape ({self.model.nq},), "
                                  f"got shape {q.shape}")
        return q
