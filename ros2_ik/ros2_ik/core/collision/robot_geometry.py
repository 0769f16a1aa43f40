"""The robot's collision geometry: a ``pin.GeometryModel`` from the URDF's ``<collision>`` tags.

Mesh URIs are resolved by :class:`~.meshes.MeshResolver` (never by pinocchio's own search,
so a miss is reported with every path tried) and written back as absolute paths before
pinocchio parses the URDF.  Meshes become their convex hulls (as Drake does for proximity
queries): GJK/EPA on a hull gives a signed distance with witness points in microseconds,
where a triangle soup costs milliseconds and has no penetration depth.
"""
from __future__ import annotations

import logging
import xml.etree.ElementTree as ET
from collections import Counter
from typing import Optional, Tuple

import coal
import pinocchio as pin

from ..errors import InvalidArgument, RobotModelError
from ..model.robot import parser_errors
from .hull import plate_points
from .meshes import MeshNotFoundError, MeshResolver

_LOG = logging.getLogger(__name__)


def _resolve_collision_meshes(
    urdf_xml: str, resolver: MeshResolver, skip_missing_meshes: bool
) -> Tuple[str, Counter]:
    """Return the URDF text with every collision mesh URI made absolute (or dropped).

    And the number of ``<collision>`` elements it keeps per link name.
    """
    try:
        root = ET.fromstring(urdf_xml)
    except ET.ParseError as exc:
        raise RobotModelError(f"URDF is not valid XML: {exc}") from exc
    for link in root.iter("link"):
        for collision in list(link.findall("collision")):
            mesh = collision.find("geometry/mesh")
            if mesh is None:
                continue
            uri = mesh.get("filename", "")
            try:
                mesh.set("filename", resolver.resolve(uri))
            except MeshNotFoundError as exc:
                if not skip_missing_meshes:
                    raise
                _LOG.warning("skipping a collision geometry of link '%s': %s",
                             link.get("name"), exc)
                link.remove(collision)
    kept = Counter({link.get("name"): len(link.findall("collision"))
                    for link in root.iter("link")})
    return ET.tostring(root, encoding="unicode"), kept


def convex_hull(geometry: coal.CollisionGeometry) -> coal.CollisionGeometry:
    """Return the convex hull of a triangle mesh (``BVHModel``); other shapes unchanged.

    A flat mesh becomes a thin plate (:func:`.hull.plate_points`), and a mesh qhull would
    crash on raises ``RobotModelError``.
    """
    if not isinstance(geometry, coal.BVHModelBase):
        return geometry
    if geometry.num_vertices < 4:
        raise RobotModelError(f"cannot build the convex hull of {geometry.num_vertices} vertices")
    try:
        points = plate_points(geometry.vertices())
    except InvalidArgument as exc:
        raise RobotModelError(str(exc)) from exc
    if points is not None:  # a plate: the hull of its faces' points
        geometry = _bvh(points, ())
    geometry.buildConvexHull(False, "Qt")  # returns whether the mesh was convex already
    if geometry.convex is None:
        raise RobotModelError("qhull failed on a mesh (are its vertices coplanar?)")
    return geometry.convex


def mesh_hull(vertices_m, triangles) -> coal.CollisionGeometry:
    """Convex hull of a vertex (n, 3) / triangle (k, 3) mesh given as arrays."""
    return convex_hull(_bvh(vertices_m, triangles))


def _bvh(vertices_m, triangles) -> coal.BVHModelOBBRSS:
    """Return coal's mesh of vertices (n, 3) [m] and triangles (k, 3) (none: points only)."""
    bvh = coal.BVHModelOBBRSS()
    bvh.beginModel(len(triangles), len(vertices_m))
    bvh.addVertices(vertices_m)
    if len(triangles):
        bvh.addTriangles(triangles)
    bvh.endModel()
    return bvh


def _check_every_collision_read(model: pin.Model, resolved: str, expected: Counter,
                                geom_model: pin.GeometryModel) -> None:
    """Raise RobotModelError when a link has fewer geometries than ``<collision>`` elements.

    urdfdom drops a ``<collision>`` it cannot read (a box with two sizes, a NaN in an
    origin) and every later one of that link, says so only on stderr and keeps the link:
    collision checks would never see that part of the robot.  ``expected``: the elements
    per link name in ``resolved``; the error names the links and the parser's reasons.
    """
    read = Counter(model.frames[g.parentFrame].name for g in geom_model.geometryObjects)
    short = [f"'{name}' ({read[name]} of {count})" for name, count in expected.items()
             if count > read[name]]
    if not short:
        return
    reasons = parser_errors(lambda: pin.buildGeomFromUrdfString(model, resolved, pin.COLLISION))
    raise RobotModelError(
        f"the URDF parser could not read every <collision> of link {', '.join(short)}"
        + (f": {'; '.join(reasons)}" if reasons else "")
        + ". Collision checks would miss those parts: fix the URDF")


def build_robot_geometry(
    model: pin.Model,
    urdf_xml: str,
    resolver: Optional[MeshResolver] = None,
    skip_missing_meshes: bool = False,
    convexify_meshes: bool = True,
) -> pin.GeometryModel:
    """Collision ``GeometryModel`` of ``model`` from the URDF text, without collision pairs.

    Args:
        model: the kinematic model built from the same URDF.
        urdf_xml: URDF text (``robot_description``).
        resolver: mesh URI resolver; default searches the ament index and environment shares.
        skip_missing_meshes: drop a geometry whose mesh is missing (logged warning)
            instead of raising :class:`MeshNotFoundError`.
        convexify_meshes: replace meshes by their convex hulls (see module docstring).

    Pairs are chosen by :func:`.pairs.candidate_self_pairs` (the checker calls it).
    """
    resolver = resolver or MeshResolver()
    resolved, expected = _resolve_collision_meshes(urdf_xml, resolver, skip_missing_meshes)
    try:
        geom_model = pin.buildGeomFromUrdfString(model, resolved, pin.COLLISION)
    except (RuntimeError, ValueError) as exc:
        raise RobotModelError(f"pinocchio could not read the collision geometry: {exc}") from exc
    _check_every_collision_read(model, resolved, expected, geom_model)
    if convexify_meshes:
        for geom in geom_model.geometryObjects:
            geom.geometry = convex_hull(geom.geometry)
    return geom_model
