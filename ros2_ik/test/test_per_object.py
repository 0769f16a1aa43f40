"""PerObject: values by object identity, dropped with their object."""
import gc

import pytest

from ros2_ik.core import robots
from ros2_ik.core.runtime.per_object import PerObject, PerObjectAndKey


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
    cache, kept, ids, reused = PerObject(), [], set(), 0
    for k in range(200):  # freed objects' ids are reused by the next ones
        key = _Key()
        reused += id(key) in ids
        ids.add(id(key))
        assert cache.get(key) is None, "a collected object's value came back"
        cache[key] = k
        if k % 50 == 0:
            kept.append((key, k))
        del key  # freed here (no cycle): no gc.collect(), which took ~0.2 s in a full worker
    assert reused > 100, "ids were not reused: the test would prove nothing"
    assert len(cache) == len(kept)
    assert all(cache[key] == k for key, k in kept)


def test_pinocchio_models_and_groups_are_keys():
    robot, group = robots.load_group("panda")
    cache = PerObject()
    cache[robot.model] = "model"
    cache[group] = "group"
    assert cache[robot.model] == "model" and cache[group] == "group"


def test_per_object_and_key_builds_each_value_once_none_included():
    built = []

    def build(obj, key):
        built.append((id(obj), key))
        return None if key == "none" else (id(obj), key)

    values, a, b = PerObjectAndKey(build), _Key(), _Key()
    assert values.table(a) == {}
    assert values(a, 1) == (id(a), 1) and values(a, 1) == (id(a), 1)
    assert values(a, "none") is None and values(a, "none") is None
    assert values(b, 1) == (id(b), 1)
    assert built == [(id(a), 1), (id(a), "none"), (id(b), 1)]
    assert values.table(a) == {1: (id(a), 1), "none": None}
    del a
    gc.collect()
    assert len(values._tables) == 1  # a's table went with a
