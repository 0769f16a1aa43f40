"""The independent checks' pose test (tests' helper; not a test module).

Numpy and pinocchio on placements the test computed itself: nothing of the solvers or of
``core.verify``.  Used by the false-SUCCESS hardening test and the node fuzz.
"""
import numpy as np
import pinocchio as pin

#: Coordinates of magnitude M are known to ~M * eps: two sums of them that agree to that
#: are equal (make fuzz: a target 4.7e16 m away with as large a tolerance).
ROUNDING = 8 * np.finfo(float).eps


def pose_miss(T: pin.SE3, T_target: pin.SE3, weights, position_only: bool,
              pos_tol: float, ori_tol: float) -> str:
    """'' when placement ``T`` meets ``T_target`` within the tolerances, else why.

    Errors in the target's axes [m] and [rad], on the axes of positive ``weights`` (6:
    x y z rx ry rz; ``position_only`` frees the rotation).
    """
    w = np.array(weights, dtype=float)
    if position_only:
        w[3:] = 0.0
    R_t, p_t = T_target.rotation, T_target.translation
    dp = (R_t.T @ (T.translation - p_t))[w[:3] > 0]
    dr = pin.log3(R_t.T @ T.rotation)[w[3:] > 0]
    rounding = ROUNDING * (np.abs(T.translation).sum() + np.abs(p_t).sum())
    if np.linalg.norm(dp) > pos_tol + rounding:
        return f"position error {np.linalg.norm(dp):.3g} m > {pos_tol:.3g}"
    if np.linalg.norm(dr) > ori_tol:
        return f"orientation error {np.linalg.norm(dr):.3g} rad > {ori_tol:.3g}"
    return ""
