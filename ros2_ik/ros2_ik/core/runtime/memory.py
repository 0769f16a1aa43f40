"""The heap of a process that solves in a loop: what lives on, exempt from collections.

Python's full garbage collection scans every object alive.  A process holding a model,
its seed libraries and its compiled data has hundreds of thousands, and one such pass
takes tens of milliseconds: a solve it falls into overruns its ``timeout_s``
(docs/python_api.md); in the node, such a pass re-scanning the model was the worst
``joint_states`` gap and the latency tail of ``make load`` (docs/design.md, ``node/``).
The core never freezes the heap by itself (``gc.freeze`` acts on the whole process, the
caller's objects too): the node calls :func:`settle_memory` after each model it loads,
the benchmarks before they time, a user's loop after ``prepare``.
"""
from __future__ import annotations

import gc


def settle_memory() -> None:
    """Collect garbage, then exempt every object alive now from later collections.

    Call it once the long-lived objects exist (after :func:`ros2_ik.core.solve.prepare`,
    or after loading a model): later collections scan only what is made after it.
    """
    gc.collect()
    gc.freeze()
