"""One pinocchio ``Data`` per thread and model, for one purpose (:class:`PerThreadData`).

A model's ``Data`` is dear to make on a big model (5-12 ms on tiago_dual's 101 joints,
0.2-0.4 ms on talos) and cheap to refill: forward kinematics overwrites what a use reads.
Each purpose (the public check, a frame's placement at a configuration, the clearance
test) has its own instance, so that two purposes never share a ``Data`` within a thread.
"""
from __future__ import annotations

import threading

import pinocchio as pin

from ros2_ik.core.runtime.per_object import PerObject


class PerThreadData:
    """``data(model)``: this thread's ``Data`` of ``model`` for this instance's purpose.

    Made at the first call in a thread, held while the model lives.  A use fills what it
    reads (forward kinematics) and is over before the next use in the same thread.
    """

    def __init__(self) -> None:
        """Start with no ``Data`` in any thread."""
        self._local = threading.local()

    def __call__(self, model: pin.Model) -> pin.Data:
        """Return this thread's ``Data`` of ``model`` (made on the first call)."""
        table = getattr(self._local, "table", None)
        if table is None:
            table = self._local.table = PerObject()
        data = table.get(model)
        if data is None:
            data = table[model] = model.createData()
        return data
