#!/usr/bin/env bash
# Build both packages with colcon into ./install (symlink install: edits to Python apply
# without a rebuild).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
# shellcheck disable=SC1091
source tools/env.sh
mkdir -p log
colcon --log-base log/colcon build --symlink-install \
  \
  --cmake-args -DPython3_EXECUTABLE="$VIRTUAL_ENV/bin/python" -DBUILD_TESTING=OFF \
  > log/colcon-build.txt 2>&1 || { tail -n 60 log/colcon-build.txt; exit 1; }
echo "[build] ok ($(grep -c '^Finished' log/colcon-build.txt || true) packages)"
# The numba kernels: compiled here the first time on a machine (~45-60 s), else loaded
# from the cache (~2 s), so ik_node's start-up (make demo) and the test workers find them.
# shellcheck disable=SC1091
source tools/env.sh  # now with install/setup.bash
start=$SECONDS
python -m ros2_ik.core.warm_up
echo "[build] compiled kernels ready ($((SECONDS - start)) s)"
