"""A problem: a group, an optional pose target, constraints and costs (Drake-style)."""
from __future__ import annotations

import math
from operator import le
from typing import Iterable, List, Optional, Tuple

import numpy as np

from ros2_ik.core import errors, terms
from ros2_ik.core.constraints.joints import JointBoundsConstraint
from ros2_ik.core.constraints.orientation import OrientationConstraint
from ros2_ik.core.constraints.position import PositionConstraint
from ros2_ik.core.model.group import Group
from ros2_ik.core.pose import CompiledPose, PoseTarget


class Problem:
    """What to solve for ``group``: ``target`` (may be None), constraints and costs.

    Constraints are :class:`terms.Constraint` (``lower <= g(q) <= upper``), costs
    :class:`terms.Cost`; both are evaluated on the full pinocchio configuration.
    """

    def __init__(self, group: Group, target: Optional[PoseTarget] = None,
                 constraints: Iterable[terms.Constraint] = (),
                 costs: Iterable[terms.Cost] = ()):
        """Validate the pieces (raises InvalidGoal / InvalidFrame)."""
        if not isinstance(group, Group):
            raise errors.InvalidArgument(f"group must be a Group, got {type(group).__name__}")
        if target is not None and not isinstance(target, PoseTarget):
            raise errors.InvalidGoal(
                f"target must be a PoseTarget or None, got {type(target).__name__}")
        self.group = group
        self.target = target
        self.constraints: Tuple[terms.Constraint, ...] = \
            constraints if type(constraints) is tuple else tuple(constraints)
        self.costs: Tuple[terms.Cost, ...] = costs if type(costs) is tuple else tuple(costs)
        for c in self.constraints:
            _check_kind(c, terms.Constraint)
        for c in self.costs:
            _check_kind(c, terms.Cost)
        if target is None and not self.constraints and not self.costs:
            raise errors.InvalidGoal("problem has no target, no constraint and no cost")
        self.pose: Optional[CompiledPose] = target.compile(group) if target else None
        #: The joint-bounds constraints on group joints only: bounds of the variables, which
        #: the solvers keep by projection (:attr:`search_bounds`), not rows.  None when
        #: they leave a joint no value (disjoint windows): rows then, which fail as rows do.
        self.folded: Tuple[JointBoundsConstraint, ...]
        self.folded, self._windows = _folded(group, self.constraints) if self.constraints \
            else ((), group.limit_lists)
        #: The other constraints: rows for the solvers (every one is still verified).
        self.row_constraints: Tuple[terms.Constraint, ...] = tuple(
            c for c in self.constraints if c not in self.folded) if self.folded \
            else self.constraints
        self._search_bounds: Optional[Tuple[np.ndarray, np.ndarray]] = None
        self._centres: Optional[list] = None

    def with_terms(self, constraints: Iterable[terms.Constraint] = (),
                   costs: Iterable[terms.Cost] = ()) -> "Problem":
        """Return a copy with extra constraints and costs appended (``self`` when none are)."""
        constraints, costs = tuple(constraints), tuple(costs)
        if not constraints and not costs:  # nothing to add: no copy to validate again
            return self
        return Problem(self.group, self.target, self.constraints + constraints,
                       self.costs + costs)

    @property
    def windows(self) -> Tuple[list, list]:
        """Per group joint, the bounds every returned value must keep [rad or m].

        The joint limits, narrowed by each joint-bounds constraint on a group joint (a
        joint window such as a UR wrist held within +-0.05 rad): lists ``(lower, upper)``
        in group order.  Unwrapping chooses the 2 pi equivalent inside them
        (:meth:`Group.unwrap_near`).
        """
        return self._windows

    @property
    def window_centres(self) -> list:
        """Per group joint, the middle of its :attr:`windows` [rad or m]; nan when unbounded.

        The reference a start is unwrapped towards (a continuous joint's window may lie
        anywhere on the real line: ``[2.67, 3.27]``, ``[5.9, 6.5]``).
        """
        if self._centres is None:
            self._centres = [0.5 * (lo + hi) if math.isfinite(lo + hi) else math.nan
                             for lo, hi in zip(*self._windows)]
        return self._centres

    @property
    def search_bounds(self) -> Tuple[np.ndarray, np.ndarray]:
        """Bounds (n,) a solver projects group vectors into [rad or m] (writable copies).

        The group's search limits (none on wrapping joints: they are unwrapped at the
        end), narrowed to the :attr:`windows` of the joints a folded constraint bounds.
        """
        if self._search_bounds is None:
            lower, upper = self.group.search_lower, self.group.search_upper
            if self.folded:
                lower, upper = lower.tolist(), upper.tolist()
                index = self.group.joint_index
                for i in (index[n] for c in self.folded for n in c.joint_names):
                    lower[i], upper[i] = self._windows[0][i], self._windows[1][i]
            self._search_bounds = (np.array(lower, dtype=float), np.array(upper, dtype=float))
        return self._search_bounds

    @property
    def pose_only(self) -> bool:
        """True when the problem is a pose target and nothing else."""
        return self.pose is not None and not self.constraints and not self.costs


def _check_kind(term, kind: type) -> None:
    """Raise InvalidGoal unless ``term`` is a ``kind`` (:class:`terms.Constraint` or ``Cost``).

    The classes found to be one are remembered: an abstract base class's ``isinstance``
    is a Python call, and a problem checks every term.
    """
    key = (type(term), kind)
    if key not in _KINDS:
        if not isinstance(term, kind):
            raise errors.InvalidGoal(f"not a terms.{kind.__name__}: {term!r}")
        _KINDS.add(key)


#: ``(term class, kind)`` pairs :func:`_check_kind` found to hold.
_KINDS: set = set()


def pose_constraints(model, targets: Iterable[PoseTarget]) -> List[terms.Constraint]:
    """Pose targets as constraints: a position box and an orientation bound per target.

    The problem's one pose target is :attr:`Problem.target`; further pose goals (a second
    hand, a foot) become these constraints, with the targets' tolerances.  The position:
    a cube of half-width ``position_tolerance_m / sqrt(3)`` [m] in the target's axes, so
    that a point inside it lies within ``position_tolerance_m`` of the target (inside the
    ball of that radius).  A box, not the ball itself: its rows are linear in the point
    and converge where the distance stalls near its bound.  The orientation: within
    ``orientation_tolerance_rad`` [rad] of the target's, unless ``position_only``.
    ``model``: the pinocchio model the frames name.
    """
    out: List[terms.Constraint] = []
    for t in targets:
        if not isinstance(t, PoseTarget):
            raise errors.InvalidGoal(f"pose goal must be a PoseTarget, got {type(t).__name__}")
        half = np.full(3, t.position_tolerance_m / math.sqrt(3.0))
        ref = t.reference_frame or "universe"
        out.append(PositionConstraint(model, ref, -half, half, t.frame, np.zeros(3),
                                      t.T_ref_target, name=f"pose_position({t.frame})"))
        if not t.position_only:
            out.append(OrientationConstraint(
                model, ref, t.T_ref_target.rotation, t.frame, np.eye(3),
                t.orientation_tolerance_rad, name=f"pose_orientation({t.frame})"))
    return out


def _folded(group: Group, constraints: Tuple[terms.Constraint, ...]
            ) -> Tuple[Tuple[JointBoundsConstraint, ...], Tuple[list, list]]:
    """:attr:`Problem.folded` of ``constraints`` and the :attr:`Problem.windows` they make.

    No folded constraint (and the group's limits) when none bounds only group joints, or
    when their windows leave a joint no value.
    """
    index = group.joint_index
    folded = tuple(c for c in constraints if isinstance(c, JointBoundsConstraint)
                   and all(name in index for name in c.joint_names))
    if not folded:
        return (), group.limit_lists
    lower, upper = list(group.limit_lists[0]), list(group.limit_lists[1])
    for c in folded:
        for name, lo, hi in zip(c.joint_names, *c.bound_lists()):
            i = index[name]
            lower[i], upper[i] = max(lower[i], lo), min(upper[i], hi)
    if not all(map(le, lower, upper)):
        return (), group.limit_lists
    return folded, (lower, upper)
