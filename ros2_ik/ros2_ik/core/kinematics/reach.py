"""A conservative reach bound: a sphere every placement of a frame lies in, from the model.

For a frame carried by a group, the chain of joints from the world to the frame is cut at
the first joint the group moves (every joint before it is fixed at its locked position).
The frame's origin lies within ``radius_m`` of ``centre``, for every configuration within
the joint limits:

* ``centre`` [m, world]: a point of that first moving joint's axis (its origin before its
  own motion when it is prismatic), which the joint's motion leaves in place;
* ``radius_m`` [m]: the sum of the lengths of the rigid segments from one moving joint's
  pivot to the next one's, and from the last one's to the frame (the joints the group
  does not move are part of a segment, at their locked positions), plus the travel
  ``max(|lower|, |upper|)`` of every moving prismatic joint.  A revolute joint's pivot
  is any point of its axis (its own rotation leaves each in place); the pivots are slid
  along the axes to shorten the sum (a UR arm's shoulder and elbow offsets, along the
  parallel axes, then cost nothing).

Each segment is a rigid vector that the joints before it only rotate or translate, so the
triangle inequality makes the bound exact and conservative wherever the pivots are: never
smaller than the true reach (for any limits of the revolute joints).  It is the reach of
the frame's origin; a point fixed in the frame at ``p`` adds ``|p|``.

Between two frames (:func:`frame_distance_bound`): both hang from the deepest joint their
chains share, which moves them together (a floating base above them included), so their
distance is bounded by the same sum along the path from one frame up to that joint and
down to the other: the segments of each side, and the rigid segment joining the two
sides' first pivots.  The centre of mass's distance to a frame
(:func:`com_distance_bound`): at most the mass-weighted mean of the bounds from the
frame to each body's centre of mass (the triangle inequality on the mean).
"""
from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple, Optional

import numpy as np
import pinocchio as pin

from ros2_ik.core.runtime.per_object import PerObjectAndKey

from .model import model_joint_axis


class ReachBound(NamedTuple):
    """The sphere ``|p_world_frame - centre| <= radius_m`` [m] holding every frame placement.

    ``centre`` (3,) in world [m], as a tuple of floats; ``centre_name``: what the centre
    is, for messages (``"joint 'shoulder_pan_joint'"``, or the frame itself when no group
    joint moves it: its radius is then 0).
    """

    centre: tuple
    radius_m: float
    centre_name: str

    @property
    def centre_array(self) -> np.ndarray:
        """:attr:`centre` as a read-only array (3,) [m] (made once per bound)."""
        return _centre_array(self.centre)


@lru_cache(maxsize=1024)
def _centre_array(centre: tuple) -> np.ndarray:
    array = np.array(centre, dtype=float)
    array.setflags(write=False)
    return array


def reach_bound(group, frame_id: int) -> Optional[ReachBound]:
    """Return the reach bound of model frame ``frame_id`` moved by ``group`` (cached), or None.

    None when a moving joint on the frame's chain is not a one-axis revolute or
    prismatic joint (a whole-body group's floating or planar base), or a moving
    prismatic joint has an infinite range.  A base the group does not move (an arm
    group of a robot loaded with a floating root) is locked where the group holds it,
    as every joint before the first moving one.
    """
    return _BOUNDS(group.chain_owner(frame_id), frame_id)


#: Per group and frame id: its ReachBound, or None (no bound).  A group held elsewhere
#: whose changed joints move neither its joints nor the frame reads its source's
#: (``Group.chain_owner``): the same chain, the same bound; one whose changed joints only
#: carry the chain (a lift) moves its source's (``Group.shape_owner``, ``source_motion``).
_BOUNDS: PerObjectAndKey = PerObjectAndKey(lambda group, fid: _bound(group, int(fid)))


def _bound(group, frame_id: int) -> Optional[ReachBound]:
    owner = group.shape_owner(frame_id)
    if owner is not group:  # held with its mount moved: the owner's sphere, moved with it
        found = reach_bound(owner, frame_id)
        D = group.source_motion()
        return None if found is None or D is None else ReachBound(
            tuple(D.act(found.centre_array).tolist()), found.radius_m, found.centre_name)
    model: pin.Model = group.robot.model
    frame = model.frames[frame_id]
    chain = [j for j in model.supports[frame.parentJoint] if j > 0]
    data = group.locked_data()
    moving = set(group.moving_ids)
    first = next((k for k, j in enumerate(chain) if j in moving), None)
    if first is None:  # fixed: the frame's one placement
        return ReachBound(tuple(data.oMf[frame_id].translation.tolist()), 0.0,
                          f"frame '{frame.name}'")
    j0 = chain[first]
    links = _links(model, data, chain[first:], moving, frame.placement,
                   _coupled_travel(group))
    if links is None:
        return None
    A, b, slides, travel = links
    s = _pivots(A, b)
    radius = travel + _length(A, b, s)
    M0 = data.oMi[model.parents[j0]] * model.jointPlacements[j0]
    centre = M0.translation + M0.rotation.dot(s[0] * slides[0])
    return ReachBound(tuple(centre.tolist()), radius, f"joint '{model.names[j0]}'")


class PairBound(NamedTuple):
    """``|p_world_a - p_world_b| <= radius_m`` [m] for every configuration within the limits.

    ``via``: the joint both frames hang from (their chains' deepest common joint; a
    ``universe`` when they share none), for messages.
    """

    radius_m: float
    via: str


def frame_distance_bound(group, frame_a: int, frame_b: int) -> Optional[PairBound]:
    """Return the bound on the distance between the origins of two model frames (cached).

    None when a moving joint between the two frames and their chains' deepest common
    joint is not a one-axis revolute or bounded prismatic joint (a floating or planar
    base between them: a frame fixed in the world and one on a free-flying robot).
    """
    a, b = sorted((int(frame_a), int(frame_b)))
    return _PAIRS(_pair_owner(group, a, b), (a, b))


def _pair_owner(group, frame_a: int, frame_b: int):
    """Return the group whose pair bounds serve ``group`` for these two frames.

    Its source when the changed joints of a group held elsewhere move neither its joints
    nor either frame (``Group.chain_owner`` of both), else the group itself.
    """
    owner = group.chain_owner(frame_a)
    return owner if owner is group.chain_owner(frame_b) else group


def distance_bound(group, frame_a: int, frame_b: int) -> Optional[float]:
    """Return :func:`frame_distance_bound`'s radius [m], or :func:`com_distance_bound`'s.

    A frame id of -1 is the CoM (at most one of the two); None where there is no bound.
    """
    if frame_a < 0 or frame_b < 0:
        return com_distance_bound(group, max(frame_a, frame_b))
    pair = frame_distance_bound(group, frame_a, frame_b)
    return None if pair is None else pair.radius_m


def distance_bound_built(group, frame_a: int, frame_b: int) -> bool:
    """Whether :func:`distance_bound` of the two frames is built (a lookup, not ~1 ms)."""
    if frame_a < 0 or frame_b < 0:
        return max(frame_a, frame_b) in _COM.table(group)
    a, b = sorted((int(frame_a), int(frame_b)))
    return (a, b) in _PAIRS.table(_pair_owner(group, a, b))


def com_distance_bound(group, frame: int) -> Optional[float]:
    """Return a bound [m] on the distance from frame ``frame``'s origin to the CoM (cached).

    The CoM of the full model (every body, the locked joints' too): the mass-weighted
    mean of the bounds from the frame to each body's own centre of mass.  None where one
    of those has none, or the model has no mass.
    """
    return _COM(group, int(frame))


def base_distance_bound(group, frame: int) -> Optional[float]:
    """Return a bound [m] on the distance from the root joint's origin to a frame's (cached).

    For a whole-body group: how far frame ``frame``'s origin can lie from the base
    joint's origin, whatever the joints below the base (the same sum as
    :func:`frame_distance_bound`).  None where a joint between them has no bound.  A group
    held elsewhere whose changed joints move neither its joints nor the frame (the other
    arm, in a collision-checked request) has its source's (``Group.chain_owner``).
    """
    frame = int(frame)
    return _BASE(group.chain_owner(frame), frame)


def _base(group, frame: int) -> Optional[float]:
    f = group.robot.model.frames[frame]
    bound = _sides_bound(group, [(1, pin.SE3.Identity()), (f.parentJoint, f.placement)],
                         pivots=True)
    return None if bound is None else bound.radius_m


def _pair(group, frame_a: int, frame_b: int) -> Optional[PairBound]:
    model: pin.Model = group.robot.model
    sides = [(model.frames[f].parentJoint, model.frames[f].placement) for f in
             (frame_a, frame_b)]
    return _sides_bound(group, sides, pivots=True)


def _com(group, frame: int) -> Optional[float]:
    model: pin.Model = group.robot.model
    f = model.frames[frame]
    total = weighted = 0.0
    for j, inertia in enumerate(model.inertias):
        if inertia.mass <= 0.0:
            continue
        body = pin.SE3(np.eye(3), inertia.lever)
        bound = _sides_bound(group, [(f.parentJoint, f.placement), (j, body)], pivots=False)
        if bound is None:
            return None
        total += inertia.mass
        weighted += inertia.mass * bound.radius_m
    return weighted / total if total > 0.0 else None


#: Per group and frame-id pair (sorted): its PairBound, or None.
_PAIRS: PerObjectAndKey = PerObjectAndKey(lambda group, key: _pair(group, *key))
#: Per group and frame id: the base distance bound [m], or None.
_BASE: PerObjectAndKey = PerObjectAndKey(_base)
#: Per group and frame id: the CoM distance bound [m], or None.
_COM: PerObjectAndKey = PerObjectAndKey(_com)


def _sides_bound(group, sides, pivots: bool) -> Optional[PairBound]:
    """Return the bound between points ``(joint, placement in it)`` of ``sides`` (two), or None.

    Each side's chain below the deepest joint both chains share: its first moving joint's
    pivot (rigid in that joint's frame, before its own motion), then :func:`_links`.  The
    pivots are slid along the axes to shorten the sum when ``pivots`` (any position is
    sound: without, each pivot is its joint's origin).
    """
    model: pin.Model = group.robot.model
    chains = [list(model.supports[j]) for j, _ in sides]
    shared = 0
    while shared < min(map(len, chains)) and chains[0][shared] == chains[1][shared]:
        shared += 1
    below = [chain[shared:] for chain in chains]
    if any(model.joints[j].nv > 1 for chain in below for j in chain):
        return None
    data = group.locked_data()
    moving = set(group.moving_ids)
    travel_of = _coupled_travel(group)
    columns, rows, offsets, travel, width = [], [], [], 0.0, 0
    for chain, (_, placement) in zip(below, sides):
        first = next((k for k, j in enumerate(chain) if j in moving), None)
        lead = pin.SE3.Identity()
        for j in chain[:first]:  # the joints before the first moving one: rigid
            lead = lead * data.liMi[j]
        if first is None:
            offsets.append((lead * placement).translation)
            columns.append(None)
            continue
        links = _links(model, data, chain[first:], moving, placement, travel_of)
        if links is None:
            return None
        A, b, slides, motion = links
        M = lead * model.jointPlacements[chain[first]]
        offsets.append(M.translation)
        columns.append((width, M.rotation.dot(slides[0])))
        rows.append((width, A, b))
        travel += motion
        width += A.shape[2]
    A_all = np.zeros((1 + sum(len(b) for _, _, b in rows), 3, width))
    b_all = np.zeros((len(A_all), 3))
    b_all[0] = offsets[0] - offsets[1]  # the first pivots' rigid segment (common frame)
    for sign, column in zip((1.0, -1.0), columns):
        if column is not None:
            A_all[0, :, column[0]] += sign * column[1]
    m = 1
    for start, A, b in rows:
        A_all[m:m + len(b), :, start:start + A.shape[2]] = A
        b_all[m:m + len(b)] = b
        m += len(b)
    s = _pivots(A_all, b_all) if pivots and width else np.zeros(width)
    via = model.names[chains[0][shared - 1]] if shared else "universe"
    return PairBound(travel + _length(A_all, b_all, s), via)


def _links(model: pin.Model, data: pin.Data, chain, moving, placement: pin.SE3,
           travel_of: Optional[dict] = None):
    """Return the rigid segments between the moving joints' pivots of ``chain``, or None.

    A pivot is a point of a moving joint's frame that the joint's own motion leaves in
    place: ``s_i * slide_i`` (a revolute joint's axis; a prismatic joint's origin, its
    travel counted apart).  Segment ``k`` runs from joint ``i``'s pivot (after its
    motion) to the next joint's pivot (before its motion), or to the frame's origin: a
    rigid vector ``A_k s + b_k`` [m] in joint ``i``'s frame.  Returns ``(A (m, 3, k),
    b (m, 3), slides (k, 3), travel [m])``; None when a moving joint is not a one-axis
    revolute or a bounded prismatic joint.
    """
    rigid, slides, travel = [], [], 0.0
    T = pin.SE3.Identity()
    for j in chain:
        if j not in moving:
            T = T * data.liMi[j]
            continue
        motion = travel_of[j] if travel_of and j in travel_of else _travel(model, j)
        if motion is None:
            return None
        if slides:
            rigid.append(T * model.jointPlacements[j])
        prismatic, axis = model_joint_axis(model, j)
        slides.append(np.zeros(3) if prismatic else np.array(axis, dtype=float))
        travel += motion
        T = pin.SE3.Identity()
    rigid.append(T * placement)
    k = len(slides)
    A, b = np.zeros((k, 3, k)), np.zeros((k, 3))
    for i, M in enumerate(rigid):  # from joint i to joint i + 1 (the last: to the frame)
        b[i] = M.translation
        A[i, :, i] -= slides[i]
        if i + 1 < k:
            A[i, :, i + 1] += M.rotation.dot(slides[i + 1])
    return A, b, slides, travel


def _length(A: np.ndarray, b: np.ndarray, s: np.ndarray) -> float:
    """Return the summed length [m] of the segments with the pivots at ``s``."""
    return float(_segments(A, b, s).sum())


def _segments(A: np.ndarray, b: np.ndarray, s: np.ndarray) -> np.ndarray:
    """Return the lengths (m,) [m] of the segments ``A_k s + b_k`` with the pivots at ``s``."""
    m, _, k = A.shape
    return np.sqrt(np.square(A.reshape(3 * m, k) @ s + b.reshape(3 * m)).reshape(m, 3)
                   .sum(axis=1))


def _pivots(A: np.ndarray, b: np.ndarray, rounds: int = 60) -> np.ndarray:
    """Pivot positions ``s`` (k,) [m] shortening the summed length (any ``s`` is sound).

    The length is convex in ``s``: iteratively reweighted least squares from ``s = 0``,
    the shortest kept, stopped once a round shortens it by under :data:`PIVOT_GAIN_M`
    (on matrices: a pair of a whole-body group's frames took ~3 ms with 60 rounds of
    ``einsum``, inside the first solve whose proofs asked for it).
    """
    m, _, k = A.shape
    A2, b2 = A.reshape(3 * m, k), b.reshape(3 * m)
    ridge = 1e-12 * np.eye(k)
    s = best = np.zeros(k)
    r = _segments(A, b, s)
    shortest = float(r.sum())
    for _ in range(rounds):
        WA = A2 * np.repeat(1.0 / np.maximum(r, 1e-9), 3)[:, None]
        s = np.linalg.solve(A2.T @ WA + ridge, -(WA.T @ b2))
        r = _segments(A, b, s)
        length = float(r.sum())
        if length < shortest:  # a round may lengthen it, and later ones shorten it again
            gained, best, shortest = shortest - length, s, length
            if gained < PIVOT_GAIN_M:
                break
    return best


#: A round of :func:`_pivots` that shortens the sum by less than this ends it [m].
PIVOT_GAIN_M = 1e-12


def _coupled_travel(group) -> dict:
    """Per prismatic mimic joint ``group`` moves with its leader: its travel [m], or None.

    It follows its leader's range, not its own limits: ``max |m l + o|`` over the leader's
    limits (None when they are not finite).  A coupled revolute joint is a pivot like any
    other (the bound holds for independent joints, so for coupled ones).
    """
    model, out = group.robot.model, {}
    for c in group.coupled:
        if model_joint_axis(model, c.follower)[0]:
            iq = model.idx_qs[c.leader]
            ends = [abs(c.multiplier * float(limit[iq]) + c.offset)
                    for limit in (model.lowerPositionLimit, model.upperPositionLimit)]
            out[c.follower] = max(ends) if all(map(np.isfinite, ends)) else None
    return out


def _travel(model: pin.Model, j: int) -> Optional[float]:
    """How far joint ``j``'s motion moves its origin [m]: 0 revolute, None unbounded/other."""
    axis = model_joint_axis(model, j)
    if axis is None:
        return None
    if not axis[0]:
        return 0.0
    iq = model.idx_qs[j]
    travel = max(abs(float(model.lowerPositionLimit[iq])),
                 abs(float(model.upperPositionLimit[iq])))
    return travel if np.isfinite(travel) else None
