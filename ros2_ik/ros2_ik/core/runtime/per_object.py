"""A cache of values derived from an object (a model, a group), held while the object lives.

:class:`PerObject` is what ``weakref.WeakKeyDictionary`` does for these caches, for a
fraction of the cost of a lookup (the weak dictionary builds a weak reference on every
``get``), and without storing anything on the object itself
(a ``pin.Model`` or a ``Group`` pickles, e.g. for ray batches, exactly as before).
"""
from __future__ import annotations

import weakref
from typing import Any, Callable, Dict, Generic, Hashable, Optional, Tuple, TypeVar

V = TypeVar("V")


class PerObject(Generic[V]):
    """``{object: value}`` by identity; an entry goes when its object is collected.

    Objects must support weak references (``pin.Model``, ``Group`` do).  Safe under the
    GIL: each operation is one dictionary operation on an ``id`` key, checked against a
    weak reference so that a reused ``id`` never returns another object's value.
    """

    def __init__(self) -> None:
        """Start empty."""
        self._entries: Dict[int, Tuple[weakref.ref, Any]] = {}

    def get(self, obj: Hashable, default: Optional[V] = None) -> Optional[V]:
        """Return the value stored for ``obj``, or ``default``."""
        entry = self._entries.get(id(obj))
        if entry is not None and entry[0]() is obj:
            return entry[1]
        return default

    def __contains__(self, obj: Hashable) -> bool:
        """Whether a value is stored for ``obj``."""
        entry = self._entries.get(id(obj))
        return entry is not None and entry[0]() is obj

    def __getitem__(self, obj: Hashable) -> V:
        """Return the value stored for ``obj``; ``KeyError`` when there is none."""
        entry = self._entries.get(id(obj))
        if entry is None or entry[0]() is not obj:
            raise KeyError(obj)
        return entry[1]

    def __setitem__(self, obj: Hashable, value: V) -> None:
        """Store ``value`` for ``obj`` until ``obj`` is collected."""
        key, entries = id(obj), self._entries

        def forget(ref: weakref.ref) -> None:
            # Not a newer object's entry (a race with a store here only drops an entry).
            if entries.get(key, (None,))[0] is ref:
                entries.pop(key, None)

        entries[key] = (weakref.ref(obj, forget), value)

    def __len__(self) -> int:
        """Return the number of objects with a value (collected ones leave at once)."""
        return len(self._entries)


class PerObjectAndKey(Generic[V]):
    """``value(obj, key)``: built once by ``build(obj, key)``, held while ``obj`` lives.

    One table per object (:class:`PerObject`), e.g. a group's value for each frame id:
    the first call builds, the next are two dictionary lookups.  ``None`` is a value
    like any other (built once, not again).
    """

    def __init__(self, build: Callable[[Any, Hashable], V]) -> None:
        """Cache what ``build`` returns."""
        self._tables: PerObject[Dict[Hashable, V]] = PerObject()
        self._build = build

    def __call__(self, obj: Hashable, key: Hashable) -> V:
        """Return the value of ``(obj, key)``, built on the first call."""
        table = self._tables.get(obj)
        if table is None:
            table = self._tables[obj] = {}
        value = table.get(key, _MISSING)
        if value is _MISSING:
            value = table[key] = self._build(obj, key)
        return value

    def table(self, obj: Hashable) -> Dict[Hashable, V]:
        """Return the values built so far for ``obj`` (empty when none)."""
        return self._tables.get(obj) or {}


#: A key with no value built yet.
_MISSING = object()
