"""``import ros2_ik.core`` loads no numba (issue 46): the kernels load it when first needed.

numba, scipy.linalg and yaml were most of the import's time; the first kernel a solve
needs imports numba (:func:`ros2_ik.core.runtime.compiled.load`) and binds the compiled
form of every function decorated before it.  The collision package (its checker, scene,
scene YAML), the closed forms (EAIK's wrapper, the 7R sweep) and the no-solution proofs
load at their first use too.  Timings are for ``bench/import_bench.py``: here only which
modules an import loads.
"""
import subprocess
import sys

import pytest

from ros2_ik.core.solvers import chain_kernel


#: Loaded when first needed, never by ``import ros2_ik.core`` (coal is not here:
#: ``import pinocchio`` loads it).
HEAVY = ("numba", "scipy", "scipy.linalg", "yaml", "eaik", "rclpy", "ros2_ik.core.collision",
         "ros2_ik.core.collision.checker", "ros2_ik.core.collision.scene_yaml",
         "ros2_ik.core.constraints.collision", "ros2_ik.core.constraints.distance_bounds",
         "ros2_ik.core.closed_form", "ros2_ik.core.closed_form.sweep",
         "ros2_ik.core.solvers.proofs")


def _loaded_after(code: str) -> list:
    out = subprocess.run(
        [sys.executable, "-c", code + f"\nimport sys\nprint(' '.join(m for m in {HEAVY!r} "
         "if m in sys.modules))"],
        capture_output=True, text=True, check=True)
    return out.stdout.split()


def test_importing_the_core_loads_no_heavy_module():
    assert _loaded_after("import ros2_ik.core") == []


def test_the_collision_terms_load_the_collision_package_when_asked_for():
    loaded = _loaded_after("from ros2_ik.core.constraints import MinimumDistanceConstraint, "
                           "DistanceConstraint\nfrom ros2_ik.core import constraints\n"
                           "assert constraints.MinimumDistanceUpperBoundConstraint")
    assert "ros2_ik.core.collision.checker" in loaded
    assert "ros2_ik.core.constraints.distance_bounds" in loaded


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
