#!/usr/bin/env bash
# Build both packages with colcon into ./install (symlink install: edits to Python apply
# without a rebuild).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
# shellcheck disable=SC1091
source tools/env.sh
mkdir -p log
# The numba kernels, compiled the first time on a machine (~45-60 s) or loaded from the
# cache (~2 s), so that ik_node's start-up (make demo) and the test workers find them: run
# from the sources (the core needs no build) beside colcon.
PYTHONPATH="$root/ros2_ik${PYTHONPATH:+:$PYTHONPATH}" python -m ros2_ik.core.runtime.warm_up \
  > log/warm-up.txt 2>&1 &
warm_up=$!
start=$SECONDS
colcon --log-base log/colcon build --symlink-install \
  \
  --cmake-args -DPython3_EXECUTABLE="$VIRTUAL_ENV/bin/python" -DBUILD_TESTING=OFF \
  > log/colcon-build.txt 2>&1 || { tail -n 60 log/colcon-build.txt; kill "$warm_up"; exit 1; }
echo "[build] ok ($(grep -c '^Finished' log/colcon-build.txt || true) packages, $((SECONDS - start)) s)"
wait "$warm_up" || { tail -n 30 log/warm-up.txt; exit 1; }
echo "[build] compiled kernels ready ($((SECONDS - start)) s from the start)"
