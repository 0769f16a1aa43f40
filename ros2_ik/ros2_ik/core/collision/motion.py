"""Whether a joint-linear move keeps clear: the motion an executed solution makes.

A controller reaching one configuration from another (a one-point trajectory: every joint
on the same time law) moves the arm along the straight segment between them in joint
space.  :func:`first_contact` samples that segment every :data:`STEP` of the joint that
moves most and returns the first sample closer than the clearance.  Sampled, not proven:
between samples a point of the arm moves at most ``STEP`` times its distance from the
joints' axes (~1 cm at a 1 m lever).
"""
from __future__ import annotations

import math
from typing import NamedTuple, Optional

import numpy as np

from .checker import CollisionChecker, DistanceReport

#: Largest change of any joint between two samples [rad or m].
STEP = 0.01
#: How much closer than it started an arm already inside its clearance may come [m]: the
#: distance queries' noise (a rigid motion of the whole arm moves self distances ~1e-17).
SLACK = 1e-4


class Contact(NamedTuple):
    """The first sample of a move closer than its clearance."""

    fraction: float  # of the move, in (0, 1]
    report: DistanceReport  # its closest pair, signed padded distance [m]


def first_contact(checker: CollisionChecker, group, q_from: np.ndarray, q_to: np.ndarray,
                  clearance_m: float, step: float = STEP) -> Optional[Contact]:
    """Return the first sample of ``q_from -> q_to`` (group vectors) nearer than allowed.

    Allowed: ``clearance_m`` [m], or the distance at ``q_from`` less :data:`SLACK` when
    that is smaller (an arm that starts close may move away, not closer).  The end is
    sampled too.  None when every sample keeps it.
    """
    q_from, q_to = np.asarray(q_from, dtype=float), np.asarray(q_to, dtype=float)
    start = checker.min_distance(group.to_full_q(q_from)).distance_m
    allowed = min(clearance_m, start - SLACK)
    count = max(1, math.ceil(float(np.max(np.abs(q_to - q_from), initial=0.0)) / step))
    for k in range(1, count + 1):
        t = k / count
        report = checker.min_distance(group.to_full_q(q_from + t * (q_to - q_from)))
        if report.distance_m < allowed:
            return Contact(t, report)
    return None
