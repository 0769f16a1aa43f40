"""``make demo``: ik_node on the embedded Franka Panda, end to end over real DDS.

Starts ``ik_node`` as a process (as ``ros2 run`` would), publishes the Panda's
``robot_description`` and a joint state the way robot_state_publisher and a driver do,
sends ComputeIK requests (reachable poses, one unreachable, one unknown frame), prints
each answer, checks every answer by its own forward kinematics, and exits 0 only when
every answer is what it should be.
"""
from __future__ import annotations

import os
import sys
from typing import List, Tuple

import numpy as np
import pinocchio as pin
import rclpy
from ament_index_python.packages import get_package_share_directory

from ros2_ik.core import robots
from ros2_ik.node.conversions import se3_to_pose
from ros2_ik.node.error_codes import CODE_NAMES
from ros2_ik.node.harness import Client, NodeProcess, isolate_ros
from ros2_ik_interfaces.msg import IKErrorCode
from ros2_ik_interfaces.srv import ComputeIK

READY = [0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785]
ARM = [f"panda_joint{i}" for i in range(1, 8)]
BASE, TIP = "panda_link0", "panda_hand"


def requests(model: pin.Model, rng: np.random.Generator) -> List[Tuple[str, object, int]]:
    """(label, request, expected code) for the demo, targets made by our own FK."""
    data = model.createData()
    tip_id, base_id = model.getFrameId(TIP), model.getFrameId(BASE)
    out = []
    for k in range(4):
        q = pin.randomConfiguration(model)
        pin.framesForwardKinematics(model, data, q)
        T_base_tip = data.oMf[base_id].actInv(data.oMf[tip_id])
        out.append((f"reachable pose {k + 1}", _request(T_base_tip, BASE), IKErrorCode.SUCCESS))
    far = pin.SE3(np.eye(3), np.array([2.0, 0.0, 0.5]))
    out.append(("unreachable (2 m away)", _request(far, BASE), IKErrorCode.NO_SOLUTION))
    out.append(("unknown frame 'gripper_tool0'", _request(far, "gripper_tool0"),
                IKErrorCode.FRAME_NOT_FOUND))
    return out


def _request(T_ref_target: pin.SE3, frame: str) -> ComputeIK.Request:
    req = ComputeIK.Request()
    req.target.header.frame_id = frame
    req.target.pose = se3_to_pose(T_ref_target)
    req.timeout = 0.1
    req.random_seed = 7
    return req


def fk_errors(model: pin.Model, names, positions, T_ref_target: pin.SE3,
              frame: str) -> Tuple[float, float]:
    """Our own FK check of an answer: position [m] and orientation [rad] errors."""
    data = model.createData()
    q = pin.neutral(model)
    for name, value in zip(names, positions):
        q[model.joints[model.getJointId(name)].idx_q] = value
    pin.framesForwardKinematics(model, data, q)
    T_ref_tip = data.oMf[model.getFrameId(frame)].actInv(data.oMf[model.getFrameId(TIP)])
    err = pin.log6(T_ref_target.actInv(T_ref_tip))
    return float(np.linalg.norm(T_ref_tip.translation - T_ref_target.translation)), \
        float(np.linalg.norm(err.angular))


def main() -> int:
    """Run the demo; 0 when every answer is correct."""
    isolate_ros()
    urdf, srdf = robots.urdf_text("panda"), robots.srdf_text("panda")
    model = pin.buildModelFromXML(urdf)
    config = os.path.join(get_package_share_directory("ros2_ik"), "config", "panda.yaml")
    node = NodeProcess(extra_args=["--params-file", config])
    rclpy.init()
    client = Client("ik_demo")
    failures = 0
    try:
        client.publish_description(urdf, srdf)
        client.publish_joints(ARM + ["panda_finger_joint1", "panda_finger_joint2"],
                              READY + [0.02, 0.02])
        client.wait_for_service()
        # The URDF and then the SRDF each rebuild the model; wait until it answers.
        client.wait_for_model(_request(pin.SE3.Identity(), BASE))
        print(f"ik_node is up; solving on the Panda ({BASE} -> {TIP})\n")
        for label, req, expected in requests(model, np.random.default_rng(0)):
            client.publish_joints(ARM, READY)
            res = client.call(req)
            failures += report(model, label, req, res, expected)
    finally:
        client.close()
        rclpy.shutdown()
        code = node.stop()
    print(f"\nik_node exited with code {code}")
    print("demo: all answers correct" if failures == 0 else f"demo: {failures} wrong answers")
    return 0 if failures == 0 and code == 0 else 1


def report(model, label, req, res, expected) -> int:
    """Print one answer and return 1 when it is wrong."""
    code = res.error_code.val
    print(f"- {label}: {CODE_NAMES.get(code, code)} in {res.solve_time * 1e3:.2f} ms, "
          f"{res.iterations} iterations, {res.restarts} restarts")
    if res.solution.name:
        print("    q = [" + ", ".join(f"{v:+.4f}" for v in res.solution.position) + "]")
    wrong = code != expected
    if code == IKErrorCode.SUCCESS:
        T = pin.XYZQUATToSE3(np.array([
            req.target.pose.position.x, req.target.pose.position.y, req.target.pose.position.z,
            req.target.pose.orientation.x, req.target.pose.orientation.y,
            req.target.pose.orientation.z, req.target.pose.orientation.w]))
        pos, rot = fk_errors(model, res.solution.name, res.solution.position, T,
                             req.target.header.frame_id)
        print(f"    checked by our FK: position error {pos:.2e} m, orientation {rot:.2e} rad")
        wrong = wrong or pos > 1e-4 or rot > 1e-3
    else:
        print(f"    {res.message}")
    if wrong:
        print(f"    WRONG: expected {CODE_NAMES[expected]}")
    return int(wrong)


if __name__ == "__main__":
    sys.exit(main())
