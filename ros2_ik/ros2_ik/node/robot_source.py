"""Immutable snapshots of the robot model and the latest joint states.

A new ``robot_description`` replaces the snapshot atomically; a solve holds the
snapshot it started with, so an in-flight solve finishes on the old model and never
mixes two.  No rclpy here: the node feeds these from its callbacks.
"""
from __future__ import annotations

import math
import threading
import time
import xml.etree.ElementTree as ET
from collections import OrderedDict
from dataclasses import dataclass, field
from functools import cached_property
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

import pinocchio as pin

from ros2_ik.core.collision import CollisionChecker, MeshResolver, PlanningScene
from ros2_ik.core.errors import IKError
from ros2_ik.core.model.joint_limits_yaml import PlanningLimits
from ros2_ik.core.model.robot import Robot
from ros2_ik.core.model.srdf_groups import SrdfGroup, srdf_groups
from ros2_ik.node.request_frames import OutsideFrames
from ros2_ik.node.tf_tree import TfTree


@dataclass
class RobotSnapshot:
    """A built robot model with its version and planning scene.

    It caches the groups and the collision checker built on it.
    """

    robot: Robot
    version: int
    urdf: str
    srdf: str
    scene: PlanningScene = field(default_factory=PlanningScene)
    #: Frames outside the model a request may name (node/request_frames.py); the
    #: source's table, shared by its snapshots (it outlives a model update).
    outside_frames: OutsideFrames = field(default_factory=OutsideFrames)
    #: TF's frames (node/tf_tree.py), the source's tree, shared like ``outside_frames``.
    tf: TfTree = field(default_factory=TfTree)
    _groups: Dict[Tuple, object] = field(default_factory=dict)
    _variants: Dict[object, "OrderedDict[Tuple, object]"] = field(default_factory=dict)
    #: What a request's (group_name, base_link, tip_link) resolved to, with the config
    #: it was resolved under: ``(cfg, group, tip)`` (see ``compute_ik.resolve_group``).
    resolved: Dict[Tuple[str, str, str], Tuple[object, object, str]] = \
        field(default_factory=dict)
    _checker: Optional[CollisionChecker] = None
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _checker_lock: threading.Lock = field(default_factory=threading.Lock)
    _verification: threading.local = field(default_factory=threading.local)
    _srdf_groups: Optional[Dict[str, SrdfGroup]] = None

    @property
    def srdf_groups(self) -> Dict[str, SrdfGroup]:
        """The SRDF's groups on this model (core/model/srdf_groups.py), resolved on first use."""
        if self._srdf_groups is None:
            with self._lock:
                if self._srdf_groups is None:
                    self._srdf_groups = srdf_groups(self.robot, self.srdf)
        return self._srdf_groups

    def group(self, key: Tuple, build) -> object:
        """Return the group cached under ``key``, built by ``build()`` on first use."""
        with self._lock:
            if key not in self._groups:
                self._groups[key] = build()
            return self._groups[key]

    def variant(self, group, key: Tuple, build, limit: int) -> object:
        """Return ``group``'s variant cached under ``key``, built by ``build()`` on first use.

        At most ``limit`` variants per group are kept, the least recently used dropped
        first (node/upstream.py: a group held at other values of the joints carrying it).
        """
        with self._lock:
            variants = self._variants.setdefault(group, OrderedDict())
            found = variants.get(key)
            if found is None:
                found = variants[key] = build()
                while len(variants) > limit:
                    variants.popitem(last=False)
            else:
                variants.move_to_end(key)
            return found

    def verification_data(self) -> pin.Data:
        """Return this thread's ``Data`` of the full model for the independent re-check.

        Made once per thread and model (not per request), never handed to a solver.
        """
        data = getattr(self._verification, "data", None)
        if data is None:
            data = self._verification.data = self.robot.model.createData()
        return data

    @cached_property
    def base_parent_frame(self) -> str:
        """The frame the base joint hangs from: the SRDF virtual joint's ``parent_frame``.

        ``universe`` (the model's root frame, which it stands for) when the SRDF names none.
        Parsed once per snapshot: the servo reads it every tick, and parsing the SRDF holds
        the GIL (one C call), delaying the servo thread's ticks.
        """
        return virtual_joint_parent(self.srdf) or "universe"

    @cached_property
    def fixed_parent_frame(self) -> str:
        """The SRDF's fixed virtual joint's ``parent_frame`` (MoveIt's ``world``), or ''.

        The model is fixed to it at the origin, so it stands for the model's world
        (node/request_frames.py).
        """
        return virtual_joint_parent(self.srdf, ("fixed",))

    def checker(self, search_dirs: Sequence[str], skip_missing_meshes: bool,
                padding_m: float) -> CollisionChecker:
        """Return the collision checker of this model and scene, built on first use.

        Raises the core's RobotModelError (e.g. a missing mesh, naming the URI and the
        folders tried) when the collision geometry cannot be built.
        """
        with self._checker_lock:
            if self._checker is None or self._checker.padding_m != padding_m:
                self._checker = CollisionChecker.from_urdf(
                    self.robot.model, self.urdf, self.srdf or None, self.scene,
                    resolver=MeshResolver(search_dirs),
                    skip_missing_meshes=skip_missing_meshes, padding_m=padding_m)
            return self._checker


def virtual_joint_parent(srdf_xml: str, kinds: Tuple[str, ...] = ("floating", "planar")
                         ) -> str:
    """Return the ``parent_frame`` of the SRDF's virtual joint of one of ``kinds``, or ''."""
    if not srdf_xml:
        return ""
    try:
        root = ET.fromstring(srdf_xml)
    except ET.ParseError:
        return ""
    return next((v.get("parent_frame", "") for v in root.iter("virtual_joint")
                 if v.get("type") in kinds), "")


class RobotSource:
    """Holds the current :class:`RobotSnapshot` (or why there is none).

    ``root_joint``: the base joint of the models it builds (``Robot.from_urdf``'s
    ``root_joint``: "srdf", "floating", "planar"; "none" or None: no base joint).
    ``planning_limits``: the limits they take (``Robot.from_urdf``'s: MoveIt's
    joint_limits.yaml, joint -> :class:`PlanningLimits`).
    """

    def __init__(self, root_joint: Optional[str] = None,
                 planning_limits: Optional[Mapping[str, PlanningLimits]] = None) -> None:
        self.root_joint = None if root_joint in (None, "none") else root_joint
        self.planning_limits = dict(planning_limits or {})
        self._lock = threading.Lock()
        self._snapshot: Optional[RobotSnapshot] = None
        self._version = 0
        self._urdf = ""
        self._srdf = ""
        self.error = "no robot_description received yet"
        #: Scene objects dropped because a new model lacks their frames (for the log).
        self.dropped: list = []
        self._last_scene: Optional[PlanningScene] = None
        #: Frames outside the model (node/request_frames.py), kept across model updates.
        self.outside_frames = OutsideFrames()
        #: TF's frames (node/tf_tree.py), kept across model updates.
        self.tf = TfTree()

    @property
    def snapshot(self) -> Optional[RobotSnapshot]:
        """The current snapshot; None when no valid model exists (see ``error``)."""
        return self._snapshot

    def set_srdf(self, srdf: str) -> None:
        """Use ``srdf`` from now on; rebuild the model with it when a URDF is known.

        A SRDF the model cannot take is refused (the previous one stays) and raises.
        """
        previous, self._srdf = self._srdf, srdf
        if not self._urdf or self._snapshot is None:
            return
        try:
            self.set_urdf(self._urdf)
        except Exception:
            self._srdf = previous
            self.set_urdf(self._urdf)
            raise

    def set_urdf(self, urdf: str) -> None:
        """Build a new model; on failure drop the old one and raise the core error.

        The same URDF text again (a parameter and the topic, or a re-latched topic) keeps
        the current model.
        """
        if self._snapshot is not None and urdf == self._snapshot.urdf \
                and self._srdf == self._snapshot.srdf:
            return
        with self._lock:
            self._urdf = urdf
            try:
                robot = Robot.from_urdf(urdf, self._srdf or None, root_joint=self._root(),
                                        planning_limits=self.planning_limits)
            except Exception as exc:
                self._snapshot = None
                self.error = f"robot_description rejected: {exc}"
                raise
            self._version += 1
            self._snapshot = RobotSnapshot(robot, self._version, urdf, self._srdf,
                                           self._carry_scene(robot), self.outside_frames,
                                           self.tf)
            self.error = ""

    def _root(self) -> Optional[str]:
        """Return the ``root_joint`` to build with ("srdf" without an SRDF yet: no base)."""
        return None if self.root_joint == "srdf" and not self._srdf else self.root_joint

    def _carry_scene(self, robot: Robot) -> PlanningScene:
        """Return a scene for the new model holding every old object whose frames still exist."""
        scene = PlanningScene.for_model(robot.model)
        old = self._last_scene.snapshot().objects if self._last_scene else {}
        self._last_scene = scene
        for obj in old.values():
            try:
                scene.add(obj)
            except IKError as exc:
                self.dropped.append(f"{obj.name}: {exc}")
        return scene


class JointStateCache:
    """Latest position (and velocity) of every joint seen on ``joint_states``, with times.

    Several publishers may each send part of the joints; entries are merged by name.
    Times are ``time.monotonic()`` seconds.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        #: name -> (position, receive time, velocity)
        self._positions: Dict[str, Tuple[float, float, float]] = {}

    def update(self, names: Sequence[str], positions: Sequence[float],
               velocities: Sequence[float] = ()) -> None:
        """Merge one message (ignored entries: unnamed, or with NaN positions).

        ``velocities``: the message's, when it has one per name (else each counts as 0).
        """
        now = time.monotonic()
        if len(positions) != len(names):
            return
        speeds = velocities if len(velocities) == len(names) else (0.0,) * len(names)
        with self._lock:  # floats and math: a 1 kHz driver calls this 1000 times a second
            for name, value, speed in zip(names, positions, speeds):
                value, speed = float(value), float(speed)
                if name and math.isfinite(value):
                    self._positions[name] = (value, now,
                                             speed if math.isfinite(speed) else 0.0)

    def velocities(self, names: Sequence[str]) -> List[float]:
        """Return the last velocity of each of ``names`` [rad/s or m/s] (0 where none came)."""
        with self._lock:
            return [entry[2] if entry is not None else 0.0
                    for entry in map(self._positions.get, names)]

    def motion(self, names: Sequence[str]
               ) -> Optional[Tuple[List[float], List[float], List[float]]]:
        """Last positions, velocities (0 where none came) and receive times of ``names``.

        One reading under the lock: each joint's three come from the same message.  None
        when one of ``names`` never came.
        """
        with self._lock:
            entries = [self._positions.get(name) for name in names]
        if None in entries:
            return None
        return [e[0] for e in entries], [e[2] for e in entries], [e[1] for e in entries]

    def fresh(self, names: Sequence[str], max_age_s: float) -> Optional[Dict[str, float]]:
        """Positions of ``names`` (distinct) when all are known and younger than ``max_age_s``."""
        found = self.fresh_each(names, max_age_s)
        return found if len(found) == len(names) else None

    def fresh_each(self, names: Sequence[str], max_age_s: float) -> Dict[str, float]:
        """Positions of those of ``names`` that are known and younger than ``max_age_s``."""
        return {name: value for name, (value, age) in self.ages(names).items()
                if age <= max_age_s}

    def ages(self, names: Sequence[str]) -> Dict[str, Tuple[float, float]]:
        """``(position, age [s])`` of those of ``names`` ever seen, however old."""
        now = time.monotonic()
        with self._lock:
            return {name: (entry[0], now - entry[1]) for name in names
                    for entry in (self._positions.get(name),) if entry is not None}

    def latest(self) -> Dict[str, float]:
        """Every known position regardless of age."""
        with self._lock:
            return {name: entry[0] for name, entry in self._positions.items()}


def seed_readings(joints: JointStateCache, names: Sequence[str], timeout_s: float,
                  notes: Optional[list] = None) -> Optional[Dict[str, float]]:
    """``names``' last ``joint_states`` positions however old, or None if one never came.

    A seed reads where the robot was last seen (MoveIt's current state monitor keeps the
    last state too): a reading older than ``timeout_s`` [s] is still nearer the robot than
    mid-limits, whose answer can sit on another branch.  ``notes`` gets which readings
    were old, or which joints never came (the caller then seeds mid-limits).
    """
    read = joints.ages(names)
    missing = [n for n in names if n not in read]
    if missing:
        if notes is not None:
            notes.append(f"seed: mid-limits (joint_states never gave {missing})")
        return None
    old = [n for n in names if read[n][1] > timeout_s]
    if old and notes is not None:
        oldest = max(read[n][1] for n in old)
        notes.append(f"seed: the last joint_states of {old}, up to {oldest:.1f} s old "
                     f"(joint_state_timeout={timeout_s:g} s)")
    return {n: read[n][0] for n in names}
