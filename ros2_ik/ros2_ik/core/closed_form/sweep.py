"""Seven-joint arms by a swept joint over the closed form of the six others.

A 7R chain has a continuum of solutions per pose.  Held at a value, one of its joints
leaves a six-joint chain; when EAIK decomposes that chain (its product-of-exponentials
form, :mod:`.chain`, with the held joint's rotation folded into the offsets: EAIK's
``fixed_axes``), each value gives the six joints' exact branches in microseconds.

Detection (:func:`of`, once per group and frame, from the kinematics alone): every
joint is tried held; it is kept when EAIK decomposes the rest at values spread over its
limits and a self-test finds known configurations again.  Each joint kept gets an
order of :data:`CELLS` values spread over its limits (cell centres; a continuous joint:
one turn): greedily, the value that gives branches within the limits to the most sample
poses not yet covered, then the next (the coverage order, fixed once per group); the
joint whose order reaches the sample poses in the fewest values is swept.  A chain
where no joint works has no sweep (the search solves it as before).

Solving (:func:`along`, answered by :mod:`ros2_ik.core.solvers.swept`): the swept
joint takes the seed's value first (a seed near a solution: that solution's branch),
then the values of the coverage order (:meth:`Sweep.forms`); at each value the branches
within the limits (:func:`.branches.branches`) are verified on the full model.  A
sampled joint proves nothing about the values between samples: after the sweep's budget
the search runs (from the nearest branches just outside the limits), and NO_SOLUTION
comes only from the search or the reach bound.  ``num_solutions`` returns the distinct
branches the sweep found within its budget: a 7R pose has a continuum of them, so this
is a sample of the solutions, not every one.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Iterator, List, NamedTuple, Optional, Tuple

import numpy as np
import pinocchio as pin

from ros2_ik.core.closed_form import chain
from ros2_ik.core.runtime.per_object import PerObjectAndKey

if TYPE_CHECKING:  # numba compiles branches: imported once a sweep is found
    from ros2_ik.core.closed_form.branches import Branches

#: Joints of a chain the sweep takes: seven rotations.
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


class Sweep:
    """The swept joint of a 7R chain and its six-joint closed forms (module docstring).

    ``joint``: index of the swept joint in the group; ``family``: a description for
    messages (the joint's name and EAIK's family of the rest).
    """

    __slots__ = ("joint", "family", "name", "_H", "_P", "_R", "_lo", "_hi", "_Robot", "_grid")

    def __init__(self, joint: int, name: str, family: str, H: np.ndarray, P: np.ndarray,
                 R: np.ndarray, lower: float, upper: float):
        """Hold the chain's form (internal: use :func:`of`)."""
        self.joint, self.name = joint, name
        self.family = f"joint '{name}' swept over {family}"
        self._H, self._P, self._R = H.T.copy(), P.T.copy(), R
        self._lo, self._hi = lower, upper
        import eaik.pybindings.EAIK as eaik
        self._Robot = eaik.Robot
        self._grid = None  # (values (CELLS,), their closed forms): :meth:`order`

    def at(self, value: float) -> Optional[chain.ClosedForm]:
        """Return the closed form of the chain with the swept joint held at ``value`` [rad].

        Its branches have seven columns, the swept joint's at ``value``.  None when EAIK
        refuses the chain at that value.
        """
        robot = self.eaik_robot(value)
        return None if robot is None else chain.ClosedForm(robot, self.family, JOINTS)

    def eaik_robot(self, value: float):
        """Return EAIK's robot of the chain held at ``value`` [rad] (None: EAIK refuses it)."""
        try:
            return self._Robot(self._H, self._P, self._R, [(self.joint, value)], True)
        except RuntimeError:  # e.g. two axes made parallel at this value
            return None

    def forms(self, seed_value: float) -> Iterator[Tuple[float, Optional[chain.ClosedForm]]]:
        """Yield ``(value [rad], closed form held there)`` in sweep order (None: refused).

        The seed's value (clamped into the limits) first, then the coverage order
        (module docstring).  Its closed forms are built once.
        """
        lo, hi = self._lo, self._hi
        first = min(max(seed_value, lo), hi)
        yield first, self.at(first)
        yield from zip(self._grid[0].tolist(), self._grid[1])

    def values(self, seed_value: float) -> List[float]:
        """Return the swept joint's values [rad] in the order of :meth:`forms`."""
        return [value for value, _ in self.forms(seed_value)]

    def centres(self) -> np.ndarray:
        """Centres (CELLS,) of the cells over the limits (a continuous joint: one turn)."""
        lo, hi = self._lo, self._hi
        if not (math.isfinite(lo) and math.isfinite(hi)):
            lo, hi = -math.pi, math.pi
        return lo + (np.arange(CELLS) + 0.5) / CELLS * (hi - lo)

    def order(self, values: np.ndarray) -> None:
        """Sweep ``values`` [rad] after the seed's, in this order; build their forms."""
        self._grid = (values, [self.at(v) for v in values.tolist()])


class Detection(NamedTuple):
    """Whether a chain has a sweep: the sweep, or None and the reason why not."""

    sweep: Optional[Sweep]
    reason: str


def of(group, frame_id: int) -> Optional[Sweep]:
    """Return the sweep of ``group``'s chain to frame ``frame_id`` (full model), or None.

    Detected once per group and frame (:func:`detect`), then a lookup.
    """
    return _DETECTIONS(group, frame_id).sweep


def reason(group, frame_id: int) -> str:
    """Why ``group``'s chain to ``frame_id`` has no sweep ('' when it has one)."""
    return _DETECTIONS(group, frame_id).reason


#: Per group and frame id: its Detection (``detect`` is defined below).
_DETECTIONS: PerObjectAndKey = PerObjectAndKey(lambda group, fid: detect(group, fid))


def detect(group, frame_id: int) -> Detection:
    """Read the chain, try each joint held, keep the best that passes (module docstring)."""
    model = group.robot.model
    if group.n != JOINTS:
        return Detection(None, f"{group.n} joints (a sweep takes {JOINTS})")
    axes = chain._axes(model, group.joint_ids)
    if isinstance(axes, str):
        return Detection(None, axes)
    chain_joints = list(model.supports[model.frames[frame_id].parentJoint])
    if any(j not in chain_joints for j in group.joint_ids):
        return Detection(None, f"frame '{model.frames[frame_id].name}' does not hang on "
                               f"every group joint")
    try:
        import eaik.pybindings.EAIK  # noqa: F401
    except ImportError:
        return Detection(None, "eaik is not installed (pip install --no-deps eaik==1.2.2)")
    H, P, R = chain._product_of_exponentials(group, frame_id, axes)
    kept = []
    for i in range(JOINTS):
        lo, hi = float(group.lower[i]), float(group.upper[i])
        sweep = Sweep(i, group.joint_names[i], "", H, P, R, lo, hi)
        family = _family(sweep)
        if family and _self_test(group, frame_id, sweep):
            kept.append(Sweep(i, group.joint_names[i], family, H, P, R, lo, hi))
    if not kept:
        return Detection(None, "no joint, held fixed, leaves a 6R chain that EAIK "
                               "decomposes and that passes the self-test")
    poses = [pin.SE3(_pose(group, frame_id, q)) for q in _samples(group, COVER_SAMPLES, 1)]
    scores = [_cover(group, s, poses) for s in kept]
    return Detection(kept[int(np.argmin(scores))], "")


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
    return data.oMf[frame_id].homogeneous


def _self_test(group, frame_id: int, sweep: Sweep) -> bool:
    """Whether, held at a known configuration's value, the closed form finds it again."""
    for q in _samples(group, SELF_TEST_SAMPLES):
        form = sweep.at(float(q[sweep.joint]))
        if form is None:
            return False
        T = _pose(group, frame_id, q)
        if np.abs(form.forward(q) - T).max() > chain.SELF_TEST_TOLERANCE:
            return False
        Q, ls = form.solve(T)
        exact = np.asarray(Q)[~np.asarray(ls, dtype=bool)]
        if not len(exact):
            return False
        gap = np.abs(np.remainder(exact - q + math.pi, 2 * math.pi) - math.pi).max(axis=1)
        if gap.min() > SELF_TEST_TOLERANCE:
            return False
    return True


def _cover(group, sweep: Sweep, poses: List[pin.SE3]) -> float:
    """Set ``sweep``'s coverage order on ``poses``; return the mean values to reach one.

    A pose no value reaches counts as ``2 * CELLS``.
    """
    from ros2_ik.core.closed_form import branches
    values = sweep.centres()
    seed = group.mid_configuration()  # feasibility does not depend on it: the limits do
    reached = np.zeros((len(values), len(poses)), dtype=bool)
    for k, value in enumerate(values.tolist()):
        form = sweep.at(value)
        if form is not None:
            reached[k] = [len(branches.branches(form, group.lower, group.upper, T, seed,
                                                1e-2).q) > 0 for T in poses]
    order, covered = [], np.zeros(len(poses), dtype=bool)
    left = list(range(len(values)))
    while left:  # greedy: most new poses, then most poses, then the lower value
        gain = [(int((reached[k] & ~covered).sum()), int(reached[k].sum()), -k) for k in left]
        k = left.pop(gain.index(max(gain)))
        order.append(k)
        covered |= reached[k]
    sweep.order(values[order])
    first = np.where(reached[order].any(axis=0), reached[order].argmax(axis=0) + 1, 2 * CELLS)
    return float(first.mean())


def along(sweep: Sweep, group, T_world_frame: pin.SE3, seed: np.ndarray, distinct: float
          ) -> Iterator[Branches]:
    """Yield the :class:`.branches.Branches` of ``T_world_frame`` at each swept value.

    In the order of :meth:`Sweep.forms` from ``seed`` (n,) [rad]; values EAIK refuses
    are skipped.  The caller stops when it has what it needs.
    """
    from ros2_ik.core.closed_form import branches
    for _, form in sweep.forms(float(seed[sweep.joint])):
        if form is not None:
            yield branches.branches(form, group.lower, group.upper, T_world_frame, seed,
                                    distinct)


def prepare(group, frame: str) -> None:
    """Detect ``group``'s sweep to ``frame`` and load the compiled step, if it has one."""
    if group.n != JOINTS:
        return
    frame_id = group.robot.frame_id(frame)
    sweep = of(group, frame_id)
    if sweep is None:
        return
    from ros2_ik.core.closed_form import branches
    mid = group.mid_configuration()
    T = pin.SE3(_pose(group, frame_id, mid))
    for _, form in sweep.forms(float(mid[sweep.joint])):
        if form is not None:
            branches.branches(form, group.lower, group.upper, T, mid, 1e-2)
            return
