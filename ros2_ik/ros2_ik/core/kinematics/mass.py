"""The centre of mass of the tree model (:mod:`.model`) and its Jacobian, compiled.

:func:`inertias_of` gives each joint of :func:`.model.tree_of`'s tree its body's mass
[kg] and centre of mass in the joint frame [m] (pinocchio's ``model.inertias``; a locked
joint's body moves with its fixed placement, the world's inertia is left out as
pinocchio's ``centerOfMass`` does).  :func:`center_of_mass` computes, from the joint
placements :func:`.forward.kinematics` wrote, the whole robot's centre of mass in the
world [m] and its Jacobian (3, nv) in the same tangent columns as the frames'
(``LOCAL_WORLD_ALIGNED``), written as a frame would be: ``oMf[f] = [I | c]``, ``Jf[f]``'s
linear rows (its angular rows zero).  Each joint's column is its frame-Jacobian column at
the centre of mass of the bodies it carries, weighted by their share of the total mass.
"""
from typing import Tuple

import numpy as np

from ros2_ik.core.kinematics.forward import joint_columns
from ros2_ik.core.kinematics.model import FIXED
from ros2_ik.core.runtime.compiled import jit  # deferred: numba loads with the first kernel


def inertias_of(model) -> Tuple[np.ndarray, np.ndarray]:
    """Return ``masses`` (k,) [kg] and ``levers`` (k, 3) [m] of joints 1..njoints-1.

    In :func:`.model.tree_of`'s order (tree joint ``i`` is model joint ``i + 1``): each
    joint's body mass and centre of mass in its joint frame.
    """
    inertias = [model.inertias[j] for j in range(1, model.njoints)]  # each a copy
    return (np.array([float(x.mass) for x in inertias]),
            np.array([x.lever for x in inertias], dtype=float).reshape(len(inertias), 3))


@jit
def center_of_mass(parents, kinds, columns, oMi, waxes, masses, levers, sub, oMf, Jf, f,
                   shift):  # pragma: no cover - compiled
    """Centre of mass into ``oMf[f]`` (``[I | c]``, c [m]), its Jacobian into ``Jf[f]``.

    ``oMi``/``waxes``: :func:`.forward.kinematics`' joint placements and world axes;
    ``masses`` (k,), ``levers`` (k, 3): :func:`inertias_of`; ``sub`` (k, 4) scratch
    (each subtree's mass-weighted centre and mass).  ``shift``: as in
    :func:`.forward.frame_jacobian`.  Returns the total mass [kg].
    """
    k = parents.shape[0]
    for i in range(k):
        m = masses[i]
        for r in range(3):
            sub[i, r] = m * (oMi[i, r, 0] * levers[i, 0] + oMi[i, r, 1] * levers[i, 1]
                             + oMi[i, r, 2] * levers[i, 2] + oMi[i, r, 3])
        sub[i, 3] = m
    for i in range(k - 1, -1, -1):  # children after their parents: subtrees upward
        p = parents[i]
        if p >= 0:
            for r in range(4):
                sub[p, r] += sub[i, r]
    total, cx, cy, cz = 0.0, 0.0, 0.0, 0.0
    for i in range(k):
        if parents[i] < 0:
            total += sub[i, 3]
            cx, cy, cz = cx + sub[i, 0], cy + sub[i, 1], cz + sub[i, 2]
    for r in range(4):
        for c in range(4):
            oMf[f, r, c] = 1.0 if r == c else 0.0
    oMf[f, 0, 3], oMf[f, 1, 3], oMf[f, 2, 3] = cx / total, cy / total, cz / total
    for r in range(6):
        for c in range(Jf.shape[2]):
            Jf[f, r, c] = 0.0
    for i in range(k):
        if kinds[i] == FIXED or sub[i, 3] == 0.0:
            continue
        joint_columns(kinds, columns, oMi, waxes, i, Jf, f, shift, sub[i, 3] / total,
                      sub[i, 0] / sub[i, 3] - oMi[i, 0, 3], sub[i, 1] / sub[i, 3] - oMi[i, 1, 3],
                      sub[i, 2] / sub[i, 3] - oMi[i, 2, 3])  # at the carried bodies' centre
    for r in range(3, 6):  # a point: no angular rate
        for c in range(Jf.shape[2]):
            Jf[f, r, c] = 0.0
    return total
