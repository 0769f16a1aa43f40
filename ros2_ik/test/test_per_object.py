"""PerObject: values by object identity, dropped with their object."""
import gc

import pytest

from ros2_ik.core import robots
from ros2_ik.core.runtime.per_object import PerObject


class _Key:
    """A weak-referenceable object; equal to every other, so only identity can tell."""

    def __eq__(self, other):
        return True

    def __hash__(self):
        return 0


def test_values_by_identity_not_equality():
    cache, a, b = PerObject(), _Key(), _Key()
    cache[a] = 1
    assert cache.get(a) == 1 and cache[a] == 1 and a in cache
    assert cache.get(b) is None and b not in cache and cache.get(b, 7) == 7
    with pytest.raises(KeyError):
        cache[b]
    cache[a] = 2  # replaced, not added
    assert cache[a] == 2 and len(cache) == 1


def test_entry_goes_with_its_object_and_a_reused_id_is_not_confused():
    cache, kept = PerObject(), []
    for k in range(200):  # freed objects' ids are reused by the next ones
        key = _Key()
        assert cache.get(key) is None, "a collected object's value came back"
        cache[key] = k
        if k % 50 == 0:
            kept.append((key, k))
        del key
        gc.collect()
    assert len(cache) == len(kept)
    assert all(cache[key] == k for key, k in kept)


def test_pinocchio_models_and_groups_are_keys():
    robot, group = robots.load_group("panda")
    cache = PerObject()
    cache[robot.model] = "model"
    cache[group] = "group"
    assert cache[robot.model] == "model" and cache[group] == "group"
