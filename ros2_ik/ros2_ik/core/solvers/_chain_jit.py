"""The numba-compiled functions of :mod:`chain_kernel` (imported on first use: numba loads).

The pose LM attempt on a serial chain (:func:`_lm_jit.pose_attempt`, generated) steps
with :func:`pose_step`; the kinematics are the tree model's
(:mod:`ros2_ik.core.kinematics.forward` on the chain's tree and its one tip frame), the
Jacobian rotated into the tip's axes (``LOCAL``) for the error ``log6(T_target^-1 T)``.
Plain loops on preallocated arrays: numba's ``@`` on small matrices calls BLAS and
allocates, slower per iteration than these loops.
"""
import numpy as np

from ros2_ik.core.kinematics.forward import joints, placed
from ros2_ik.core.kinematics.jit import jit
from ros2_ik.core.kinematics.linalg import cholesky_solve


@jit
def pose_step(J, e, lam, A, y, dq):  # pragma: no cover - compiled
    """``dq = J^T (J J^T + lam I)^-1 e``: ``cholesky_solve`` of the 6x6 (``A``, ``y`` scratch)."""
    n = J.shape[1]
    for r in range(6):
        for c in range(r + 1):
            s = 0.0
            for k in range(n):
                s += J[r, k] * J[c, k]
            A[r, c] = s
        A[r, r] += lam
    cholesky_solve(A, 6, e, y)
    for k in range(n):
        s = 0.0
        for r in range(6):
            s += J[r, k] * y[r]
        dq[k] = s


@jit
def forward_many(parents, placements, kinds, axes, columns, fparent, fplace, qs,
                 out):  # pragma: no cover - compiled
    """Tip placements (S, 4, 4) of the configurations ``qs`` (S, n) into ``out``."""
    k = placements.shape[0]
    oMi, waxes, oMf = np.empty((k, 4, 4)), np.empty((k, 3)), np.empty((1, 4, 4))
    for s in range(qs.shape[0]):
        joints(parents, placements, kinds, axes, columns, qs[s], oMi, waxes)
        placed(oMi, fparent[0], fplace, 0, oMf)
        out[s] = oMf[0]
