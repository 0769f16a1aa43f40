"""Pink (pin-pink 4.4) on a whole-body problem (issue 47), iterated to convergence.

As its users run it for IK: on the robot's pinocchio model (the problem's locked joints
removed with ``buildReducedModel`` at their seed values; the same root joint), from the
seed, ``solve_ik`` (daqp) then ``configuration.integrate_inplace(v, dt)`` with ``DT`` = 1 s,
repeated until every target is within tolerance or the budget is spent.  Tasks:

* each contact and target frame: a ``FrameTask`` (position cost 1; orientation cost 1 for
  6D terms, 0 for 3D feet), gain 1 (a full Gauss-Newton step), ``lm_damping`` ``LM``;
* the CoM polygon: Pink has no inequality, so a ``ComTask`` on (x, y) only (cost
  (1, 1, 0)) whose target, before each step, is the CoM's own (x, y) projected onto the
  support polygon of the target footholds shrunk by the margin plus ``COM_EXTRA_M``: no
  pull while the CoM is inside, a pull to the nearest admissible point once it is out;
* a ``PostureTask`` toward the seed, cost ``POSTURE_COST`` (regularises the redundant
  joints; small enough that its pull leaves the targets within tolerance);
* the base-motion cost: a ``FrameTask`` on the root link toward its seed pose, cost
  ``BASE_COST`` (the same reason for its size).

Limits: ``ConfigurationLimit`` (joint limits; no velocity limits: this is IK, not a
controller step); the answer's one-DoF joints are clipped into their limits at the end, as
a user would before sending it (the QP holds them only to its tolerance, ~1e-7 rad, and
the check holds every method to the limits exactly).  Stopping test (the user's, on Pink's
own configuration): every frame within 0.9 of the check's tolerances (1e-4 m, 1e-3 rad)
and the CoM at least the margin inside the polygon (the task aims 0.5 mm deeper).  The
answer is judged by ``wholebody_check`` like every other method's.
"""
from __future__ import annotations

import time
from typing import List, Optional, Tuple

import numpy as np
import pinocchio as pin

import wholebody_problems as wb
from wholebody_check import TOL_M, TOL_RAD, convex_hull, halfplanes, inside_distance

DT = 1.0
LM = 1e-3
POSTURE_COST = 1e-6
BASE_COST = 1e-6
COM_EXTRA_M = 5e-4
STOP = 0.9


class PinkWholeBody:
    """Pink's tasks for one robot's problems (module docstring)."""

    def __init__(self, robot: str):
        import pink  # noqa: F401 - import cost outside the timed solves
        from pink.limits import ConfigurationLimit
        self.robot, self.spec = robot, wb.ROBOTS[robot]
        full = wb.full_model(robot)
        self.full = full
        moving = wb.moving_joints(robot)
        seed = wb.nominal(robot)
        locked = [j for j in range(2, full.njoints) if full.names[j] not in moving]
        self.model = pin.buildReducedModel(full, locked, seed) if locked else full
        self.slots = [(full.idx_qs[full.getJointId(self.model.names[j])],
                       self.model.idx_qs[j], self.model.nqs[j])
                      for j in range(1, self.model.njoints)]
        self.limits = [ConfigurationLimit(self.model)]
        self._com_data = self.model.createData()
        m = self.model
        self._bounded = np.zeros(m.nq, bool)
        for j in range(1, m.njoints):
            if m.nqs[j] == 1:
                self._bounded[m.idx_qs[j]] = True
        self.root_link = next(f.name for f in self.model.frames
                              if f.type == pin.FrameType.BODY)

    def reduce(self, q_full: np.ndarray) -> np.ndarray:
        """Full q -> this (reduced) model's q."""
        q = np.empty(self.model.nq)
        for i_full, i, n in self.slots:
            q[i:i + n] = q_full[i_full:i_full + n]
        return q

    def expand(self, q: np.ndarray, seed: np.ndarray) -> np.ndarray:
        """Reduced q -> full q (locked joints from ``seed``)."""
        out = seed.copy()
        for i_full, i, n in self.slots:
            out[i_full:i_full + n] = q[i:i + n]
        return out

    def tasks(self, problem):
        """(tasks, frame targets [(frame, SE3 or p, six_d)], CoM task or None, polygon)."""
        from pink.tasks import ComTask, FrameTask, PostureTask
        tasks, targets, com, hull = [], [], None, None
        for term in problem.constraints:
            a = term.args
            if term.kind in ("frame_pose", "frame_position"):
                six_d = term.kind == "frame_pose"
                task = FrameTask(a["frame"], position_cost=1.0,
                                 orientation_cost=1.0 if six_d else 0.0, lm_damping=LM)
                T = pin.SE3(np.asarray(a["T"], float)) if six_d else \
                    pin.SE3(np.eye(3), np.asarray(a["p"], float))
                task.set_target(T)
                tasks.append(task)
                targets.append((a["frame"], T, six_d))
            elif term.kind == "com_in_support":
                hull = convex_hull(wb.target_footholds(problem, a["contacts"])[:, :2])
                hull = (hull, a["margin_m"] + COM_EXTRA_M)
                com = ComTask(cost=np.array([1.0, 1.0, 0.0]), lm_damping=LM)
                tasks.append(com)
        posture = PostureTask(cost=POSTURE_COST)
        posture.set_target(self.reduce(problem.seed))
        tasks.append(posture)
        if problem.costs:
            base = FrameTask(self.root_link, position_cost=BASE_COST,
                             orientation_cost=BASE_COST)
            base.set_target(self._placement(self.reduce(problem.seed), self.root_link))
            tasks.append(base)
        return tasks, targets, com, hull

    def _placement(self, q: np.ndarray, frame: str) -> pin.SE3:
        data = self.model.createData()
        pin.framesForwardKinematics(self.model, data, q)
        return data.oMf[self.model.getFrameId(frame)].copy()

    def solve(self, problem, budget_s: float) -> Tuple[Optional[np.ndarray], int, bool]:
        """(full q or None, iterations, converged by Pink's own test) within ``budget_s``."""
        import pink
        start = time.perf_counter()
        tasks, targets, com, hull = self.tasks(problem)
        configuration = pink.Configuration(self.model, self.model.createData(),
                                           self.reduce(problem.seed))
        iterations = 0
        while True:
            com_xy = self._com_xy(configuration) if com is not None else None
            if self._converged(configuration, targets, com_xy, hull):
                return self.expand(self._clip(configuration.q), problem.seed), iterations, True
            if time.perf_counter() - start > budget_s:
                return self.expand(self._clip(configuration.q), problem.seed), iterations, False
            if com is not None:
                p = _project(hull[0], hull[1], com_xy)
                com.set_target(np.array([p[0], p[1], 0.0]))
            v = pink.solve_ik(configuration, tasks, DT, solver="daqp", limits=self.limits,
                              safety_break=False)
            configuration.integrate_inplace(v, DT)
            iterations += 1

    def _clip(self, q: np.ndarray) -> np.ndarray:
        """Return ``q`` with its one-DoF joints clipped into their limits (QP: ~1e-7 rad)."""
        q = q.copy()
        b = self._bounded
        q[b] = np.clip(q[b], self.model.lowerPositionLimit[b], self.model.upperPositionLimit[b])
        return q

    def _com_xy(self, configuration) -> np.ndarray:
        return pin.centerOfMass(self.model, self._com_data, configuration.q)[:2]

    @staticmethod
    def _converged(configuration, targets, com_xy, hull) -> bool:
        for frame, T, six_d in targets:
            X = configuration.get_transform_frame_to_world(frame)
            if np.linalg.norm(X.translation - T.translation) > STOP * TOL_M:
                return False
            if six_d and np.linalg.norm(pin.log3(T.rotation.T @ X.rotation)) > STOP * TOL_RAD:
                return False
        return com_xy is None or inside_distance(hull[0], com_xy) >= hull[1] - COM_EXTRA_M


def _project(hull: np.ndarray, margin_m: float, p_xy: np.ndarray) -> np.ndarray:
    """``p_xy`` if it is ``margin_m`` inside ``hull``, else the nearest such point (x, y)."""
    normals, offsets = halfplanes(hull)
    offsets = offsets + margin_m
    p = np.asarray(p_xy, float)
    if np.all(normals @ p >= offsets):
        return p
    best: List[np.ndarray] = []
    for k in range(len(normals)):  # onto each violated edge, clipped to the shrunk polygon
        q = p + (offsets[k] - normals[k] @ p) * normals[k]
        if np.all(normals @ q >= offsets - 1e-12):
            best.append(q)
    n = len(normals)
    for k in range(n):  # the shrunk polygon's corners
        A = np.array([normals[k], normals[(k + 1) % n]])
        if abs(np.linalg.det(A)) > 1e-12:
            q = np.linalg.solve(A, [offsets[k], offsets[(k + 1) % n]])
            if np.all(normals @ q >= offsets - 1e-9):
                best.append(q)
    return min(best, key=lambda q: float(np.linalg.norm(q - p))) if best else p
