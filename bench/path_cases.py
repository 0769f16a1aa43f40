"""The Cartesian paths of the path benchmark: lines, arcs, circles and joint motions.

Each case starts at the tip pose of a random configuration ``q_start`` (within the limits,
a margin inside them) and is a list of ``pin.SE3`` tip poses in the world frame.  Lines,
arcs and circles keep the start orientation (``fixed``) or turn the tool about its own z
axis along the way (``rotating``); their feasibility is not known in advance.  ``joint``
cases are the tip poses of a joint-linear motion from ``q_start``: a continuous joint path
exists by construction (continuously feasible paths).
"""
from __future__ import annotations

import math
from typing import Callable, Dict, List, NamedTuple

import numpy as np
import pinocchio as pin

#: Waypoint spacing of the geometric paths [m] and [rad] (the issue's 2 mm lines).
SPACING_M, SPACING_RAD = 0.002, 0.02


class Case(NamedTuple):
    """One path: its kind, the tip poses (world), and the configuration it starts from."""

    kind: str
    poses: List[pin.SE3]
    q_start: np.ndarray
    feasible: bool  # a continuous joint path is known to exist


def start_configuration(group, rng: np.random.Generator) -> np.ndarray:
    """Return a random configuration 10 % of each range inside the limits (continuous: +-pi)."""
    lo = np.where(group.continuous, -math.pi, group.lower)
    hi = np.where(group.continuous, math.pi, group.upper)
    margin = 0.1 * (hi - lo)
    return lo + margin + rng.random(group.n) * (hi - lo - 2 * margin)


def _unit(rng: np.random.Generator) -> np.ndarray:
    v = rng.normal(size=3)
    return v / np.linalg.norm(v)


def _turn(T0: pin.SE3, p: np.ndarray, angle: float, rotating: bool) -> pin.SE3:
    """Pose at ``p`` with T0's orientation, turned by ``angle`` about its z when rotating."""
    R = T0.rotation @ pin.exp3(np.array([0.0, 0.0, angle])) if rotating else T0.rotation
    return pin.SE3(R, p)


def line(T0: pin.SE3, rng: np.random.Generator, rotating: bool) -> List[pin.SE3]:
    """Return a 20 cm straight line in a random direction (rotating: 1 rad about the tool z)."""
    end = T0.translation + 0.2 * _unit(rng)
    count = 100
    return [_turn(T0, T0.translation + (k / count) * (end - T0.translation),
                  k / count if rotating else 0.0, rotating) for k in range(count + 1)]


def arc(T0: pin.SE3, rng: np.random.Generator, rotating: bool,
        sweep: float = math.pi / 2, radius: float = 0.1) -> List[pin.SE3]:
    """Return an arc of ``sweep`` [rad] and ``radius`` [m] through T0.

    Rotating: the tool turns with it about its z.
    """
    u = _unit(rng)
    w = np.cross(u, _unit(rng))
    w /= np.linalg.norm(w)
    center = T0.translation - radius * u
    count = max(2, math.ceil(sweep * radius / SPACING_M), math.ceil(
        sweep / SPACING_RAD) if rotating else 2)
    out = []
    for k in range(count + 1):
        a = sweep * k / count
        out.append(_turn(T0, center + pin.exp3(w * a) @ (radius * u), a, rotating))
    return out


def circle(T0: pin.SE3, rng: np.random.Generator, rotating: bool) -> List[pin.SE3]:
    """Return a full circle of 8 cm radius through T0."""
    return arc(T0, rng, rotating, sweep=2 * math.pi, radius=0.08)


def joint_motion(group, q_start: np.ndarray, rng: np.random.Generator,
                 count: int = 100) -> List[pin.SE3]:
    """Tip poses along q_start -> q_end, joint-linear, each joint moving up to 1 rad."""
    lo = np.where(group.continuous, -np.inf, group.lower)
    hi = np.where(group.continuous, np.inf, group.upper)
    q_end = np.clip(q_start + rng.uniform(-1.0, 1.0, group.n), lo, hi)
    return [group.fk(q_start + (k / count) * (q_end - q_start), group.tip)
            for k in range(count + 1)]


GEOMETRIC: Dict[str, Callable] = {
    "line": lambda T, r: line(T, r, False), "line_rot": lambda T, r: line(T, r, True),
    "arc": lambda T, r: arc(T, r, False), "arc_rot": lambda T, r: arc(T, r, True),
    "circle": lambda T, r: circle(T, r, False), "circle_rot": lambda T, r: circle(T, r, True),
}


def cases(group, rng: np.random.Generator, per_kind: int, joint_paths: int) -> List[Case]:
    """``per_kind`` paths of each geometric kind and ``joint_paths`` joint motions."""
    out = []
    for kind, make in GEOMETRIC.items():
        for _ in range(per_kind):
            q = start_configuration(group, rng)
            out.append(Case(kind, make(group.fk(q, group.tip), rng), q, False))
    for _ in range(joint_paths):
        q = start_configuration(group, rng)
        out.append(Case("joint", joint_motion(group, q, rng), q, True))
    return out
