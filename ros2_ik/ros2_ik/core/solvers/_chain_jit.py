"""The numba-compiled functions of :mod:`chain_kernel` (imported on first use: numba loads).

The pose LM attempt on a serial chain: the kinematics are the tree model's
(:mod:`ros2_ik.core.kinematics.forward` on the chain's tree and its one tip frame), the
Jacobian rotated into the tip's axes (``LOCAL``) for the error ``log6(T_target^-1 T)``.
Plain loops on preallocated arrays: numba's ``@`` on small matrices calls BLAS and
allocates, slower per iteration than these loops.
"""
import numpy as np

from ros2_ik.core.kinematics.forward import joints, kinematics, placed, to_local
from ros2_ik.core.kinematics.jit import jit
from ros2_ik.core.kinematics.lie import compose, log3, log6
from ros2_ik.core.kinematics.linalg import cholesky_solve


@jit
def _step(J, e, lam, A, y, dq):  # pragma: no cover - compiled
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
def attempt(parents, placements, kinds, axes, columns, fparent, fplace, q, Tti, lower, upper,
            bounded, sw, pos_tol2, ori_tol2, near2, scale, bias, stall, bounds,
            active_set):  # pragma: no cover - compiled
    """Run the Python pose loop's iteration (``log6``, ``PoseState``) in place on ``q``.

    The chain's tree and tip (``parents`` ... ``fplace``, ``model.Chain``); ``Tti`` (4, 4)
    ``T_target_world``.
    """
    n, k = q.shape[0], placements.shape[0]
    oMi, waxes, oMf = np.empty((k, 4, 4)), np.empty((k, 3)), np.empty((1, 4, 4))
    Jf, Terr = np.empty((1, 6, n)), np.empty((4, 4))
    e, w, dq = np.empty(6), np.empty(3), np.empty(n)
    A, y = np.empty((6, 6)), np.empty(6)
    T, J = oMf[0], Jf[0]
    active = bounded and active_set
    limited = False
    if active:
        for i in range(n):
            if q[i] <= lower[i] or q[i] >= upper[i]:
                limited = True
    E_prev, stalls, last = np.inf, 0, bounds.shape[0] - 1
    for it in range(1, last + 1):
        kinematics(parents, placements, kinds, axes, columns, q, fparent, fplace, oMi, oMf,
                   Jf, waxes)
        to_local(oMf, 0, Jf)
        compose(Tti, T, Terr)
        log6(Terr[:3, :3], Terr[:3, 3], e, w)
        E = 0.0
        for r in range(6):
            E += e[r] * e[r]
        if E <= near2:  # exact test: the translation itself, the rotation's angle
            t2 = Terr[0, 3] ** 2 + Terr[1, 3] ** 2 + Terr[2, 3] ** 2
            if t2 <= pos_tol2 and log3(Terr[:3, :3], w) ** 2 <= ori_tol2:
                return it, True, E
        stalls = stalls + 1 if E > stall * E_prev else 0
        if it == last or stalls >= 3 or not E <= bounds[it]:  # NaN: diverged
            return it, False, E
        E_prev = E
        if sw != 1.0:
            for r in range(6):
                e[r] *= sw
                for c in range(n):
                    J[r, c] *= sw
            E *= sw * sw
        lam = scale * E + bias
        _step(J, e, lam, A, y, dq)
        if limited:  # joints on a limit pushed outward: drop their columns, re-solve
            dropped = False
            for c in range(n):
                if (q[c] <= lower[c] and dq[c] > 0.0) or (q[c] >= upper[c] and dq[c] < 0.0):
                    dropped = True
                    for r in range(6):
                        J[r, c] = 0.0
            if dropped:
                _step(J, e, lam, A, y, dq)
        limited = False
        for c in range(n):
            x = q[c] - dq[c]
            if bounded:
                if x < lower[c]:
                    x, limited = lower[c], active
                elif x > upper[c]:
                    x, limited = upper[c], active
            q[c] = x
    return last, False, np.inf


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
