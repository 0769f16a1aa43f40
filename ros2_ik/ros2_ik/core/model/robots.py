"""Robots shipped by the example-robot-data package, read from disk (no download).

Used by tests, the example and the benchmark.  The data folder is found from
``$EXAMPLE_ROBOT_DATA_MODEL_DIR``, the installed ``example-robot-data`` distribution
(cmeel wheel layout), the ``example_robot_data`` Python module, or ROS' share folders.
"""
from __future__ import annotations

import glob
import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Dict, List, Optional

from ros2_ik.core import errors
from ros2_ik.core.model.robot import Robot


@dataclass(frozen=True)
class ArmSpec:
    """Where an arm's URDF lives and its usual chain."""

    urdf: str
    srdf: Optional[str]
    base: str
    tip: str


#: Arms of example-robot-data, relative to its ``robots`` folder.
ARMS: Dict[str, ArmSpec] = {
    "panda": ArmSpec("panda_description/urdf/panda.urdf", "panda_description/srdf/panda.srdf",
                     "panda_link0", "panda_hand"),
    "ur5": ArmSpec("ur_description/urdf/ur5_robot.urdf", "ur_description/srdf/ur5.srdf",
                   "base_link", "tool0"),
    "kinova": ArmSpec("kinova_description/robots/kinova.urdf",
                      "kinova_description/srdf/kinova.srdf",
                      "j2s6s200_link_base", "j2s6s200_end_effector"),
    "z1": ArmSpec("z1_description/urdf/z1.urdf", "z1_description/srdf/z1.srdf",
                  "link00", "link06"),
    "xarm7": ArmSpec("xarm_description/urdf/xarm7.urdf", "xarm_description/srdf/xarm7.srdf",
                     "link_base", "link_eef"),
    # Arms of full robots, loaded as a user would: the whole URDF (torso, head, second
    # arm, hands), the group from base to tip, every other joint locked.
    "ur10": ArmSpec("ur_description/urdf/ur10_robot.urdf", None, "base_link", "tool0"),
    "so101": ArmSpec("so_arm_description/urdf/so101.urdf", None,  # 5 joints
                     "base_link", "gripper_frame_link"),
    "baxter_left": ArmSpec("baxter_description/urdf/baxter.urdf",  # offset wrist, on a torso
                           "baxter_description/srdf/baxter_manipulation.srdf",
                           "torso", "left_gripper"),
    "tiago": ArmSpec("tiago_description/robots/tiago.urdf", None,  # mobile torso, hand
                     "torso_lift_link", "arm_tool_link"),
    "tiago_pro_left": ArmSpec("tiago_pro_description/robots/tiago_pro.urdf", None,
                              "torso_lift_link", "arm_left_tool_link"),
    "talos_left": ArmSpec("talos_data/robots/talos_full_v2.urdf",  # humanoid
                          "talos_data/srdf/talos.srdf", "torso_2_link",
                          "gripper_left_base_link"),
    "g1_left": ArmSpec("g1_description/urdf/g1_29dof_rev_1_0.urdf", None,  # humanoid
                       "torso_link", "left_rubber_hand"),
    "pr2_right": ArmSpec("pr2_description/urdf/pr2.urdf",  # continuous joints, mobile torso
                         "pr2_description/srdf/pr2.srdf", "torso_lift_link",
                         "r_gripper_tool_frame"),
    "b1_z1": ArmSpec("b1_description/urdf/b1-z1.urdf",  # arm on a quadruped
                     "b1_description/srdf/b1-z1.srdf", "trunk", "link06"),
}


def _candidates() -> List[Path]:
    out = []
    env = os.environ.get("EXAMPLE_ROBOT_DATA_MODEL_DIR")
    if env:
        out.append(Path(env))
    from importlib import metadata  # not at import: ~20 ms
    try:
        dist = metadata.distribution("example-robot-data")
        out.append(Path(str(dist.locate_file("cmeel.prefix/share/example-robot-data/robots"))))
    except metadata.PackageNotFoundError:
        pass
    try:
        from example_robot_data.path import EXAMPLE_ROBOT_DATA_MODEL_DIR
        out.append(Path(EXAMPLE_ROBOT_DATA_MODEL_DIR))
    except Exception:
        pass
    out.extend(Path(p) for p in glob.glob("/opt/ros/*/share/example-robot-data/robots"))
    out.append(Path("/usr/share/example-robot-data/robots"))
    return out


@lru_cache(maxsize=1)
def data_dir() -> Path:
    """Return the ``robots`` folder of example-robot-data; RobotModelError when absent."""
    for path in _candidates():
        if (path / "panda_description").is_dir():
            return path
    raise errors.RobotModelError(
        "example-robot-data not found; install it (pip install example-robot-data) or set "
        "EXAMPLE_ROBOT_DATA_MODEL_DIR to its 'robots' folder")


def urdf_text(name: str) -> str:
    """URDF XML of arm ``name`` (one of :data:`ARMS`)."""
    return (data_dir() / _spec(name).urdf).read_text()


def load_arm(name: str, planning_limits=None) -> Robot:
    """Return a :class:`Robot` for arm ``name`` (URDF and SRDF from example-robot-data).

    ``planning_limits``: as :meth:`Robot.from_urdf`'s (MoveIt's joint_limits.yaml).
    """
    spec = _spec(name)
    srdf = data_dir() / spec.srdf if spec.srdf else None
    srdf_text = srdf.read_text() if srdf is not None and srdf.is_file() else None
    return Robot.from_urdf(urdf_text(name), srdf_text, planning_limits=planning_limits)


def load_group(name: str):
    """(robot, group) for arm ``name`` on its usual base->tip chain."""
    robot = load_arm(name)
    spec = _spec(name)
    return robot, robot.group(base=spec.base, tip=spec.tip)


def _spec(name: str) -> ArmSpec:
    if name not in ARMS:
        raise errors.InvalidArgument(f"unknown arm '{name}'; valid: {sorted(ARMS)}")
    return ARMS[name]


def srdf_text(name: str) -> str:
    """SRDF XML of arm ``name`` ('' when example-robot-data ships none)."""
    spec = _spec(name)
    path = data_dir() / spec.srdf if spec.srdf else None
    return path.read_text() if path is not None and path.is_file() else ""
