"""The tree model of the compiled kinematics, built from a pinocchio model (no numba here).

:class:`Tree`: the joints as arrays (:mod:`.forward` computes on them).  :func:`tree_of`
is a group's whole robot (the group's joints move, every other joint is fixed at its
locked position), :func:`pruned` that tree cut to the joints that move some frames, and
:func:`chain_of` a serial chain: the tree of a model whose joints are all the group's,
pruned to the supports of one frame, with that frame.
"""
from __future__ import annotations

from typing import Mapping, NamedTuple, Optional, Sequence, Tuple

import numpy as np
import pinocchio as pin

from ros2_ik.core.model.joint_values import motion_subspace
from ros2_ik.core.runtime.per_object import PerObject, PerObjectAndKey

#: Joint kinds, as :mod:`.forward` numbers them.  A base (a free-flyer or a planar root,
#: :mod:`ros2_ik.core.model.floating_base`) is one more kind: its coordinates are the
#: group's (x y z qx qy qz qw: 7, tangent 6; x y theta: 3, tangent 3), placed first.
FIXED, REVOLUTE, PRISMATIC, FREEFLYER, PLANAR = 0, 1, 2, 3, 4
#: The model frame id that names the whole robot's centre of mass (no frame has it), and
#: its ``fparent`` in the kernels' frame arrays (:func:`.forward.kinematics`).
COM_FRAME, COM_PARENT = -1, -2
_BASES = {"JointModelFreeFlyer": FREEFLYER, "JointModelPlanar": PLANAR}


class Tree(NamedTuple):
    """Joints as arrays for the kernels (a parent before its children).

    ``parents`` (k,) tree index of each joint's parent (-1: the world); ``placements``
    (k, 4, 4) ``T_parent_joint`` [m] (a locked joint's includes its motion), whose last
    row (constant in a transform, never read as one) holds the joint's body: its centre
    of mass in the joint frame [m] and its mass [kg] (pinocchio's ``inertias``); ``kinds``
    (k,) 0 fixed, 1 revolute, 2 prismatic, 3 free-flyer, 4 planar (a base: the root, its
    coordinates first in the group vector); ``axes`` (k, 3) unit axes in the joint frame
    (zero for a base); ``columns`` (k,) index of the joint's first coordinate in the group
    vector (0 for fixed joints).  With a free-flyer the group vector has one more entry
    than the tangent (7 coordinates, 6 velocities): a 1-DoF joint's tangent (Jacobian)
    column is its ``column - 1`` (:func:`.forward.kinematics`).
    """

    parents: np.ndarray
    placements: np.ndarray
    kinds: np.ndarray
    axes: np.ndarray
    columns: np.ndarray


class Chain(NamedTuple):
    """A serial chain and its tip frame: the kernels' tree with one frame.

    ``tree``: the joints from the root to the tip; ``fparent`` (1,) the joint carrying
    the tip (the last one), ``fplace`` (1, 4, 4) ``T_joint_tip`` (the tip may hang below a
    fixed link).
    """

    tree: Tree
    fparent: np.ndarray
    fplace: np.ndarray


def joint_axis(joint) -> Optional[tuple]:
    """(prismatic, unit axis) of a 1-DoF revolute, continuous or prismatic joint, or None.

    Read from its motion subspace (:func:`ros2_ik.core.model.joint_values.motion_subspace`, the
    one reading of a joint's axis): a rotation's is angular only, a translation's linear
    only; a helical joint (both) or a zero axis (neither) has none.
    """
    if joint.nv != 1 or joint.nq not in (1, 2):
        return None
    S = motion_subspace(joint)
    linear, angular = bool(np.abs(S[:3]).max() > 0.0), bool(np.abs(S[3:]).max() > 0.0)
    if linear == angular:
        return None
    a = S[:3] if linear else S[3:]
    return linear, tuple((a / np.linalg.norm(a)).tolist())


def model_joint_axis(model: pin.Model, j: int) -> Optional[tuple]:
    """:func:`joint_axis` of ``model``'s joint ``j``, read once per model and joint.

    Each reading builds the joint's data (~10 us); the reach bounds read every joint of
    every chain they sum (hundreds on a humanoid, inside the first solve that asks).
    """
    return _AXES(model, j)


#: Per model and joint id: :func:`joint_axis` of the joint.
_AXES: PerObjectAndKey = PerObjectAndKey(lambda model, j: joint_axis(model.joints[j]))


def model_tree(model: pin.Model, joint_ids: Sequence[int], column: Mapping[int, int],
               liMi=None) -> Optional[Tree]:
    """Return the tree of ``model``'s joints ``joint_ids`` (each after its parent), or None.

    ``column``: each moving joint's (first) index in the group vector; the others are
    fixed at ``liMi[j]`` (pinocchio ``Data.liMi`` at the locked configuration).  None when
    a moving joint is not one-axis revolute or prismatic nor a free-flyer or planar root,
    or a fixed one has no ``liMi``.
    """
    index = {j: i for i, j in enumerate(joint_ids)}
    k = len(index)
    parents, kinds = np.full(k, -1, dtype=np.int64), np.zeros(k, dtype=np.int64)
    placements, axes = np.empty((k, 4, 4)), np.zeros((k, 3))
    columns = np.zeros(k, dtype=np.int64)
    for i, j in enumerate(joint_ids):
        parents[i] = index.get(model.parents[j], -1)
        inertia = model.inertias[j]
        if j not in column:
            if liMi is None:
                return None
            placements[i] = liMi[j].homogeneous
            placements[i, 3] = (*inertia.lever, inertia.mass)
            continue
        placements[i] = model.jointPlacements[j].homogeneous
        placements[i, 3] = (*inertia.lever, inertia.mass)
        columns[i] = column[j]
        base = _BASES.get(model.joints[j].shortname())
        if base is not None and parents[i] < 0:
            kinds[i] = base
            continue
        axis = model_joint_axis(model, j)
        if axis is None:
            return None
        kinds[i] = PRISMATIC if axis[0] else REVOLUTE
        axes[i] = axis[1]
    return Tree(parents, np.ascontiguousarray(placements), kinds, axes, columns)


def chain_of(model: pin.Model, frame_id: int) -> Optional[Chain]:
    """Chain of ``model`` (q = group vector, nq = nv) carrying frame ``frame_id``, or None.

    None when the model has cos/sin joints, the frame is on the world, or a joint on the
    path is not a one-axis revolute or prismatic joint.
    """
    if model.nq != model.nv:
        return None
    frame = model.frames[frame_id]
    support = [j for j in model.supports[frame.parentJoint] if j > 0]
    if not support:
        return None
    tree = model_tree(model, support, {j: model.idx_qs[j] for j in support})
    if tree is None:
        return None
    return Chain(tree, np.array([len(support) - 1], dtype=np.int64),
                 np.ascontiguousarray(frame.placement.homogeneous)[None])


def placed_chain(chain: Chain, model: pin.Model, frame_id: int) -> Chain:
    """``chain``, :func:`chain_of` of another model, with its root placed as in ``model``.

    For a model that differs from the other only in where its root joint stands in the
    world (a group held with the lift under its chain elsewhere): the same joints, axes
    and placements below the root, read from ``chain`` instead of from ``model`` again.
    """
    root = next(j for j in model.supports[model.frames[frame_id].parentJoint] if j > 0)
    placements = chain.tree.placements.copy()
    placements[0, :3] = model.jointPlacements[root].homogeneous[:3]  # row 3: its body
    return Chain(chain.tree._replace(placements=placements), chain.fparent, chain.fplace)


_TREES: PerObject = PerObject()
#: :func:`tree_of`'s marker of a group not looked at yet (its tree may be None).
_UNKNOWN = object()


def tree_of(group) -> Optional[Tree]:
    """Return the tree of ``group``'s full model, or None (a group joint of another kind).

    None too when the group moves mimic joints with their leaders (:attr:`Group.coupled`):
    the tree's columns are one joint each.

    A whole-body group's base (its first joint) has column 0, the next joints follow its
    coordinates (``group.base_nq``).
    """
    tree = _TREES.get(group, _UNKNOWN)
    if tree is _UNKNOWN and group.coupled:  # mimic joints moved with their leaders: not here
        tree = _TREES[group] = None
    if tree is _UNKNOWN:
        model = group.robot.model
        shift = group.base_nq - 1 if group.has_base else 0
        column = {j: i + shift if i else 0 for i, j in enumerate(group.joint_ids)}
        tree = _TREES[group] = model_tree(model, range(1, model.njoints), column,
                                          group.locked_data().liMi)  # the locked joints'
    return tree


def pruned(tree: Tree, fparent: np.ndarray) -> Tuple[Tree, np.ndarray]:
    """Return the joints that move frames on tree joints ``fparent`` (f,), and ``fparent`` in it.

    Their supports, in tree order (a parent before its children): the kinematics of a
    whole robot loaded for one arm (a mobile manipulator's 48 joints, 8 of them under the
    hand) then computes only those, with the same placements and Jacobians.  A base is
    always kept (its kind tells the kernels the group vector's layout), and every joint
    when a frame is the centre of mass (:data:`COM_PARENT`: every body counts).
    """
    parents = tree.parents.tolist()
    if COM_PARENT in fparent.tolist():
        return tree, fparent
    needed: set = {0} if len(parents) and tree.kinds[0] >= FREEFLYER else set()
    for j in fparent.tolist():
        while j >= 0 and j not in needed:
            needed.add(j)
            j = parents[j]
    keep = sorted(needed)
    new = {old: i for i, old in enumerate(keep)}
    rows = np.array(keep, dtype=np.int64)
    tree = Tree(np.array([new[parents[j]] if parents[j] >= 0 else -1 for j in keep],
                         dtype=np.int64),
                np.ascontiguousarray(tree.placements[rows]), tree.kinds[rows],
                np.ascontiguousarray(tree.axes[rows]), tree.columns[rows])
    return tree, np.array([new[j] if j >= 0 else -1 for j in fparent.tolist()],
                          dtype=np.int64)
