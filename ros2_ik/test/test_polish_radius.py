"""Polishing's trust radius: a rejected step shrinks it below that step, not below the last radius.

With the radius shrunk from its previous value instead (1.5 -> 0.375 -> 0.094 ...), a step
shorter than the radius came back unchanged from the next QPs and was evaluated again
(restoration and linearisation, ~0.3 ms each) until the radius finally cut it: on the
benchmark's cost family 2-4 wasted evaluations, median steps 7 -> 5 with the fix.
"""
import sys
from pathlib import Path

import numpy as np
import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import constrained_problems as fam  # noqa: E402
from constrained_ours import build, solve_spec  # noqa: E402

from ros2_ik.core import robots  # noqa: E402
from ros2_ik.core.solvers import polish  # noqa: E402
from ros2_ik.core.solvers.lm import LevenbergMarquardt  # noqa: E402


@pytest.fixture
def spy(monkeypatch):
    """Record ('qp', radius, |dq|) and ('try', cost) events of every polishing step.

    Of the Python loop (the compiled one takes the same steps: ``test_polish_loop.py``).
    """
    monkeypatch.setattr(LevenbergMarquardt, "compiled_polish", False)
    events = []
    qp_step, attempt = polish._qp_step, polish._try

    def qp(res, q, state, B, radius):
        found = qp_step(res, q, state, B, radius)
        step = None if found is None else float(np.abs(found[0]).max())
        events.append(("qp", radius, step, state.grad))
        return found

    def tried(res, q_new, restore):
        out = attempt(res, q_new, restore)
        events.append(("try", out[1]))
        return out

    monkeypatch.setattr(polish, "_qp_step", qp)
    monkeypatch.setattr(polish, "_try", tried)
    return events


def test_a_rejected_step_shrinks_the_radius_below_it(spy):
    robot, group = robots.load_group("panda")
    rejections = 0
    for spec in fam.generate("g", "panda", group, 12, 0):
        spy.clear()
        solve_spec(group, build(spec, group), spec.seed, "lm", 1.0, spec.index,
                   max_attempts=1)
        qps = [e for e in spy if e[0] == "qp"]
        tries = iter(e[1] for e in spy if e[0] == "try")
        best = np.inf
        for (_, radius, step, _), (_, next_radius, _, _) in zip(qps, qps[1:]):
            if step is None:
                continue
            cost = next(tries)
            if cost < best or best == np.inf:
                best = cost
                continue
            rejections += 1  # rejected: the next QP's radius is a quarter of this step
            assert next_radius <= 0.25 * step + 1e-15, (spec.index, radius, step, next_radius)
    assert rejections >= 3  # the test saw rejected steps
