"""Closed-form pose IK of the arms that admit one, detected from their kinematics.

:mod:`.chain` reads a group's chain at its zero configuration (joint axes and points in
the world frame, the frame's orientation) and asks EAIK's subproblem decomposition
whether it has a closed form; on the families of :mod:`.six_r` (a spherical wrist after
two parallel axes, three parallel axes before two meeting ones) our compiled Paden-Kahan
kernel (:mod:`.subproblems`) solves instead of EAIK; :mod:`.branches` turns one target
into every exact branch within the joint limits, or a proof that none is (it compiles
with numba: import it when a closed form is found).  No robot name is involved anywhere.
"""
from ros2_ik.core.closed_form.chain import ClosedForm, of

__all__ = ["ClosedForm", "of"]
