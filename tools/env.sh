# Source me (bash): the environment every make target runs in.
# Nothing in a venv sets the ament/CMake prefix paths, so set them here, then overlay
# the interface packages tools/ros_src.sh built (when it ran), then colcon's install space.
_ros2_ik_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export VIRTUAL_ENV="$_ros2_ik_root/.venv"
export PATH="$VIRTUAL_ENV/bin:$PATH"
export AMENT_PREFIX_PATH="$VIRTUAL_ENV${AMENT_PREFIX_PATH:+:$AMENT_PREFIX_PATH}"
export CMAKE_PREFIX_PATH="$VIRTUAL_ENV${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
export ROS_LOG_DIR="$_ros2_ik_root/log/ros"
export RMW_IMPLEMENTATION="${RMW_IMPLEMENTATION:-rmw_fastrtps_cpp}"
# Bytecode is written: setup.sh installs with --no-compile, so the modules a process imports
# are compiled once, at their first import, and read from __pycache__ after that.  With
# PYTHONDONTWRITEBYTECODE set (some shells and CI images set it), numpy, numba, rclpy, the
# messages and ros2_ik would be compiled again at every start of the node or a test worker.
unset PYTHONDONTWRITEBYTECODE
# Where tools/ros_src.sh caches the interface packages it builds (tests and CI only).
ros2_ik_ros_src_cache() { echo "${XDG_CACHE_HOME:-$HOME/.cache}/ros2_ik/ros-src"; }
_ros2_ik_key="$VIRTUAL_ENV/.ros2_ik_ros_src_stamp"
if [[ -f "$_ros2_ik_key" ]]; then
  _ros2_ik_ros="$(ros2_ik_ros_src_cache)/$(cat "$_ros2_ik_key")"
  [[ -f "$_ros2_ik_ros/.complete" ]] || _ros2_ik_ros=
else
  _ros2_ik_ros=
fi
for _ros2_ik_setup in ${_ros2_ik_ros:+"$_ros2_ik_ros/install/setup.bash"} \
  "$_ros2_ik_root/install/setup.bash"; do
  [[ -f "$_ros2_ik_setup" ]] || continue
  # colcon's setup scripts read unset variables: relax `set -u` while sourcing them.
  case $- in *u*) _ros2_ik_u=1; set +u ;; *) _ros2_ik_u= ;; esac
  # shellcheck disable=SC1090
  source "$_ros2_ik_setup"
  [[ -n "$_ros2_ik_u" ]] && set -u
done
unset _ros2_ik_root _ros2_ik_key _ros2_ik_ros _ros2_ik_setup _ros2_ik_u
