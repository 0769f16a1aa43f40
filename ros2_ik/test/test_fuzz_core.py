"""Fuzzing the core API with hypothesis: valid and invalid requests on two arms.

Every call either raises the core's own ``errors.IKError`` with a non-empty message,
or returns a result whose SUCCESS passes the independent check of
``test_hardening_false_success``.  ``bench/fuzz.py`` runs the same strategy for
thousands of examples and records :data:`STATS`.
"""
import math
from collections import Counter

import numpy as np
import pinocchio as pin
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ros2_ik.core import errors
from ros2_ik.core.pose import PoseTarget
from ros2_ik.core.solve import solve
from test_hardening_false_success import arm, independent_check, independent_q

ARMS = ("panda", "kinova")
#: Outcomes seen: status names, exception class names, "false_success", "crash".
STATS: Counter = Counter()

any_float = st.floats(allow_nan=True, allow_infinity=True, width=64)
small_float = st.floats(-2.0, 2.0)


@st.composite
def rotations(draw):
    """A rotation matrix, most often valid; else scaled, sheared or NaN."""
    quat = draw(st.lists(st.floats(-1, 1), min_size=4, max_size=4))
    if np.linalg.norm(quat) < 1e-6:
        quat = [0.0, 0.0, 0.0, 1.0]
    R = pin.Quaternion(*quat).normalized().toRotationMatrix()
    kind = draw(st.sampled_from(["ok"] * 6 + ["scaled", "nan", "reflect"]))
    if kind == "scaled":
        R = R * draw(st.floats(0.0, 3.0))
    elif kind == "nan":
        R = R.copy()
        R[draw(st.integers(0, 2)), draw(st.integers(0, 2))] = draw(any_float)
    elif kind == "reflect":
        R = -R
    return R


#: Values that break a field (each request breaks at most one or two fields).
BAD_NUMBERS = st.one_of(any_float, st.sampled_from(
    [0.0, -1.0, math.nan, math.inf, -math.inf, 1e300, -1e-300, 5e-324]))


@st.composite
def core_requests(draw):
    """(arm, target kwargs, seed, solve kwargs): a sensible request, a third of them broken."""
    name = draw(st.sampled_from(ARMS))
    group, model = arm(name)
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    q_true = group.random_configuration(rng)
    data = model.createData()
    pin.framesForwardKinematics(model, data, independent_q(model, group.joint_names, q_true))
    T = data.oMf[model.getFrameId(group.tip)]
    target = dict(frame=group.tip, R=T.rotation, p=T.translation + rng.normal(0, 0.05, 3),
                  weights=(1.0,) * 6,
                  position_tolerance_m=draw(st.floats(1e-6, 1e-2)),
                  orientation_tolerance_rad=draw(st.floats(1e-5, 1e-1)),
                  position_only=draw(st.booleans()))
    seed = draw(st.sampled_from(["mid", "near", "random"]))
    seed = {"mid": group.mid_configuration(), "random": group.random_configuration(rng),
            "near": group.clamp(q_true + rng.normal(0, 0.1, group.n))}[seed]
    options = dict(solver=draw(st.sampled_from(["lm", "dls", "bfgs", "sqp"])),
                   timeout_s=draw(st.floats(1e-3, 0.02)),
                   max_attempts=draw(st.integers(1, 3)),
                   random_seed=draw(st.one_of(st.none(), st.integers(0, 2**40))),
                   num_solutions=draw(st.integers(1, 3)))
    for _ in range(draw(st.sampled_from([0, 0, 0, 0, 1, 1, 2]))):
        field = draw(st.sampled_from(BREAKERS))
        if field is _break_seed:
            seed = _break_seed(draw, seed, group)
        else:
            field(draw, target, options, group)
    return name, target, np.asarray(seed, dtype=float), options


def _break_pose(draw, target, options, group):
    p = np.array(target["p"])
    p[draw(st.integers(0, 2))] = draw(BAD_NUMBERS)
    target["p"] = p
    if draw(st.booleans()):
        target["R"] = draw(rotations())


def _break_frame(draw, target, options, group):
    target["frame"] = draw(st.one_of(st.sampled_from(["", "nowhere", group.base]
                                                     + _locked_joint_frames(group)),
                                     st.text()))


def _locked_joint_frames(group) -> list:
    """Frames of the joints outside the group (fixed frames in the reduced model)."""
    model = group.robot.model
    return [f.name for f in model.frames
            if f.type == pin.FrameType.JOINT and f.parentJoint not in group.joint_ids]


def _break_weights(draw, target, options, group):
    target["weights"] = draw(st.lists(st.one_of(st.floats(0, 5), BAD_NUMBERS), max_size=8))


def _break_tolerance(draw, target, options, group):
    key = draw(st.sampled_from(["position_tolerance_m", "orientation_tolerance_rad"]))
    target[key] = draw(BAD_NUMBERS)


def _break_options(draw, target, options, group):
    key = draw(st.sampled_from(["solver", "timeout_s", "max_attempts", "random_seed",
                                "num_solutions"]))
    options[key] = draw({
        "solver": st.one_of(st.sampled_from(["", "magic", "LM"]), st.text(max_size=20)),
        "timeout_s": st.sampled_from([0.0, -1.0, math.nan, math.inf, 1e9]),
        "max_attempts": st.sampled_from([-1, 0, 10**6, 2.5, True]),
        "random_seed": st.sampled_from([-1, 2**70, 1.5, "x"]),
        "num_solutions": st.sampled_from([0, -3, 1.0])}[key])
    if key == "timeout_s" and options["timeout_s"] > 0.02:
        options["max_attempts"] = 2  # a valid huge budget: bound the solve by attempts
    if key == "max_attempts" and options["max_attempts"] in (0, 10**6):
        options["timeout_s"] = 0.02


def _break_seed(draw, seed, group):
    return draw(st.one_of(
        st.lists(st.floats(-4, 4), min_size=0, max_size=group.n + 2),
        st.lists(BAD_NUMBERS, min_size=group.n, max_size=group.n)))


BREAKERS = (_break_pose, _break_frame, _break_weights, _break_tolerance, _break_options,
            _break_seed)


def check_core_request(request) -> str:
    """Run one request; raise AssertionError on a crash or a false SUCCESS."""
    name, t, seed, options = request
    group, model = arm(name)
    try:
        target = PoseTarget(frame=t["frame"], T_ref_target=pin.SE3(t["R"], t["p"]),
                            weights=t["weights"],
                            position_tolerance_m=t["position_tolerance_m"],
                            orientation_tolerance_rad=t["orientation_tolerance_rad"],
                            position_only=t["position_only"])
        result = solve(group, target, seed, **options)
    except errors.IKError as exc:
        assert str(exc).strip(), f"{type(exc).__name__} without a message"
        STATS[type(exc).__name__] += 1
        return type(exc).__name__
    except Exception as exc:
        STATS["crash"] += 1
        raise AssertionError(f"crash: {type(exc).__name__}: {exc}") from exc
    STATS[result.status.name] += 1
    if result.success:
        for q in [result.q] + [s.q for s in result.solutions]:
            why = independent_check(model, result.joint_names, q, target.frame,
                                    target.T_ref_target, target.weights,
                                    target.position_tolerance_m,
                                    target.orientation_tolerance_rad, target.position_only)
            if why:
                STATS["false_success"] += 1
                raise AssertionError(f"false SUCCESS on {name}: {why}; q={list(q)} "
                                     f"status={result.message!r} request={request!r}")
    return result.status.name


@settings(max_examples=400, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(core_requests())
def test_core_never_crashes_nor_lies(request):
    check_core_request(request)
