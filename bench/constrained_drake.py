"""Drake's InverseKinematics for a :class:`constrained_problems.ProblemSpec` (issue 10).

The same URDF text as our side, through ``drake_ik.drake_urdf``: visuals dropped, the
group's locked joints made ``fixed`` at their value (0 here), and for the families
without distances the collision geometry dropped too; the root link welded to the world
at the origin (a link named ``world`` already is Drake's world).  Family h reuses the
Panda + scene plant of ``drake_ik.DrakeMinDistanceIK`` (the hulls our checker uses, the
same filtered pairs).  Frames are looked up by link name.

Each term maps to Drake's own constraint (AddPositionConstraint, AddOrientationConstraint,
AddGazeTargetConstraint, AddAngleBetweenVectorsConstraint, AddPointToPointDistance-
Constraint, AddPointToLineDistanceConstraint, AddPolyhedronConstraint,
AddMinimumDistanceLowerBoundConstraint(bound, influence - bound),
MoveIt's orientation box (``rotation_box``: Drake has no per-axis box, so
:meth:`DrakeArm.add_rotation_box` gives the components of ``R_AB`` as a generic
constraint on q, evaluated on the plant's AutoDiffXd copy),
AddMinimumDistanceUpperBoundConstraint(bound, ``UPPER_BOUND_INFLUENCE_M``),
AddDistanceConstraint on the proximity geometries of the two names: a link's (body name) or
a scene object's (``object/k``), one pair, or one per pair when there is no upper bound (our
distance of a name of several shapes is the smallest: Drake has no union)); the posture
cost to ``prog.AddQuadraticErrorCost(diag(w) / 2, q_nominal, q)`` (our PostureCost is
``1/2 sum w dq^2``), the position cost to ``AddPositionCost``; joint limits on.

Restarts: the seed first, then uniform random in the limits (continuous joints in
[-pi, pi]) until the solver claims success or the budget is spent; an attempt runs to
its end (SNOPT ignores its time limit), the caller counts a late answer as a failure.
SNOPT gets "Major feasibility tolerance" ``drake_ik.FEASIBILITY_TOLERANCE`` (1e-8: the
trace form of the orientation bound, tr(R) >= 1 + 2 cos(theta), turns 1e-6 into up to
2.5e-5 rad at theta = 0.02 and far more near theta = 0; squared distances turn 1e-6
into 1 mm near distance 0); IPOPT its defaults (tol 1e-8) but ``bound_relax_factor`` 0
(its default 1e-8 lets answers leave the joint limits by that much, which the check
rejects) and ``max_cpu_time`` = the time left.
"""
from __future__ import annotations

import math
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import numpy as np

from dof_arms import root_link
from drake_ik import FEASIBILITY_TOLERANCE, DrakeAttempt, drake_urdf
import pydrake.math as dmath
from pydrake.autodiffutils import AutoDiffXd
from pydrake.geometry import Role
from pydrake.math import RigidTransform, RotationMatrix, RotationMatrix_
from pydrake.multibody.inverse_kinematics import InverseKinematics
from pydrake.multibody.parsing import Parser
from pydrake.multibody.plant import AddMultibodyPlantSceneGraph
from pydrake.solvers import IpoptSolver, SnoptSolver, SolverOptions
from pydrake.systems.framework import DiagramBuilder

SOLVERS = {"drake_snopt": SnoptSolver, "drake_ipopt": IpoptSolver}
#: ``influence_distance_offset`` [m] of AddMinimumDistanceUpperBoundConstraint: its row is
#: flat (no gradient) once every pair is farther than the bound plus this; 1 m, Drake's
#: default offset of AddMinimumDistanceConstraint, keeps a gradient across the arm's reach.
UPPER_BOUND_INFLUENCE_M = 1.0
#: Suffix of a solver name started from the posture cost's ``q_nominal`` instead of the
#: seed (``drake_snopt_nominal``): the anchor given the start ros2_ik's lm also tries.
NOMINAL_START = "_nominal"


def components_ad(R, param: str) -> list:
    """Return the three components [rad] of a Drake rotation (floats or AutoDiffXd).

    ``"xyz_euler"``: MoveIt's ``calcEulerAngles`` (regular branch); ``"rotation_vector"``:
    ``2 atan2(|v|, w) v / |v|`` of its quaternion ``(w, v)``, ``w >= 0``.
    """
    M = R.matrix()
    if param == "xyz_euler":
        cos_pitch = dmath.sqrt((M[0, 0] ** 2 + M[0, 1] ** 2 + M[1, 2] ** 2 + M[2, 2] ** 2) / 2)
        return [dmath.atan2(-M[1, 2], M[2, 2]), dmath.atan2(M[0, 2], cos_pitch),
                dmath.atan2(-M[0, 1], M[0, 0])]
    q = R.ToQuaternion()
    w, v = q.w(), [q.x(), q.y(), q.z()]
    if (w.value() if hasattr(w, "value") else w) < 0:
        w, v = -w, [-x for x in v]
    s = dmath.sqrt(v[0] ** 2 + v[1] ** 2 + v[2] ** 2 + 1e-300)
    k = 2 * dmath.atan2(s, w) / s
    return [k * x for x in v]


def start_of(spec, solver: str) -> np.ndarray:
    """Return the first initial guess (group vector) of ``solver`` on ``spec``."""
    if solver.endswith(NOMINAL_START):
        for term in spec.costs:
            if term.kind == "posture":
                return np.asarray(dict(term.args)["q_nominal"], dtype=float)
    return spec.seed


class DrakeArm:
    """One Drake plant of an arm's group, for many problems (see module docstring)."""

    def __init__(self, urdf_xml: str, group, plant_from=None):
        self.scene_graph, self._shape_ids = None, None
        self.continuous = {n for n, c in zip(group.joint_names, group.continuous) if c}
        if plant_from is not None:  # a drake_ik.DrakeMinDistanceIK (panda + scene)
            self.plant, self.plant_context = plant_from.plant, plant_from.plant_context
            self.index = plant_from.index
            self.scene_graph = plant_from.scene_graph
        else:
            self._build(urdf_xml, group)
        lower = self.plant.GetPositionLowerLimits()
        upper = self.plant.GetPositionUpperLimits()
        self.sample_lo = np.where(np.isfinite(lower), lower, -math.pi)
        self.sample_hi = np.where(np.isfinite(upper), upper, math.pi)
        self.solvers = {name: cls() for name, cls in SOLVERS.items()}
        self._own_plants: Dict[type, tuple] = {}

    def _build(self, urdf_xml: str, group) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            text, _ = drake_urdf(urdf_xml, None, group.locked, Path(tmp))
        builder = DiagramBuilder()
        self.plant, _ = AddMultibodyPlantSceneGraph(builder, 0.0)
        Parser(self.plant).AddModelsFromString(text, "urdf")
        root = root_link(urdf_xml)
        if root != "world":
            self.plant.WeldFrames(self.plant.world_frame(), self.plant.GetFrameByName(root))
        self.plant.Finalize()
        self.diagram = builder.Build()
        context = self.diagram.CreateDefaultContext()
        self.plant_context = self.plant.GetMyMutableContextFromRoot(context)
        self._context = context
        self.index = np.array([self.plant.GetJointByName(n).position_start()
                               for n in group.joint_names])
        if self.plant.num_positions() != group.n:
            raise ValueError(f"Drake plant has {self.plant.num_positions()} positions, "
                             f"group {group.n}")

    def to_drake(self, q: np.ndarray) -> np.ndarray:
        """Group vector -> Drake's q."""
        out = np.empty(self.plant.num_positions())
        out[self.index] = q
        return out

    def program(self, spec) -> InverseKinematics:
        """Build the InverseKinematics program of ``spec``."""
        ik = InverseKinematics(self.plant, self.plant_context, with_joint_limits=True)
        for term in spec.constraints:
            self._constraint(ik, term.kind, term.args)
        for term in spec.costs:
            self._cost(ik, term.kind, term.args)
        return ik

    def _frame(self, name: str):
        return self.plant.GetFrameByName(name)

    def _constraint(self, ik: InverseKinematics, kind: str, a) -> None:
        f, v = self._frame, (lambda x: np.asarray(x, dtype=float))
        if kind == "position":
            ik.AddPositionConstraint(f(a["frame_B"]), v(a["p_BQ"]), f(a["frame_A"]),
                                     v(a["p_AQ_lower"]), v(a["p_AQ_upper"]))
        elif kind == "orientation":
            ik.AddOrientationConstraint(f(a["frame_Abar"]), RotationMatrix(v(a["R_AbarA"])),
                                        f(a["frame_Bbar"]), RotationMatrix(v(a["R_BbarB"])),
                                        a["theta_bound"])
        elif kind == "gaze":
            ik.AddGazeTargetConstraint(f(a["frame_A"]), v(a["p_AS"]), v(a["n_A"]),
                                       f(a["frame_B"]), v(a["p_BT"]), a["cone_half_angle"])
        elif kind == "angle":
            ik.AddAngleBetweenVectorsConstraint(f(a["frame_A"]), v(a["a_A"]), f(a["frame_B"]),
                                                v(a["b_B"]), a["angle_lower"],
                                                a["angle_upper"])
        elif kind == "point_to_point":
            ik.AddPointToPointDistanceConstraint(f(a["frame1"]), v(a["p_B1P1"]),
                                                 f(a["frame2"]), v(a["p_B2P2"]),
                                                 a["distance_lower"], a["distance_upper"])
        elif kind == "point_to_line":
            ik.AddPointToLineDistanceConstraint(f(a["frame_point"]), v(a["p_B1P"]),
                                                f(a["frame_line"]), v(a["p_B2Q"]),
                                                v(a["n_B2"]), a["distance_lower"],
                                                a["distance_upper"])
        elif kind == "polyhedron":
            ik.AddPolyhedronConstraint(f(a["frame_F"]), f(a["frame_G"]), v(a["p_GP"]),
                                       v(a["A"]), v(a["b"]))
        elif kind == "pose":
            self._pose(ik, a)
        elif kind in ("joint_bounds", "locked"):
            bounds = a["bounds"] if kind == "joint_bounds" else {
                name: (value, value) for name, value in a["positions"].items()}
            index = [self.plant.GetJointByName(name).position_start() for name in bounds]
            lower, upper = np.array([self._on_plant(n, b) for n, b in bounds.items()]).T
            ik.prog().AddBoundingBoxConstraint(lower, upper, ik.q()[index])
        elif kind == "min_distance":
            ik.AddMinimumDistanceLowerBoundConstraint(
                a["min_distance_m"], a["influence_distance_m"] - a["min_distance_m"])
        elif kind == "min_distance_upper":
            ik.AddMinimumDistanceUpperBoundConstraint(a["bound_m"], UPPER_BOUND_INFLUENCE_M)
        elif kind == "distance":
            self._distance(ik, a)
        elif kind == "rotation_box":
            self.add_rotation_box(ik, a)
        else:
            raise ValueError(f"no Drake mapping for constraint kind {kind!r}")

    def add_rotation_box(self, ik: InverseKinematics, a) -> None:
        """``|component_k(R_AB)| <= tolerances[k]`` [rad] as a generic constraint on q.

        ``R_AB = R_AbarA^T R_AbarBbar(q) R_BbarB``; the components by ``parameterization``
        (:func:`components_ad`), one row per tolerance below pi (a larger one bounds
        nothing).  Evaluated on a plant of its own, floats or AutoDiffXd as SNOPT asks.
        """
        tol = np.asarray(a["tolerances"], dtype=float)
        rows = [k for k in range(3) if tol[k] < math.pi]
        A, B, param = a["frame_Abar"], a["frame_Bbar"], a["parameterization"]
        R_A_T, R_B = np.asarray(a["R_AbarA"], dtype=float).T, np.asarray(a["R_BbarB"], float)
        fixed = {float: (RotationMatrix(R_A_T), RotationMatrix(R_B)),
                 object: (RotationMatrix_[AutoDiffXd](R_A_T), RotationMatrix_[AutoDiffXd](R_B))}

        def rows_of(q):
            kind = object if q.dtype == object else float
            plant, context = self._own_plant(kind)
            plant.SetPositions(context, q)
            R = plant.CalcRelativeRotationMatrix(context, plant.GetFrameByName(A),
                                                 plant.GetFrameByName(B))
            c = components_ad(fixed[kind][0].multiply(R).multiply(fixed[kind][1]), param)
            return np.array([c[k] for k in rows])

        ik.prog().AddConstraint(rows_of, -tol[rows], tol[rows], ik.q())

    def _own_plant(self, kind: type):
        """(plant, context) for floats (``float``) or AutoDiffXd (``object``), made once."""
        if kind not in self._own_plants:
            plant = self.plant if kind is float else self.plant.ToAutoDiffXd()
            self._own_plants[kind] = (plant, plant.CreateDefaultContext())
        return self._own_plants[kind]

    def _on_plant(self, name: str, bounds) -> Tuple[float, float]:
        """Joint ``name``'s ``(lower, upper)`` [rad or m] as Drake's plant can hold them.

        A continuous joint's window is one on the circle: written 2 pi further, it is the
        same window.  Drake parses a continuous joint with a ``<limit>`` (example-robot-
        data's Kinova) as a revolute one within those limits, so the window is moved by
        turns to the equivalent nearest the middle of the plant's range.
        """
        lower, upper = bounds
        joint = self.plant.GetJointByName(name)
        lo, hi = joint.position_lower_limits()[0], joint.position_upper_limits()[0]
        if name in self.continuous and math.isfinite(lo) and math.isfinite(hi):
            turns = round((0.5 * (lo + hi) - 0.5 * (lower + upper)) / (2 * math.pi))
            lower, upper = lower + 2 * math.pi * turns, upper + 2 * math.pi * turns
        return lower, upper

    def _pose(self, ik: InverseKinematics, a) -> None:
        """Add a ``pose`` term as position constraints in the target frame (a free axis open).

        The frame's origin at the target's; unless ``position_only``, also points 10 cm
        along its x and y axes at theirs, and with a free axis along all three: each point
        is then held in the two other axes only, and the point along the free axis is the
        one that holds the tilts towards it to first order (along the other two only, they
        hold to the square root of SNOPT's tolerance, ~5e-4 rad), the two others the
        half turn about an axis normal to it. Points fix the orientation as accurately as
        the positions; SNOPT's orientation bound of 0 rad (the trace form) only holds to
        ~1e-4 rad, the check's tolerance.
        """
        T = np.asarray(a["T"], dtype=float)
        world, frame = self.plant.world_frame(), self._frame(a["frame"])
        X_world_target = RigidTransform(RotationMatrix(T[:3, :3]), T[:3, 3])
        free = np.zeros(3)
        if a["free_axis"] >= 0:
            free[a["free_axis"]] = np.inf
        points = [np.zeros(3)]
        if not a["position_only"]:
            points += list(0.1 * np.eye(3)[:2 if a["free_axis"] < 0 else 3])
        for p in points:
            ik.AddPositionConstraint(frame, p, world, X_world_target, p - free, p + free)

    def _distance(self, ik: InverseKinematics, a) -> None:
        """Add Drake's distance constraint on the geometry pair of two names (module doc)."""
        shapes = self._shapes()
        pairs = [(i, j) for i in shapes.get(a["geometry_a"], ())
                 for j in shapes.get(a["geometry_b"], ())]
        if not pairs or (len(pairs) > 1 and math.isfinite(a["distance_upper"])):
            raise ValueError(f"Drake takes one geometry pair: {a['geometry_a']!r} and "
                             f"{a['geometry_b']!r} have {len(pairs)}")
        for i, j in pairs:  # several only with no upper bound: each pair >= lower
            ik.AddDistanceConstraint((i, j), a["distance_lower"], a["distance_upper"])

    def _shapes(self) -> Dict[str, List]:
        """Proximity geometry ids by our name: the link's, or the scene object's (``obj/k``)."""
        if self._shape_ids is None:
            if self.scene_graph is None:
                raise ValueError("no collision geometry on this plant (family without scene)")
            inspector = self.scene_graph.model_inspector()
            world = self.plant.world_body().index()
            self._shape_ids = {}
            for gid in inspector.GetAllGeometryIds(Role.kProximity):
                body = self.plant.GetBodyFromFrameId(inspector.GetFrameId(gid))
                name = body.name() if body.index() != world else \
                    inspector.GetName(gid).split("::")[-1].split("/")[0]
                self._shape_ids.setdefault(name, []).append(gid)
        return self._shape_ids

    def _cost(self, ik: InverseKinematics, kind: str, a) -> None:
        if kind == "posture":
            weights = np.broadcast_to(np.asarray(a["weights"], float), self.index.shape)
            Q = np.zeros((len(weights), len(weights)))
            Q[self.index, self.index] = 0.5 * weights
            ik.prog().AddQuadraticErrorCost(Q, self.to_drake(np.asarray(a["q_nominal"])),
                                            ik.q())
        elif kind == "position_cost":
            ik.AddPositionCost(self._frame(a["frame_A"]), np.asarray(a["p_AP"], float),
                               self._frame(a["frame_B"]), np.asarray(a["p_BQ"], float),
                               np.asarray(a["C"], float))
        else:
            raise ValueError(f"no Drake mapping for cost kind {kind!r}")

    def solve(self, spec, solver: str, budget_s: float,
              rng: np.random.Generator) -> DrakeAttempt:
        """Restart until ``solver`` claims success or ``budget_s`` [s] is spent."""
        start = time.perf_counter()
        ik = self.program(spec)
        engine = self.solvers[solver.replace(NOMINAL_START, "")]
        guess: Optional[np.ndarray] = self.to_drake(start_of(spec, solver))
        attempts = 0
        while (left := budget_s - (time.perf_counter() - start)) > 0.0:
            options = SolverOptions()
            if solver.startswith("drake_snopt"):
                options.SetOption(engine.solver_id(), "Major feasibility tolerance",
                                  FEASIBILITY_TOLERANCE)
            else:  # bound_relax_factor 0: IPOPT's answers honour the joint limits exactly
                options.SetOption(engine.solver_id(), "max_cpu_time", max(left, 1e-4))
                options.SetOption(engine.solver_id(), "bound_relax_factor", 0.0)
            result = engine.Solve(ik.prog(), guess, options)
            attempts += 1
            if result.is_success():
                q = np.asarray(result.GetSolution(ik.q()))
                return DrakeAttempt(q[self.index], attempts, True)
            guess = self.sample_lo + (self.sample_hi - self.sample_lo) * rng.random(len(guess))
        return DrakeAttempt(None, attempts, False)
