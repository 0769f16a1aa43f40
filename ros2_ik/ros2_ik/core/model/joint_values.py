"""One-variable joints and their values in pinocchio's configuration vector.

What a joint model's axis and motion are, a continuous joint's angle as pinocchio's
(cos, sin) pair and back, joint values written into a full configuration, and the names
of the joints outside their limits.
"""
from __future__ import annotations

import math
from typing import Dict, List, Mapping, Sequence

import numpy as np
import pinocchio as pin

from ros2_ik.core import errors


def outside_limits(names: Sequence[str], q: Sequence[float], lower: Sequence[float],
                   upper: Sequence[float]) -> List[str]:
    """Return the names of the joints of ``q`` outside ``[lower, upper]`` (NaN: outside)."""
    return [n for n, v, lo, hi in zip(names, q, lower, upper) if not lo <= v <= hi]


def motion_subspace(joint) -> np.ndarray:
    """Return a one-axis pinocchio joint model's motion subspace (6,): ``[v, w]``.

    At the joint's neutral value ((cos, sin) = (1, 0) for a continuous joint); for these
    joints it is the same at any value, in the joint's own frame.
    """
    data = joint.createData()
    joint.calc(data, np.array([1.0, 0.0]) if joint.nq == 2 else np.zeros(joint.nq))
    return np.asarray(data.S, dtype=float).reshape(-1)


def rotates(joint) -> bool:
    """Whether a one-axis pinocchio joint model turns about its axis (its value [rad]).

    Revolute and continuous joints do; a prismatic one moves along its axis [m]; a
    helical one does both (its value's 2 pi equivalents are other placements): no.
    Read from the motion subspace (:func:`motion_subspace`).
    """
    S = motion_subspace(joint)
    return bool(np.abs(S[:3]).max() == 0.0 and np.abs(S[3:]).max() > 0.0)


def unbounded_unaligned_axis(joint) -> np.ndarray:
    """Axis (3,) of a continuous joint about an unaligned axis: its motion subspace's angular part.

    This pinocchio's binding of that joint model has no ``axis`` (its bounded twin has).
    """
    return motion_subspace(joint)[3:6]


def to_pairs(values: list, continuous: list, out: list) -> list:
    """Append to ``out`` one value per joint in pinocchio's layout: (cos, sin) if continuous."""
    for v, cont in zip(values, continuous):
        if cont:
            out += (math.cos(v), math.sin(v))
        else:
            out.append(v)
    return out


def from_pairs(values: list, i: int, continuous: list, out: list) -> list:
    """Append to ``out`` one value per joint read from ``values[i:]`` (pinocchio's layout).

    A continuous joint's (cos, sin) pair becomes its angle in (-pi, pi].
    """
    for cont in continuous:
        if cont:
            out.append(math.atan2(values[i + 1], values[i]))
            i += 2
        else:
            out.append(values[i])
            i += 1
    return out


def locked_configuration(model: pin.Model, locked: Dict[int, float]) -> np.ndarray:
    """Full configuration (read-only): pinocchio's neutral, the ``locked`` joints' values set."""
    q = pin.neutral(model)
    for j, value in locked.items():
        write_joint(q, model.idx_qs[j], model.nqs[j] == 2, value)
    q.setflags(write=False)
    return q


def with_joint_value(model: pin.Model, q_full: np.ndarray, name: str,
                     value: float) -> np.ndarray:
    """Return a copy of the full configuration ``q_full`` with joint ``name`` at ``value``.

    ``value`` [rad] or [m]: a continuous joint's angle is written as its (cos, sin) pair.
    Only one-variable joints (revolute, continuous, prismatic) are named here; any other
    name raises :class:`errors.InvalidJoint` listing the valid ones.
    """
    return with_joint_values(model, q_full, {name: value})


def with_joint_values(model: pin.Model, q_full: np.ndarray,
                      values: Mapping[str, float]) -> np.ndarray:
    """Return a copy of ``q_full`` with each joint named in ``values`` at its value.

    As :func:`with_joint_value`, in one copy.
    """
    q = np.array(q_full, dtype=float)
    for name, value in values.items():
        jid = model.getJointId(name) if isinstance(name, str) else model.njoints
        if jid >= model.njoints or model.nvs[jid] != 1:
            raise errors.InvalidJoint(str(name), [model.names[j] for j in
                                                  range(1, model.njoints) if model.nvs[j] == 1])
        write_joint(q, model.idx_qs[jid], model.nqs[jid] == 2, float(value))
    return q


def write_joint(q: np.ndarray, iq: int, continuous: bool, value: float) -> None:
    if continuous:
        q[iq], q[iq + 1] = math.cos(value), math.sin(value)
    else:
        q[iq] = value
