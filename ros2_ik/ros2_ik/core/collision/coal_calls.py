"""The direct coal calls of the collision core: request settings, depth clamp, shape pairs.

One place for how distances are asked of coal, shared by the checker's pairs (through
``pin.computeDistance``, on requests set by :func:`configure_requests`) and by the named
shape pairs of :class:`.distance_bounds.DistanceConstraint` (``coal.distance`` itself, on
:func:`distance_request`): the same GJK tolerance, no warm start, the same clamp of
failed penetration depths.
"""
from __future__ import annotations

import logging
import warnings
from typing import Iterable, NamedTuple

import coal
import numpy as np
import pinocchio as pin

from .compiled import CompiledScene

_LOG = logging.getLogger(__name__)
# GJK stopping tolerance [m]: coal's 1e-6 default makes finite differences of distances
# noisy and costs nothing measurable to tighten.  EPA keeps its default: at 1e-9 it fails
# to converge on some hull/cylinder penetrations and returns -DBL_MAX.
_GJK_TOLERANCE = 1e-8
# Penetration depths are clamped here: coal signals an EPA failure with -DBL_MAX, which a
# QP would turn into inf/NaN.  Never seen with the default EPA tolerance (1500 random
# Panda configurations in the bench scene), but a solver must not be handed -1.8e308.
_MAX_DEPTH_M = 1.0


def configure_requests(geom_data: pin.GeometryData, pairs: Iterable[int]) -> None:
    """Set a tight GJK tolerance and no warm start on the distance requests of ``pairs``.

    ``pairs``: pair indices.  A cached GJK guess makes witness points (and so the
    constraint Jacobian, up to ~5e-5) depend on what the thread computed before, so the
    same solve could differ between threads; without it they do not.  coal still starts
    each pair's support function from where that pair's previous call ended (its
    narrowphase: "no reason not to warm-start the support function"), so a pair's distance
    can differ in its last digits (~1e-10 m, at most the GJK tolerance) with what this
    thread's data computed before: equal histories give bit-identical results.
    """
    requests = geom_data.distanceRequests
    with warnings.catch_warnings():  # the flag is deprecated but still honoured in coal 3
        warnings.simplefilter("ignore", DeprecationWarning)
        for k in pairs:
            _configure(requests[k])


def _configure(request: coal.DistanceRequest) -> coal.DistanceRequest:
    request.gjk_tolerance = _GJK_TOLERANCE
    request.enable_cached_gjk_guess = False
    request.gjk_initial_guess = coal.GJKInitialGuess.DefaultGuess
    return request


def distance_request() -> coal.DistanceRequest:
    """Return a coal distance request set as :func:`configure_requests` sets the checker's."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return _configure(coal.DistanceRequest())


def clamp_depths(raw_m: np.ndarray, names_of) -> np.ndarray:
    """Return coal's distances (k,) [m] with penetrations clamped to ``_MAX_DEPTH_M``.

    ``names_of(mask)`` names the pairs of the (k,) boolean ``mask``, for the warning.
    """
    if raw_m.size and raw_m.min() < -_MAX_DEPTH_M:
        _LOG.warning("coal returned a penetration deeper than %.1f m (EPA failure?) for "
                     "%s; clamped", _MAX_DEPTH_M, names_of(raw_m < -_MAX_DEPTH_M))
        return np.maximum(raw_m, -_MAX_DEPTH_M)
    return raw_m


class GeometryDistances(NamedTuple):
    """Signed padded distances (k,) [m] of k geometry pairs, witnesses in the world frame."""

    distances_m: np.ndarray
    normals: np.ndarray    # (k, 3) unit, from side a to side b
    p_world_a: np.ndarray  # (k, 3) on the padded surface of side a [m]
    p_world_b: np.ndarray  # (k, 3)


def geometry_distances(compiled: CompiledScene, geom_data: pin.GeometryData,
                       pairs: np.ndarray) -> GeometryDistances:
    """Coal's signed padded distances of geometry index ``pairs`` (k, 2), placed already.

    Precondition: ``geom_data.oMg`` is placed (:meth:`.CollisionChecker.placed_from_data`).
    """
    request, objects, placed = distance_request(), compiled.geom_model.geometryObjects, \
        geom_data.oMg
    raw, normals, p_a, p_b = [], [], [], []
    for i, j in pairs.tolist():
        result = coal.DistanceResult()
        raw.append(coal.distance(
            objects[i].geometry, coal.Transform3s(placed[i].rotation, placed[i].translation),
            objects[j].geometry, coal.Transform3s(placed[j].rotation, placed[j].translation),
            request, result))
        normals.append(result.normal)
        p_a.append(result.getNearestPoint1())
        p_b.append(result.getNearestPoint2())
    names = compiled.geometry_names
    raw_m = clamp_depths(np.array(raw), lambda deep: [
        (names[i], names[j]) for i, j in pairs[deep].tolist()])
    pad_a = compiled.geometry_padding_m[pairs[:, 0]]
    pad_b = compiled.geometry_padding_m[pairs[:, 1]]
    n = np.array(normals)
    return GeometryDistances(raw_m - pad_a - pad_b, n, np.array(p_a) + pad_a[:, None] * n,
                             np.array(p_b) - pad_b[:, None] * n)
