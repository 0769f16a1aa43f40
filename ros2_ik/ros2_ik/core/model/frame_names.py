"""The frame names a user gives: a model's links and operational frames.

What an unknown-frame error lists as valid.  Joint frames and the root ``universe``
still resolve where a frame is looked up; they are only left out of the list, so that
it names what a URDF user knows: links (and frames added by name).
"""
from __future__ import annotations

from typing import List

import pinocchio as pin

_NAMEABLE = (pin.FrameType.BODY, pin.FrameType.OP_FRAME)


def nameable_frames(model: pin.Model) -> List[str]:
    """Return the names of the model's links and operational frames, in model order."""
    return [f.name for f in model.frames if f.type in _NAMEABLE and f.name != "universe"]
