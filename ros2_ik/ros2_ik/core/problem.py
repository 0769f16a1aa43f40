"""A problem: a group, an optional pose target, constraints and costs (Drake-style)."""
from __future__ import annotations

from typing import Iterable, Optional, Tuple

from ros2_ik.core import errors, terms
from ros2_ik.core.group import Group
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
        self.constraints: Tuple[terms.Constraint, ...] = tuple(constraints)
        self.costs: Tuple[terms.Cost, ...] = tuple(costs)
        for c in self.constraints:
            if not isinstance(c, terms.Constraint):
                raise errors.InvalidGoal(f"not a terms.Constraint: {c!r}")
        for c in self.costs:
            if not isinstance(c, terms.Cost):
                raise errors.InvalidGoal(f"not a terms.Cost: {c!r}")
        if target is None and not self.constraints and not self.costs:
            raise errors.InvalidGoal("problem has no target, no constraint and no cost")
        self.pose: Optional[CompiledPose] = target.compile(group) if target else None

    def with_terms(self, constraints: Iterable[terms.Constraint] = (),
                   costs: Iterable[terms.Cost] = ()) -> "Problem":
        """Return a copy with extra constraints and costs appended (``self`` when none are)."""
        constraints, costs = tuple(constraints), tuple(costs)
        if not constraints and not costs:  # nothing to add: no copy to validate again
            return self
        return Problem(self.group, self.target, self.constraints + constraints,
                       self.costs + costs)

    @property
    def pose_only(self) -> bool:
        """True when the problem is a pose target and nothing else."""
        return self.pose is not None and not self.constraints and not self.costs
