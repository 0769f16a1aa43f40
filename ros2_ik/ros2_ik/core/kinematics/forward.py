"""Forward kinematics and frame Jacobians of the tree model (:mod:`.model`), compiled.

Arrays of a :class:`~.model.Tree`: ``parents`` (k,) each joint's parent (-1: the world,
a parent before its children), ``placements`` (k, 4, 4) ``T_parent_joint`` [m],
``kinds`` (k,) fixed, revolute, prismatic, free-flyer or planar (:data:`.model.FIXED`,
...), ``axes`` (k, 3) unit axes in the joint frame, ``columns`` (k,) index of the joint's
(first) value in the group vector ``q`` (nq,) [rad or m].  Frames: ``fparent`` (f,) the
joint carrying each frame (-1: the world), ``fplace`` (f, 4, 4) ``T_joint_frame``.
Jacobians are ``LOCAL_WORLD_ALIGNED`` (the package's convention,
:mod:`ros2_ik.core.kinematics`), in tangent columns (nv,): a free-flyer's six
(pinocchio's: linear then angular velocity in the base frame), a planar base's three
(``vx vy`` in the base frame, ``omega``), then one per 1-DoF joint.  The joint kinds are
told apart here alone (placement, Jacobian columns) and in :mod:`.configuration`
(integrate, difference, limits).

Written out by index, without array views or calls but inlined ones: in numba each call
passes its arrays as structs and each view counts a reference, and every iteration of
every attempt calls :func:`kinematics`.
"""
import math

import numpy as np

from ros2_ik.core.runtime.compiled import jit  # deferred: numba loads with the first kernel
from ros2_ik.core.kinematics.lie import quaternion_matrix
from ros2_ik.core.kinematics.model import COM_PARENT, FIXED, FREEFLYER, PLANAR, PRISMATIC, \
    REVOLUTE


@jit(inline="always")
def placed(oMi, p, local, i, out):  # pragma: no cover - compiled
    """``out[i] = oMi[p] @ local[i]`` (``local[i]`` when ``p < 0``: on the world), by index."""
    for r in range(3):
        if p < 0:
            for c in range(4):
                out[i, r, c] = local[i, r, c]
        else:
            a0, a1, a2 = oMi[p, r, 0], oMi[p, r, 1], oMi[p, r, 2]
            for c in range(4):
                out[i, r, c] = a0 * local[i, 0, c] + a1 * local[i, 1, c] + a2 * local[i, 2, c]
            out[i, r, 3] += oMi[p, r, 3]
    out[i, 3, 0], out[i, 3, 1], out[i, 3, 2], out[i, 3, 3] = 0.0, 0.0, 0.0, 1.0


@jit(inline="always")
def joints(parents, placements, kinds, axes, columns, q, oMi,
           waxes):  # pragma: no cover - compiled
    """Joint placements ``T_world_joint`` into ``oMi`` (k, 4, 4), world axes into ``waxes``.

    ``waxes`` (k, 3): each joint's unit axis in world axes (the same before and after the
    joint's own motion).
    """
    for i in range(parents.shape[0]):
        placed(oMi, parents[i], placements, i, oMi)
        x, y, z = axes[i, 0], axes[i, 1], axes[i, 2]
        for r in range(3):
            waxes[i, r] = oMi[i, r, 0] * x + oMi[i, r, 1] * y + oMi[i, r, 2] * z
        kind = kinds[i]
        if kind == PRISMATIC:
            v = q[columns[i]]
            for r in range(3):
                oMi[i, r, 3] += waxes[i, r] * v
        elif kind == REVOLUTE:  # the rotation times Rodrigues' rotation of v about (x, y, z)
            v = q[columns[i]]
            c, s = math.cos(v), math.sin(v)
            t = 1.0 - c
            R00, R01, R02 = c + t * x * x, t * x * y - s * z, t * x * z + s * y
            R10, R11, R12 = t * x * y + s * z, c + t * y * y, t * y * z - s * x
            R20, R21, R22 = t * x * z - s * y, t * y * z + s * x, c + t * z * z
            moved(oMi, i, 0.0, 0.0, 0.0, R00, R01, R02, R10, R11, R12, R20, R21, R22)
        elif kind == FREEFLYER:  # x y z, then the unit quaternion qx qy qz qw
            c = columns[i]
            R00, R01, R02, R10, R11, R12, R20, R21, R22 = quaternion_matrix(
                q[c + 3], q[c + 4], q[c + 5], q[c + 6])
            moved(oMi, i, q[c], q[c + 1], q[c + 2], R00, R01, R02, R10, R11, R12, R20, R21,
                  R22)
        elif kind == PLANAR:  # x y theta: about the joint's z axis
            c = columns[i]
            co, si = math.cos(q[c + 2]), math.sin(q[c + 2])
            moved(oMi, i, q[c], q[c + 1], 0.0, co, -si, 0.0, si, co, 0.0, 0.0, 0.0, 1.0)


@jit(inline="always")
def moved(oMi, i, px, py, pz, R00, R01, R02, R10, R11, R12, R20, R21,
          R22):  # pragma: no cover - compiled
    """``oMi[i] = oMi[i] @ [R | p]``: a joint's motion after its placement, by index."""
    for r in range(3):
        n0, n1, n2 = oMi[i, r, 0], oMi[i, r, 1], oMi[i, r, 2]
        oMi[i, r, 3] += n0 * px + n1 * py + n2 * pz
        oMi[i, r, 0] = n0 * R00 + n1 * R10 + n2 * R20
        oMi[i, r, 1] = n0 * R01 + n1 * R11 + n2 * R21
        oMi[i, r, 2] = n0 * R02 + n1 * R12 + n2 * R22


@jit(inline="always")
def frame_jacobian(parents, kinds, columns, oMi, waxes, oMf, f, p, Jf,
                   shift):  # pragma: no cover - compiled
    """``LOCAL_WORLD_ALIGNED`` Jacobian (6, nv) of frame ``oMf[f]`` on joint ``p`` into ``Jf[f]``.

    Each joint's columns at the frame's origin (:func:`joint_columns`); zero for the
    joints not between the frame and the root.  ``shift``: the group vector's length less the
    tangent's (1 with a free-flyer, else 0), taken off a 1-DoF joint's column.
    """
    for r in range(6):
        for c in range(Jf.shape[2]):
            Jf[f, r, c] = 0.0
    tx, ty, tz = oMf[f, 0, 3], oMf[f, 1, 3], oMf[f, 2, 3]
    j = p
    while j >= 0:  # the joints between the frame and the root: the Jacobian's columns
        joint_columns(kinds, columns, oMi, waxes, j, Jf, f, shift, 1.0, tx - oMi[j, 0, 3],
                      ty - oMi[j, 1, 3], tz - oMi[j, 2, 3])
        j = parents[j]


@jit(inline="always")
def joint_columns(kinds, columns, oMi, waxes, j, Jf, f, shift, w, dx, dy,
                  dz):  # pragma: no cover - compiled
    """Joint ``j``'s columns of ``Jf[f]``: the rate of a point ``d`` from it, times ``w``.

    ``d = (dx, dy, dz)`` [m] in world axes from the joint's origin.  A revolute joint's
    column is ``w [a x d, a]``, a prismatic one's ``w [a, 0]`` (``a`` its world axis); a
    base's are prismatic along its own (moved) x, y (and z) axes, then revolute about
    them (a planar base: about z alone).  ``shift``: :func:`frame_jacobian`'s.
    """
    kind = kinds[j]
    if kind == REVOLUTE or kind == PRISMATIC:
        column(Jf, f, columns[j] - shift, kind == PRISMATIC, w * waxes[j, 0],
               w * waxes[j, 1], w * waxes[j, 2], dx, dy, dz)
    elif kind != FIXED:  # a base: columns[j] is its first tangent column too
        c = columns[j]
        for a in range(3 if kind == FREEFLYER else 2):  # along x, y (z): prismatic
            column(Jf, f, c + a, True, w * oMi[j, 0, a], w * oMi[j, 1, a], w * oMi[j, 2, a],
                   0.0, 0.0, 0.0)
        for a in range(0 if kind == FREEFLYER else 2, 3):  # about x, y, z (planar: z)
            column(Jf, f, c + a + (3 if kind == FREEFLYER else 0), False, w * oMi[j, 0, a],
                   w * oMi[j, 1, a], w * oMi[j, 2, a], dx, dy, dz)


@jit(inline="always")
def column(Jf, f, c, prismatic, ax, ay, az, dx, dy, dz):  # pragma: no cover - compiled
    """Column ``c`` of ``Jf[f]``: ``[a, 0]`` (prismatic) or ``[a x d, a]`` (revolute)."""
    if prismatic:
        Jf[f, 0, c], Jf[f, 1, c], Jf[f, 2, c] = ax, ay, az
    else:
        Jf[f, 0, c] = ay * dz - az * dy
        Jf[f, 1, c] = az * dx - ax * dz
        Jf[f, 2, c] = ax * dy - ay * dx
        Jf[f, 3, c], Jf[f, 4, c], Jf[f, 5, c] = ax, ay, az


@jit
def center_of_mass(parents, placements, kinds, columns, oMi, waxes, sub, oMf, Jf, f,
                   shift):  # pragma: no cover - compiled
    """Centre of mass into ``oMf[f]`` (``[I | c]``, c [m]), its Jacobian into ``Jf[f]``.

    The whole tree's bodies (``placements[:, 3]``: centre in the joint frame [m], mass
    [kg]) placed by :func:`joints`' ``oMi``; the Jacobian (``waxes``: the joints' world
    axes) in tangent columns, its angular rows zero: each joint's columns
    (:func:`joint_columns`) at the centre of the bodies it carries, weighted by their
    share of the mass.  ``sub`` (k, 4) scratch: each subtree's mass-weighted centre and
    mass.  ``shift``: :func:`frame_jacobian`'s.  Returns the total mass [kg].
    """
    k = parents.shape[0]
    for i in range(k):
        m = placements[i, 3, 3]
        x, y, z = placements[i, 3, 0], placements[i, 3, 1], placements[i, 3, 2]
        for r in range(3):
            sub[i, r] = m * (oMi[i, r, 0] * x + oMi[i, r, 1] * y + oMi[i, r, 2] * z
                             + oMi[i, r, 3])
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


@jit
def kinematics(parents, placements, kinds, axes, columns, q, fparent, fplace, oMi, oMf,
               Jf, waxes):  # pragma: no cover - compiled
    """Joint placements ``oMi`` (k, 4, 4), frame placements ``oMf`` (f, 4, 4), Jacobians.

    ``Jf`` (f, 6, nv): each frame's ``LOCAL_WORLD_ALIGNED`` Jacobian (:func:`frame_jacobian`)
    in tangent columns; ``waxes`` (k, 3) receives the joints' world axes.  A frame on
    :data:`.model.COM_PARENT` is the whole robot's centre of mass (:func:`center_of_mass`,
    on the unpruned tree).
    """
    joints(parents, placements, kinds, axes, columns, q, oMi, waxes)
    shift = q.shape[0] - Jf.shape[2]
    com = -1
    for f in range(fparent.shape[0]):  # the frames on tree joint p (-1: the world)
        p = fparent[f]
        if p == COM_PARENT:
            com = f
            continue
        placed(oMi, p, fplace, f, oMf)
        frame_jacobian(parents, kinds, columns, oMi, waxes, oMf, f, p, Jf, shift)
    if com >= 0:  # the centre of mass, once, copied to any other frame naming it
        center_of_mass(parents, placements, kinds, columns, oMi, waxes,
                       np.empty((parents.shape[0], 4)), oMf, Jf, com, shift)
        for f in range(com):
            if fparent[f] == COM_PARENT:
                oMf[f], Jf[f] = oMf[com], Jf[com]


@jit(inline="always")
def to_local(oMf, f, Jf):  # pragma: no cover - compiled
    """Rotate ``Jf[f]`` into frame ``f``'s own axes in place: ``LOCAL`` (``R_WF^T`` per half)."""
    for c in range(Jf.shape[2]):
        lx, ly, lz = Jf[f, 0, c], Jf[f, 1, c], Jf[f, 2, c]
        wx, wy, wz = Jf[f, 3, c], Jf[f, 4, c], Jf[f, 5, c]
        for r in range(3):
            Jf[f, r, c] = oMf[f, 0, r] * lx + oMf[f, 1, r] * ly + oMf[f, 2, r] * lz
            Jf[f, r + 3, c] = oMf[f, 0, r] * wx + oMf[f, 1, r] * wy + oMf[f, 2, r] * wz
