"""ros2_ik's core on a whole-body problem (issue 47), as a user's code would call it.

The robot: ``Robot.from_urdf(urdf, srdf, root_joint=...)`` with the SRDF's virtual joint
where the SRDF declares one (pr2's planar ``world_joint``; anymal, go2, b1_z1 floating),
else the root joint the problem names (a free-flyer for talos, g1, romeo, solo12; a planar
base for tiago, given in the API).  The group: ``robot.whole_body(joints=..., locked=...)``
with the problem's moving joints (every joint when it names none), the others locked at the
seed's values.  Terms (``ros2_ik.core.constraints`` / ``costs``):

* a ``frame_pose`` of the hand, or of the base (quadrupeds): the :class:`PoseTarget`
  (1e-4 m, 1e-3 rad); of a sole: ``FramePlacementConstraint``;
* ``frame_position`` (a foot): ``PositionConstraint`` from the world, a zero-size box;
* ``com_in_support``: ``ComInSupportPolygonConstraint`` over the target footholds' points
  (``wholebody_problems.target_footholds``) with the margin;
* ``base_motion``: ``BaseMotionCost`` on the base joint's frame toward the seed's pose.

``solve(..., solver="lm", timeout_s = the budget left after building)``; the answer goes
back to the benchmark's full model by joint names.  ``prepare`` runs once per robot when the
adapter is built (start-up), outside every timed solve.
"""
from __future__ import annotations

import math
import time
from typing import Optional, Tuple

import numpy as np
import pinocchio as pin

import wholebody_problems as wb
from ros2_ik.core import PoseTarget, Problem, Robot, prepare, solve
from ros2_ik.core import constraints as C
from ros2_ik.core import costs as K

TOL_M, TOL_RAD = 1e-4, 1e-3


def root_joint_of(robot: str) -> str:
    """Return ``"srdf"`` if the SRDF declares a floating or planar virtual joint, else the root."""
    srdf = wb.srdf_text(robot)
    if 'type="floating"' in srdf or 'type="planar"' in srdf:
        return "srdf"
    return wb.ROBOTS[robot].root


class OursWholeBody:
    """One robot's whole-body group, for many problems (module docstring)."""

    def __init__(self, robot: str):
        self.robot, self.spec = robot, wb.ROBOTS[robot]
        self.bench_model = wb.full_model(robot)
        self.ours = Robot.from_urdf(wb.urdf_text(robot), wb.srdf_text(robot) or None,
                                    root_joint=root_joint_of(robot))
        self.model = self.ours.model
        seed = wb.nominal(robot)
        moving = wb.moving_joints(robot)[1:]
        locked = {}
        for j in range(2, self.bench_model.njoints):
            name = self.bench_model.names[j]
            if self.bench_model.nvs[j] == 1 and name not in moving:
                i = self.bench_model.idx_qs[j]
                locked[name] = float(math.atan2(seed[i + 1], seed[i])
                                     if self.bench_model.nqs[j] == 2 else seed[i])
        self.group = self.ours.whole_body(joints=list(moving) if self.spec.moving else None,
                                          locked=locked or None)
        # the one-time work at start-up, as the docs tell a user (and the node does)
        prepare(self.group, self.spec.hand or self.spec.base_frame, constrained=True)
        # Where each coordinate of the benchmark's q goes in ours, per joint (the root
        # first): one indexed copy each way per solve.
        bench_at, ours_at = [], []
        for j in range(1, self.bench_model.njoints):
            k = 1 if j == 1 else self.model.getJointId(self.bench_model.names[j])
            i, o, n = self.bench_model.idx_qs[j], self.model.idx_qs[k], self.bench_model.nqs[j]
            bench_at += range(i, i + n)
            ours_at += range(o, o + n)
        self._bench_at, self._ours_at = np.array(bench_at), np.array(ours_at)
        self._neutral = pin.neutral(self.model)

    def to_ours(self, q_bench: np.ndarray) -> np.ndarray:
        """Map the benchmark's full q to this robot's full q."""
        q = self._neutral.copy()
        q[self._ours_at] = q_bench[self._bench_at]
        return q

    def to_bench(self, q_full: np.ndarray) -> np.ndarray:
        """Map this robot's full q to the benchmark's full q."""
        q = np.empty(self.bench_model.nq)
        q[self._bench_at] = q_full[self._ours_at]
        return q

    def problem(self, problem) -> Problem:
        """Build the ros2_ik :class:`Problem` of a ``WholeBodyProblem``."""
        target, constraints, costs = None, [], []
        target_frames = {self.spec.hand, self.spec.base_frame} - {""}
        for term in problem.constraints:
            a = term.args
            if term.kind == "frame_pose" and a["frame"] in target_frames and target is None:
                target = PoseTarget(a["frame"], pin.SE3(np.asarray(a["T"], float)),
                                    position_tolerance_m=TOL_M, orientation_tolerance_rad=TOL_RAD)
            elif term.kind == "frame_pose":
                constraints.append(C.FramePlacementConstraint(
                    self.model, a["frame"], pin.SE3(np.asarray(a["T"], float))))
            elif term.kind == "frame_position":
                p = np.asarray(a["p"], float)
                constraints.append(C.PositionConstraint(
                    self.model, frame_A="universe", frame_B=a["frame"], p_BQ=np.zeros(3),
                    p_AQ_lower=p, p_AQ_upper=p))
            elif term.kind == "com_in_support":
                constraints.append(C.ComInSupportPolygonConstraint(
                    self.model, wb.target_footholds(problem, a["contacts"]),
                    margin=a["margin_m"]))
        for term in problem.costs:
            seed = self.group.from_full_q(self.to_ours(problem.seed))
            costs.append(K.BaseMotionCost(self.model, self.group.base_joint,
                                          self.group.base_placement(seed)))
        return Problem(self.group, target, constraints, costs)

    def solve(self, problem, budget_s: float,
              rng: np.random.Generator) -> Tuple[Optional[np.ndarray], bool, str]:
        """(benchmark full q on SUCCESS else None, SUCCESS claimed, status and message)."""
        start = time.perf_counter()
        built = self.problem(problem)
        seed = self.group.from_full_q(self.to_ours(problem.seed))
        left = max(budget_s - (time.perf_counter() - start), 1e-4)
        result = solve(self.group, built, seed, solver="lm", timeout_s=left,
                       random_seed=int(rng.integers(2**31)), constraint_tolerance_m=TOL_M)
        success = result.status.name == "SUCCESS"
        q = self.to_bench(self.group.to_full_q(result.q)) if success else None
        return q, success, f"{result.status.name}: {result.message}"
