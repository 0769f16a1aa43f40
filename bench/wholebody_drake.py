"""Drake's InverseKinematics on a whole-body problem (issue 47), SNOPT with restarts.

The plant: the robot's URDF text through ``drake_ik.drake_urdf`` (visuals and collision
geometry dropped: only kinematics and inertias matter; the problem's locked joints made
``fixed`` at their seed values), parsed with a ``PackageMap`` entry for example-robot-data.
The URDF root is a free body, to which Drake gives its quaternion floating joint; a mobile
base gets a ``PlanarJoint`` (x, y, theta) from the world to the root link instead.

The program: ``InverseKinematics(plant, context, with_joint_limits=True)``, which also keeps
the floating base's quaternion unit (``AddUnitQuaternionConstraintOnPlant``: its norm
equal to 1 as a constraint, q's quaternion bounded in [-1, 1]); no position bounds on the
base.  Terms:

* ``frame_pose``: three ``AddPositionConstraint`` points of the frame (its origin and
  0.1 m along its x and y axes) each in a box of half-width ``HALF_BOX_M`` around the
  target's (as ``constrained_drake``: SNOPT's orientation bound holds only to ~1e-4 rad);
* ``frame_position``: the origin in the same box;
* ``com_in_support``: ``ComInPolyhedronConstraint`` on the program, with the half-planes of
  the support polygon of the target footholds (the contacts are held at their targets, so
  the polygon is known) shrunk by the margin plus 0.1 mm;
* ``base_motion``: ``AddQuadraticErrorCost(weight I, seed's (x, y, theta), base)``.

Restarts: the seed first, then the moving joints uniform in their limits (continuous in
[-pi, pi]) with the base at the seed's pose, until SNOPT claims success or the budget is
spent (an attempt runs to its end: the caller counts a late answer as a failure).  SNOPT's
major feasibility tolerance is ``drake_ik.FEASIBILITY_TOLERANCE`` (1e-8).
"""
from __future__ import annotations

import math
import tempfile
import time
from pathlib import Path
from typing import Dict

import numpy as np
import pinocchio as pin

import wholebody_problems as wb
from drake_ik import FEASIBILITY_TOLERANCE, DrakeAttempt, drake_urdf
from wholebody_check import TOL_M, convex_hull, halfplanes
from pydrake.math import RigidTransform, RotationMatrix
from pydrake.multibody.inverse_kinematics import ComInPolyhedronConstraint, InverseKinematics
from pydrake.multibody.parsing import Parser
from pydrake.multibody.plant import AddMultibodyPlantSceneGraph
from pydrake.multibody.tree import PlanarJoint
from pydrake.solvers import SnoptSolver, SolverOptions
from pydrake.systems.framework import DiagramBuilder
from ros2_ik.core import robots

#: Half-width [m] of each point's box: the three points 0.1 m apart then fix the frame's
#: orientation within 2 * sqrt(3) * HALF_BOX_M / 0.1 = 2.5e-4 rad (of 1e-3) and its origin
#: within 1.25e-5 m (of 1e-4): a feasible point on the boxes' edge still passes the check.
HALF_BOX_M = 0.125 * TOL_M / math.sqrt(3.0)
#: Extra shrink [m] of the support polygon given to Drake, past the margin.
COM_EXTRA_M = 1e-4


class DrakeWholeBody:
    """One Drake plant of a robot (its moving joints; the others fixed), many problems."""

    def __init__(self, robot: str):
        self.robot, self.spec = robot, wb.ROBOTS[robot]
        self.model = wb.full_model(robot)
        seed = wb.nominal(robot)
        self.moving = wb.moving_joints(robot)
        locked = self._locked_values(seed)
        with tempfile.TemporaryDirectory() as tmp:
            text, _ = drake_urdf(wb.urdf_text(robot), None, locked, Path(tmp))
        builder = DiagramBuilder()
        self.plant, _ = AddMultibodyPlantSceneGraph(builder, 0.0)
        parser = Parser(self.plant)
        parser.package_map().Add("example-robot-data", str(robots.data_dir().parent))
        parser.AddModelsFromString(text, "urdf")
        self.root_link = _root_body(self.model)
        if self.spec.planar:
            self.plant.AddJoint(PlanarJoint("root_joint", self.plant.world_frame(),
                                            self.plant.GetFrameByName(self.root_link),
                                            np.zeros(3)))
        self.plant.Finalize()
        self.diagram = builder.Build()
        self._context = self.diagram.CreateDefaultContext()
        self.context = self.plant.GetMyMutableContextFromRoot(self._context)
        self._map()
        self.solver = SnoptSolver()
        lower, upper = self.plant.GetPositionLowerLimits(), self.plant.GetPositionUpperLimits()
        self.sample_lo = np.where(np.isfinite(lower), lower, -math.pi)
        self.sample_hi = np.where(np.isfinite(upper), upper, math.pi)

    def _locked_values(self, seed: np.ndarray) -> Dict[str, float]:
        m, out = self.model, {}
        for j in range(2, m.njoints):
            if m.nvs[j] == 1 and m.names[j] not in self.moving:
                i = m.idx_qs[j]
                out[m.names[j]] = float(math.atan2(seed[i + 1], seed[i]) if m.nqs[j] == 2
                                        else seed[i])
        return out

    def _map(self) -> None:
        """Index maps between Drake's q and pinocchio's (one-DoF joints by name)."""
        m, self.one_dof = self.model, []
        for j in range(2, m.njoints):
            if m.names[j] in self.moving:
                self.one_dof.append((m.idx_qs[j], m.nqs[j] == 2,
                                     self.plant.GetJointByName(m.names[j]).position_start()))
        if self.spec.planar:
            self.base_start = self.plant.GetJointByName("root_joint").position_start()
        else:
            self.base_start = self.plant.GetBodyByName(self.root_link).floating_positions_start()

    def to_drake(self, q: np.ndarray) -> np.ndarray:
        """Map pinocchio's full q to Drake's q."""
        out = np.zeros(self.plant.num_positions())
        b = self.base_start
        if self.spec.planar:
            out[b:b + 3] = q[0], q[1], math.atan2(q[3], q[2])
        else:
            out[b:b + 4] = q[6], q[3], q[4], q[5]  # (w, x, y, z)
            out[b + 4:b + 7] = q[:3]
        for iq, continuous, k in self.one_dof:
            out[k] = math.atan2(q[iq + 1], q[iq]) if continuous else q[iq]
        return out

    def to_pinocchio(self, x: np.ndarray, seed: np.ndarray) -> np.ndarray:
        """Map Drake's q to pinocchio's full q (locked joints from ``seed``)."""
        q = seed.copy()
        b = self.base_start
        if self.spec.planar:
            q[:4] = x[b], x[b + 1], math.cos(x[b + 2]), math.sin(x[b + 2])
        else:
            q[:3] = x[b + 4:b + 7]
            q[3:7] = x[b + 1], x[b + 2], x[b + 3], x[b]
        for iq, continuous, k in self.one_dof:
            if continuous:
                q[iq:iq + 2] = math.cos(x[k]), math.sin(x[k])
            else:
                q[iq] = x[k]
        return q

    def program(self, problem) -> InverseKinematics:
        """Build the InverseKinematics program of ``problem`` (module docstring)."""
        ik = InverseKinematics(self.plant, self.context, with_joint_limits=True)
        for term in problem.constraints:
            getattr(self, "_" + term.kind)(ik, term.args)
        for term in problem.costs:
            self._base_motion(ik, term.args, problem.seed)
        return ik

    def _frame_pose(self, ik, a) -> None:
        T = np.asarray(a["T"], float)
        X = RigidTransform(RotationMatrix(T[:3, :3]), T[:3, 3])
        frame = self.plant.GetFrameByName(a["frame"])
        for p in (np.zeros(3), 0.1 * np.eye(3)[0], 0.1 * np.eye(3)[1]):
            ik.AddPositionConstraint(frame, p, self.plant.world_frame(), X,
                                     p - HALF_BOX_M, p + HALF_BOX_M)

    def _frame_position(self, ik, a) -> None:
        p = np.asarray(a["p"], float)
        ik.AddPositionConstraint(self.plant.GetFrameByName(a["frame"]), np.zeros(3),
                                 self.plant.world_frame(), p - HALF_BOX_M, p + HALF_BOX_M)

    def _com_in_support(self, ik, a) -> None:
        points = wb.target_footholds(self._problem, a["contacts"])
        normals, offsets = halfplanes(convex_hull(points[:, :2]))
        A = np.hstack([normals, np.zeros((len(normals), 1))])
        lower = offsets + a["margin_m"] + COM_EXTRA_M
        constraint = ComInPolyhedronConstraint(self.plant, None, self.plant.world_frame(), A,
                                               lower, np.full(len(lower), np.inf), self.context)
        ik.prog().AddConstraint(constraint, ik.q())

    def _base_motion(self, ik, a, seed: np.ndarray) -> None:
        b = self.base_start
        start = self.to_drake(seed)[b:b + 3]
        ik.prog().AddQuadraticErrorCost(a["weight"] * np.eye(3), start, ik.q()[b:b + 3])

    def solve(self, problem, budget_s: float, rng: np.random.Generator) -> DrakeAttempt:
        """SNOPT from the seed, then restarts, until success or ``budget_s`` [s] is spent."""
        start = time.perf_counter()
        self._problem = problem
        ik = self.program(problem)
        first = self.to_drake(problem.seed)
        guess, attempts = first, 0
        options = SolverOptions()
        options.SetOption(self.solver.solver_id(), "Major feasibility tolerance",
                          FEASIBILITY_TOLERANCE)
        while budget_s - (time.perf_counter() - start) > 0.0:
            result = self.solver.Solve(ik.prog(), guess, options)
            attempts += 1
            if result.is_success():
                x = np.asarray(result.GetSolution(ik.q()))
                return DrakeAttempt(self.to_pinocchio(x, problem.seed), attempts, True)
            guess = first.copy()
            for _, _, k in self.one_dof:
                guess[k] = rng.uniform(self.sample_lo[k], self.sample_hi[k])
        return DrakeAttempt(None, attempts, False)


def _root_body(model: pin.Model) -> str:
    """Return the URDF's root link: the first BODY frame of the model."""
    return next(f.name for f in model.frames if f.type == pin.FrameType.BODY)
