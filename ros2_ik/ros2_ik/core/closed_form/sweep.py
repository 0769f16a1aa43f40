"""Seven-joint arms by a swept joint over the closed form of the six others.

A 7R chain, or a 6R arm on a rail (a prismatic first or last joint), has a continuum of
solutions per pose.  Held at a value, one of its joints
leaves a six-joint chain; when EAIK decomposes that chain (its product-of-exponentials
form, :mod:`.chain`, with the held joint's rotation folded into the offsets: EAIK's
``fixed_axes``), each value gives the six joints' exact branches in microseconds.

Detection (:func:`of`, once per group and frame, from the kinematics alone): the chain's
first and last joints are tried held as its ends (the other six then form one 6R chain:
one closed form serves every value, only the target moves, :mod:`.held`), every joint
held inside the chain too (EAIK's ``fixed_axes``: a closed form per value, kept when
EAIK decomposes the rest at values spread over its limits); each is kept when a
self-test finds known configurations again.  A swept joint between a shoulder and an
elbow with a spherical wrist (an SRS arm's upper-arm roll) gets one compiled form for
every value (:mod:`.inner`), where it passes the self-test too.  A chain with a
prismatic end joint holds that joint only, as an end (the rest must be six rotations:
:mod:`.held`'s slide).
Each joint kept is scored on sample poses by the values of :data:`CELLS` (cell centres
over its limits; a continuous joint: one turn) it needs to reach them in a greedy
coverage order; the joint with the fewest
(a closed form built per solve counted as :data:`BUILD_COST` values) is swept, one that
is cheap (:data:`CHEAP_VALUES`: lm runs only those) before any other.  On it a
model of which values reach which poses is fitted (:func:`.held.fit`,
:data:`RANK_SAMPLES` poses) when the sweep first runs (:func:`prepare` does it for the
solvers that run it): most of detection's time, which a solver that does not run the
sweep never pays.  A chain where no joint works has no sweep (the search solves it as
before).

Solving (:func:`along`, answered by :mod:`ros2_ik.core.solvers.swept`): the swept
joint takes the seed's value first (a seed near a solution: that solution's branch),
then the cells' centres ranked for the target by the fitted model
(:meth:`Sweep.forms`); at each value the branches within the limits
(:mod:`.branches`) are verified on the full model.  A
sampled joint proves nothing about the values between samples: after the sweep's budget
the search runs (from the nearest branches just outside the limits), and NO_SOLUTION
comes only from the search or the reach bound.  ``num_solutions`` returns the distinct
branches the sweep found within its budget: a 7R pose has a continuum of them, so this
is a sample of the solutions, not every one.
"""
from __future__ import annotations

import math
import threading
from collections import OrderedDict
from typing import Iterator, List, Optional, Tuple

import numpy as np
import pinocchio as pin

from ros2_ik.core.closed_form import branches, chain, held, inner
from ros2_ik.core.closed_form.branches import Branches
from ros2_ik.core.closed_form.chain import Detection
from ros2_ik.core.runtime import compiled

#: Joints of a chain the sweep takes: seven rotations (or six and a prismatic end).
JOINTS = 7
#: Values of the held joint at which EAIK must decompose the rest (spread over its limits).
DETECT_VALUES = 5
#: Configurations of the self-test, and the sample poses of the coverage order (fixed).
SELF_TEST_SAMPLES = 8
COVER_SAMPLES = 48
#: Largest distance of a known configuration to a branch found [rad].
SELF_TEST_TOLERANCE = 1e-4
#: Values of one sweep after the seed's: centres of this many cells over the limits.
CELLS = 32
#: What building a held chain's closed form for the seed's value costs (a joint not at
#: the chain's end), in values tried.
BUILD_COST = 0.5
#: A sweep whose coverage order reaches the sample poses in at most this many values on
#: average is cheap (:attr:`Sweep.cheap`): solvers that search (lm) answer from it too.
CHEAP_VALUES = 1.2
#: Sample poses that fit the ranking of the values for a target (:func:`.held.ranked`).
RANK_SAMPLES = 1000
#: One ranking fitted at a time (:meth:`Sweep.rank_pending`).
_RANKING = threading.Lock()
#: Chains whose detection is kept by what it reads (:func:`detect`), the newest last.
SEEN_CHAINS = 64
_SEEN: "OrderedDict[tuple, Detection]" = OrderedDict()
_SEEN_LOCK = threading.Lock()


class Sweep:
    """The swept joint of a 7R chain and its six-joint closed forms (module docstring).

    ``joint``: index of the swept joint in the group; ``family``: a description for
    messages (the joint's name and EAIK's family of the rest); ``cheap``: one value
    reaches nearly every pose (:data:`CHEAP_VALUES`); ``end``: the joint is the
    chain's first or last, and one closed form of the other six serves every value
    (:mod:`.held`); otherwise EAIK builds one per value (``fixed_axes``), or
    :attr:`inner` serves every value; ``slide``: the
    joint is prismatic (an end; its values [m]).  The ranking of the values for a target
    is fitted at the first :meth:`forms` (:meth:`defer_rank`).
    """

    __slots__ = ("joint", "family", "name", "end", "slide", "_H", "_P", "_R", "_signs", "_lo",
                 "_hi", "_Robot", "_rest", "_axis", "_point", "_tool_RT", "_values", "_forms",
                 "_prior", "_weights", "_scale", "_last", "cheap", "_pending", "inner")

    def __init__(self, joint: int, name: str, family: str, H: np.ndarray, P: np.ndarray,
                 R: np.ndarray, lower: float, upper: float, end: bool = False,
                 slide: bool = False, signs: Optional[np.ndarray] = None):
        """Hold the chain's form (internal: use :func:`of`).

        ``signs``: +-1 per joint, how the axes EAIK is given are turned
        (:func:`.chain.codirected`: parallel ones pointing alike; the rows come back in the
        chain's angles), for a chain EAIK does not solve as it is given
        (:func:`_detected`); None: as the chain has them.
        """
        self.joint, self.name, self.end, self.slide = joint, name, end, end and slide
        self._signs = signs
        given = H if signs is None else H * signs[:, None]
        self._H, self._P, self._R = given.T.copy(), P.T.copy(), R
        self._lo, self._hi = lower, upper
        import eaik.pybindings.EAIK as eaik
        self._Robot = eaik.Robot
        self._values = self.centres()  # and the ranking's data: :meth:`order`, :meth:`rank`
        self._forms = self._prior = self._weights = None
        self._scale = 1.0
        self._last = None  # (value [rad], closed form): :meth:`_held_at`
        self._pending = None  # what :meth:`defer_rank` keeps until the first :meth:`forms`
        self.cheap = False  # set by detection (:data:`CHEAP_VALUES`)
        #: The compiled closed form at every value (:mod:`.inner`), set by detection
        #: where it applies and passes the self-test; None: EAIK's per value.
        self.inner: Optional[inner.Inner] = None
        self._rest = None
        if end:  # the other six from the held joint's point on (first) or to it (last)
            first = joint == 0
            self._axis = np.ascontiguousarray(H[joint])
            self._point = np.ascontiguousarray(P[0] if first else P[JOINTS])
            self._tool_RT = np.ascontiguousarray(R.T if not first else np.eye(3))
            turns = np.ones(JOINTS) if signs is None else signs
            if first:
                rest = chain.eaik_robot(H[1:], np.vstack([P[0] + P[1], P[2:]]), R, turns[1:])
            elif self.slide:  # the frame's own offset and orientation (:mod:`.held`)
                rest = chain.eaik_robot(H[:JOINTS - 1], np.vstack(
                    [P[:JOINTS - 1], P[JOINTS - 1] + P[JOINTS]]), R, turns[:JOINTS - 1])
            else:
                rest = chain.eaik_robot(H[:JOINTS - 1], P[:JOINTS], np.eye(3),
                                        turns[:JOINTS - 1])
            if rest.has_known_decomposition():
                self._rest = rest
                family = family or rest.get_kinematic_family()
        self.family = f"joint '{name}' swept over {family}"

    def at(self, value: float) -> Optional[chain.ClosedForm]:
        """Return the closed form of the chain with the swept joint held at ``value`` [rad].

        Its branches have seven columns, the swept joint's at ``value``.  None when EAIK
        refuses the chain at that value.
        """
        robot = self.eaik_robot(value)
        if robot is None:
            return None
        return chain.ClosedForm(robot, self.family, JOINTS, tangents=False)

    def eaik_robot(self, value: float):
        """Return EAIK's robot of the chain held at ``value`` [rad] (None: EAIK refuses it)."""
        signs = self._signs
        held_at = value if signs is None else value * signs[self.joint]  # as EAIK turns it
        try:
            robot = self._Robot(self._H, self._P, self._R, [(self.joint, held_at)], True)
        except RuntimeError:  # e.g. two axes made parallel at this value
            return None
        return robot if signs is None else chain.turned_back(robot, signs)

    def rows(self, value: float, form: Optional[chain.ClosedForm], T_world_frame_h: np.ndarray
             ) -> Optional[Tuple[np.ndarray, np.ndarray]]:
        """Every branch of 4x4 ``T_world_frame_h`` with the joint at ``value`` [rad].

        Angles (m, 7) [rad] and least-squares flags (m,) as :meth:`.chain.ClosedForm.solve`
        gives them; ``form``: the closed form held at ``value`` (:meth:`forms`; unused
        on an end joint).  None when EAIK refuses the chain at that value.
        """
        if self._rest is not None:
            solution = self._rest.calculate_IK(held.target(
                T_world_frame_h, value, self._axis, self._point, self._tool_RT,
                self.joint == 0, self.slide))
            return branches.widen(solution.Q, self.joint, value), solution.is_LS
        return None if form is None else form.solve(T_world_frame_h)

    def forms(self, seed_value: float, T_world_frame_h: np.ndarray
              ) -> Iterator[Tuple[float, Optional[chain.ClosedForm]]]:
        """Yield ``(value [rad], closed form held there)`` in sweep order (None: refused).

        The seed's value (clamped into the limits) first: a seed near a solution keeps
        that solution's branch.  Then the cells' centres ranked for the target
        (:func:`.held.ranked`).  Closed forms are built once (none on an end joint:
        :meth:`rows` needs none).
        """
        for value, cell in self.ordered(seed_value, T_world_frame_h):
            if cell >= 0:
                yield value, self._forms[cell]
            else:
                yield value, None if self._rest is not None else self._held_at(value)

    def ordered(self, seed_value: float, T_world_frame_h: np.ndarray
                ) -> Iterator[Tuple[float, int]]:
        """Yield ``(value [rad], cell)`` in sweep order (:meth:`forms`; -1: the seed's value)."""
        yield min(max(seed_value, self._lo), self._hi), -1
        if self._pending is not None:
            self.rank_pending()
        values = self._values
        for c in held.ranked(self._weights, T_world_frame_h, self._scale).tolist():
            yield values[c], c

    def _held_at(self, value: float) -> Optional[chain.ClosedForm]:
        """:meth:`at`, the last one built kept (a seed used again costs no new one)."""
        last = self._last
        if last is None or last[0] != value:
            last = self._last = (value, self.at(value))
        return last[1]

    def values(self, seed_value: float, T_world_frame_h: np.ndarray) -> List[float]:
        """Return the swept joint's values [rad] in the order of :meth:`forms`."""
        return [value for value, _ in self.forms(seed_value, T_world_frame_h)]

    def centres(self) -> np.ndarray:
        """Centres (CELLS,) of the cells over the limits (a continuous joint: one turn).

        A prismatic joint's limits are finite (:func:`detect`).
        """
        lo, hi = self._lo, self._hi
        if not (math.isfinite(lo) and math.isfinite(hi)):
            lo, hi = -math.pi, math.pi
        return lo + (np.arange(CELLS) + 0.5) / CELLS * (hi - lo)

    def order(self, cells: np.ndarray) -> None:
        """Break the ranking's ties in this order of the cells (C,); build their forms."""
        self._prior = np.empty(CELLS)
        self._prior[cells] = (CELLS - np.arange(CELLS)) / CELLS
        if self._forms is None:
            self._forms = [None if self._rest is not None else self.at(v)
                           for v in self._values.tolist()]

    def defer_rank(self, poses: List[np.ndarray], lower: np.ndarray, upper: np.ndarray
                   ) -> None:
        """Fit the ranking on sample ``poses`` (4, 4) at the first :meth:`forms`, not now.

        ``lower``, ``upper`` (7,): the group's limits.  The fit solves every cell's value
        for every pose (~0.5 s for 1000 poses); a solver that never runs this sweep (lm,
        where it is not :attr:`cheap`) never pays it.  :func:`prepare` runs it for the
        solvers that do.
        """
        self._pending = (poses, lower, upper)

    @property
    def ranked(self) -> bool:
        """Whether the ranking is fitted (:meth:`defer_rank`)."""
        return self._pending is None

    def rank_pending(self) -> None:
        """Fit the ranking :meth:`defer_rank` deferred, if not yet (one thread fits it)."""
        with _RANKING:
            pending = self._pending
            if pending is not None:
                poses, lower, upper = pending
                self.rank(poses, _reached(lower, upper, self, poses))
                self._pending = None

    def rank(self, poses: List[np.ndarray], reached: np.ndarray) -> None:
        """Fit the ranking (:func:`.held.fit`) on sample ``poses`` (4, 4) and ``reached``.

        Positions are scaled by the inverse of their spread [1/m], orientations as they
        are; ``reached`` (C, N): the cell's centre gives pose ``i`` branches.
        """
        spread = float(np.std([T[:3, 3] for T in poses], axis=0).sum()) or 1.0
        self._scale = 3.0 / spread
        self._weights = held.fit(poses, reached, self._scale, 1e-3 * self._prior)


def of(group, frame_id: int) -> Optional[Sweep]:
    """Return the sweep of ``group``'s chain to frame ``frame_id`` (full model), or None.

    Detected once per group and frame (:func:`detect`), then a lookup.
    """
    return _DETECTOR.of(group, frame_id)


def reason(group, frame_id: int) -> str:
    """Why ``group``'s chain to ``frame_id`` has no sweep ('' when it has one)."""
    return _DETECTOR.reason(group, frame_id)


#: Per group and frame id: its Detection (``detect`` is defined below).
_DETECTOR = chain.Detector(lambda group, fid: detect(group, fid))


def detect(group, frame_id: int) -> Detection:
    """Read the chain, try each joint held, keep the best that passes (module docstring).

    The chain's first and last joints are tried as ends first (one closed form of the
    rest for every value), every joint then as held inside the chain (EAIK's
    ``fixed_axes``); the one whose sweep reaches the sample poses in the fewest values,
    counting a closed form built per solve as :data:`BUILD_COST` values, is swept; a
    cheap one (:data:`CHEAP_VALUES`) before any other, as lm runs only a cheap sweep.  A
    chain seen before in this process (the same kinematics, limits and names: a robot
    built again, as the node does when the SRDF follows the URDF) has that detection.
    """
    axes, why = chain.preflight(group, frame_id, (JOINTS,), "a sweep", slide_end=True)
    if axes is None:
        return Detection(None, why)
    H, P, R = chain._product_of_exponentials(group, frame_id, axes)
    slides = np.flatnonzero(~np.asarray(group.rotates)).tolist()  # one end at most
    lower, upper = np.array(group.lower, dtype=float), np.array(group.upper, dtype=float)
    key = (H.tobytes(), P.tobytes(), R.tobytes(), lower.tobytes(), upper.tobytes(),
           tuple(slides), tuple(group.joint_names))
    with _SEEN_LOCK:
        seen = _SEEN.get(key)
        if seen is not None:
            _SEEN.move_to_end(key)
            return seen
    found = _detected(group, frame_id, H, P, R, slides, lower, upper)
    with _SEEN_LOCK:
        _SEEN[key] = found
        while len(_SEEN) > SEEN_CHAINS:
            _SEEN.popitem(last=False)
    return found


def _detected(group, frame_id: int, H: np.ndarray, P: np.ndarray, R: np.ndarray,
              slides: List[int], lower: np.ndarray, upper: np.ndarray) -> Detection:
    """:func:`detect` of a chain not seen before.

    Its form ``(H, P, R)``, its prismatic joints, the group's limits (7,) as arrays.
    """
    if slides and not (math.isfinite(group.lower[slides[0]])
                       and math.isfinite(group.upper[slides[0]])):
        return Detection(None, f"prismatic joint '{group.joint_names[slides[0]]}' has no "
                               f"finite limits to sweep")

    # The chain as it is given first; turned (:func:`.chain.codirected`) when that fails
    # and it has parallel axes pointing different ways.
    signs = chain.codirected(H)
    turns = (None, signs) if (signs < 0).any() else (None,)

    def held(i: int, end: bool) -> Optional[Sweep]:
        for turned in turns:
            sweep = _held(i, end, turned)
            if sweep is not None:
                return sweep
        return None

    def _held(i: int, end: bool, turned: Optional[np.ndarray]) -> Optional[Sweep]:
        name, lo, hi = group.joint_names[i], float(group.lower[i]), float(group.upper[i])
        if end:
            sweep = Sweep(i, name, "", H, P, R, lo, hi, end=True, slide=i in slides,
                          signs=turned)
            ok = sweep._rest is not None
        else:
            family = _family(Sweep(i, name, "", H, P, R, lo, hi, signs=turned))
            sweep = Sweep(i, name, family, H, P, R, lo, hi, signs=turned) if family else None
            ok = sweep is not None
        return sweep if ok and _self_test(group, frame_id, sweep) else None

    if slides:  # the rest must be six rotations: the prismatic joint is held
        kept = [s for s in (held(slides[0], True),) if s is not None]
    else:
        ends = [s for s in (held(0, True), held(JOINTS - 1, True)) if s is not None]
        kept = ends + [s for s in (held(i, False) for i in range(JOINTS)) if s is not None
                       and all(e.joint != s.joint for e in ends)]
    if not kept:
        return Detection(None, "no joint, held fixed, leaves a 6R chain that EAIK "
                               "decomposes and that passes the self-test")
    poses = [_pose(group, frame_id, q) for q in _samples(group, COVER_SAMPLES, 1)]
    covers = [_cover(group, s, poses) for s in kept]
    # A cheap sweep before any other (the solvers that search run only a cheap one), then
    # the fewest values, a closed form built per solve counted as BUILD_COST of them.
    best_i = min(range(len(kept)), key=lambda i: (
        covers[i] > CHEAP_VALUES, covers[i] + (0.0 if kept[i].end else BUILD_COST)))
    best = kept[best_i]
    best.cheap = covers[best_i] <= CHEAP_VALUES
    if not best.end:
        best.inner = _inner(group, frame_id, best, H, P, R)
    poses = [_pose(group, frame_id, q) for q in _samples(group, RANK_SAMPLES, 2)]
    best.defer_rank(poses, lower, upper)
    return Detection(best, "")


def _family(sweep: Sweep) -> str:
    """Return EAIK's family of the rest when it decomposes at every tested value, else ''."""
    lo, hi = sweep._lo, sweep._hi
    if not (math.isfinite(lo) and math.isfinite(hi)):
        lo, hi = -math.pi, math.pi
    families = set()
    for value in np.linspace(lo, hi, DETECT_VALUES):
        robot = sweep.eaik_robot(float(value))
        if robot is None or not robot.has_known_decomposition():
            return ""
        families.add(robot.get_kinematic_family())
    return "/".join(sorted(families))


def _samples(group, count: int, rng_seed: int = 0) -> List[np.ndarray]:
    """``count`` configurations within the limits (one turn on continuous joints)."""
    rng = np.random.default_rng(rng_seed)
    lo = np.where(np.isfinite(group.lower), group.lower, -math.pi)
    hi = np.where(np.isfinite(group.upper), group.upper, math.pi)
    return [rng.uniform(lo, hi) for _ in range(count)]


def _pose(group, frame_id: int, q: np.ndarray) -> np.ndarray:
    """``T_world_frame`` (4, 4) at ``q`` on the full model."""
    data = group.full_data()
    pin.framesForwardKinematics(group.robot.model, data, group.to_full_q(q))
    return data.oMf[frame_id].homogeneous.copy()


def _self_test(group, frame_id: int, sweep: Sweep) -> bool:
    """Whether, held at a known configuration's value, the closed form finds it again."""
    for q in _samples(group, SELF_TEST_SAMPLES):
        value = float(q[sweep.joint])
        form = None if sweep.end else sweep.at(value)
        T = _pose(group, frame_id, q)
        if form is not None and np.abs(form.forward(q) - T).max() > chain.SELF_TEST_TOLERANCE:
            return False
        rows = sweep.rows(value, form, T)
        if rows is None:
            return False
        if not _found_again(np.asarray(rows[0])[~np.asarray(rows[1], dtype=bool)], q):
            return False
    return True


def _found_again(rows: np.ndarray, q: np.ndarray) -> bool:
    """Whether some row (k, 7) is ``q`` within :data:`SELF_TEST_TOLERANCE` (mod 2 pi)."""
    if not len(rows):
        return False
    gap = np.abs(np.remainder(rows - q + math.pi, 2 * math.pi) - math.pi).max(axis=1)
    return bool(gap.min() <= SELF_TEST_TOLERANCE)


def _inner(group, frame_id: int, sweep: Sweep, H: np.ndarray, P: np.ndarray, R: np.ndarray
           ) -> Optional[inner.Inner]:
    """:func:`.inner.layout` of the chain held at the swept joint, or None.

    None unless numba is present and, held at each self-test configuration's value, the
    compiled form finds that configuration again.
    """
    found = inner.layout(H, P, R, sweep.joint)
    if found is None or not compiled.available():
        return None
    inner.warm_up()
    lower, upper = np.full(JOINTS, -np.inf), np.full(JOINTS, np.inf)
    for limit in (lower, upper):  # of the types the entry takes (the group's: read-only)
        limit.setflags(write=False)
    for q in _samples(group, SELF_TEST_SAMPLES):
        rows = inner.branches_at(found, float(q[sweep.joint]), _pose(group, frame_id, q), q,
                                 lower, upper, 1e-9).q
        if not _found_again(rows, q):
            return None
    return found


def _reached(lower: np.ndarray, upper: np.ndarray, sweep: Sweep, poses: List[np.ndarray]
             ) -> np.ndarray:
    """(C, N) bool: the cell's centre gives pose ``i`` (4, 4) branches within the limits.

    ``lower``, ``upper`` (7,): the group's limits.  One batched closed-form call and one
    compiled pass per value (:mod:`.many`'s).
    """
    T = np.array(poses)
    lower, upper = np.asarray(lower, float), np.asarray(upper, float)
    if sweep.end:  # the rest's rows: the held joint's column is at the value, inside
        rest = chain.ClosedForm(sweep._rest, sweep.family, JOINTS - 1, tangents=False)
        lower, upper = np.delete(lower, sweep.joint), np.delete(upper, sweep.joint)
    seeds = np.repeat(np.clip(0.0, lower, upper)[None], len(poses), axis=0)
    reached = np.zeros((CELLS, len(poses)), dtype=bool)
    for k, value in enumerate(sweep.centres().tolist()):
        if sweep.end:
            moved = np.array([held.target(H, value, sweep._axis, sweep._point,
                                          sweep._tool_RT, sweep.joint == 0, sweep.slide)
                              for H in T])
            Q, ls = rest.solve_many(moved)
        else:
            form = sweep.at(value)
            if form is None:
                continue
            Q, ls = form.solve_many(T)
        reached[k] = branches.nearest_each(Q, ls, seeds, lower, upper)[1]
    return reached


def _cover(group, sweep: Sweep, poses: List[np.ndarray]) -> float:
    """Set ``sweep``'s coverage order on ``poses`` (4, 4); return the mean values to reach one.

    The order (greedy: the value that reaches most poses not yet reached, then the next)
    breaks the ranking's ties (:meth:`Sweep.order`).  A pose no value reaches counts as
    ``2 * CELLS``.
    """
    reached = _reached(group.lower, group.upper, sweep, poses)
    order, covered = [], np.zeros(len(poses), dtype=bool)
    left = list(range(CELLS))
    while left:  # greedy: most new poses, then most poses, then the lower value
        gain = [(int((reached[k] & ~covered).sum()), int(reached[k].sum()), -k) for k in left]
        k = left.pop(gain.index(max(gain)))
        order.append(k)
        covered |= reached[k]
    sweep.order(np.array(order))
    first = np.where(reached[order].any(axis=0), reached[order].argmax(axis=0) + 1, 2 * CELLS)
    return float(first.mean())


def along(sweep: Sweep, group, T_world_frame: pin.SE3, seed: np.ndarray, distinct: float
          ) -> Iterator[Branches]:
    """Yield the :class:`.branches.Branches` of ``T_world_frame`` at each swept value.

    In the order of :meth:`Sweep.forms` from ``seed`` (n,) [rad]; values EAIK refuses
    are skipped.  The caller stops when it has what it needs.  A :class:`.chain.Placed`
    sweep (a held group's chain moved) solves its source's target ``D^-1 T``.
    """
    T = T_world_frame.homogeneous
    if type(sweep) is chain.Placed:
        T, sweep = sweep.local(T), sweep.form
    lower, upper = group.lower, group.upper
    rest, joint = sweep._rest, sweep.joint
    if sweep.inner is not None:  # one compiled call a value
        for value, _ in sweep.ordered(float(seed[joint]), T):
            yield inner.branches_at(sweep.inner, value, T, seed, lower, upper, distinct)
        return
    if rest is not None:  # an end joint: one closed form, the target moves (:mod:`.held`)
        axis, point, tool_RT, first = sweep._axis, sweep._point, sweep._tool_RT, joint == 0
        target, solve, slide = held.target, rest.calculate_IK, sweep.slide
        representatives = branches.widened_representatives
        pack = branches.pack
        for value, _ in sweep.forms(float(seed[joint]), T):
            solution = solve(target(T, value, axis, point, tool_RT, first, slide))
            yield pack(*representatives(solution.Q, solution.is_LS, joint, value, seed, lower,
                                        upper, distinct, not slide))
        return
    for value, form in sweep.forms(float(seed[joint]), T):
        if form is not None:
            Q, ls = form.solve(T)
            yield branches.of_rows(Q, ls, lower, upper, seed, distinct)


def prepare(group, frame: str) -> None:
    """Detect ``group``'s sweep to ``frame``, fit its ranking, load the compiled step.

    For the solvers that run the sweep (:func:`ros2_ik.core.solvers.swept.form`), outside
    any solve's budget.
    """
    if group.n != JOINTS:
        return
    frame_id = group.robot.frame_id(frame)
    sweep = of(group, frame_id)
    if sweep is None:
        return
    mid = group.mid_configuration()
    # Two values: the seed's, then the first ranked (the ranking is fitted, if it was not,
    # and its compiled step loads).
    for k, _ in enumerate(along(sweep, group, pin.SE3(_pose(group, frame_id, mid)), mid,
                                1e-2)):
        if k:
            return
