"""One pinocchio ``Data`` per thread, model and purpose (core/runtime/thread_data.py).

The terms placed where a configuration puts a frame (a held contact, a support polygon)
and the public ``verify_pose`` reuse such a ``Data`` instead of making one per call
(0.2-0.4 ms on talos, 5-12 ms on tiago_dual).  Checked here against a fresh ``Data``
made in the test: a reused one must give the same answers, whatever was computed in it
before, in any thread.
"""
import threading

import numpy as np
import pinocchio as pin
import wholebody_groups

from ros2_ik.core import constraints as C
from ros2_ik.core.pose import PoseTarget
from ros2_ik.core.runtime.thread_data import PerThreadData
from ros2_ik.core.verify import verify_pose

SOLE = [[x, y, 0.0] for x in (-0.1, 0.1) for y in (-0.065, 0.065)]
SOLES = ["left_sole_link", "right_sole_link"]


def fresh_placement(model, q, frame):
    data = model.createData()
    pin.framesForwardKinematics(model, data, q)
    return pin.SE3(data.oMf[model.getFrameId(frame)])


def configurations(group, count, seed):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        q = group.mid_configuration()
        q[7:] += rng.normal(0.0, 0.3, group.n - 7)
        out.append(wholebody_groups.full_q(group, group.clamp(q)))
    return out


def test_one_data_per_thread_model_and_purpose():
    talos, solo = wholebody_groups.talos(), wholebody_groups.solo()
    a, b = PerThreadData(), PerThreadData()
    mt, ms = talos.robot.model, solo.robot.model
    assert a(mt) is a(mt)
    assert a(mt) is not b(mt) and a(mt) is not a(ms)
    other = []
    t = threading.Thread(target=lambda: other.append(a(mt)))
    t.start()
    t.join()
    assert other[0] is not a(mt)


def test_held_contact_keeps_its_own_placement():
    """Each term copies its frame's placement: a later call at another q leaves it."""
    group = wholebody_groups.talos()
    model = group.robot.model
    q1, q2 = configurations(group, 2, seed=1)
    held = C.FramePlacementConstraint.at_current(model, "left_sole_link", q1)
    C.FramePlacementConstraint.at_current(model, "left_sole_link", q2)
    C.ComInSupportPolygonConstraint.from_frames(model, q2, SOLES, [SOLE, SOLE])
    data = model.createData()
    pin.framesForwardKinematics(model, data, q1)
    assert np.abs(held.value(model, data, q1)).max() < 1e-12
    pin.framesForwardKinematics(model, data, q2)
    assert np.abs(held.value(model, data, q2)).max() > 1e-3


def test_support_polygon_matches_a_fresh_data():
    group = wholebody_groups.talos()
    model = group.robot.model
    for q in configurations(group, 3, seed=2):
        poly = C.ComInSupportPolygonConstraint.from_frames(model, q, SOLES, [SOLE, SOLE])
        corners = [fresh_placement(model, q, f).act(np.array(p, dtype=float))
                   for f in SOLES for p in SOLE]
        expected = C.ComInSupportPolygonConstraint(model, corners)
        np.testing.assert_allclose(poly.vertices, expected.vertices, atol=1e-12)


def test_verify_pose_reused_data_answers_as_a_fresh_one():
    """After a check with constraints (CoM, contacts), a pose-only check is unaffected."""
    group = wholebody_groups.talos()
    model = group.robot.model
    q2, = configurations(group, 1, seed=3)
    target = PoseTarget(group.tip, group.fk(group.mid_configuration(), group.tip))
    mid = group.mid_configuration()
    held = C.FramePlacementConstraint.at_current(model, "left_sole_link", q2)
    poly = C.ComInSupportPolygonConstraint.from_frames(model, q2, SOLES, [SOLE, SOLE])
    first = verify_pose(group, target, mid, [held, poly])
    again = verify_pose(group, target, mid)
    assert again[0] and again[1] < 1e-9 and again[2] < 1e-9, again
    assert first[1:3] == again[1:3]


def test_threads_place_terms_independently():
    group = wholebody_groups.talos()
    model = group.robot.model
    qs = configurations(group, 8, seed=4)
    errors = []

    def place(k):
        for _ in range(50):
            c = C.FramePlacementConstraint.at_current(model, "right_sole_link", qs[k])
            data = model.createData()
            pin.framesForwardKinematics(model, data, qs[k])
            if np.abs(c.value(model, data, qs[k])).max() > 1e-12:
                errors.append(k)

    threads = [threading.Thread(target=place, args=(k,)) for k in range(len(qs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
