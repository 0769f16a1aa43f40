"""Drake's inverse-kinematics costs, a posture cost and the minimum-distance cost.

One file per cost type (see ``ros2_ik.core.terms``): its class and, for the compiled
polishing, its encoding, its compiled value and its kind (:mod:`.registry`).  Each
``evaluate`` returns the cost (float) and its gradient ``(nv,)`` in the tangent space.
Names are resolved and arguments validated once in ``__init__``.
"""
from ros2_ik.core.costs.angle import AngleBetweenVectorsCost
from ros2_ik.core.costs.base_motion import BaseMotionCost
from ros2_ik.core.costs.com import CenterOfMassCost
from ros2_ik.core.costs.collision import MinimumDistanceCost
from ros2_ik.core.costs.orientation import OrientationCost
from ros2_ik.core.costs.position import PositionCost
from ros2_ik.core.costs.posture import PostureCost

__all__ = ["AngleBetweenVectorsCost", "BaseMotionCost", "CenterOfMassCost", "MinimumDistanceCost",
           "OrientationCost", "PositionCost", "PostureCost"]
