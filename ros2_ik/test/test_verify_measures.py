"""The full check's one forward kinematics: what each measure needs, and what it gets.

``verify.check`` updates the kinematics once per check, shared by every constraint:
frame placements alone (no Jacobians) when each constraint defines ``measure`` or
``value``, the joint Jacobians too when one measures through ``evaluate``.  Each measure
is compared with geometry computed here from pinocchio placements
(``test_constraints_physical._independent``), never with the constraint's own code.
"""
from __future__ import annotations

import math
import zlib

import numpy as np
import pinocchio as pin
import pytest
from test_constraints_fixtures import FRAMES, ROBOTS, random_configurations
from test_constraints_jacobians import _terms
from test_constraints_physical import CASES, _independent

from ros2_ik.core import terms
from ros2_ik.core.constraints import update_kinematics
from ros2_ik.core.kinematics.frames import frame_id, frame_jacobian
from ros2_ik.core.model.robots import load_group
from ros2_ik.core.verify import update_for_measures, verify_pose


@pytest.mark.parametrize("robot,term_name", CASES)
def test_measure_on_the_check_kinematics_is_the_geometric_violation(robot, term_name):
    """Each type's measure after what check runs for it (no Jacobians) = the geometry's."""
    model = ROBOTS[robot]()
    term = _terms(model, *FRAMES[robot])[term_name]
    data, reference = model.createData(), model.createData()
    violated = 0
    for q in random_configurations(model, 8, seed=zlib.crc32(term_name.encode()) % 983):
        update_for_measures(model, data, q, [term])
        assert not np.any(data.J), "check computed Jacobians a measure does not need"
        update_kinematics(model, reference, q)
        expected = _independent(term_name, model, reference, *FRAMES[robot])
        np.testing.assert_allclose(term.measure(model, data, q), expected, atol=1e-9,
                                   err_msg=term_name)
        violated += bool(np.max(expected) > 0)
    if robot == "tiny":  # the Panda's reach stays inside some of the wide boxes
        assert violated, f"{term_name}: no configuration violates it, the test says nothing"


class _HandLever(terms.Constraint):
    """``g(q) = |J_v[:, 0]|`` of the hand [m/rad]: a row only ``evaluate`` defines.

    Its value reads the frame Jacobian (not ``data.oMf``), so the check must compute the
    Jacobians for it.  The Jacobian of ``g`` is not needed here (zeros).
    """

    def __init__(self, model: pin.Model, lower: float, upper: float):
        self._fid = frame_id(model, "panda_hand")
        self._lower, self._upper = np.array([lower]), np.array([upper])
        self.name = "hand_lever"

    @property
    def lower_bound(self) -> np.ndarray:
        return self._lower

    @property
    def upper_bound(self) -> np.ndarray:
        return self._upper

    def evaluate(self, model, data, q):
        J = frame_jacobian(model, data, self._fid)
        return np.array([float(np.linalg.norm(J[:3, 0]))]), np.zeros((1, model.nv))


def test_a_constraint_measured_through_evaluate_gets_the_jacobians():
    """The panda's first joint turns about the world z axis through the origin: the hand's
    speed per rad of it is the hand's distance from that axis (computed here by FK)."""
    robot, group = load_group("panda")
    model = robot.model
    data = model.createData()
    rng = np.random.default_rng(4)
    for _ in range(5):
        q = group.random_configuration(rng)
        pin.framesForwardKinematics(model, data, group.to_full_q(q))
        x, y, _ = data.oMf[model.getFrameId("panda_hand")].translation
        lever = math.hypot(x, y)
        ok, _, _, reason = verify_pose(group, None, q, [_HandLever(model, lever - 1e-6,
                                                                   lever + 1e-6)])
        assert ok, reason
        ok, _, _, reason = verify_pose(group, None, q, [_HandLever(model, lever + 0.01,
                                                                   math.inf)])
        assert not ok and "hand_lever by 0.01 m" in reason, reason
