#!/usr/bin/env bash
# Build the documentation (docs/*.md, README.md, bench results and the API reference from
# the docstrings) with Sphinx, warnings as errors. make docs runs it after installing
# docs/requirements.txt; test_docs.py runs it into a temporary folder.
# Usage: tools/docs.sh [output folder, default docs/_build/html]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${1:-$root/docs/_build/html}"
cd "$root"
python="${VIRTUAL_ENV:+$VIRTUAL_ENV/bin/}python"
"$python" -m sphinx -W --keep-going -E -q -b html -c docs . "$out"
echo "[docs] ok: $out/index.html"
