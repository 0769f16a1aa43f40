"""A joint window across +-pi through the constrained_ik action, in every solver (issue 48).

ik_node serves the PR2's right arm (two continuous joints: forearm roll, wrist roll) over
real DDS.  Each goal is a pose plus "keep this joint within +-0.3 rad of where it is" on
both continuous joints while they sit near +-pi, the window written around +-pi or 2 pi
further (``[2.67, 3.27]``, ``[-9.6, -9.0]``), and names the solver.  Answers are checked
with our own pinocchio model of the URDF and the angle's distance to the window on the
circle, never with the reply's fields.
"""
import math

import numpy as np
import pinocchio as pin
import pytest

pytest.importorskip("rclpy")

from ros2_ik.core import robots  # noqa: E402
from ros2_ik.node.conversions import se3_to_pose  # noqa: E402
from ros2_ik.node.harness import wait_for  # noqa: E402
from ros2_ik_interfaces.action import ConstrainedIK  # noqa: E402
from ros2_ik_interfaces.msg import IKErrorCode, PoseGoal  # noqa: E402
from panda_node import serve, stop  # noqa: E402

BASE, TIP = "torso_lift_link", "r_gripper_tool_frame"
TWO_PI = 2 * math.pi
SOLVERS = ("lm", "dls", "bfgs", "sqp")


@pytest.fixture(scope="module")
def pr2_arm():
    """(URDF text, independent pinocchio model, the arm's joint names and mid values)."""
    urdf = robots.urdf_text("pr2_right")
    group = robots.load_group("pr2_right")[1]
    assert (group.base, group.tip) == (BASE, TIP)
    return urdf, pin.buildModelFromXML(urdf), list(group.joint_names), group


@pytest.fixture(scope="module")
def served(ros_context, pr2_arm):
    params = {"group_names": "[arm]", "default_group": "arm",
              "groups.arm.base_link": BASE, "groups.arm.tip_link": TIP}
    node, client = serve("seam", pr2_arm[0], robots.srdf_text("pr2_right"),
                         [arg for k, v in params.items() for arg in ("-p", f"{k}:={v}")])
    yield client
    stop(node, client)


def T_base_tip(model, names, values) -> pin.SE3:
    """``T_torso_tip`` from joint values [rad, m] by name (continuous joints as cos, sin)."""
    q = pin.neutral(model)
    for name, value in zip(names, values):
        joint = model.getJointId(name)
        iq = model.joints[joint].idx_q
        if model.nqs[joint] == 2:
            q[iq:iq + 2] = math.cos(value), math.sin(value)
        else:
            q[iq] = value
    data = model.createData()
    pin.framesForwardKinematics(model, data, q)
    frame = (data.oMf[model.getFrameId(n)] for n in (BASE, TIP))
    return next(frame).actInv(next(frame))


def circle_outside(angle: float, lower: float, upper: float) -> float:
    """Distance [rad] from ``angle`` to ``[lower, upper]`` over its 2 pi equivalents."""
    return min(max(lower - a, a - upper, 0.0) for a in (angle + TWO_PI * k for k in range(-4, 5)))


def seam_goal(pr2_arm, rng, shift: int, solver: str):
    """A goal (pose of ``q*`` + windows across +-pi) and its target and windows."""
    _, model, names, group = pr2_arm
    q_star = group.random_configuration(rng)
    windows = {}
    for i in np.flatnonzero(group.continuous):
        q_star[i] = rng.choice([-1.0, 1.0]) * rng.uniform(math.pi - 0.25, math.pi)
        centre = q_star[i] + shift * TWO_PI
        windows[names[i]] = (centre - 0.3, centre + 0.3)
    assert len(windows) == 2
    target = T_base_tip(model, names, q_star)
    goal = ConstrainedIK.Goal(group_name="arm", solver=solver, timeout=2.0, random_seed=7)
    pose = PoseGoal(tip_link=TIP)
    pose.target.header.frame_id = BASE
    pose.target.pose = se3_to_pose(target)
    goal.pose_goals = [pose]
    goal.joint_bounds.joint_names = list(windows)
    goal.joint_bounds.lower = [lo for lo, _ in windows.values()]
    goal.joint_bounds.upper = [hi for _, hi in windows.values()]
    goal.seed.name, goal.seed.position = names, group.mid_configuration().tolist()
    return goal, target, windows


def send(client, goal):
    sent = client.action.send_goal_async(goal)
    wait_for(sent.done, 30, "goal acceptance", client.spin)
    handle = sent.result()
    assert handle.accepted
    done = handle.get_result_async()
    wait_for(done.done, 60, "the action result", client.spin)
    return done.result().result


@pytest.mark.parametrize("solver", SOLVERS)
def test_windows_across_pi_through_the_action(served, pr2_arm, solver):
    model = pr2_arm[1]
    rng = np.random.default_rng(48)
    solved = 0
    for shift in (0, -1, 1):
        goal, target, windows = seam_goal(pr2_arm, rng, shift, solver)
        res = send(served, goal)
        if res.error_code.val != IKErrorCode.SUCCESS:
            assert res.error_code.val == IKErrorCode.NO_SOLUTION, res.message
            continue
        state = res.solutions[0].joint_state
        T = T_base_tip(model, state.name, state.position)
        assert np.linalg.norm(T.translation - target.translation) <= 1.01e-4
        assert np.linalg.norm(pin.log3(T.rotation.T @ target.rotation)) <= 1.01e-3
        values = dict(zip(state.name, state.position))
        for name, (lo, hi) in windows.items():
            assert circle_outside(values[name], lo, hi) <= 1e-4, (name, values[name], lo, hi)
        solved += 1
    assert solved == 3 if solver in ("lm", "sqp") else solved >= 2, solved
