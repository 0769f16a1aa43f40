"""A solve's residuals reuse this thread's Data of the full model.

createData() scales with the whole robot, not the chain: on a 102-joint model it took
~90 ms under load, inside a 0.1 s budget, before the first attempt (completeness fuzz,
tiago_dual's hand chains).
"""
import threading

from ros2_ik.core import PoseTarget, robots
from ros2_ik.core.constraints import LockedJointConstraint
from ros2_ik.core.problem import Problem
from ros2_ik.core.solvers.residuals import Residuals


def _problem():
    _, group = robots.load_group("ur5")
    q = group.mid_configuration()
    lock = LockedJointConstraint(group.robot.model, {group.joint_names[0]: float(q[0])})
    return Problem(group, PoseTarget(group.tip, group.fk(q, group.tip)), [lock])


def test_residuals_reuse_this_threads_full_model_data():
    problem = _problem()
    assert Residuals(problem).data is Residuals(problem).data


def test_another_thread_gets_its_own_data():
    problem = _problem()
    here = Residuals(problem).data
    there = []
    worker = threading.Thread(target=lambda: there.append(Residuals(problem).data))
    worker.start()
    worker.join()
    assert there[0] is not here
