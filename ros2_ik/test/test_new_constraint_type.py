"""A constraint type added in one file plus one registration line solves with every solver.

Issue 39: adding a type meant about eight edits across the core.  Here a new type, the
height of a frame's origin above the world's xy plane within bounds [m], is defined in
this file alone (its class: rows, Jacobian, unit; the default ``measure`` and
``linearisation`` of :class:`terms.Constraint` follow from them) and registered with one
line.  The compiled kernels' dispatch is fixed when numba compiles it, so a type
registered at run time carries no type code: :func:`constraint_kernel.compile_problem`
returns None for its problems and every solver runs its Python path on them (asserted
below).  The answers are checked against pinocchio's forward kinematics on the full
model, not against the solver's report.
"""
from typing import Optional, Tuple

import numpy as np
import pinocchio as pin
import pytest

from ros2_ik.core import constraints as C
from ros2_ik.core import robots
from ros2_ik.core.constraints import registry
from ros2_ik.core.constraints._base import BoundedConstraint
from ros2_ik.core.constraints.compiled import Kind
from ros2_ik.core.kinematics.frames import frame_id
from ros2_ik.core.problem import Problem
from ros2_ik.core.result import IKStatus
from ros2_ik.core.solve import solve
from ros2_ik.core.solvers import constraint_kernel
from ros2_ik.core.solvers.registry import available
from ros2_ik.core.verify import DEFAULT_TOLERANCE

LOWER_M, UPPER_M = 0.50, 0.52


# ---- the new type: its one file ----------------------------------------------------
class HeightConstraint(BoundedConstraint):
    """``lower <= z_WF <= upper``: the height [m] of frame F's origin in the world (1 row)."""

    unit = "m"

    def __init__(self, model: pin.Model, frame: str, lower: float, upper: float, *,
                 name: Optional[str] = None):
        self._fid = frame_id(model, frame)
        super().__init__(name or f"height({frame})", [float(lower)], [float(upper)])

    def evaluate(self, model: pin.Model, data: pin.Data,
                 q: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
        """``[z_WF]`` (1,) [m] and its Jacobian ``(1, nv)`` (kinematics computed)."""
        J = pin.getFrameJacobian(model, data, self._fid, pin.LOCAL_WORLD_ALIGNED)
        return np.array([data.oMf[self._fid].translation[2]]), J[2:3].copy()


KIND = Kind(HeightConstraint, None, None, None, None)  # no compiled functions
# ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def height_type():
    registry.register(KIND)  # the registration line
    yield HeightConstraint
    registry.unregister(HeightConstraint)


@pytest.fixture(scope="module")
def panda():
    return robots.load_group("panda")


def _height(group, q) -> float:
    """Height [m] of panda_hand at group vector ``q``, by pinocchio on the full model."""
    model = group.robot.model
    data = model.createData()
    pin.framesForwardKinematics(model, data, group.to_full_q(q))
    return float(data.oMf[model.getFrameId("panda_hand")].translation[2])


def test_the_registry_knows_the_new_type_and_the_kernel_falls_back(panda, height_type):
    robot, group = panda
    c = height_type(robot.model, "panda_hand", LOWER_M, UPPER_M)
    assert registry.kind_of(c) is KIND
    box = C.PositionConstraint(robot.model, "panda_link0", [0.3, -0.2, 0.0],
                               [0.6, 0.2, 1.0], "panda_hand", np.zeros(3))
    assert constraint_kernel.compile_problem(Problem(group, None, constraints=[box]),
                                             DEFAULT_TOLERANCE) is not None
    assert constraint_kernel.compile_problem(Problem(group, None, constraints=[box, c]),
                                             DEFAULT_TOLERANCE) is None  # Python path


def test_registering_a_type_twice_is_refused(height_type):
    with pytest.raises(ValueError, match="registered already"):
        registry.register(KIND)
    with pytest.raises(ValueError, match="type code 3"):
        registry.register(Kind(type("Other", (), {}), 3, None, None, None))


#: Solvers of constraint problems: every plugin but ``analytic`` (closed-form pose targets).
CONSTRAINT_SOLVERS = [name for name in available() if name != "analytic"]


@pytest.mark.parametrize("solver", CONSTRAINT_SOLVERS)
def test_every_solver_meets_the_new_type(panda, height_type, solver):
    robot, group = panda
    assert _height(group, group.mid_configuration()) > UPPER_M + 0.05  # a real move
    problem = Problem(group, None,
                      constraints=[height_type(robot.model, "panda_hand", LOWER_M, UPPER_M)])
    result = solve(group, problem, group.mid_configuration(), solver=solver, timeout_s=3.0,
                   random_seed=0)
    assert result.status is IKStatus.SUCCESS, result.message
    z = _height(group, result.q)
    tol = DEFAULT_TOLERANCE.m
    assert LOWER_M - tol <= z <= UPPER_M + tol, z
    assert group.within_limits(result.q)
