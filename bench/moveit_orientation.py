"""MoveIt's OrientationConstraint written again from its source: the independent judge.

``kinematic_constraint.cpp``: ``calcEulerAngles`` with its singular branches,
``normalizeAbsoluteAngle``, ``OrientationConstraint::decide`` (Eigen's AngleAxis for the
rotation vector), on ``diff = R_desired^T R_link``.  Not ros2_ik's code: the tests
(``test_rotation_box.py`` and those that import it from there), ``make
bench-rotation-box`` and ``constrained_check`` judge the core's RotationBoxConstraint by it.
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np
import pinocchio as pin

EPS = np.finfo(float).eps
#: MoveIt's parameterization codes (moveit_msgs/OrientationConstraint).
XYZ_EULER_ANGLES, ROTATION_VECTOR = 0, 1


def normalize_absolute_angle(angle: float) -> float:
    """``|angle|`` brought into [0, pi] [rad], as MoveIt's ``normalizeAbsoluteAngle``."""
    a = math.fmod(abs(angle), 2 * math.pi)
    return min(2 * math.pi - a, a)


def calc_euler_angles(R: np.ndarray):
    """``(angles (3,) [rad], regular)``: MoveIt's ``calcEulerAngles`` of ``R``."""
    rsum = math.sqrt((R[0, 0] ** 2 + R[0, 1] ** 2 + R[1, 2] ** 2 + R[2, 2] ** 2) / 2)
    pitch = math.atan2(R[0, 2], rsum)
    if rsum > 4 * EPS:
        return np.array([math.atan2(-R[1, 2], R[2, 2]), pitch, math.atan2(-R[0, 1], R[0, 0])]), \
            True
    if R[0, 2] > 0:
        return np.array([math.atan2(R[1, 0] + R[2, 1], R[1, 1] - R[2, 0]), pitch, 0.0]), False
    return np.array([math.atan2(R[2, 1] - R[1, 0], R[1, 1] + R[2, 0]), pitch, 0.0]), False


def components(R_diff: np.ndarray, tol: Sequence[float], parameterization: int) -> np.ndarray:
    """Return the three magnitudes [rad] ``decide`` compares with the tolerances ``tol``."""
    tol = [abs(t) for t in tol]
    if parameterization == XYZ_EULER_ANGLES:
        xyz, regular = calc_euler_angles(R_diff)
        if not regular and normalize_absolute_angle(xyz[0]) > tol[2] + EPS:
            xyz[2], xyz[0] = xyz[0], 0.0
        return np.array([normalize_absolute_angle(v) for v in xyz])
    aa = pin.AngleAxis(R_diff)
    return np.abs(aa.axis * aa.angle)


def moveit_decide(R_diff: np.ndarray, tol, parameterization: int) -> bool:
    """Return MoveIt's OrientationConstraint::decide on ``diff = R_desired^T R_link``."""
    xyz = components(R_diff, tol, parameterization)
    tol = [abs(t) for t in tol]
    return bool(xyz[2] < tol[2] + EPS and xyz[1] < tol[1] + EPS and xyz[0] < tol[0] + EPS)


def excess(R_diff: np.ndarray, tol, parameterization: int) -> float:
    """How far [rad] the farthest component lies beyond its tolerance (0 inside)."""
    xyz = components(R_diff, tol, parameterization)
    return float(max(0.0, *(v - abs(t) for v, t in zip(xyz, tol))))


def rotation_inside(tol: Sequence[float], factors: Sequence[float],
                    rotation_vector: bool) -> np.ndarray:
    """Return a rotation whose components lie inside the box ``tol`` [rad].

    Component k is ``factors[k]`` (``|f| < 1``) of its tolerance (of 1 rad when wider):
    XYZ Euler angles ``Rx Ry Rz``, or a rotation vector, halved (inside a box of pi too).
    """
    v = np.array([f * min(t, 1.0) for f, t in zip(factors, tol)])
    if rotation_vector:
        return pin.exp3(v / 2)
    return np.linalg.multi_dot([pin.exp3(a * e) for a, e in zip(v, np.eye(3))])
