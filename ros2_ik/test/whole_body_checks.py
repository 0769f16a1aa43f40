"""Shared pieces of the whole-body node tests: our own configuration from a reply.

Not a test module: the tests import it.  Our configuration is built from the reply's
fields alone, on a pinocchio model the test builds itself, so a test checks answers, not
the node's claims.  :func:`serve` starts ik_node with a shipped config file.
"""
import math
import os
from types import SimpleNamespace

from scipy.spatial import ConvexHull

import pinocchio as pin
from ament_index_python.packages import get_package_share_directory

from ros2_ik.core import robots
from ros2_ik.node.harness import Client, NodeProcess

#: The talos examples' sole: its corners in the sole frame (x, y) [m].
SOLE = [(0.1, 0.05), (0.1, -0.05), (-0.1, 0.05), (-0.1, -0.05)]


def full_q(model, names, positions, tf):
    """Our own full configuration: the reply's base transform, then its joints by name."""
    q = pin.neutral(model)
    t, r = tf.translation, tf.rotation
    if model.joints[1].nq == 4:  # planar: x y cos sin
        yaw = 2.0 * math.atan2(r.z, r.w)
        q[:4] = (t.x, t.y, math.cos(yaw), math.sin(yaw))
    else:
        q[:7] = (t.x, t.y, t.z, r.x, r.y, r.z, r.w)
    for name, value in zip(names, positions):
        joint = model.joints[model.getJointId(name)]
        if joint.nq == 2:
            q[joint.idx_q:joint.idx_q + 2] = (math.cos(value), math.sin(value))
        else:
            q[joint.idx_q] = value
    return q


def clearance_on_robot(checker, group, held, reply) -> float:
    """Return the checker's minimum distance [m] at a whole-body reply, on the robot.

    ``group``: the group asked; ``held``: the joints outside it where the robot holds them
    (name -> value; empty: the group's own values); the base from ``solution_base``.
    """
    from ros2_ik.node.base_pose import reply_vector
    robot = group.held_at(held) if held else group
    q = reply_vector(robot, reply.solution, reply.solution_base)
    return checker.min_distance(robot.to_full_q(q)).distance_m


def path_tips(model, trajectory, frame: str) -> list:
    """Our own FK of ``frame`` [m] at each point of a planar-base whole-body path.

    The base from the point's first three columns (``<base>/x``, ``/y``, ``/theta``, as
    the reply names them), the joints by name.
    """
    names, data, tips = list(trajectory.joint_names), model.createData(), []
    for point in trajectory.points:
        x, y, theta = point.positions[:3]
        tf = SimpleNamespace(translation=SimpleNamespace(x=x, y=y, z=0.0),
                             rotation=SimpleNamespace(x=0.0, y=0.0, z=math.sin(theta / 2),
                                                      w=math.cos(theta / 2)))
        q = full_q(model, names[3:], point.positions[3:], tf)
        pin.framesForwardKinematics(model, data, q)
        tips.append(data.oMf[model.getFrameId(frame)].translation.copy())
    return tips


def serve(namespace, config, urdf_path, srdf_path, *params):
    """Start ik_node with ``config`` under ``/namespace``, fed URDF + SRDF.

    Returns (node, client, URDF text) once compute_ik is advertised.
    """
    urdf = (robots.data_dir() / urdf_path).read_text()
    srdf = (robots.data_dir() / srdf_path).read_text()
    args = ["--params-file",
            os.path.join(get_package_share_directory("ros2_ik"), "config", config),
            "-r", f"__ns:=/{namespace}"]
    for param in params:
        args += ["-p", param]
    node = NodeProcess(extra_args=args)
    client = Client(f"{namespace}_client", namespace=f"/{namespace}")
    client.publish_description(urdf, srdf)
    client.wait_for_service()
    return node, client, urdf


def call_servo(client, namespace: str, name: str):
    """Call ``/namespace/ik_node/servo/name`` (std_srvs Trigger); return its answer."""
    from std_srvs.srv import Trigger
    from ros2_ik.node.harness import wait_for
    cli = client.node.create_client(Trigger, f"/{namespace}/ik_node/servo/{name}")
    assert cli.wait_for_service(timeout_sec=30)
    future = cli.call_async(Trigger.Request())
    wait_for(future.done, 60, f"servo/{name}", client.spin)
    return future.result()


def stop(node, client):
    """Close the client and stop the node; it must exit cleanly."""
    client.close()
    assert node.stop() == 0, node.output()[-2000:]


def inside_by(p, points):
    """Return the signed distance [m] of ``p`` inside the convex hull of ``points`` (2D)."""
    hull = ConvexHull(points)
    # each facet: n . x + d <= 0 inside, n unit
    return float(min(-(eq[:2] @ p + eq[2]) for eq in hull.equations))
