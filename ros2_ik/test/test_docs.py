"""make docs builds with no warning: the pages, the bench results and the API reference.

Runs ``tools/docs.sh`` (Sphinx with ``-W``) into a temporary folder; skipped where the docs
requirements (docs/requirements.txt, installed by make docs) are missing.
"""
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]

#: The docs are not a feature of the package (make docs builds them in CI too): test-long.
pytestmark = pytest.mark.long


def test_docs_build_without_warnings(tmp_path):
    pytest.importorskip("sphinx", reason="make docs installs docs/requirements.txt")
    pytest.importorskip("myst_parser", reason="make docs installs docs/requirements.txt")
    result = subprocess.run(["bash", str(ROOT / "tools" / "docs.sh"), str(tmp_path)],
                            cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    api = (tmp_path / "docs" / "api.html").read_text()
    assert "ros2_ik.core.solve.solve" in api and "PositionConstraint" in api
