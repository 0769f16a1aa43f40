"""Shared pieces of the whole-body node tests: our own configuration from a reply.

Not a test module: the tests import it.  Built from the reply's fields alone, on a
pinocchio model the test builds itself, so a test checks answers, not the node's claims.
"""
import math

import pinocchio as pin


def full_q(model, names, positions, tf):
    """Our own full configuration: the reply's base transform, then its joints by name."""
    q = pin.neutral(model)
    t, r = tf.translation, tf.rotation
    if model.joints[1].nq == 4:  # planar: x y cos sin
        yaw = 2.0 * math.atan2(r.z, r.w)
        q[:4] = (t.x, t.y, math.cos(yaw), math.sin(yaw))
    else:
        q[:7] = (t.x, t.y, t.z, r.x, r.y, r.z, r.w)
    for name, value in zip(names, positions):
        joint = model.joints[model.getJointId(name)]
        if joint.nq == 2:
            q[joint.idx_q:joint.idx_q + 2] = (math.cos(value), math.sin(value))
        else:
            q[joint.idx_q] = value
    return q
