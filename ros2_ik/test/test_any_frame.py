"""Constraints and pose targets on any frame of the model, not only the group's links.

Whole robots loaded for one arm have frames no group joint moves: the other arm's links,
the head, locked joints' frames (fixed frames in the reduced model), operational frames.
On random pairs of every frame of the model, constraints of several kinds through every
solver and pose targets: no exception out of ``solve`` for this valid input, and every
SUCCESS holds by :func:`verify.check` (full-model kinematics, [m] and [rad]).  Locked
joints' frames were once looked up in the reduced model by their full-model type and
not found: an index past the end (IndexError, or frame placements read past the end).
"""
import numpy as np
import pinocchio as pin
import pytest

from ros2_ik.core import constraints as C
from ros2_ik.core import robots
from ros2_ik.core.pose import PoseTarget
from ros2_ik.core.problem import Problem
from ros2_ik.core.solve import solve
from ros2_ik.core.verify import ConstraintTolerance, check

TOL = ConstraintTolerance(1e-4, 1e-4)
SOLVERS = ("lm", "sqp", "dls", "bfgs")


def _constraints(model, kind, a, b, T_ab):
    if kind == 0:
        p = T_ab.translation
        return [C.PositionConstraint(model, a, p - 0.01, p + 0.01, b, np.zeros(3))]
    if kind == 1:
        return [C.OrientationConstraint(model, a, np.eye(3), b, T_ab.rotation.T, 0.05)]
    d = float(np.linalg.norm(T_ab.translation))
    return [C.AngleBetweenVectorsConstraint(model, a, T_ab.rotation @ [0, 0, 1.0], b,
                                            [0, 0, 1.0], 0.0, 0.1),
            C.PointToPointDistanceConstraint(model, a, np.zeros(3), b, np.zeros(3),
                                             max(d - 0.01, 0.0), d + 0.01)]


@pytest.mark.parametrize("arm", ["panda", "pr2_right"])
def test_constraints_on_any_frames(arm):
    group = robots.load_group(arm)[1]
    model = group.robot.model
    rng = np.random.default_rng(3)
    names = sorted({f.name for f in model.frames})
    locked = [f.name for f in model.frames
              if f.type == pin.FrameType.JOINT and f.parentJoint not in group.joint_ids]
    assert locked  # the kind of frame that was not found
    for k in range(12):
        a = str(rng.choice(locked if k % 2 else names))
        b = str(rng.choice(names))
        q = group.random_configuration(rng)  # feasible: the bounds hold at q
        T_ab = group.fk(q, a).actInv(group.fk(q, b))
        constraints = _constraints(model, k % 3, a, b, T_ab)
        for solver in SOLVERS:
            result = solve(group, Problem(group, None, constraints), group.mid_configuration(),
                           solver=solver, timeout_s=0.05, random_seed=1)
            if result.status.name == "SUCCESS":
                assert check(group, None, result.q, constraints, model.createData(), TOL)[0]


@pytest.mark.parametrize("arm", ["panda", "pr2_right"])
def test_pose_targets_on_any_frame(arm):
    group = robots.load_group(arm)[1]
    model = group.robot.model
    rng = np.random.default_rng(4)
    for name in rng.choice(sorted({f.name for f in model.frames}), 8, replace=False):
        q = group.random_configuration(rng)
        target = PoseTarget(str(name), group.fk(q, str(name)))
        result = solve(group, target, group.mid_configuration(), timeout_s=0.05,
                       random_seed=1)
        assert result.status.name in ("SUCCESS", "NO_SOLUTION"), result.message
        if result.status.name == "SUCCESS":
            reached = group.fk(result.q, str(name))
            assert np.linalg.norm(reached.translation - target.T_ref_target.translation) \
                <= target.position_tolerance_m + 1e-12
