"""The move an executed solution makes, against the collision model (core/collision/motion).

A ball is put where the hand passes halfway through a joint-linear move of the Panda, not
near either end.  The ends are clear by the checker's own distance; the move is found to
pass through it, at about half of the way.  With the ball elsewhere the move is clear.
"""
import numpy as np
import pytest

from ros2_ik.core.collision.motion import first_contact
from panda_node import arm_group, ball_checker

START = np.array([0.0, -0.3, 0.0, -2.2, 0.0, 2.0, 0.8])
END = START + np.array([1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0])


@pytest.fixture(scope="module")
def panda():
    return arm_group()


def _checker(panda, centre, radius=0.03):
    return ball_checker(panda[0], "ball", centre, radius)


def test_a_ball_on_the_way_is_met_and_the_ends_are_clear(panda):
    _, group = panda
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
    _, group = panda
    far = group.fk(START - (END - START), "panda_hand").translation
    checker = _checker(panda, far)
    assert first_contact(checker, group, START, END, 0.0) is None
    # A clearance the start already lacks: the move may keep it, not lose more.
    start = checker.min_distance(group.to_full_q(START)).distance_m
    assert first_contact(checker, group, START, END, start + 0.5) is None


def test_no_move_is_clear(panda):
    _, group = panda
    checker = _checker(panda, [2.0, 0.0, 0.0])
    assert first_contact(checker, group, START, START, 0.0) is None
