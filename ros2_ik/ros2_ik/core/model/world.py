"""How far from its frame's origin a coordinate the core takes may lie: :data:`MAX_COORDINATE_M`.

One bound for every length given to the core as a place in a robot's world: a mesh's
vertex coordinates and a shape's size (:mod:`ros2_ik.core.collision`), a whole-body
group's base position in a seed (:mod:`.floating_base`) and its pose targets' positions
(:class:`ros2_ik.core.pose.CompiledPose`: beyond the frame's reach from a base within
it).  Two reasons give it:

* no robot's world (a cell, a mobile base's map) is 10 km wide: a coordinate beyond it is
  a wrong unit or a garbage value, not a place;
* float64 resolves the tightest tolerance the core takes there: the spacing of doubles
  at 1e4 m is 1.8e-12 m, some 500 times below ``pose.MIN_TOLERANCE`` (1e-9 m).  Near
  the float range nothing is resolved (a step of metres leaves 1e300 m unchanged),
  squares overflow to inf, qhull crashes and coal's EPA gives wrong depths.
"""

#: Largest coordinate or size [m] the core takes (see the module docstring).
MAX_COORDINATE_M = 1e4


def within_world(point) -> bool:
    """Whether each coordinate of ``point`` [m] lies within :data:`MAX_COORDINATE_M` (NaN: no)."""
    return all(-MAX_COORDINATE_M <= v <= MAX_COORDINATE_M for v in point)
