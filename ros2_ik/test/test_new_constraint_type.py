"""A constraint type added in one file plus one registration line solves with every solver.

Issue 39: adding a type meant about eight edits across the core.  Here a new type, the
height of a frame's origin above the world's xy plane within bounds [m], is one file,
:data:`HEIGHT_FILE` (its class: rows, Jacobian, unit, the default ``measure`` and
``linearisation`` of :class:`terms.Constraint` following from them; its encoding and
compiled rows; its Kind).  Registered at run time it carries no type code (the
generated dispatch is fixed): :func:`constraint_kernel.compile_problem` returns None and
every solver runs its Python path (asserted below).  Added as one line of
``registry.TYPES`` in a copy of the package and ``make dispatch`` run there (the long
test), every solver solves with the compiled kernels taking it.  The answers are checked
against pinocchio's forward kinematics on the full model, not against the solver's
report.
"""
import importlib.util
import os

import numpy as np
import pinocchio as pin
import pytest

from ros2_ik.core import constraints as C
from ros2_ik.core import robots
from ros2_ik.core.constraints import registry
from ros2_ik.core.problem import Problem
from ros2_ik.core.result import IKStatus
from ros2_ik.core.solve import solve
from ros2_ik.core.solvers import constraint_kernel
from ros2_ik.core.solvers.registry import available
from ros2_ik.core.verify import DEFAULT_TOLERANCE

LOWER_M, UPPER_M = 0.50, 0.52


#: The new type's one file, ``core/constraints/height.py``: its class, its encoding and
#: its compiled rows, ending with its Kind (the kernels' form).
HEIGHT_FILE = '''"""The height [m] of a frame's origin above the world's xy plane, in bounds."""
from typing import Optional, Tuple

import numpy as np
import pinocchio as pin

from ros2_ik.core.kinematics.frames import frame_id
from ros2_ik.core.runtime.compiled import jit

from . import compiled as kernel
from ._base import BoundedConstraint


class HeightConstraint(BoundedConstraint):
    """``lower <= z_WF <= upper`` [m], one row."""

    unit = "m"

    def __init__(self, model: pin.Model, frame: str, lower: float, upper: float, *,
                 name: Optional[str] = None):
        self._fid = frame_id(model, frame)
        super().__init__(name or f"height({frame})", [float(lower)], [float(upper)])

    def evaluate(self, model: pin.Model, data: pin.Data,
                 q: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
        """``[z_WF]`` (1,) [m] and its Jacobian ``(1, nv)``."""
        J = pin.getFrameJacobian(model, data, self._fid, pin.LOCAL_WORLD_ALIGNED)
        return np.array([data.oMf[self._fid].translation[2]]), J[2:3].copy()


def _encode(c, tolerance):
    return c._fid, c._fid, []


@jit(inline="always")
def rows(oMf, Jf, fa, fb, prm, g, Jg, row, p3, J3):
    g[row] = oMf[fb, 2, 3]
    for c in range(Jg.shape[1]):
        Jg[row, c] = Jf[fb, 2, c]
    return 1


KIND = kernel.Kind(HeightConstraint, _encode, kernel.physical_rows, rows)
'''


def _height_module(directory):
    """Import :data:`HEIGHT_FILE` as ``ros2_ik.core.constraints.height``, from ``directory``."""
    path = directory / "height.py"
    path.write_text(HEIGHT_FILE)
    spec = importlib.util.spec_from_file_location("ros2_ik.core.constraints.height", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def height_module(tmp_path_factory):
    return _height_module(tmp_path_factory.mktemp("height"))


@pytest.fixture(scope="module")
def height_type(height_module):
    registry.register(height_module.KIND)  # registered at run time: no type code
    yield height_module.HeightConstraint
    registry.unregister(height_module.HeightConstraint)


@pytest.fixture(scope="module")
def panda():
    return robots.load_group("panda")


def _height(group, q) -> float:
    """Height [m] of panda_hand at group vector ``q``, by pinocchio on the full model."""
    model = group.robot.model
    data = model.createData()
    pin.framesForwardKinematics(model, data, group.to_full_q(q))
    return float(data.oMf[model.getFrameId("panda_hand")].translation[2])


def test_the_registry_knows_the_new_type_and_the_kernel_falls_back(panda, height_type):
    robot, group = panda
    c = height_type(robot.model, "panda_hand", LOWER_M, UPPER_M)
    assert registry.kind_of(c).cls is height_type and registry.kind_of(c).code is None
    box = C.PositionConstraint(robot.model, "panda_link0", [0.3, -0.2, 0.0],
                               [0.6, 0.2, 1.0], "panda_hand", np.zeros(3))
    assert constraint_kernel.compile_problem(Problem(group, None, constraints=[box]),
                                             DEFAULT_TOLERANCE) is not None
    assert constraint_kernel.compile_problem(Problem(group, None, constraints=[box, c]),
                                             DEFAULT_TOLERANCE) is None  # Python path


def test_registering_a_type_twice_is_refused(height_type, height_module):
    with pytest.raises(ValueError, match="registered already"):
        registry.register(height_module.KIND)


#: Solvers of constraint problems: every plugin but ``analytic`` (closed-form pose targets).
CONSTRAINT_SOLVERS = [name for name in available() if name != "analytic"]


@pytest.mark.parametrize("solver", CONSTRAINT_SOLVERS)
def test_every_solver_meets_the_new_type(panda, height_type, solver):
    robot, group = panda
    assert _height(group, group.mid_configuration()) > UPPER_M + 0.05  # a real move
    problem = Problem(group, None,
                      constraints=[height_type(robot.model, "panda_hand", LOWER_M, UPPER_M)])
    result = solve(group, problem, group.mid_configuration(), solver=solver, timeout_s=3.0,
                   random_seed=0)
    assert result.status is IKStatus.SUCCESS, result.message
    z = _height(group, result.q)
    tol = DEFAULT_TOLERANCE.m
    assert LOWER_M - tol <= z <= UPPER_M + tol, z
    assert group.within_limits(result.q)


#: Run in the copy: every solver on the new type, compiled kernels on; the answers
#: checked with pinocchio's forward kinematics on the full model.
SOLVE_SCRIPT = '''
import json, sys
import numpy as np, pinocchio as pin
from ros2_ik.core import costs, robots
from ros2_ik.core.constraints import height, registry
from ros2_ik.core.problem import Problem
from ros2_ik.core.solve import solve
from ros2_ik.core.solvers import constraint_kernel
from ros2_ik.core.solvers.registry import available
from ros2_ik.core.verify import DEFAULT_TOLERANCE
lower, upper = float(sys.argv[1]), float(sys.argv[2])
robot, group = robots.load_group("panda")
model = robot.model
out = {"code": registry.kind_of(height.HeightConstraint(model, "panda_hand", 0, 1)).code}
def z(q):
    data = model.createData()
    pin.framesForwardKinematics(model, data, group.to_full_q(q))
    return float(data.oMf[model.getFrameId("panda_hand")].translation[2])
for solver in [name for name in available() if name != "analytic"]:  # pose targets only
    for with_cost in (False, True):
        c = height.HeightConstraint(model, "panda_hand", lower, upper)
        extra = [costs.PostureCost(model, group.to_full_q(group.mid_configuration()))] \\
            if with_cost else []
        if with_cost and solver != "lm":
            continue  # lm's polishing is compiled: the new type's linearisation
        problem = Problem(group, None, constraints=[c], costs=extra)
        compiled = constraint_kernel.compile_problem(problem, DEFAULT_TOLERANCE) is not None
        r = solve(group, problem, group.mid_configuration(), solver=solver, timeout_s=5.0,
                  random_seed=0)
        out[f"{solver}{'+cost' if with_cost else ''}"] = {
            "status": r.status.name, "z": z(r.q) if r.q is not None else None,
            "compiled": compiled, "within": bool(group.within_limits(r.q))
            if r.q is not None else False}
print(json.dumps(out))
'''


@pytest.mark.long  # compiles the constraint kernels afresh in the copy (~1 min)
def test_a_compiled_type_is_one_file_and_one_registry_line(tmp_path):
    import json
    import re
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    import ros2_ik
    from ros2_ik.core.solvers import chain_kernel
    if not chain_kernel.available():
        pytest.skip("numba not installed: no compiled path")
    source = Path(ros2_ik.__file__).resolve().parent
    copy = tmp_path / "ros2_ik"
    shutil.copytree(source, copy, symlinks=False)
    types = copy / "core" / "constraints"
    (types / "height.py").write_text(HEIGHT_FILE)  # the one file
    registry_file = types / "registry.py"
    text = registry_file.read_text()
    text = re.sub(r"(\nfrom \. import [^\n]*)\n", r"\1\nfrom . import height\n", text, count=1)
    text = text.replace(".KIND,\n)\n", ".KIND,\n    height.KIND,\n)\n", 1)  # the last line
    assert text.count("height") == 2
    registry_file.write_text(text)  # the one registry line (and its module's import)
    path = os.environ.get("PYTHONPATH", "")
    env = dict(os.environ, PYTHONPATH=f"{tmp_path}{os.pathsep}{path}")
    subprocess.run([sys.executable, "-m", "ros2_ik.core.solvers.dispatch_source"], env=env,
                   check=True, cwd=tmp_path)  # make dispatch
    assert "height.rows" in (copy / "core" / "solvers" / "_dispatch_jit.py").read_text()
    run = subprocess.run([sys.executable, "-c", SOLVE_SCRIPT, str(LOWER_M), str(UPPER_M)],
                         env=env, cwd=tmp_path, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-3000:]
    out = json.loads(run.stdout.strip().splitlines()[-1])
    from ros2_ik.core.constraints import registry
    assert out.pop("code") == len(registry.TYPES)  # appended: the others keep their codes
    assert {k.split("+")[0] for k in out} == set(CONSTRAINT_SOLVERS)
    tol = DEFAULT_TOLERANCE.m
    for name, r in out.items():
        assert r["compiled"], name  # the kernels take the new type
        assert r["status"] == "SUCCESS", (name, r)
        assert LOWER_M - tol <= r["z"] <= UPPER_M + tol, (name, r)
        assert r["within"], name
