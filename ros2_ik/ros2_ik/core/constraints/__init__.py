"""Drake's inverse-kinematics constraints on a pinocchio model (see ``ros2_ik.core.terms``).

Each class resolves its frame / joint names once in ``__init__`` (unknown names raise
``InvalidFrame`` / ``InvalidJoint`` listing the valid ones), validates its numbers
(``InvalidGoal`` naming the argument) and holds no ``pin.Data``.  The distance terms on
the collision geometry (:mod:`ros2_ik.core.collision`) are in :mod:`.collision` and
:mod:`.distance_bounds`.
"""
from .angle import AngleBetweenVectorsConstraint
from .com import CenterOfMassConstraint, CenterOfMassDistanceConstraint
from .contact import FramePlacementConstraint, PointOnPlaneConstraint
from .collision import MinimumDistanceConstraint
from .distance import PointToLineDistanceConstraint, PointToPointDistanceConstraint
from .distance_bounds import DistanceConstraint, MinimumDistanceUpperBoundConstraint
from .gaze import GazeTargetConstraint
from .joints import JointBoundsConstraint, LockedJointConstraint
from .numdiff import finite_difference, update_kinematics
from .orientation import OrientationConstraint
from .polyhedron import PolyhedronConstraint
from .position import PositionConstraint
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
    "finite_difference",
    "update_kinematics",
]
