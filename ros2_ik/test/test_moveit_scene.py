"""/monitored_planning_scene conversion, on data shaped like moveit_msgs/PlanningScene
(moveit_msgs is not installed here; the subscription itself needs it)."""
from types import SimpleNamespace as NS

import pinocchio as pin
import pytest

pytest.importorskip("rclpy")

from geometry_msgs.msg import Pose  # noqa: E402
from ros2_ik.core import robots  # noqa: E402
from ros2_ik.core.collision import PlanningScene  # noqa: E402
from ros2_ik.node.moveit_scene import scene_operations  # noqa: E402
from ros2_ik.node.scene_io import apply_batch  # noqa: E402
from shape_msgs.msg import SolidPrimitive  # noqa: E402
from std_msgs.msg import Header  # noqa: E402


def moveit_object(name, x, operation=0, frame="panda_link0"):
    pose = Pose()
    pose.position.x, pose.orientation.w = x, 1.0
    local = Pose()
    local.orientation.w = 1.0
    return NS(id=name, header=Header(frame_id=frame), pose=pose, operation=bytes([operation]),
              primitives=[SolidPrimitive(type=SolidPrimitive.BOX, dimensions=[0.1, 0.2, 0.3])],
              primitive_poses=[local], meshes=[], mesh_poses=[])


def planning_scene(objects, attached=(), is_diff=False):
    return NS(is_diff=is_diff, world=NS(collision_objects=list(objects)),
              robot_state=NS(attached_collision_objects=list(attached)))


@pytest.fixture()
def scene():
    model = pin.buildModelFromXML(robots.urdf_text("panda"))
    return PlanningScene.for_model(model), model


def test_full_scene_replaces_ours_and_attaches(scene):
    live, model = scene
    apply_batch(live, scene_operations(planning_scene([moveit_object("old", 0.1)])), 1000,
                model)
    attached = NS(link_name="panda_hand", touch_links=["panda_leftfinger"],
                  object=moveit_object("tool", 0.0, frame=""))
    msg = planning_scene([moveit_object("table", 0.5), moveit_object("shelf", 0.7)], [attached])
    apply_batch(live, scene_operations(msg), 1000, model)
    objects = live.snapshot().objects
    assert sorted(objects) == ["shelf", "table", "tool"]
    assert objects["table"].shapes[0].shape.size_m == (0.1, 0.2, 0.3)
    assert objects["table"].T_frame_object[0, 3] == 0.5
    assert objects["tool"].attached and objects["tool"].frame_id == "panda_hand"
    assert objects["tool"].touch_links == ("panda_leftfinger",)


def test_diff_moves_and_removes(scene):
    live, model = scene
    apply_batch(live, scene_operations(planning_scene([moveit_object("a", 0.1),
                                                       moveit_object("b", 0.2)])), 1000, model)
    diff = planning_scene([moveit_object("a", 0.4, operation=3),
                           moveit_object("b", 0.0, operation=1)], is_diff=True)
    apply_batch(live, scene_operations(diff), 1000, model)
    objects = live.snapshot().objects
    assert list(objects) == ["a"] and objects["a"].T_frame_object[0, 3] == 0.4
