"""Drake's inverse-kinematics constraints on a pinocchio model (see ``ros2_ik.core.terms``).

Each class resolves its frame / joint names once in ``__init__`` (unknown names raise
``InvalidFrame`` / ``InvalidJoint`` listing the valid ones), validates its numbers
(``InvalidGoal`` naming the argument) and holds no ``pin.Data``.  The distance terms on
the collision geometry (:mod:`ros2_ik.core.collision`) are in :mod:`.collision` and
:mod:`.distance_bounds`: their names (``_LAZY``) are looked up through the module
``__getattr__``, which imports them (and the collision package) when first asked for, so
``import ros2_ik.core`` loads no collision code.
"""
import importlib

from .angle import AngleBetweenVectorsConstraint
from .com import CenterOfMassConstraint, CenterOfMassDistanceConstraint
from .contact import FramePlacementConstraint, PointOnPlaneConstraint
from .distance import PointToLineDistanceConstraint, PointToPointDistanceConstraint
from .gaze import GazeTargetConstraint
from .joints import JointBoundsConstraint, LockedJointConstraint
from .numdiff import finite_difference, update_kinematics
from .orientation import OrientationConstraint
from .polyhedron import PolyhedronConstraint
from .position import PositionConstraint
from .rotation_box import RotationBoxConstraint
from .support_polygon import ComInSupportPolygonConstraint

__all__ = [
    "AngleBetweenVectorsConstraint",
    "CenterOfMassConstraint",
    "CenterOfMassDistanceConstraint",
    "ComInSupportPolygonConstraint",
    "FramePlacementConstraint",
    "DistanceConstraint",
    "GazeTargetConstraint",
    "JointBoundsConstraint",
    "LockedJointConstraint",
    "MinimumDistanceConstraint",
    "MinimumDistanceUpperBoundConstraint",
    "OrientationConstraint",
    "PointToLineDistanceConstraint",
    "PointToPointDistanceConstraint",
    "PointOnPlaneConstraint",
    "PolyhedronConstraint",
    "PositionConstraint",
    "RotationBoxConstraint",
    "finite_difference",
    "update_kinematics",
]

#: The names imported when first asked for, and their modules (the module docstring).
_LAZY = {"MinimumDistanceConstraint": ".collision",
         "DistanceConstraint": ".distance_bounds",
         "MinimumDistanceUpperBoundConstraint": ".distance_bounds"}


def __getattr__(name: str):
    """Import a collision term's class on first use (``_LAZY``)."""
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_LAZY[name], __name__), name)
    globals()[name] = value
    return value
