#!/usr/bin/env python3
"""One revision's ComputeIK answers while ``joint_states`` jitter, for ``held_ab.py``.

Written against the API the revisions share (the node's ``compute_ik`` handler,
``RobotSource``, ``NodeConfig``, ``JointStateCache``): the request is answered as the
service answers it, in-process (no DDS: the round trip's transport is the same in both
revisions and is measured by ``make load``).  Per robot, one group (its arm, from
:data:`robots.ARMS` or the vendor manifest) and ``requests`` targets: FK of configurations
near mid-limits, in the group's base frame.  Four cells: ``avoid_collisions`` off / on,
``joint_states`` steady / jittering (every joint of the robot re-read with Gaussian noise
of ``JITTER_RAD`` [rad or m] before each request, as a real robot's encoders report it:
each request then holds the other joints at new values, a group held elsewhere).  Per
request: the handler's wall time [s] and the answer; each SUCCESS is checked here by
pinocchio FK on a model of our own, the other joints where ``joint_states`` put them
(1e-4 m, 1e-3 rad).

    python bench/held_worker.py --robot pr2_right --requests 60 --out times.json
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import pinocchio as pin

import dof_arms
from ros2_ik.node import compute_ik as C
from ros2_ik.node.parameters import SCHEMA, GroupConfig, NodeConfig
from ros2_ik.node.robot_source import JointStateCache, RobotSource
from ros2_ik_interfaces.msg import IKErrorCode
from ros2_ik_interfaces.srv import ComputeIK

#: The encoders' noise on every joint [rad or m] (one standard deviation).
JITTER_RAD = 1e-4
TIMEOUT_S = 0.05
#: The fifth cell: collision-checked, joint_states steady, a box moved before each request.
SCENE_CELL = "avoid_true_scene_moving"
#: How far the box moves before each request [m].
SCENE_STEP_M = 1e-3
POS_TOL, ORI_TOL, SLACK = 1e-4, 1e-3, 1e-9


def arm_of(name: str) -> dof_arms.Arm:
    """Return example-robot-data's arm ``name``, else the vendor manifest's."""
    try:
        return dof_arms.example(name)
    except KeyError:
        import vendor_arms
        for a in vendor_arms.arms():
            if a.name == name:
                srdf = a.srdf.read_text() if a.srdf and a.srdf.is_file() else ""
                return dof_arms.Arm(a.name, "real_urdfs", a.path.read_text(), a.base, a.tip,
                                    srdf)
    raise SystemExit(f"unknown arm {name}")


def node_inputs(arm: dof_arms.Arm):
    """``(snapshot, config)`` as ik_node builds them, one group ``arm``."""
    source = RobotSource(None)
    source.set_srdf(arm.srdf)
    source.set_urdf(arm.urdf)
    values = {spec.name: spec.default for spec in SCHEMA}
    values["timeout"] = TIMEOUT_S
    return source.snapshot, NodeConfig(values, {"arm": GroupConfig("arm", arm.base, arm.tip)})


def request(arm: dof_arms.Arm, T_base_tip: pin.SE3, avoid: bool) -> ComputeIK.Request:
    """Return a ComputeIK request for ``T_base_tip`` in the group's base frame."""
    req = ComputeIK.Request(group_name="arm", timeout=TIMEOUT_S, random_seed=1,
                            avoid_collisions=avoid)
    req.target.header.frame_id = arm.base
    x = pin.SE3ToXYZQUAT(T_base_tip).tolist()
    p, o = req.target.pose.position, req.target.pose.orientation
    p.x, p.y, p.z = x[:3]
    o.x, o.y, o.z, o.w = x[3:]
    return req


def miss(model: pin.Model, arm: dof_arms.Arm, held: dict, res, T_base_tip: pin.SE3) -> bool:
    """Whether a SUCCESS misses its target on our own FK, the other joints at ``held``."""
    values = dict(held)
    values.update(zip(res.solution.name, res.solution.position))
    q = pin.neutral(model)
    for j in range(1, model.njoints):
        name = model.names[j]
        if name in values and model.nqs[j] == 1:
            q[model.idx_qs[j]] = values[name]
        elif name in values and model.nqs[j] == 2:
            q[model.idx_qs[j]:model.idx_qs[j] + 2] = np.cos(values[name]), np.sin(values[name])
    data = model.createData()
    pin.framesForwardKinematics(model, data, q)
    X = data.oMf[model.getFrameId(arm.base)].actInv(data.oMf[model.getFrameId(arm.tip)])
    pos = np.linalg.norm(X.translation - T_base_tip.translation)
    ori = np.linalg.norm(pin.log3(T_base_tip.rotation.T @ X.rotation))
    return bool(pos > POS_TOL + SLACK or ori > ORI_TOL + SLACK)


def run(arm: dof_arms.Arm, requests: int, seed: int) -> dict:
    """Return the five cells' times [s], codes and checks on ``arm``."""
    snapshot, cfg = node_inputs(arm)
    group = C.resolve_group(snapshot, cfg, "arm", "", "")[0]
    model = snapshot.robot.model
    names = [model.names[j] for j in range(1, model.njoints) if model.nvs[j] == 1]
    rest = {n: float(np.clip(0.0, *snapshot.robot.joint_limits(n))) for n in names}
    rng = np.random.default_rng(seed)
    mid = group.mid_configuration()
    span = np.where(np.isfinite(group.upper - group.lower), group.upper - group.lower, 2.0)
    targets = []
    for _ in range(requests):
        q = np.clip(mid + rng.uniform(-0.15, 0.15, group.n) * span, group.lower, group.upper)
        targets.append(group.fk(q, arm.base).actInv(group.fk(q, arm.tip)))
    C.compute_ik(snapshot, "", cfg, JointStateCache(), request(arm, targets[0], True))  # loads
    cells = {}
    for avoid in (False, True):
        for jitter in (0.0, JITTER_RAD):
            cells[f"avoid_{str(avoid).lower()}_jitter_{jitter:g}"] = _cell(
                snapshot, cfg, arm, targets, avoid,
                lambda k: {n: v + jitter * rng.standard_normal() for n, v in rest.items()})
    cells[SCENE_CELL] = scene_cell(arm, snapshot, cfg, group, rest, targets)
    return {"arm": arm.name, "source": arm.source, "locked_joints": len(group.locked),
            "cells": cells}


def _cell(snapshot, cfg, arm, targets, avoid: bool, before) -> dict:
    """One cell: a request per target, ``before(k)`` first (the joints' values it returns).

    Times [s] of the node's handler, error codes, and the SUCCESSes that miss their target
    on our own FK, the other joints where ``before`` put them.
    """
    joints, times, codes, misses = JointStateCache(), [], [], 0
    for k, T in enumerate(targets):
        held = before(k)
        joints.update(list(held), list(held.values()))
        req = request(arm, T, avoid)
        t0 = time.perf_counter()
        res = C.compute_ik(snapshot, "", cfg, joints, req).response
        times.append(time.perf_counter() - t0)
        codes.append(int(res.error_code.val))
        if res.error_code.val == IKErrorCode.SUCCESS:
            misses += miss(snapshot.robot.model, arm, held, res, T)
    return {"times_s": times, "codes": codes, "false_success": misses}


def scene_cell(arm, snapshot, cfg, group, rest: dict, targets) -> dict:
    """Collision-checked requests, joint_states steady, a box moved before each one.

    As a perception reports an object: the box (10 cm) 0.25 m above the group's tip at
    mid-limits moves by ``SCENE_STEP_M`` before each request, a new scene version each
    time (the objects are removed after).
    """
    from ros2_ik.core.collision.scene import Box, SceneObject, pose_from_xyz_quat
    above = group.fk(group.mid_configuration(), arm.tip).translation + (0.0, 0.0, 0.25)

    def move(k):
        snapshot.scene.add(SceneObject("box", [Box((0.1, 0.1, 0.1))], T_frame_object=(
            pose_from_xyz_quat(tuple(above + (SCENE_STEP_M * k, 0.0, 0.0))))))
        return rest
    cell = _cell(snapshot, cfg, arm, targets, True, move)
    snapshot.scene.clear()
    return cell


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--robot", required=True)
    p.add_argument("--requests", type=int, default=60)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", required=True)
    args = p.parse_args(argv)
    Path(args.out).write_text(json.dumps(run(arm_of(args.robot), args.requests, args.seed)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
