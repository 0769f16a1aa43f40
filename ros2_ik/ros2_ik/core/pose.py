"""Pose targets and the pose error every solver and the verifier share.

Error convention: for the current placement ``T_world_frame = (R, p)`` and the
target ``T_world_target = (R_t, p_t)``, the 6-vector error is expressed in the
*target* frame's axes::

    e = [R_t^T (p - p_t),  R_t^T log3(R R_t^T)]      # [m, m, m, rad, rad, rad]

so ``weights`` (x, y, z, rx, ry, rz) and free axes (weight 0) refer to the target
frame: ``(1, 1, 1, 1, 1, 0)`` leaves rotation about the target's z axis free.
Tolerances apply to the Euclidean norm of the constrained components.

The two pose errors of ``T_target_frame = T_world_target^-1 T_world_frame``, each
defined once here and called by every Python caller (the compiled kernels use
:mod:`ros2_ik.core.kinematics.lie`'s ``log6`` and ``log3`` for the same two):

* :func:`split_error`, ``(t, log3(R))``: the frame's position in the target's axes [m]
  and the rotation vector [rad], the convention above.  Its position part is the real
  distance and both parts are in target axes, so tolerances, weights and free axes apply
  to it: the verifier (:meth:`CompiledPose.error`, :meth:`CompiledPose.errors`), the
  stacked residuals (``solvers.residuals``), lm's weighted / partial loop, the exact
  tolerance test of the pose loops, the servo's reported error.
* :func:`twist_error`, ``log6 = [v, w]`` in the frame's own axes: the twist whose
  Jacobian is the LOCAL frame Jacobian times ``Jlog6`` (close to the identity near the
  target), so a full isotropic pose needs no rotation of the Jacobian: lm's full-pose loop
  and its compiled form (``solvers.chain_kernel``), dls, the servo's pose step.  Its ``v``
  is not the position error: a converged ``|log6|`` is confirmed with :func:`split_error`.
"""
from __future__ import annotations

import math
import weakref
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import TYPE_CHECKING, Tuple

import numpy as np
import pinocchio as pin

from ros2_ik.core import errors
from ros2_ik.core.kinematics import reach
from ros2_ik.core.kinematics.frames import relative_angle
from ros2_ik.core.model.world import MAX_COORDINATE_M, within_world


def split_error(T_target_frame: pin.SE3) -> Tuple[np.ndarray, np.ndarray]:
    """``(t, log3(R))`` of ``T_target_frame``: position (3,) [m] in target axes, (3,) [rad].

    The verifier's convention (module docstring): position and rotation errors measured
    in the target frame's axes, where tolerances, weights and free axes are defined.  Two
    parts: the tolerance tests read them apart, the 6-vector is their concatenation.
    """
    return T_target_frame.translation, pin.log3(T_target_frame.rotation)


def twist_error(T_target_frame: pin.SE3) -> np.ndarray:
    """``log6(T_target_frame)`` (6,): ``[v [m], w [rad]]`` in the frame's own axes.

    The twist from the target to the frame, whose derivative is ``Jlog6`` times the LOCAL
    frame Jacobian (module docstring); ``w`` equals :func:`split_error`'s rotation,
    ``v`` differs from its position once the rotation error is not zero.
    """
    return pin.log6(T_target_frame).np


def _inverse(rows: list) -> np.ndarray:
    """Return the inverse (4, 4) of a rigid transform given as rows: ``[R^T, -R^T p]``."""
    (a, b, c, x), (d, e, f, y), (g, h, i, z) = rows[:3]
    return np.array([[a, d, g, -(a * x + d * y + g * z)],
                     [b, e, h, -(b * x + e * y + h * z)],
                     [c, f, i, -(c * x + f * y + i * z)],
                     [0.0, 0.0, 0.0, 1.0]])


#: Smallest tolerance [m or rad]: two FK evaluations of one q differ by ~1e-16, so a
#: tolerance near that would make SUCCESS a matter of floating-point rounding.
MIN_TOLERANCE = 1e-9
#: A pose target's default tolerances [m] and [rad] (the node's defaults too).
POSITION_TOLERANCE_M = 1e-4
ORIENTATION_TOLERANCE_RAD = 1e-3
#: The default weights: every axis alike.
UNIT_WEIGHTS = (1.0, 1.0, 1.0, 1.0, 1.0, 1.0)


_MAX_FLOAT = float(np.finfo(float).max)


def rotation_error(H: np.ndarray) -> float:
    """Return ``max |R R^T - I|`` of ``H``'s rotation block: -1 if det R < 0, nan if not finite.

    On Python floats: cheaper than the numpy expression for a 3x3 block.
    """
    (a, b, c, x), (d, e, f, y), (g, h, i, z), _ = H.tolist()
    if not math.isfinite(a + b + c + d + e + f + g + h + i + x + y + z + sum(_)):
        return math.nan
    if a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g) < 0:
        return -1.0
    return max(abs(a * a + b * b + c * c - 1.0), abs(d * d + e * e + f * f - 1.0),
               abs(g * g + h * h + i * i - 1.0), abs(a * d + b * e + c * f),
               abs(a * g + b * h + c * i), abs(d * g + e * h + f * i))


def rotation_errors(H: np.ndarray) -> np.ndarray:
    """:func:`rotation_error` of each of ``H`` (N, 4, 4) at once, as an (N,) array."""
    R = H[:, :3, :3]
    bad = np.abs(R @ R.transpose(0, 2, 1) - np.eye(3)).max(axis=(1, 2))
    bad = np.where(np.linalg.det(R) < 0, -1.0, bad)
    return np.where(np.isfinite(H).all(axis=(1, 2)), bad, np.nan)


def _tolerance_ok(value) -> bool:
    if type(value) is float:  # the usual case: one chained comparison (nan fails it)
        return MIN_TOLERANCE <= value <= _MAX_FLOAT
    try:
        return not isinstance(value, bool) and isinstance(value, (int, np.floating)) \
            and math.isfinite(value) and value >= MIN_TOLERANCE
    except OverflowError:  # an int beyond every float
        return False


if TYPE_CHECKING:  # pragma: no cover
    from ros2_ik.core.model.group import Group


@dataclass(frozen=True, init=False)
class PoseTarget:
    """Place frame ``frame`` at ``T_ref_target`` expressed in ``reference_frame``.

    ``reference_frame`` '' means the model's world frame.  ``weights`` (x, y, z,
    rx, ry, rz; >= 0, 0 frees an axis) weight the squared error the solver
    minimises; they are relative (scaled so that the largest is 1); success needs
    position error <= ``position_tolerance_m`` [m] and orientation error <=
    ``orientation_tolerance_rad`` [rad] on the weighted axes.

    ``T_ref_target`` is copied: the caller's SE3 changed later changes no target.  The
    copy's matrix, as validated, is ``H_ref_target`` (4, 4), read-only: what solves read.
    """

    frame: str
    T_ref_target: pin.SE3
    reference_frame: str = ""
    weights: Tuple[float, ...] = UNIT_WEIGHTS
    position_tolerance_m: float = POSITION_TOLERANCE_M
    orientation_tolerance_rad: float = ORIENTATION_TOLERANCE_RAD
    position_only: bool = False

    def __init__(self, frame: str, T_ref_target: pin.SE3, reference_frame: str = "",
                 weights: Tuple[float, ...] = UNIT_WEIGHTS,
                 position_tolerance_m: float = POSITION_TOLERANCE_M,
                 orientation_tolerance_rad: float = ORIENTATION_TOLERANCE_RAD,
                 position_only: bool = False):
        """Store the fields (one update of the instance's dict, as :class:`IKResult`), validate.

        The frozen dataclass's own ``__init__`` calls ``object.__setattr__`` per field,
        dearer on every target made.
        """
        self.__dict__.update(
            frame=frame, T_ref_target=T_ref_target, reference_frame=reference_frame,
            weights=weights, position_tolerance_m=position_tolerance_m,
            orientation_tolerance_rad=orientation_tolerance_rad, position_only=position_only)
        self.__post_init__()

    def __post_init__(self):
        """Validate numbers (raises :class:`errors.InvalidGoal`)."""
        if not isinstance(self.T_ref_target, pin.SE3):
            raise errors.InvalidGoal("T_ref_target must be a pinocchio.SE3")
        T = self.T_ref_target.copy()  # the caller may change its own later
        self.__dict__["T_ref_target"] = T
        H = T.homogeneous  # a new array: what is validated is what is solved
        bad = rotation_error(H)
        if math.isnan(bad):
            raise errors.InvalidGoal(f"T_ref_target has non-finite values:\n{H}")
        if bad > 1e-6 or bad < 0:
            raise errors.InvalidGoal("target rotation is not a rotation matrix "
                                     "(normalise the quaternion)")
        H.setflags(write=False)
        self.__dict__["H_ref_target"] = H
        if self.weights is not UNIT_WEIGHTS:  # the default needs no check
            if type(self.weights) is tuple and self.weights == UNIT_WEIGHTS:
                object.__setattr__(self, "weights", UNIT_WEIGHTS)  # no rebuild
            else:
                self._check_weights()
                object.__setattr__(self, "weights", tuple(float(x) for x in self.weights))
        for name, value in (("position_tolerance_m", self.position_tolerance_m),
                            ("orientation_tolerance_rad", self.orientation_tolerance_rad)):
            if not _tolerance_ok(value):
                raise errors.InvalidGoal(f"{name} must be finite and >= {MIN_TOLERANCE} "
                                         f"(below, FK rounding decides), got {value}")

    def _check_weights(self) -> None:
        try:
            w = np.asarray(self.weights, dtype=float)
        except (TypeError, ValueError):
            raise errors.InvalidGoal(f"weights must be 6 numbers, got {self.weights}") from None
        if w.shape != (6,) or not np.isfinite(w).all() or (w < 0).any():
            raise errors.InvalidGoal(
                f"weights must be 6 finite values >= 0 (x y z rx ry rz), got {self.weights}")
        if self.position_only:
            w = np.concatenate([w[:3], np.zeros(3)])
        if not (w > 0).any():
            raise errors.InvalidGoal("all weights are zero: nothing to solve for")

    @property
    def effective_weights(self) -> np.ndarray:
        """Weights (6,) with orientation zeroed when ``position_only``."""
        w = np.array(self.weights, dtype=float)
        if self.position_only:
            w[3:] = 0.0
        return w

    def compile(self, group: "Group") -> "CompiledPose":
        """Resolve frames against ``group``'s robot; raises InvalidFrame / InvalidGoal.

        The last group's resolution is found again while something holds it (a target
        and its matrix never change): a solve's, then the node's re-check of its answer,
        which holds it across the solve, read one resolution, not two.  Both references
        are weak: a kept target keeps no group alive, and a target and its resolution
        (which holds the target) form no reference cycle, so that a request's objects
        are freed when it returns, not by the garbage collector's next pass.
        """
        last = self.__dict__.get("_compiled")
        if last is not None and last[0]() is group:
            compiled = last[1]()
            if compiled is not None:
                return compiled
        compiled = CompiledPose(self, group)
        self.__dict__["_compiled"] = (weakref.ref(group), weakref.ref(compiled))
        return compiled

    def __getstate__(self) -> dict:
        """Return the fields without the kept resolution (a pickled target has no group)."""
        state = dict(self.__dict__)
        state.pop("_compiled", None)
        return state


@lru_cache(maxsize=256)
def _weight_info(weights: Tuple[float, ...], position_only: bool, pos_tol: float,
                 ori_tol: float) -> Tuple[np.ndarray, np.ndarray, np.ndarray, bool, bool, bool,
                                          bool, bool]:
    """(mask, sqrt_w, inv_tol, full_rotation, isotropic, unit, full_pose, twist) of a weight set.

    ``twist``: every axis weighted alike (:attr:`CompiledPose.twist`).
    """
    w = np.array(weights, dtype=float)
    if position_only:
        w[3:] = 0.0
    mask = w > 0  # before scaling: a 5e-324 weight must not underflow to a free axis
    w = w / w.max()  # only ratios matter; keeps 1e-300 or 1e300 weights well scaled
    tol = np.array([pos_tol] * 3 + [ori_tol] * 3)
    inv_tol = np.where(mask, 1.0 / tol, 0.0)
    for arr in (mask, inv_tol, w):
        arr.setflags(write=False)
    isotropic = bool(np.all(w[:3] == w[0]) and np.all(w[3:] == w[3]))
    sqrt_w = np.sqrt(w)
    sqrt_w.setflags(write=False)
    full_pose = bool(mask.all())
    return (mask, sqrt_w, inv_tol, bool(mask[3:].all()), isotropic, bool(np.all(w == 1.0)),
            full_pose, full_pose and isotropic and bool(sqrt_w[0] == sqrt_w[3]))


class CompiledPose:
    """A pose target resolved for one group: target in world, masks and scales."""

    def __init__(self, target: PoseTarget, group: "Group"):
        """Resolve frame names and precompute everything the inner loops need.

        The target is kept as matrices (:attr:`H_world_target`, :attr:`H_target_world`):
        each call into pinocchio's bindings costs microseconds more than the arithmetic
        with the caches cold (docs/design.md), so the SE3 objects are made only when read.
        """
        robot = group.robot
        self.target = target
        self.frame_id = robot.frame_id(target.frame)
        self.reduced_frame_id = group.reduced_frame_of(self.frame_id)
        #: ``T_world_target`` (4, 4), read-only.
        self.H_world_target = self._world_target(group, target.reference_frame,
                                                 target.H_ref_target)
        #: The first three rows of ``T_world_target`` as floats.
        self._rows = self.H_world_target.tolist()[:3]
        #: ``p_t`` [m] (:meth:`errors`).
        self._p_t = (self._rows[0][3], self._rows[1][3], self._rows[2][3])
        self._H_target_world = None  # made at first read (a closed form needs none)
        if group.has_base:
            self._check_within_world(group, target.frame)
        #: Every axis constrained and weighted alike: the pose loops' error is ``log6``
        #: (:func:`twist_error`), its weight one number.
        self.twist: bool
        (self.mask, self.sqrt_w, self.inv_tol, self.full_rotation, self.isotropic,
         self.unit_weights, self.full_pose, self.twist) = _weight_info(
            target.weights, target.position_only, target.position_tolerance_m,
            target.orientation_tolerance_rad)

    @property
    def H_target_world(self) -> np.ndarray:
        """``T_world_target^-1`` (4, 4), C-contiguous (the compiled attempts' argument).

        Made at first read: a request a closed form answers never reads it.
        """
        H = self._H_target_world
        if H is None:
            H = self._H_target_world = _inverse(self._rows)
        return H

    @property
    def world_target_rows(self) -> list:
        """The first three rows of ``T_world_target`` (4 floats each; do not change them)."""
        return self._rows

    @cached_property
    def T_world_target(self) -> pin.SE3:
        """Target placement in world (an SE3 made at first read)."""
        return pin.SE3(self.H_world_target)

    @cached_property
    def T_target_world(self) -> pin.SE3:
        """Its inverse (an SE3 made at first read)."""
        return pin.SE3(self.H_target_world)

    def _check_within_world(self, group: "Group", frame: str) -> None:
        """Refuse a whole-body target its base cannot follow (InvalidGoal naming the frame).

        A base must lie within :data:`.world.MAX_COORDINATE_M` of the world origin in
        each coordinate (a seed beyond is refused too), and the frame within its reach
        bound from the base (:func:`reach.base_distance_bound`): a target beyond both is
        no place the robot can be (no step of metres moves a base 1e300 m away).
        """
        p = self._p_t  # [m], floats: no SE3 made for the test
        reach_m = reach.base_distance_bound(group, self.frame_id)
        if reach_m is None or within_world([max(0.0, abs(v) - reach_m) for v in p]):
            return
        raise errors.InvalidGoal(
            f"target position of frame '{frame}' is {', '.join(f'{v:.6g}' for v in p)} m in "
            f"the world: a whole-body group's base must lie within {MAX_COORDINATE_M:g} m of "
            f"the world origin, and the frame within {reach_m:.3g} m of the base")

    @property
    def p_t(self) -> np.ndarray:
        """Target position in world (3,) [m]."""
        return self.T_world_target.translation

    @property
    def R_tT(self) -> np.ndarray:
        """Transpose of the target rotation in world (3, 3)."""
        return self.T_world_target.rotation.T

    @property
    def R6(self) -> np.ndarray:
        """Block-diagonal (6, 6) rotation world axes -> target axes."""
        R6 = np.zeros((6, 6))
        R6[:3, :3] = R6[3:, 3:] = self.R_tT
        return R6

    @staticmethod
    def _world_target(group: "Group", ref: str, H_ref_target: np.ndarray) -> np.ndarray:
        """``T_world_target`` (4, 4) of the target ``H_ref_target`` in frame ``ref``."""
        if not ref:
            return H_ref_target  # the target's validated copy, read-only
        robot = group.robot
        ref_id = robot.frame_id(ref)
        if group.moves_frame(ref_id):
            raise errors.InvalidGoal(
                f"reference frame '{ref}' is moved by the group joints; express the "
                f"target in a frame that stays fixed during the solve")
        H = group.locked_placement(ref_id).homogeneous @ H_ref_target
        H.setflags(write=False)
        return H

    def error(self, T_world_frame: pin.SE3) -> np.ndarray:
        """Return the unweighted pose error, shape (6,), in target axes, [m] and [rad]."""
        return np.concatenate(split_error(self.T_target_world * T_world_frame))

    def errors(self, T_world_frame: pin.SE3) -> Tuple[float, float]:
        """(position_error_m, orientation_error_rad) on the constrained axes.

        The norms of :meth:`error`'s two parts.  With every axis constrained they are the
        distance of the origins and the angle of ``R_t^T R`` (rotations keep lengths:
        :func:`~.kinematics.frames.relative_angle`), on floats: one call into the bindings
        instead of four.
        """
        if self.full_pose:
            X = T_world_frame.homogeneous.tolist()
            x, y, z = self._p_t
            return (math.hypot(X[0][3] - x, X[1][3] - y, X[2][3] - z),
                    relative_angle(self._rows, X))
        t, w = split_error(self.T_target_world * T_world_frame)
        t, w = t[self.mask[:3]], w[self.mask[3:]]
        return math.sqrt(t.dot(t)), math.sqrt(w.dot(w))

    def within_tolerance(self, pos_err: float, ori_err: float) -> bool:
        """Return True when both errors are within the target's tolerances."""
        t = self.target
        return pos_err <= t.position_tolerance_m and ori_err <= t.orientation_tolerance_rad
