"""Fuzzing planning-scene input (the Panda) with hypothesis, then a collision-checked request.

Batches of collision objects as the ``collision_object`` topic and ``apply_planning_scene``
take them: every operation, primitives of any type and size, meshes of any shape (flat,
on a line, huge, tiny, with bad indices), poses, frames, attachments; then a ComputeIK
request with ``avoid_collisions``.  A batch is applied whole or refused; the request then
answers a known code with a message, never INTERNAL_ERROR, and the process survives
(qhull under coal crashed it on flat and huge meshes).  ``FUZZ_SCENE_EXAMPLES`` sets the
count (bench/fuzz.py runs more).
"""
import math
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

pytest.importorskip("rclpy")

from geometry_msgs.msg import Point, Pose  # noqa: E402
from shape_msgs.msg import Mesh, MeshTriangle, SolidPrimitive  # noqa: E402

from fuzz_answers import counted, examples, sendable  # noqa: E402
from node_inputs import config, snapshot  # noqa: E402
from ros2_ik.node.compute_ik import compute_ik  # noqa: E402
from ros2_ik.node.robot_source import JointStateCache  # noqa: E402
from ros2_ik.node.scene_io import apply_batch  # noqa: E402
from ros2_ik_interfaces.msg import CollisionObject  # noqa: E402
from ros2_ik_interfaces.srv import ComputeIK  # noqa: E402
from panda_node import ARM, READY, description  # noqa: E402

STATS: Counter = Counter()
NUMBERS = st.one_of(st.floats(-1.0, 1.0), st.sampled_from(
    [0.0, 1e-300, 5e-324, 1e300, -1e300, math.nan, math.inf, 0.05, 0.3]))
SIZES = st.one_of(st.floats(0.01, 0.5), NUMBERS)
FRAMES = st.sampled_from(["", "panda_link0", "panda_hand", "panda_link4", "nowhere", "world"])
IDS = st.sampled_from(["a", "b", "c", ""])


class Panda:
    """The node's snapshot and configuration (the Panda, its scene empty at each example)."""

    snapshot = cfg = None

    @classmethod
    def load(cls):
        if cls.snapshot is None:
            urdf, srdf, _ = description()
            cls.snapshot, cls.cfg = snapshot(urdf, srdf), config()
        return cls


@st.composite
def poses(draw):
    pose = Pose()
    pose.position.x, pose.position.y, pose.position.z = (draw(NUMBERS) for _ in range(3))
    pose.orientation.w = draw(st.sampled_from([1.0, 1.0, 0.0, math.nan, 2.0]))
    return pose


@st.composite
def meshes(draw):
    """Meshes with volume, flat, on a line, scaled far up or down, with bad indices."""
    kind = draw(st.sampled_from(["solid", "flat", "line", "random"]))
    scale = draw(st.sampled_from([0.1, 0.1, 1e-300, 1e300, 1e4, 2e4]))
    if kind == "solid":
        corners = [(0, 0, 0), (1, 0, 0), (0, 1, 0), (0, 0, 1)]
    elif kind == "flat":
        corners = [(0, 0, 0), (1, 0, 0), (0, 1, 0), (1, 1, 0)]
    elif kind == "line":
        corners = [(k, 0, 0) for k in range(4)]
    else:
        corners = [tuple(draw(NUMBERS) for _ in range(3))
                   for _ in range(draw(st.integers(0, 6)))]
    mesh = Mesh()
    mesh.vertices = [Point(x=x * scale, y=y * scale, z=z * scale) for x, y, z in corners]
    top = max(len(corners) + draw(st.integers(0, 1)), 1)
    mesh.triangles = [MeshTriangle(vertex_indices=[draw(st.integers(0, top - 1))
                                                   for _ in range(3)])
                      for _ in range(draw(st.integers(0, 4)))]
    return mesh


@st.composite
def objects(draw):
    obj = CollisionObject(id=draw(IDS), operation=bytes([draw(st.integers(0, 5))]))
    obj.header.frame_id = draw(FRAMES)
    obj.pose = draw(poses()) if draw(st.booleans()) else Pose()
    if not draw(st.booleans()):
        obj.pose.orientation.w = 1.0
    for _ in range(draw(st.integers(0, 2))):
        obj.primitives.append(SolidPrimitive(
            type=draw(st.integers(0, 5)),
            dimensions=[draw(SIZES) for _ in range(draw(st.integers(0, 3)))]))
        obj.primitive_poses.append(Pose(position=Point(x=0.4, z=0.4)))
        obj.primitive_poses[-1].orientation.w = 1.0
    for _ in range(draw(st.integers(0, 1))):
        obj.meshes.append(draw(meshes()))
        obj.mesh_poses.append(Pose(position=Point(x=0.3, z=0.5)))
        obj.mesh_poses[-1].orientation.w = 1.0
    if draw(st.integers(0, 3)) == 0:
        obj.attach_link = draw(FRAMES)
        obj.touch_links = [draw(FRAMES)]
    return obj


def check_batch(batch) -> int:
    """Apply ``batch`` (whole or not at all), then answer a collision-checked request."""
    panda = Panda.load()
    scene = panda.snapshot.scene
    scene.clear()
    before = scene.snapshot().objects
    try:
        apply_batch(scene, batch, panda.cfg.max_mesh_triangles, panda.snapshot.robot.model)
        STATS["applied"] += 1
    except Exception:  # noqa: BLE001 - the node answers any refusal with its message
        STATS["refused"] += 1
        assert scene.snapshot().objects == before, "a refused batch changed the scene"
    req = ComputeIK.Request()
    req.target.header.frame_id = "panda_link0"
    req.target.pose.position.x, req.target.pose.position.z = 0.4, 0.5
    req.target.pose.orientation.x, req.target.pose.orientation.w = 1.0, 0.0  # hand down
    req.avoid_collisions, req.timeout = True, 0.05
    req.seed.name, req.seed.position = list(ARM), list(READY)
    res = compute_ik(panda.snapshot, "", panda.cfg, JointStateCache(), req).response
    counted(STATS, res.error_code.val, res.message, batch)
    sendable(STATS, res, batch)
    return res.error_code.val


def batches():
    """Batches of one to three collision objects."""
    return st.lists(objects(), min_size=1, max_size=3)


@examples("FUZZ_SCENE_EXAMPLES", 30)
@given(batch=batches())
def test_scene_input_fuzz(batch):
    check_batch(batch)
