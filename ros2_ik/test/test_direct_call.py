"""The compiled entries called without numba's dispatch get arguments of their own types.

:func:`direct_call.entry_point`'s function checks nothing: an argument of another dtype,
dimension or layout would be read as if it had the signature's.  Every call of the
attempt, the polishing loop and the cost during solves of every benchmark family (costs, polishing,
restarts, a pose target with constraints) on arms with revolute, continuous and locked
joints is recorded, and every call of the pose attempt (the lean path, the driver's
restarts and its PoseState, int tolerances), and every call of the 6R kernel's branches
(lm's lean path and driver, the analytic plugin, a free axis, a reference frame, an
unreachable pose); each argument's numba type must be the entry's, and the entries'
answers equal the dispatchers'.
"""
import numpy as np
import pinocchio as pin
import pytest
import urdf_edits

from ros2_ik.core import robots
from ros2_ik.core.closed_form import branches
from ros2_ik.core.pose import PoseTarget
from ros2_ik.core.runtime import direct_call
from ros2_ik.core.solve import prepare, solve
from ros2_ik.core.solvers import chain_kernel, constraint_kernel, polish_kernel, pose_request
from ros2_ik.core.solvers.attempts import chain_settings
from ros2_ik.core.solvers.lm import LevenbergMarquardt
from ros2_ik.core.verify import ConstraintTolerance
from test_constraint_kernel import fam, build  # noqa: F401

pytestmark = pytest.mark.skipif(not chain_kernel.available(), reason="numba not installed")
ARMS = ("panda", "kinova", "pr2_right")


def _entries():
    """``(module, attribute, dispatcher)`` of each direct entry, warmed up."""
    group = robots.load_group("panda")[1]
    prepare(group, None, constrained=True)
    return [(constraint_kernel, "_ATTEMPT", constraint_kernel.lm().attempt_packed),
            (polish_kernel, "_POLISH", polish_kernel.loop().polish_packed),
            (polish_kernel, "_COST_AT", polish_kernel.jit().cost_at_packed)]


def _signature_of(dispatcher, entry):
    found = [sig for sig, res in dispatcher.overloads.items() if res.entry_point is entry]
    assert len(found) == 1
    return found[0]


def test_every_call_passes_the_entry_types(monkeypatch):
    calls = {}
    for module, name, dispatcher in _entries():
        entry = getattr(module, name)
        assert entry is not None, name
        expected = _signature_of(dispatcher, entry)

        def recorder(*args, _entry=entry, _d=dispatcher, _name=name, _expected=expected):
            assert direct_call.signature(_d, args) == _expected, _name
            calls[_name] = calls.get(_name, 0) + 1
            return _entry(*args)
        monkeypatch.setattr(module, name, recorder)
    for arm in ARMS:
        group = robots.load_group(arm)[1]
        for family in ("a", "b", "c", "d", "e", "f", "g"):
            for spec in fam.generate(family, arm, group, 3, seed=4):
                problem = build(spec, group)
                solve(group, problem, spec.seed, timeout_s=0.05, random_seed=1,
                      constraint_tolerance_m=1e-4, constraint_tolerance_rad=1e-4)
                # a far seed: restarts, the ranked starts
                solve(group, problem, group.random_configuration(np.random.default_rng(1)),
                      timeout_s=0.05, max_attempts=3, random_seed=2)
        spec = fam.generate("a", arm, group, 1, seed=5)[0]
        target = PoseTarget(group.tip, group.fk(spec.q_star, group.tip))
        solve(group, target, spec.seed, constraints=build(spec, group).constraints,
              timeout_s=0.05, random_seed=1)
    assert min(calls.get(name, 0) for name in ("_ATTEMPT", "_POLISH")) > 10, calls
    assert calls.get("_COST_AT", 0) > 5, calls


def test_the_entries_answer_as_the_dispatchers():
    entries = _entries()
    group = robots.load_group("kinova")[1]
    for spec in fam.generate("d", "kinova", group, 5, seed=2):
        state = constraint_kernel.KernelState(
            constraint_kernel.compile_problem(build(spec, group), ConstraintTolerance(
                1e-4, 1e-4)), build(spec, group), ConstraintTolerance(1e-4, 1e-4))
        settings = constraint_kernel.Settings(0.01, 1e-6, 0.995, True)
        for (module, name, dispatcher), args in zip(entries[:1], (
                constraint_kernel._attempt_args(state.compiled, np.array(spec.seed),
                                                state.lower, state.upper, settings, 15),)):
            copies = [np.array(a) if isinstance(a, np.ndarray) else a for a in args]
            assert np.all(np.asarray(getattr(module, name)(*args), dtype=float)
                          == np.asarray(dispatcher(*copies), dtype=float))
            for a, b in zip(args, copies):  # what each wrote (q, amounts) is the same
                if isinstance(a, np.ndarray):
                    np.testing.assert_array_equal(a, b)


def _pose_entry():
    """``(dispatcher, entry)`` of the compiled pose attempt, warmed up (``prepare``)."""
    group = robots.load_group("panda")[1]
    prepare(group, group.tip)
    assert chain_kernel._ATTEMPT is not None
    return chain_kernel._LOOPS.pose_attempt, chain_kernel._ATTEMPT


def _recorded(monkeypatch, module, name: str, dispatcher, entry) -> list:
    """Put a recorder in ``module.name`` that checks each call's types; return its calls."""
    expected = _signature_of(dispatcher, entry)
    calls = []

    def recorder(*args):
        assert direct_call.signature(dispatcher, args) == expected, name
        calls.append(1)
        return entry(*args)
    monkeypatch.setattr(module, name, recorder)
    return calls


def test_every_pose_attempt_passes_the_entry_types(monkeypatch):
    calls = _recorded(monkeypatch, chain_kernel, "_ATTEMPT", *_pose_entry())
    rng = np.random.default_rng(3)
    for arm in ARMS:
        group = robots.load_group(arm)[1]
        prepare(group, group.tip)
        mid = group.mid_configuration()
        for k in range(10):
            T = group.fk(group.random_configuration(rng), group.tip)
            # the lean path from mid-limits, then the driver's restarts from a far seed
            solve(group, PoseTarget(group.tip, T), mid, timeout_s=0.05, random_seed=k)
            solve(group, PoseTarget(group.tip, T), group.random_configuration(rng),
                  timeout_s=0.05, max_attempts=3, random_seed=k)
            # the driver's PoseState: weights alike but not the default, int tolerances
            solve(group, PoseTarget(group.tip, T, weights=(2.0,) * 6,
                                    position_tolerance_m=1, orientation_tolerance_rad=1),
                  mid, timeout_s=0.05, random_seed=k)
    assert len(calls) > 30, len(calls)


def test_the_pose_entry_answers_as_the_dispatcher():
    dispatcher, entry = _pose_entry()
    group = robots.load_group("panda")[1]
    plan = pose_request.plan(group, group.tip, LevenbergMarquardt)
    rng = np.random.default_rng(5)
    for _ in range(20):
        pose = PoseTarget(group.tip, group.fk(group.random_configuration(rng), group.tip))
        args = chain_kernel._attempt_args(
            plan.chain, group.mid_configuration(), pose.compile(group).H_target_world,
            plan.lower, plan.upper, plan.bounded, 1.0, 1e-8, 1e-6, 1e-6,
            chain_settings(LevenbergMarquardt))
        copies = [np.array(a) if isinstance(a, np.ndarray) else a for a in args]
        assert entry(*args) == dispatcher(*copies)
        for a, b in zip(args, copies):  # q, written by both, ends the same
            if isinstance(a, np.ndarray):
                np.testing.assert_array_equal(a, b)


CLOSED_FORM_ARMS = ("ur5", "kinova", "z1")


def test_every_closed_form_call_passes_the_entry_types(monkeypatch):
    branches.warm_up()
    calls = _recorded(monkeypatch, branches, "_KERNEL_FILL", branches.kernel_fill,
                      branches._KERNEL_FILL)
    rng = np.random.default_rng(6)
    for arm in CLOSED_FORM_ARMS:
        group = robots.load_group(arm)[1]
        for solver in ("lm", "analytic"):
            prepare(group, group.tip, solver=solver)
        mid = group.mid_configuration()
        before = len(calls)
        for k in range(5):
            T = group.fk(group.random_configuration(rng), group.tip)
            solve(group, PoseTarget(group.tip, T), mid, timeout_s=0.05, random_seed=k)
            solve(group, PoseTarget(group.tip, T), list(mid), "analytic", 0.05, num_solutions=8)
            # the branches as the driver's first starts: a free axis
            solve(group, PoseTarget(group.tip, T, weights=(1.0,) * 5 + (0.0,)), mid,
                  timeout_s=0.05, max_attempts=2)
            solve(group, PoseTarget(group.tip, pin.SE3(T.rotation, 10.0 * T.translation)),
                  mid, timeout_s=0.05, max_attempts=2)  # out of reach: EAIK's rows after
            ref = group.robot.model.frames[group.robot.frame_id(group.base)].name
            solve(group, PoseTarget(group.tip, T, reference_frame=ref), mid, timeout_s=0.05)
        assert len(calls) - before >= 20, (arm, len(calls) - before)


def test_the_closed_form_entry_answers_as_the_dispatcher():
    branches.warm_up()
    group = robots.load_group("ur5")[1]
    prepare(group, group.tip)
    from ros2_ik.core.closed_form import chain
    form = chain.of(group, group.robot.frame_id(group.tip))
    family, G = form.kernel
    rng = np.random.default_rng(7)
    m, n = 8, group.n
    for _ in range(20):
        T = group.fk(group.random_configuration(rng), group.tip).homogeneous[None].copy()
        seed = group.random_configuration(rng)
        outs = []
        for f in (branches._KERNEL_FILL, branches.kernel_fill):
            out = np.empty((m, n))
            counts = f(family, G, T, seed, group.lower, group.upper, 1e-2, out)
            outs.append((counts, out[:counts[0]].copy()))
        assert outs[0][0] == outs[1][0]
        np.testing.assert_array_equal(outs[0][1], outs[1][1])


def test_every_held_roll_call_passes_the_entry_types(monkeypatch):
    """The compiled sweep of an SRS arm (:mod:`.closed_form.inner`): lm, analytic, several."""
    from ros2_ik.core.closed_form import inner
    inner.warm_up()
    calls = _recorded(monkeypatch, inner, "_FILL_AT", inner.fill_at, inner._FILL_AT)
    group = urdf_edits.srs_arm()
    for solver in ("lm", "analytic"):
        prepare(group, group.tip, solver=solver)
    rng = np.random.default_rng(8)
    for k in range(10):
        T = group.fk(group.random_configuration(rng), group.tip)
        seed = group.random_configuration(rng)
        solve(group, PoseTarget(group.tip, T), seed, timeout_s=0.05, random_seed=k)
        solve(group, PoseTarget(group.tip, T), list(seed), "analytic", 0.05, num_solutions=4)
        solve(group, PoseTarget(group.tip, pin.SE3(T.rotation, 10.0 * T.translation)),
              seed, timeout_s=0.05, max_attempts=2)  # out of reach
    assert len(calls) >= 30, len(calls)
