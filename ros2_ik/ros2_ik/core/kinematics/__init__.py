"""One kinematic model for every compiled kernel: a joint tree, its FK and frame Jacobians.

The model (:mod:`.model`, no numba there): the joints of a pinocchio model as a tree of
arrays (:class:`~.model.Tree`), each joint's parent, placement ``T_parent_joint`` in its
parent joint's frame [m], kind (fixed, revolute, prismatic), unit axis in its own frame,
and column in the group vector; a joint not in the group is fixed at its locked position.
A serial chain is that tree pruned to the supports of a tip frame (:func:`~.model.chain_of`).

The compiled functions (:mod:`.forward`, :mod:`.lie`, imported with numba on first use):

* forward kinematics ``T_world_joint_i = T_world_parent(i) placement_i motion_i(q)``
  (revolute: rotation of ``q`` [rad] about the axis, prismatic: translation of ``q`` [m]
  along it), and the frames ``T_world_frame = T_world_joint placement_frame``;
* frame Jacobians (6, n) in ONE convention, pinocchio's ``LOCAL_WORLD_ALIGNED``: rows 0-2
  the linear velocity [m/s per unit of q] of the frame's origin, rows 3-5 its angular
  velocity [rad/s per unit of q], both in world axes; columns in group order, zero for the
  joints that do not move the frame.  :func:`~.forward.to_local` rotates one into the
  frame's own axes (pinocchio's ``LOCAL``), as the pose LM on ``log6`` uses it;
* the Lie-group helpers on SO(3) and SE(3): ``compose``, ``log3``, ``log6``, ``Jlog3``.
* one frame seen from another (:mod:`.relative`): a point of frame B in frame A and its
  Jacobian, the rotations ``R_WA``, ``R_WB``, ``R_AB``, vectors fixed in frames in world
  axes; the constraint and cost types' compiled rows are written with these.

Tested against pinocchio on the full model and finite differences
(``test/test_kinematics.py``); pinocchio on the full model stays the independent check of
every answer.
"""
