"""A kinematic group: the joints a solve moves, every other joint locked.

Group vectors ``q`` (shape ``(n,)``) hold one value per group joint in model order:
radians for revolute and continuous joints, metres for prismatic ones.  Pinocchio's
full configuration (``(nq,)``, continuous joints as cos/sin) and the *reduced* model
(only the group's joints, everything else welded at its locked value, like Drake's
``Joint::Lock``) are reached through index arrays computed once here.
"""
from __future__ import annotations

import copy
import math
import threading
from operator import le
from typing import Dict, List, Mapping, Optional, Protocol, Sequence, Tuple

import numpy as np
import pinocchio as pin

from ros2_ik.core import errors
from ros2_ik.core.model.joint_values import from_pairs, locked_configuration, rotates, \
    to_pairs, write_joint
from ros2_ik.core.model.reduced import LockedData, ModelTables, angle_model, model_tables, \
    placed_model, reduced_model

TWO_PI = 2.0 * math.pi
_INV_TWO_PI = 1.0 / TWO_PI
_F64 = np.dtype(float)
#: Below this distance to the reference [rad], round(d / 2 pi) is 0 (3 / 2 pi ~ 0.48).
_NO_TURN = 3.0


class RobotModel(Protocol):
    """What a group needs of its robot (:class:`ros2_ik.core.model.robot.Robot` provides it).

    A protocol, not an import: ``robot`` builds groups, so ``group`` must not import it.
    """

    @property
    def model(self) -> pin.Model:
        """Return the full pinocchio model."""

    def frame_id(self, name: str) -> int:
        """Return the id of frame ``name`` in :attr:`model`."""

    def group(self, base: Optional[str] = None, tip: Optional[str] = None,
              joints: Optional[Sequence[str]] = None,
              locked: Optional[Mapping[str, float]] = None) -> "Group":
        """Return the group of ``joints`` (or the chain ``base`` -> ``tip``), others locked."""

    def whole_body(self, tip: Optional[str] = None, joints: Optional[Sequence[str]] = None,
                   locked: Optional[Mapping[str, float]] = None, base_bounds=None) -> "Group":
        """Return the whole-body group of the root joint and ``joints``, others locked."""

    @property
    def mimics(self) -> Mapping:
        """Return the URDF's mimic joints by name (``Mimic``: leader, multiplier, offset)."""

    def followers(self, values: Mapping[str, float]) -> Dict[str, float]:
        """Return the mimic joints ``values`` lead but do not name, at their values."""

    def joint_limits(self, name: str) -> Tuple[float, float]:
        """Return one-axis joint ``name``'s position limits [rad or m]."""


class Group:
    """Joints moved by a solve; built by :meth:`Robot.group`."""

    #: The mimic joints the group moves with their leaders (``Coupling``: follower and
    #: leader ids of the full model, multiplier, offset); () for most groups.
    coupled: Tuple = ()
    _followers: Tuple[int, ...] = ()
    _coupled_q: Tuple = ()
    _coupled_v: Tuple = ()

    @property
    def moving_ids(self) -> Tuple[int, ...]:
        """Ids of the full model's joints the group moves: its own, then the coupled ones."""
        return self.joint_ids + self._followers if self._followers else self.joint_ids

    def __init__(self, robot: RobotModel, base: str, tip: str, joint_ids: Tuple[int, ...],
                 locked: Dict[int, float], coupled: Tuple = ()):
        """Precompute limits, index maps and the reduced model (internal).

        ``coupled``: the mimic joints the group moves with their leaders
        (:meth:`Robot.coupled`, ``Coupling`` tuples): the reduced models hold them as
        pinocchio mimic joints, :meth:`to_full_q` sets them.
        """
        model = robot.model
        self.robot = robot
        self.coupled = tuple(coupled)
        self._followers = tuple(c.follower for c in self.coupled)
        self.base = base
        self.tip = tip
        self.joint_ids = tuple(int(j) for j in joint_ids)
        self.joint_names = tuple(model.names[j] for j in self.joint_ids)
        #: Position of each group joint's name in :attr:`joint_names` (do not change it).
        self.joint_index: Dict[str, int] = {name: i for i, name in enumerate(self.joint_names)}
        self.locked = {model.names[j]: v for j, v in locked.items()}
        self.continuous = np.array([model.nqs[j] == 2 for j in self.joint_ids])
        #: Per group joint, whether its value is an angle [rad] (revolute, continuous)
        #: rather than a length [m] (prismatic): only an angle has 2 pi equivalents.
        self.rotates = np.array([rotates(model.joints[j]) for j in self.joint_ids])
        self.lower, self.upper = self._limits(model)
        self.velocity_limits = np.array([model.velocityLimit[model.idx_vs[j]]
                                         for j in self.joint_ids])
        #: Per group joint [rad/s^2 or m/s^2] (joint_limits.yaml's); inf: none known.
        self.acceleration_limits = np.array([robot.acceleration_limits[model.idx_vs[j]]
                                             for j in self.joint_ids], dtype=float)
        self._derive()
        self._build_full_maps(model, locked)
        self._build_reduced(model)
        # The group's coordinates in the full configuration as one slice, when they are a
        # block and the group vector is them (no (cos, sin) pair): to_full_q's fast path.
        # A block with (cos, sin) pairs takes the reduced coordinates (to_full_q's second
        # fast path: a list, no index array).
        iq = self.iq_full.tolist()
        self._iq_slice = slice(iq[0], iq[-1] + 1) if (
            iq and iq == list(range(iq[0], iq[-1] + 1))) else None
        # Every joint name of the model (seeds may name joints outside the group).
        self._model_joint_names = frozenset(model.names[1:])

    # ------------------------------------------------------------------ build
    def _derive(self) -> None:
        """From :attr:`continuous` and the limits: wrapping, search limits, caches."""
        self.wraps = self._wrapping()
        # Limits the solvers clamp to: none on wrapping joints (wrapped at the end).
        self.search_lower = np.where(self.wraps, -np.inf, self.lower)
        self.search_upper = np.where(self.wraps, np.inf, self.upper)
        for arr in (self.continuous, self.rotates, self.lower, self.upper,
                    self.velocity_limits, self.acceleration_limits, self.wraps,
                    self.search_lower, self.search_upper):
            arr.setflags(write=False)
        self._local = threading.local()
        self._wrap_indices = np.flatnonzero(self.wraps)
        self._lower_list, self._upper_list = self.lower.tolist(), self.upper.tolist()
        self._wrap_list = self._wrap_indices.tolist()
        #: Whether any joint wraps (continuous, or revolute with a range >= 2 pi).
        self.has_wrapping = bool(self._wrap_list)
        self._continuous_list = self.continuous.tolist()
        # Box of random_configuration (continuous joints: [-pi, pi]).
        self._sample_lo = np.where(self.continuous, -math.pi, self.lower)
        self._sample_span = np.where(self.continuous, math.pi, self.upper) - self._sample_lo
        self._locked_data: Optional[LockedData] = None
        self._moves: Dict[int, bool] = {}
        self._moves_chain: Dict[int, Tuple[bool, bool]] = {}  # :meth:`_moved`
        self._upstream: Optional[Tuple[str, ...]] = None
        self._carrying_ids: Optional[frozenset] = None
        self._above_ids: Optional[frozenset] = None
        self._source_motion = None  # None: not computed; False: none (source_motion)
        #: The group this one was held from (itself unless :meth:`held_at` made it) and the
        #: joint ids whose locked values differ from that group's (:meth:`chain_owner`).
        self._source: "Group" = self
        self._changed: frozenset = frozenset()

    def _wrapping(self) -> np.ndarray:
        """Per coordinate, whether every angle has an equivalent inside its limits.

        Continuous joints, and revolute ones with a range >= 2 pi (:attr:`rotates`: a
        prismatic joint's 7 m range has no equivalents).
        """
        return self.continuous | (self.rotates & ((self.upper - self.lower) >= TWO_PI - 1e-9))

    def _limits(self, model: pin.Model) -> Tuple[np.ndarray, np.ndarray]:
        lower, upper = [], []
        for j, cont in zip(self.joint_ids, self.continuous):
            iq = model.idx_qs[j]
            lower.append(-np.inf if cont else model.lowerPositionLimit[iq])
            upper.append(np.inf if cont else model.upperPositionLimit[iq])
        return np.array(lower, dtype=float), np.array(upper, dtype=float)

    def _build_full_maps(self, model: pin.Model, locked: Dict[int, float]) -> None:
        self.q_full_locked = locked_configuration(model, locked)
        #: Per coupled joint: (its configuration index, its leader's group index,
        #: multiplier, offset).
        self._coupled_q = tuple(
            (model.idx_qs[c.follower], self.joint_ids.index(c.leader), c.multiplier, c.offset)
            for c in self.coupled)
        #: Per coupled joint: (its velocity index, its leader's group index, multiplier).
        self._coupled_v = tuple((model.idx_vs[c.follower], i, m)
                                for c, (_, i, m, _) in zip(self.coupled, self._coupled_q))
        self.iv_full = np.array([model.idx_vs[j] for j in self.joint_ids], dtype=np.intp)
        iq = []
        for j in self.joint_ids:
            iq.extend(range(model.idx_qs[j], model.idx_qs[j] + model.nqs[j]))
        self.iq_full = np.array(iq, dtype=np.intp)

    def _build_reduced(self, model: pin.Model) -> None:
        keep = set(self.joint_ids) | set(self._followers)
        lock_ids = [j for j in range(1, model.njoints) if j not in keep]
        red = reduced_model(model, lock_ids, self.q_full_locked)
        for c in self.coupled:  # the follower's coordinate becomes its leader's
            red = pin.transformJointIntoMimic(red, red.getJointId(model.names[c.leader]),
                                              red.getJointId(model.names[c.follower]),
                                              c.multiplier, c.offset)
        self.reduced_model = red
        # The group's joints in the reduced model: 1..n, or, with coupled joints kept
        # between them, found by name.
        ids = [red.getJointId(name) for name in self.joint_names] if self.coupled \
            else range(1, len(self.joint_ids) + 1)
        self.iq_reduced_cos = np.array(
            [red.idx_qs[j] for j, c in zip(ids, self.continuous) if c], dtype=np.intp)
        self.iq_reduced_simple = np.array(
            [red.idx_qs[j] for j, c in zip(ids, self.continuous) if not c], dtype=np.intp)
        lo = np.full(red.nq, -np.inf)
        hi = np.full(red.nq, np.inf)
        lo[self.iq_reduced_simple] = self.search_lower[~self.continuous]
        hi[self.iq_reduced_simple] = self.search_upper[~self.continuous]
        self.reduced_lower, self.reduced_upper = lo, hi
        self.reduced_bounded = bool(np.isfinite(lo).any() or np.isfinite(hi).any())
        self.has_continuous = bool(self.continuous.any())
        # The same chain with one angle per continuous joint (no cos/sin): the pose loops
        # step angles directly (no integrate, no conversions).  The reduced model when
        # there is no continuous joint.
        self.angle_model = (angle_model(red, self.continuous) if self.has_continuous
                            else None) or red
        #: Whether :attr:`angle_model`'s configuration is the group vector itself (False:
        #: a continuous joint without a plain twin, the reduced model's (cos, sin) pairs).
        self.angle_q = not (self.has_continuous and self.angle_model is red)
        self._reduced_fids: Dict[int, int] = {}

    # ------------------------------------------------------------ conversions
    #: Whether the group's root is a floating or planar base (:mod:`floating_base`).
    has_base = False

    @property
    def n(self) -> int:
        """Length of a group vector: the number of group joints (a base adds its coordinates)."""
        return len(self.joint_ids)

    @property
    def nq(self) -> int:
        """Size of a group vector (configuration): :attr:`n`."""
        return self.n

    @property
    def nv(self) -> int:
        """Size of a step (tangent space): :attr:`n` (a free-flyer base: one less)."""
        return self.n

    # The Lie-group operations the solvers step with.  Fixed base: the group vector is a
    # vector space (continuous joints as angles), so plain addition and subtraction; a
    # group with a base (:class:`floating_base.WholeBodyGroup`) overrides them.
    @staticmethod
    def integrate(q: np.ndarray, dq: np.ndarray) -> np.ndarray:
        """Return ``q (+) dq``: group vector (nq,) moved by tangent step ``dq`` (nv,)."""
        return q + dq

    @staticmethod
    def difference(q0: np.ndarray, q1: np.ndarray) -> np.ndarray:
        """Return the tangent step (nv,) ``dq`` with ``integrate(q0, dq) == q1``."""
        return q1 - q0

    @staticmethod
    def project(q: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
        """Return ``q`` projected into the bounds (nq,) ``lower``/``upper`` (and base bounds)."""
        return np.minimum(np.maximum(q, lower), upper)

    @staticmethod
    def tangent_list(q: np.ndarray) -> list:
        """Per tangent coordinate, the value limit tests compare (a base's: 0.0), floats."""
        return q.tolist()

    @staticmethod
    def tangent_bounds(lower: np.ndarray, upper: np.ndarray) -> Tuple[list, list]:
        """Bounds (nq,) as lists per tangent coordinate (a base's: unbounded)."""
        return lower.tolist(), upper.tolist()

    def to_reduced_qs(self, qs: np.ndarray) -> np.ndarray:
        """Group vectors (k, n) -> reduced-model configurations (k, nq_reduced), vectorised."""
        qs = np.asarray(qs, dtype=float)
        if not self.has_continuous:
            return qs.copy()
        out = np.empty((qs.shape[0], self.reduced_model.nq))
        out[:, self.iq_reduced_simple] = qs[:, ~self.continuous]
        angles = qs[:, self.continuous]
        out[:, self.iq_reduced_cos] = np.cos(angles)
        out[:, self.iq_reduced_cos + 1] = np.sin(angles)
        return out

    def to_reduced_q(self, q: np.ndarray) -> np.ndarray:
        """Group vector (n,) -> reduced-model configuration (nq_reduced,)."""
        if not self.has_continuous:
            return np.array(q, dtype=float)
        return np.array(self._reduced_list(q))

    def _reduced_list(self, q: np.ndarray) -> list:
        """:meth:`to_reduced_q` as a list of floats."""
        # reduced layout = group order, a (cos, sin) pair per continuous joint
        return to_pairs(np.asarray(q, dtype=float).tolist(), self._continuous_list, [])

    def from_reduced_q(self, q_red: np.ndarray) -> np.ndarray:
        """Reduced-model configuration -> group vector (angles in (-pi, pi] if continuous)."""
        if not self.has_continuous:
            return np.array(q_red, dtype=float)
        # floats: cheaper than numpy here
        return np.array(from_pairs(q_red.tolist(), 0, self._continuous_list, []))

    def to_full_q(self, q: np.ndarray) -> np.ndarray:
        """Group vector (n,) -> full pinocchio configuration (nq,), others locked.

        A coupled mimic joint (:attr:`coupled`) takes ``multiplier * leader + offset``.
        """
        q_full = self.q_full_locked.copy()
        if self._iq_slice is not None:  # one slice assignment: cheaper than indexing
            q_full[self._iq_slice] = self._reduced_list(q) if self.has_continuous else q
        else:
            q_full[self.iq_full] = self.to_reduced_q(np.asarray(q, dtype=float))
        for iq, i, multiplier, offset in self._coupled_q:
            q_full[iq] = multiplier * float(q[i]) + offset
        return q_full

    def group_columns(self, J_full: np.ndarray) -> np.ndarray:
        """Return the group's columns (..., n) of a full-model derivative (..., nv_full).

        A coupled mimic joint's column adds into its leader's, times the multiplier (the
        chain rule of :meth:`to_full_q`).
        """
        out = J_full[..., self.iv_full]
        if self._coupled_v:
            out = np.array(out)
            for iv, i, multiplier in self._coupled_v:
                out[..., i] += multiplier * J_full[..., iv]
        return out

    def reduced_to_full_q(self, q_red: np.ndarray) -> np.ndarray:
        """Reduced-model configuration -> full configuration (nq,)."""
        if self.coupled:
            return self.to_full_q(self.from_reduced_q(np.asarray(q_red, dtype=float)))
        q_full = self.q_full_locked.copy()
        q_full[self.iq_full] = q_red
        return q_full

    # ------------------------------------------------------------- utilities
    def mid_configuration(self) -> np.ndarray:
        """Middle of the limits; 0 for continuous joints."""
        mid = 0.5 * (np.where(self.continuous, 0.0, self.lower)
                     + np.where(self.continuous, 0.0, self.upper))
        return mid

    @property
    def limit_lists(self) -> Tuple[list, list]:
        """:attr:`lower` and :attr:`upper` as lists of floats (shared: do not change them)."""
        return self._lower_list, self._upper_list

    def clamp(self, q: np.ndarray) -> np.ndarray:
        """Project ``q`` into the joint limits."""
        return np.minimum(np.maximum(q, self.lower), self.upper)

    def within_limits(self, q: np.ndarray) -> bool:
        """Return True when every joint is inside its limits (exactly; nan is outside)."""
        # floats: cheaper than numpy here
        return self.within_limits_values(np.asarray(q, dtype=float).tolist())

    def unwrap_near(self, q: np.ndarray, reference: np.ndarray,
                    windows: Optional[Tuple[list, list]] = None) -> np.ndarray:
        """Shift wrapping joints by multiples of 2 pi to the equivalent nearest ``reference``.

        Wrapping joints are continuous ones and revolute ones with a range >= 2 pi.
        The equivalent chosen lies inside the joint's limits and, when given, inside
        ``windows`` (lists of lower and upper bounds per group joint [rad], e.g.
        :attr:`Problem.windows`); a joint without such an equivalent keeps its value.
        Non-finite values are kept as they are.
        """
        values = self.unwrap_values(np.asarray(q, dtype=float).tolist(),
                                    np.asarray(reference, dtype=float).tolist(), windows)
        return np.array(values, dtype=float)

    def unwrap_values(self, values: list, reference: list,
                      windows: Optional[Tuple[list, list]] = None) -> list:
        """:meth:`unwrap_near` on lists of floats (``values`` changed in place and returned)."""
        lower, upper = windows if windows is not None else (self._lower_list,
                                                            self._upper_list)
        for i in self._wrap_list:  # floats, inline: cheaper than numpy or a call per joint
            # x + 2 pi k inside [lo, hi] nearest ref (rounding half to even); x kept when
            # there is none, or when x or ref is not finite.
            x = values[i]
            d = reference[i] - x
            if -_NO_TURN < d < _NO_TURN:  # the usual case: round() below gives 0
                cand = x + 0.0
            elif not math.isfinite(d):
                continue
            else:
                cand = x + round(d * _INV_TWO_PI) * TWO_PI
            lo, hi = lower[i], upper[i]
            if cand < lo:
                cand += math.ceil((lo - cand) * _INV_TWO_PI) * TWO_PI
            elif cand > hi:
                cand -= math.ceil((cand - hi) * _INV_TWO_PI) * TWO_PI
            if lo <= cand <= hi:
                values[i] = cand
        return values

    def within_limits_values(self, values: list) -> bool:
        """:meth:`within_limits` of a list of floats: ``lower <= v <= upper`` for each.

        The comparisons run in ``map`` (C), not a Python loop per joint; a NaN fails both.
        """
        return all(map(le, self._lower_list, values)) and all(map(le, values, self._upper_list))

    def random_configuration(self, rng: np.random.Generator,
                             center: Optional[np.ndarray] = None,
                             radius: float = math.inf) -> np.ndarray:
        """Uniform sample in the limits (continuous: in [-pi, pi]), or in a box around center."""
        if center is None or not math.isfinite(radius):  # the usual case: cached box
            return self._sample_lo + self._sample_span * rng.random(self.n)
        lo = np.maximum(self.lower, center - radius)
        hi = np.minimum(self.upper, center + radius)
        return lo + (hi - lo) * rng.random(self.n)

    def random_configurations(self, rng: np.random.Generator, count: int) -> np.ndarray:
        """``count`` uniform samples (count, n) in the limits, as :meth:`random_configuration`."""
        return self._sample_lo + self._sample_span * rng.random((count, self.n))

    def seed_from(self, names: Sequence[str], positions: Sequence[float],
                  default: Optional[np.ndarray] = None) -> np.ndarray:
        """Group vector from named positions (e.g. a full ``JointState``).

        Joints of the model outside the group are accepted and ignored.  Raises
        :class:`errors.InvalidSeed` for length mismatch, duplicated names, names not
        in the model, non-finite values, or a missing group joint when ``default``
        (a group vector) is not given.
        """
        names, positions = list(names), list(positions)
        if len(names) != len(positions):
            raise errors.InvalidSeed(
                f"seed has {len(names)} names but {len(positions)} positions")
        if len(set(names)) != len(names):
            dup = sorted({n for n in names if names.count(n) > 1})
            raise errors.InvalidSeed(f"duplicated joint names in seed: {dup}")
        valid = self._model_joint_names
        extra = [n for n in names if n not in valid]
        if extra:
            raise errors.InvalidSeed(
                f"seed names not in the model: {extra}; group joints: {list(self.joint_names)}")
        values = dict(zip(names, (float(p) for p in positions)))
        return self._assemble(values, default)

    def _assemble(self, values: Mapping[str, float], default: Optional[np.ndarray]) -> np.ndarray:
        missing = [n for n in self.joint_names if n not in values]
        if missing and default is None:
            raise errors.InvalidSeed(
                f"seed misses group joints {missing}; group joints: {list(self.joint_names)}")
        if missing:  # (then default is given) a full seed, the usual, needs no default
            base = self.check_vector(default, "default seed")
            listed = [values.get(n, base[i]) for i, n in enumerate(self.joint_names)]
        else:
            listed = [values[n] for n in self.joint_names]
        bad = [n for n, v in zip(self.joint_names, listed) if not math.isfinite(v)]
        if bad:
            raise errors.InvalidSeed(f"seed values are not finite for joints {bad}")
        return np.array(listed, dtype=float)

    def check_vector(self, q: np.ndarray, what: str = "seed") -> np.ndarray:
        """Validate a group vector: shape (n,), finite.  Returns a float copy."""
        return self._checked(q, what)[0]

    def clamped_seed(self, q: np.ndarray, what: str = "seed") -> np.ndarray:
        """:meth:`check_vector`, then projected into the limits when outside (a float copy)."""
        arr, values = self._checked(q, what)
        return arr if self.within_limits_values(values) else self.clamp(arr)

    def _checked(self, q: np.ndarray, what: str) -> Tuple[np.ndarray, list]:
        """:meth:`check_vector`'s array and its values as a list of floats."""
        shape = (self.n,)
        if type(q) is np.ndarray and q.dtype is _F64 and q.shape == shape:
            arr = q.copy()  # the usual case: a float vector of the right length
        else:
            arr = np.array(q, dtype=float).reshape(-1)
        if arr.shape != shape:
            raise errors.InvalidSeed(
                f"{what} has {arr.size} values, group has {self.n}: {list(self.joint_names)}")
        values = arr.tolist()
        # The sum of finite values is finite but for overflow: one cheap test first.
        if not math.isfinite(sum(values)) and not np.isfinite(arr).all():
            raise errors.InvalidSeed(f"{what} has non-finite values: {values}")
        return arr, values

    def fk(self, q: np.ndarray, frame: str) -> pin.SE3:
        """``T_world_frame`` at group vector ``q``, on the full model.

        On this thread's ``Data`` of its own, which no solver uses (a fresh one per call
        cost 5-12 ms on tiago_dual's 101 joints); the placement returned is a copy.
        """
        fid = self.robot.frame_id(frame)
        model = self.robot.model
        data = self._thread_data("fk", model)
        pin.forwardKinematics(model, data, self.to_full_q(q))
        return pin.SE3(pin.updateFramePlacement(model, data, fid))

    def reduced_frame_id(self, name: str) -> int:
        """Id of frame ``name`` in the reduced model (InvalidFrame if absent)."""
        return self.reduced_frame_of(self.robot.frame_id(name))

    def reduced_frame_of(self, fid: int) -> int:
        """Id in the reduced model of the full model's frame ``fid``.

        ``buildReducedModel`` keeps the frames in their order (a locked joint's frame
        becomes a FIXED_JOINT one, so a search by name and type misses it and pinocchio
        answers ``nframes``, an index past the end): the same index when the name there
        agrees, else by name, as the frame's type or as a fixed joint's.
        """
        rid = self._reduced_fids.get(fid)
        if rid is None:
            rid = self._reduced_fids[fid] = self._find_reduced(fid)
        return rid

    def _find_reduced(self, fid: int) -> int:
        full, red = self.robot.model.frames[fid], self.reduced_model
        if fid < red.nframes and red.frames[fid].name == full.name:
            return fid
        for kind in (full.type, pin.FrameType.FIXED_JOINT):
            rid = int(red.getFrameId(full.name, kind))
            if rid < red.nframes:
                return rid
        raise errors.InvalidFrame(full.name, [f.name for f in red.frames])

    def angle_data(self) -> pin.Data:
        """Return this thread's ``Data`` of :attr:`angle_model` (reused across solves)."""
        return self._thread_data("angle", self.angle_model)

    def check_data(self) -> pin.Data:
        """Return this thread's second ``Data`` of :attr:`angle_model`, a check's."""
        return self._thread_data("check", self.angle_model)

    def reduced_data(self) -> pin.Data:
        """Return this thread's ``Data`` of the reduced model (reused across solves)."""
        return self._thread_data("reduced", self.reduced_model)

    def residuals_data(self, reduced: bool = False) -> pin.Data:
        """Return this thread's ``Data`` of the full (or reduced) model for a solve's residuals."""
        if reduced:
            return self._thread_data("residuals_reduced", self.reduced_model)
        return self._thread_data("residuals", self.robot.model)

    def full_data(self) -> pin.Data:
        """Return this thread's ``Data`` of the full model (reused across solves)."""
        return self._thread_data("full", self.robot.model)

    def _thread_data(self, key: str, model: pin.Model) -> pin.Data:
        """Return this thread's ``Data`` of ``model`` for purpose ``key`` (made at first call).

        A group held elsewhere (:meth:`held_at`) uses its source's for the full model: the
        same model, and a solve of either fills what it reads, as within one group.  Made
        once per new reading instead (a second arm's, a lift's), a full model's ``Data``
        cost each of those requests 0.2-6 ms (PR2, TIAGo) per purpose.
        """
        source = self._source
        if source is not self and model is self.robot.model:
            return source._thread_data(key, model)
        data = getattr(self._local, key, None)
        if data is None:
            data = model.createData()
            setattr(self._local, key, data)
        return data

    def locked_placement(self, frame_id: int) -> pin.SE3:
        """``T_world_frame`` of a frame no group joint moves (:meth:`locked_placements`)."""
        return self.locked_data().oMf[frame_id]

    def locked_placements(self) -> Sequence[pin.SE3]:
        """``T_world_frame`` of every frame at the locked joints' values, by frame id (cached).

        :meth:`locked_data`'s ``oMf`` (``prepare`` makes them).  The frames no group joint
        moves stay there.
        """
        return self.locked_data().oMf

    def locked_data(self) -> "LockedData":
        """Every joint's and frame's placement at the locked joints' values (``q_full_locked``).

        ``oMi``, ``liMi``, ``oMf`` as pinocchio's ``Data`` names them, copied out of one
        forward kinematics at the first call (``prepare`` makes it): the reach bounds, the
        proofs' fixed frames and the compiled kernels' tree read them.  Only read.  Copies,
        not a ``Data`` of their own: a model's ``Data`` costs 5-12 ms to make on
        tiago_dual's 101 joints, and a group held elsewhere (each new reading of a second
        arm or a lift) made one on its first request.
        """
        found = self._locked_data
        if found is None:  # computed, then stored: a thread never sees it unfilled
            model = self.robot.model
            data = self._thread_data("locked", model)  # a scratch: copied out
            pin.framesForwardKinematics(model, data, self.q_full_locked)
            found = self._locked_data = LockedData([pin.SE3(M) for M in data.oMi],
                                                   [pin.SE3(M) for M in data.liMi],
                                                   [pin.SE3(M) for M in data.oMf])
        return found

    @property
    def upstream(self) -> Tuple[str, ...]:
        """Names of the locked joints that move the group's joints (their ancestors).

        A torso lift under an arm, a rail under a 6R arm: held at :attr:`locked`'s values,
        they place the whole chain in the world, so a target in a frame above them, the
        planning scene and world-frame constraints are met on the robot only where it
        really holds them (:meth:`held_at`).  Model order; () when there is none.
        """
        found = self._upstream
        if found is None:
            names = self.robot.model.names
            found = self._upstream = tuple(
                names[j] for j in sorted(self._carrying())
                if j not in self.joint_ids and names[j] in self.locked)
        return found

    def _carrying(self) -> frozenset:
        """Ids of every joint that moves one of the group's joints, theirs included (cached)."""
        found = self._carrying_ids
        if found is None:
            supports = self.robot.model.supports
            found = self._carrying_ids = frozenset(j for g in self.joint_ids for j in supports[g])
        return found

    def _above(self) -> frozenset:
        """Ids of the joints above every group joint: each carries the chain as one body."""
        found = self._above_ids
        if found is None:
            supports = self.robot.model.supports
            found = self._above_ids = frozenset.intersection(
                *(frozenset(supports[j]) - {j} for j in self.joint_ids))
        return found

    def held_at(self, values: Mapping[str, float]) -> "Group":
        """Return this group with locked joints ``values`` [rad or m] held there instead.

        Same joints, base and tip; every other locked joint keeps its value (a mimic joint
        not in ``values`` follows its leader's new value); values are clipped into the
        joint limits as :meth:`Robot.group` does.  A new group: its one-time work
        (``prepare``) is its own, but for what :meth:`chain_owner` lets it share.
        """
        locked = self._relocked(values)
        placed = self._placed_elsewhere(locked) if type(self) is Group else None
        if placed is not None:
            return self._held(placed)
        return self._held(self.robot.group(base=self.base, tip=self.tip,
                                           joints=self.joint_names, locked=locked))

    def _held(self, group: "Group") -> "Group":
        """Return ``group`` (held elsewhere) told which joints differ from this one's source."""
        source = self._source
        model = self.robot.model
        group._source = source
        group._changed = frozenset(model.getJointId(n) for n, v in group.locked.items()
                                   if v != source.locked.get(n))
        return group

    def _placed_elsewhere(self, locked: Mapping[str, float]) -> Optional["Group"]:
        """Return this group with its locked joints at ``locked``: a copy, its models placed.

        The group :meth:`Robot.group` would build holds the same joints, so its reduced
        and angle models have this group's joints and frames; only placements differ:
        those a changed joint lies behind (:meth:`_placement_sources`).  A copy of this
        group holds them, rewritten from its locked placements (:meth:`_placed_data`): the
        models are not built again (~1-2.5 ms per new reading of a lift or a second arm).
        None when no joint changed.
        """
        robot = self.robot
        names = robot.model.names
        # as Robot.group holds them
        values = robot._locked_values(self.joint_ids, locked, self._followers)
        changed = frozenset(j for j, v in values.items() if v != self.locked[names[j]])
        if not changed:
            return None
        tables = model_tables(robot.model)
        q = np.array(self.q_full_locked)
        for j in changed:
            write_joint(q, tables.idx_q[j], tables.cos_sin[j], values[j])
        q.setflags(write=False)
        sources = self._placement_sources()  # before the copy: the copy shares it
        new = copy.copy(self)
        new.locked = {names[j]: v for j, v in values.items()}
        new.q_full_locked = q
        new._local = threading.local()  # its own Data of its own models
        new._source_motion, new._upstream = None, None
        new._moves, new._moves_chain, new._reduced_fids = {}, {}, dict(self._reduced_fids)
        new._locked_data = self._placed_data(q, changed, tables)
        new.reduced_model = placed_model(self.reduced_model, robot.model, new._locked_data,
                                         sources, changed)
        new.angle_model = new.reduced_model if self.angle_model is self.reduced_model \
            else placed_model(self.angle_model, robot.model, new._locked_data, sources,
                              changed)
        return new

    def _placed_data(self, q_full: np.ndarray, changed: frozenset,
                     tables: "ModelTables") -> "LockedData":
        """Return :meth:`locked_data` at ``q_full``, where the joints ``changed`` differ.

        What no changed joint moves is this group's (the same objects: only read).  When
        every changed joint lies above the group (a lift, a waist), what the mount (the
        deepest joint above every group joint) carries moves by ``D = T_world_mount(q_full)
        T_world_mount^-1``; the other moved joints are read from one forward kinematics.
        A frame is its joint's placement times its own.
        """
        old, model = self.locked_data(), self.robot.model
        data = self._thread_data("mount", model)
        pin.forwardKinematics(model, data, q_full)
        moved = [not changed.isdisjoint(s) for s in tables.supports]
        if changed <= self._above():
            mount, D = self._mount(), self._motion_at(data)
            oMi = [(D * M if mount in s else pin.SE3(data.oMi[j])) if m else M
                   for j, (M, m, s) in enumerate(zip(old.oMi, moved, tables.supports))]
        else:
            oMi = [pin.SE3(data.oMi[j]) if m else M for j, (M, m) in enumerate(zip(old.oMi,
                                                                                   moved))]
        liMi = [pin.SE3(data.liMi[j]) if j in changed else M for j, M in enumerate(old.liMi)]
        oMf = [oMi[p] * X if moved[p] else M
               for M, p, X in zip(old.oMf, tables.frame_parent, tables.frame_placement)]
        return LockedData(oMi, liMi, oMf)

    def _mount(self) -> int:
        """Return the deepest joint above every group joint (it carries the chain)."""
        supports = model_tables(self.robot.model).supports
        return max(self._above(), key=lambda j: len(supports[j]))

    def _placement_sources(self) -> Tuple[tuple, tuple, tuple]:
        """Return what each placement of the reduced model is made of, in the full model.

        ``(joints, frames, bodies)``: per joint of the reduced model ``(j, full id, kept
        parent's full id, behind)``, per frame ``(f, kept parent's full id, behind)``; the
        kept parent is the group joint (0: the world) the placement is relative to,
        ``behind`` the joints between that parent and the placement (a locked joint there
        changes it).  Per joint of the reduced model ``(j, full id, folded, behind)``: the
        full model's joints whose bodies it carries as one (its own, the locked ones
        below it up to the next group joint) and the joints behind them.
        Frames have the same ids in the full, reduced and angle models.  Cached (shared by
        :meth:`_placed_elsewhere`'s copies).
        """
        found = getattr(self, "_sources", None)
        if found is None:
            red, model = self.reduced_model, self.robot.model
            tables = model_tables(model)
            supports = tables.supports
            full = [0] + [model.getJointId(red.names[j]) for j in range(1, red.njoints)]
            joints = tuple((j, full[j], full[red.parents[j]],
                            supports[model.parents[full[j]]] - supports[full[red.parents[j]]])
                           for j in range(1, red.njoints))
            frames = tuple((f, full[fr.parentJoint],
                            supports[tables.frame_parent[f]] - supports[full[fr.parentJoint]])
                           for f, fr in enumerate(red.frames))
            kept = {f: j for j, f in enumerate(full)}
            folded: Dict[int, List[int]] = {j: [] for j in range(1, red.njoints)}
            for k in range(1, model.njoints):  # each body into its nearest group joint
                owner = max((a for a in supports[k] if a in kept),
                            key=lambda a: len(supports[a]), default=0)
                if owner:
                    folded[kept[owner]].append(k)
            bodies = tuple((j, full[j], tuple(ks),
                            frozenset().union(*(supports[k] for k in ks)) - supports[full[j]])
                           for j, ks in folded.items())
            found = self._sources = (joints, frames, bodies)
        return found

    def chain_owner(self, frame_id: int) -> "Group":
        """Return the group whose chain-only caches serve this one for frame ``frame_id``.

        This group, or, for a group held elsewhere (:meth:`held_at`) whose changed joints
        move neither its joints nor the frame (a second arm, the fingers), the group it
        was held from: the chain to the frame is the same, so is what was derived from it
        alone (the closed form and the sweep: :class:`.closed_form.chain.Detector`).
        """
        if not self._changed:
            return self._source
        return self if self._moved(frame_id)[0] else self._source

    def shape_owner(self, frame_id: int) -> "Group":
        """Return the group whose chain to frame ``frame_id`` has this one's shape.

        :meth:`chain_owner`'s group; or, for a group held elsewhere whose changed joints
        move that chain only as one body (each lies above every group joint: a torso
        lift under an arm, a rail under a 6R arm), the group it was held from.  The
        chain is then the same but for its place in the world (:meth:`source_motion`):
        what was derived from it is the owner's, moved with it (the closed form and the
        sweep, :class:`.closed_form.chain.Placed`; the seed library's ranking and the
        reach bound).
        """
        if not self._changed:
            return self._source
        return self if self._moved(frame_id)[1] else self._source

    def _moved(self, frame_id: int) -> Tuple[bool, bool]:
        """Whether the changed joints move the chain to ``frame_id``, and change its shape.

        Computed once per frame (each solve of a held group asks).
        """
        found = self._moves_chain.get(frame_id)
        if found is None:
            model = self.robot.model
            frame = frozenset(model.supports[model.frames[frame_id].parentJoint])
            moved = self._changed & (self._carrying() | frame)
            found = self._moves_chain[frame_id] = (bool(moved), not moved <= self._above())
        return found

    def mount_motion(self, values: Mapping[str, float]) -> Optional[pin.SE3]:
        """``D`` (world): how locked joints at ``values`` [rad or m] would move the chain.

        With those joints there instead of at :attr:`locked` (clipped into their limits,
        mimic joints following their leaders, as :meth:`held_at` holds them), every frame
        the group's joints move lies at ``D * T_world_frame`` (the group's own values
        unchanged): the joints above every group joint (a torso lift under an arm) carry
        the chain as one body.  The identity when none of ``values`` carries it; None
        when one lies below a group joint (it changes the chain's shape, not its place).
        Unknown names raise :class:`errors.InvalidJoint`.
        """
        model, robot = self.robot.model, self.robot
        given = dict(values)
        given.update((n, v) for n, v in robot.followers(values).items() if n in self.locked)
        q, changed = np.array(self.q_full_locked), set()
        for name, value in given.items():
            if name not in self.locked:
                raise errors.InvalidJoint(str(name), list(self.locked))
            lo, hi = robot.joint_limits(name)
            value = min(max(float(value), lo), hi)
            if value != self.locked[name]:
                j = model.getJointId(name)
                write_joint(q, model.idx_qs[j], model.nqs[j] == 2, value)
                changed.add(j)
        return self._mount_motion(changed, q)

    def source_motion(self) -> Optional[pin.SE3]:
        """``D`` (world) from the group this one was held from, as :meth:`mount_motion`'s.

        The identity for a group not held elsewhere (or held only beside its chain); None
        when a changed joint lies below a group joint.
        """
        found = self._source_motion
        if found is None:
            found = self._source_motion = (self._source._mount_motion(
                self._changed, self.q_full_locked) or False)
        return found or None

    def _mount_motion(self, changed, q_full: np.ndarray) -> Optional[pin.SE3]:
        """``D`` of full configuration ``q_full`` whose joints ``changed`` differ from ours."""
        carrying, above = self._carrying(), self._above()
        if any(j in carrying and j not in above for j in changed):
            return None
        if not any(j in above for j in changed):
            return pin.SE3.Identity()
        model = self.robot.model
        data = self._thread_data("mount", model)
        pin.forwardKinematics(model, data, q_full)
        return self._motion_at(data)

    def _motion_at(self, data: pin.Data) -> pin.SE3:
        """``D`` (world): the mount's (:meth:`_mount`) motion from the locked values to ``data``.

        ``data``: forward kinematics of the full model done.
        """
        mount = self._mount()
        return data.oMi[mount] * self.locked_data().oMi[mount].inverse()

    def _relocked(self, values: Mapping[str, float]) -> Dict[str, float]:
        """:attr:`locked` with ``values``; a mimic joint not named left to its leader."""
        mimics = self.robot.mimics
        locked = {n: v for n, v in self.locked.items() if n not in mimics or n in values}
        locked.update(values)
        return locked

    def moves_frame(self, frame_id: int) -> bool:
        """Return True when some group joint moves frame ``frame_id`` (cached per frame)."""
        moved = self._moves.get(frame_id)
        if moved is None:
            model = self.robot.model
            support = set(model.supports[model.frames[frame_id].parentJoint])
            moved = self._moves[frame_id] = any(j in support for j in self.moving_ids)
        return moved

    def __repr__(self) -> str:
        """Short description."""
        return f"Group(base={self.base!r}, tip={self.tip!r}, joints={list(self.joint_names)})"
