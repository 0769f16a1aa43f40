"""Lint like ament: ``tools/lint.sh`` (flake8 at 99 columns, pep257 docstrings) passes."""
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_lint_passes():
    pytest.importorskip("flake8", reason="flake8 is installed by make setup")
    pytest.importorskip("pydocstyle", reason="pydocstyle is installed by make setup")
    result = subprocess.run(["bash", str(ROOT / "tools" / "lint.sh")], cwd=ROOT,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
