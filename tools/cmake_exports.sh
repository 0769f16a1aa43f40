# Source me (bash) from the setup scripts: defines fix_cmake_exports VENV.
# The message wheels were built in a manylinux container: their CMake exports name its
# Python and numpy include dirs. fix_cmake_exports points them at VENV's interpreter's
# (idempotent: run it again after installing another message wheel).
fix_cmake_exports() {
  local venv="$1" py_inc np_inc f
  local -a exports
  py_inc="$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')"
  np_inc="$("$venv/bin/python" -c 'import numpy; print(numpy.get_include())')"
  mapfile -t exports < <(grep -rl --include='*.cmake' '/opt/python/cp311-cp311' "$venv/share" || true)
  for f in "${exports[@]}"; do
    sed -i \
      -e "s#/opt/python/cp311-cp311/lib/python3.11/site-packages/numpy/_core/include#${np_inc}#g" \
      -e "s#/opt/python/cp311-cp311/include/python3.11#${py_inc}#g" "$f"
  done
  echo "[setup] rewrote ${#exports[@]} CMake export files"
}
