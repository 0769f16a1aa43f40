"""Pinocchio models derived from a robot's: reduced to a group, continuous joints as angles.

The reduced model keeps a group's joints and welds every other joint at its locked value
(Drake's ``Joint::Lock``); its angle twin takes continuous joints as one angle each
(q = angles, nq = nv); a placed copy follows locked joints to other values without
reducing the model again.  :class:`~ros2_ik.core.model.group.Group` builds and holds them.
"""
from __future__ import annotations

import math
from collections import Counter
from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple

import numpy as np
import pinocchio as pin

from ros2_ik.core.model.joint_values import unbounded_unaligned_axis
from ros2_ik.core.runtime.per_object import PerObject


class LockedData(NamedTuple):
    """Placements at a group's locked joints' values.

    :meth:`~ros2_ik.core.model.group.Group.locked_data` makes them.

    Lists by joint id (``oMi`` ``T_world_joint``, ``liMi`` ``T_parent_joint``) and by
    frame id (``oMf`` ``T_world_frame``), [m].
    """

    oMi: List[pin.SE3]
    liMi: List[pin.SE3]
    oMf: List[pin.SE3]


def placed_model(red: pin.Model, model: pin.Model, placed: LockedData, sources,
                 changed: frozenset) -> pin.Model:
    """Return a copy of reduced (or angle) model ``red`` placed as ``model`` at ``placed``.

    ``sources``: :meth:`~ros2_ik.core.model.group.Group._placement_sources`; ``changed``:
    the locked joints whose values differ from ``red``'s.  A placement with a changed
    joint behind it is rewritten as ``buildReducedModel`` folds it: relative to its kept
    parent (a group joint at its neutral value, or the world), from the placements at the
    locked values; so is a group joint's body (the locked bodies it carries).  The world's
    bodies are left as they are (no solve reads them: the centre of mass is the full
    model's).
    """
    out = red.copy()
    joints, frames, bodies = sources
    oMi, oMf = placed.oMi, placed.oMf  # oMi[0]: the world, the identity
    for j, full, folded, behind in bodies:
        if not changed.isdisjoint(behind):
            inertia = pin.Inertia.Zero()
            for k in folded:
                inertia += oMi[full].actInv(oMi[k]).act(model.inertias[k])
            out.inertias[j] = inertia
    for j, full, kept, behind in joints:
        if not changed.isdisjoint(behind):
            out.jointPlacements[j] = oMi[kept].actInv(
                oMi[model.parents[full]] * model.jointPlacements[full])
    for f, kept, behind in frames:
        if not changed.isdisjoint(behind):
            out.frames[f].placement = oMi[kept].actInv(oMf[f])
    return out


class ModelTables(NamedTuple):
    """What a model's joints and frames are, read once.

    Each reading of pinocchio's vectors costs microseconds.  Per joint id: its supports
    (a frozenset), its configuration index and whether it is a (cos, sin) pair; per
    frame: its parent joint and its placement in it.
    """

    supports: Tuple[frozenset, ...]
    idx_q: Tuple[int, ...]
    cos_sin: Tuple[bool, ...]
    frame_parent: Tuple[int, ...]
    frame_placement: Tuple[pin.SE3, ...]


def model_tables(model: pin.Model) -> ModelTables:
    """Return ``model``'s :class:`ModelTables` (cached per model)."""
    found = _TABLES.get(model)
    if found is None:
        found = _TABLES[model] = ModelTables(
            tuple(frozenset(model.supports[j]) for j in range(model.njoints)),
            tuple(model.idx_qs), tuple(n == 2 for n in model.nqs),
            tuple(f.parentJoint for f in model.frames),
            tuple(pin.SE3(f.placement) for f in model.frames))
    return found


_TABLES: PerObject = PerObject()


def reduced_model(model: pin.Model, lock_ids: Sequence[int], q_full: np.ndarray) -> pin.Model:
    """``pin.buildReducedModel`` that also works when frames share a name.

    A URDF may name a link like a joint (SO-100's ``gripper``, anymal's ``LF_HAA``):
    pinocchio then refuses, "several frames match the filter".  The model is reduced
    with those frames (all but the joints' own) renamed uniquely, and their names are
    given back: ``buildReducedModel`` keeps the frames and their order.
    """
    clashes = _CLASHES.get(model)
    if clashes is None:  # once per model: a group held elsewhere reduces it again
        counts = Counter(f.name for f in model.frames)
        clashes = _CLASHES[model] = [i for i, f in enumerate(model.frames)
                                     if counts[f.name] > 1 and f.type != pin.FrameType.JOINT]
    if not clashes:
        return pin.buildReducedModel(model, list(lock_ids), q_full)
    renamed = pin.Model(model)
    for i in clashes:
        renamed.frames[i].name = f"{model.frames[i].name}\x00{i}"
    reduced = pin.buildReducedModel(renamed, list(lock_ids), q_full)
    for i in clashes:
        reduced.frames[i].name = model.frames[i].name
    return reduced


#: Per model, the frames :func:`reduced_model` renames (their names clash).
_CLASHES: PerObject = PerObject()

_PLAIN_REVOLUTE = {"JointModelRUBX": pin.JointModelRX, "JointModelRUBY": pin.JointModelRY,
                   "JointModelRUBZ": pin.JointModelRZ}


def angle_model(red: pin.Model, continuous: np.ndarray) -> Optional[pin.Model]:
    """``red`` with its continuous joints as revolute ones (q = angles, nq = nv).

    Same joint and frame indices.  None (keep cos/sin) for a joint type without a plain
    revolute twin or when forward kinematics of the two models disagree.
    """
    out = pin.Model()
    out.name = red.name
    kinds = []
    for j in range(1, red.njoints):
        jm = red.joints[j]
        name = jm.shortname()
        kinds.append(name)
        if name in _PLAIN_REVOLUTE:
            jm = _PLAIN_REVOLUTE[name]()
        elif name == "JointModelRevoluteUnboundedUnaligned":
            axis = unbounded_unaligned_axis(jm.extract())
            kinds.append(tuple(axis.tolist()))
            jm = pin.JointModelRevoluteUnaligned(axis)
        elif red.nqs[j] != 1:
            return None  # a joint type without a one-angle twin
        out.addJoint(red.parents[j], jm, red.jointPlacements[j], red.names[j])
        out.appendBodyToJoint(j, red.inertias[j], pin.SE3.Identity())
    for f in list(red.frames)[1:]:  # frame 0 (universe) exists already
        out.addFrame(pin.Frame(f), False)
    # Whether the twins move as the joints do depends on the joints' types (and axes)
    # alone, not on their placements: checked once per sequence of types, not again for
    # each group held elsewhere (a new reading of a second arm, a lift).
    kinds = tuple(kinds)
    same = _SAME_KINEMATICS.get(kinds)
    if same is None:
        same = _SAME_KINEMATICS[kinds] = _same_kinematics(red, out, continuous)
    return out if same else None


#: :func:`_same_kinematics`' verdict per sequence of joint types (:func:`angle_model`).
_SAME_KINEMATICS: Dict[tuple, bool] = {}


def _same_kinematics(red: pin.Model, angles: pin.Model, continuous: np.ndarray) -> bool:
    """Whether ``angles`` places every joint where ``red`` does, at three random angle sets.

    The joints' placements suffice: ``angles`` holds ``red``'s frames as they are, on the
    same joints.  Compared as one array per model (``np.allclose``'s test, ``atol``
    1e-12): a group held elsewhere builds its own angle model, on every new reading.
    """
    rng = np.random.default_rng(0)
    d_red, d_ang = red.createData(), angles.createData()
    for _ in range(3):
        a = rng.uniform(-3.0, 3.0, angles.nq)
        q = []
        for v, cont in zip(a.tolist(), continuous.tolist()):
            q += (math.cos(v), math.sin(v)) if cont else (v,)
        pin.forwardKinematics(red, d_red, np.array(q))
        pin.forwardKinematics(angles, d_ang, a)
        if not np.allclose(_placements(d_red.oMi), _placements(d_ang.oMi), atol=1e-12):
            return False
    return True


def _placements(oMi) -> np.ndarray:
    """Return the homogeneous matrices (k, 4, 4) of a Data's placements ``oMi``."""
    return np.array([M.homogeneous for M in oMi])
