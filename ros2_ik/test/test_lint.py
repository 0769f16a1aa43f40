"""Lint like ament: flake8 at 99 columns and pep257 docstrings (ament_pep257's ignores)."""
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
PATHS = ["ros2_ik/ros2_ik", "ros2_ik/test", "ros2_ik/launch", "ros2_ik/setup.py", "bench",
         "tools", "examples"]


def run(module: str, *args: str) -> subprocess.CompletedProcess:
    pytest.importorskip(module, reason=f"{module} is installed by make setup")
    return subprocess.run([sys.executable, "-m", module, *args], cwd=ROOT,
                          capture_output=True, text=True)


def test_flake8():
    result = run("flake8", "--max-line-length", "99", *PATHS)
    assert result.returncode == 0, result.stdout + result.stderr


def test_pep257():
    result = run("pydocstyle", "--convention=pep257",
                 "--add-ignore=D100,D101,D102,D103,D104,D105,D106,D107",
                 "ros2_ik/ros2_ik", "bench", "tools", "examples")
    assert result.returncode == 0, result.stdout + result.stderr
