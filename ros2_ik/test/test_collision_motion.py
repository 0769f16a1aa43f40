"""The move an executed solution makes, against the collision model (core/collision/motion).

A ball is put where the hand passes halfway through a joint-linear move of the Panda, not
near either end.  The ends are clear by the checker's own distance; the move is found to
pass through it, at about half of the way.  With the ball elsewhere the move is clear.
"""
import os

import numpy as np
import pinocchio as pin
import pytest

from ros2_ik.core.collision import CollisionChecker, PlanningScene, SceneObject, Sphere
from ros2_ik.core.collision.meshes import environment_share_dirs
from ros2_ik.core.collision.motion import first_contact
from ros2_ik.core.model.robot import Robot

START = np.array([0.0, -0.3, 0.0, -2.2, 0.0, 2.0, 0.8])
END = START + np.array([1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0])


@pytest.fixture(scope="module")
def panda():
    for share in environment_share_dirs():
        folder = os.path.join(share, "example-robot-data", "robots", "panda_description")
        if os.path.isdir(folder):
            urdf = open(os.path.join(folder, "urdf", "panda.urdf")).read()
            srdf = open(os.path.join(folder, "srdf", "panda.srdf")).read()
            robot = Robot.from_urdf(urdf, srdf)
            return robot, robot.group(base="panda_link0", tip="panda_hand"), urdf, srdf
    pytest.skip("example-robot-data is not installed")


def _checker(panda, centre, radius=0.03):
    robot, _, urdf, srdf = panda
    scene = PlanningScene([f.name for f in robot.model.frames])
    scene.add(SceneObject("ball", [Sphere(radius)], "universe",
                          pin.SE3(np.eye(3), np.asarray(centre)).homogeneous))
    return CollisionChecker.from_urdf(robot.model, urdf, srdf, scene)


def test_a_ball_on_the_way_is_met_and_the_ends_are_clear(panda):
    _, group, _, _ = panda
    middle = group.fk((START + END) / 2, "panda_hand").translation
    checker = _checker(panda, middle)
    for q in (START, END):
        assert checker.min_distance(group.to_full_q(q)).distance_m > 0.02
    contact = first_contact(checker, group, START, END, 0.0)
    assert contact is not None and "ball" in contact.report.pair
    assert 0.2 < contact.fraction < 0.8 and contact.report.distance_m < 0.0
    back = first_contact(checker, group, END, START, 0.0)
    assert back is not None and 0.2 < back.fraction < 0.8


def test_a_move_away_from_the_ball_is_clear(panda):
    _, group, _, _ = panda
    far = group.fk(START - (END - START), "panda_hand").translation
    checker = _checker(panda, far)
    assert first_contact(checker, group, START, END, 0.0) is None
    # A clearance the start already lacks: the move may keep it, not lose more.
    start = checker.min_distance(group.to_full_q(START)).distance_m
    assert first_contact(checker, group, START, END, start + 0.5) is None


def test_no_move_is_clear(panda):
    _, group, _, _ = panda
    checker = _checker(panda, [2.0, 0.0, 0.0])
    assert first_contact(checker, group, START, START, 0.0) is None
