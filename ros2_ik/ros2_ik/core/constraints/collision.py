"""Minimum-distance constraint: Drake's ``AddMinimumDistanceLowerBoundConstraint`` for our solvers.

Every candidate pair (self and scene) must keep a signed, padded distance
``d_i(q) >= min_distance_m``.  Only pairs closer than ``influence_distance_m`` count; the
others are invisible to the solver at this iterate.  Two formulations:

``"pairs"`` (default) -- ``max_pairs`` rows, row ``r`` = the ``r``-th smallest distance among
    the pairs within influence (``influence_distance_m`` with a zero gradient when fewer pairs
    are within influence), bounds ``[min_distance_m, inf]``.  Each row is continuous in ``q``
    (order statistics of continuous functions) and its linearisation is exact per pair, which
    suits SQP / QP-based local solvers (one half-space per nearby pair).

``"smooth"`` -- Drake's single row ``sum_i phi(x_i) / phi(-1)`` with
    ``x_i = (d_i - d_influence) / (d_influence - d_min)`` and the exponentially smoothed hinge
    ``phi(x) = -x exp(1/x)`` (0 for ``x >= 0``), bounds ``[-inf, 1]``: C1 everywhere, one row,
    but conservative when several pairs are close together.

Gradient of a pair distance (``n`` the unit normal from witness ``p_a`` to ``p_b``, all in the
world frame, ``J_x`` the WORLD-frame joint Jacobian, (6, nv), of the body of side ``x``)::

    dd/dq = [n; p_b x n]^T J_b - [n; p_a x n]^T J_a
"""
from __future__ import annotations

from typing import NamedTuple, Optional, Tuple

import numpy as np
import pinocchio as pin

from ros2_ik.core.collision.checker import CollisionChecker, PairDistances
from ros2_ik.core.constraints._base import BoundedConstraint
from ros2_ik.core.errors import InvalidArgument
from ros2_ik.core.kinematics.frames import Placements
from ros2_ik.core.runtime.per_object import PerObject
from ros2_ik.core.runtime.thread_data import PerThreadData

FORMULATIONS = ("pairs", "smooth")


_LEVI_CIVITA = np.zeros((3, 3, 3))
_LEVI_CIVITA[0, 1, 2] = _LEVI_CIVITA[1, 2, 0] = _LEVI_CIVITA[2, 0, 1] = 1.0
_LEVI_CIVITA[0, 2, 1] = _LEVI_CIVITA[2, 1, 0] = _LEVI_CIVITA[1, 0, 2] = -1.0


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise cross product of (k, 3) arrays (np.cross is slower on small inputs)."""
    return np.einsum("ijk,nj,nk->ni", _LEVI_CIVITA, a, b)


_SUPPORT_MASKS: PerObject = PerObject()
#: Per group, :meth:`MinimumDistanceConstraint.apart_wherever`'s answers by bound, on the
#: scene last seen (:func:`_scene_entries`).
_APART: PerObject = PerObject()
#: Per group, the :class:`_Carried` tables of each frame placed, on the scene last seen.
_CARRIED: PerObject = PerObject()


def _scene_entries(cache: PerObject, group, compiled) -> dict:
    """Return ``group``'s entries in ``cache`` for the compiled scene ``compiled``.

    Those of an older scene are dropped: a node whose scene changes every second would
    otherwise keep every old scene's geometry alive.
    """
    found = cache.get(group)
    if found is None or found[0] is not compiled:
        found = cache[group] = (compiled, {})
    return found[1]


#: The Data :meth:`MinimumDistanceConstraint.apart_wherever` places the pairs with.
_DATA = PerThreadData()


def support_masks(model: pin.Model) -> np.ndarray:
    """Mask (njoints, nv): row ``j`` marks the velocity columns of the joints moving joint ``j``.

    ``pin.getJointJacobian(model, data, j, WORLD)`` is ``data.J * mask[j]`` (row 0, the
    universe, is all False: scene objects do not move).  Cached per model (read-only).
    """
    masks = _SUPPORT_MASKS.get(model)
    if masks is None:
        masks = np.zeros((model.njoints, model.nv), dtype=bool)
        for j in range(1, model.njoints):
            for i in model.supports[j]:
                if i:
                    masks[j, model.idx_vs[i]:model.idx_vs[i] + model.nvs[i]] = True
        masks.setflags(write=False)
        _SUPPORT_MASKS[model] = masks
    return masks


def pair_gradients(
    model: pin.Model, data: pin.Data, pairs: PairDistances, ks: np.ndarray
) -> np.ndarray:
    """Gradients (k, nv) of the signed distances of the computed pairs ``ks``.

    Precondition: ``pin.computeJointJacobians(model, data, q)`` for the ``q`` of ``pairs``
    (``data.J``: every joint's WORLD-frame Jacobian columns; a side's Jacobian is ``data.J``
    masked to the joints that move it, so two products serve every pair).
    """
    ks = np.asarray(ks, dtype=np.int64)
    if ks.size == 0:
        return np.zeros((0, model.nv))
    normals, p_a, p_b = pairs.witnesses(ks)
    return distance_gradients(model, data, normals, p_a, p_b, pairs.compiled.joint_a[ks],
                              pairs.compiled.joint_b[ks])


def distance_gradients(model: pin.Model, data: pin.Data, normals: np.ndarray,
                       p_a: np.ndarray, p_b: np.ndarray, joint_a: np.ndarray,
                       joint_b: np.ndarray) -> np.ndarray:
    """Gradients (k, nv) of k signed distances (the module docstring's formula).

    ``normals`` (k, 3): unit normals from witness ``p_a`` (k, 3) to ``p_b`` (k, 3), world
    frame [m]; ``joint_a`` / ``joint_b`` (k,): the parent joints of the two sides (0: fixed
    in the world).  Precondition: ``pin.computeJointJacobians`` at the distances' ``q``.
    """
    masks = support_masks(model)
    J = data.J
    f_a = np.concatenate((normals, _cross(p_a, normals)), axis=1)  # (k, 6) wrench-like
    f_b = np.concatenate((normals, _cross(p_b, normals)), axis=1)
    return (f_b @ J) * masks[joint_b] - (f_a @ J) * masks[joint_a]


def moving_columns(group) -> np.ndarray:
    """Return the velocity columns (k,) of the full model of the joints ``group`` moves.

    Its joints (a whole-body group's base among them) and the mimic joints that follow
    one of them.
    """
    model = group.robot.model
    names = {model.names[j] for j in group.joint_ids}  # a base: its joint's one name
    ids = set(group.moving_ids) | {model.getJointId(n) for n, m in group.robot.mimics.items()
                                   if m.leader in names}
    return np.array([model.idx_vs[j] for j in sorted(ids)], dtype=np.intp)


def rigid_pairs(model: pin.Model, compiled, columns: np.ndarray) -> np.ndarray:
    """Return the indices (k,) of the pairs whose two sides ``columns``' joints move alike.

    Each side moves with the joints that support its parent joint (:func:`support_masks`);
    when the joints of ``columns`` among them are the same for both sides, moving those
    joints carries both sides as one body: the pair's distance never changes.
    """
    masks = support_masks(model)[:, columns]
    same = (masks[compiled.joint_a] == masks[compiled.joint_b]).all(axis=1)
    return np.flatnonzero(same)


def carried_pairs(model: pin.Model, compiled, columns: np.ndarray, frame_joint: int
                  ) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return the pairs between what moves as one body with a frame and what no joint moves.

    ``columns``: the group's velocity columns (:func:`moving_columns`); ``frame_joint``:
    the frame's parent joint.  A joint whose supporting joints among ``columns`` are the
    frame's (the hand, the fingers held on it, what it carries) keeps its placement
    relative to the frame: it is *carried*.  Returns ``(pairs, carried, still)``: the
    pairs (k,) of a carried side and a side no joint of ``columns`` moves (a scene
    object, the body the arm stands on), and the geometry index of each side (k,).
    Empty when the group does not move the frame.
    """
    masks = support_masks(model)[:, columns]
    frame_mask = masks[frame_joint]
    if not frame_mask.any():
        return (np.zeros(0, np.intp),) * 3
    is_carried = (masks == frame_mask).all(axis=1)
    still = ~masks.any(axis=1)
    a_carried, b_carried = is_carried[compiled.joint_a], is_carried[compiled.joint_b]
    a_still, b_still = still[compiled.joint_a], still[compiled.joint_b]
    pairs = np.flatnonzero(a_carried & b_still | b_carried & a_still)
    a_side = a_carried[pairs]
    return (pairs, np.where(a_side, compiled.pair_a[pairs], compiled.pair_b[pairs]),
            np.where(a_side, compiled.pair_b[pairs], compiled.pair_a[pairs]))


def check_model(checker: CollisionChecker, model: pin.Model) -> None:
    """Raise unless ``model`` is the checker's (same tangent size)."""
    if model.nv != checker.model.nv:
        raise InvalidArgument(f"model has nv={model.nv}, the checker's model "
                              f"nv={checker.model.nv}")


class _Carried(NamedTuple):
    """The pairs of :func:`carried_pairs`, placed once at the group's locked values.

    Per pair (k,): ``carried`` and ``still``, the geometry indices of its two sides;
    ``centre_frame`` (k, 3), the carried side's ball centre in the frame [m];
    ``centre_world`` (k, 3), the still side's in the world [m]; ``radius`` (k,), the two
    balls' radii [m]; ``padding`` (k,) [m]; ``reach`` (k,), the farthest the carried side
    lies from the frame's origin [m].  ``placed``: per geometry, ``T_frame_geometry`` of a
    carried one, ``T_world_geometry`` of a still one.
    """

    pairs: np.ndarray
    carried: np.ndarray
    still: np.ndarray
    centre_frame: np.ndarray
    centre_world: np.ndarray
    radius: np.ndarray
    padding: np.ndarray
    reach: np.ndarray
    placed: dict

    @classmethod
    def of(cls, checker: CollisionChecker, group, frame_id: int) -> "_Carried":
        """Build them for ``group`` (its locked values) and frame ``frame_id``."""
        model = checker.model
        compiled = checker.compiled()
        joint = model.frames[frame_id].parentJoint
        pairs, carried, still = carried_pairs(model, compiled, moving_columns(group), joint)
        data = _DATA(model)
        pin.forwardKinematics(model, data, group.q_full_locked)
        T_frame_world = pin.updateFramePlacement(model, data, frame_id).inverse()
        placed = checker.placed_from_data(data)[1].oMg
        centre, radius = compiled.bounds.geometry_centre, compiled.bounds.geometry_radius
        frames, at = {}, np.zeros((compiled.geom_model.ngeoms, 3))
        for g in np.unique(carried).tolist():
            frames[g] = T_frame_world * placed[g]
        for g in np.unique(still).tolist():
            frames[g] = pin.SE3(placed[g])
        for g, placement in frames.items():  # carried in the frame, still in the world
            at[g] = placement.act(centre[g])
        centre_frame, centre_world = at[carried], at[still]
        return cls(pairs, carried, still, centre_frame, centre_world,
                   radius[carried] + radius[still], compiled.padding_m[pairs],
                   np.linalg.norm(centre_frame, axis=1) + radius[carried], frames)


def smoothed_hinge(x: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """Drake's ``phi(x) = -x exp(1/x)`` for ``x < 0`` (else 0) and its derivative."""
    x = np.minimum(x, -1e-12)
    e = np.exp(1.0 / x)
    return -x * e, e * (1.0 / x - 1.0)


class MinimumDistanceConstraint(BoundedConstraint):
    """Signed distance of every candidate pair >= ``min_distance_m`` (see module docstring).

    Args:
        checker: the robot's collision checker (scene changes are picked up live).
        min_distance_m: lower bound on each signed padded distance, in [m] (may be < 0).
        influence_distance_m: pairs farther than this, in [m], are ignored; must exceed
            ``min_distance_m`` (a few centimetres beyond it is typical).
        max_pairs: number of rows of the ``"pairs"`` formulation.
        formulation: ``"pairs"`` or ``"smooth"``.
    """

    name = "minimum_distance"

    def __init__(
        self,
        checker: CollisionChecker,
        min_distance_m: float = 0.0,
        influence_distance_m: float = 0.05,
        max_pairs: int = 8,
        formulation: str = "pairs",
    ):
        if formulation not in FORMULATIONS:
            raise InvalidArgument(f"unknown formulation '{formulation}'; valid: {FORMULATIONS}")
        if not influence_distance_m > min_distance_m:
            raise InvalidArgument(
                f"influence_distance_m ({influence_distance_m}) must exceed "
                f"min_distance_m ({min_distance_m})")
        if int(max_pairs) < 1:
            raise InvalidArgument(f"max_pairs must be >= 1, got {max_pairs}")
        self.checker = checker
        self.min_distance_m = float(min_distance_m)
        self.influence_distance_m = float(influence_distance_m)
        self.formulation = formulation
        rows = int(max_pairs) if formulation == "pairs" else 1
        low = self.min_distance_m if formulation == "pairs" else -np.inf
        high = np.inf if formulation == "pairs" else 1.0
        # Bounds of shape (max_pairs,) (pairs) or (1,) (smooth), read-only.
        super().__init__(self.name, np.full(rows, low), np.full(rows, high))

    def evaluate(self, model: pin.Model, data: pin.Data, q: np.ndarray):
        """Value (m,) and Jacobian (m, nv); needs the caller's kinematics and Jacobians."""
        pairs, near = self._near(model, data)
        if self.formulation == "pairs":
            return self._pair_rows(model, data, pairs, near)
        return self._smooth_row(model, data, pairs, near)

    def value(self, model: pin.Model, data: pin.Data, q: np.ndarray) -> np.ndarray:
        """Value (m,) alone, as :meth:`evaluate` gives it; needs forward kinematics only."""
        pairs, near = self._near(model, data)
        distances = pairs.distances_m[near]
        if self.formulation == "pairs":
            value = np.full(len(self.lower_bound), self.influence_distance_m)
            value[:min(len(near), len(value))] = distances[:len(value)]
            return value
        span = self.influence_distance_m - self.min_distance_m
        phi, _ = smoothed_hinge((distances - self.influence_distance_m) / span)
        return np.array([(1.0 / np.exp(-1.0)) * phi.sum()])  # as _smooth_row

    def holds(self, model: pin.Model, data: pin.Data, q: np.ndarray) -> bool:
        """Return whether ``q`` satisfies the constraint (no tolerance); forward kinematics only.

        The pairs formulation holds when no pair is closer than ``min_distance_m``: only the
        pairs whose lower bound is below it are computed, so a clear configuration costs the
        bounds and a few pairs (no gradients, no pairs out to the influence distance).
        """
        if self.formulation != "pairs":
            return bool(self.value(model, data, q)[0] <= self.upper_bound[0])
        check_model(self.checker, model)
        return self.checker.clear_from_data(data, self.min_distance_m)

    @property
    def units(self):
        """Every row of :meth:`measure` is in [m]."""
        return ("m",) * len(self.lower_bound) if self.formulation == "pairs" else ("m",)

    def measure_rows(self, placements: Placements) -> list:
        """Return by how much [m] the nearest pairs are closer than ``min_distance_m``.

        Rows as the pairs formulation; one row, the nearest pair, for the smooth one.  A
        configuration that :meth:`holds` (fewer pairs computed) measures zeros.
        """
        model, data = placements.model, placements.data
        out = [0.0] * len(self.units)
        if self.holds(model, data, placements.q):
            return out
        pairs, near = self._near(model, data)
        distances = pairs.distances_m[near][:len(out)].tolist()
        out[:len(distances)] = [max(self.min_distance_m - d, 0.0) for d in distances]
        return out

    def apart_wherever(self, group, tolerance_m: float) -> Optional[str]:
        """Return why no configuration of ``group`` keeps this clearance, or None.

        A pair whose two sides no joint of ``group`` moves apart (both on the hand it
        carries, both on the body it stands on, a scene object and a link the group does not
        move) is as far apart at every configuration as at the group's locked values
        (:func:`rigid_pairs`); one closer than ``min_distance_m`` by more than
        ``tolerance_m`` [m] holds the constraint back whatever the solver does: a URDF
        without an SRDF whose hand links overlap, a scene object through the robot's base.
        The pairs formulation only (the smooth one sums over pairs).
        """
        if self.formulation != "pairs":
            return None
        check_model(self.checker, group.robot.model)  # the locked values are the group's
        bound = self.min_distance_m - tolerance_m
        found = _scene_entries(_APART, group, self.checker.compiled())
        if bound not in found:
            found[bound] = self._apart(group, bound)
        return found[bound]

    def _apart(self, group, bound: float) -> Optional[str]:
        """:meth:`apart_wherever` on this scene, clearance ``bound`` [m] with the tolerance."""
        model = self.checker.model
        data = _DATA(model)
        pin.forwardKinematics(model, data, group.q_full_locked)
        pairs = self.checker.distances_from_data(data, bound)
        rigid = rigid_pairs(model, pairs.compiled, moving_columns(group))
        close = rigid[pairs.distances_m[rigid] < bound - 1e-9]
        if close.size == 0:
            return None
        k = close[np.argmin(pairs.distances_m[close])]
        a, b = pairs.compiled.pair_names[k]
        return (f"'{a}' and '{b}' are {pairs.distances_m[k]:.4f} m apart wherever the "
                f"group's joints are (none of them moves one relative to the other), closer "
                f"than the {self.min_distance_m:.4g} m required: no solution keeps its "
                f"clearance; if they may touch, disable the pair in the SRDF")

    def apart_at_target(self, group, pose, tolerance_m: float) -> Optional[str]:
        """Return why no configuration placing ``pose``'s frame keeps this clearance, or None.

        :meth:`apart_placed` of a :class:`~ros2_ik.core.pose.CompiledPose` on every axis (a
        free axis leaves the hand's placement open: None), within its tolerances.
        """
        if pose is None or not pose.full_pose:
            return None
        target = pose.target
        return self.apart_placed(group, pose.frame_id, pose.T_world_target,
                                 target.position_tolerance_m, target.orientation_tolerance_rad,
                                 tolerance_m, f"frame '{target.frame}' at the target")

    def apart_placed(self, group, frame_id: int, T_world_frame: pin.SE3, slack_m: float,
                     slack_rad: float, tolerance_m: float, where: str) -> Optional[str]:
        """Return why no configuration placing frame ``frame_id`` keeps this clearance, or None.

        What ``group`` moves as one body with the frame (the hand, the fingers held on it:
        :func:`carried_pairs`) lies, at any configuration whose frame is within ``slack_m``
        [m] and ``slack_rad`` [rad] of ``T_world_frame``, where that placement puts it, give
        or take ``slack_m + slack_rad * r`` [m] per point, ``r`` its farthest from the
        frame's origin.  What no joint of the group moves (a scene object, the body the arm
        stands on) stays where it is.  A pair of the two closer than ``min_distance_m`` by
        more than that and ``tolerance_m`` [m], the frame at ``T_world_frame``, holds the
        constraint back whatever the solver does: a grasp whose fingers are in the table, a
        hand target inside the robot's own hip, a foot's contact inside a step.  ``where``
        names the placement in the reason.  The pairs formulation only.
        """
        if self.formulation != "pairs":
            return None
        check_model(self.checker, group.robot.model)  # the locked values are the group's
        at = self._carried(group, frame_id)
        if at.pairs.size == 0:
            return None
        bound = self.min_distance_m - tolerance_m
        T = T_world_frame
        centres = at.centre_frame @ T.rotation.T + T.translation
        gaps = np.linalg.norm(centres - at.centre_world, axis=1) - at.radius
        near = np.flatnonzero(gaps <= np.maximum(bound + at.padding, 0.0))  # else apart
        if near.size == 0:
            return None
        placements = {g: at.placed[g] for g in at.still[near].tolist()}
        placements.update((g, T * at.placed[g]) for g in at.carried[near].tolist())
        distances = self.checker.placed_distances(placements, at.pairs[near])
        over = distances + slack_m + slack_rad * at.reach[near] < bound - 1e-9
        if not over.any():
            return None
        k = int(np.argmin(np.where(over, distances, np.inf)))
        a, b = self.checker.compiled().pair_names[at.pairs[near[k]]]
        return (f"'{a}' and '{b}' are {distances[k]:.4f} m apart with {where} (the group's "
                f"joints move one with the frame, the other not at all), closer than the "
                f"{self.min_distance_m:.4g} m required: no solution keeps its clearance")

    def _carried(self, group, frame_id: int) -> "_Carried":
        """:func:`carried_pairs` of ``frame_id`` on this scene, placed: cached per group."""
        found = _scene_entries(_CARRIED, group, self.checker.compiled())
        if frame_id not in found:
            found[frame_id] = _Carried.of(self.checker, group, frame_id)
        return found[frame_id]

    def _near(self, model: pin.Model, data: pin.Data) -> Tuple[PairDistances, np.ndarray]:
        """Distances and the indices (k,) of the pairs within influence, nearest first."""
        check_model(self.checker, model)
        pairs = self.checker.distances_from_data(data, self.influence_distance_m)
        near = np.flatnonzero(pairs.distances_m < self.influence_distance_m)
        return pairs, near[np.argsort(pairs.distances_m[near], kind="stable")]

    def _pair_rows(self, model, data, pairs: PairDistances, near: np.ndarray):
        rows = len(self.lower_bound)
        near = near[:rows]
        value = np.full(rows, self.influence_distance_m)
        jacobian = np.zeros((rows, model.nv))
        value[:len(near)] = pairs.distances_m[near]
        jacobian[:len(near)] = pair_gradients(model, data, pairs, near)
        return value, jacobian

    def _smooth_row(self, model, data, pairs: PairDistances, near: np.ndarray):
        span = self.influence_distance_m - self.min_distance_m
        x = (pairs.distances_m[near] - self.influence_distance_m) / span
        phi, dphi = smoothed_hinge(x)
        scale = 1.0 / np.exp(-1.0)  # 1 / phi(-1)
        gradient = dphi @ pair_gradients(model, data, pairs, near)
        return np.array([scale * phi.sum()]), (scale / span) * gradient[None, :]
