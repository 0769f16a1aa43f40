"""Shared pieces of the node tests: the Panda, a served ik_node, and our own FK checks.

Not a test module: the tests import it. FK here is computed independently of the node
(a fresh pinocchio Data on the URDF), so a test checks answers, not the node's claims.
"""
from __future__ import annotations

import os
from typing import Sequence, Tuple

import numpy as np
import pinocchio as pin

READY = [0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785]
ARM = [f"panda_joint{i}" for i in range(1, 8)]


def description() -> Tuple[str, str, pin.Model]:
    """URDF text, SRDF text and a pinocchio model of the Panda (example-robot-data)."""
    from ros2_ik.core import robots
    urdf = robots.urdf_text("panda")
    return urdf, robots.srdf_text("panda"), pin.buildModelFromXML(urdf)


def start(namespace: str, *params: str, joints=True, env=None):
    """ik_node with config/panda.yaml under ``/namespace``, fed the Panda's description.

    ``env``: variables added to the node's environment.  Returns (NodeProcess, Client)
    once the node answers with a model.
    """
    from ament_index_python.packages import get_package_share_directory

    config = os.path.join(get_package_share_directory("ros2_ik"), "config", "panda.yaml")
    args = ["--params-file", config]
    for param in params:
        args += ["-p", param]
    urdf, srdf, _ = description()
    return serve(namespace, urdf, srdf, args, (ARM, READY) if joints else None, env)


def serve(namespace: str, urdf: str, srdf: str, args: Sequence[str] = (), joints=None,
          env=None):
    """ik_node under ``/namespace`` with ``args`` (``--ros-args`` ones), fed a description.

    ``joints``: (names, positions) published as one joint state, or None.  Returns
    (NodeProcess, Client) once the node answers with a model.
    """
    from ros2_ik.node.harness import Client, NodeProcess
    from ros2_ik_interfaces.srv import ComputeIK

    node = NodeProcess(extra_args=[*args, "-r", f"__ns:=/{namespace}"], env=env)
    client = Client(f"{namespace}_client", namespace=f"/{namespace}")
    try:
        client.publish_description(urdf, srdf)
        if joints:
            client.publish_joints(*joints)
        client.wait_for_service()
        probe = ComputeIK.Request()
        probe.target.pose.position.x = 0.4
        client.wait_for_model(probe)
    except BaseException:
        client.close()
        node.stop()
        raise
    return node, client


def stop(node, client) -> None:
    """Close the client and stop the node; it must exit cleanly."""
    client.close()
    code = node.stop()
    assert code == 0, node.output()


def full_configuration(model: pin.Model, names: Sequence[str],
                       positions: Sequence[float]) -> np.ndarray:
    """The model's configuration (nq,) with the named joints at ``positions``, others neutral."""
    q = pin.neutral(model)
    for name, value in zip(names, positions):
        joint = model.joints[model.getJointId(name)]
        if joint.nq == 2:  # continuous: (cos, sin)
            q[joint.idx_q:joint.idx_q + 2] = (np.cos(value), np.sin(value))
        else:
            q[joint.idx_q] = value
    return q


def T_frame(model: pin.Model, names: Sequence[str], positions: Sequence[float],
            frame: str, reference: str = "") -> pin.SE3:
    """T_reference_frame by our own FK (reference '' = world), other joints at neutral."""
    data = model.createData()
    q = full_configuration(model, names, positions)
    pin.framesForwardKinematics(model, data, q)
    T = data.oMf[model.getFrameId(frame)]
    return data.oMf[model.getFrameId(reference)].actInv(T) if reference else T


def pose_errors(T: pin.SE3, T_target: pin.SE3) -> Tuple[float, float]:
    """Position [m] and orientation [rad] distance between two poses."""
    return (float(np.linalg.norm(T.translation - T_target.translation)),
            float(np.linalg.norm(pin.log3(T_target.rotation.T @ T.rotation))))


def sphere(name, center, radius, frame="panda_link0", op=None):
    """A CollisionObject message: a sphere at ``center`` [m] of ``frame`` (ADD by default)."""
    from shape_msgs.msg import SolidPrimitive
    from ros2_ik_interfaces.msg import CollisionObject
    op = CollisionObject.ADD if op is None else op
    msg = CollisionObject(id=name, operation=op)
    msg.header.frame_id = frame
    msg.pose.orientation.w = 1.0
    msg.pose.position.x, msg.pose.position.y, msg.pose.position.z = map(float, center)
    prim = SolidPrimitive(type=SolidPrimitive.SPHERE, dimensions=[float(radius)])
    msg.primitives = [prim]
    pose = msg.pose.__class__()
    pose.orientation.w = 1.0
    msg.primitive_poses = [pose]
    return msg


def arm_group():
    """Our own Robot of the Panda (URDF and SRDF) and its group panda_link0 -> panda_hand."""
    from ros2_ik.core.model.robot import Robot
    urdf, srdf, _ = description()
    robot = Robot.from_urdf(urdf, srdf)
    return robot, robot.group(base="panda_link0", tip="panda_hand")


def ball_checker(robot, name: str, center, radius: float):
    """Our own collision checker of the Panda with one ball at ``center`` [m] of panda_link0.

    The scene the node gets from :func:`sphere` with the same arguments.
    """
    from ros2_ik.core.collision import CollisionChecker, PlanningScene, SceneObject, Sphere
    urdf, srdf, _ = description()
    scene = PlanningScene([f.name for f in robot.model.frames])
    scene.add(SceneObject(name, [Sphere(radius)], "panda_link0",
                          pin.SE3(np.eye(3), np.asarray(center, dtype=float)).homogeneous))
    return CollisionChecker.from_urdf(robot.model, urdf, srdf, scene)


def at_rest(client, namespace: str) -> None:
    """Brake the move a node ``namespace`` has under way (``~/stop_execution``) and wait
    until it has stopped: what it sends next starts from rest (a path is refused mid-move).
    """
    import time
    from std_srvs.srv import Trigger
    from ros2_ik.node.harness import call_resending
    stop = client.node.create_client(Trigger, f"/{namespace}/ik_node/stop_execution")
    assert stop.wait_for_service(timeout_sec=10.0)
    answer = call_resending(stop, Trigger.Request(), client.spin)
    if "braking to rest in" in answer.message:  # from the move, or from joint_states
        deadline = time.monotonic() + float(answer.message.split()[-2]) + 0.05
        while time.monotonic() < deadline:
            client.spin(0.02)
