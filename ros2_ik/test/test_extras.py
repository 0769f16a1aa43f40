"""Without the extras (ray, matplotlib) the core, the node, reach and make demo still work.

Each check runs in a child process whose ``PYTHONPATH`` starts with stand-in ``ray`` and
``matplotlib`` packages that raise ImportError on import, as on a machine where they were
never installed (the venv keeps them: CI installs the extras and runs their tests).
"""
import json
import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

BLOCKED = ("ray", "matplotlib")


@pytest.fixture(scope="module")
def without_extras(tmp_path_factory) -> dict:
    """Environment of a child process that cannot import ray or matplotlib."""
    folder = tmp_path_factory.mktemp("blocked")
    for name in BLOCKED:
        (folder / name).mkdir()
        (folder / name / "__init__.py").write_text(
            f"raise ImportError('{name} is blocked: test_extras.py')\n")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(folder), env.get("PYTHONPATH", "")])
    return env


def run(code: str, env: dict, cwd: pathlib.Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=300)


def test_the_blocker_blocks(without_extras, tmp_path):
    result = run("import ray", without_extras, tmp_path)
    assert result.returncode != 0 and "ray is blocked" in result.stderr


def test_core_node_and_reach_without_extras(without_extras, tmp_path):
    result = run("""
        import json, sys
        import ros2_ik.core, ros2_ik.core.maps.batch, ros2_ik.node.ik_node, ros2_ik.node.demo
        from ros2_ik import reach
        from ros2_ik.core import errors
        from ros2_ik.core.maps.batch import GroupSpec, solve_batch
        code = reach.main(["--resolution", "0.3", "--radius", "0.3", "--center", "0.3", "0",
                           "0.4", "--directions", "2", "--rolls", "1", "--samples", "20000",
                           "--out", "m.npz"])
        group = GroupSpec(arm="panda").build()[1]
        T = group.fk(group.mid_configuration(), group.tip).homogeneous[None]
        try:
            solve_batch(GroupSpec(arm="panda"), T, workers=1, use_ray=True)
            ray_error = ""
        except errors.InvalidArgument as exc:
            ray_error = str(exc)
        print(json.dumps({"reach": code, "ray_error": ray_error,
                          "loaded": sorted(m for m in ("ray", "matplotlib")
                                           if sys.modules.get(m) is not None)}))
        """, without_extras, tmp_path)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["reach"] == 0 and report["loaded"] == []
    assert (tmp_path / "m.npz").is_file() and not (tmp_path / "m.png").exists()
    assert "pip install matplotlib" in result.stdout
    assert "pip install ray" in report["ray_error"]


def test_demo_without_extras(without_extras, tmp_path):
    pytest.importorskip("rclpy")
    from ament_index_python.packages import get_package_prefix
    demo = os.path.join(get_package_prefix("ros2_ik"), "lib", "ros2_ik", "ik_demo")
    result = subprocess.run([demo], env=without_extras, cwd=tmp_path, capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert "demo: all answers correct" in result.stdout
