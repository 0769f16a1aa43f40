"""The joints outside a group, held where the robot holds them.

A fixed-base group locks every joint outside it (``Robot.group``: at 0, clipped into the
limits).  The locked joints *upstream* of the group (``Group.upstream``: a torso lift
under an arm, a rail under a 6R arm) place its whole chain in the world: a target in a
frame above them, the planning scene and world-frame constraints are met on the robot only
when the solve holds them where the robot holds them.  The others (a second arm, a head,
the fingers) matter to collision checks and to frames beside the chain: a request that
checks collisions, a goal with constraints or costs, or a target in such a frame (a head
camera's: :func:`beside`) holds them too (``every``).
Each request solves on the group held at those joints' values from, in this order:

1. the request's own seed or robot state, when it names them;
2. fresh ``joint_states``;
3. else the last ``joint_states`` reading, however old (the robot is where it was last
   seen, as MoveIt's current state monitor keeps it), and the reply's message says so;
4. else (never published) the group's own values, and the message says so: for an upstream
   joint always, for the others when the request holds them (a second arm that collision
   checks place at its group value, not where the robot has it).

A whole-body group has no upstream joint (its base is the root); a request that checks
collisions or reads a frame beside it holds its locked joints as any group's.

Values are rounded to :data:`QUANTUM` (rad or m: under 1e-6 m at a 2 m lever, a hundredth
of the default tolerance), so a joint that holds still reuses one group.  Each held set is
a group of its own: a copy of the group it came from, its models' placements rewritten
where a changed joint lies behind them (``Group._placed_elsewhere``), prepared on its
first request.  It shares the closed form, sweep, seed library and reach bound when only
joints beside the chain moved (``Group.chain_owner``), and the same moved with the chain
when only joints above it moved (a lift, a rail, a waist: ``Group.shape_owner``); ~0.5-1
ms in all.  A snapshot keeps :data:`VARIANTS` of them per group.
"""
from __future__ import annotations

from typing import Dict, Optional, Sequence

from ros2_ik.core.errors import IKError
from ros2_ik.node.base_pose import has_base
from ros2_ik.node.conversions import near_limits
from ros2_ik.node.error_codes import RequestError
from ros2_ik.node.parameters import NodeConfig
from ros2_ik.node.robot_source import JointStateCache, RobotSnapshot
from ros2_ik_interfaces.msg import IKErrorCode

#: Rounding of an upstream joint's value before it picks a group [rad or m].
QUANTUM = 1e-6
#: Held groups a snapshot keeps per group (least recently used dropped first).
VARIANTS = 8


def held_group(snapshot: RobotSnapshot, group, names: Sequence[str],
               positions: Sequence[float], joints: JointStateCache, cfg: NodeConfig,
               notes: Optional[list] = None, field: str = "seed", every: bool = False):
    """Return ``group`` held at its upstream joints' values (module docstring).

    ``names`` / ``positions``: the request's joint values (its seed or robot state,
    ``field`` names it in errors); a held joint's value there that is not finite or lies
    outside its limits is refused as a seed is (INVALID_SEED).  ``every``: every locked
    joint, not only the upstream ones (a request that checks collisions).  Which joints
    were held at old readings, and why an upstream joint kept the group's value, go to
    ``notes``.
    """
    if has_base(group) and not every:
        return group  # nothing carries a whole-body group: no upstream joint
    upstream = group.upstream
    wanted = list(group.locked) if every else list(upstream)
    if not wanted:
        return group
    values = _given(group.robot, wanted, names, positions, field)
    missing = [n for n in wanted if n not in values]
    if missing:
        read = joints.ages(missing)  # fresh, or old: where the robot was last seen
        values.update((n, value) for n, (value, _) in read.items())
        old = {n: entry for n, entry in read.items() if entry[1] > cfg.joint_state_timeout}
        kept = [n for n in upstream if n not in values]
        follow = group.robot.followers(values)  # a mimic joint given by its leader
        unseen = [n for n in wanted if n not in values and n not in upstream
                  and n not in follow]
        if notes is not None:
            if old:
                notes.append(_stale(old, cfg.joint_state_timeout))
            if kept:
                notes.append(_kept(group, kept))
            if unseen:
                notes.append(_unseen(group, unseen))
    held = {n: round(_clamped(group.robot, n, v) / QUANTUM) * QUANTUM
            for n, v in values.items()}
    if all(abs(group.locked[n] - v) <= QUANTUM for n, v in held.items()):
        return group  # the group's own values (within the rounding): no other group
    return snapshot.variant(group, tuple(sorted(held.items())), lambda: group.held_at(held),
                            VARIANTS)


def beside(group, frames: Sequence[str]) -> bool:
    """Whether a locked joint beside the chain moves one of ``frames`` (a head camera).

    A target expressed in such a frame is where the robot holds that joint: the request
    holds every joint (``every``).  Unknown names count as no frame (the request's own
    checks refuse them).
    """
    robot = group.robot
    model = robot.model
    near = set(group.upstream)
    for frame in frames:
        try:
            fid = robot.frame_id(frame) if frame else None
        except IKError:
            continue
        if fid is not None and any(model.names[j] in group.locked
                                   and model.names[j] not in near
                                   for j in model.supports[model.frames[fid].parentJoint]):
            return True
    return False


def _given(robot, wanted: Sequence[str], names: Sequence[str], positions: Sequence[float],
           field: str) -> Dict[str, float]:
    """Return the request's values of the ``wanted`` locked joints [rad or m].

    A non-finite one, or one farther than ``SEED_LIMIT_TOLERANCE`` outside its limits, is
    refused as a group joint's seed is (INVALID_SEED naming it); closer, it is clamped
    (:func:`held_group`, as joint_states are).
    """
    wanted = set(wanted)
    out = {}
    for name, value in zip(names, positions):
        if name in wanted:
            value = float(value)
            lo, hi = robot.joint_limits(name)
            if not near_limits(value, lo, hi):
                raise RequestError(IKErrorCode.INVALID_SEED,
                                   f"{field}: joint '{name}' (outside the group) = "
                                   f"{value:.6g} is not in its limits [{lo:.6g}, {hi:.6g}]")
            out[name] = value
    return out


def _clamped(robot, name: str, value: float) -> float:
    """Return ``value`` [rad or m] clamped into joint ``name``'s limits."""
    lo, hi = robot.joint_limits(name)
    return min(max(value, lo), hi)


def _stale(old: Dict[str, tuple], timeout_s: float) -> str:
    """Say that the joints of ``old`` (name -> (value, age [s])) are held at old readings."""
    shown = _listed(sorted(old))
    oldest = max(age for _, age in old.values())
    return (f"joints outside the group held at their last joint_states, up to {oldest:.1f} s "
            f"old (joint_state_timeout {timeout_s:g} s): {shown}")


def _unseen(group, missing: Sequence[str]) -> str:
    """Say that ``missing`` joints beside the chain keep the group's values, and where."""
    return ("joints outside the group never in joint_states held at their group values: "
            + _listed(_at(group, missing)))


def _listed(items: Sequence[str], shown: int = 3) -> str:
    """``items`` joined, the first ``shown`` of them and a count of the rest."""
    more = f" and {len(items) - shown} more" if len(items) > shown else ""
    return ", ".join(items[:shown]) + more


def _at(group, names: Sequence[str]) -> list:
    """``name=value`` of each of ``names`` at the group's locked value [rad or m]."""
    return [f"{n}={group.locked[n]:.6g}" for n in names]


def _kept(group, missing: Sequence[str]) -> str:
    """Say that ``missing`` upstream joints keep the group's values, and where."""
    held = ", ".join(_at(group, missing))
    return (f"joints carrying the group held at {held} (neither in the request nor in "
            f"joint_states)")
