#!/usr/bin/env bash
# Lint like ament: flake8 at 99 columns (ament_flake8) and pep257 docstrings with
# ament_pep257's ignores. make lint and test_lint.py run this; run it from anywhere.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
python="${VIRTUAL_ENV:+$VIRTUAL_ENV/bin/}python"
"$python" -m flake8 --max-line-length 99 \
  ros2_ik/ros2_ik ros2_ik/test ros2_ik/launch ros2_ik/setup.py bench tools examples docs/conf.py
"$python" -m pydocstyle --convention=pep257 \
  --add-ignore=D100,D101,D102,D103,D104,D105,D106,D107 \
  ros2_ik/ros2_ik bench tools examples docs/conf.py
echo "[lint] ok: flake8 (99 columns), pep257"
