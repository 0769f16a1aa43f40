"""Many targets of one chain at once: batch IK and capability maps.

The same answer as one solve per target (:mod:`ros2_ik.core.solvers.before_iterating`):
each target's branch inside the limits nearest its seed, verified on the full model,
with the per-target Python around it done once per batch (one compiled pass for the
branches, pinocchio's forward kinematics in one loop, the errors as arrays).  A target
whose nearest branch does not verify, or that has no branch inside the limits, is left
to the one-target path (its proof or the search).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pinocchio as pin

from ros2_ik.core.closed_form.branches import nearest_each


class Answers(NamedTuple):
    """Per target (N rows): ``q`` (N, n) [rad], and the errors [m], [rad] of the verified ones.

    ``verified`` (N,) bool: the row holds a branch that met the tolerances and the limits
    on the full model; the other rows are left to the one-target path.
    """

    q: np.ndarray
    verified: np.ndarray
    position_error_m: np.ndarray
    orientation_error_rad: np.ndarray


def solve_many(group, frame_id: int, closed_form, T_world_frame: np.ndarray,
               seeds: np.ndarray, position_tolerance_m: float,
               orientation_tolerance_rad: float, distinct: float) -> Answers:
    """Answer targets ``T_world_frame`` (N, 4, 4) from ``seeds`` (N, n) (module docstring)."""
    Q, ls = closed_form.solve_many(T_world_frame)
    q, found = nearest_each(Q, ls, seeds, group.lower, group.upper, distinct)
    pos, ori = _errors(group, frame_id, q, found, T_world_frame)
    inside = np.all((q >= group.lower) & (q <= group.upper), axis=1)
    verified = found & inside & (pos <= position_tolerance_m) & \
        (ori <= orientation_tolerance_rad)
    return Answers(q, verified, pos, ori)


def _errors(group, frame_id: int, q: np.ndarray, found: np.ndarray, T_world: np.ndarray):
    """Position [m] and rotation angle [rad] of each found row from its target (full model).

    Pinocchio's forward kinematics of exactly the returned values; the rotation angle is
    the norm of ``log3(R_target^T R)``, from the rotation's trace and skew part.
    """
    model, data = group.robot.model, group.full_data()
    rows = np.flatnonzero(found)
    q_full = np.repeat(group.q_full_locked[None], len(rows), axis=0)
    q_full[:, group.iq_full] = group.to_reduced_qs(q[rows])
    forward, place = pin.forwardKinematics, pin.updateFramePlacement
    placements = []
    for row in q_full:
        forward(model, data, row)
        placements.append(place(model, data, frame_id).homogeneous)
    H = np.repeat(np.eye(4)[None], len(q), axis=0)
    H[:, :3, 3] = np.inf
    if placements:
        H[rows] = placements
    pos = np.linalg.norm(H[:, :3, 3] - T_world[:, :3, 3], axis=1)
    R = np.einsum("kji,kjl->kil", T_world[:, :3, :3], H[:, :3, :3])  # R_target^T R
    trace = np.einsum("kii->k", R)
    skew = np.stack([R[:, 2, 1] - R[:, 1, 2], R[:, 0, 2] - R[:, 2, 0], R[:, 1, 0] - R[:, 0, 1]],
                    axis=1)
    ori = np.arctan2(0.5 * np.linalg.norm(skew, axis=1), 0.5 * (trace - 1.0))
    return pos, ori
