"""The joints carrying the servo's group (a torso lift under an arm), followed every tick.

The servo's group is held where those joints stood at its start (node/upstream.py), and
rebuilding it while they move would cost a group per tick.  They carry the whole chain as
one body (``Group.mount_motion``: ``D``, the chain's frames at ``D * T_world_frame``), so
the servo keeps its group and steers the model's frame toward ``D^-1 T``: the robot's
frame then reaches ``T``.  Targets are kept in the robot's world (:meth:`Mount.to_robot`,
at their arrival) and mapped into the model's at every tick that ``D`` changed
(:meth:`Mount.to_model`); the collision checks read the joints' values where the robot
has them (:meth:`ros2_ik.core.servo.Servo.hold`), and with ``every`` those of the joints
beside the chain too (a second arm, the head, the fingers).  A joint that lies below a group joint
changes the chain's shape: it stays where the start read it, and :attr:`Mount.note` says
so.  No rclpy.
"""
from __future__ import annotations

from typing import Optional, Tuple

import numpy as np
import pinocchio as pin

from ros2_ik.core.servo.supervisor import Target
from ros2_ik.node.robot_source import JointStateCache
from ros2_ik.node.upstream import QUANTUM


class Mount:
    """``D`` of the servo's group from fresh ``joint_states`` (module docstring)."""

    def __init__(self, group, joints: JointStateCache, max_age_s: float,
                 every: bool = False) -> None:
        """Follow ``group``'s upstream joints in ``joints`` (``every``: all its locked ones).

        Values older than ``max_age_s`` [s] are not read: ``D`` keeps its last value.
        ``every``: the joints beside the chain too (a second arm, the head, the fingers),
        for the collision checks (:attr:`values`); they do not move the chain.
        """
        self.group, self._joints, self._max_age_s = group, joints, max_age_s
        self.names: Tuple[str, ...] = tuple(group.upstream)
        self._read = tuple(group.locked) if every else self.names
        self.D = pin.SE3.Identity()
        #: The locked joints' values [rad or m] as ``joint_states`` give them now (a mimic
        #: joint not given: by its leader's), for the collision checks
        #: (:meth:`ros2_ik.core.servo.Servo.hold`); the others keep the group's.
        self.values: dict = {}
        #: Whether the last :meth:`update` changed ``D`` (the targets' map with it).
        self.moved = False
        self.note = ""
        self._key: Optional[tuple] = None
        self._last: dict = {}  # every joint of ``_read`` read so far: its last value
        self._mount_key: Optional[tuple] = None
        model = group.robot.model
        ids = {model.getJointId(n) for n in self.names}  # mimic joints too
        self._carried = {f: bool(ids.intersection(model.supports[model.frames[f].parentJoint]))
                         for f in range(len(model.frames))}

    def update(self) -> bool:
        """Read the joints again; return True when one changed (:attr:`values`, :attr:`moved`).

        A joint without a fresh value keeps the value it was last read at (an upstream
        one: ``D`` stays); until every upstream joint was read once, nothing changes.
        ``D`` is computed again only when an upstream joint moved (one full-model FK).
        """
        self.moved = False
        if not self._read:
            return False
        # A joint without a fresh value now (a publisher's hiccup) keeps the value last
        # read: not the group's, from when the group was made (a second arm's collision
        # checks then placed it where it stood back then), and a paused lift does not
        # stop the second arm's readings.
        read = {**self._last, **self._joints.fresh_each(self._read, self._max_age_s)}
        if any(n not in read for n in self.names):
            return False
        self._last = dict(read)
        key = tuple((n, round(v / QUANTUM)) for n, v in read.items())
        if key == self._key:
            return False
        mount = tuple(round(read[n] / QUANTUM) for n in self.names)
        if mount != self._mount_key:
            D = self.group.mount_motion({n: read[n] for n in self.names})
            if D is None:  # a joint below a group joint: the chain's shape, not its place
                self.note = (f"{', '.join(self.names)}: a joint inside the chain moved; the "
                             f"servo keeps the values its start read (restart it)")
                return False
            self.moved = not D.isApprox(self.D, 1e-12)
            self.D, self._mount_key = D, mount
        self._key = key
        read.update((n, v) for n, v in self.group.robot.followers(read).items()
                    if n in self.group.locked)
        self.values = read
        return True

    def to_robot(self, target: Target, frame_id: Optional[int]) -> Target:
        """``target`` (in the model's world, its pose read in frame ``frame_id``) in the robot's.

        A pose given in a frame the mount carries (the tool, the torso) moved with it:
        ``D`` times the model's; one in a frame above it (the base) is the same in both.
        """
        if target.pose is None or frame_id is None or not self._carried.get(frame_id, False):
            return target
        return Target(target.stamp, pose=self.D * target.pose)

    def to_model(self, target: Target) -> Target:
        """``target`` (in the robot's world) in the model's: ``D^-1`` on a pose, a world twist."""
        if target.pose is not None:
            return Target(target.stamp, pose=self.D.actInv(target.pose))
        if target.twist is not None and target.twist_in_world:
            R = self.D.rotation.T
            twist = np.concatenate((R.dot(target.twist[:3]), R.dot(target.twist[3:])))
            return Target(target.stamp, twist=twist, twist_in_world=True)
        return target
