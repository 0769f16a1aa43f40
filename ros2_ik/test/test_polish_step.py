"""A polishing step's figures, checked against their definitions computed here.

``_qp_step`` reports the decrease the QP predicts as daqp's objective value (negated)
instead of computing ``-(grad^T dq + 1/2 dq^T B dq)`` again; ``State.lagrangian_change``
gives the change of the Lagrangian's gradient between two linearisations in one pass.
Both feed the stop test and the curvature update, so both are compared here with the
formulas evaluated directly, on the benchmark's cost family (feasible points from the
compiled attempt, the compiled and the Python model).
"""
import sys
from pathlib import Path

import numpy as np
import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import constrained_problems as fam  # noqa: E402
from constrained_ours import build  # noqa: E402

from ros2_ik.core import robots  # noqa: E402
from ros2_ik.core.solvers import polish, polish_kernel, registry  # noqa: E402
from ros2_ik.core.solvers.options import SolveOptions  # noqa: E402
from ros2_ik.core.verify import ConstraintTolerance  # noqa: E402


def _feasible_states(arm: str, count: int):
    """(solver, kernel state, feasible q) of ``count`` cost problems of ``arm``."""
    robot, group = robots.load_group(arm)
    lm = registry.create("lm")
    lm.options = SolveOptions(timeout_s=0.02, constraint_tolerance=ConstraintTolerance())
    out = []
    for spec in fam.generate("g", arm, group, 3 * count, 0):
        state = lm.setup(build(spec, group))
        q, _, done, _ = state.project(spec.seed)
        if done:
            out.append((lm, state, q))
    assert len(out) >= count
    return out[:count]


@pytest.mark.parametrize("arm", ["panda", "kinova"])
@pytest.mark.parametrize("python_model", [False, True])
def test_predicted_decrease_and_lagrangian_change_match_their_formulas(arm, python_model):
    checked = 0
    for lm, state, q in _feasible_states(arm, 8):
        model = polish.ResidualsModel(state.residuals) if python_model \
            else polish_kernel.model_for(state)
        cost, lin = model.evaluate(q)
        assert lin is not None
        B = polish.damped(lin.hessian)
        for radius in (1.5, 0.1, 0.01):
            found = polish._qp_step(model, q, lin, B, radius)
            if found is None:
                continue
            dq, lam, predicted = found
            expected = -(lin.grad @ dq + 0.5 * dq @ B @ dq)
            assert predicted == pytest.approx(expected, rel=1e-8, abs=1e-14)
            q_new, _, lin_new = polish._try(model, q + dq, state.restore)
            if lin_new is None or lin_new.rows.shape != lin.rows.shape:
                continue
            direct = (lin_new.grad + lam @ lin_new.rows) - (lin.grad + lam @ lin.rows)
            np.testing.assert_allclose(lin_new.lagrangian_change(lin, lam), direct,
                                       rtol=1e-9, atol=1e-12)
            checked += 1
    assert checked >= 8  # steps that kept their rows were compared
