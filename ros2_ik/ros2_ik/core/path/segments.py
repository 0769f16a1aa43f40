"""The Cartesian segments of a path: interpolated poses and the checks between waypoints.

Between two waypoints the tip moves on a straight line (position linear in ``t``,
orientation slerped: ``R_a exp3(t log3(R_a^T R_b))``), while the joints move linearly
(what a controller does between two trajectory points).  :class:`Segments` checks the
joint motion against that line at a resolution the caller sets, with the independent
:func:`ros2_ik.core.verify.check` (pose within the path tolerances, joint limits, every
constraint and collision) at each point.
"""
from __future__ import annotations

import math
from typing import Dict, List, NamedTuple, Sequence, Tuple

import numpy as np
import pinocchio as pin

from ros2_ik.core import errors, terms
from ros2_ik.core.model.group import Group, TWO_PI
from ros2_ik.core.pose import CompiledPose, PoseTarget
from ros2_ik.core.runtime.per_object import PerObject
from ros2_ik.core.verify import ConstraintTolerance, check


def between(T_a: pin.SE3, T_b: pin.SE3, t: float) -> pin.SE3:
    """Return the pose a fraction ``t`` in [0, 1] of the way from ``T_a`` to ``T_b`` (same frame).

    Position linear, orientation on the shortest rotation (slerp).
    """
    R = T_a.rotation @ pin.exp3(t * pin.log3(T_a.rotation.T @ T_b.rotation))
    return pin.SE3(R, (1.0 - t) * T_a.translation + t * T_b.translation)


#: Most steps between two consecutive poses (:func:`steps_between`): a step that small
#: is a mistake (5e-3 m steps: 50 m), and each step is a pose made and checked.
MAX_STEPS = 10_000


def steps_between(T_a: pin.SE3, T_b: pin.SE3, step_m: float, step_rad: float,
                  names: Tuple[str, str] = ("step_m", "step_rad")) -> int:
    """Return how many equal steps from ``T_a`` to ``T_b`` keep each within the limits.

    None is over ``step_m`` [m] or ``step_rad`` [rad]; at least 1.  More than
    :data:`MAX_STEPS` raises ``InvalidArgument`` naming the step (``names``: the
    caller's names of ``step_m`` and ``step_rad``).
    """
    distance_m = float(np.linalg.norm(T_b.translation - T_a.translation))
    angle_rad = float(np.linalg.norm(pin.log3(T_a.rotation.T @ T_b.rotation)))
    counts = (distance_m / step_m, angle_rad / step_rad)
    for name, count, step, apart, unit in zip(names, counts, (step_m, step_rad),
                                              (distance_m, angle_rad), ("m", "rad")):
        if count - 1e-9 > MAX_STEPS:  # as the count below
            raise errors.InvalidArgument(
                f"{name}: {step:g} {unit} makes {count:.3g} steps between two poses "
                f"{apart:.3g} {unit} apart (at most {MAX_STEPS}); use a larger step")
    return max(1, math.ceil(counts[0] - 1e-9), math.ceil(counts[1] - 1e-9))


def cartesian_waypoints(T_start: pin.SE3, T_goals: Sequence[pin.SE3], max_step_m: float,
                        max_step_rad: float) -> List[pin.SE3]:
    """Densify the straight segments ``T_start -> T_goals[0] -> ...`` into waypoints.

    Each returned pose is at most ``max_step_m`` [m] and ``max_step_rad`` [rad] from the
    previous one (``T_start`` itself is not included; each goal is).  All poses are in one
    reference frame, the caller's.
    """
    for name, value in (("max_step_m", max_step_m), ("max_step_rad", max_step_rad)):
        if not (isinstance(value, (int, float)) and 0 < value < math.inf):
            raise errors.InvalidArgument(f"{name} must be > 0 and finite, got {value!r}")
    if not T_goals:
        raise errors.InvalidArgument("T_goals: empty path (give at least one goal pose)")
    out: List[pin.SE3] = []
    previous = T_start
    for T_goal in T_goals:
        count = steps_between(previous, T_goal, max_step_m, max_step_rad,
                              ("max_step_m", "max_step_rad"))
        out.extend(between(previous, T_goal, k / count) for k in range(1, count + 1))
        previous = T_goal
    return out


def path_wraps(group: Group) -> np.ndarray:
    """Return the joints (n,) bool whose path may pass from an angle to its 2 pi equivalent.

    Continuous joints and revolute joints with a range above 2 pi (not a prismatic joint's
    7 m: :attr:`Group.rotates`).  Not a range of
    exactly 2 pi (``group.wraps`` counts it, e.g. a UR elbow in [-pi, pi]): only its two
    ends are equivalents, so a path crossing from near +pi to near -pi cannot be placed
    inside the limits; there the joint moves the plain difference, the long way round.
    """
    mask = _PATH_WRAPS.get(group)
    if mask is None:
        mask = group.continuous | (group.rotates & ((group.upper - group.lower) > TWO_PI + 1e-6))
        mask.setflags(write=False)
        _PATH_WRAPS[group] = mask
    return mask


#: Per group, :func:`path_wraps`.
_PATH_WRAPS: PerObject = PerObject()


def wrapped_difference(group: Group, q_to: np.ndarray, q_from: np.ndarray) -> np.ndarray:
    """``q_to - q_from`` with the :func:`path_wraps` joints' differences taken into (-pi, pi].

    ``q_to`` may be (n,) or (k, n) and ``q_from`` (n,) or broadcastable: the joint motion
    between two configurations as the path counts it (a 2 pi equivalent is the same
    angle; which equivalent the path uses is chosen once for the whole path).
    """
    d = np.asarray(q_to, dtype=float) - np.asarray(q_from, dtype=float)
    if group.has_wrapping:
        w = path_wraps(group)
        d[..., w] -= np.round(d[..., w] * (1.0 / TWO_PI)) * TWO_PI
    return d


class Failure(NamedTuple):
    """Why a check failed: the text, and the joint or constraint it names ('' if none)."""

    reason: str
    joint: str = ""
    constraint: str = ""


class Segments:
    """The checks of the joint motion between consecutive waypoints of one path.

    ``targets``: the waypoints' compiled poses; between waypoints ``i - 1`` and ``i`` the
    tip is checked at ``counts[i] - 1`` evenly spaced interior points against the
    interpolated pose, with ``path_tolerance_m`` [m] and ``path_tolerance_rad`` [rad].
    Verdicts are cached per (segment, configuration pair).
    """

    def __init__(self, group: Group, targets: Sequence[CompiledPose],
                 constraints: Sequence[terms.Constraint], tolerance: ConstraintTolerance,
                 path_tolerance_m: float, path_tolerance_rad: float, check_step_m: float,
                 check_step_rad: float):
        """Count each segment's interior checks (none when waypoints are close enough)."""
        self.group, self.targets = group, targets
        self.constraints, self.tolerance = tuple(constraints), tolerance
        self.path_tolerance_m, self.path_tolerance_rad = path_tolerance_m, path_tolerance_rad
        self.counts = [1] + [
            steps_between(a.T_world_target, b.T_world_target, check_step_m, check_step_rad,
                          ("check_step_m", "check_step_rad"))
            for a, b in zip(targets[:-1], targets[1:])]
        self._cache: Dict[Tuple[int, bytes, bytes], Failure] = {}

    def needs_checks(self, i: int) -> bool:
        """Return True when the segment into waypoint ``i`` has interior points to check."""
        return self.counts[i] > 1

    def waypoint(self, i: int, q: np.ndarray, data: pin.Data) -> Tuple[float, float, Failure]:
        """Check ``q`` at waypoint ``i`` (its own tolerances): (pos [m], ori [rad], failure).

        ``failure.reason`` is '' when ``q`` holds.
        """
        ok, pos, ori, reason, violations = check(self.group, self.targets[i], q,
                                                 self.constraints, data, self.tolerance)
        return pos, ori, Failure("") if ok else self._failure(i, reason, violations, q)

    def segment(self, i: int, q_a: np.ndarray, q_b: np.ndarray, data: pin.Data) -> Failure:
        """Check the joint-linear motion ``q_a -> q_b`` into waypoint ``i`` (interior points).

        ``q_b`` is taken as given (the caller unwraps it near ``q_a``).  Returns a Failure
        with an empty reason when every interior point holds.
        """
        count = self.counts[i]
        if count <= 1:
            return Failure("")
        key = (i, q_a.tobytes(), q_b.tobytes())
        known = self._cache.get(key)
        if known is not None:
            return known
        T_a = self.targets[i - 1].T_world_target
        T_b = self.targets[i].T_world_target
        found = Failure("")
        for k in range(1, count):
            t = k / count
            pose = self._interpolated(i, between(T_a, T_b, t))
            q = q_a + t * (q_b - q_a)
            ok, _, _, reason, violations = check(self.group, pose, q, self.constraints, data,
                                                 self.tolerance)
            if not ok:
                found = self._failure(i, f"waypoint {i}: on the way from waypoint {i - 1} "
                                      f"(t={t:.2f}): " + reason, violations, q)
                break
        self._cache[key] = found
        return found

    def _interpolated(self, i: int, T_world: pin.SE3) -> CompiledPose:
        target = self.targets[i].target
        return PoseTarget(target.frame, T_world, "", target.weights, self.path_tolerance_m,
                          self.path_tolerance_rad, target.position_only).compile(self.group)

    def _failure(self, i: int, reason: str, violations, q: np.ndarray) -> Failure:
        constraint = violations[0].name if violations else ""
        joint = ""
        if not self.group.within_limits(q):
            joint = next(n for n, v, lo, hi in zip(self.group.joint_names, q,
                                                   self.group.lower, self.group.upper)
                         if not lo <= v <= hi)
        return Failure(reason, joint, constraint)


def unwind(group: Group, q_path: np.ndarray, seed: np.ndarray, from_seed: bool = False
           ) -> Tuple[np.ndarray, Failure]:
    """Make the :func:`path_wraps` joints continuous along ``q_path`` (m, n), in the limits.

    Each such joint's curve (consecutive differences taken modulo 2 pi) is shifted as a
    whole by a multiple of 2 pi: inside the joint's limits for the longest prefix, then
    nearest to ``seed``; with ``from_seed``, starting nearest to ``seed`` (the arm is
    there: the path cannot start on another equivalent).  A joint never winds: the path
    does not jump to another equivalent.  Returns the (possibly shortened) path and why
    it was shortened.
    """
    wraps = path_wraps(group)
    if not len(q_path) or not wraps.any():
        return q_path, Failure("")
    out = q_path[:1] + np.vstack([np.zeros((1, group.n)), np.cumsum(
        wrapped_difference(group, q_path[1:], q_path[:-1]), axis=0)])
    out[:, ~wraps] = q_path[:, ~wraps]
    keep, failure = len(out), Failure("")
    for j in np.flatnonzero(wraps):
        curve, fits = _placed(out[:, j], seed[j], group.lower[j], group.upper[j],
                              from_seed)
        out[:, j] = curve
        if fits < keep:
            name = group.joint_names[j]
            keep, failure = fits, Failure(
                f"waypoint {fits}: joint {name} would leave its limits [{group.lower[j]:.3g}"
                f", {group.upper[j]:.3g}] (the path turns it by more than its range)",
                joint=name)
    return out[:keep], failure


def _placed(curve: np.ndarray, seed: float, lower: float, upper: float, from_seed: bool
            ) -> Tuple[np.ndarray, int]:
    """``curve`` shifted by 2 pi k: longest prefix inside [lower, upper], then nearest seed.

    With ``from_seed`` (or no limits), the shift that starts nearest to the seed.
    """
    if from_seed or not (math.isfinite(lower) and math.isfinite(upper)):
        shifted = curve + round((seed - curve[0]) / TWO_PI) * TWO_PI
        outside = np.flatnonzero((shifted < lower) | (shifted > upper))
        return shifted, int(outside[0]) if len(outside) else len(curve)
    best = (-1, math.inf, curve)
    k_lo = math.floor((lower - curve[0]) / TWO_PI) - 1
    for k in range(k_lo, math.ceil((upper - curve[0]) / TWO_PI) + 2):
        shifted = curve + k * TWO_PI
        outside = np.flatnonzero((shifted < lower) | (shifted > upper))
        fits = int(outside[0]) if len(outside) else len(curve)
        score = (fits, -abs(shifted[0] - seed))
        if score > (best[0], -best[1]):
            best = (fits, abs(shifted[0] - seed), shifted)
    return best[2], best[0]
