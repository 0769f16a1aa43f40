"""``import ros2_ik.core`` loads no numba (issue 46): the kernels load it when first needed.

numba, scipy.linalg and yaml were most of the import's time; the first kernel a solve
needs imports numba (:func:`ros2_ik.core.runtime.compiled.load`) and binds the compiled
form of every function decorated before it.  Timings are for ``bench/``: here only which
modules an import loads.
"""
import subprocess
import sys

import pytest

from ros2_ik.core.solvers import chain_kernel


def _loaded_after(code: str) -> list:
    out = subprocess.run(
        [sys.executable, "-c", code + "\nimport sys\nprint(' '.join(m for m in ('numba', "
         "'scipy', 'scipy.linalg', 'yaml') if m in sys.modules))"],
        capture_output=True, text=True, check=True)
    return out.stdout.split()


def test_importing_the_core_loads_no_numba_scipy_or_yaml():
    assert _loaded_after("import ros2_ik.core") == []


def test_a_problem_with_constraints_builds_without_numba():
    code = ("from ros2_ik.core import Problem, robots\n"
            "from ros2_ik.core.constraints import PositionConstraint\n"
            "robot, group = robots.load_group('panda')\n"
            "c = PositionConstraint(robot.model, 'panda_link0', [0, 0, 0], [1, 1, 1],\n"
            "                       'panda_hand', [0, 0, 0])\n"
            "Problem(group, None, [c])\n")
    assert "numba" not in _loaded_after(code)


@pytest.mark.skipif(not chain_kernel.available(), reason="numba not installed")
def test_the_first_kernel_loads_numba_and_compiles_the_terms_functions():
    code = ("from ros2_ik.core import Problem, robots, solve, IKStatus\n"
            "from ros2_ik.core.constraints import PositionConstraint, position\n"
            "from ros2_ik.core.costs import posture\n"
            "robot, group = robots.load_group('panda')\n"
            "c = PositionConstraint(robot.model, 'panda_link0', [0.3, -0.1, 0.3],\n"
            "                       [0.5, 0.1, 0.6], 'panda_hand', [0, 0, 0])\n"
            "r = solve(group, Problem(group, None, [c]), group.mid_configuration(),\n"
            "          random_seed=1)\n"
            "assert r.status == IKStatus.SUCCESS, r\n"
            "assert hasattr(position.rows, 'py_func'), position.rows\n"
            "assert hasattr(posture.value, 'py_func')\n")
    assert "numba" in _loaded_after(code)
