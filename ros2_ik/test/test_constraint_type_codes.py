"""A compiled kernel fails loudly on a constraint type code it has no formula for (issue 39).

Before, ``rows``, ``point_row`` and ``linearise`` sent any code they did not name to the
point-to-line formula: an encoder out of step with the kernels gave another constraint's
rows, silently.  Each path a packed problem takes is driven here with an unknown code:
the Python evaluation, the attempt through its direct entry, polishing's model
(``_dispatch_jit``, which calls each type's functions from its file).
"""
import numpy as np
import pytest

from ros2_ik.core.constraints import orientation, position, registry
from ros2_ik.core.solvers import chain_kernel, constraint_kernel as ck, polish_kernel

pytestmark = pytest.mark.skipif(not chain_kernel.available(), reason="numba not installed")

UNKNOWN = 99


@pytest.fixture(scope="module")
def kernels():
    assert ck.warm_up() and polish_kernel.warm_up()
    from ros2_ik.core.solvers import _dispatch_jit
    return _dispatch_jit


def _with_codes(codes) -> ck.Compiled:
    """The kernels' tiny problem (a position and an orientation bound) with ``codes``."""
    tiny = ck.tiny_problem()
    layout = tiny.layout
    bad = ck.packed(layout.tree, layout.fparent, layout.fplace, np.array(codes), *layout[4:12])
    return ck.Compiled(bad, tiny.values.copy())


def test_the_tiny_problem_evaluates_with_its_own_codes(kernels):
    codes = [registry.TYPES.index(position.KIND), registry.TYPES.index(orientation.KIND)]
    g, J, xe, xJ, worst = ck.evaluate(_with_codes(codes), np.zeros(2))
    assert g.shape == (3,) and np.isfinite(g).all() and np.isfinite(xe).all()


@pytest.mark.parametrize("codes", [[UNKNOWN, 1], [0, UNKNOWN], [-1, 1]])
def test_rows_raise_on_an_unknown_code(kernels, codes):
    with pytest.raises(ValueError, match=kernels.UNKNOWN_TYPE):
        ck.evaluate(_with_codes(codes), np.zeros(2))


def test_the_attempt_raises_through_its_direct_entry(kernels):
    assert ck._ATTEMPT is not None  # the direct entry, not the dispatcher
    with pytest.raises(ValueError, match=kernels.UNKNOWN_TYPE):
        ck.attempt(_with_codes([UNKNOWN, 1]), np.zeros(2), np.full(2, -1.0), np.full(2, 1.0),
                   ck.Settings(0.01, 1e-6, 0.995, True), 3)


def test_polishing_model_raises_on_an_unknown_code(kernels):
    costs = polish_kernel._unpacked(polish_kernel._packed_costs(  # as the warm-up's
        [0, 1], [0, 0], [0, 0], [[0.0] * 8, [0.0] * 6 + np.eye(3).ravel().tolist()]))
    cube, pose_rows = np.zeros(2, dtype=np.bool_), np.arange(6, dtype=np.intp)
    with pytest.raises(ValueError, match=kernels.UNKNOWN_TYPE):
        polish_kernel._call(_with_codes([UNKNOWN, 1]), cube, pose_rows, costs, np.zeros(2), 13,
                            2)


def test_the_dispatch_names_every_registered_code(kernels):
    assert sorted(kernels.CODES) == sorted(k.code for k in registry.kinds())


def test_the_dispatch_names_every_cost_code(kernels):
    from ros2_ik.core.costs import registry
    assert sorted(kernels.COST_CODES) == sorted(k.code for k in registry.cost_kinds())


def test_the_costs_raise_on_an_unknown_code(kernels):
    n = 2
    ktype, kfa, kfb, koff = (np.array([UNKNOWN]), np.zeros(1, dtype=np.int64),
                             np.zeros(1, dtype=np.int64), np.array([0, 8]))
    oMf, Jf = np.repeat(np.eye(4)[None], 1, axis=0), np.zeros((1, 6, n))
    with pytest.raises(ValueError, match=kernels.UNKNOWN_COST):
        kernels.costs(ktype, kfa, kfb, koff, np.zeros(8), oMf, Jf, np.zeros(n), np.empty(n),
                      np.empty((n, n)), np.empty((6, 3, 3)), np.empty((2, 3, n)))
